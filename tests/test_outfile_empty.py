"""``-o ''`` is a usage error in every command that writes a file (issue 11).

typer turned the empty value into ``Path('')``, which is ``.``: ``audit T -o ''`` (a
CI script's ``-o "$REPORT"`` with the variable unset) said ``.: is a directory``, a
name nobody typed, and each command failed its own way.  Now it is one line naming the
option, exit 2, before any work, with nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate_app import drift_records, run
from tests.logs import dump

MESSAGE = "compaction-audit: -o/--output: the path is empty; name a file to write\n"

COMMANDS = {  # every command with -o/--output, given what it needs but the output
    "audit": ["audit", "t.jsonl"],
    "diff": ["diff", "t.jsonl", "t.jsonl"],
    "baseline create": ["baseline", "create", "t.jsonl"],
    "convert": ["convert", "t.jsonl"],
    "simulate": ["simulate"],
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dump(drift_records(), tmp_path / "t.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("form", [["-o", ""], ["--output", ""], ["--output="]])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_empty_output_path_is_a_usage_error(workdir: Path, command: str,
                                               form: list[str]) -> None:
    before = sorted(os.listdir(workdir))
    result = run(*COMMANDS[command], *form)
    assert (result.exit_code, result.stderr, result.stdout) == (2, MESSAGE, "")
    assert sorted(os.listdir(workdir)) == before


def test_the_console_entry_prints_one_line(workdir: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "t.jsonl",
                           "-o", ""], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert (proc.returncode, proc.stderr, proc.stdout) == (2, MESSAGE, "")
