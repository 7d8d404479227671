"""A ``--config`` or ``--baseline`` file the user may not read is one error line, exit 2,
like every other unreadable input (issue 11, F7): click's own readable check of a
``Path`` option printed a 4-line usage error (Usage / Try / blank / Error) instead.

Root may read anything, so the denial is simulated: ``os.access`` says no (what click
asked) and the open in :mod:`compaction_audit.smallfile` raises ``EACCES`` (what a
non-root user gets)."""

from __future__ import annotations

import builtins
import errno
import os
from pathlib import Path
from typing import Any

import pytest

import compaction_audit.smallfile as smallfile
from tests.gate_app import drift_records, run
from tests.logs import dump


@pytest.fixture
def denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``f``: a file in the working directory that cannot be read."""
    monkeypatch.chdir(tmp_path)
    dump(drift_records(), tmp_path / "t.jsonl")
    target = tmp_path / "f"
    target.write_text("")
    real_access, real_open = os.access, builtins.open
    real_target = str(target.resolve())

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if os.path.realpath(path) == real_target and mode & os.R_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    def open_(path: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(path, str | Path) and os.path.realpath(path) == real_target:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(smallfile, "open", open_, raising=False)
    return target


@pytest.mark.parametrize("command", [
    ["audit", "t.jsonl", "--config", "f"],
    ["audit", "t.jsonl", "--baseline", "f"],
    ["diff", "t.jsonl", "t.jsonl", "--config", "f"],
    ["baseline", "create", "t.jsonl", "-o", "b.json", "--config", "f"],
    ["config", "show", "--config", "f"],
])
def test_an_unreadable_option_file_is_one_line(denied: Path, command: list[str]) -> None:
    result = run(*command)
    label = "baseline 'f'" if "--baseline" in command else "f"
    assert (result.exit_code, result.stderr.splitlines()) == (
        2, [f"compaction-audit: {label}: cannot read: Permission denied"])
