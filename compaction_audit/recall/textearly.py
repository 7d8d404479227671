"""The text helper started by the ``audit`` command before the auditor's modules load
(issue 14, item 4).

On a large session the recall analysis shares its text work with a helper process
(:mod:`~compaction_audit.recall.textwork`); on a small one (the 2.8 MB Claude Code
transcript of ``benchmarks/startup.py``: 397 texts) a helper started then would not be
ready before the analysis.  The command starts it before its own imports instead
(:func:`compaction_audit.runtime.startup.text_early`), when it audits one local trace that
looks as if it carries texts: the helper's interpreter and its regular expressions
load on the other core while the command imports Polars and reads the log, and it waits
for the texts (:func:`take_early` hands it to
:class:`~compaction_audit.recall.textwork.TextJobs`, which splits the work with it as
with any helper).

It is started only when a core seems idle (:func:`idle_core`) and runs at a lower
priority (:data:`NICE`), so that it takes only CPU time nobody else wants: the command
never waits for it and does itself whatever the helper has not done when they meet.
Like the other helpers it starts with ``-P``
(:func:`compaction_audit.runtime.childproc.python_command`) and ``-S`` (no ``site``: it
imports only the standard library and the package's own folders, given as
arguments), and ends with the command (:func:`compaction_audit.runtime.childproc.prelude`).

Standard library only, with :mod:`~compaction_audit.recall.texthelper` (and so
:mod:`~compaction_audit.recall.extract` and :mod:`~compaction_audit.recall.survival`,
which the audit loads anyway).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess

from compaction_audit.recall import texthelper as th
from compaction_audit.runtime.childproc import in_worker_process, prelude, python_command

STEP = 64
"""Texts per chunk of a helper started for a large session (``textwork.STEP``)."""
EARLY_STEP = 16
"""Texts per chunk of the early helper (about 6 ms of work): on a small session the
two processes meet within a few hundred texts, and a chunk the helper has begun when
they meet is work thrown away."""
NICE = 10
"""How much the early helper lowers its priority (``os.nice``)."""

_early: list[subprocess.Popen[bytes]] = []


def command(parent: int, step: int, nice: int = 0) -> list[str]:
    """The command line of a text helper started by process ``parent`` (its pid),
    sending ``step`` texts at a time, its priority lowered by ``nice``."""
    recall = os.path.dirname(os.path.abspath(th.__file__))
    lower = (f"try:\n    _os.nice({int(nice)})\nexcept OSError:\n    pass\n"
             if nice else "")
    return [*python_command("-S"), "-c", prelude(parent) + lower + th.BOOT,
            os.path.dirname(recall), recall, str(int(step))]


def _cores() -> int:
    cores = getattr(os, "sched_getaffinity", None)
    try:
        return len(cores(0)) if cores is not None else os.cpu_count() or 1
    except OSError:
        return os.cpu_count() or 1


def wanted() -> bool:
    """True when a helper can work beside this process: POSIX pipes, a second CPU for
    this process, and not a worker process of ``audit_paths``."""
    return os.name == "posix" and _cores() >= 2 and not in_worker_process()


def idle_core() -> bool:
    """True when the machine seems to have a core to spare: a load average over the
    last minute of at most the cores this process may use, less one.  At a higher
    load a helper at a lower priority gets little CPU (on 2 cores at a load of 11 to
    15 it extracted 16 to 80 of 397 texts, the audit's wall time unchanged) and its
    start (about 50 ms of CPU) is lost."""
    try:
        return os.getloadavg()[0] <= _cores() - 1
    except (OSError, AttributeError):
        return True


def start_early() -> bool:
    """Start the early helper (module docstring) unless one is waiting already, or
    :func:`wanted` or :func:`idle_core` says no.  Never raises; returns True when it
    was started."""
    if _early or not wanted() or not idle_core():
        return False
    try:
        process = subprocess.Popen(command(os.getpid(), EARLY_STEP, NICE),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
    except (OSError, ValueError):
        return False
    _early.append(process)
    atexit.register(end, process)
    return True


def take_early() -> subprocess.Popen[bytes] | None:
    """The helper :func:`start_early` started, once (then None)."""
    return _early.pop() if _early else None


def end(process: subprocess.Popen[bytes]) -> None:
    """End a helper nobody took (idempotent): killed, waited for, its pipes closed."""
    if process.poll() is None:
        process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.close()
