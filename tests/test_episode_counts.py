"""Every format that groups findings into episodes says how many findings an episode
holds, as the verdict counts them (one per rule and round): ux5 F8, "2 info" in the
verdict beside one episode "rounds 3-4" and nothing that said 2."""

from __future__ import annotations

from pathlib import Path

from compaction_audit import api
from compaction_audit.report import github
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.markdown import render_markdown
from compaction_audit.rules.base import Finding, Severity
from tests.gate_app import drift_records
from tests.logs import dump

RUN = [Finding("compaction-drift", "CA104", Severity.WARNING, r, r + 1, "m", "a")
       for r in (4, 5)]


def test_github_title_says_the_findings_of_a_run_of_rounds() -> None:
    cmd = github._episode_command("t.jsonl", RUN)
    assert "title=CA104 compaction-drift (rounds 4-5%2C 2 findings)" in cmd


def test_markdown_rounds_cell_says_the_findings(tmp_path: Path) -> None:
    path = dump(drift_records(), tmp_path / "d.jsonl")
    report = api.audit_paths([str(path)])
    [s] = report.sessions
    # CA201 at rounds 1-4: four findings, the verdict's four errors
    assert [f.round for f in s.findings if f.code == "CA201"] == [1, 2, 3, 4]
    assert s.counts()["error"] == 4
    text = render_markdown(report, RenderOptions(single=True)).decode()
    [row] = [ln for ln in text.splitlines() if ln.startswith("| error | CA201 ")]
    assert "| 1\u20134 (4 findings) |" in row
