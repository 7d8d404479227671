"""glibc's allocator set for a large audit (compaction_audit/runtime/malloctune.py, issue 14):
which traces it applies to, what it asks glibc for, once per process, and nothing
where glibc is not the C library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit.runtime import malloctune
from tests.logs import ROOT


class _FakeLibc:
    """``ctypes.CDLL(None)`` standing in for the C library: records ``mallopt`` calls."""

    def __init__(self, answer: int = 1) -> None:
        self.calls: list[tuple[int, int]] = []
        self.answer = answer

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return self.answer


@pytest.fixture
def fake_libc(monkeypatch: pytest.MonkeyPatch) -> _FakeLibc:
    import ctypes

    libc = _FakeLibc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    monkeypatch.setattr(malloctune, "_done", [])
    monkeypatch.setattr(malloctune.sys, "platform", "linux")
    monkeypatch.setattr(malloctune.os, "confstr",
                        lambda name: "glibc 2.36" if name == "CS_GNU_LIBC_VERSION" else None)
    return libc


def test_tune_asks_for_one_arena_and_a_fixed_threshold_once(fake_libc: _FakeLibc) -> None:
    assert malloctune.tune() is True
    # M_ARENA_MAX is -8 and M_MMAP_THRESHOLD -3 in glibc's malloc.h
    assert fake_libc.calls == [(-8, 1), (-3, 1048576)]
    assert malloctune.tune() is True  # once per process: no second call
    assert len(fake_libc.calls) == 2


def test_tune_reports_a_refused_setting(fake_libc: _FakeLibc) -> None:
    fake_libc.answer = 0  # mallopt returns 0 on error
    assert malloctune.tune() is False
    assert malloctune.tune() is False
    assert len(fake_libc.calls) == 2


def test_tune_does_nothing_without_glibc(fake_libc: _FakeLibc,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(malloctune.os, "confstr", lambda name: None)  # musl gives None
    assert malloctune.tune() is False
    monkeypatch.setattr(malloctune, "_done", [])
    monkeypatch.setattr(malloctune.sys, "platform", "darwin")
    assert malloctune.tune() is False
    assert fake_libc.calls == []


def test_tune_for_large_files_only(fake_libc: _FakeLibc, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(b"x" * 100)
    monkeypatch.setattr(malloctune, "LARGE_BYTES", 101)
    assert malloctune.tune_for(str(trace)) is False  # 100 bytes < 101
    assert malloctune.tune_for(str(tmp_path / "missing.jsonl")) is False
    assert malloctune.tune_for("-") is False  # standard input
    assert fake_libc.calls == []
    monkeypatch.setattr(malloctune, "LARGE_BYTES", 100)
    assert malloctune.tune_for(str(trace)) is True  # 100 bytes >= 100
    assert fake_libc.calls == [(-8, 1), (-3, 1048576)]


def test_the_audit_tunes_before_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit import api

    seen: list[str] = []
    monkeypatch.setattr(api, "tune_for", lambda path: seen.append(path) or False)
    monkeypatch.setattr(api, "load", lambda *a: (_ for _ in ()).throw(RuntimeError(seen)))
    path = str(ROOT / "sample_logs" / "handwritten.jsonl")
    with pytest.raises(RuntimeError):  # reading starts after the allocator is set
        api.audit(path)
    assert seen == [path]


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr(
    "CS_GNU_LIBC_VERSION"), reason="glibc only")
def test_glibc_takes_both_settings() -> None:
    # a fresh interpreter: the settings are process-wide and stay set
    code = "from compaction_audit.runtime import malloctune as m; print(m.tune(), m.tune())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         check=True, timeout=60)
    assert out.stdout.split() == ["True", "True"]
