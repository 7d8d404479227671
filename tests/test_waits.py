"""compaction_audit/runtime/waits.py: a SIGTERM that the kernel gives to another thread still
stops the main thread's wait within a slice (issue 11, item 7)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from compaction_audit.runtime import waits

ROOT = Path(__file__).resolve().parent.parent

_PROGRAM = """
import signal, sys, threading, time
from concurrent.futures import Future
from compaction_audit.runtime import stopline, waits
stopline.announce_interrupts()
def other():  # the signal lands on this thread, not the main one
    time.sleep(0.5)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
    threading.Event().wait()
thread = threading.Thread(target=other, daemon=True)
thread.start()
try:
    {wait}
except KeyboardInterrupt:
    sys.exit(143)
sys.exit(0)
"""


@pytest.mark.parametrize("wait", [
    "waits.event(threading.Event(), 30.0)",
    "waits.join(thread, 30.0)",
    "list(waits.completed([Future()]))",
])
def test_a_signal_on_another_thread_ends_the_wait_within_a_slice(wait: str) -> None:
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-c", _PROGRAM.format(wait=wait)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stderr) == (143, "compaction-audit: terminated by signal 15\n")
    assert time.monotonic() - start < 20  # an unsliced wait: 30 s, or for ever


def test_the_waits_return_what_they_waited_for() -> None:
    flag = threading.Event()
    assert waits.event(flag, 0.0) is False
    flag.set()
    assert waits.event(flag, 5.0) is True
    first: Future[int] = Future()
    second: Future[int] = Future()
    second.set_result(2)
    threading.Timer(0.3, first.set_result, (1,)).start()
    assert [f.result() for f in waits.completed([first, second])] == [2, 1]
    thread = threading.Thread(target=time.sleep, args=(0.3,))
    thread.start()
    waits.join(thread, 5.0)
    assert not thread.is_alive()
    assert list(waits.completed([])) == []


def test_call_hands_over_a_result_an_error_or_gives_up() -> None:
    assert waits.call(lambda: 42, 5, "t") == (True, 42)
    with pytest.raises(KeyError, match="gone"):
        waits.call(lambda: {}["gone"], 5, "t")
    release = threading.Event()
    started = time.monotonic()
    assert waits.call(lambda: release.wait(30), 0.3, "t") == (False, None)
    assert time.monotonic() - started < 2  # left behind in its thread, not waited for
    release.set()
