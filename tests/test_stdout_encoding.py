"""A standard output that cannot encode the log's text shows it escaped, as standard
error does (adv22a F1: with ``PYTHONIOENCODING=cp1252``, what Python gives a Windows
runner's pipe, the text report, ``trace`` and ``diff`` ended with "internal error:
UnicodeEncodeError", exit 2, after part of the report)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.logs import SAMPLES

TIMEOUT = 120


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """The handwritten sample with a span text in Japanese."""
    lines = (SAMPLES / "handwritten.jsonl").read_bytes().splitlines()
    out = []
    for raw in lines:
        record = orjson.loads(raw)
        for span in record.get("spans") or ():
            if isinstance(span, dict) and "text" in span:
                span["text"] += " 日本語のメモ"
        out.append(orjson.dumps(record))
    path = tmp_path / "wide.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
@pytest.mark.parametrize("command", [("audit", "--all"), ("diff",)])
def test_text_the_stream_cannot_encode_is_escaped(wide: Path, encoding: str,
                                                  command: tuple[str, ...]) -> None:
    args = [command[0], str(wide), *([str(wide)] if command[0] == "diff" else []),
            *command[1:]]
    done = subprocess.run([sys.executable, "-m", "compaction_audit", *args],
                          env={**os.environ, "PYTHONIOENCODING": encoding},
                          capture_output=True, timeout=TIMEOUT, check=False)
    assert done.returncode in (0, 1), done.stderr
    assert b"internal error" not in done.stderr
    if command[0] == "audit":
        assert b"\\u" in done.stdout  # what it cannot encode, escaped
