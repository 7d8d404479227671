"""A baseline is read in a child process under an address-space limit (issue 11,
class 5, adv25 N5): orjson faults (SIGSEGV) when it cannot allocate a decoded string,
and a valid 72 MB baseline under ``ulimit -v`` 1.4 GiB ended the command with no line
at all (exit 139); a larger one said "bad JSON: Not enough memory"."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit import baseline
from compaction_audit.api import audit_paths
from compaction_audit.errors import UsageError
from compaction_audit.runtime import addrspace, isolated
from tests.gate_app import drift_records
from tests.logs import dump


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    trace = dump(drift_records(), tmp_path / "a.jsonl")
    path = tmp_path / "baseline.json"
    path.write_bytes(baseline.dumps(baseline.entries(audit_paths([str(trace)], jobs=1))))
    return path


def test_under_a_limit_the_baseline_is_read_in_a_child(
        saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = baseline.load(saved)
    assert sorted((e.code, e.key, e.rounds) for e in here.values()) == [
        ("CA104", "episode:0", (4, 4)), ("CA105", "episode:0", (4, 4)),
        ("CA201", "episode:0", (1, 4))]  # the drift trace's three episodes
    calls: list[tuple[Any, ...]] = []
    real = isolated.call_in_child

    def spy(work: Any, *args: Any, path: str = "") -> Any:
        calls.append((work, args, path))
        return real(work, *args, path=path)

    monkeypatch.setattr(isolated, "call_in_child", spy)
    assert baseline.load(saved) == here and calls == []  # no limit: read here
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    assert baseline.load(saved) == here
    assert calls == [(baseline.file._load_or_error, (saved,), str(saved))]


@pytest.mark.parametrize(("code", "err", "message"), [
    (-signal.SIGSEGV, b"", "out of memory: reading it needs more than the address-space "
     "limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),
    (isolated.OUT_OF_MEMORY_EXIT, b"", "out of memory: reading it needs more than the "
     "address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),
    (3, b"", "the process reading it ended without a result (exit status 3)"),
])
def test_a_child_that_died_reading_the_baseline_is_one_line(
        saved: Path, code: int, err: bytes, message: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def died(*args: Any, **kwargs: Any) -> Any:
        raise isolated.ChildDied(code, err)

    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 30)
    monkeypatch.setattr(isolated, "call_in_child", died)
    with pytest.raises(UsageError) as caught:
        baseline.load(saved)
    assert str(caught.value) == f"baseline {str(saved)!r}: {message}"


def test_no_memory_to_parse_is_not_bad_json(saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def short(data: bytes) -> Any:
        raise orjson.JSONDecodeError(addrspace.ORJSON_OUT_OF_MEMORY, "", 0)

    monkeypatch.setattr(baseline.file.orjson, "loads", short)
    with pytest.raises(MemoryError):  # the child's out-of-memory exit, or the command's line
        baseline.load(saved)


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read: No such file or directory"),
    ("{bad", "bad JSON: unexpected character, expected a string key"),
    ("[]", "not a compaction-audit baseline (baseline_format 1 expected)"),
])
def test_under_a_limit_a_bad_baseline_says_why(
        tmp_path: Path, content: str | None, message: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """adv26 E1: the child's usage error was its death, "the process reading it ended
    without a result (exit status 1)", for a missing file, bad JSON, a directory..."""
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    with pytest.raises(UsageError) as caught:
        baseline.load(path)
    assert str(caught.value) == f"baseline {str(path)!r}: {message}"
