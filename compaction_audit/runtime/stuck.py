"""Telling a child process that can never finish from one that is slow (issue 11, class
5, adv27 F3).

Under an address-space limit each trace is audited in a child of its own
(:mod:`compaction_audit.runtime.isolated`).  A failed allocation in Polars' Rust code normally
aborts that child, which the parent reports as out of memory; but when the allocation
fails while a thread is printing a panic, Rust's out-of-memory hook waits for the lock
that very printing holds, and the child deadlocks: every thread asleep on a lock,
forever, and the parent waited with no deadline (2 runs of 6 at ``ulimit -v 1100000`` on
a 2 MB trace never ended).

:class:`Watch` samples the child once a second, from ``/proc`` (Linux): it is *stuck*
when, for :data:`STUCK_SECONDS` in a row, it used no CPU time and every one of its
threads slept in a futex (a lock or condition variable) or an idle event loop
(``epoll``).  A child that reads a pipe, a FIFO, standard input or a socket sleeps
elsewhere (``pipe_read``, ``unix_stream_read_generic``, ``do_select``...), so waiting for
a slow producer or for one of its own helper processes is never taken for a deadlock;
nor is any child that uses CPU.  Where ``/proc`` cannot tell (another system, a thread
gone between two reads), the child is never called stuck.
"""

from __future__ import annotations

import os
import time

STUCK_SECONDS = 60.0
"""Seconds a child must have slept on locks only, without CPU time, to be stuck: an
audit of a local trace never waits that long on its own locks (its helper processes
answer through pipes), while a deadlock lasts forever."""

IDLE_WAITS = ("futex", "do_epoll_wait", "ep_poll")
"""Prefixes of the kernel functions (``/proc/PID/task/TID/wchan``) a thread sleeps in
when it waits for a lock, a condition or an idle event loop, not for input."""


def _cpu_ticks(pid: int) -> int | None:
    """User plus system clock ticks of process ``pid`` (all its threads); None when
    ``/proc`` cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return None


def _all_idle(pid: int) -> bool:
    """True when every thread of ``pid`` sleeps in one of :data:`IDLE_WAITS`."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
        for tid in tids:
            with open(f"/proc/{pid}/task/{tid}/wchan", "rb") as f:
                wait = f.read().decode("ascii", "replace")
            if not wait.startswith(IDLE_WAITS):
                return False
    except OSError:
        return False
    return bool(tids)


class Watch:
    """Samples child ``pid`` (:meth:`stuck`, called about once a second) and says when
    it has been stuck for :data:`STUCK_SECONDS` (see the module doc)."""

    def __init__(self, pid: int | None, seconds: float | None = None) -> None:
        self.pid = pid
        self.seconds = STUCK_SECONDS if seconds is None else seconds
        self._ticks: int | None = None
        self._since: float | None = None  # when the child was first seen idle

    def stuck(self) -> bool:
        """True when the child has slept on locks only, with no CPU time, for
        ``seconds`` up to now."""
        if self.pid is None:
            return False
        ticks, now = _cpu_ticks(self.pid), time.monotonic()
        idle = ticks is not None and ticks == self._ticks and _all_idle(self.pid)
        self._ticks = ticks
        if not idle:
            self._since = None
            return False
        if self._since is None:
            self._since = now
        return now - self._since >= self.seconds
