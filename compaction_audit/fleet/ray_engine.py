"""``audit --engine ray``: the traces of one run fanned out on a Ray cluster.

The driver (this process) lists nothing and reads nothing but standard input: it
sends each trace's path or URL to a long-lived worker (:class:`~compaction_audit.
fleet.worker.TraceAuditor`, a Ray actor with one CPU) that reads it where it runs,
from object storage or a file system every node sees, and returns the same per-trace
result the local pool returns (a :class:`SessionReport` or a :class:`LogError`).
Results are collected as they finish and put back in the order of the paths, so the
report, its formats and the exit code are those of a local run.

Scheduling (:func:`audit_on_ray`):

- workers: ``jobs`` (default: the cluster's CPUs), never more than the CPUs or the
  traces; each asks Ray for one CPU and the memory of its size class
  (:func:`size_class` of :func:`~compaction_audit.fleet.plan.memory_needed`), so Ray
  places it where that memory is free;
- traces go largest first; a worker takes the next trace while it has fewer than
  :data:`IN_FLIGHT` in hand (the round trip hides behind the work); once the largest
  trace left is of a smaller class than a worker's, the worker is retired when idle
  and replaced by one that asks for less, so memory held matches the traces left;
- a worker that dies (out of memory, a lost node) has its traces retried on a new
  worker; the trace it was auditing is retried once (a line on stderr says so), a
  second death makes it unreadable ("the Ray worker auditing it died"), counted like
  any unreadable trace (exit 2), and the run goes on; a trace only queued on it does
  not use up its attempt (:meth:`_Run._charged`); Ray's own message of the death is
  its first sentence on stderr, escaped, never on standard output
  (:func:`~compaction_audit.fleet.connect.cluster_messages_to_stderr`).

Errors that stop the run (:class:`UsageError`, one line, exit 2): Ray not installed,
an address that is not ``auto``, ``local``, ``HOST:PORT`` or ``ray://HOST:PORT``, a
cluster that cannot be reached or started within the connect timeout
(:mod:`~compaction_audit.fleet.connect`), workers that cannot start (the package
missing on a node) or run another version of compaction-audit, no worker started
within :data:`START_TIMEOUT` seconds, a cluster that stops answering during the run
(:func:`lost_cluster`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction_audit import __version__
from compaction_audit.errors import LogError, UsageError, of_trace
from compaction_audit.fleet.connect import (
    cluster_messages_to_stderr,
    connect_timeout,
    first_sentence,
    init_quietly,
    release,
    say_ray,
)
from compaction_audit.fleet.plan import (
    BASE_MEMORY,
    largest_first,
    local_size,
    memory_needed,
)
from compaction_audit.fleet.ray_temp import new_root, remove_root
from compaction_audit.fleet.worker import TraceAuditor, store_names
from compaction_audit.io.lines import reads_once
from compaction_audit.report.model import Report, SessionReport, settle_unread
from compaction_audit.rules.base import Rule, Severity
from compaction_audit.runtime.procs import available_cores
from compaction_audit.runtime.stopline import on_sigterm
from compaction_audit.settings import Settings

RAY_EXTRA = "pip install 'compaction-audit[ray]'"
"""What to run when Ray is missing."""

IN_FLIGHT = 2
"""Traces queued on one worker at a time."""

START_TIMEOUT = 300.0
"""Seconds to wait for the first worker to start before giving up (a cluster
without the free CPU and memory a worker asks for)."""

ATTEMPTS = 2
"""Times a trace is sent to a worker before its worker's death is its result."""

REFUNDS = 4
"""Deaths of a worker a trace queued on it may see without using up an attempt: a bound,
so that a trace whose death is put down to another (whose result had come but was not
read yet) still ends."""


def import_ray() -> Any:
    """The ``ray`` module; :class:`UsageError` naming the extra when it is missing."""
    try:
        import ray
    except ImportError:
        raise UsageError(f"--engine ray needs: {RAY_EXTRA}") from None
    return ray


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0].strip() or type(exc).__name__
    return text[:300]


def lost_cluster(exc: BaseException) -> str:
    """The one line of a run whose cluster stopped answering (``exc``: what Ray's
    client raised, an ``OSError`` "Connection reset by peer" when the local raylet
    died), in place of "internal error: OSError" and no report (adv27 F5)."""
    return (f"the Ray cluster stopped answering ({_first_line(exc)}); under a memory "
            "limit (ulimit -v) Ray's object store may not fit: raise it, or audit "
            "without --engine ray")


def connect(ray: Any, address: str | None) -> bool:
    """Connect this process to the cluster at ``address`` (anything ``ray.init``
    takes: ``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), or start a private local
    one (None: ``address="local"``, the CPUs this process may use, no dashboard, no
    usage statistics unless ``RAY_USAGE_STATS_ENABLED`` says otherwise).  When this
    process is connected already (a test, a notebook), that connection is used.
    Returns True when this call connected (the caller then disconnects).  Raises
    :class:`UsageError` (one line naming the address) for an address of another
    shape, and when the cluster cannot be reached or started within the connect
    timeout (:mod:`~compaction_audit.fleet.connect`: bounded, Ray's own stderr kept
    off the user's)."""
    cluster_messages_to_stderr()  # its driver's listener printed them on stdout
    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address is None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        _roots.append(new_root())  # its session folder, removed with the run
        kwargs = {"address": "local", "num_cpus": available_cores(),
                  "include_dashboard": False, "_temp_dir": _roots[-1], **quiet}
    else:
        kwargs = {"address": address, **quiet}
    try:
        with _private_cwd():
            init_quietly(lambda: ray.init(**kwargs), address, connect_timeout(), _first_line)
    except BaseException:  # no cluster to keep the folder for: the run is ending
        _remove_folders()
        raise
    return True


_folders: list[str] = []
"""The private folders :func:`_private_cwd` made, removed by :func:`_remove_folders`."""
_roots: list[str] = []
"""The session roots of local clusters this process started (:mod:`.ray_temp`),
removed by :func:`_remove_folders` with the processes still running from them."""


@contextlib.contextmanager
def _private_cwd() -> Iterator[None]:
    """Run the block (``ray.init``) with a new empty private folder as the working
    directory, then go back.  Ray puts the driver's working directory first on every
    worker's ``sys.path`` (``job_config._py_driver_sys_path``), and a local cluster's
    processes (and so its workers) start in it: from the checkout under review, a
    ``polars.py`` there ran as code in every worker (issue 11, class 7, adv10 F7).
    The folder stays while the cluster may use it (:func:`_remove_folders`)."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="compaction-audit-ray-")
    _folders.append(folder)
    try:  # by descriptor: back even when the folder was renamed meanwhile
        back: int | str = os.open(".", os.O_RDONLY)
    except OSError:  # a folder we may enter but not read
        back = os.getcwd()
    try:
        os.chdir(folder)
        yield
    finally:
        if isinstance(back, int):
            os.fchdir(back)
            os.close(back)
        else:
            os.chdir(back)


def _remove_folders() -> None:
    while _folders:
        with contextlib.suppress(OSError):
            os.rmdir(_folders.pop())
    while _roots:
        remove_root(_roots.pop())


@dataclass(eq=False)
class _Worker:
    handle: Any
    memory: int
    ready: bool = False
    inflight: list[int] = field(default_factory=list)  # trace indexes, in the order sent
    culprit: int | None = None  # the trace it was auditing when it died

    @property
    def busy(self) -> int:
        """Traces sent to it whose result is not read yet."""
        return len(self.inflight)


def size_class(need: int, largest_node: int = 0) -> int:
    """The memory a worker asks for to audit a trace that needs ``need`` bytes: the
    least :data:`~compaction_audit.fleet.plan.BASE_MEMORY` times a power of two that
    holds it, at most ``largest_node`` (bytes; 0: not known)."""
    size = BASE_MEMORY
    while size < need:
        size *= 2
    return min(size, largest_node) if largest_node > 0 else size


def audit_on_ray(paths: Sequence[str], settings: Settings | None = None,
                 lenient: bool = False, rules: list[Rule] | None = None,
                 severity: dict[str, Severity] | None = None, *, jobs: int | None = None,
                 progress: Any = None, address: str | None = None,
                 sizes: Mapping[str, int] | None = None) -> Report:
    """:func:`compaction_audit.api.audit_paths` on a Ray cluster (see the module
    docstring): the same :class:`Report`, sessions and errors in the order of
    ``paths``.  ``sizes``: bytes of traces already known (object listings); others
    are stat'ed (files) or asked for (one HEAD request per object URL).  Raises
    :class:`UsageError` as the module docstring says."""
    ray = import_ray()
    started = connect(ray, address)
    try:
        return _Run(ray, paths, (settings, lenient, rules, severity, _cwd(), store_names()),
                    jobs,
                    progress, _sizes(paths, sizes or {})).run()
    finally:
        if started:
            ray.shutdown()
            release()  # the thread that started the cluster may end now
            _remove_folders()


def _cwd() -> str | None:
    """This process's working directory (None when it is gone)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def _sizes(paths: Sequence[str], known: Mapping[str, int]) -> dict[str, int]:
    from compaction_audit.io.remote import is_url, object_size

    sizes = {}
    for path in paths:
        if path in known:
            sizes[path] = known[path]
        elif is_url(path):
            size = object_size(path)
            sizes[path] = -1 if size is None else size
        else:
            sizes[path] = local_size(path)
    return sizes


class _Run:
    """One fleet run: the queue of traces, the workers, the results."""

    def __init__(self, ray: Any, paths: Sequence[str], options: tuple[Any, ...],
                 jobs: int | None, progress: Any, sizes: dict[str, int]) -> None:
        self.ray, self.paths, self.options, self.progress = ray, paths, options, progress
        self.results: list[SessionReport | LogError | None] = [None] * len(paths)
        self.here = [i for i, p in enumerate(paths) if reads_once(p)]
        remote = [i for i in largest_first(paths, sizes) if not reads_once(paths[i])]
        self.left = len(remote)
        self.pending: deque[int] = deque(remote)
        self.needs = {i: memory_needed(paths[i], sizes[paths[i]]) for i in remote}
        self.attempts = dict.fromkeys(remote, 0)
        self.refunds = dict.fromkeys(remote, 0)  # deaths that did not count against it
        self.jobs = jobs
        self.workers: list[_Worker] = []
        self.waiting: dict[Any, tuple[_Worker, int | None]] = {}
        self.actor = ray.remote(TraceAuditor)
        self.largest_node = 0

    def run(self) -> Report:
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, on_sigterm)  # its line first: Ray turns
            # what a handler raised into a plain KeyboardInterrupt (adv16b F3)
        try:
            if self.pending:
                self._start_workers()
            for i in self.here:  # standard input, a FIFO: only this process can read it
                self._done(i, self._audit_here(self.paths[i]))
            self._loop()
        except (OSError, getattr(self.ray.exceptions, "RaySystemError", OSError)) as exc:
            raise UsageError(lost_cluster(exc)) from None
        finally:
            for worker in self.workers:
                self._kill(worker)
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        sessions = [r for r in self.results if isinstance(r, SessionReport)]
        errors = [of_trace(r, self.paths[i]) for i, r in enumerate(self.results)
                  if isinstance(r, LogError)]
        settle_unread(sessions)
        return Report(sessions, errors)

    def _audit_here(self, path: str) -> SessionReport | LogError:
        return TraceAuditor(*self.options).audit(0, path)[1]

    def _done(self, i: int, result: SessionReport | LogError) -> None:
        self.results[i] = result
        if self.progress is not None:
            self.progress(sum(r is not None for r in self.results), len(self.results),
                          self.paths[i])

    def _start_workers(self) -> None:
        ray = self.ray
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            raise UsageError("the Ray cluster has no CPU to run a worker on")
        self.largest_node = max((int(n["Resources"].get("memory", 0)) for n in ray.nodes()
                                 if n.get("Alive")), default=0)
        count = max(1, min(self.jobs or cpus, cpus, len(self.pending)))
        for _ in range(count):
            self._start(self._head_class())

    def _head_class(self) -> int:
        return size_class(self.needs[self.pending[0]], self.largest_node)

    def _start(self, memory: int) -> None:
        handle = self.actor.options(num_cpus=1, memory=memory, max_restarts=0).remote(
            *self.options)
        worker = _Worker(handle, memory)
        self.workers.append(worker)
        self.waiting[handle.ready.remote()] = (worker, None)

    def _kill(self, worker: Any) -> None:
        with contextlib.suppress(Exception):  # already dead, or the cluster is gone
            self.ray.kill(worker.handle)

    def _retire(self, worker: _Worker) -> None:
        self.workers.remove(worker)
        self._kill(worker)

    def _feed(self, worker: _Worker) -> None:
        """Give ``worker`` traces up to :data:`IN_FLIGHT`; replace it, once idle, by
        one of the class of the largest trace left when that differs from its own
        (smaller as the traces get smaller; larger for a trace retried after its
        worker died)."""
        while worker.ready and worker.busy < IN_FLIGHT and self.pending:
            head = self._head_class()
            if head != worker.memory:
                if worker.busy == 0:
                    self._retire(worker)
                    self._start(head)
                return
            i = self.pending.popleft()
            self.attempts[i] += 1
            self.waiting[worker.handle.audit.remote(i, self.paths[i])] = (worker, i)
            worker.inflight.append(i)

    def _loop(self) -> None:
        ray = self.ray
        stalled = 0.0
        while self.left:
            done, _ = ray.wait(list(self.waiting), num_returns=1, timeout=10.0)
            if not done:
                stalled += 10.0
                if stalled >= START_TIMEOUT and not any(w.ready for w in self.workers):
                    raise UsageError(f"no Ray worker started within {START_TIMEOUT:.0f} s: "
                                     "no node has a free CPU and the memory asked "
                                     f"({self.workers[0].memory} bytes)")
                continue
            stalled = 0.0
            ref = done[0]
            worker, index = self.waiting.pop(ref)
            if index is None:
                self._started(worker, ref)
            else:
                self._finished(worker, index, ref)
            if worker in self.workers:
                self._feed(worker)

    def _started(self, worker: _Worker, ref: Any) -> None:
        try:
            version, _pid = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            raise UsageError(f"a Ray worker could not start: {_first_line(exc)}") from None
        if version != __version__:
            raise UsageError(f"the Ray workers run compaction-audit {version}, this is "
                             f"{__version__}: install the same version on every node")
        worker.ready = True

    def _finished(self, worker: _Worker, index: int, ref: Any) -> None:
        ray = self.ray
        try:
            _, result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # a bug in the auditor: as a local run
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None
        except ray.exceptions.RayError as exc:  # the worker died: OOM, a lost node
            if not self._charged(worker, index):  # queued behind the trace it died on
                self.attempts[index] -= 1
            again = self.attempts[index] < ATTEMPTS
            if again:
                self.pending.appendleft(index)
                if index == worker.culprit:
                    say_ray(f"the worker auditing {self.paths[index]} died "
                            f"({first_sentence(str(exc))}); auditing it again on a new "
                            "worker")
            if worker in self.workers:
                self._retire(worker)
                if self.pending:
                    self._start(worker.memory)
            if again:  # a worker already started may be idle: the death came after
                for other in list(self.workers):
                    self._feed(other)
                if not self.workers:
                    self._start(self._head_class())
                return
            result = LogError(self.paths[index], 0,
                              "the Ray worker auditing it died: "
                              f"{first_sentence(str(exc)) or type(exc).__name__}")
        else:
            worker.inflight.remove(index)
        self.left -= 1
        self._done(index, result)

    def _charged(self, worker: _Worker, index: int) -> bool:
        """Whether ``worker``'s death counts against trace ``index``: it does for the
        trace the worker was auditing (the first of its traces still in flight when the
        first death is seen: an actor runs its calls in the order sent); a trace queued
        behind it is sent again without using up an attempt, :data:`REFUNDS` times at
        most (adv53: a healthy trace queued behind one that killed its worker twice was
        reported dead too)."""
        if worker.culprit is None and worker.inflight:
            worker.culprit = worker.inflight[0]
        if index in worker.inflight:
            worker.inflight.remove(index)
        if index == worker.culprit or self.refunds[index] >= REFUNDS:
            return True
        self.refunds[index] += 1
        return False
