"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.logs import LogWriter, dump


@pytest.fixture
def write_log(tmp_path: Path) -> LogWriter:
    """``write_log(records, name="t.jsonl")`` -> path of a new log in tmp_path."""

    def _write(records: list[Any], name: str = "t.jsonl") -> Path:
        return dump(records, tmp_path / name)

    return _write
