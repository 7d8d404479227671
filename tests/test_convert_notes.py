"""``convert`` says what the adapter did not read on stderr, as ``audit`` does in its
report: a Cline messages file converted with two compaction files beside it converts
no compaction, and the user is told so. Before, stderr said only "converted ...: 5
rounds", and the note lay unread inside the output's session record."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.foreign import FIXTURES

CLINE = FIXTURES / "cline"  # our own synthetic session: one messages file, two compactions


def test_the_adapter_notes_are_said_on_stderr(tmp_path: Path) -> None:
    for name in ("session.messages.json", "basic.compaction.json", "agentic.compaction.json"):
        shutil.copy(CLINE / name, tmp_path / name)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "session.messages.json"),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("compaction-audit: converted ")
    session = orjson.loads(out.read_bytes().splitlines()[0])
    [note] = session["reader_notes"]
    assert lines[1:] == [f"compaction-audit: note: {note}"]
    assert note.startswith("2 compaction files of this session beside "
                           "session.messages.json are not read: agentic.compaction.json, "
                           "basic.compaction.json")


def test_a_log_read_whole_adds_no_line(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", str(FIXTURES / "codex-local.jsonl"),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert len(result.stderr.splitlines()) == 1
