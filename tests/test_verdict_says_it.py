"""What the verdict says is on the screen: every format that groups findings into
episodes says how many findings an episode holds, as the verdict counts them (one per
rule and round: ux5 F8, "2 info" beside one episode "rounds 3-4" and nothing that said
2), and a verdict word that is not the exit gets the gate's line (ux5 F11)."""

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
    # the gate's line (our words) unescaped, as a CI log shows it (ux5 F11)
    assert text.splitlines()[2] == "exit 1: 1 trace(s), 1 reach --fail-on error"


def test_a_verdict_word_that_is_not_the_exit_gets_the_gate_line(tmp_path: Path) -> None:
    # ux5 F11: "-q --fail-on never" printed FAIL and exited 0 with nothing more
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    path = str(dump(drift_records(), tmp_path / "d.jsonl"))  # FAIL: 4 errors
    runner = CliRunner()
    quiet = runner.invoke(app, ["audit", path, "-q", "--fail-on", "never", "--isolated"])
    assert quiet.exit_code == 0
    assert quiet.output.splitlines() == [
        "FAIL: 4 error(s), 1 warning(s), 1 info",
        "exit 0: 1 trace(s), 0 reach --fail-on never"]
    full = runner.invoke(app, ["audit", path, "--fail-on", "never", "--isolated"],
                         env={"COLUMNS": "200"})
    assert full.output.splitlines()[-1] == "exit 0: 1 trace(s), 0 reach --fail-on never"
    # where the word says the exit, one line as before
    plain = runner.invoke(app, ["audit", path, "-q", "--isolated"])
    assert plain.exit_code == 1 and len(plain.output.splitlines()) == 1
