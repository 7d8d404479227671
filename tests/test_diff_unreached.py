"""A candidate that ends before the baseline (a run cut short, crashed or still being
written) never reached the baseline's later rounds: what the baseline found first
after the candidate's last round is "not reached", not resolved, and the recall debt
is compared at the candidate's last round (usertest74 F4: research-decay cut at round
12 of 40 showed "358 resolved" and a debt "665 -> 219 (-446)", an improvement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction_audit.cli import app
from tests.gate_app import RUNNER, drift_records, run
from tests.logs import dump, rnd


def _diff(base: Path, cand: Path, *args: str) -> Any:
    return run("diff", str(base), str(cand), "--isolated", *args)


def test_units_first_found_after_the_candidates_last_round_are_not_reached(
        tmp_path: Path) -> None:
    records = drift_records()  # CA201 at rounds 1-4, CA104 and CA105 at round 4
    base = dump(records, tmp_path / "whole.jsonl")
    cut = dump(records[:4], tmp_path / "cut.jsonl")  # rounds 0-2
    result = _diff(base, cut, "--fail-on-new", "warning", "--all")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out  # nothing new
    assert ("0 new, 0 resolved, 2 not reached (the candidate ends at round 2), 1 persisting "
            "finding unit(s)") in out
    assert "Not reached (2) WARNING CA104 compaction-drift 1 unit(s)" in out
    doc = json.loads(_diff(base, cut, "-f", "json").stdout)["findings"]
    assert doc["counts"] == {"new": 0, "resolved": 0, "unreached": 2, "persisting": 1}
    assert sorted(u["code"] for u in doc["unreached"]) == ["CA104", "CA105"]


def test_a_unit_at_the_candidates_last_round_is_resolved(tmp_path: Path) -> None:
    records = drift_records()
    base = dump(records, tmp_path / "whole.jsonl")
    # the candidate reaches round 4 without its fold: raw 105 of 125 tokens, no drift
    calm = [*records[:5], rnd(4, retained=[["s2", 0.8], ["d", 0.45], ["e", 0.1]])]
    cand = dump(calm, tmp_path / "calm.jsonl")
    out = " ".join(_diff(base, cand).output.split())
    assert "0 new, 2 resolved, 1 persisting finding unit(s)" in out
    assert "not reached" not in out and "Not reached" not in out
    swapped = " ".join(_diff(cand, base).output.split())  # a longer candidate: new
    assert "2 new, 0 resolved, 1 persisting" in swapped


def test_the_recall_debt_is_compared_at_the_candidates_last_round(tmp_path: Path) -> None:
    whole = Path(__file__).parents[1] / "sample_logs" / "research-decay.jsonl"
    cut = tmp_path / "cut.jsonl"  # the session record and rounds 1-12
    cut.write_text("".join(whole.read_text().splitlines(keepends=True)[:13]))
    verdict = " ".join(_diff(whole, cut).output.split())
    assert "recall debt" not in verdict  # 219 at round 12 in both runs
    assert "0 new, 0 resolved, 358 not reached, 388 persisting" in verdict
    assert "(the candidate ends at round 12)" in verdict  # said once, by the boundary
    longer = " ".join(_diff(cut, whole).output.split())  # the baseline ends first: as before
    assert ("recall debt (facts seen that no resolvable span or retained summary holds) "
            "at the last round 219 -> 665 (+446)") in longer
    assert "not reached" not in longer


def _research(tmp_path: Path, name: str, rounds: int, shift: int = 0,
              extra: str | None = None, at: int | None = None) -> Path:
    """research-decay's session record and its first ``rounds`` rounds, each round
    number plus ``shift``; ``extra`` (a line) inserted before line ``at``."""
    whole = Path(__file__).parents[1] / "sample_logs" / "research-decay.jsonl"
    lines = whole.read_text().splitlines(keepends=True)[:rounds + 1]
    if shift:
        lines = lines[:1] + [json.dumps({**json.loads(line), "round": json.loads(line)["round"]
                                         + shift}) + "\n" for line in lines[1:]]
    if extra is not None and at is not None:
        lines.insert(at - 1, extra + "\n")
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def test_a_candidate_numbered_from_a_later_round_still_ends_first(tmp_path: Path) -> None:
    # adv144 F1: rounds 2-13 against 1-40 (a logger gone from 0- to 1-based) read as
    # "358 resolved" and a debt "665 -> 219 (-446)"
    base = _research(tmp_path, "base.jsonl", 40)
    cand = _research(tmp_path, "cand.jsonl", 12, shift=1)
    verdict = " ".join(_diff(base, cand).output.split())
    # what the baseline found at round 13 the candidate's round 13 (its 12th) lacks:
    # resolved by round number, as every diff joins; rounds 14-40 it never reached
    assert "0 new, 19 resolved, 339 not reached, 388 persisting" in verdict
    # the two runs' round 13 are not the same point of the run: no debt compared
    assert "recall debt" not in verdict


def test_a_candidate_numbered_from_an_earlier_round_compares_no_debt(tmp_path: Path) -> None:
    # adv144 F5: the baseline from round 6, the candidate from 1: "at round 12 (the
    # candidate's last) 96 -> 219 (+123)" compared the baseline's 7th round with the
    # candidate's 12th
    base = _research(tmp_path, "base.jsonl", 40, shift=5)
    cand = _research(tmp_path, "cand.jsonl", 12)
    verdict = " ".join(_diff(base, cand).output.split())
    assert "358 not reached" in verdict
    assert "recall debt" not in verdict


def test_a_record_skipped_before_the_last_round_leaves_the_end_known(tmp_path: Path) -> None:
    # adv144 F2: one bad record at line 6 of a native log cut at round 12 is no round
    # after it: the units after round 12 are not reached
    base = _research(tmp_path, "base.jsonl", 40)
    cand = _research(tmp_path, "cand.jsonl", 12, extra='{"type": "mystery"}', at=6)
    verdict = " ".join(_diff(base, cand, "--lenient").output.split())
    assert "0 new, 0 resolved, 358 not reached, 388 persisting" in verdict
    assert "candidate: 1 bad record(s) skipped (--lenient)" in verdict
    assert "recall debt" not in verdict  # 219 at round 12 in both


def test_a_record_skipped_after_the_last_round_may_be_a_later_round(tmp_path: Path) -> None:
    base = _research(tmp_path, "base.jsonl", 40)
    cand = _research(tmp_path, "cand.jsonl", 12, extra='{"type": "mystery"}', at=14)
    verdict = " ".join(_diff(base, cand, "--lenient").output.split())
    assert "0 new, 358 resolved, 388 persisting" in verdict
    assert ("candidate: its 358 resolved finding(s) may be in the records it skipped, "
            "not fixed") in verdict
    # the debt is still compared where both runs were: at the candidate's last round
    assert "recall debt" not in verdict


def test_the_diff_page_s_round_panel_says_not_reached_and_lists_it_last(
        tmp_path: Path) -> None:
    # adv144 F6: the panel wrote the JSON key "unreached" where each heading says
    # "Not reached", and sorted those units before the persisting ones it caps
    from compaction_audit.api import audit
    from compaction_audit.diff import diff_reports
    from compaction_audit.report.html.diff_page import _panel_items

    records = drift_records()
    diff = diff_reports(audit(str(dump(records, tmp_path / "whole.jsonl"))),
                        audit(str(dump(records[:4], tmp_path / "cut.jsonl"))))
    where = [str(item["where"]).split(" ", 2)[:2] for item in _panel_items(diff)]
    assert [w for w in where if w[0] not in ("persisting", "new", "resolved")] == [
        ["not", "reached"], ["not", "reached"]]
    assert where[-2:] == [["not", "reached"], ["not", "reached"]]  # after the persisting
    assert not any(w[0] == "unreached" for w in where)


def _claude(sid: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": sid, "sessionId": "cut-h", **fields}


def _cut_transcript(tmp_path: Path) -> tuple[Path, Path]:
    """A Claude Code transcript in our own words (3 rounds) and its first 4 lines, cut
    after the summary line."""
    said = "Keep the billing pool at 24 connections and the retry cap at 7 on prod."
    lines = [
        _claude("u1", "user", message={"role": "user", "content": said}),
        _claude("a1", "assistant", message={"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": "Done: billing pool 24, retry cap 7 on prod."}]}),
        _claude("b1", "system", subtype="compact_boundary", logicalParentUuid="a1",
                compactMetadata={"trigger": "manual", "preTokens": 4000}),
        _claude("s1", "user", isCompactSummary=True,
                message={"role": "user", "content": "Summary: tuned the billing pool."}),
        _claude("a2", "assistant", message={"id": "m2", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash",
             "input": {"command": "grep -n billing config.yaml"}}]}),
        _claude("u2", "user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": "billing_pool: 24\nretry_cap: 7"}]}),
        _claude("u3", "user", message={"role": "user", "content": "Now check the logs."}),
        _claude("a3", "assistant", message={"id": "m3", "role": "assistant", "content": [
            {"type": "text", "text": "Checked the logs."}]}),
    ]
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(json.dumps(x) + "\n" for x in lines))
    cut = tmp_path / "cut.jsonl"  # cut after the summary line
    cut.write_text("".join(json.dumps(x) + "\n" for x in lines[:4]))
    return whole, cut


def test_a_product_log_cut_in_its_last_round_is_compared_before_it(tmp_path: Path) -> None:
    # adv144 F4: a Claude Code transcript cut after its summary line ends partway
    # through its last round (the re-read after the compaction is missing): "1 new"
    # and a debt "1 -> 4 (+3)" at "round 1 (the candidate's last)"
    whole, cut = _cut_transcript(tmp_path)
    verdict = " ".join(_diff(whole, cut).output.split())
    # no unit of the baseline's is first found from round 1 on: none is said to be
    # (adv145 F8: "count as not reached" where none did, and where no debt was shown);
    # the candidate's CA105 there (raw tokens 0: the cut's) is no new unit (adv145 F5)
    assert verdict.startswith("compaction-audit diff")
    assert ("0 new, 0 resolved, 1 not reached, 3 persisting finding unit(s); the "
            "candidate's last round, 1, may be cut short (a product's round runs to the "
            "person's next turn): the units only the candidate found there count as not "
            "reached;") in verdict
    assert "baseline's units" not in verdict and "compared at" not in verdict
    assert "recall debt" not in verdict  # round 0 holds every fact in both runs
    # a native log writes each round whole: no such note (the tests above)
    native = " ".join(_diff(_research(tmp_path, "b.jsonl", 40),
                            _research(tmp_path, "c.jsonl", 12)).output.split())
    assert "may be cut short" not in native


def test_what_only_a_cut_candidate_finds_at_its_last_round_is_not_new(
        tmp_path: Path) -> None:
    """adv145 F5: the CA105 the cut makes (raw tokens 0 after the summary) was "1 new"
    and failed ``--fail-on-new info``; its onset row read "appeared"."""
    whole, cut = _cut_transcript(tmp_path)
    assert _diff(whole, cut, "--fail-on-new", "info", "-q").exit_code == 0
    doc = json.loads(_diff(whole, cut, "-f", "json").stdout)
    assert doc["findings"]["counts"] == {"new": 0, "resolved": 0, "unreached": 1,
                                         "persisting": 3}
    [unit] = doc["findings"]["unreached"]
    assert (unit["code"], unit["baseline"], unit["candidate"]["first_round"]) == (
        "CA105", None, 1)
    wide = RUNNER.invoke(app, ["diff", str(whole), str(cut), "--isolated"],
                         env={"COLUMNS": "200"}).stdout
    rows = [" ".join(ln.split()) for ln in wide.splitlines()
            if ln.lstrip().startswith("summary majority")]
    assert rows == ["summary majority │ none │ 1 │ │ appeared (at the candidate's last "
                    "round, which may be cut short)"]
    # the whole run against itself cut nowhere: the same CA105 is persisting, no note
    same = json.loads(_diff(whole, whole, "-f", "json").stdout)["findings"]["counts"]
    assert same["new"] == same["unreached"] == 0


def _pools(tmp_path: Path, name: str, rounds: range) -> Path:
    """A native log in our own words: each round a person sets a pool size, and the
    round after folds it into "Worked on the pools." (which keeps no number)."""
    records: list[dict[str, Any]] = [{"type": "session", "schema": "compaction-audit/1",
                                      "session_id": "pools", "task_query": "tune the pools"}]
    for k in rounds:
        spans = [{"id": f"p{k}", "tokens": 30, "source": "user",
                  "text": f"Set pool_size to {100 + k} for the staging pool number {k}."}]
        fold = {} if k == rounds.start else {
            "summaries": [{"id": f"F{k}", "tokens": 5, "children": [f"p{k - 1}"],
                           "text": "Worked on the pools."}], "evicted": [f"p{k - 1}"]}
        records.append({"type": "round", "round": k, "spans": spans, **fold})
    return dump(records, tmp_path / name)


def test_units_at_or_before_a_later_starting_candidates_first_round_are_not_reached(
        tmp_path: Path) -> None:
    # adv145 F4: a candidate resumed two rounds later (rounds 2-9 of 0-9, numbered
    # alike) read "2 resolved" for the folds it never ran and "9 -> 7 (-2)" as debt
    base, late = _pools(tmp_path, "base.jsonl", range(10)), _pools(tmp_path, "late.jsonl",
                                                                    range(2, 10))
    verdict = " ".join(_diff(base, late).output.split())
    assert ("0 new, 0 resolved, 2 not reached (the candidate starts at round 2), 12 "
            "persisting finding unit(s)") in verdict
    assert "recall debt" not in verdict  # two rounds fewer seen: not the same point
    doc = json.loads(_diff(base, late, "-f", "json").stdout)["findings"]
    assert sorted(u["baseline"]["first_round"] for u in doc["unreached"]) == [1, 2]
    both = " ".join(_diff(base, _pools(tmp_path, "mid.jsonl", range(3, 7))).output.split())
    assert "7 not reached (the candidate starts at round 3 and ends at round 6)" in both
    # adv146 F6: the candidate starts earlier: its units at rounds the baseline never
    # ran were "2 new (2 new error(s))" and failed --fail-on-new
    swapped = " ".join(_diff(late, base).output.split())
    assert ("0 new, 0 resolved, 2 not reached (the baseline starts at round 2), 12 "
            "persisting finding unit(s)") in swapped and "recall debt" not in swapped
    assert _diff(late, base, "--fail-on-new", "info").exit_code == 0
    doc = json.loads(_diff(late, base, "-f", "json").stdout)["findings"]
    assert sorted(u["candidate"]["first_round"] for u in doc["unreached"]) == [1, 2]
    # and the onset rows of a rule first found before the later start say so, in
    # both directions (they read "later +2" and "earlier -2")
    rows = {o["name"]: o["shown"] for o in json.loads(
        _diff(base, late, "-f", "json").stdout)["onsets"]}
    assert rows["silent-discriminating-fold"] == "not reached (the candidate starts at round 2)"
    rows = {o["name"]: o["shown"] for o in json.loads(
        _diff(late, base, "-f", "json").stdout)["onsets"]}
    assert rows["silent-discriminating-fold"] == "not reached (the baseline starts at round 2)"
    same = " ".join(_diff(base, _pools(tmp_path, "same.jsonl", range(10))).output.split())
    assert same.endswith("no change")  # the same run: nothing is not reached


def test_the_onset_table_says_not_reached_where_the_candidate_ends_first(
        tmp_path: Path) -> None:
    # usertest76 F8: the table said "disappeared" (in green) for rules first found at
    # rounds the candidate never had; only the verdict line gave the caution
    records = drift_records()  # CA104 and CA105 first at round 4
    base = dump(records, tmp_path / "whole.jsonl")
    cut = dump(records[:4], tmp_path / "cut.jsonl")  # rounds 0-2
    rows = [" ".join(ln.split()) for ln in _diff(base, cut).output.splitlines()]
    assert any(r.startswith("first CA104 compaction-drift") and r.endswith(
        "4 │ none │ │ not reached (the candidate ends at round 2)") for r in rows), rows
    assert not any("disappeared" in r for r in rows)
    page = _diff(base, cut, "-f", "html").stdout
    assert '<td data-label="verdict">not reached (the candidate ends at round 2)</td>' in page
    swapped = _diff(cut, base).output  # the baseline ends first: the rows appeared
    assert "not reached" not in swapped


def _drift(tmp_path: Path, name: str, r3_tokens: int) -> Path:
    """A native log in our own words: a fold at round 1 leaves raw_ratio under the
    floor at rounds 1-2 and, after round 3's span, at rounds 4-5 (CA104 twice), or
    at rounds 1-5 (once) when round 3's span is small (``r3_tokens`` 10)."""
    return dump([
        {"type": "session", "schema": "compaction-audit/1", "session_id": "episodes",
         "budget_tokens": 2000, "max_depth": 3, "eviction": "continuous"},
        rnd(0, spans=[{"id": "r0", "tokens": 100, "text": "Read the deploy runbook."},
                      {"id": "s0", "tokens": 100, "text": "Checked the CI history."}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 400, "children": ["s0"],
                           "text": "CI history checked."}], evicted=["s0"]),
        rnd(2, spans=[{"id": "r2", "tokens": 1, "text": "ok"}]),
        rnd(3, spans=[{"id": "r3", "tokens": r3_tokens, "text": "Looked at the dashboard."}]),
        rnd(4, evicted=["r3"]),
        rnd(5, spans=[{"id": "r5", "tokens": 1, "text": "ok"}])], tmp_path / name)


def test_episodes_that_share_rounds_persist_whatever_their_ordinals(tmp_path: Path) -> None:
    # usertest77 F3: by ordinal, the baseline's second drift episode (rounds 4-5) was
    # "resolved" though the candidate drifts at rounds 1-5, and the verdict was green
    two, one = _drift(tmp_path, "two.jsonl", 300), _drift(tmp_path, "one.jsonl", 10)
    for base, cand in ((two, one), (one, two)):
        units = json.loads(_diff(base, cand, "-f", "json").stdout)["findings"]
        assert units["counts"]["new"] == units["counts"]["resolved"] == 0
        drift = [(u["baseline"]["first_round"], u["candidate"]["first_round"])
                 for u in units["persisting"] if u["code"] == "CA104"]
        assert sorted(drift) == ([(1, 1), (4, 1)] if base == two else [(1, 1), (1, 4)])
