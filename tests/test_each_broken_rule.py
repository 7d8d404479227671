"""A rule whose findings each name an act to undo (lost-rule-violated: a rule of the
person's broken by a call; negation-flipped: one stated reversed) has each finding as
an episode of its own in every format (usertest63 #4: the faithfulness sample's three
calls that broke three lost rules at round 2 were one SARIF result, JUnit failure and
GitHub annotation naming the first, "3 findings over rounds 2-2")."""

from __future__ import annotations

from pathlib import Path

import orjson

from compaction_audit.api import audit
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.github import _priority, render_github
from compaction_audit.report.json_report import render_json
from compaction_audit.report.junit import render_junit
from compaction_audit.report.model import Report
from compaction_audit.report.sarif import render_sarif
from compaction_audit.report.summary import episodes
from compaction_audit.rules.base import RULES, Finding, Severity
from tests.logs import SAMPLES

BROKEN = ("'ORD-5501' in a destructive command", "wrote 'Co-Authored-By'",
          "ran 'lint-tool analyze'")


def _finding(code: str, round_: int, severity: Severity = Severity.ERROR) -> Finding:
    return Finding(RULES[code].name, code, severity, round_, round_ + 1, f"{code} at {round_}",
                   "act")


def test_episodes_split_only_the_rules_that_are_not_episodic() -> None:
    found = [_finding("CA307", 2), _finding("CA307", 2), _finding("CA307", 3),
             _finding("CA301", 2), _finding("CA301", 2), _finding("CA301", 3),
             _finding("CA301", 5)]
    assert [(run[0].code, [f.round for f in run]) for run in episodes(found)] == [
        ("CA301", [2, 2, 3]), ("CA301", [5]),
        ("CA307", [2]), ("CA307", [2]), ("CA307", [3])]
    assert {c for c, r in RULES.items() if not r.episodic} == {"CA304", "CA307"}


def test_every_format_names_each_broken_rule() -> None:
    report = Report([audit(str(SAMPLES / "faithfulness.jsonl"))])
    opts = RenderOptions(single=True)
    sarif = orjson.loads(render_sarif(report, opts))
    said = [r["message"]["text"] for r in sarif["runs"][0]["results"]
            if r["ruleId"] == "CA307"]
    assert len(said) == 3
    assert all(sum(b in m for m in said) == 1 for b in BROKEN)
    assert not any("findings over" in m for m in said)
    junit = render_junit(report, opts).decode()
    github = render_github(report, opts).decode()
    doc = orjson.loads(render_json(report, single=True))
    listed = [e for e in doc["findings"] if e["code"] == "CA307"]
    assert [e["count"] for e in listed] == [1, 1, 1]
    for b in BROKEN:
        assert b in junit and b in github


def test_a_broken_rule_gets_an_annotation_slot_before_drift() -> None:
    drift, broken = [_finding("CA104", 1)], [_finding("CA307", 2)]
    assert _priority([drift, broken]) == [broken, drift]
    # severity first, and each rule's first episode before any rule's second
    warned = [_finding("CA307", 4, Severity.WARNING)]
    again = [_finding("CA307", 6)]
    assert _priority([drift, broken, warned, again]) == [broken, drift, again, warned]


def test_many_broken_rules_at_one_round_name_the_round_once(tmp_path: Path) -> None:
    """adv120 #6: twelve rules broken at round 2 are twelve episodes; their rounds read
    "round 2", not "rounds 2, 2, 2, ..." (text) or "round(s) 2, 2, 2, ..." (JUnit)."""
    from rich.console import Console

    from compaction_audit.report.terminal import report_renderable
    from tests.logs import dump, rnd, session

    flags = [f"--mode-{word}" for word in "abcdefghijkl"]
    rules = [{"id": f"u{i}", "tokens": 10, "source": "user",
              "text": f"Do NOT use {flag} when running the deploy tool."}
             for i, flag in enumerate(flags)]
    calls = [{"id": f"t{i}", "tokens": 10, "source": "tool_call:Bash",
              "text": f"deploy-tool run {flag}"} for i, flag in enumerate(flags)]
    ids = [r["id"] for r in rules]
    path = dump([session(), rnd(0, spans=rules),
                 rnd(1, summaries=[{"id": "c1", "tokens": 50, "children": ids,
                                    "text": "Worked on the deploy tool."}], evicted=ids),
                 rnd(2, spans=calls)], tmp_path / "t.jsonl")
    report = Report([audit(str(path))])
    assert sum(f.code == "CA307" for f in report.sessions[0].findings) == 12
    console = Console(record=True, width=200)
    console.print(report_renderable(report))
    text = console.export_text()
    assert "12 findings in 12 episodes, 1 round" in text
    assert "... 9 more episodes of CA307 (round 2) (--all)" in text
    junit = render_junit(report, RenderOptions(single=True)).decode()
    assert 'message="12 finding(s) of lost-rule-violated at round(s) 2"' in junit
