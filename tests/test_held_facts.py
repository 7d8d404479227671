"""A fact a fold dropped that another span still holds is not lost (usertest21, adv70):
it does not weigh in the fold finding's severity, and a baseline or diff taken while
it was held does not match its later loss.

Each log: round 0 brings ``u`` (tool output, "Saw latency 45000 in the log."), ``t``
(a person's pin, numpy==1.26.4) and ``k`` (a person restating the pin, or not);
round 1 folds some of them into ``F``, whose text keeps none of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.api import audit
from tests.gate_app import run
from tests.logs import dump, rnd

PIN = "Pinned numpy==1.26.4 for the build."


def log(path: Path, folded: list[str], restated: bool = True) -> Path:
    return dump([
        rnd(0, spans=[{"id": "u", "tokens": 20, "source": "tool:shell",
                       "text": "Saw latency 45000 in the log."},
                      {"id": "t", "tokens": 20, "source": "user", "text": PIN},
                      {"id": "k", "tokens": 20, "source": "user",
                       "text": "numpy==1.26.4 stays pinned." if restated
                       else "numpy stays pinned."}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": folded,
                           "text": "Worked on the deploy."}], evicted=folded)], path)


def ca301(path: Path) -> list[tuple[str, Any]]:
    return [(f.severity.value, f.values.get("facts_lost")) for f in audit(str(path)).findings
            if f.code == "CA301"]


def test_a_held_fact_does_not_raise_the_severity(tmp_path: Path) -> None:
    """The pin is held by k: folding it with u loses only u's value from tool output,
    as folding u alone does; the held pin (typed by a person) made it an error."""
    assert ca301(log(tmp_path / "lowonly.jsonl", ["u"])) == [("warning", 1)]
    assert ca301(log(tmp_path / "mixed.jsonl", ["t", "u"])) == [("warning", 1)]
    # lost for real, the person's pin is an error
    assert ca301(log(tmp_path / "lost.jsonl", ["t", "u"], restated=False)) == [("error", 2)]


def test_a_fact_held_in_the_baseline_and_lost_now_is_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv70 #1: the baseline keyed the held pin as lost; once it was lost for real the
    finding matched the entry and the run passed, exit 0."""
    monkeypatch.chdir(tmp_path)
    log(tmp_path / "t.jsonl", ["t"])
    assert run("baseline", "create", "t.jsonl", "-o", "b.json", "--select", "CA301",
               "--jobs", "1").exit_code == 0
    [entry] = json.loads((tmp_path / "b.json").read_text())["findings"]
    assert entry["code"] == "CA301" and len(entry["facts"]) == 1
    log(tmp_path / "t.jsonl", ["t"], restated=False)
    after = run("audit", "t.jsonl", "--select", "CA301", "--baseline", "b.json", "-f",
                "json", "--jobs", "1")
    assert after.exit_code == 1
    doc = json.loads(after.stdout)
    assert [f["code"] for f in doc["findings"]] == ["CA301"]
    assert doc["baseline"]["grown"][0]["new"] == [
        {"kind": "version", "text": "numpy==1.26.4"}]


def test_diff_tells_a_held_fact_from_a_lost_one(tmp_path: Path) -> None:
    """usertest21 #2: diff keyed a held fact as lost:, so its loss later persisted."""
    from compaction_audit.diff import diff_reports

    before = audit(str(log(tmp_path / "a.jsonl", ["t"])))
    after = audit(str(log(tmp_path / "b.jsonl", ["t"], restated=False)))
    units = {(f.status, f.key) for f in diff_reports(before, after).findings
             if f.code == "CA301"}
    assert ("new", "lost:version:numpy==1.26.4") in units
    assert ("resolved", "held:version:numpy==1.26.4") in units
