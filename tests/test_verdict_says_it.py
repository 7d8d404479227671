"""What the verdict says is on the screen: every format that groups findings into
episodes says how many findings an episode holds, as the verdict counts them (one per
rule and round: ux5 F8, "2 info" beside one episode "rounds 3-4" and nothing that said
2), and a verdict word that is not the exit gets the gate's line (ux5 F11)."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def _folder(tmp_path: Path) -> Path:
    """A folder of three traces: one that fails on an error (a.jsonl), one whose only
    compaction could not be checked (codex-remote: PASS, and a warning for the gate)
    and one cut inside its fourth line (z.jsonl, unreadable)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    dump(drift_records(), folder / "a.jsonl")
    remote = Path(__file__).parent / "fixtures" / "adapters" / "codex-remote.jsonl"
    (folder / "m-remote.jsonl").write_bytes(remote.read_bytes())
    whole = dump(drift_records(), tmp_path / "whole.jsonl").read_bytes()
    lines = whole.split(b"\n")
    (folder / "z.jsonl").write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:10])
    return folder


def test_the_summary_names_the_trace_the_gate_fails_and_the_unreadable_first(
        tmp_path: Path) -> None:
    # usertest23 #1, #6: under --fail-on warning a PASS row (a compaction not checked)
    # failed the run unnamed, and the unreadable trace came last with its path twice
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    folder = _folder(tmp_path)
    out = CliRunner().invoke(app, ["audit", str(folder), "--summary", "--fail-on", "warning",
                                   "--isolated"], env={"COLUMNS": "200"})
    assert out.exit_code == 2
    rows = [line for line in out.output.splitlines() if line.startswith("  ")]
    assert rows[0].split() == ["UNREADABLE", "line", "4:", "truncated", "last", "line:",
                               "unexpected", "end", "of", "data"]
    assert rows[1] == f"    {folder / 'z.jsonl'}"
    assert rows[2].split()[0] == "FAIL" and rows[3] == f"    {folder / 'a.jsonl'}"
    assert rows[4].endswith("(1 compaction could not be checked) (fails --fail-on warning)")
    assert rows[4].split()[0] == "PASS"
    default = CliRunner().invoke(app, ["audit", str(folder), "--summary", "--isolated"],
                                 env={"COLUMNS": "200"})
    assert "fails --fail-on" not in default.output  # the default gate passes it


def test_quiet_lines_of_several_traces_name_the_one_the_gate_fails(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    folder = _folder(tmp_path)
    (folder / "z.jsonl").unlink()
    out = CliRunner().invoke(app, ["audit", str(folder), "-q", "--fail-on", "warning",
                                   "--isolated"], env={"COLUMNS": "300"})
    assert out.exit_code == 1
    [remote] = [line for line in out.output.splitlines() if "m-remote" in line]
    assert remote.startswith(f"{folder / 'm-remote.jsonl'}: PASS (1 compaction could not")
    assert remote.endswith(" (fails --fail-on warning)")
    [failing] = [line for line in out.output.splitlines() if "a.jsonl:" in line]
    assert "--fail-on" not in failing  # FAIL says it


def test_markdown_heading_of_a_run_with_an_unreadable_trace_says_error(
        tmp_path: Path) -> None:
    # usertest23 #5: "FAIL (1 compaction could not be checked)" above an exit 2 whose
    # cause, the unreadable trace, the heading did not name
    report = api.audit_paths([str(p) for p in sorted(_folder(tmp_path).iterdir())])
    text = render_markdown(report, RenderOptions(fail_on="error")).decode()
    assert text.startswith("## compaction-audit: ERROR (1 unreadable; 1 failing --fail-on "
                           "error; 1 compaction could not be checked)\n")
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert "**UNREADABLE** line 4: truncated last line" in table[1]
    (tmp_path / "b").mkdir()
    ok = api.audit_paths([str(_folder(tmp_path / "b") / "m-remote.jsonl")])
    assert render_markdown(ok, RenderOptions(fail_on="error")).decode().startswith(
        "## compaction-audit: PASS (1 compaction could not be checked)\n")


def test_the_html_traces_table_notes_the_trace_the_gate_fails(tmp_path: Path) -> None:
    from compaction_audit.report.html.audit_page import traces_table

    report = api.audit_paths([str(p) for p in sorted(_folder(tmp_path).iterdir())])
    gated = traces_table(report, "warning")
    assert "(1 compaction could not be checked) (fails --fail-on warning)</td>" in gated
    assert "fails --fail-on" not in traces_table(report, "error")


def test_an_episode_is_led_by_the_worst_finding_of_its_first_and_last_rounds() -> None:
    # usertest24 #1: an ERROR episode opened with a fold that lost nothing (a warning)
    # and hid, at the same round, the fold that lost a "do NOT" rule
    from compaction_audit.report.bounded import episode_dict
    from compaction_audit.report.summary import ends, episodes

    def fold(round_: int, severity: Severity, message: str) -> Finding:
        return Finding("silent-discriminating-fold", "CA301", severity, round_, round_ + 1,
                       message, "a", {"fold": message})

    run = [fold(12, Severity.WARNING, "held all"), fold(12, Severity.ERROR, "lost do NOT"),
           fold(13, Severity.WARNING, "held too"), fold(13, Severity.ERROR, "lost 45000"),
           fold(13, Severity.ERROR, "lost more")]
    [episode] = list(episodes(run))
    first, last = ends(episode)
    assert (first.message, last.message) == ("lost do NOT", "lost 45000")
    doc = episode_dict(episode)
    assert (doc["message"], doc["last_message"], doc["severity"]) == (
        "lost do NOT", "lost 45000", "error")
    assert doc["values"] == {"fold": "lost do NOT"}
    same = [fold(4, Severity.WARNING, "w1"), fold(4, Severity.WARNING, "w2")]
    assert [f.message for f in ends(same)] == ["w1", "w1"]  # the earliest of equals


def test_the_html_traces_table_is_in_the_summary_s_order(tmp_path: Path) -> None:
    # usertest24 #3: FAIL rows came before the unreadable one, and the PASS row the
    # gate fails came last
    import re

    from compaction_audit.report.html.audit_page import traces_table

    folder = _folder(tmp_path)
    dump(drift_records()[:2], folder / "b-pass.jsonl")
    report = api.audit_paths([str(p) for p in sorted(folder.iterdir())])
    table = traces_table(report, "warning")
    verdicts = re.findall(r'<tr><td data-label="verdict" class="(\w+)">', table)
    names = re.findall(r"runs/([\w.-]+)", table)
    assert verdicts == ["UNREADABLE", "FAIL", "PASS", "PASS"]
    assert names == ["z.jsonl", "a.jsonl", "m-remote.jsonl", "b-pass.jsonl"]


@pytest.mark.parametrize("fmt", ["sarif", "junit", "github"])
def test_a_ci_file_is_written_for_one_unreadable_trace(tmp_path: Path, fmt: str) -> None:
    """usertest47 #2: ``audit broken.jsonl -f sarif -o x.sarif`` wrote no file (a CI
    upload step failed again on it), where a folder holding it wrote one."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    (tmp_path / "broken.jsonl").write_text("not json\n")
    out = tmp_path / f"r.{fmt}"
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "broken.jsonl"), "-f", fmt,
                                      "-o", str(out), "--fail-on", "never"])
    assert result.exit_code == 2
    assert "broken.jsonl:1: bad JSON" in result.output  # the error line, as before
    written = out.read_text()
    assert {"sarif": '"executionSuccessful": false', "junit": 'errors="1"',
            "github": "title=unreadable trace::"}[fmt] in written
    assert "broken.jsonl:1: bad JSON" in written
    text = CliRunner().invoke(app, ["audit", str(tmp_path / "broken.jsonl"), "-o",
                                    str(tmp_path / "r.txt")])
    assert text.exit_code == 2 and not (tmp_path / "r.txt").exists()  # text: the line
