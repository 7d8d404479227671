"""Shared fixtures."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.logs import LogWriter, dump

# A suite started in the background by a non-interactive shell (``pytest &``, nohup)
# inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler, in
# this process or the programs it starts; the tests of Ctrl-C need it as a run in the
# foreground has it (usertest77: three of them failed only so)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def write_log(tmp_path: Path) -> LogWriter:
    """``write_log(records, name="t.jsonl")`` -> path of a new log in tmp_path."""

    def _write(records: list[Any], name: str = "t.jsonl") -> Path:
        return dump(records, tmp_path / name)

    return _write
