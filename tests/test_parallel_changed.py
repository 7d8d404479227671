"""A large trace replaced or cut shorter while the helpers decode it (adv63): one line
naming the change, never rounds of two files or an internal error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import parallel


def test_a_file_renamed_over_the_trace_is_a_change(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(b'{"type": "round", "round": 0}\n')
    with trace.open("rb") as handle:
        opened = os.fstat(handle.fileno())
        parallel._unchanged(str(trace), opened)  # the same file: nothing to say
        other = tmp_path / "other.jsonl"
        other.write_bytes(b'{"type": "round", "round": 0}\n')
        other.replace(trace)
        with pytest.raises(LogError, match="the file changed while it was read"):
            parallel._unchanged(str(trace), opened)


def test_a_line_read_again_after_a_truncation_is_a_change(tmp_path: Path) -> None:
    line = b'{"type": "round", "round": 1}\n'
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(b"{}\n" + line)
    with trace.open("rb") as handle:
        opened = os.fstat(handle.fileno())
        assert parallel._again(handle, str(trace), 2, 3, len(line), opened) == {
            "type": "round", "round": 1}
        os.truncate(trace, 10)  # cut inside the line
        with pytest.raises(LogError) as cut:
            parallel._again(handle, str(trace), 2, 3, len(line), opened)
    assert (cut.value.line, cut.value.message) == (2, parallel.CHANGED)


def test_a_line_that_is_not_json_in_an_unchanged_file_says_so(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(b"{}\n{bad\n")
    with trace.open("rb") as handle, pytest.raises(LogError) as bad:
        parallel._again(handle, str(trace), 2, 3, 5, os.fstat(handle.fileno()))
    assert bad.value.line == 2 and bad.value.message.startswith("bad JSON")
