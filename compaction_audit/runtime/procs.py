"""Worker processes that never outlive the audit (issue 11, item 7).

:func:`worker_pool` is the process pool of :func:`compaction_audit.api.audit_paths`:

* at most :func:`available_cores` workers, whatever ``-j`` asks (40 workers on 2
  cores only compete for them and multiply the memory);
* SIGTERM (like SIGINT) in the main process stops the pool: the workers are
  terminated, the main process exits (143 for SIGTERM, 130 for SIGINT, via
  :class:`Terminated` and the CLI) instead of leaving them blocked forever;
* a worker killed from outside (an OOM kill) costs at most its trace, not the run
  (:mod:`compaction_audit.runtime.pooled`, adv30 F3);
* each worker dies with its parent, even one killed with SIGKILL: on Linux through
  ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, elsewhere through a thread that watches the
  parent's pid;
* Ctrl-C reaches the whole process group, workers included: :func:`submit_all` starts
  the workers with SIGINT blocked (a signal mask survives ``exec``), so one still
  starting up never prints a ``KeyboardInterrupt`` traceback; the parent handles it;
* workers (and multiprocessing's resource tracker) start with ``PYTHONSAFEPATH`` set
  (:func:`compaction_audit.runtime.childproc.safe_path_env`), so their ``python -c`` never
  imports a module from the current directory (issue 11, class 7, adv10 F1).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from compaction_audit.runtime.childproc import safe_path_env
from compaction_audit.runtime.cores import available_cores as available_cores  # re-exported
from compaction_audit.runtime.cores import cgroup_cpus as cgroup_cpus  # re-exported
from compaction_audit.runtime.stopline import Terminated as Terminated  # re-exported
from compaction_audit.runtime.stopline import on_sigterm

if TYPE_CHECKING:  # loaded by worker_pool: an audit of one trace starts no pool
    from concurrent.futures import Future, ProcessPoolExecutor

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when process ``parent`` ends, and leave
    Ctrl-C to the parent (which then ends the pool) instead of printing a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    unblock = getattr(signal, "pthread_sigmask", None)
    if unblock is not None:  # blocked by submit_all while this worker started
        unblock(signal.SIG_UNBLOCK, {signal.SIGTERM, *([signal.SIGHUP] if hasattr(
            signal, "SIGHUP") else [])})
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


_abandoned: list[bool] = []
"""Non-empty once a pool was torn down by an exception (see :func:`exit_process`)."""


def exit_process(code: int) -> NoReturn:
    """End the process with ``code``.  After a pool was torn down by Ctrl-C or SIGTERM,
    its helper threads may wait forever on a queue no killed worker will read (the
    interpreter joins them at exit: a hang under load), so the streams are flushed and
    the process ends at once (``os._exit``); otherwise a normal ``sys.exit``."""
    if _abandoned:
        from multiprocessing import util

        with contextlib.suppress(Exception):  # release the pool's semaphores (their
            util._run_finalizers(0)  # type: ignore[attr-defined]  # joins are at -5
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
    sys.exit(code)


@contextlib.contextmanager
def worker_pool(workers: int, started: Any = None) -> Iterator[ProcessPoolExecutor]:
    """A spawn-context :class:`ProcessPoolExecutor` of ``workers`` processes (capped at
    :func:`available_cores`) that is torn down on any exit from the block.  Each
    worker starts with :func:`compaction_audit.runtime.pooled.start_worker` (``started``: the
    shared bytes in which :func:`compaction_audit.runtime.pooled.run_pooled` is told which
    jobs a worker began, or None).

    Leaving normally waits for the workers as usual.  Leaving by an exception
    (Ctrl-C, SIGTERM turned into :class:`Terminated`, an error) cancels pending work
    and terminates the workers at once, then re-raises.  SIGTERM is handled only while
    the block runs, and only when this is the main thread.
    """
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    workers = max(1, min(workers, available_cores()))
    with safe_path_env():  # workers start while the block runs (at submit)
        from compaction_audit.runtime.pooled import start_worker

        pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"),
                                   initializer=start_worker, initargs=(os.getpid(), started))
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, on_sigterm)
        try:
            yield pool
            pool.shutdown(wait=True)  # in the try: Ctrl-C while waiting tears down too
        except BaseException:
            _abandoned.append(True)
            # the workers first: one still starting up reads its start data from a pipe
            # that the shutdown closes, and printed an EOFError traceback in between
            for pid in list(getattr(pool, "_processes", None) or {}):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            call_queue = getattr(pool, "_call_queue", None)
            if call_queue is not None:  # its feeder thread must not block the exit on
                call_queue.cancel_join_thread()  # a pipe no worker reads any more
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _stop_signals() -> tuple[int, ...]:
    """The signals that stop a run: SIGINT, SIGTERM and, unless ignored (``nohup``),
    SIGHUP, which the CLI handles as SIGTERM (:mod:`compaction_audit.runtime.stopline`): left
    unblocked, a SIGHUP cut a starting worker's start data short and the worker
    printed an ``EOFError`` traceback (CI under load)."""
    hangup = getattr(signal, "SIGHUP", None)
    keep = hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN
    return (signal.SIGINT, signal.SIGTERM, *((hangup,) if keep else ()))


def submit_all(pool: ProcessPoolExecutor, fn: Callable[..., T],
               jobs: list[tuple[Any, ...]]) -> list[Future[T]]:
    """``pool.submit(fn, *args)`` for each ``args`` of ``jobs``, in order, with SIGINT
    and SIGTERM blocked meanwhile (where the platform has signal masks), so that the
    workers the submissions start inherit SIGINT blocked, and a SIGTERM cannot cut
    this process short while it writes a starting worker's start data (the worker then
    printed an ``EOFError`` traceback; :func:`die_with_parent` unblocks SIGTERM in
    the worker).  A signal that arrives meanwhile is delivered to this process when
    the mask is restored.

    The mask holds for this thread only: a signal sent to the process can land on
    another thread (the embedding model's loader, the pool's manager), and Python then
    runs the handler in the main thread anyway, between two bytecodes of a worker's
    start.  So the main thread's Python handlers are deferred too: a SIGINT or SIGTERM
    arriving meanwhile is recorded and raised again once the submissions are done."""
    block = getattr(signal, "pthread_sigmask", None)
    stops = _stop_signals()
    old = block(signal.SIG_BLOCK, set(stops)) if block is not None else None
    pending: list[int] = []
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in stops:
            handlers[sig] = signal.signal(sig, lambda n, _f: pending.append(n))
    try:
        return [pool.submit(fn, *args) for args in jobs]
    finally:
        if block is not None and old is not None:
            block(signal.SIG_SETMASK, old)
        for num, handler in handlers.items():
            signal.signal(num, handler)
        for n in dict.fromkeys(pending):
            signal.raise_signal(n)
