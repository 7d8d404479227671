"""A JUnit case of a rule that could judge no round of the trace is skipped with the
reason, not passed: a log without salience and without a task query to rebuild it
cannot show salience-inversion or salience-disagreement, and a test viewer showed them
green. Before, every case without a finding passed and ``skipped`` was always 0."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.rules.base import Finding
from tests.logs import LogWriter, rnd, session

LOSSY = [rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080 because 80 is taken."}]),
         rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"], "text": "Ports."}],
             evicted=["a"])]


def cases(path: str) -> tuple[ET.Element, dict[str, ET.Element]]:
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "junit"]).stdout
    root = ET.fromstring(out)
    suite = root.find("testsuite")
    assert suite is not None
    assert root.get("skipped") == suite.get("skipped")  # one trace: the totals are its
    return suite, {c.get("name", ""): c for c in suite.iter("testcase")}


def test_rules_with_nothing_to_read_are_skipped_with_why(write_log: LogWriter) -> None:
    suite, by_name = cases(str(write_log(LOSSY)))
    skipped = {name: s.get("message") for name, c in by_name.items()
               if (s := c.find("skipped")) is not None}
    assert skipped == {
        "CA101 salience-inversion": "not applicable: no salience recorded",
        "CA203 logged-mismatch": "not applicable: the log records no aggregate of its own "
                                 "(logged)",
        "CA204 salience-disagreement": "not applicable: no rebuilt cosine (no task query)"}
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("16", "1", "3")


def test_a_rule_that_could_read_its_series_is_not_skipped(write_log: LogWriter) -> None:
    path = write_log([session(task_query="Which port does the service keep?"), *LOSSY])
    suite, by_name = cases(str(path))
    assert by_name["CA101 salience-inversion"].find("skipped") is None
    assert suite.get("skipped") == str(len(suite.findall("testcase/skipped")))


def test_the_cases_are_built_without_comparing_findings(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv34 C1: the findings under --fail-on were found by list membership in the
    failing ones (found x failing comparisons of whole findings: 104 s for a rule with
    10,000 findings).  A chain of folds, each summary folding the one before: the
    failing CA301 findings and the others are split without comparing two findings."""
    records: list[dict[str, Any]] = [rnd(0, spans=[
        {"id": "a", "tokens": 40, "text": "Keep port 8080 because 80 is taken."}])]
    parent = "a"
    for k in range(1, 41):
        records.append(rnd(k, summaries=[{"id": f"S{k}", "tokens": 5, "children": [parent],
                                          "text": "Notes."}], evicted=[parent]))
        parent = f"S{k}"
    path = str(write_log(records))
    compared: list[int] = []

    def counted(self: Finding, other: object) -> bool:
        compared.append(1)
        return self is other

    monkeypatch.setattr(Finding, "__eq__", counted)
    suite, by_name = cases(path)
    assert int(suite.get("failures", "0")) >= 1
    assert sum(1 for c in by_name.values() if c.find("failure") is not None) == int(
        suite.get("failures", "0"))
    assert compared == []


def test_a_failure_message_writes_a_round_of_two_findings_as_one_round() -> None:
    # usertest25 #2: two folds at round 35 read "35-35"
    from compaction_audit.report import junit
    from compaction_audit.report.model import SessionReport
    from compaction_audit.rules.base import Severity

    def f(round_: int) -> Finding:
        return Finding("silent-discriminating-fold", "CA301", Severity.ERROR, round_,
                       round_ + 1, "m", "a")

    s = SessionReport.__new__(SessionReport)
    s.path = "t.jsonl"
    root = ET.Element("testsuite")
    junit._case(root, s, "CA301", "silent-discriminating-fold",
                [f(17), f(22), f(23), f(35), f(35)], "error", False)
    message = root.find("testcase/failure").get("message")  # type: ignore[union-attr]
    assert message == ("5 finding(s) of silent-discriminating-fold at round(s) 17, 22-23, "
                       "35")


def test_a_rule_unjudged_for_several_reasons_gives_each() -> None:
    """usertest75 #9: the skip gave the reason of most rounds alone ("the first round
    has no earlier round to compare with") where the text report gives both.  A Codex
    rollout of two rounds whose second is a compaction with no work after it."""
    fixture = Path(__file__).parent / "fixtures" / "adapters" / "codex-remote.jsonl"
    _, by_name = cases(str(fixture))
    skipped = by_name["CA101 salience-inversion"].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == (
        "judged none of the 2 round(s): the first round has no earlier round to compare "
        "with (1 round); no work follows the compaction in its round: raw_ratio and "
        "reachable spans there measure what the compaction kept, not the loop (1 round)")
