"""The address space an audit needs, and a clean stop when a limit leaves too little
(adv15 F4, issue 11 class 5: never an abort or a MemoryError).

Polars allocates through its own jemalloc and aborts the process (a Rust backtrace,
exit 134) when an allocation fails; nothing can catch that.  So under an address-space
limit (``ulimit -v``, ``RLIMIT_AS``) a trace is checked before it is read: when the
audit would need more address space than the limit leaves (:func:`needed`, the figures
measured in docs/performance.md), it is an unreadable trace with one line naming the
file, the need and the limit, exit 2.  A Python ``MemoryError`` that still happens, or
pyo3's panic after one, is the same one line (:func:`guarded`, :func:`out_of_memory`).

Address space is not resident memory: glibc's malloc reserves 64 MiB of address space
for each arena, one per thread that allocates, up to 8 per core, which under a limit of
a few GiB is more than the trace's tables.  :func:`cap_arenas` caps them at
:data:`ARENAS` when a limit is set (and for the helper processes started later).
"""

from __future__ import annotations

import os
import sys

from compaction_audit.errors import LogError

TYPE_CHECKING = False
if TYPE_CHECKING:  # the idiom that spares loading typing at start-up
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

BASE_BYTES = 624 << 20
"""Address space of an audit of a tiny trace (bytes), beside :data:`THREAD_BYTES` for
each thread of Polars' pool (:func:`base_bytes`): the interpreter, Polars' code,
jemalloc's and glibc's reservations (340 MiB in all on 2 cores with :data:`ARENAS`
arenas), and the embedding model when it is loaded in this process rather than in a
helper (553 MiB for a 0.12 MB OpenHands trace; docs/security.md, "Memory": 512 MiB,
the figure before, was measured with the model in a helper)."""

THREAD_BYTES = 8 << 20
"""Address space per thread of Polars' pool (a thread's stack and its allocator's
reservations): about 6 MiB measured, a 0.12 MB OpenHands trace taking 557, 665 and
932 MiB with ``POLARS_MAX_THREADS`` 2, 16 and 64 (docs/security.md, "Memory")."""


def base_bytes() -> int:
    """:data:`BASE_BYTES` plus :data:`THREAD_BYTES` for each thread of Polars' pool
    (``polars.thread_pool_size()``: the cores this process may use, or
    ``POLARS_MAX_THREADS``; 640 MiB on 2 cores)."""
    try:
        import polars

        threads = polars.thread_pool_size()
    except Exception:  # Polars' binary could not load under the limit (adv23): its
        from compaction_audit.runtime.cores import POLARS_THREADS, thread_count

        threads = (thread_count(os.environ.get(POLARS_THREADS, ""))  # its count, as it
                   or os.cpu_count() or 1)  # makes it
    return BASE_BYTES + THREAD_BYTES * threads

BYTES_PER_INPUT_BYTE = 36
"""Address space per byte of a ``compaction-audit/1`` trace beyond :func:`base_bytes`,
on the heaviest shapes measured: span text rich in facts, folds dropping them (21 to
25, docs/performance.md, "Memory"), the benchmark grid's cells with span text in delta
mode (704 MiB for 12.2 MB) and a chain of single-child folds, which grows by 33 bytes
per byte from 4.1 to 16.8 MB (892 MiB; docs/security.md, "Memory").  Also what a
trace is checked against before its format is known (the least of
:data:`FORMAT_BYTES_PER_INPUT_BYTE`)."""

FORMAT_BYTES_PER_INPUT_BYTE: dict[str, int] = {
    "native": BYTES_PER_INPUT_BYTE, "claude-code": 80, "codex": 80, "gemini-cli": 120,
    "openhands": 120, "cline": 160, "opencode": 160}
"""Address space per trace byte beyond :func:`base_bytes`, by format: an adapter
builds every record of the product's log as Python objects before the tables, and its
spans carry the log's text.  Measured on 1 to 5.5 MB traces (docs/security.md,
"Memory"), the growth per byte: about 135 for Cline messages files, 75 for OpenHands
events, 85 for Gemini CLI recordings, 25 for Claude Code transcripts; each figure
leaves at least 14 % above every peak measured.  opencode, not measured, takes the
highest.  A trace is checked against it once its format is detected
(:func:`compaction_audit.io.load.load_session`), and a Cline session file with the
file paired with it (:mod:`compaction_audit.io.cline`)."""

ARENAS = 2
"""glibc malloc arenas when an address-space limit is set (``M_ARENA_MAX``)."""

_M_ARENA_MAX = -8  # glibc's malloc.h


_AS_NAME = "address-space limit of {} (ulimit -v, RLIMIT_AS)"
_DATA_NAME = "data limit of {} (ulimit -d, RLIMIT_DATA)"


def _limit() -> tuple[int, str] | None:
    """The least of the soft ``RLIMIT_AS`` and ``RLIMIT_DATA`` of this process (bytes)
    and how to name it; None when neither is set."""
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    found = []
    for which, name in ((resource.RLIMIT_AS, _AS_NAME), (resource.RLIMIT_DATA, _DATA_NAME)):
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY:
            found.append((soft, name))
    return min(found, key=lambda f: f[0]) if found else None


def address_space_limit() -> int | None:
    """The limit an allocation of this process fails at, in bytes; None when there is
    none: the soft ``RLIMIT_AS``, or ``RLIMIT_DATA`` when it is less.  Since Linux 4.7
    the data limit counts every private writable mapping, Polars' jemalloc arenas
    included, so an allocation fails under it as under an address-space limit (adv22b
    F3: ``ulimit -d 700000`` aborted with exit 134, no check having run).  Checked
    against the same figures, which also count code and read-only mappings: a little
    more than the data limit needs."""
    found = _limit()
    return None if found is None else found[0]


def limit_phrase(limit: int | None = None) -> str:
    """``"the address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"`` for ``limit``
    (default :func:`address_space_limit`), named as the data limit when that is the
    lesser, or ``"the memory available"`` without a limit."""
    if limit is None:
        limit = address_space_limit()
    if limit is None:
        return "the memory available"
    found = _limit()
    name = found[1] if found is not None and found[0] == limit else _AS_NAME
    return "the " + name.format(_mib(limit))


POLARS_COMMANDS = frozenset({"audit", "baseline", "diff", "simulate", "trace"})
"""The commands that load Polars (``convert``, ``rules`` and ``config`` do not)."""


def too_little_for(args: list[str]) -> str:
    """The one line (without the program's name) of a command line ``args`` that needs
    Polars under a limit below :data:`BASE_BYTES`, else "".  Under about 400 MiB
    Polars cannot even load: its binary could not be mapped ("Polars binary is
    missing!" and "internal error: NameError"), or a thread of its own could not start
    (a Rust panic); no audit fits under :data:`BASE_BYTES` (adv22b F7).  ``--help``
    needs no Polars."""
    limit = address_space_limit()
    if limit is None or limit >= BASE_BYTES or not args or args[0] not in POLARS_COMMANDS \
            or "--help" in args:
        return ""
    return (f"out of memory: this command needs at least {_mib(BASE_BYTES)} of address "
            f"space, over {limit_phrase(limit)}: raise the limit")


def polars_may_not_load() -> bool:
    """True under a limit below :data:`BASE_BYTES`, where Polars' binary may not map:
    the commands that run there (``convert``, ``rules``, ``config``) need none of it."""
    limit = address_space_limit()
    return limit is not None and limit < BASE_BYTES


def cap_arenas() -> None:
    """Under an address-space limit, at most :data:`ARENAS` glibc malloc arenas in
    this process (``mallopt``) and in the processes it starts (``MALLOC_ARENA_MAX``,
    unless set).  Call before threads start; a no-op without a limit or without glibc."""
    if address_space_limit() is None:
        return
    os.environ.setdefault("MALLOC_ARENA_MAX", str(ARENAS))
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, ARENAS)
    except (OSError, AttributeError):  # not glibc
        pass


BYTES_PER_CLOSURE_PAIR = 1_000
"""Address space per (summary, leaf) pair of the provenance closure, beyond
:func:`base_bytes`: a chain of compactions (each summary carries the one before) holds
pairs quadratic in the trace, and the work over them grows with the pairs.  Measured
(docs/security.md, "Memory"): 700 to 880 bytes of address space per pair on chains of
Claude Code, Codex and Gemini CLI compactions and native folds of fact-rich text
(1 to 4 MB traces of 360,000 to 1,440,000 pairs; 800, the figure of adv18 F1, was
under the 870 of a Codex rollout of 4,400 compactions and its 1,502 MiB)."""


def check_closure(path: str, pairs: int) -> None:
    """Raise :class:`LogError` (line 0) when the address-space limit is below
    :func:`base_bytes` plus :data:`BYTES_PER_CLOSURE_PAIR` for each of the trace's
    ``pairs`` closure pairs, and that is more than :func:`needed` for the file at
    ``path`` (which :func:`check` allowed at the start; on the shapes it was measured
    on it covers their closures): checked once the closure is known, before the work
    that grows with it.  Standard input and URLs, whose size :func:`check` cannot see,
    are checked against the limit alone (adv19b F1).  Nothing without a limit."""
    limit, size = _limit_and_size(path)
    if limit is None:
        return
    base = base_bytes()
    need = base + BYTES_PER_CLOSURE_PAIR * pairs
    if need > (limit if size is None else max(limit, needed(size))):
        raise _over(path, need, limit, f"{_mib(base)} + {pairs:,} provenance pairs "
                    f"at {BYTES_PER_CLOSURE_PAIR:,} bytes each")


def needed(size: int, fmt: str = "native") -> int:
    """Address space (bytes) the audit of a trace of ``size`` bytes in format ``fmt``
    needs, at most, on the shapes measured (:data:`FORMAT_BYTES_PER_INPUT_BYTE`)."""
    return base_bytes() + _per_byte(fmt) * size


DOCUMENT = "a JSON document"
"""What :func:`check` is told of a file whose format is known only once the whole JSON
document is decoded (Cline, opencode exports, Gemini CLI recordings): the least figure
of those formats, checked before the decoding (adv23 F5: a 63 MB Cline messages file
was decoded by the format detection in the command's own process, where orjson
faulted, exit 139, no line)."""


ANY_FORMAT = "decoding before its format is known"
"""What :func:`check_bytes` is told of the lines format detection decodes (the first
line may be the whole file: a one-line 63 MB Cline document faulted in the command's
own process, adv23 F5): :data:`DECODE_BYTES_PER_BYTE` per byte.  A trace refused by it
is refused by its own format's figure too."""

DECODE_BYTES_PER_BYTE = 8
"""Address space per byte of JSON that ``orjson.loads`` decodes for text: the line (1),
orjson's parse buffer (1), a decoded string of 4-byte characters (4) and the objects
around it.  No upper bound: a document of empty objects (``[{},{},...]``) takes about
33 (adv24 F2), so under a limit no whole document is decoded in the command's own
process (:func:`compaction_audit.io.companions.companion_lookup`, ``trace`` and
``convert`` in a child)."""


def _per_byte(fmt: str) -> int:
    if fmt == ANY_FORMAT:
        return DECODE_BYTES_PER_BYTE
    if fmt == DOCUMENT:
        return min(FORMAT_BYTES_PER_INPUT_BYTE[f] for f in ("cline", "opencode", "gemini-cli"))
    return FORMAT_BYTES_PER_INPUT_BYTE.get(fmt, max(FORMAT_BYTES_PER_INPUT_BYTE.values()))


def check(path: str, fmt: str = "native", also: tuple[str, ...] = ()) -> None:
    """Raise :class:`LogError` (line 0) when the address-space limit is below
    :func:`needed` for the file at ``path`` read as ``fmt``, with the files ``also``
    read with it (their sizes on disk: a compressed trace is checked by its
    compressed size, a lower bound).  Nothing for standard input, a path that is not
    a regular file, or no limit."""
    limit, size = _limit_and_size(path)
    if limit is None or size is None:
        return
    size += sum(_size(other) or 0 for other in also)
    need = needed(size, fmt)
    if need > limit:
        beside = " and the file read with it" if also else ""
        raise _over(path, need, limit, f"{_mib(size)} trace{beside}: "
                    f"{_mib(base_bytes())} + {_per_byte(fmt)} bytes per trace byte, {fmt}")


def check_bytes(path: str, size: int, fmt: str) -> None:
    """:func:`check` for ``size`` bytes of ``path`` about to be decoded (the lines format
    detection reads), rather than its size on disk; also for standard input."""
    limit = address_space_limit()
    if limit is None:
        return
    need = needed(size, fmt)
    if need > limit:
        raise _over(path, need, limit, f"{_mib(size)} to decode: {_mib(base_bytes())} + "
                    f"{_per_byte(fmt)} bytes per byte, {fmt}")


def _limit_and_size(path: str) -> tuple[int | None, int | None]:
    """The address-space limit (None: no limit, nothing to check) and the size of the
    file at ``path`` on disk (None for standard input, a URL, or a path that cannot
    be looked at: the reader reports it)."""
    limit = address_space_limit()
    return limit, None if limit is None else _size(path)


def _size(path: str) -> int | None:
    """The size of the file at ``path`` on disk; None for standard input, a URL, or a
    path that cannot be looked at."""
    if path == "-" or "://" in path:
        return None
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return None


def _over(path: str, need: int, limit: int, how: str) -> LogError:
    """The one-line error of a trace that needs ``need`` bytes of address space
    (``how``: the estimate's terms) over ``limit``."""
    return LogError(path, 0, (
        f"needs about {_mib(need)} of address space to audit ({how}), over "
        f"{limit_phrase(limit)}: raise the limit or audit a shorter trace"))


def out_of_memory(path: str) -> LogError:
    """The one-line error for a ``MemoryError`` raised while auditing ``path``."""
    return LogError(path, 0, f"out of memory: auditing this trace needs more than "
                             f"{limit_phrase()}")


def out_of_memory_line() -> str:
    """The one line (without the program's name) of a command that ran out of memory
    outside the reading and audit of a trace (rendering a report)."""
    return f"out of memory: this command needs more than {limit_phrase()}"


ORJSON_OUT_OF_MEMORY = "Not enough memory to allocate buffer for parsing"
"""The message of the ``JSONDecodeError`` orjson raises when it cannot allocate its
parse buffer (yyjson's allocation failure; orjson 3.x): no fault of the line."""

NO_EXCEPTION_SET = "error return without exception set"
"""The ``SystemError`` of C code that failed without setting an exception: what
importing Polars' modules under a limit too low for them raised (adv24 F3)."""

NULL_OBJECT_PANIC = "PyObject pointer is null"
"""The message of pyo3's panic when a Python object it builds is NULL: what
``Series.to_list()`` does when the object's allocation fails (pyo3 0.29,
``instance.rs``; adv18 F1)."""


def ran_out(exc: BaseException, memory_error_reported: bool = False) -> bool:
    """True when ``exc`` means the process ran out of memory: a ``MemoryError``, or
    pyo3's ``PanicException`` (a BaseException of module ``pyo3_runtime``) raised after
    a failed allocation: pyo3 reports the MemoryError as unraisable
    (``memory_error_reported``, see :func:`guarded`) and then panics on the NULL object
    (:data:`NULL_OBJECT_PANIC`), the panic being all that is left when the report
    itself failed for want of memory, which is taken as out of memory under an
    address-space limit only.  A ``SystemError`` whose cause is a ``MemoryError`` is
    one too: orjson's ``loads`` reports its own that way ("returned a result with an
    exception set": adv20 F1); under an address-space limit, one raised without an
    exception (:data:`NO_EXCEPTION_SET`: importing Polars' modules short of memory,
    adv24 F3); so is orjson's ``JSONDecodeError`` for a parse
    buffer it could not allocate (:data:`~compaction_audit.io.jsonerrors.ORJSON_OUT_OF_MEMORY`:
    ``convert`` wrote "internal error: JSONDecodeError: Not enough memory", adv24 F3),
    wherever it was not mapped.  Any other panic is a bug (the command line's
    "internal error")."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, ValueError) and getattr(exc, "msg", None) == ORJSON_OUT_OF_MEMORY:
        return True
    if isinstance(exc, SystemError) and str(exc) == NO_EXCEPTION_SET:
        return address_space_limit() is not None
    if isinstance(exc, SystemError) and isinstance(
            exc.__cause__ or exc.__context__, MemoryError):
        return True
    kind = type(exc)
    if (kind.__name__, kind.__module__) != ("PanicException", "pyo3_runtime"):
        return False
    return memory_error_reported or (
        NULL_OBJECT_PANIC in str(exc) and address_space_limit() is not None)


def guarded(path: str, work: Callable[[], T]) -> T:
    """``work()``, the reading or audit of the trace at ``path``; running out of memory
    there (:func:`ran_out`) raises :func:`out_of_memory` instead, one line, not the
    ``MemoryError`` or pyo3's panic after one (adv18 F1: "internal error:
    PanicException", exit 2, after a traceback).  Meanwhile a ``MemoryError`` that
    pyo3 reports as unraisable (``sys.unraisablehook``) is noted, not printed: it was
    a Python traceback on stderr before the panic.  The Rust panic's own lines
    (``thread '<unnamed>' panicked at ...``) are still written: Rust's panic hook
    writes them to file descriptor 2 before any Python code runs, and only moving
    that descriptor could hide them, which would also hide the one line Rust writes
    before an abort (``memory allocation of N bytes failed``).  The error raised has
    no ``__context__``: the failed work's frames are not kept alive by it."""
    before = sys.unraisablehook
    reported = False

    def note(unraisable: Any) -> None:  # allocates nothing: memory is short
        nonlocal reported
        if isinstance(unraisable.exc_value, MemoryError):
            reported = True
        else:
            before(unraisable)

    sys.unraisablehook = note
    try:
        return work()
    except BaseException as exc:
        if not ran_out(exc, reported):
            raise
    finally:
        sys.unraisablehook = before
    raise out_of_memory(path)  # out of the except clause: no context


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"
