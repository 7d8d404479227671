"""Findings order per format: errors first where a person reads the order (text,
Markdown, SARIF), one fixed order for scripts in JSON (docs/ci.md, "Order")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.summary import worst_first
from compaction_audit.rules.base import Finding, Severity
from tests.logs import LogWriter, rnd

# rule codes in the opposite order of severities: CA104 warning, CA105 info, CA201 error
EXPECTED_BY_CODE = ["CA104", "CA105", "CA201"]
EXPECTED_WORST_FIRST = ["CA201", "CA104", "CA105"]


@pytest.fixture
def log(write_log: LogWriter) -> Path:
    """Round 1 folds s1 into m1 (no text) and evicts it: raw_ratio 10/50 = 0.2, so
    CA104 (warning) and CA105 (info) fire at round 1, CA201 (error: m1 has no leaf)
    at rounds 1 and 2, CA104 again at round 2 (11/51)."""
    return write_log([rnd(0, spans=[{"id": "s1", "tokens": 100}]),
                      rnd(1, summaries=[{"id": "m1", "tokens": 40, "children": ["s1"]}],
                          spans=[{"id": "s2", "tokens": 10}], evicted=["s1"]),
                      rnd(2, spans=[{"id": "s3", "tokens": 1}])])


def run(path: Path, fmt: str) -> str:
    result = CliRunner().invoke(app, ["audit", str(path), "-f", fmt, "--isolated"])
    assert result.exit_code == 1, result.output
    return result.output


def test_markdown_lists_errors_first(log: Path) -> None:
    out = run(log, "markdown").splitlines()
    rows = [row.split(" | ") for row in out if row.startswith(("| error", "| warning",
                                                               "| info"))]
    assert [(r[0], r[1].split()[0], r[2]) for r in rows] == [
        ("| error", "CA201", "1\u20132 (2 findings)"),
        ("| warning", "CA104", "1\u20132 (2 findings)"), ("| info", "CA105", "1")]
    actions = [line.split()[1].strip("*") for line in out if line.startswith("- **CA")]
    assert actions == EXPECTED_WORST_FIRST  # in the table's order


def test_sarif_lists_errors_first(log: Path) -> None:
    results = json.loads(run(log, "sarif"))["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("CA201", "error"), ("CA104", "warning"), ("CA105", "note")]


def test_sarif_lists_errors_first_across_traces(log: Path, write_log: LogWriter) -> None:
    # usertest32 #8: per trace only, a first trace's note came before a second's errors
    first = write_log([rnd(0, spans=[{"id": "s1", "tokens": 100}]),
                       rnd(1, summaries=[{"id": "m1", "tokens": 60, "children": ["s1"],
                                          "text": "s1"}], evicted=["s1"])], name="a.jsonl")
    result = CliRunner().invoke(app, ["audit", str(first), str(log), "-f", "sarif",
                                      "--isolated"])
    results = json.loads(result.output)["runs"][0]["results"]
    where = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].rsplit(
        "/", 1)[-1], r["ruleId"], r["level"]) for r in results]
    rank = {"error": 0, "warning": 1, "note": 2}
    assert [level for _, _, level in where] == sorted((lv for _, _, lv in where), key=rank.get)
    assert {name for name, _, level in where if level == "note"} == {"a.jsonl", log.name}
    # within a level, each trace's own order: the first trace's first
    assert next(name for name, _, level in where if level == "error") == "a.jsonl"


def test_text_lists_errors_first(log: Path) -> None:
    out = run(log, "text")
    heads = [line.split()[1] for line in out.splitlines()
             if line.startswith(("ERROR ", "WARNING ", "INFO "))]
    assert heads == EXPECTED_WORST_FIRST


def test_json_keeps_round_then_code(log: Path) -> None:
    doc = json.loads(run(log, "json"))
    assert [(f["code"], f["round"]) for f in doc["findings"]] == [
        ("CA104", 1), ("CA105", 1), ("CA201", 1)]
    every = json.loads(CliRunner().invoke(
        app, ["audit", str(log), "-f", "json", "--all", "--isolated"]).output)
    assert [(f["code"], f["round"]) for f in every["findings"]] == [
        ("CA104", 1), ("CA105", 1), ("CA201", 1), ("CA104", 2), ("CA201", 2)]
    # a severity override changes the severity, never the order
    lowered = json.loads(CliRunner().invoke(
        app, ["audit", str(log), "-f", "json", "--isolated",
              "--severity", "CA201=info"]).output)
    assert [f["code"] for f in lowered["findings"]] == EXPECTED_BY_CODE


def _finding(code: str, severity: Severity, round_: int) -> Finding:
    return Finding(rule=code.lower(), code=code, severity=severity, round=round_, line=1,
                   message="m", action="a")


def test_worst_first_is_stable_within_a_severity() -> None:
    runs = [[_finding("CA104", Severity.WARNING, 3)],
            [_finding("CA301", Severity.WARNING, 1), _finding("CA301", Severity.ERROR, 2)],
            [_finding("CA105", Severity.INFO, 0)],
            [_finding("CA201", Severity.ERROR, 5)]]
    # an episode counts at its worst finding; ties keep the order they came in
    assert [(r[0].code, r[0].round) for r in worst_first(runs)] == [
        ("CA301", 1), ("CA201", 5), ("CA104", 3), ("CA105", 0)]
