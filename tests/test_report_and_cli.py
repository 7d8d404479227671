"""JSON keys, exit codes through the CLI, rehydration, conditions, onsets, escaping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.rehydrate import tokens_needed
from compaction_audit.series import SPEC_COLUMNS
from tests.logs import SAMPLES, LogWriter, rnd, session, spans

RUNNER = CliRunner()
HANDWRITTEN = str(SAMPLES / "handwritten.jsonl")


def run(*args: str, input: bytes | None = None) -> Any:
    return RUNNER.invoke(app, list(args), input=input)


def test_json_keys_and_findings() -> None:
    result = run("audit", HANDWRITTEN, "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.output)
    for key in ("tool", "path", "session", "conditions", "onsets", "series", "findings",
                "not_evaluated", "skipped", "counts", "verdict", "settings"):
        assert key in doc
    assert list(doc["series"][0]) == list(SPEC_COLUMNS)
    assert doc["series"][3]["distinct_source_spans"] == 3
    # episodes (issue 14, section 3): CA303 fires at rounds 2, 3 and 4, one episode;
    # CA201 at rounds 2 and 4 are two episodes (not adjacent)
    assert [(f["code"], f["round"], f["last_round"], f["count"], f["rounds"])
            for f in doc["findings"]] == [
        ("CA302", 1, 1, 1, 1), ("CA201", 2, 2, 1, 1), ("CA301", 2, 2, 1, 1),
        ("CA303", 2, 4, 3, 3), ("CA203", 3, 3, 1, 1), ("CA201", 4, 4, 1, 1)]
    assert doc["findings_omitted"] == []
    assert doc["series_rounds"] == {"shown": 5, "total": 5, "all": True}
    every = json.loads(run("audit", HANDWRITTEN, "--format", "json", "--all").output)
    assert [(f["rule"], f["code"], f["severity"], f["round"], f["line"], f["count"])
            for f in every["findings"]] == [
        ("topic-only-fold", "CA302", "warning", 1, 3, 1),
        ("ungrounded-summary", "CA201", "error", 2, 4, 1),
        ("silent-discriminating-fold", "CA301", "error", 2, 4, 1),
        ("recall-floor", "CA303", "error", 2, 4, 1),
        ("logged-mismatch", "CA203", "warning", 3, 5, 1),
        # r1 dropped only m1's own words ("after a failed migration"), no leaf's fact:
        # no fold finding (usertest56 #1; it read "still held by another span")
        ("recall-floor", "CA303", "error", 3, 5, 1),
        ("ungrounded-summary", "CA201", "error", 4, 6, 1),
        ("recall-floor", "CA303", "error", 4, 6, 1),
    ]
    assert doc["findings"][1]["values"] == {"summaries": ["m2"], "ungrounded_summaries": 1,
                                            "new_summaries": 1}
    assert doc["counts"] == {"info": 0, "warning": 2, "error": 6}
    assert [r["recall_debt"] for r in doc["series"]] == [0, 0, 5, 5, 10]
    assert doc["session"]["session_id"] == "handwritten-demo"
    assert [c["status"] for c in doc["conditions"]] == ["holds", "holds", "holds"]


@pytest.mark.parametrize(("fail_on", "code"), [("error", 1), ("warning", 1), ("info", 1),
                                                ("never", 0)])
def test_fail_on_with_errors(fail_on: str, code: int) -> None:
    assert run("audit", HANDWRITTEN, "--fail-on", fail_on).exit_code == code


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warning", 1), ("info", 1),
                                                ("never", 0)])
def test_fail_on_with_a_warning_only(write_log: LogWriter, fail_on: str, code: int) -> None:
    path = write_log([rnd(0, spans=spans(("a", 1), ("b", 1)), retained=[["a", 0.1],
                                                                         ["b", 0.1]]),
                      rnd(1, retained=[["a", 0.1]])])  # silent drop: a warning
    assert run("audit", str(path), "--fail-on", fail_on).exit_code == code


def test_usage_errors_exit_2() -> None:
    assert run("audit", HANDWRITTEN, "--fail-on", "loud").exit_code == 2
    assert run("audit", HANDWRITTEN, "--set", "raw_ratio_floor=abc").exit_code == 2
    assert run("audit", HANDWRITTEN, "--set", "raw_ratio_floor=1.5").exit_code == 2
    assert run("audit", HANDWRITTEN, "--window", "0").exit_code == 2
    assert run("audit", HANDWRITTEN, "--set", "nonsense").exit_code == 2
    assert run("audit").exit_code == 2


def test_version_and_help() -> None:
    assert run("--version").output.startswith("compaction-audit ")
    for cmd in ("audit", "thresholds"):
        result = run(cmd, "--help")
        assert result.exit_code == 0
        assert "Usage" in result.output


def test_threshold_override_changes_result(write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=spans(("a", 30)), summaries=[], retained=[["a", 0.1]]),
                      rnd(1, summaries=[{"id": "S", "tokens": 70, "children": ["a"]}],
                          spans=spans(("b", 30)), offloaded=["a"],
                          retained=[["S", 0.2], ["b", 0.1]])])
    # raw_ratio 0.3 at round 1: drift only with a floor above 0.3
    base = json.loads(run("audit", str(path), "-f", "json").output)
    assert "compaction-drift" not in {f["rule"] for f in base["findings"]}
    raised = json.loads(run("audit", str(path), "-f", "json", "--set",
                            "raw_ratio_floor=0.31").output)
    assert [f["round"] for f in raised["findings"] if f["rule"] == "compaction-drift"] == [1]


def _rehydration_log(write_log: LogWriter, **header: Any) -> Any:
    # Round 1: depth-2 summary R over L1 (3 children) and L2 (2 children), one raw span
    # of 10 tokens; spans fall 6 -> 3 and salience rises: inversion at round 1.
    leaves = [(f"s{i}", 10) for i in range(6)]
    return write_log([
        session(max_depth=2, **header),
        rnd(0, spans=spans(*leaves, ("x", 10)),
            summaries=[{"id": "L1", "tokens": 20, "children": ["s0", "s1", "s2"]},
                       {"id": "L2", "tokens": 20, "children": ["s3", "s4"]}],
            offloaded=["s0", "s1", "s2", "s3", "s4"], evicted=[],
            retained=[["L1", 0.3], ["L2", 0.3], ["s5", 0.1], ["x", 0.1]]),
        rnd(1, summaries=[{"id": "R", "tokens": 11, "children": ["L2"]}],
            evicted=["L2", "s3", "s5"],
            retained=[["L1", 0.5], ["R", 0.6], ["x", 0.2]]),
    ])


def test_rehydration_named_and_tokens(write_log: LogWriter) -> None:
    path = _rehydration_log(write_log)
    doc = json.loads(run("audit", str(path), "-f", "json").output)
    inv = [f for f in doc["findings"] if f["rule"] == "salience-inversion"]
    assert [f["round"] for f in inv] == [1]
    # spans 7 -> 5 (s3 evicted, s5 evicted); salience 0.2 -> 1.3 / 3; raw 10 of 41
    values = inv[0]["values"]
    assert values["distinct_source_spans_before"] == 7
    assert values["distinct_source_spans"] == 5
    assert values["query_cosine_retained"] == pytest.approx(1.3 / 3)
    assert values["raw_ratio"] == pytest.approx(10 / 41)
    rehydrate = inv[0]["values"]["rehydrate"]
    assert rehydrate["summary"] == "L1"  # depth 1 beats depth 2; fan-out 3
    assert rehydrate["fan_out"] == 3
    assert rehydrate["leaves_to_read"] == 3
    assert rehydrate["leaf_tokens_to_read"] == 30
    assert rehydrate["tokens_needed"] == tokens_needed(10, 31, 0.30) == 4
    assert "over_budget" not in rehydrate  # no budget recorded


@pytest.mark.parametrize(("budget", "over"), [(44, 1), (45, None), (46, None)])
def test_rehydration_says_when_the_tokens_needed_pass_the_budget(
        write_log: LogWriter, budget: int, over: int | None) -> None:
    """usertest53 #7: "raw tokens needed: 42,564" beside a working set of 169,399 tokens
    under a budget of 180,000 read as advice to follow.  Here the working set holds 41
    tokens (10 raw, 31 of summaries) and needs 4 more: 45 fits a budget of 45."""
    path = _rehydration_log(write_log, budget_tokens=budget)
    doc = json.loads(run("audit", str(path), "-f", "json").output)
    [inv] = [f for f in doc["findings"] if f["rule"] == "salience-inversion"]
    assert inv["values"]["rehydrate"].get("over_budget") == over
    text = " ".join(run("audit", str(path)).output.split())  # unwrapped
    assert ("(with them the working set exceeds the budget by 1 token, every summary "
            "kept)" in text) is (over == 1)


def test_tokens_needed_by_hand() -> None:
    # (10 + d) / (40 + d) = 0.3  ->  d = (0.3*30 - 0.7*10) / 0.7 = 2 / 0.7 = 2.857 -> 3
    assert tokens_needed(10, 30, 0.30) == 3
    assert tokens_needed(30, 70, 0.30) == 0  # exactly at the target
    assert tokens_needed(0, 0, 0.30) == 0
    # adv79 #7: d = 0.3 * 155,555,555,568 / 0.7 = 66,666,666,672 exactly (by hand), which
    # meets 0.3; the quotient in floating point was rounded up to 66,666,666,673
    assert tokens_needed(0, 155_555_555_568, 0.30) == 66_666_666_672
    assert tokens_needed(0, 70, 0.30) == 30  # exactly: 30 / 100
    with pytest.raises(ValueError):
        tokens_needed(1, 1, 1.0)


def test_log_text_is_printed_literally(write_log: LogWriter) -> None:
    evil = "S[bold]x\x1b[31m"
    path = write_log([
        session(session_id="sess\x1b]0;pwned\x07"),
        rnd(0, spans=spans(("a", 1)), retained=[["a", 0.1]]),
        rnd(1, summaries=[{"id": evil, "tokens": 1, "children": ["a"]}], evicted=["a"],
            retained=[[evil, 0.2]]),
    ])
    result = run("audit", str(path))
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "S[bold]x\\x1b[31m" in result.output
    assert "sess\\x1b]0;pwned\\x07" in result.output
    doc = run("audit", str(path), "-f", "json").output
    assert "\x1b" not in doc
    ungrounded = [f for f in json.loads(doc)["findings"] if f["rule"] == "ungrounded-summary"]
    assert ungrounded[0]["values"]["summaries"] == [evil]


def test_conditions_inferred_and_drift_only(write_log: LogWriter) -> None:
    path = write_log([
        session(eviction="on-overflow", scorer={"depth_penalty": 0.5}),
        rnd(0, spans=spans(("a", 1)), retained=[["a", 0.1]]),
    ])
    doc = json.loads(run("audit", str(path), "-f", "json").output)
    assert [c["status"] for c in doc["conditions"]] == ["fails", "fails", "fails"]
    assert doc["can_invert"] is False
    assert "can drift but not invert" in doc["verdict"]
    inferred = write_log([rnd(0, spans=spans(("a", 1), ("b", 1))), rnd(1, evicted=["a"]),
                          rnd(2, evicted=["b"])], "inferred.jsonl")
    doc = json.loads(run("audit", str(inferred), "-f", "json").output)
    assert doc["conditions"][1]["status"] == "unknown"  # no salience recorded
    assert doc["conditions"][2] == {
        "name": "eviction is continuous", "status": "holds",
        "detail": "inferred: items were evicted or offloaded in 2 of 2 rounds after the first"}


@pytest.mark.parametrize("value", ["99999999999999999999", "1e9", "2.0"])
def test_integer_settings_are_bounded_integers(value: str) -> None:
    result = run("audit", HANDWRITTEN, "--set", f"sustain={value}")
    assert result.exit_code == 2
    assert "sustain must be" in result.output


def test_a_signature_where_a_condition_fails_is_not_called_an_inversion_plainly() -> None:
    """Sample (g) crosses the boundary by the numbers while its eviction is not
    continuous: the verdict says both, not two claims that contradict each other."""
    from compaction_audit.api import audit
    from tests.logs import SAMPLES

    report = audit(str(SAMPLES / "faithfulness.jsonl"))
    verdict = report.verdict()
    # the loop cannot invert, said first; the rounds diff compares read as drift, with
    # the onset's absence (spec rules.md, "Onsets"; usertest56 #8) and the cosine read
    # (usertest41 #1); not "inversion boundary crossed" (usertest63 #2)
    assert verdict.endswith(
        "info; this loop can drift but not invert (a condition of inversion fails): "
        "inversion boundary at round 3 read as drift (no inversion onset; on "
        "query_cosine_rebuilt, the auditor's cosine)")
    assert "crossed" not in verdict
    # the tables print the round bare: their row says it is drift (usertest63 #2)
    from compaction_audit.report.summary import drift_note
    assert drift_note(report) == "(drift only: a condition of inversion fails)"
    assert drift_note(audit(str(SAMPLES / "research-decay.jsonl"))) == ""
    # the finding says it too, so every format does (usertest17 #3: a summary table,
    # an ::error annotation and a JUnit case called it an inversion plainly)
    [ca101] = [f for f in report.findings if f.code == "CA101"]
    assert ca101.message.startswith(
        "salience inversion: raw_ratio 0.000 < 0.25, distinct_source_spans 5 -> 0, ")
    assert ca101.message.endswith(  # (the cosine's values depend on the embedding)
        " at depth 2; but the condition 'eviction is continuous' fails: this loop can "
        "drift, not invert")
    held = audit(str(SAMPLES / "research-decay.jsonl"))  # every condition holds or is
    assert all(c.status != "fails" for c in held.conditions)  # unknown: no caveat
    assert next(f.message for f in held.findings if f.code == "CA101").endswith(
        " at depth 3")


@pytest.mark.parametrize(("args", "hint"), [
    (["--format", "json", "audit", "T"], " (options go after the command: python -m "
     "compaction_audit audit --format ...)"),
    (["--format=json", "diff", "T", "T"], " (options go after the command: python -m "
     "compaction_audit diff --format ...)"),
    (["-q", "audit", "T"], " (options go after the command: python -m compaction_audit "
     "audit -q ...)"),
    (["--bogus", "audit", "T"], ""),  # no command has it: nothing to move
    # adv85 #4: 'audit' right after --format is its value; the command is diff
    (["--format", "audit", "diff", "T", "T"], " (options go after the command: python -m "
     "compaction_audit diff --format ...)"),
])
def test_an_option_before_the_command_says_it_goes_after(args: list[str], hint: str) -> None:
    """adv84: 'compaction-audit --format json audit LOG' said only "No such option:
    --format"."""
    import os
    import subprocess
    import sys

    from tests.logs import ROOT

    log = str(SAMPLES / "handwritten.jsonl")
    done = subprocess.run([sys.executable, "-m", "compaction_audit",
                           *[log if a == "T" else a for a in args]],
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, check=False)
    option = args[0].split("=")[0]
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"compaction-audit: No such option: {option}{hint}; see 'python -m "
               "compaction_audit --help'\n")


@pytest.mark.parametrize(("records", "said"), [
    ([session(session_id="s-1", max_depth=3)], "s-1"),
    ([session(max_depth=3)], "(no session_id in the session record)"),
    ([], "(no session record)"),
])
def test_the_session_line_says_whether_there_was_a_session_record(
        write_log: LogWriter, records: list[dict[str, Any]], said: str) -> None:
    """usertest41 #8: a session record without session_id, whose max_depth the audit
    read ("depth cap 3"), was shown as "(no session record)"."""
    path = write_log([*records, rnd(0, spans=spans(("a", 3)))])
    out = run("audit", str(path)).output
    assert f"\n  session    {said} (native)\n" in out


def test_the_verdict_says_when_the_onset_reads_the_rebuilt_cosine() -> None:
    """usertest41 #1: sample (f) logs no ``retained``: its onset and boundary come from
    the auditor's own cosine, which the spec's onset does not read; the first line now
    says so.  Sample (a), the same loop with its salience logged, is unchanged."""
    from compaction_audit.api import audit

    rebuilt = audit(str(SAMPLES / "delta-text.jsonl")).verdict()
    assert rebuilt.endswith("inversion boundary crossed at round 16 (on "
                            "query_cosine_rebuilt, the auditor's cosine)")
    logged = audit(str(SAMPLES / "research-decay.jsonl")).verdict()
    assert logged.endswith("inversion onset at round 8, inversion boundary crossed at "
                           "round 16")


def test_the_cosine_line_counts_prompts_with_separators() -> None:
    # usertest42 G: "3999 later prompt(s)" beside "4,001 items"
    from compaction_audit.cosine.query import TaskQuery

    assert TaskQuery("q", "prompts", prompts=4000).describe() == (
        "the person's first prompt and 3,999 later prompt(s)")


def test_a_product_log_without_a_session_id_says_so_in_its_terms() -> None:
    # an OpenHands trajectory names no session: "(no session record)" before today,
    # then "(no session_id in the session record)", a native log's words
    from tests.logs import ROOT

    out = run("audit", str(ROOT / "tests" / "fixtures" / "adapters" / "openhands"
                           / "condensation.json")).output
    assert "\n  session    (no session id in the log) (openhands)\n" in out


def test_rehydration_of_a_summary_with_no_resolvable_leaf_says_it_restores_nothing() -> None:
    """usertest43 #4: sample (g) advised "rehydrate c2 (..., 0 resolvable leaves = 0
    tokens); raw tokens needed for the target raw_ratio: 26": every leaf of c2 was
    evicted at round 3 (line 5), so rehydrating it restores nothing."""
    out = RUNNER.invoke(app, ["audit", str(SAMPLES / "faithfulness.jsonl")],
                        env={"COLUMNS": "200"}).output
    said = ("rehydrate c2 (depth 2, fan-out 6): none of its leaves can be read again "
            "(each evicted or already in the working set), so it cannot restore the 26 raw "
            "tokens the target raw_ratio needs")
    assert out.count(said) == 1  # CA101 at round 3 (CA102 counts the spans to read back)
    assert "0 resolvable leaves" not in out and "0 leaves to read again" not in out
    # a summary with leaves to read again keeps the counts (test_rehydration_named_...)
    decay = RUNNER.invoke(app, ["audit", str(SAMPLES / "research-decay.jsonl")],
                          env={"COLUMNS": "200"}).output
    assert "rehydrate t1.111 (depth 1, fan-out 4, 3 leaves to read again = 4,204 tokens)" in decay
