"""Files an adapter reads beside its input (Gemini CLI's telemetry.log, a Cline
messages file found by its sessionId) are opened only when they are regular files and
are read through the bounded line reader (issue 11, classes 4 and 6): a FIFO, a
device or a nesting bomb beside a recording must not hang or exhaust the audit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.foreign import FIXTURES

GEMINI = FIXTURES / "gemini-cli" / "compression.jsonl"
CLINE = FIXTURES / "cline" / "basic.compaction.json"


def audit(path: Path) -> subprocess.CompletedProcess[str]:
    """``audit -q path`` in a fresh interpreter; a hang fails the test at 60 s."""
    return subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-q", str(path)],
                          capture_output=True, text=True, timeout=60)


def gemini_beside(tmp_path: Path) -> Path:
    shutil.copy(GEMINI, tmp_path / "session.jsonl")
    return tmp_path / "session.jsonl"


def test_a_fifo_telemetry_log_is_not_opened(tmp_path: Path) -> None:
    session = gemini_beside(tmp_path)
    os.mkfifo(tmp_path / "telemetry.log")
    for given in (session, tmp_path):  # the file, and the folder as CI gives it
        done = audit(given)
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_telemetry_log_linked_to_a_device_is_not_read(tmp_path: Path) -> None:
    session = gemini_beside(tmp_path)
    (tmp_path / "telemetry.log").symlink_to("/dev/zero")
    done = audit(session)
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr


def test_a_nesting_bomb_in_telemetry_is_a_one_line_error(tmp_path: Path) -> None:
    session = gemini_beside(tmp_path)
    (tmp_path / "telemetry.log").write_text('{"a": ' + "[" * 200_000)
    done = audit(session)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "telemetry.log:1: a value is nested too deeply" in lines[0]


def test_a_fifo_messages_file_of_the_folder_is_not_opened(tmp_path: Path) -> None:
    # no <stem>.messages.json: the adapter looks for the session's messages file among
    # the folder's *.messages.json; a FIFO there is skipped, not waited on
    shutil.copy(CLINE, tmp_path / "basic.compaction.json")
    os.mkfifo(tmp_path / "a.messages.json")
    done = audit(tmp_path / "basic.compaction.json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
