"""A child deadlocked on a failed allocation is stopped, not waited for forever (issue
11, class 5, adv27 F3): under ``ulimit -v`` a Polars thread that failed an allocation
while another printed a panic slept on a lock for ever, and the parent with it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from compaction_audit.runtime import addrspace, isolated, stuck

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _deadlock() -> None:
    """Sleep on a lock that is never released (what the deadlocked child does)."""
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()


def _watch(code: str, seconds: float, budget: float, **popen: object) -> float | None:
    """Start ``python -c code``; the seconds until :class:`stuck.Watch` says stuck, or
    None when it has not within ``budget``."""
    child = subprocess.Popen([sys.executable, "-c", code], **popen)  # type: ignore[call-overload]
    try:
        watch, start = stuck.Watch(child.pid, seconds), time.monotonic()
        while time.monotonic() - start < budget:
            if watch.stuck():
                return time.monotonic() - start
            time.sleep(0.25)
        return None
    finally:
        child.kill()
        child.wait()


def test_a_child_asleep_on_a_lock_is_stuck_after_the_window() -> None:
    took = _watch("import threading; l = threading.Lock(); l.acquire(); l.acquire()",
                  seconds=1.5, budget=10)
    assert took is not None and took >= 1.5


@pytest.mark.parametrize("code", [
    "import sys; sys.stdin.buffer.read()",  # a slow producer on a pipe
    "while True: pass",  # busy
    "import time; time.sleep(60)",  # a sleep, not a lock
])
def test_a_child_that_waits_for_input_or_works_is_never_stuck(code: str) -> None:
    assert _watch(code, seconds=1.0, budget=4, stdin=subprocess.PIPE) is None


def test_a_stuck_child_is_killed_and_is_the_trace_s_out_of_memory_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stuck, "STUCK_SECONDS", 2.0)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 30)
    start = time.monotonic()
    with pytest.raises(isolated.ChildDied) as caught:
        isolated.call_in_child(_deadlock)
    assert caught.value.stuck and time.monotonic() - start < 60
    assert isolated.ran_out(caught.value)
    assert str(isolated._died("t.jsonl", caught.value.code, caught.value.err, True)) == (
        "t.jsonl: out of memory: auditing this trace needs more than the address-space "
        "limit of 1,024 MiB (ulimit -v, RLIMIT_AS) (the process auditing it deadlocked on "
        "a failed allocation and was stopped)")


def test_a_child_reading_object_storage_is_not_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its network wait sleeps in an event loop, as a deadlocked child's idle threads
    do: a slow store must not be taken for a deadlock."""
    watched: list[int | None] = []

    class Recorder(stuck.Watch):
        def __init__(self, pid: int | None, seconds: float | None = None) -> None:
            watched.append(pid)
            super().__init__(pid, seconds)

    monkeypatch.setattr(stuck, "Watch", Recorder)
    assert isolated.call_in_child(int, "5", path="s3://bucket/t.jsonl") == 5
    assert isolated.call_in_child(int, "6", path="t.jsonl") == 6
    assert watched[0] is None and isinstance(watched[1], int)
