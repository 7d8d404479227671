"""Progress of a single large trace on a terminal (issue 13, section 2): bytes read of
the file and rounds done, then the phase after reading, as a rich progress bar on
stderr that is gone when the report prints.  Nothing when stderr is not a terminal
(CI, a pipe).

Rounds done come from the readers' process-wide count of applied rounds
(:mod:`compaction_audit.io.meter`: one addition per round, native logs and adapters
alike).  The bytes are measured from outside, on Linux, by the kernel's count of
bytes read (``rchar`` in ``/proc/PID/io``) of this process, or of its helper
processes while they decode the file (:mod:`compaction_audit.io.parallel`); a count
is capped at the file's size and is approximate (a helper's own start-up reads count
too).  Where ``/proc`` is not there, the bar shows the rounds and the elapsed time.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console

PROGRESS_MIN_BYTES = 16 << 20
"""A trace at least this large (bytes on disk) gets a progress bar: below it the run
takes about a second."""
POLL_SECONDS = 0.25


def _rchar(pid: int | str) -> int | None:
    """Bytes process ``pid`` has read (``rchar``), None when it cannot be known."""
    try:
        with open(f"/proc/{pid}/io", encoding="ascii") as fh:
            for row in fh:
                if row.startswith("rchar:"):
                    return int(row.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _children() -> list[str]:
    """The pids of this process's children (``/proc/self/task/*/children``)."""
    out: list[str] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as fh:
                out += fh.read().split()
        except OSError:
            continue
    return out


class ReadMeter:
    """Bytes of one file read so far by this process or its helpers, from the kernel's
    counters (see the module docstring); :meth:`read` is None where they are missing.
    Helpers are the child processes started after the meter; once they were seen and
    have all ended, the file counts as read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._base = _rchar("self")
        self._helpers: dict[str, int] = {}  # pid -> last rchar seen
        self._saw_helpers = False
        self._most = 0
        self._before = set(_children())  # not ours: started before the reading

    def read(self) -> int | None:
        """Bytes read so far, at most the file's size, never less than before; None
        when unknown."""
        if self._base is None:
            return None
        self._most = max(self._most, self._measure())
        return self._most

    def _measure(self) -> int:
        if self._most >= self.size:
            return self.size
        for pid in _children():
            if pid in self._before:
                continue
            got = _rchar(pid)
            if got is not None:
                self._helpers[pid] = got
                self._saw_helpers = True
        live = {pid for pid in self._helpers if os.path.exists(f"/proc/{pid}")}
        if self._saw_helpers:
            if not live:
                return self.size
            done = sum(self._helpers.values())
        else:
            now = _rchar("self")
            done = 0 if now is None or self._base is None else now - self._base
        return max(0, min(self.size, done))


def wanted(traces: list[str]) -> int | None:
    """The size of the one trace that gets a progress bar: a single regular file of at
    least :data:`PROGRESS_MIN_BYTES`, with stderr a terminal; else None."""
    if len(traces) != 1 or traces[0] == "-" or not sys.stderr.isatty():
        return None
    try:
        size = Path(traces[0]).stat().st_size
    except OSError:
        return None
    return size if size >= PROGRESS_MIN_BYTES else None


@contextmanager
def single_trace_progress(path: str, size: int, console: Console | None = None
                          ) -> Iterator[None]:
    """Show the bar while the block runs: "reading NAME" with bytes read of ``size``
    and the rounds read so far, then "running the rules" once the file is read;
    transient (erased at the end).
    ``console``: where to draw (default: stderr through the CI-command sink)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from compaction_audit.commands.common import NeutralWriter
    from compaction_audit.io.meter import rounds_applied
    from compaction_audit.report.safe import printable

    meter = ReadMeter(size)
    name = printable(os.path.basename(path), limit=60)
    # markup=False: the description holds a file name, untrusted text that rich would
    # otherwise read as markup ("[link=...]" an OSC 8 hyperlink, "[blink]"; issue 11)
    columns = [TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(),
               TextColumn("{task.fields[rounds]:,} rounds", markup=False),
               TimeElapsedColumn()]
    base = rounds_applied()
    stop = threading.Event()
    if console is None:
        from rich.console import Console

        console = Console(file=cast(IO[str], NeutralWriter(sys.stderr)), stderr=True)
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(f"reading {name}", total=size, rounds=0)

        def poll() -> None:
            while not stop.wait(POLL_SECONDS):
                rounds = rounds_applied() - base
                done = meter.read()
                if done is None:
                    bar.update(task, rounds=rounds)
                    continue
                description = f"reading {name}" if done < size else "running the rules"
                bar.update(task, completed=done, description=description, rounds=rounds)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
