"""``convert --from F`` on a log of another format: exit 2, nothing written, and a
hint naming the format it looks like (issue 13, section 4)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"


def test_codex_rollout_read_as_claude_code_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", "--from", "claude-code",
                                      str(FIXTURES / "codex-local.jsonl"), "-o", str(out)])
    assert result.exit_code == 2
    assert not out.exists()
    assert result.stderr.count("\n") == 1
    assert ("no round found reading it as claude-code (it looks like codex: try --from "
            "codex): nothing written") in result.stderr


def test_an_existing_output_is_left_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("keep me\n")
    result = CliRunner().invoke(app, ["convert", "--from", "codex",
                                      str(FIXTURES / "claude-session.jsonl"), "-o", str(out)])
    assert result.exit_code == 2
    assert out.read_text() == "keep me\n"
    assert "it looks like claude-code: try --from claude-code" in result.stderr


def test_stdout_gets_nothing_and_the_right_format_still_converts(tmp_path: Path) -> None:
    wrong = CliRunner().invoke(app, ["convert", "--from", "claude-code", "-", "-o", "-"],
                               input=(FIXTURES / "codex-local.jsonl").read_bytes())
    assert wrong.exit_code == 2 and wrong.stdout == ""
    assert "-: no round found reading it as claude-code: nothing written" in wrong.stderr
    right = CliRunner().invoke(app, ["convert", "--from", "codex",
                                     str(FIXTURES / "codex-local.jsonl"), "-o", "-"])
    assert right.exit_code == 0 and right.stdout.count('"type":"round"') >= 1
