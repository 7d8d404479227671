"""Waits of the main thread that a SIGINT or SIGTERM can always end at once.

The kernel hands a process-directed signal to any thread that does not block it: a
Ray thread, a process pool's manager thread, a listing thread of ours.  Python runs
its handler (:mod:`compaction_audit.runtime.stopline`) only in the main thread, and only when
that thread runs Python code again: a main thread blocked in one long wait (a
``join``, an event, a future) sleeps through the signal until the wait ends
(issue 11, item 7; a SIGTERM to ``--engine ray`` waited out its 60 s connect).  The
waits here sleep in slices of :data:`SLICE` seconds, so the handler runs within one
slice wherever the signal landed.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterable, Iterator
    from concurrent.futures import Future
    from typing import Any

SLICE = 0.25
"""Seconds of one slice of a wait: the longest delay of a signal's handler."""


def event(flag: threading.Event, seconds: float) -> bool:
    """Wait at most ``seconds`` for ``flag``; True when it is set."""
    deadline = time.monotonic() + seconds
    while not flag.is_set() and (left := deadline - time.monotonic()) > 0:
        flag.wait(min(left, SLICE))
    return flag.is_set()


def join(thread: threading.Thread, seconds: float) -> None:
    """Wait at most ``seconds`` for ``thread`` to end (``thread.join(seconds)``)."""
    deadline = time.monotonic() + seconds
    while thread.is_alive() and (left := deadline - time.monotonic()) > 0:
        thread.join(min(left, SLICE))


def completed(futures: Iterable[Future[Any]]) -> Iterator[Future[Any]]:
    """The ``futures`` as each completes (``concurrent.futures.as_completed``,
    without a time limit)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=SLICE, return_when=FIRST_COMPLETED)
        yield from done


def call(work: Callable[[], Any], seconds: float, name: str) -> tuple[bool, Any]:
    """``(True, work())`` when ``work`` returns within ``seconds``, run in a daemon
    thread named ``name`` and waited for in slices; re-raises what it raised;
    ``(False, None)`` when it is still running then (the thread is left behind,
    blocked in its call: give it nothing it must finish)."""
    import threading

    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the waiting thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    join(thread, seconds)
    if not outcome:
        return False, None
    ok, value = outcome[0]
    if not ok:
        raise value
    return True, value
