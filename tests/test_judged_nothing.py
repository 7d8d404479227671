"""A selection none of whose rules can judge the trace is said in the verdict, never a
plain PASS (adv22a F2: ``select = ["CA204"]`` in a checkout's pyproject.toml, on a log
that records no salience, passed as if checked, while all rules fail it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gate_app import run
from tests.logs import SAMPLES

TRACE = str(SAMPLES / "handwritten.jsonl")  # no salience: CA204 judges no round


def test_a_selection_that_judges_nothing_is_said_in_the_verdict() -> None:
    quiet = run("audit", TRACE, "-q", "--select", "CA204")
    assert quiet.exit_code == 0
    assert quiet.output.startswith("PASS (no selected rule could judge this trace): 0 error(s)")
    doc = json.loads(run("audit", TRACE, "-f", "json", "--select", "CA204").output)
    assert doc["verdict"].startswith("PASS (no selected rule could judge this trace)")
    many = run("audit", TRACE, TRACE.replace("handwritten", "faithfulness"), "-q",
               "--select", "CA204", "--jobs", "1")
    assert many.output.splitlines()[-1].startswith(
        "exit 0: 2 trace(s), 0 reach --fail-on error, 2 no selected rule could judge")


@pytest.mark.parametrize("select", ["CA204,CA201", "CA301"])
def test_a_selection_with_a_rule_that_judges_is_a_plain_verdict(select: str) -> None:
    out = run("audit", TRACE, "-q", "--select", select).output
    assert "no selected rule could judge" not in out
    assert out.startswith(("PASS: ", "FAIL: ", "WARN: "))


def test_the_default_selection_judges(tmp_path: Path) -> None:
    assert "could judge" not in run("audit", TRACE, "-q").output


def test_sarif_says_it_too() -> None:
    """adv23 F6: SARIF was the one format with no word of it."""
    doc = json.loads(run("audit", TRACE, "-f", "sarif", "--select", "CA204").output)
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == ["no selected rule could judge this trace"]
    plain = json.loads(run("audit", TRACE, "-f", "sarif", "--select", "CA301").output)
    assert plain["runs"][0]["invocations"][0]["toolExecutionNotifications"] == []


def test_the_summary_row_says_it(tmp_path: Path) -> None:
    """adv25 N3: the summary table read PASS for the trace no selected rule could judge;
    only an unnamed count in the gate line said it."""
    one = tmp_path / "one.jsonl"
    one.write_text("".join(Path(TRACE).read_text().splitlines(keepends=True)[:2]))
    other = str(SAMPLES / "research-provenance.jsonl")
    text = run("audit", str(one), other, "--isolated", "--select", "CA301", "--summary",
               "--jobs", "1").output
    assert "0 info (no selected rule could judge it)" in text
    assert text.count("could judge it") == 1
    markdown = run("audit", str(one), other, "--isolated", "--select", "CA301", "-f",
                   "markdown", "--jobs", "1").output
    assert r"| **PASS** \(no selected rule could judge it\) |" in markdown
