"""A round's ``line_file`` (adapter output: the file its line is in, beside the trace)
is a file name, never a path: a native log that names ``source_format`` may set it, and
the github and sarif formats join it to the trace's folder, so ``../../.github/
workflows/ci.yml`` or ``/etc/passwd`` put every annotation on a file of the
attacker's choosing (adv12).  Such a value is a bad record: one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app

SESSION = {"type": "session", "schema": "compaction-audit/1", "session_id": "lf",
           "budget_tokens": 1000, "source_format": "cline"}


def trace(tmp_path: Path, line_file: str) -> Path:
    rounds = [{"type": "round", "round": 0, "line_file": line_file,
               "spans": [{"id": "s1", "tokens": 10, "text": "port 8443"}]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [SESSION, *rounds]))
    return path


@pytest.mark.parametrize("name", ["../../.github/workflows/ci.yml", "/etc/passwd",
                                  "a/b.json", "..", "."])
def test_a_line_file_with_a_directory_is_refused(tmp_path: Path, name: str) -> None:
    path = trace(tmp_path, name)
    for fmt in ("github", "sarif"):
        result = CliRunner().invoke(app, ["audit", str(path), "-f", fmt])
        assert result.exit_code == 2, result.stdout
        assert ".github" not in result.stdout and "passwd" not in result.stdout
        assert result.stderr == (f"compaction-audit: {path}:2: a file name beside the "
                                 "trace, not a path (line_file)\n")


def test_a_plain_file_name_is_kept(tmp_path: Path) -> None:
    path = trace(tmp_path, "t.compaction.json")
    result = CliRunner().invoke(app, ["audit", str(path), "-f", "json"])
    assert result.exit_code in (0, 1), result.stderr
