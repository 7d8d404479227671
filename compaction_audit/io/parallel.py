"""Decode a large plain log in helper processes while this one checks the records.

:func:`~compaction_audit.io.native.read_native` uses :func:`read_parallel` for plain
files of :data:`PARALLEL_MIN_BYTES` or more when a second CPU is there; any failure of
a helper (:class:`HelperFailed`) sends it back to reading alone, with the same result.
"""

from __future__ import annotations

import marshal
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import IO, Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io import reduce, retained_bytes
from compaction_audit.io.jsonerrors import json_error
from compaction_audit.io.lines import DEFAULT_LIMITS, Limits, compression_of, open_binary
from compaction_audit.io.native import SessionBuilder
from compaction_audit.io.quarantine import LenientFeed
from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.io.surrogates import loads
from compaction_audit.model import Session
from compaction_audit.runtime import frames
from compaction_audit.runtime.childproc import in_worker_process, prelude, python_command, reap

PARALLEL_MIN_BYTES = 32 << 20
"""Plain files at least this large are decoded in a helper process (see
:func:`read_native`); below it, starting the process costs more than it saves."""

_BOOT = (
    "import importlib.util, sys\n"
    "def load(name, path):\n"
    "    spec = importlib.util.spec_from_file_location(name, path)\n"
    "    mod = importlib.util.module_from_spec(spec)\n"
    "    sys.modules[spec.name] = mod\n"
    "    spec.loader.exec_module(mod)\n"
    "    return mod\n"
    "mod = load('_compaction_audit_reduce', sys.argv[1])\n"
    "differ = load('_compaction_audit_retained_bytes', sys.argv[6]).RetainedBytes()\n"
    "out = sys.stdout.buffer\n"
    "mod.reduce_lines(sys.argv[2], out.write, int(sys.argv[3]), int(sys.argv[4]),\n"
    "                 max_line=int(sys.argv[5]), differ=differ)\n"
    "out.flush()\n"
)
"""The helper process: :mod:`compaction_audit.io.reduce` and
:mod:`compaction_audit.io.retained_bytes` loaded by file path, so that it imports only
the field checks of :mod:`compaction_audit.io.records`, the standard library and
orjson, running ``reduce_lines`` with a ``RetainedBytes``.  It starts with
:func:`compaction_audit.runtime.childproc.prelude`: it ends with this process, quietly.  Its
standard error goes nowhere: whatever it would say there (a traceback), its stream
ends short, which is :class:`HelperFailed`, and the file is read alone."""


class HelperFailed(Exception):
    """The decoding process ended without finishing its stream."""


def wanted(path: str) -> bool:
    """Decode ``path`` in a helper process: a large plain file (by its name and its
    first bytes), a second CPU, and not already inside a worker process
    (``audit_paths`` runs one trace per CPU)."""
    if path == "-" or path.lower().endswith((".gz", ".zst")) or (os.cpu_count() or 1) < 2:
        return False
    if in_worker_process():
        return False
    try:
        if os.path.getsize(path) < PARALLEL_MIN_BYTES:
            return False
        with open(path, "rb") as fh:  # compressed under another name (t.jsonl.GZ, or no
            return not compression_of(fh.read(4))  # suffix): the helpers read plain
    except OSError:  # bytes (adv68 #4's class: it was an internal error, "fileno")
        return False


def _frames(stream: IO[bytes]) -> Iterator[bytes]:
    """The framed batches a helper writes, up to and including its ``MSG_END``."""
    read, chain = stream.read, frames.Chain()
    while True:
        head = read(8)
        if len(head) < 8:
            raise HelperFailed
        size = int.from_bytes(head[:4], "little")
        data = frames.read_exact(stream, size & ~reduce.LAST_FRAME)
        if data is None:
            raise HelperFailed  # cut short
        try:
            chain.check(data, head[4:])
        except frames.Damaged:  # damaged on the way, or after a batch lost whole
            raise HelperFailed from None  # (runtime.frames)
        yield data
        if size & reduce.LAST_FRAME:
            return


def _drain(stream: IO[bytes], out: queue.SimpleQueue[bytes | None]) -> None:
    """Read a helper's frames into ``out`` as they come (None: the helper failed)."""
    try:
        for data in _frames(stream):
            out.put(data)
    except (HelperFailed, OSError, ValueError):
        out.put(None)


def _messages(first: IO[bytes], second: queue.SimpleQueue[bytes | None] | None
              ) -> Iterator[tuple[Any, ...]]:
    """The helpers' messages in file order, line numbers made absolute."""
    base = 0
    for data in _frames(first):
        for msg in marshal.loads(data):
            if msg[1] == reduce.MSG_END:
                base = msg[0]
            else:
                yield msg
    if second is None:
        return
    while True:
        frame = second.get()
        if frame is None:
            raise HelperFailed
        for msg in marshal.loads(frame):
            kind = msg[1]
            if kind == reduce.MSG_END:
                return
            if kind == reduce.MSG_REDUCED:
                yield (msg[0] + base, kind, msg[2], msg[3] + base, *msg[4:])
            else:
                yield (msg[0] + base, *msg[1:])


CHANGED = ("the file changed while it was read (replaced, or cut shorter): audit it again "
           "when nothing writes it")
"""The error of a trace replaced or truncated while the helpers read it (adv63: a
rename mid-read mixed two files' rounds; a truncation under --lenient was an internal
error)."""


def _unchanged(path: str, opened: os.stat_result) -> None:
    """Raise :class:`LogError` (:data:`CHANGED`) when ``path`` is no longer the file
    opened (``opened``: its ``fstat``) or is shorter than it was: the helpers open the
    file by its name, so a file renamed over it mixed two files.  A file that grew
    (a log still being written) is read as the sequential reader reads it."""
    try:
        now = os.stat(path)
    except OSError:
        raise LogError(path, 0, CHANGED) from None
    if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino) \
            or now.st_size < opened.st_size:
        raise LogError(path, 0, CHANGED)


def _again(source: IO[bytes], path: str, number: int, offset: int, length: int,
           opened: os.stat_result) -> Any:
    """The record of line ``number`` read again whole from ``source`` (at ``offset``,
    ``length`` bytes), for a reduction the reader cannot use.  Raises
    :class:`LogError`: :data:`CHANGED` when the bytes are no longer the line the helper
    read, else the reader's words for a line that is not JSON."""
    source.seek(offset)
    raw = source.read(length)
    try:
        if len(raw) == length:
            return loads(raw)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
    except orjson.JSONDecodeError as exc:
        _unchanged(path, opened)
        raise LogError(path, number, json_error(raw, exc.msg, exc.pos)) from None
    raise LogError(path, number, CHANGED)


def read_parallel(path: str, lenient: bool, limits: Limits = DEFAULT_LIMITS) -> Session:
    """:func:`read_native` with the decoding in two helper processes (same result).

    Each helper decodes half of the file (split at a line start) with orjson and
    reduces each pair-form ``retained`` list to the ids entering and leaving
    (:func:`~compaction_audit.io.reduce.reduce_lines`); this process checks and
    applies every record in file order with the same :class:`SessionBuilder`,
    re-reading a line whole from the file when a reduction does not apply (an error
    to report, a working set that is not the reduction's).  Raises
    :class:`HelperFailed` when a helper dies, when the file is longer than
    ``limits.max_input_bytes`` or when the split point is inside a line longer than
    ``limits.max_line_bytes``; the caller then reads alone (and reports the line).
    """
    source = open_binary(path)  # LogError (line 0) when the file cannot be opened
    opened = os.fstat(source.fileno())
    size = opened.st_size
    if size > limits.max_input_bytes:  # the sequential reader names the line
        source.close()
        raise HelperFailed
    source.seek(size // 2)
    tail = source.readline(limits.max_line_bytes + 1)
    if len(tail) > limits.max_line_bytes:
        source.close()
        raise HelperFailed
    split = source.tell()
    ranges = [(0, split), (split, -1)] if split < size else [(0, -1)]
    helpers: list[subprocess.Popen[bytes]] = []
    try:
        for start, stop in ranges:
            helpers.append(subprocess.Popen(
                [*python_command(), "-c", prelude(os.getpid()) + _BOOT, reduce.__file__, path,
                 str(start), str(stop), str(limits.max_line_bytes), retained_bytes.__file__],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
    except OSError:  # no interpreter to start: read alone
        source.close()
        reap(helpers)
        raise HelperFailed from None
    second: queue.SimpleQueue[bytes | None] | None = None
    if len(helpers) == 2:
        second = queue.SimpleQueue()
        assert helpers[1].stdout is not None
        threading.Thread(target=_drain, args=(helpers[1].stdout, second), daemon=True).start()
    assert helpers[0].stdout is not None
    builder = SessionBuilder(path)
    feed = LenientFeed(builder) if lenient else None
    add = builder.add if feed is None else feed.add
    try:
        with source, paused_gc():
            for msg in _messages(helpers[0].stdout, second):
                number, kind = msg[0], msg[1]
                if kind == reduce.MSG_READ_ERROR:
                    raise LogError(path, number, msg[2])
                if kind == reduce.MSG_REDUCED:
                    if ((feed is not None and not feed.clean)
                            or not builder.add_reduced(number, msg[2], msg[3], msg[4], msg[5],
                                                       msg[6], msg[7], msg[10])):
                        add(number, _again(source, path, number, msg[8], msg[9], opened))
                elif kind == reduce.MSG_RECORD:
                    add(number, msg[2])
                elif feed is None:
                    raise LogError(path, number, msg[2])
                else:
                    feed.bad_line(LogError(path, number, msg[2]))
        _unchanged(path, opened)  # the helpers opened it by name: the same file?
    finally:
        reap(helpers)
    session = builder.finish()
    if feed is not None:
        session.skipped = sorted(feed.skipped, key=lambda e: e.line)
        session.dependent = feed.dependent
    return session
