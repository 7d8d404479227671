"""Under an address-space limit, each trace is audited in a process of its own.

Polars allocates through jemalloc, which aborts the process when an allocation fails
(exit 134, a Rust backtrace); no handler can catch that (:mod:`compaction_audit.runtime.addrspace`).
The checks there refuse a trace whose estimate is over the limit, but an estimate is
measured on the shapes known, and one process keeps what earlier traces took: two
copies of a trace that passes alone, audited one after the other (``-j 1``, ``diff``),
aborted on the second (adv19b F5), and a text-rich chain of folds passed both checks
and aborted (adv19b F4).  So under a limit (``ulimit -v``, ``RLIMIT_AS``) each trace is
audited in a spawned child with the whole limit to itself; a child that dies (an
abort, a kill by the kernel) is that trace's one-line "out of memory" error, exit 2,
and the other traces are still audited.  The child's standard error goes to a file
of ours, unlinked as it is made: the Rust runtime's "memory allocation of N bytes
failed" and its backtrace are not passed on; anything else the child wrote is, after
it ends.

Without a limit nothing changes: the traces are audited in this process (or the pool
of ``-j``).  Under a limit standard input, FIFOs and ``/dev/fd`` paths are audited in
a child too (adv22b F4: orjson, failing to allocate a decoded string, ended the
command with SIGSEGV and no line at all): the child is given this process's standard
input as its own, and the descriptor a ``/dev/fd/N`` or ``/proc/self/fd/N`` path
names as the same number, so it reads them as this process would have, once
(:func:`~compaction_audit.io.lines.reads_once`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import tempfile
from typing import TYPE_CHECKING, Any, TypeVar

from compaction_audit.errors import LogError
from compaction_audit.runtime import addrspace

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection

    from compaction_audit.report.model import SessionReport

T = TypeVar("T")

OUT_OF_MEMORY_EXIT = 71
"""The exit status of a child whose work ran out of memory in Python (a MemoryError,
or pyo3's panic after one: :func:`addrspace.ran_out`)."""

_RUST_ALLOC = b"memory allocation of "
"""How the line the Rust runtime prints before it aborts on a failed allocation starts."""
_PYTHON_OUT_OF_MEMORY = (b"MemoryError", b"SystemError: " + addrspace.NO_EXCEPTION_SET.encode())
"""How the last line of a Python traceback that means out of memory starts
(:func:`addrspace.ran_out`)."""
_NULL_OBJECT = addrspace.NULL_OBJECT_PANIC.encode()
MAX_CHILD_STDERR = 64 * 1024
"""Most bytes of a child's standard error read back and passed on (the first ones); the
rest is left out with a line that says how many bytes were."""


def wanted(path: str) -> bool:
    """True when ``path`` should be audited in a child: an address-space (or data)
    limit is set (:func:`addrspace.address_space_limit`)."""
    return addrspace.address_space_limit() is not None


_FD_PATH = re.compile(r"/(?:dev|proc/(?:self|thread-self|(?P<pid>\d+)(?:/task/\d+)?))"
                      r"/fd/(?P<fd>\d+)")
"""A name of a process's descriptor by number: ``/dev/fd/N``, ``/proc/self/fd/N``,
``/proc/thread-self/fd/N``, ``/proc/PID/fd/N``, ``/proc/PID/task/TID/fd/N``."""


class _Fd:
    """A descriptor of this process handed to the spawned child under the same number
    (multiprocessing's ``DupFd``, resolved while the child's arguments are written)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, ...]:
        from multiprocessing.reduction import DupFd

        return (_fd_number, (DupFd(self.fd),))


def _fd_number(dup: Any) -> int:
    return int(dup.detach())


def handed_over(fd: int) -> Any:
    """Descriptor ``fd`` of this process as an argument of :func:`call_in_child`: the
    child gets a duplicate (an ``int``), the same open file (its offset shared)."""
    return _Fd(fd)


def _inherited(path: str) -> tuple[_Fd | None, _Fd | None]:
    """This process's standard input (a duplicate) and, for a path that is or links to
    ``/dev/fd/N`` (``/proc/self/fd/N``, ``/proc/thread-self/fd/N``), descriptor N, to
    hand to the child that audits ``path``; None where there is none."""
    stdin = None
    with contextlib.suppress(OSError, ValueError):
        stdin = _Fd(os.dup(0))
    from compaction_audit.io.lines import special_name

    fd = -1
    for name in (path, special_name(path) or ""):  # a link to /dev/fd/5, or to
        named = _FD_PATH.fullmatch(name)  # /proc/thread-self/fd/5: its descriptor too
        if named and named.group("pid") in (None, str(os.getpid())):  # (adv23 F2)
            fd = int(named.group("fd"))
            break
    return stdin, (_Fd(fd) if fd > 2 and _is_open(fd) else None)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _child(send: Connection, err: int, parent: int, stdin: int | None,
           work: Callable[..., Any], args: tuple[Any, ...], named: int | None = None) -> None:
    """The child's work: ``work(*args)`` sent back on ``send``, with its standard error
    to descriptor ``err`` (a file already unlinked), dying with ``parent``; ``stdin``:
    the parent's standard input to read as its own; ``named``: the descriptor a
    ``/dev/fd/N`` path names, open under that number (nothing to do with it here)."""
    from compaction_audit.runtime.procs import die_with_parent

    die_with_parent(parent)
    os.dup2(err, 2)
    os.close(err)
    if stdin is not None:  # the parent's standard input, closed by multiprocessing's start
        os.dup2(stdin, 0)
        os.close(stdin)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own, kept open
    try:
        result = work(*args)
    except BaseException as exc:
        if addrspace.ran_out(exc):  # rendering: no handler of its own (adv23 F7)
            os._exit(OUT_OF_MEMORY_EXIT)
        raise
    send.send(result)
    send.close()


class ChildDied(Exception):
    """The child ended without a result: ``code`` its exit status (negative: the
    signal), ``err`` the first bytes it wrote on standard error; ``stuck``: it was
    killed because it had deadlocked (:mod:`compaction_audit.runtime.stuck`)."""

    def __init__(self, code: int | None, err: bytes, stuck: bool = False) -> None:
        super().__init__(f"exit status {code}")
        self.code, self.err, self.stuck = code, err, stuck


def _wait(recv: Connection, proc: Any, watch: bool = True
          ) -> tuple[tuple[Any] | None, bool]:
    """The child's result (a 1-tuple; None when it ended without one) and whether it
    was killed for being stuck: a deadlocked child (a failed allocation while a thread
    prints a panic waits forever for the lock the printing holds) is killed once
    :class:`~compaction_audit.runtime.stuck.Watch` says so, instead of being waited for
    forever (adv27 F3: 2 runs of 6 at ``ulimit -v 1100000`` never ended).  Not for a
    child reading object storage (``watch`` False): its network wait sleeps in an
    event loop, as a deadlocked child's idle threads do."""
    from compaction_audit.runtime.stuck import Watch

    watcher = Watch(proc.pid if watch else None)
    while not recv.poll(1.0):
        if watcher.stuck():
            proc.kill()
            return None, True
    try:
        return (recv.recv(),), False
    except EOFError:
        return None, False


def call_in_child(work: Callable[..., T], *args: Any, path: str = "") -> T:
    """``work(*args)`` run in a spawned child process and its result (``work`` a
    module-level function; its arguments and result are pickled).  ``path``: a trace
    the child reads (its standard input, the descriptor a ``/dev/fd/N`` path names are
    handed over).  What the child wrote on standard error is passed on
    (:func:`_pass_on`).  Raises :class:`ChildDied` when the child ends without a
    result; an exception here (Ctrl-C, SIGTERM as
    :class:`~compaction_audit.runtime.stopline.Terminated`) kills the child first."""
    from multiprocessing import get_context

    from compaction_audit.runtime.childproc import safe_path_env

    ctx = get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    errors = tempfile.TemporaryFile(prefix="compaction-audit-child-")  # noqa: SIM115
    # unlinked as it is made: a command killed with SIGKILL leaves no file (adv22b F6)
    stdin, named = _inherited(path)
    proc = ctx.Process(target=_child, args=(send, _Fd(errors.fileno()), os.getpid(), stdin,
                                            work, args, named), daemon=True)
    try:
        block = getattr(signal, "pthread_sigmask", None)  # the child starts with
        old = block(signal.SIG_BLOCK, {signal.SIGINT}) if block else None  # Ctrl-C ours
        try:
            with safe_path_env():
                proc.start()
        finally:
            if block is not None and old is not None:
                block(signal.SIG_SETMASK, old)
        send.close()
        result, stuck = _wait(recv, proc, watch="://" not in path)
        proc.join()
        errors.seek(0)
        err = errors.read(MAX_CHILD_STDERR)
        left_out = os.fstat(errors.fileno()).st_size - len(err)
    except BaseException:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            proc.kill()
        raise
    finally:
        recv.close()
        if stdin is not None:
            os.close(stdin.fd)
        errors.close()
    if result is None:
        raise ChildDied(proc.exitcode, err, stuck)
    if err:
        _pass_on(err, left_out)
    value: T = result[0]
    return value


def audit_in_child(path: str, *args: Any) -> SessionReport | LogError:
    """``api.audit_or_error(path, *args)`` run in a spawned child process
    (:func:`call_in_child`).  A child that ends without a result is
    :func:`addrspace.out_of_memory` for ``path`` when it aborted (SIGABRT), was killed
    (SIGKILL, the kernel's OOM killer) or faulted (SIGSEGV: orjson's unchecked
    allocation of a decoded string, adv22b F4), else a :class:`LogError` giving its
    exit status."""
    from compaction_audit.api import audit_or_error

    try:
        return call_in_child(audit_or_error, path, *args, path=path)
    except ChildDied as died:
        return _died(path, died.code, died.err, died.stuck)


def render_in_child(render: Callable[..., bytes], *args: Any) -> bytes:
    """``render(*args)`` (a report format's bytes) in a spawned child under a limit
    (:func:`wanted`), else here.  Raises ``MemoryError`` when the child ended without
    them (the command's out of memory line): orjson 3.13 faults on a failed
    allocation, and the JSON report of four 0.7 MB traces with ``--all`` under
    ``ulimit -v`` ended the command with SIGSEGV and no line (adv22b F10)."""
    if addrspace.address_space_limit() is None:
        return render(*args)
    try:
        return call_in_child(render, *args)
    except ChildDied as died:
        if ran_out(died):
            raise MemoryError from None
        raise RuntimeError(f"the process rendering the report ended without it "
                           f"({died})") from None


def _pass_on(err: bytes, left_out: int) -> None:
    """Write what a child wrote on standard error (``err``, its first bytes) to ours,
    each line made printable (:func:`~compaction_audit.report.safe.printable`: control
    characters shown, at most 1,024 characters) and neutralized for CI runners, then
    one line for the ``left_out`` bytes past :data:`MAX_CHILD_STDERR`.  The child can
    echo log text (a library's warning quoting a value), so it is output like any."""
    from compaction_audit.report.safe import neutralize, printable

    lines = [neutralize(printable(line)) for line in
             err.decode("utf-8", "replace").splitlines()]
    if left_out > 0:
        lines.append(f"compaction-audit: {left_out:,} more byte(s) of the child's "
                     f"standard error left out")
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write("".join(line + "\n" for line in lines))
        sys.stderr.flush()


def ran_out(died: ChildDied) -> bool:
    """Whether the child that ended without a result (``died``) ran out of memory (or
    deadlocked on a failed allocation: ``stuck``)."""
    return died.stuck or _ran_out(died.code, died.err)


def _ran_out(code: int | None, err: bytes) -> bool:
    """Whether a child that ended with status ``code``, having written ``err``, ran
    out of memory: it aborted, was killed or faulted, or Rust said so, or the last
    line of a Python traceback does (:data:`_PYTHON_OUT_OF_MEMORY`: the child ran out
    while it started, importing the work's module, before its handler: adv24 F3)."""
    lines = err.splitlines()
    rust_abort = any(line.startswith(_RUST_ALLOC) for line in lines)
    python = bool(lines) and lines[-1].startswith(_PYTHON_OUT_OF_MEMORY)
    # pyo3's panic on a NULL object its failed allocation left (adv18 F1), raised in
    # a thread of Polars where no handler of ours runs: the child then exits 1 (adv27 F3)
    null_object = any(_NULL_OBJECT in line for line in lines)
    return code in (-signal.SIGABRT, -signal.SIGKILL, -signal.SIGSEGV, 134, 137, 139,
                    OUT_OF_MEMORY_EXIT) or rust_abort or python or null_object


def killed(path: str, died: ChildDied) -> LogError:
    """The one line of a trace whose pool worker was killed and whose child, auditing
    it again alone, ended without a result too (:func:`compaction_audit.runtime.pooled.
    run_pooled`; adv30 F3): killed by a signal, ``FILE: the process auditing this
    trace was killed (signal 9, SIGKILL); out of memory?`` (the kernel's OOM killer
    sends SIGKILL: a cgroup ``memory.max`` in a CI container), else :func:`_died`'s."""
    code = died.code
    if died.stuck or code is None or code >= 0:
        return _died(path, code, died.err, died.stuck)
    try:
        name = f", {signal.Signals(-code).name}"
    except ValueError:
        name = ""
    guess = "; out of memory?" if -code == signal.SIGKILL else ""
    return LogError(path, 0, f"the process auditing this trace was killed "
                    f"(signal {-code}{name}){guess}")


def _died(path: str, code: int | None, err: bytes, stuck: bool = False) -> LogError:
    """The one line of a child that ended without a result (exit status ``code``;
    ``err``: what it wrote on standard error; ``stuck``: killed, deadlocked), with the
    last line it wrote when that is not out of memory (adv27 F3: "exit status 1" alone
    hid the cause)."""
    if stuck:
        return LogError(path, 0, f"out of memory: auditing this trace needs more than "
                        f"{addrspace.limit_phrase()} (the process auditing it deadlocked "
                        f"on a failed allocation and was stopped)")
    if _ran_out(code, err):
        return addrspace.out_of_memory(path)
    from compaction_audit.report.safe import printable

    last = next((line for line in reversed(err.splitlines()) if line.strip()), b"")
    said = f": {printable(last.decode('utf-8', 'replace').strip())[:200]}" if last else ""
    limit = addrspace.address_space_limit()  # a child exists only under one: a failure
    under = f" under {addrspace.limit_phrase(limit)}" if limit is not None else ""  # there
    return LogError(path, 0, f"the process auditing this trace ended without a result "
                    f"(exit status {code}{said}){under}")
