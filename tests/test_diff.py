"""``diff``: onsets side by side, aligned series, finding identity, gates, exit codes.

Every log here comes from :func:`make_log`, whose onsets follow by hand:

- round record 0 brings spans a0..a11 (10 tokens each) and the summaries m1 = [a0]
  (5 tokens, depth 1) and m2 = [m1] (5 tokens, or 400 when ``heavy``; depth 2), all
  retained with salience 0.50, so ``summary_depth_max`` is 2 at every round and the
  session cap (``max_depth`` 3) is never reached: no depth-pin;
- at each record index in ``signature`` one span is evicted (a11 first) and every
  salience rises by 0.01: ``distinct_source_spans`` falls, ``query_cosine_retained``
  rises; three such records in a row make the inversion onset at the first of them;
- at ``silent_drop`` one more span leaves the retained list unlisted: a silent-drop
  warning (spans fall, salience flat: not the signature);
- light (m2 = 5 tokens): raw_ratio >= 90/100 everywhere, so no raw-ratio rule fires;
  heavy (m2 = 400): raw_ratio = 120/525 < 0.25 from round 0, so summary-majority fires
  at record 0, salience-inversion at the signature records, compaction-drift at the
  others.

Round record t is on line t + 2 (the session record is line 1); its round number is
``step * t``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from compaction_audit.api import audit
from compaction_audit.commands.diff import diff_command
from compaction_audit.diff import diff_reports, gate, verdict
from compaction_audit.rules.base import Severity
from tests.html_text import unbroken

APP = typer.Typer(pretty_exceptions_enable=False)
APP.command("diff")(diff_command)


@APP.command("noop")
def _noop() -> None:
    """A second command, so that ``diff`` stays a subcommand."""


RUNNER = CliRunner()


def make_log(path: Path, n: int = 10, signature: tuple[int, ...] = (), heavy: bool = False,
             silent_drop: int | None = None, step: int = 1) -> str:
    """Write the log described in the module docstring; returns its path."""
    spans = [f"a{i}" for i in range(12)]
    evictable = spans[1:]
    records: list[dict[str, Any]] = [
        {"type": "session", "schema": "compaction-audit/1", "max_depth": 3}]
    ws: list[str] = []
    salience = 0.50
    for t in range(n):
        rec: dict[str, Any] = {"type": "round", "round": step * t}
        if t == 0:
            rec["spans"] = [{"id": s, "tokens": 10} for s in spans]
            rec["summaries"] = [{"id": "m1", "tokens": 5, "children": ["a0"]},
                                {"id": "m2", "tokens": 400 if heavy else 5,
                                 "children": ["m1"]}]
            ws = [*spans, "m1", "m2"]
        if t in signature:
            gone = evictable.pop()
            ws.remove(gone)
            rec["evicted"] = [gone]
            salience = round(salience + 0.01, 2)
        if t == silent_drop:
            ws.remove(evictable.pop())
        rec["retained"] = [[i, salience] for i in ws]
        records.append(rec)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def run(*args: str) -> Any:
    return RUNNER.invoke(APP, ["diff", *args])


# ------------------------------------------------------------------ verdict words

@pytest.mark.parametrize(("b", "c", "word"), [
    (12, 19, "later"), (19, 12, "earlier"), (7, 7, "unchanged"), (None, None, "unchanged"),
    (None, 4, "appeared"), (4, None, "disappeared")])
def test_verdict_words(b: int | None, c: int | None, word: str) -> None:
    assert verdict(b, c) == word


# ------------------------------------------------------------------ same run

@pytest.mark.parametrize("heavy", [False, True])
def test_run_with_itself_is_no_change(tmp_path: Path, heavy: bool) -> None:
    log = make_log(tmp_path / "a.jsonl", signature=(4, 5, 6), heavy=heavy, silent_drop=8)
    d = diff_reports(audit(log), audit(log))
    assert d.headline() == "no change"
    assert not d.changed
    assert d.findings and {f.status for f in d.findings} == {"persisting"}
    assert all(o.verdict == "unchanged" for o in d.onsets)
    assert d.onset("inversion_onset").baseline == 4
    assert d.diverging_rounds == []
    assert gate(d, 0, "info") == []
    result = run(log, log, "--fail-if-onset-earlier", "0", "--fail-on-new", "info")
    assert result.exit_code == 0
    assert result.stdout.strip().endswith("no change")


# ------------------------------------------------------------------ onsets

DRIFT = ("neither loop can invert (a condition of inversion fails), its rounds read as "
         "drift: ")
"""How a diff's verdict opens where neither run can invert (make_log's eviction is not
continuous): adv120 #7."""

def test_onset_later_then_earlier_with_gate(tmp_path: Path) -> None:
    early = make_log(tmp_path / "early.jsonl", n=12, signature=(3, 4, 5))
    late = make_log(tmp_path / "late.jsonl", n=12, signature=(6, 7, 8))
    d = diff_reports(audit(early), audit(late))
    o = d.onset("inversion_onset")
    assert (o.baseline, o.candidate, o.delta, o.verdict) == (3, 6, 3, "later")
    # these loops cannot invert (eviction is not continuous): said first (adv120 #7)
    assert d.headline().startswith(
        "neither loop can invert (a condition of inversion fails), its rounds read as "
        "drift: inversion onset later: round 3 -> round 6 (+3 rounds)")
    # spans and salience differ from the first eviction of one run to the last of the other
    assert d.diverging_rounds == [3, 4, 5, 6, 7]
    assert d.findings == []
    swapped = diff_reports(audit(late), audit(early))
    o = swapped.onset("inversion_onset")
    assert (o.baseline, o.candidate, o.delta, o.verdict) == (6, 3, -3, "earlier")
    assert gate(swapped, 3, None) == []
    assert gate(swapped, 2, None) == [
        "inversion onset earlier by 3 round(s) (round 6 -> 3; allowed 2)"]
    assert run(late, early, "--fail-if-onset-earlier", "3").exit_code == 0
    failed = run(late, early, "--fail-if-onset-earlier", "2", "--fail-on-new", "error")
    assert failed.exit_code == 1
    # usertest32 #3: the first and the last line say the gate failed, and which one
    verdict = ("gate FAILED (--fail-if-onset-earlier 2): inversion onset earlier by 3 "
               "round(s); neither loop can invert (a condition of inversion fails), its "
               "rounds read as drift: inversion onset earlier: round 6 -> round 3 (-3 rounds)")
    assert failed.stdout.rstrip().splitlines()[-1].startswith(verdict)
    assert " ".join(failed.stdout.split("verdict", 1)[1].split()).startswith(verdict)
    page = unbroken(run(late, early, "--fail-if-onset-earlier", "2", "-f", "html").stdout)
    assert 'id="verdict">' + verdict.replace(">", "&gt;") in page
    passed = run(late, early, "--fail-if-onset-earlier", "3").stdout.rstrip()
    assert passed.splitlines()[-1].startswith(DRIFT + "inversion onset earlier: round 6 -> round 3")
    assert run(early, late, "--fail-if-onset-earlier", "0").exit_code == 0
    assert run(late, early).exit_code == 0  # no gate set
    # usertest34 #14: -q prints the last line alone, and keeps the gate's exit
    quiet = run(late, early, "--fail-if-onset-earlier", "2", "-q")
    assert (quiet.exit_code, quiet.stdout.splitlines()) == (1, [
        failed.stdout.rstrip().splitlines()[-1]])
    refused = run(late, early, "-q", "--format", "json")
    assert (refused.exit_code, refused.stdout) == (2, "")
    assert refused.stderr.strip().endswith("--quiet applies to --format text")


def test_onset_none_versus_a_round(tmp_path: Path) -> None:
    none = make_log(tmp_path / "none.jsonl")
    some = make_log(tmp_path / "some.jsonl", signature=(5, 6, 7))
    d = diff_reports(audit(none), audit(some))
    o = d.onset("inversion_onset")
    assert (o.baseline, o.candidate, o.delta, o.verdict) == (None, 5, None, "appeared")
    assert gate(d, 100, None) == ["inversion onset appeared at round 5 (baseline had none)"]
    assert run(none, some, "--fail-if-onset-earlier", "0").exit_code == 1
    back = diff_reports(audit(some), audit(none))
    o = back.onset("inversion_onset")
    assert (o.baseline, o.candidate, o.delta, o.verdict) == (5, None, None, "disappeared")
    assert gate(back, 0, "info") == []
    assert run(some, none, "--fail-if-onset-earlier", "0").exit_code == 0


def test_equal_onsets_and_a_finding_that_appears_or_resolves(tmp_path: Path) -> None:
    clean = make_log(tmp_path / "clean.jsonl", signature=(4, 5, 6))
    dropped = make_log(tmp_path / "dropped.jsonl", signature=(4, 5, 6), silent_drop=8)
    d = diff_reports(audit(clean), audit(dropped))
    o = d.onset("inversion_onset")
    assert (o.baseline, o.candidate, o.delta, o.verdict) == (4, 4, 0, "unchanged")
    first = d.onset("silent-drop")
    assert (first.baseline, first.candidate, first.verdict) == (None, 8, "appeared")
    [new] = d.by_status("new")
    assert (new.code, new.rule, new.key, new.severity.value) == (
        "CA202", "silent-drop", "episode:0", "warning")
    assert new.baseline is None and new.candidate is not None
    assert (new.candidate.first_round, new.candidate.rounds, new.candidate.line) == (8, 1, 10)
    assert d.diverging_rounds == [8, 9]
    assert run(clean, dropped, "--fail-on-new", "warning").exit_code == 1
    assert run(clean, dropped, "--fail-on-new", "error").exit_code == 0
    back = diff_reports(audit(dropped), audit(clean))
    [resolved] = back.by_status("resolved")
    assert (resolved.code, resolved.key) == ("CA202", "episode:0")
    assert back.by_status("new") == []
    assert run(dropped, clean, "--fail-on-new", "info").exit_code == 0


def test_new_inversion_episode(tmp_path: Path) -> None:
    light = make_log(tmp_path / "light.jsonl", signature=(4, 5, 6))
    heavy = make_log(tmp_path / "heavy.jsonl", signature=(4, 5, 6), heavy=True)
    d = diff_reports(audit(light), audit(heavy))
    assert d.onset("inversion_onset").verdict == "unchanged"
    b = d.onset("inversion_boundary")
    assert (b.baseline, b.candidate, b.verdict) == (None, 4, "appeared")
    m = d.onset("summary_majority")
    assert (m.baseline, m.candidate, m.verdict) == (None, 0, "appeared")
    assert [(f.code, f.key, f.severity.value, f.candidate.first_round,
             f.candidate.last_round) for f in d.by_status("new") if f.candidate] == [
        # a warning: the log's eviction is not continuous (usertest61 A5)
        ("CA101", "episode:0", "warning", 4, 6),
        ("CA104", "episode:0", "warning", 1, 3),  # round 0: inversion not judged
        ("CA104", "episode:1", "warning", 7, 9),
        ("CA105", "episode:0", "info", 0, 0),
    ]
    assert gate(d, 0, None) == [] == gate(d, None, "error")
    [reason] = gate(d, None, "warning")
    assert reason == ("3 new finding unit(s) at or above warning: CA101 salience-inversion "
                      "x1, CA104 compaction-drift x2")
    assert run(light, heavy, "--fail-on-new", "warning").exit_code == 1
    assert run(light, heavy, "--fail-on-new", "error").exit_code == 0


def test_moved_episode_persists(tmp_path: Path) -> None:
    """Episodes match by ordinal: the same inversion three rounds later persists."""
    a = make_log(tmp_path / "a.jsonl", n=12, signature=(3, 4, 5), heavy=True)
    b = make_log(tmp_path / "b.jsonl", n=12, signature=(6, 7, 8), heavy=True)
    d = diff_reports(audit(a), audit(b))
    [inv] = [f for f in d.findings if f.code == "CA101"]
    assert inv.status == "persisting"
    assert inv.baseline is not None and inv.candidate is not None
    assert (inv.baseline.first_round, inv.candidate.first_round) == (3, 6)
    assert d.onset("inversion_boundary").delta == 3
    assert run(a, b, "--fail-on-new", "info").exit_code == 0


def test_rounds_of_two_loops_that_cannot_invert_read_as_drift(tmp_path: Path) -> None:
    """adv120 #7: each run's audit reads a boundary as drift where a condition of
    inversion fails; the diff led with "inversion boundary disappeared" all the same."""
    lines = (SAMPLES / "faithfulness.jsonl").read_text().splitlines(keepends=True)
    short = tmp_path / "f4.jsonl"
    short.write_text("".join(lines[:4]))
    d = diff_reports(audit(str(SAMPLES / "faithfulness.jsonl")), audit(str(short)))
    assert d.headline().startswith(
        "neither loop can invert (a condition of inversion fails), its rounds read as "
        "drift: inversion boundary disappeared: round 3 -> none")
    assert "; no inversion onset in either run; " in d.headline()


def test_one_run_that_cannot_invert_reads_as_drift(tmp_path: Path) -> None:
    """adv121 #5: a baseline that could not invert (eviction on overflow) beside the same
    run that can read "inversion onset unchanged: round 8 -> round 8", though the
    baseline's own audit reads round 8 as drift.  The gate compares the onsets as
    recorded (spec rules.md, "Onsets"; adv122 #4, #5: reading one side's as none made
    the gate and the onsets table disagree)."""
    drift = tmp_path / "overflow.jsonl"
    drift.write_text(DECAY.read_text().replace('"eviction":"continuous"',
                                                '"eviction":"on-overflow"', 1))
    base, cand = audit(str(drift)), audit(str(DECAY))
    assert base.onsets["inversion_onset"] == cand.onsets["inversion_onset"] == 8
    d = diff_reports(base, cand)
    assert d.headline().startswith(
        "the baseline cannot invert (a condition of inversion fails), its rounds read as "
        "drift: inversion onset unchanged: round 8 -> round 8")
    assert gate(d, 0, None) == []
    assert run(str(drift), str(DECAY), "--fail-if-onset-earlier", "0").exit_code == 0
    back = diff_reports(cand, base)
    assert back.headline().startswith("the candidate cannot invert (a condition of ")


# ------------------------------------------------------------------ alignment

def test_runs_of_different_lengths(tmp_path: Path) -> None:
    short = make_log(tmp_path / "short.jsonl", n=8)
    long = make_log(tmp_path / "long.jsonl", n=12)
    d = diff_reports(audit(short), audit(long))
    s = d.series
    assert s["round"].to_list() == list(range(12))
    assert s["in_baseline"].to_list() == [True] * 8 + [False] * 4
    assert s["raw_ratio_baseline"].to_list()[8:] == [None] * 4
    assert s["raw_ratio_candidate"].to_list()[8:] == [120 / 130] * 4
    assert s["distinct_source_spans_candidate"].to_list() == [12] * 12
    assert d.diverging_rounds == [8, 9, 10, 11]
    assert all(o.verdict == "unchanged" for o in d.onsets)
    assert d.headline() == ("0 new, 0 resolved, 0 persisting finding unit(s); series "
                            "differ at 4 round(s); no inversion onset in either run "
                            "(neither loop can invert: a condition of inversion fails)")
    assert run(short, long, "--fail-if-onset-earlier", "0", "--fail-on-new", "info"
               ).exit_code == 0


def test_join_on_round_number_and_episodes_over_skipped_numbers(tmp_path: Path) -> None:
    stepped = make_log(tmp_path / "stepped.jsonl", n=10, step=2, signature=(4, 5, 6),
                       heavy=True)
    plain = make_log(tmp_path / "plain.jsonl", n=6)
    d = diff_reports(audit(stepped), audit(plain))
    assert d.series["round"].to_list() == [0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18]
    assert d.series.filter("in_baseline")["round"].to_list() == list(range(0, 20, 2))
    assert d.onset("inversion_onset").baseline == 8
    # records 4, 5, 6 are rounds 8, 10, 12: one episode, not three
    [inv] = [f for f in d.findings if f.code == "CA101"]
    assert inv.status == "resolved" and inv.baseline is not None
    assert (inv.baseline.first_round, inv.baseline.last_round, inv.baseline.rounds) == (
        8, 12, 3)


def test_recall_debt_columns_are_compared(tmp_path: Path) -> None:
    """A span with discriminators evicted in the candidate only: its recall debt shows."""
    records: list[dict[str, Any]] = [
        {"type": "round", "round": 0,
         "spans": [{"id": "a", "tokens": 10, "text": "Raised read_timeout_ms to 45000."},
                   {"id": "b", "tokens": 10, "text": "ok"}],
         "retained": [["a", 0.5], ["b", 0.5]]},
        {"type": "round", "round": 1, "retained": [["a", 0.5], ["b", 0.5]]}]
    kept = tmp_path / "kept.jsonl"
    kept.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    records[1] = {"type": "round", "round": 1, "evicted": ["a"], "retained": [["b", 0.5]]}
    lost = tmp_path / "lost.jsonl"
    lost.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    d = diff_reports(audit(str(kept)), audit(str(lost)))
    assert "recall_debt" in d.quantities
    debt = audit(str(lost)).series["recall_debt"].to_list()
    assert debt[0] == 0 and debt[1] > 0
    assert d.series["recall_debt_baseline"].to_list() == [0, 0]
    assert d.series["recall_debt_candidate"].to_list() == debt
    assert d.diverging_rounds == [1]


# ------------------------------------------------------------------ CLI

def test_json_output_to_file(tmp_path: Path) -> None:
    early = make_log(tmp_path / "early.jsonl", n=12, signature=(3, 4, 5))
    late = make_log(tmp_path / "late.jsonl", n=12, signature=(6, 7, 8))
    out = tmp_path / "diff.json"
    result = run(late, early, "--format", "json", "--output", str(out),
                 "--fail-if-onset-earlier", "0")
    assert result.exit_code == 1
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["kind"] == "diff"
    assert doc["onsets"][0] == {"name": "inversion_onset", "kind": "onset", "baseline": 6,
                                "candidate": 3, "delta": -3, "verdict": "earlier",
                                "shown": "earlier"}
    quantities = doc["series"]["quantities"]
    assert quantities[:4] == ["raw_ratio", "distinct_source_spans", "query_cosine_retained",
                              "summary_depth_max"]
    # no span has text: neither run has a rebuilt cosine, so it is no quantity
    assert all(q.startswith("recall_debt") for q in quantities[4:])
    assert len(doc["series"]["rows"]) == 12
    assert doc["series"]["rows"][4]["distinct_source_spans_baseline"] == 12
    assert doc["series"]["rows"][4]["distinct_source_spans_candidate"] == 10
    assert doc["series"]["diverging_rounds"] == [3, 4, 5, 6, 7]
    assert doc["findings"]["counts"] == {"new": 0, "resolved": 0, "unreached": 0,
                                         "persisting": 0}
    assert doc["gates"] == {"fail_if_onset_earlier": 0, "fail_on_new": None,
                            "passed": False, "reasons": [
                                "inversion onset earlier by 3 round(s) (round 6 -> 3; "
                                "allowed 0)"]}
    assert doc["baseline"]["path"] == late and doc["candidate"]["rounds"] == 12


def test_text_output_names_rounds_and_delta(tmp_path: Path) -> None:
    early = make_log(tmp_path / "early.jsonl", n=12, signature=(3, 4, 5))
    late = make_log(tmp_path / "late.jsonl", n=12, signature=(6, 7, 8))
    result = run(early, late)
    assert result.exit_code == 0
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("inversion onset"))
    assert [c.strip() for c in line.split("│")[1:]] == ["3", "6", "+3", "later"]
    assert result.stdout.strip().splitlines()[-1] == (
        "neither loop can invert (a condition of inversion fails), its rounds read as "
        "drift: inversion onset later: round 3 -> round 6 (+3 rounds); 0 new, 0 resolved, "
        "0 persisting finding unit(s); series differ at 5 round(s)")


def test_rules_that_fired_in_neither_run_are_one_line(tmp_path: Path) -> None:
    # ux6: 13 rows of "none none unchanged" put the findings off the first screen
    from tests.gate_app import drift_records
    from tests.logs import dump

    early = make_log(tmp_path / "early.jsonl", n=12, signature=(3, 4, 5))
    late = str(dump(drift_records(), tmp_path / "drift.jsonl"))  # CA104, CA105, CA201
    lines = RUNNER.invoke(APP, ["diff", early, late], env={"COLUMNS": "200"}
                          ).stdout.splitlines()
    rule_rows = [[c.strip() for c in x.split("\u2502")] for x in lines
                 if x.strip().startswith("first CA")]
    assert rule_rows and all(r[1:3] != ["none", "none"] for r in rule_rows)
    [line] = [x for x in lines if x.startswith("  in neither run: ")]
    codes = line.split(": ", 1)[1].split()
    doc = json.loads(run(early, late, "--format", "json").stdout)
    rules = [o for o in doc["onsets"] if o["kind"] == "rule"]
    assert len(codes) == sum(o["baseline"] is None and o["candidate"] is None
                             for o in rules) == len(rules) - len(rule_rows)
    assert all(c.startswith("CA") for c in codes) and codes == sorted(codes)


def test_only_the_rules_either_run_ran_are_compared(tmp_path: Path) -> None:
    """A rule neither run selected is no row and not "in neither run" (with ``select
    = ["CA101", "CA104"]`` the diff listed the 18 other rules as firing in neither)."""
    from tests.gate_app import drift_records
    from tests.logs import dump

    early = make_log(tmp_path / "early.jsonl", n=12, signature=(3, 4, 5))
    late = str(dump(drift_records(), tmp_path / "drift.jsonl"))  # CA104, CA105, CA201
    config = tmp_path / "ca.toml"
    config.write_text('select = ["CA101", "CA104"]\n')
    doc = json.loads(run(early, late, "--format", "json", "--config", str(config)).stdout)
    assert [(o["name"], o["baseline"], o["candidate"]) for o in doc["onsets"]
            if o["kind"] == "rule"] == [("salience-inversion", None, None),
                                        ("compaction-drift", None, 4)]
    lines = RUNNER.invoke(APP, ["diff", early, late, "--config", str(config)],
                          env={"COLUMNS": "200"}).stdout.splitlines()
    assert [x for x in lines if "in neither run" in x] == ["  in neither run: CA101"]


def test_settings_apply_to_both_runs(tmp_path: Path) -> None:
    a = make_log(tmp_path / "a.jsonl", signature=(5, 6))
    b = make_log(tmp_path / "b.jsonl", signature=(2, 3))
    assert run(a, b, "--fail-if-onset-earlier", "0").exit_code == 0  # both none
    result = run(a, b, "--fail-if-onset-earlier", "0", "--set", "sustain_onset=2",
                 "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["onsets"][0]["baseline"] == 5 and doc["onsets"][0]["candidate"] == 2
    assert doc["settings"]["sustain_onset"] == 2


def test_bad_input_and_usage_exit_2(tmp_path: Path) -> None:
    good = make_log(tmp_path / "good.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "round", "round": 0}\n{"type": "round", "round": \n',
                   encoding="utf-8")
    result = run(good, str(bad))
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"compaction-audit: {bad}:2: ")
    assert run(good, str(tmp_path / "missing.jsonl")).exit_code == 2
    assert run(good, good, "--set", "nonsense=1").exit_code == 2
    assert run(good, good, "--fail-on-new", "fatal").exit_code == 2
    assert run(good, good, "--fail-if-onset-earlier", "-1").exit_code == 2
    assert run("-", "-").exit_code == 2


def test_lenient_applies_to_both(tmp_path: Path) -> None:
    good = make_log(tmp_path / "good.jsonl")
    noisy = tmp_path / "noisy.jsonl"
    noisy.write_text(Path(good).read_text(encoding="utf-8") + '{"type": "mystery"}\n',
                     encoding="utf-8")
    assert run(good, str(noisy)).exit_code == 2
    assert run(good, str(noisy), "--lenient").exit_code == 0


# ------------------------------------------------------------------ the seed's example

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"
DECAY, NO_DECAY = SAMPLES / "research-decay.jsonl", SAMPLES / "research-no-decay.jsonl"


@pytest.mark.skipif(not (DECAY.exists() and NO_DECAY.exists()), reason="samples not built")
def test_removing_recency_decay_moves_the_onset_later() -> None:
    """Seed 000, "What Was Observed": without the decay the inversion onset comes later."""
    d = diff_reports(audit(str(DECAY)), audit(str(NO_DECAY)))
    o = d.onset("inversion_onset")
    assert o.verdict == "later" and o.baseline is not None and o.candidate is not None
    assert o.delta == o.candidate - o.baseline > 0
    result = run(str(DECAY), str(NO_DECAY), "--fail-if-onset-earlier", "0")
    assert result.exit_code == 0
    assert f"round {o.baseline} -> round {o.candidate} (+{o.delta} rounds)" in result.stdout
    assert run(str(NO_DECAY), str(DECAY), "--fail-if-onset-earlier", "0").exit_code == 1
    assert run(str(DECAY), str(DECAY), "--fail-if-onset-earlier", "0",
               "--fail-on-new", "info").exit_code == 0
    # gate or no gate, the verdict counts what got worse (usertest63 #3): the units at
    # error that are new, and the persisting ones that were below error
    new = [f for f in d.by_status("new") if f.severity is Severity.ERROR]
    rose = [f for f in d.by_status("persisting") if f.candidate and f.baseline
            and f.candidate.severity is Severity.ERROR
            and f.baseline.severity is not Severity.ERROR]
    # the simulator tags the spans of these facts "discriminating", so each unit weighs
    # as its fold, as the audit weighs it (adv127 #2), not by its tier (usertest66 F4)
    assert d.worse_counts() == (len(new), len(rose)) == (1, 20)
    assert "persisting finding unit(s) (1 new error(s), 20 rose to error); " in d.headline()
    assert diff_reports(audit(str(NO_DECAY)), audit(str(NO_DECAY))).worse_counts() == (0, 0)


def test_sparklines_past_eighteen_rounds_keep_one_row_per_run(tmp_path: Path) -> None:
    """Issue 13, section 4: past 18 rounds the baseline row held both runs squeezed
    together and the candidate row was blank."""
    from compaction_audit.report.diff_render import paired_sparklines
    from compaction_audit.report.terminal import SPARK

    base, cand = paired_sparklines([0.0] * 40, [1.0] * 40)
    assert (base, cand) == ("▁" * 36, "█" * 36)
    base, cand = paired_sparklines([0.0, 7.0, None], [7.0, 0.0, 3.5])
    assert (base, cand) == ("▁█ ", "█▁▄")
    light = make_log(tmp_path / "light.jsonl", n=40, signature=(4, 5, 6))
    heavy = make_log(tmp_path / "heavy.jsonl", n=40, signature=(4, 5, 6), heavy=True)
    result = RUNNER.invoke(APP, ["diff", light, heavy], env={"COLUMNS": "160"})
    rows = {line.split()[1] if line.startswith("raw_ratio") else line.split()[0]: line
            for line in result.output.splitlines()
            if line.startswith(("raw_ratio", " ")) and ("baseline " in line
                                                         or "candidate " in line)}
    # raw_ratio: light >= 0.9 everywhere, heavy <= 120/525: two full rows, one scale
    marks = {k: "".join(ch for ch in v if ch in SPARK) for k, v in rows.items()}
    assert len(marks["baseline"]) == 36 and set(marks["baseline"]) <= {"▇", "█"}
    assert marks["candidate"] == "▁" * 36


def test_the_audit_verdict_names_the_onset_diff_compares() -> None:
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    a, b = "sample_logs/research-decay.jsonl", "sample_logs/research-no-decay.jsonl"
    run = CliRunner().invoke
    verdicts = [run(app, ["audit", "-q", p]).stdout.strip() for p in (a, b)]
    assert verdicts[0].endswith("; inversion onset at round 8, inversion boundary crossed "
                                "at round 16")
    assert verdicts[1].endswith("; inversion onset at round 19 (the signature; no boundary)")
    assert "inversion onset later: round 8 -> round 19" in run(app, ["diff", a, b]).stdout


def test_finding_units_wrap_under_their_indent_at_100_columns() -> None:
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    out = CliRunner().invoke(app, ["diff", "sample_logs/research-decay.jsonl",
                                   "sample_logs/research-no-decay.jsonl"],
                             env={"COLUMNS": "100"}).stdout
    lines = out.splitlines()
    start = lines.index("Findings")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("No gates set"))
    units = [ln for ln in lines[start + 1:end]
             if ln and not ln.startswith(("New (", "Resolved (", "Persisting ("))]
    # a unit's where-clause wrapped at 100 columns ('candidate' ... 'rounds 1-27') stays
    # under the unit's indent
    assert all(ln.startswith("  ") for ln in units), [ln for ln in units
                                                          if not ln.startswith("  ")]
    assert any(ln.startswith("      rounds ") or ln.startswith("      round ")
               for ln in units)  # this sample does wrap one


def test_a_round_that_diverges_below_three_decimals_shows_the_digits_that_differ() -> None:
    """0.2001 and 0.1996 both print as 0.200: the round is listed as diverging (its
    difference exceeds FLOAT_TOLERANCE), so it must show enough decimals to say how,
    in the narrow listing and in the wide table; 0.5 vs 0.5 stays one cell."""
    import io
    from types import SimpleNamespace

    import polars as pl
    from rich.console import Console

    from compaction_audit.report.diff_render import divergence_table

    series = pl.DataFrame({
        "round": [0, 1], "in_baseline": [True, True], "in_candidate": [True, True],
        "q_baseline": [0.2001, 0.5], "q_candidate": [0.1996, 0.5],
        "diverges": [True, False]})
    fake = SimpleNamespace(series=series, quantities=["q"], diverging_rounds=[0])

    def render(width: int) -> str:
        out = io.StringIO()
        Console(file=out, width=width, color_system=None).print(divergence_table(fake))
        return out.getvalue()

    narrow, wide = render(31), render(120)
    assert "round 0: q 0.2001 -> 0.1996" in narrow
    assert "equal where both have it" not in narrow
    assert "0.2001 -> 0.1996" in wide
    assert "0.500" not in wide  # round 1 does not diverge: not listed


def test_a_run_with_skipped_records_says_so_and_fails_a_warning_gate(tmp_path: Path) -> None:
    """adv19a F4: under --lenient the candidate's failing round (its line cut short)
    was skipped, the diff passed --fail-on-new error and said nothing of it.  Now the
    verdict and the JSON name what each run skipped, and a warning gate fails on it."""
    lines = (SAMPLES / "handwritten.jsonl").read_text(encoding="utf-8").splitlines()
    base = tmp_path / "base.jsonl"
    base.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # rounds 0 and 1
    lines[3] = lines[3][:-5]  # round 2, the fold that drops the facts: bad JSON
    cand = tmp_path / "cand.jsonl"
    cand.write_text("\n".join(lines) + "\n", encoding="utf-8")
    note = "candidate: 1 bad record(s) skipped and 4 dependent reject(s) (--lenient)"
    text = run(str(base), str(cand), "--lenient", "--fail-on-new", "error")
    assert text.exit_code == 0 and note in text.output
    doc = json.loads(run(str(base), str(cand), "--lenient", "-f", "json").stdout)
    # the skipped round is where the baseline's 5 units were: they may be in it
    # (docs/diff.md, "resolved"; adv144 F2)
    assert doc["verdict"].endswith("; " + note + "; candidate: its 5 resolved finding(s) "
                                   "may be in the records it skipped, not fixed")
    assert (doc["candidate"]["skipped_records"], doc["candidate"]["dependent_rejects"]) == (1, 4)
    assert (doc["baseline"]["skipped_records"], doc["baseline"]["dependent_rejects"]) == (0, 0)
    gated = json.loads(run(str(base), str(cand), "--lenient", "--fail-on-new", "warning",
                           "-f", "json").stdout)
    assert ("the candidate's findings are incomplete: 1 bad record(s) skipped and 4 "
            "dependent reject(s) (--lenient)") in gated["gates"]["reasons"]
    # the damaged run on both sides: each is named, the baseline first
    swapped = json.loads(run(str(cand), str(cand), "--lenient", "--fail-on-new", "info",
                             "-f", "json").stdout)
    assert swapped["verdict"] == ("no change; baseline: 1 bad record(s) skipped and 4 "
                                  "dependent reject(s) (--lenient); " + note)
    clean = json.loads(run(str(base), str(base), "--lenient", "--fail-on-new", "info",
                           "-f", "json").stdout)
    assert clean["verdict"] == "no change" and clean["gates"]["passed"]


def test_each_skipped_record_is_named_under_the_verdict(tmp_path: Path) -> None:
    """ux5 F5: the verdict counted the skipped records and named none."""
    lines = (SAMPLES / "handwritten.jsonl").read_text(encoding="utf-8").splitlines()
    base = tmp_path / "base.jsonl"
    base.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines[3] = lines[3][:-5]  # bad JSON at line 4
    cand = tmp_path / "cand.jsonl"
    cand.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = json.loads(run(str(base), str(cand), "--lenient", "-f", "json").stdout)
    [why] = doc["candidate"]["skipped"]
    assert why.startswith(f"{cand}:4: bad JSON: ")
    assert doc["baseline"]["skipped"] == []
    text = run(str(base), str(cand), "--lenient").output.splitlines()
    said = [i for i, x in enumerate(text) if x.startswith("  skipped  ")]
    assert len(said) == 1 and why.startswith(text[said[0]][len("  skipped  candidate  "):])
    # (the reason may wrap right after "bad JSON:", as the message is long)
    assert text[said[0]].startswith(f"  skipped  candidate  {cand}:4: bad JSON:")
    assert said[0] < text.index(next(x for x in text if x.startswith("Onsets")))


def test_a_lexical_rebuilt_cosine_alone_makes_no_round_diverge(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the two compactions of one Cline task (our fixture): rounds 0-2 hold the same
    # messages; the TF-IDF is fitted on each run's own texts, so its cosine moved at
    # every round (user test: "series differ at 4 round(s)" where one round differs)
    from tests.foreign import FIXTURES

    monkeypatch.setenv("COMPACTION_AUDIT_EMBED", "lexical")
    folder = FIXTURES / "cline"
    base = audit(str(folder / "basic.compaction.json"))
    cand = audit(str(folder / "agentic.compaction.json"))
    assert base.cosine["method"].startswith("lexical TF-IDF")
    d = diff_reports(base, cand)
    assert d.diverging_rounds == [3]  # the round of the compaction
    series = d.series.filter(pl.col("round") < 3)
    assert (series["query_cosine_rebuilt_baseline"]
            != series["query_cosine_rebuilt_candidate"]).any()  # shown as they are
    assert "series differ at 1 round(s)" in d.headline()


def test_the_gate_heading_names_the_gates_that_failed_and_those_that_passed() -> None:
    # usertest13: both gates were named FAILED where the onset gate had passed
    from compaction_audit.diff import failed_heading

    both = {"fail_if_onset_earlier": 0, "fail_on_new": "error"}
    new = ["9 new finding unit(s) at or above error: CA301 silent-discriminating-fold x9"]
    assert failed_heading(new, both) == (
        "Gates FAILED (--fail-on-new error; passed: --fail-if-onset-earlier 0):")
    onset = ["inversion onset appeared at round 4 (baseline had none)"]
    assert failed_heading(onset + new, both) == (
        "Gates FAILED (--fail-if-onset-earlier 0, --fail-on-new error):")
    assert failed_heading(onset, {**both, "fail_on_new": None}) == (
        "Gates FAILED (--fail-if-onset-earlier 0):")
    less = ["the candidate could not be checked as fully as the baseline: 1 line not read"]
    assert failed_heading(less, both) == (
        "Gates FAILED (--fail-if-onset-earlier 0, --fail-on-new error):")


def test_at_80_columns_onsets_and_series_are_lists_with_every_name_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest16 #8: at 80 columns the Onsets table cut "first CA301
    silent-discriminatin…", and the series' name column cut query_cosine_retained and
    query_cosine_rebuilt to the same "query_cosine_r…".  (Relative paths: a run's path
    is one line, never wrapped, however long the clone's path; usertest17.)"""
    from compaction_audit.cli import app

    monkeypatch.chdir(SAMPLES.parent)
    args = ["diff", "sample_logs/research-decay.jsonl", "sample_logs/handwritten.jsonl"]
    narrow = CliRunner().invoke(app, args, env={"COLUMNS": "80"}).stdout.splitlines()
    assert "  first CA301 silent-discriminating-fold: 5 -> 2 (-3) earlier" in narrow
    assert "  inversion onset: 8 -> none not reached (the candidate ends at round 4)" in narrow
    at = narrow.index("query_cosine_retained")
    assert narrow[at + 1].startswith("  baseline    ▁▁▁▂")
    assert narrow[at + 1].endswith("  0.449 -> 0.587")
    assert narrow[at + 2].startswith("  candidate  ▄▅ ▇▁ ")
    assert narrow[at + 2].endswith("  0.520 -> 0.425")
    assert "query_cosine_rebuilt" in narrow  # the verdict, last, is one line (docs/diff.md)
    assert all(len(x) <= 80 for x in narrow[:-1])
    wide = CliRunner().invoke(app, args, env={"COLUMNS": "120"}).stdout.splitlines()
    assert any(x.startswith(" first CA301 silent-discriminating-fold │        5 │")
               for x in wide)
    assert any(x.startswith("query_cosine_retained  baseline    ▁▁▁▂") for x in wide)


def test_a_claim_stated_by_summaries_of_other_ids_persists(tmp_path: Path) -> None:
    """usertest17: one unsupported claim, stated by summary t1.237 in one run and by
    t1.59 in the other, was "new" and "resolved" at once: summary ids are local to a
    run, as fold ids are."""
    lines = (SAMPLES / "faithfulness.jsonl").read_text(encoding="utf-8").splitlines()
    renamed = [line.replace('"c2"', '"c9"') for line in lines]
    base, cand = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    base.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cand.write_text("\n".join(renamed) + "\n", encoding="utf-8")
    d = diff_reports(audit(str(base)), audit(str(cand)))
    claims = [x.key for x in d.by_status("persisting") if x.code == "CA305"]
    assert claims and all(k.startswith("claim:") for k in claims)
    assert not [x for x in d.by_status("new") + d.by_status("resolved") if x.code == "CA305"]


def test_a_persisting_unit_that_reaches_the_gate_s_severity_fails_it(tmp_path: Path) -> None:
    """usertest32 #2: the accounted fold m1 of the handwritten sample made silent (its
    accounting dropped, s1 evicted, not offloaded): the facts it lost went from a
    topic-only warning to a silent-fold error, units that persist, and
    ``--fail-on-new error`` passed while ``audit --baseline`` failed the same change."""
    records = [json.loads(ln) for ln in
               (SAMPLES / "handwritten.jsonl").read_text().splitlines() if ln.strip()]
    for r in records:
        if r.get("round") == 1:
            r["summaries"][0].pop("accounting")
            r["evicted"], r["offloaded"] = ["s1", "s2"], []
        if r.get("round") == 4:
            r["evicted"] = []
    worse = tmp_path / "worse.jsonl"
    worse.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run(str(SAMPLES / "handwritten.jsonl"), str(worse), "--fail-on-new", "error")
    assert result.exit_code == 1
    out = " ".join(result.stdout.split())
    # s1 and s4 are tagged "discriminating": their facts weigh as their fold (adv127 #2)
    assert ("5 persisting finding unit(s) now at or above error, below it in the baseline: "
            "CA301 silent-discriminating-fold x5") in out
    assert "CA301 silent-discriminating-fold 10 unit(s) " in out  # one severity: no mix
    d = diff_reports(audit(str(SAMPLES / "handwritten.jsonl")), audit(str(worse)))
    assert not [r for r in gate(d, None, "error") if r.startswith("1 new")]  # CA203: a warning
    assert gate(d, None, "warning")[0].startswith("1 new finding unit(s) at or above warning")
    assert not any("persisting" in r for r in gate(d, None, "warning"))  # warnings before too


def test_a_condition_of_inversion_that_changed_is_a_change(tmp_path: Path) -> None:
    """usertest43 #3: the decay sample with ``scorer.depth_penalty`` 0.2 (the scorer
    penalizes depth: the loop can drift, not invert) read "no change" against the
    sample, whose penalty is 0."""
    sample = Path(__file__).parent.parent / "sample_logs" / "research-decay.jsonl"
    lines = sample.read_text().splitlines(keepends=True)
    record = json.loads(lines[0])
    assert record["scorer"]["depth_penalty"] == 0
    record["scorer"]["depth_penalty"] = 0.2
    penalized = tmp_path / "penalized.jsonl"
    penalized.write_text(json.dumps(record) + "\n" + "".join(lines[1:]))
    d = diff_reports(audit(str(sample)), audit(str(penalized)))
    assert d.conditions_changed() == [("scorer does not penalize depth", "holds", "fails")]
    assert d.changed
    assert d.headline() == (  # the candidate's rounds are drift (adv121 #5)
        "the candidate cannot invert (a condition of inversion fails), its rounds read as "
        "drift: inversion onset unchanged: round 8 -> round 8; 0 new, 0 resolved, 741 "
        "persisting finding unit(s); conditions of inversion differ: scorer does not "
        "penalize depth holds -> fails")
    same = diff_reports(audit(str(sample)), audit(str(sample)))
    assert same.conditions_changed() == [] and same.headline() == "no change"


def test_the_verdict_names_an_onset_at_the_boundarys_round(tmp_path: Path) -> None:
    """usertest49 #5: an onset at the boundary's own round was said nowhere in the text
    ("...; inversion boundary crossed at round 5"), the onset being what diff compares;
    one that comes before the boundary is said as before."""
    heavy = audit(make_log(tmp_path / "heavy.jsonl", signature=(4, 5, 6), heavy=True))
    assert (heavy.onsets["inversion_onset"], heavy.onsets["inversion_boundary"]) == (4, 4)
    assert heavy.verdict().endswith(
        "; this loop can drift but not invert (a condition of inversion fails): inversion "
        "onset and boundary at round 4 read as drift")
    light = audit(make_log(tmp_path / "light.jsonl", signature=(4, 5, 6)))
    assert light.verdict().endswith(
        "; this loop can drift but not invert (a condition of inversion fails): inversion "
        "onset at round 4 read as drift (the signature; no boundary)")


def test_the_summary_table_has_the_onset_beside_the_boundary(tmp_path: Path) -> None:
    """usertest49 #5: the summary of several traces had an "inversion boundary" column
    and no onset, the round diff compares."""
    from compaction_audit.api import audit_paths
    from compaction_audit.report.markdown import summary_table

    paths = [make_log(tmp_path / "heavy.jsonl", signature=(4, 5, 6), heavy=True),
             make_log(tmp_path / "light.jsonl", signature=(4, 5, 6))]
    head, _, *rows = summary_table(audit_paths(paths, jobs=1))
    assert head == ("| trace | rounds | errors | warnings | info | inversion onset | "
                    "inversion boundary | verdict |")
    cells = [row.split(" | ")[1:7] for row in rows]  # the worst verdict first
    # heavy's inversion is a warning: its eviction is not continuous (usertest61 A5)
    assert cells == [["10", "0", "9", "1", "4", "4"], ["10", "0", "0", "0", "4", "-"]]
    assert "heavy\\.jsonl | " in rows[0] and "light\\.jsonl | " in rows[1]


def _moved(d: Any, onset: tuple[int | None, int | None],
           boundary: tuple[int | None, int | None], new_error: bool = False) -> Any:
    """``d`` with its inversion onset and boundary rows set to these rounds (and, with
    ``new_error``, its first unit made a new error)."""
    import dataclasses

    from compaction_audit.rules.base import Severity

    rows = {"inversion_onset": onset, "inversion_boundary": boundary}
    onsets = [dataclasses.replace(o, baseline=rows[o.name][0], candidate=rows[o.name][1],
                                  delta=None if None in rows[o.name]
                                  else rows[o.name][1] - rows[o.name][0],
                                  verdict=verdict(*rows[o.name]))
              if o.name in rows else o for o in d.onsets]
    findings = list(d.findings)
    if new_error:
        unit = findings[0]
        occ = dataclasses.replace(unit.candidate or unit.baseline, severity=Severity.ERROR)
        findings[0] = dataclasses.replace(unit, status="new", baseline=None, candidate=occ)
    return dataclasses.replace(d, onsets=onsets, findings=findings)


@pytest.mark.skipif(not DECAY.exists(), reason="samples not built")
def test_the_verdict_says_a_boundary_that_moved_and_colours_by_both() -> None:
    """usertest53 #5: "inversion onset unchanged" led a verdict whose boundary (where
    CA101 fires) came 2 rounds earlier, drawn as no regression; and a candidate with a
    later onset and a new error was drawn green."""
    same = diff_reports(audit(str(DECAY)), audit(str(DECAY)))
    earlier = _moved(same, (8, 8), (17, 15))
    assert earlier.headline().startswith(
        "inversion onset unchanged: round 8 -> round 8; inversion boundary earlier: "
        "round 17 -> round 15 (-2 rounds); ")
    assert earlier.moved() == "earlier"
    assert _moved(same, (8, 8), (None, 15)).moved() == "earlier"  # appeared
    later = _moved(same, (8, 19), (16, None))
    assert later.headline().startswith(
        "inversion onset later: round 8 -> round 19 (+11 rounds); inversion boundary "
        "disappeared: round 16 -> none; ")
    assert later.moved() == "later"
    assert _moved(same, (8, 19), (16, None), new_error=True).moved() == "unchanged"
    assert _moved(same, (8, 8), (16, 16)).moved() == "unchanged"
    assert "inversion boundary" not in _moved(same, (8, 9), (16, 16)).headline()


@pytest.mark.skipif(not (DECAY.exists() and NO_DECAY.exists()), reason="samples not built")
def test_the_json_lists_ten_units_per_rule_unless_all() -> None:
    """adv98 #3: the diff JSON listed every unit (9,002 new ones: 5.2 MB for a 0.58 MB
    candidate); at most 10 per status and rule now, the rest counted, all with --all."""
    every = json.loads(run(str(DECAY), str(NO_DECAY), "-f", "json", "--all").stdout)
    capped = json.loads(run(str(DECAY), str(NO_DECAY), "-f", "json").stdout)
    assert capped["findings"]["counts"] == every["findings"]["counts"]
    for status in ("new", "resolved", "persisting"):
        units = every["findings"][status]
        assert len(units) == every["findings"]["counts"][status]
        per_rule: dict[str, list[Any]] = {}
        for u in units:
            per_rule.setdefault(u["code"], []).append(u)
        first = [u for group in per_rule.values() for u in group[:10]]
        assert capped["findings"][status] == first
        assert f"{status}_truncated" not in every["findings"]
        if len(first) < len(units):
            assert capped["findings"][f"{status}_truncated"] == {
                "truncated": True, "shown": len(first), "total": len(units),
                "by_rule": {code: len(group) for code, group in per_rule.items()}}
        else:
            assert f"{status}_truncated" not in capped["findings"]
    assert "resolved_truncated" in capped["findings"]  # CA302 resolves 300-odd units
    # the text report: 3 per rule, every one with --all (usertest54 #11)
    text = run(str(DECAY), str(NO_DECAY)).stdout
    assert "more (--all lists every unit)" in text
    assert "more (--all lists every unit)" not in run(str(DECAY), str(NO_DECAY),
                                                      "--all").stdout


@pytest.mark.skipif(not DECAY.exists(), reason="samples not built")
def test_a_boundary_gone_with_the_rounds_is_no_improvement(tmp_path: Path) -> None:
    """usertest54 #9: a candidate that is the baseline's first 15 rounds has no
    boundary (the baseline's is at round 16): "disappeared", drawn green as if fixed.
    And a finding that rose to an error is as bad as a new one (usertest54 #10)."""
    short = tmp_path / "rd15.jsonl"
    short.write_text("".join(DECAY.read_text(encoding="utf-8").splitlines(True)[:16]),
                     encoding="utf-8")
    d = diff_reports(audit(str(DECAY)), audit(str(short)))
    assert d.onset("inversion_boundary").verdict == "disappeared"
    assert d.moved() == "unchanged"
    assert "inversion boundary disappeared: round 16 -> none (the candidate ends at round " \
           "15)" in d.headline()
    # usertest55 #10: cut at round 9, the onset of round 8 (3 rounds to hold: rounds
    # 8-10) could not be seen either; cut at round 10 it could
    for rounds, seen in ((9, False), (10, True)):
        cut = tmp_path / f"rd{rounds}.jsonl"
        cut.write_text("".join(DECAY.read_text(encoding="utf-8").splitlines(True)[:rounds + 1]),
                       encoding="utf-8")
        o = diff_reports(audit(str(DECAY)), audit(str(cut))).onset("inversion_onset")
        assert diff_reports(audit(str(DECAY)), audit(str(cut))).ends_before(o) == (
            None if seen else rounds), rounds
    same = diff_reports(audit(str(DECAY)), audit(str(DECAY)))
    gone = _moved(same, (8, 19), (16, None))
    assert gone.moved() == "later"  # the candidate has round 16: gone from it
    import dataclasses

    from compaction_audit.rules.base import Severity

    unit = next(f for f in gone.findings if f.severity is not Severity.ERROR)
    risen = dataclasses.replace(unit, candidate=dataclasses.replace(
        unit.candidate, severity=Severity.ERROR))
    assert dataclasses.replace(gone, findings=[risen]).moved() == "unchanged"


@pytest.mark.parametrize(("first", "step", "apart"), [
    (100, 1, True), (0, 2, True),
    (1, 1, False),  # numbered from 1, not 0: the same rounds less one (adv139 #1)
])
def test_runs_that_number_their_rounds_apart_are_said_so(
        tmp_path: Path, first: int, step: int, apart: bool) -> None:
    """adv138 #3: a candidate numbered from 100 read as an onset 89 rounds later, in
    green; the same run numbered 0, 2, 4... as 8 rounds better.  The verdict says the
    runs number their rounds apart and calls no move later; the gate compares the
    numbers (no rule tells a renumbered run from a resumed one: adv139 #1)."""
    base = make_log(tmp_path / "base.jsonl", n=12, signature=(6, 7, 8))
    cand = tmp_path / "cand.jsonl"
    rows = [json.loads(line) for line in Path(make_log(
        tmp_path / "late.jsonl", n=12, signature=(6, 7, 8))).read_text().splitlines()]
    for row in rows:
        if row["type"] == "round":
            row["round"] = first + step * row["round"]
    cand.write_text("".join(json.dumps(row) + "\n" for row in rows))
    d = diff_reports(audit(base), audit(str(cand)))
    said = f"baseline rounds 0-11, candidate rounds {first}-{first + step * 11}"
    assert d.rounds_apart() == (said if apart else None)
    note = f"; the runs number their rounds apart ({said}): onsets compared by round number"
    assert d.headline().endswith(note) == apart
    if apart:
        assert d.moved() == "unchanged"  # not "later" (green) for numbers of no use
    assert gate(d, 0, None) == []  # the candidate's onset is no earlier by number
