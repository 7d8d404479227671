"""A rule whose kind of input the trace lacks judged nothing, and says so (issue 11,
class 2; adv23 F4: ``select = ["CA203"]`` on any product's transcript, which logs no
aggregate of its own, was a plain PASS and a green JUnit case).

Each rule names what it judges (``Rule.judges``): rounds, summaries, folds or the
agent's own ``logged`` aggregates.  A trace with none of it gets one note per reason,
naming every rule it leaves out; a selection of only such rules reads "PASS (no
selected rule could judge this trace)" in every format, and JUnit skips their cases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compaction_audit.api import audit, load
from compaction_audit.engine import select_rules
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import RULES
from compaction_audit.rules.applies import JUDGES, NOT_APPLICABLE, not_applicable
from tests.gate_app import run
from tests.logs import LogWriter, rnd, session

CLAUDE = str(Path(__file__).parent / "fixtures" / "adapters" / "claude-session.jsonl")
JUDGED_NOTHING = "PASS (no selected rule could judge this trace): 0 error(s)"

FLAT = [  # three rounds of raw spans, no summary, no fold, no logged aggregate
    rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}]),
    rnd(1, spans=[{"id": "b", "tokens": 30, "text": "Tests pass."}],
        retained=[["a", 0.5], ["b", 0.4]]),
    rnd(2, retained=[["a", 0.5], ["b", 0.4]]),
]


def audited(path: str, *codes: str) -> SessionReport:
    return audit(path, rules=select_rules(codes))


def skipped_cases(out: str) -> dict[str, str]:
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None
    return {c.get("name", ""): s.get("message", "") for c in suite.iter("testcase")
            if (s := c.find("skipped")) is not None}


def test_logged_mismatch_on_a_product_transcript_judges_nothing() -> None:
    quiet = run("audit", CLAUDE, "--isolated", "-q", "--select", "CA203")
    assert quiet.exit_code == 0
    assert quiet.output.startswith(JUDGED_NOTHING)
    junit = run("audit", CLAUDE, "--isolated", "-f", "junit", "--select", "CA203").output
    assert skipped_cases(junit) == {"CA203 logged-mismatch": NOT_APPLICABLE["logged"]}
    text = run("audit", CLAUDE, "--isolated", "--select", "CA203").output
    assert ("CA203 logged-mismatch: not applicable: the log records no aggregate of its "
            "own (logged)") in text


def test_logged_mismatch_judges_a_log_with_one_logged_aggregate(write_log: LogWriter
                                                                ) -> None:
    path = str(write_log([FLAT[0], {**FLAT[1], "logged": {"raw_ratio": 1.0}}, FLAT[2]]))
    out = run("audit", path, "--isolated", "-q", "--select", "CA203").output
    assert out.startswith("PASS: 0 error(s), 0 warning(s), 0 info")
    junit = run("audit", path, "--isolated", "-f", "junit", "--select", "CA203").output
    assert skipped_cases(junit) == {}


def test_a_logged_name_that_is_no_aggregate_is_noted(write_log: LogWriter) -> None:
    """usertest71 #11: a misspelt ``raw_ratio_x`` turned logged-mismatch off with no
    word; it is kept (the spec keeps unknown keys) and named in a note."""
    path = str(write_log([FLAT[0], {**FLAT[1], "logged": {"raw_ratio_x": 1.0}},
                          {**FLAT[2], "logged": {"raw_ratio": 1.0, "mine": 2}}]))
    report = audit(path)
    assert report.header.extra["reader_notes"] == [
        "logged: 'raw_ratio_x' (line 2), 'mine' (line 3) not among the aggregates the "
        "auditor checks (distinct_source_spans, query_cosine_retained, raw_ratio, "
        "summary_depth_max): not compared"]
    clean = str(write_log([FLAT[0], {**FLAT[1], "logged": {"raw_ratio": 1.0}}, FLAT[2]],
                          "clean.jsonl"))
    assert "reader_notes" not in audit(clean).header.extra


def test_a_trace_without_folds_names_each_rule_once_per_reason(write_log: LogWriter
                                                               ) -> None:
    path = str(write_log(FLAT))
    s = audited(path, "CA201", "CA202", "CA301", "CA305", "CA307")
    assert s.unjudged_rules() == {"CA201": NOT_APPLICABLE["summaries"],
                                  "CA301": NOT_APPLICABLE["folds"],
                                  "CA305": NOT_APPLICABLE["summaries"],
                                  "CA307": NOT_APPLICABLE["folds"]}
    assert not s.judged_nothing()  # CA202 judges every round
    assert s.rule_notes() == [
        "CA201 ungrounded-summary, CA305 unsupported-summary-claim: not applicable: no "
        "summary in this trace",
        "CA301 silent-discriminating-fold, CA307 lost-rule-violated: not applicable: no "
        "fold in this trace"]
    assert [(n.code, n.rounds) for n in s.not_evaluated] == [
        ("CA201", 3), ("CA301", 3), ("CA305", 3), ("CA307", 3)]
    out = run("audit", path, "--isolated", "-q", "--select", "CA201,CA301,CA305,CA307")
    assert out.output.startswith(JUDGED_NOTHING)
    doc = json.loads(run("audit", path, "--isolated", "-f", "json", "--select",
                         "CA301").output)
    assert doc["verdict"].startswith("PASS (no selected rule could judge this trace)")
    assert doc["unjudged"] == {"CA301": NOT_APPLICABLE["folds"]}


def test_overlapping_reasons_do_not_hide_a_judged_round(write_log: LogWriter) -> None:
    """Round 0 holds no tokens and has no earlier round (two reasons, one round,
    counted under the first, no earlier round: usertest49 #6, usertest50 #3); rounds 1
    and 2 have no cosine at the round or the round compared with.  The reasons' rounds
    sum to 3, and CA101 judged round 3."""
    path = str(write_log([
        session(task_query="Which port does the service keep?"), rnd(0),
        rnd(1, spans=[{"id": "a", "tokens": 5, "text": "Keep port 8080."}]),
        rnd(2, spans=[{"id": "b", "tokens": 5, "text": "The service port is 8080."}],
            retained=[["a", 0.5], ["b", 0.4]]),
        rnd(3, retained=[["a", 0.5], ["b", 0.4]])]))
    s = audited(path, "CA101")
    assert sorted((n.reason, n.rounds) for n in s.not_evaluated) == [
        ("salience unknown at the round or the round compared with", 2),
        ("the first round has no earlier round to compare with", 1)]
    assert s.unjudged_rules() == {}
    assert not s.judged_nothing()


@pytest.mark.parametrize(("window", "reason"), [
    (3, "the first 3 rounds have no round 3 rounds earlier to compare with"),
    (4, "the first 4 rounds have no round 4 rounds earlier to compare with: the session "
        "has 3 rounds"),
    (9, "the first 9 rounds have no round 9 rounds earlier to compare with: the session "
        "has 3 rounds")])
def test_a_window_past_the_sessions_end_says_its_length(write_log: LogWriter, window: int,
                                                        reason: str) -> None:
    """usertest51 #7: ``--window 50`` on a 40-round log read "the first 50 rounds have
    no round 50 rounds earlier", as if the log had 50; a window of 3 on 3 rounds (0, 1,
    2) judges none either, but its first 3 rounds are the session."""
    from compaction_audit.settings import Settings

    path = str(write_log([session(task_query="Which port?"), *FLAT]))
    s = audit(path, Settings(window=window), rules=select_rules(["CA101"]))
    assert [(n.reason, n.rounds) for n in s.not_evaluated] == [(reason, 3)]


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_names_a_kind_of_input(code: str) -> None:
    assert RULES[code].judges in JUDGES


def test_applicability_by_kind(write_log: LogWriter) -> None:
    flat, _ = load(str(write_log(FLAT)))
    assert [not_applicable(k, flat) for k in JUDGES] == [
        None, NOT_APPLICABLE["summaries"], NOT_APPLICABLE["folds"], NOT_APPLICABLE["logged"]]
    folded, _ = load(str(write_log([*FLAT, rnd(3, summaries=[
        {"id": "S", "tokens": 5, "children": ["a"], "text": "Port."}], evicted=["a"],
        logged={"distinct_source_spans": 2})])))
    assert [not_applicable(k, folded) for k in JUDGES] == [None, None, None, None]
    with pytest.raises(ValueError, match="unknown kind of input 'spans'"):
        not_applicable("spans", flat)


def test_the_rules_reference_says_what_each_rule_judges() -> None:
    assert "judges: logged" in run("rules", "CA203").output
    markdown = run("rules", "CA301", "--markdown").output
    assert "Judges: the folds (not applicable to a trace without one)." in markdown
