"""Work in a process pool that outlives a worker killed from outside (adv30 F3).

A worker of :func:`~compaction_audit.runtime.procs.worker_pool` killed by the kernel (a
cgroup ``memory.max`` OOM kill of the largest process, what a CI container does when
no ``ulimit -v`` is set) or by a runner's reaper breaks the whole pool:
:class:`~concurrent.futures.process.BrokenProcessPool` fails every future not yet
done, and the run ended in ``internal error: BrokenProcessPool`` with no trace
reported.  :func:`run_pooled` instead:

* keeps every result that came back before the pool broke;
* audits again, each alone in a child of its own
  (:func:`compaction_audit.runtime.isolated.call_in_child`), the jobs a worker had started
  and not finished (at most one per worker: the killed worker's, and those of the
  workers the broken pool then terminated).  A job whose child ends without a result
  too is the culprit: ``died(i, ChildDied)`` gives its result (the trace's one line);
  one that now completes keeps its result (a kill from outside that was not its
  fault costs nothing);
* submits the jobs no worker had started to a new pool.

Which jobs a worker started is told by a byte per job in shared memory, set by the
worker before it calls the work (:func:`_tracked`): a future is "running" as soon as
it is queued for a worker, which may be one more than the workers.  A pool that
breaks with no job started (a worker killed while idle) is followed by a new pool at
most :data:`IDLE_BREAKS` times, then the jobs left are each done in a child of their
own, so the run always ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

IDLE_BREAKS = 2
"""Pools that may break with no job started before the jobs left are each done in a
child of their own (:func:`run_pooled`)."""

_started: Any = None
"""In a pool worker: the shared bytes of :func:`run_pooled`'s pool, one per job."""


def start_worker(parent: int, started: Any) -> None:
    """Pool initializer: :func:`~compaction_audit.runtime.procs.die_with_parent`, then keep
    ``started`` (the shared bytes :func:`_tracked` marks; None: none)."""
    from compaction_audit.runtime.procs import die_with_parent

    global _started
    die_with_parent(parent)
    _started = started


def _tracked(index: int, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    """``fn(*args)``, in a worker, after marking job ``index`` as started."""
    if _started is not None:
        _started[index] = 1
    return fn(*args)


def run_pooled(workers: int, fn: Callable[..., T], jobs: list[tuple[Any, ...]],
               done: Callable[[int, T], None], died: Callable[[int, Any], T],
               meanwhile: Callable[[], None] | None = None) -> None:
    """``done(i, fn(*jobs[i]))`` for each job ``i``, in this process as each completes
    (in any order), ``fn`` run in a :func:`~compaction_audit.runtime.procs.worker_pool` of
    ``workers`` processes (``fn`` a module-level function; arguments and results are
    pickled).  When the pool breaks (a worker killed), see the module docstring:
    ``died(i, exc)`` (``exc`` an :class:`~compaction_audit.runtime.isolated.ChildDied`, its
    exit status negative for a signal) is the result of a job whose child, started
    for it alone, ended without a result too.  ``meanwhile`` is called once, in this
    process, while the first pool runs (the traces a worker cannot open are read
    then).  Any other exception of a job is raised (the pool torn down first)."""
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    from compaction_audit.runtime import waits
    from compaction_audit.runtime.procs import submit_all, worker_pool

    left = list(range(len(jobs)))
    idle_breaks = 0
    if not left and meanwhile is not None:
        meanwhile()
    while left:
        started = get_context("spawn").RawArray("b", len(jobs))
        broken: list[int] = []
        with worker_pool(workers, started) as pool:
            submitted = submit_all(pool, _tracked, [(i, fn, jobs[i]) for i in left])
            futures = dict(zip(submitted, left, strict=True))
            if meanwhile is not None:
                meanwhile()
                meanwhile = None
            for future in waits.completed(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    broken.append(futures[future])
                    continue
                done(futures[future], result)
        broken.sort()
        suspects = [i for i in broken if started[i]]
        left = [i for i in broken if not started[i]]
        if broken and not suspects:
            idle_breaks += 1
            if idle_breaks > IDLE_BREAKS:
                suspects, left = left, []
        for i in suspects:
            done(i, _alone(fn, i, jobs[i], died))


def _alone(fn: Callable[..., T], index: int, args: tuple[Any, ...],
           died: Callable[[int, Any], T]) -> T:
    """``fn(*args)`` in a child of its own, or ``died(index, ChildDied)`` when it
    ends without a result."""
    from compaction_audit.runtime import isolated

    try:
        return isolated.call_in_child(fn, *args)
    except isolated.ChildDied as exc:
        return died(index, exc)
