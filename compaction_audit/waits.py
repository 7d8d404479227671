"""Waits of the main thread that a SIGINT or SIGTERM can always end at once.

The kernel hands a process-directed signal to any thread that does not block it: a
Ray thread, a process pool's manager thread, a listing thread of ours.  Python runs
its handler (:mod:`compaction_audit.stopline`) only in the main thread, and only when
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
    from collections.abc import Iterable, Iterator
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
