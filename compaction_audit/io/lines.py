"""Open a log (plain, ``.gz``, ``.zst`` or ``-`` for stdin) and yield its lines.

Every reader and adapter goes through :func:`iter_lines`, so line numbers mean the
same thing everywhere: 1-based physical lines of the decompressed stream.

Input is bounded (:class:`Limits`, issue 11 item 4): a line longer than
``max_line_bytes``, a stream longer than ``max_input_bytes`` or a compressed stream
that expands more than ``max_decompression_ratio`` times (each line weighing at least
:data:`LINE_WEIGHT` bytes) is a :class:`LogError`
(``FILE:LINE: ...``, exit 2) raised before the memory is spent; runs of blank lines
are skipped at C speed (a regular-expression search for the next non-blank byte).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import orjson
import zstandard

from compaction_audit.errors import InputLimit, LogError
from compaction_audit.io.jsonerrors import json_error
from compaction_audit.io.surrogates import loads
from compaction_audit.smallfile import regular_file as regular_file  # re-exported

_CHUNK = 1 << 20
_NON_BLANK = re.compile(rb"\S")
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

MAX_LINE_BYTES = 64 << 20
"""Default longest line (bytes, after decompression): 64 MiB, far above a real record
(a 2,000-item round is about 50 KB) and far below what decoding it would cost."""
MAX_INPUT_BYTES = 64 << 30
"""Default largest input (bytes, after decompression): 64 GiB."""
MAX_DECOMPRESSION_RATIO = 1000
"""Default largest ratio decompressed / compressed bytes of a ``.gz``/``.zst`` input
(real logs compress 5-50x; gzip cannot exceed about 1032x, so only near-pure
repetition such as a bomb of blank lines reaches it)."""
RATIO_FLOOR = 64 << 20
"""The ratio is checked only once this many bytes were decompressed (lines weighed by
:data:`LINE_WEIGHT`)."""
LINE_WEIGHT = 256
"""Bytes each line adds to the decompressed size the ratio weighs: a line costs the
reader some microseconds whatever its length (blank lines are skipped at C speed and
weigh nothing), so a bomb of ``{}`` lines (3 bytes each)
under the ratio cost 8 us per line, 32 s for a 13 KB ``.gz`` and hours at 4 MB (adv19b
F7).  Real lines are 0.5-50 KB, so it moves their ratio by at most half."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one input, in bytes (``max_decompression_ratio``: a plain ratio).

    Set with ``--set max_line_bytes=N`` (and the other two names) or the config file;
    see :class:`~compaction_audit.settings.Settings` and docs/security.md.
    """

    max_line_bytes: int = MAX_LINE_BYTES
    max_input_bytes: int = MAX_INPUT_BYTES
    max_decompression_ratio: int = MAX_DECOMPRESSION_RATIO

    @classmethod
    def of(cls, settings: Any) -> Limits:
        """The limits held by a :class:`~compaction_audit.settings.Settings` (or any
        object with the same attribute names; missing ones keep their defaults)."""
        if settings is None:
            return DEFAULT_LIMITS
        return cls(*(getattr(settings, name, default) for name, default in (
            ("max_line_bytes", MAX_LINE_BYTES), ("max_input_bytes", MAX_INPUT_BYTES),
            ("max_decompression_ratio", MAX_DECOMPRESSION_RATIO))))


DEFAULT_LIMITS = Limits()


_SPECIAL = ("/dev/", "/proc/")


def special_name(path: str) -> str | None:
    """The first name under ``/dev`` or ``/proc`` that ``path`` is, or that a link on
    the way from it to a file names (normalized, its directory resolved), else None:
    each step is checked before the link is followed (the target of
    ``/proc/self/fd/0`` is the file standard input is, not a name under ``/proc``).
    At most 40 links, as the kernel."""
    try:
        at = os.path.abspath(path)
        for _ in range(40):
            at = os.path.join(os.path.realpath(os.path.dirname(at)), os.path.basename(at))
            if at.startswith(_SPECIAL):
                return at
            if not os.path.islink(at):
                return None
            at = os.path.join(os.path.dirname(at), os.readlink(at))
    except (OSError, ValueError):
        pass
    return None


def reads_once(path: str) -> bool:
    """True when ``path`` can be read only once, from where it was given, so a reader
    must read it a single time and in this process: ``-`` (standard input), a path
    under ``/dev`` or ``/proc`` (``/dev/stdin``, ``/dev/fd/63`` of ``<(zcat ...)``,
    which name this process's descriptors), and anything that is not a regular file
    (a FIFO, a character device, a socket).  A symbolic link into ``/dev`` or ``/proc``
    counts as its target (``x.jsonl -> /dev/stdin`` with standard input a file: the
    parallel reader's helpers, opening it again, read their own standard input;
    adv22b F1).  A path that does not exist is False (its open fails with the OS's
    reason)."""
    if path == "-" or special_name(path) is not None:
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _magic(raw: IO[bytes]) -> str:
    """``"gz"``, ``"zst"`` or ``""`` from the first bytes of ``raw`` (peeked, not
    consumed)."""
    peek = getattr(raw, "peek", None)
    return compression_of(peek(4)[:4] if peek is not None else b"")


def compression_of(head: bytes) -> str:
    """``"gz"``, ``"zst"`` (a frame or a skippable frame) or ``""`` from a file's first
    four bytes ``head``."""
    head = head[:4]
    skippable = len(head) == 4 and head[1:] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50
    return "gz" if head[:2] == _GZIP_MAGIC else \
        "zst" if head == _ZSTD_MAGIC or skippable else ""


_UNSUPPORTED = ((b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x04\x22\x4d\x18", "lz4"),
                (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"PK\x03\x04", "zip"))
"""Magic bytes of compressions and archives that are not read: no log format starts
with them (JSON starts with ``{`` or ``[``, a store with ``SQLite format 3``), so such
an input is named for what it is instead of failing as bad JSON (issue 11, fresh pass,
minor: a ``.bz2`` trace said "lines end with a lone CR")."""


def _unsupported(raw: IO[bytes]) -> str:
    """The name of the unsupported compression ``raw`` starts with (peeked), or ""."""
    peek = getattr(raw, "peek", None)
    head = peek(6)[:6] if peek is not None else b""
    for magic, name in _UNSUPPORTED:
        level = head[3:4]  # bzip2: "BZh" then the block size, "1" to "9"
        if head.startswith(magic) and (name != "bzip2" or (level and level in b"123456789")):
            return name
    return ""


def _remote() -> Any:
    """:mod:`compaction_audit.io.remote`, imported when a URL is first opened."""
    from compaction_audit.io import remote

    return remote


def _suffix_kind(path: str) -> str:
    lower = path.lower()  # T.JSONL.GZ too
    return "gz" if lower.endswith(".gz") else "zst" if lower.endswith(".zst") else ""


def open_binary(path: str) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing ``.gz`` and ``.zst`` transparently.

    ``-`` is standard input.  Every input, file, FIFO or object, is decompressed by
    its magic bytes when it starts with gzip's or zstd's (a zstd skippable frame
    included; a gzip file named ``t.jsonl`` said "lines end with a lone CR", adv17
    F4), else by its ``.gz``/``.zst`` suffix (whose decompressor then reports what the
    bytes are not).  Raises
    :class:`LogError` (line 0) when the file cannot be opened.
    """
    return _open(path)[0]


def _open(path: str) -> tuple[IO[bytes], _Counted | None]:
    """The decompressed stream and, for a compressed input, the raw one (whose
    position is the compressed bytes read so far)."""
    if path == "-":
        if sys.stdin is None:
            raise LogError(path, 0, "cannot open: standard input is closed")
        raw: IO[bytes] = sys.stdin.buffer
        try:  # a descriptor open for writing only, a terminal lost: EBADF, EIO
            kind = _magic(raw)
        except OSError as exc:  # adv22b F8: was "internal error: OSError"
            raise LogError(path, 0, f"cannot read: {exc.strerror or exc}") from None
    elif "://" in path and _remote().is_url(path):  # object storage: same reader, limits
        raw = _remote().open_url(path)
        try:
            kind = _magic(raw) or _suffix_kind(path)
        except OSError as exc:
            raw.close()
            raise LogError(path, 0, f"cannot read: {exc}") from None
    else:
        try:
            raw = Path(path).open("rb")  # noqa: SIM115  (the caller closes the stream)
        except OSError as exc:
            if (other := _remote().other_url(path)) is not None:  # adv81 #4: echoed whole
                raise LogError(other[1], 0, f"a {other[0]}:// URL is not read: give a local "
                               "file's path, or an s3://, gs:// or az:// URL") from None
            raise LogError(path, 0, f"cannot open: {exc.strerror or exc}") from None
        try:  # its bytes first, then its name, as for an object (adv66 #4: gzip bytes
            kind = _magic(raw) or _suffix_kind(path)  # named .zst failed here and
        except OSError as exc:  # passed from object storage)
            raw.close()
            raise LogError(path, 0, f"cannot read: {exc.strerror or exc}") from None
    if not kind:
        try:
            other = _unsupported(raw)
        except OSError:
            other = ""  # the read that follows reports it
        if other:
            raw.close()
            raise LogError(path, 0, f"{other}-compressed input is not supported (gzip "
                           "and zstd are); decompress it first")
    if kind:
        _refuse_plain_text(path, raw, kind)
        counted = _Counted(raw)
        return decompressed(cast(IO[bytes], counted), kind), counted
    return raw, None


def _refuse_plain_text(path: str, raw: IO[bytes], kind: str) -> None:
    """Raise :class:`LogError` (line 0) when ``raw``, named as ``kind`` compressed but
    without its magic bytes, starts as JSON text (``{`` or ``[`` after blanks): the
    decompressor said "cannot read: Error -3 while decompressing data: incorrect header
    check" (adv94 #10: plain JSON Lines named ``x.jsonl.gz``)."""
    peek = getattr(raw, "peek", None)
    if peek is None or compression_of(peek(4)[:4]) == kind:
        return
    head = peek(64)[:64].lstrip(b" \t\r\n\xef\xbb\xbf")
    if head[:1] in (b"{", b"["):
        raw.close()
        name = {"gz": "gzip", "zst": "zstd"}[kind]
        raise LogError(path, 0, f"named .{kind} but not {name} data: it starts as JSON "
                       f"text; rename it without .{kind}, or compress it")


def decompressed(raw: IO[bytes], kind: str) -> IO[bytes]:
    """``raw`` read through the decompressor of ``kind`` (``"gz"`` or ``"zst"``, as
    :func:`compression_of` names it): every member or frame, skippable frames and zero
    padding passed over, a cut member or frame an error (``EOFError`` or a
    "truncated" ``ZstdError``)."""
    reader = _GzipReader(raw) if kind == "gz" else _ZstdReader(raw)
    return io.BufferedReader(reader, buffer_size=_CHUNK)


class _Counted(io.RawIOBase):
    """A compressed stream that counts the bytes read from it (``tell`` works on a
    pipe too), for the decompression ratio."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self._raw.read(-1 if size is None else size)
        self.count += len(data)
        return data

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def tell(self) -> int:
        return self.count

    def close(self) -> None:
        if self._raw is not getattr(sys.stdin, "buffer", None):
            self._raw.close()
        super().close()


MAX_EMPTY_MEMBERS = 10_000
"""Most gzip members or zstd frames (skippable ones included) that decompress to
nothing in one input: each costs about 30 us of Python and adds nothing the ratio
check can weigh, so 10 MB of them took 13 s for a 6-line trace (adv27 F6); a log
written by a real writer has one member, or one per rotation or append."""


class EmptyMembers(OSError):
    """An input of more than :data:`MAX_EMPTY_MEMBERS` empty members or frames (raised
    by the reader as a corrupt input is: ``FILE:LINE: cannot read: ...``)."""


class _ZstdReader(io.RawIOBase):
    """Decompress a ``.zst`` stream of one or more frames, and fail on a truncated one.

    zstandard's ``stream_reader`` ends quietly at a frame cut short, which would drop
    the rest of a log without a word; here the end of input inside a frame raises
    ``ZstdError`` ("truncated"), which :func:`iter_lines` reports with its line.
    Each read decompresses at most :data:`_CHUNK` bytes of output, so a bomb is
    stopped by the limits of :func:`iter_lines` before it fills the memory.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._src = b""  # compressed input read, fed from offset _at in 1 KB pieces
        self._at = 0
        self._buf = b""
        self._pos = 0
        self._in_frame = False
        self._done = False
        self._error: Exception | None = None  # raised once what came before is read
        self._member_out = 0  # bytes the current frame or member gave so far
        self._empty = 0  # frames or members that gave nothing

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf) and not self._done:
            if self._error is not None:
                self._done = True
                raise self._error
            if self._at >= len(self._src):
                self._src, self._at = self._raw.read(_CHUNK >> 4), 0
                if not self._src:
                    self._done = True
                    if self._in_frame:
                        raise self._truncated()
                    break
            self._buf, self._pos = self._feed(), 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos:self._pos + n]
        self._pos += n
        return n

    def _feed(self) -> bytes:
        """Decompress pending input in small pieces until about :data:`_CHUNK` bytes
        came out (a 1 KB piece expands to at most about 32 MB).  After a frame the
        decoder's unused bytes are read again by moving back (no copy: many tiny
        frames cost a constant each).  Corrupt data after some output is raised at the
        next read, so the lines before it are kept (and counted) first."""
        out: list[bytes] = []
        size = 0
        src = memoryview(self._src)
        while self._at < len(src) and size < _CHUNK:
            piece = src[self._at:self._at + 1024]
            self._at += len(piece)
            try:
                data = self._decompress(piece)
            except (zstandard.ZstdError, OSError) as exc:
                if not out:
                    raise
                self._error = exc
                break
            out.append(data)
            size += len(data)
            self._member_out += len(data)
            self._in_frame = not self._obj.eof and not self._idle()
            if self._obj.eof:
                self._at -= len(self._obj.unused_data)
                self._in_frame = self._next()
                self._empty += not self._member_out
                self._member_out = 0
                if self._empty > MAX_EMPTY_MEMBERS:  # each costs ~30 us of Python
                    self._error = EmptyMembers(  # (adv27 F6: ~1 s a MB of nothing)
                        f"more than {MAX_EMPTY_MEMBERS:,} empty gzip members or zstd "
                        "frames: no log is written so")
                    break
        return b"".join(out)

    def _truncated(self) -> Exception:
        return EOFError("truncated zstd stream: the last frame is cut short")

    def _idle(self) -> bool:
        """True between frames (nothing of the next one read: the input may end)."""
        return False

    def _decompress(self, piece: memoryview) -> bytes:
        return self._obj.decompress(piece)

    def _next(self) -> bool:
        """A decoder for the next frame; False: not inside a frame yet."""
        self._obj = self._dctx.decompressobj()
        return False

    def close(self) -> None:
        self._raw.close()
        super().close()


class _GzipReader(_ZstdReader):
    """Decompress a ``.gz`` stream of one or more members with :mod:`zlib`, header
    included (``wbits`` 31), as :class:`_ZstdReader` does a ``.zst`` one.

    :class:`gzip.GzipFile` parses each member's header in Python a byte at a time: a
    40 MB file name field took 50 s, and 40 MB of empty members 26 s (issue 11, class
    5, adv11 F4); zlib reads them in C.  Zero bytes after a member are padding, as
    for ``gzip``; the end of input inside a member is ``EOFError`` (a truncated
    file), corrupt data ``gzip.BadGzipFile`` (an ``OSError``)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(raw)
        self._obj = zlib.decompressobj(31)  # type: ignore[assignment]
        self._fresh = True  # no byte of the current member read yet

    def _truncated(self) -> Exception:
        return EOFError("Compressed file ended before the end-of-stream marker was reached")

    def _idle(self) -> bool:
        return self._fresh

    def _decompress(self, piece: memoryview) -> bytes:
        if self._fresh:  # zero bytes between or after members are padding
            piece = memoryview(bytes(piece).lstrip(b"\0"))
            if not piece:
                return b""
            self._fresh = False
        try:
            return self._obj.decompress(piece)
        except zlib.error as exc:
            raise gzip.BadGzipFile(str(exc)) from None

    def _next(self) -> bool:
        self._obj = zlib.decompressobj(31)  # type: ignore[assignment]
        self._fresh = True
        return False


def iter_lines(path: str, limits: Limits = DEFAULT_LIMITS,
               errors: list[LogError] | None = None) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every non-blank line of ``path``.

    Line numbers are 1-based.  A last line without a trailing newline is yielded as is;
    the JSON decoder reports it as truncated if it does not parse.  Raises
    :class:`LogError` for unreadable or corrupt (bad gzip/zstd) files, and for input
    beyond ``limits``.  With ``errors`` (lenient reading) a compressed stream cut
    short (a truncated ``.gz``/``.zst``: ``EOFError``) is not raised: its error is
    appended to ``errors`` (with the line it cut, which is dropped, as a plain file's
    truncated last line is) and the lines before it are kept.  Corrupt data (a bad
    CRC, size or checksum, a bad block) and any other read error stay errors: a bad
    checksum dropped the lines of its whole member, counted as one skipped record, and
    a failing trace passed (adv17 F2).
    """
    stream, raw = _open(path)
    try:
        yield from _split(path, stream, raw, limits, errors)
    finally:
        for handle in (stream, raw):
            if handle is not None and handle is not getattr(sys.stdin, "buffer", None):
                handle.close()


def _split(path: str, stream: IO[bytes], raw: _Counted | None, limits: Limits,
           errors: list[LogError] | None) -> Iterator[tuple[int, bytes]]:
    read = getattr(stream, "read1", stream.read)
    search = _NON_BLANK.search
    number = 0  # newlines before the start of ``carry``
    carry: list[bytes] = []  # the line being assembled (no newline yet)
    carry_len = 0
    carry_blank = True
    total = 0
    read_lines = 0  # non-blank lines yielded, for the ratio (LINE_WEIGHT)
    max_line = limits.max_line_bytes
    while True:
        try:
            chunk = read(_CHUNK)
        except (OSError, EOFError, zstandard.ZstdError) as exc:
            err = LogError(path, number + 1, f"cannot read: {exc}")
            if errors is None or not isinstance(exc, EOFError):
                raise err from None  # corrupt, not cut short: an error even --lenient
            errors.append(err)
            return
        if not chunk:
            break
        total += len(chunk)
        if total > limits.max_input_bytes:
            over = len(chunk) - (total - limits.max_input_bytes)
            raise InputLimit(path, number + chunk.count(b"\n", 0, over) + 1,
                           f"input longer than {limits.max_input_bytes} bytes (max_input_bytes)")
        if raw is not None and total + LINE_WEIGHT * read_lines > RATIO_FLOOR:
            _check_ratio(path, number + 1, total, read_lines, raw,
                         limits.max_decompression_ratio)
        end = chunk.rfind(b"\n") + 1
        if carry_blank and chunk.isspace():  # a run of blank lines: count them, at C speed
            if end:
                number += chunk.count(b"\n")
                carry, carry_len = [], 0
            carry.append(chunk[end:])
            carry_len += len(chunk) - end
            if carry_len > max_line:
                raise _too_long(path, number + 1, max_line)
            continue
        if not end:  # no line ends in this chunk
            carry.append(chunk)
            carry_len += len(chunk)
            carry_blank = False
            if carry_len > max_line:
                raise _too_long(path, number + 1, max_line)
            continue
        head = chunk.find(b"\n") + 1
        if carry_len + head > max_line:
            raise _too_long(path, number + 1, max_line)
        pos = 0
        if carry_len:
            line = b"".join([*carry, chunk[:head]])
            number += 1
            if line.strip():
                read_lines += 1
                yield number, line
            pos = head
        count = chunk.count
        while True:
            m = search(chunk, pos, end)
            if m is None:
                number += count(b"\n", pos, end)
                break
            start = chunk.rfind(b"\n", pos, m.start()) + 1 or pos
            stop = chunk.find(b"\n", m.start(), end) + 1
            number += count(b"\n", pos, start) + 1
            if stop - start > max_line:
                raise _too_long(path, number, max_line)
            read_lines += 1
            yield number, chunk[start:stop]
            pos = stop
        rest = chunk[end:]
        carry, carry_len, carry_blank = [rest], len(rest), not search(rest)
        if carry_len > max_line:
            raise _too_long(path, number + 1, max_line)
    if not carry_blank:
        yield number + 1, b"".join(carry)


def _too_long(path: str, line: int, limit: int) -> LogError:
    return InputLimit(path, line, f"line longer than {limit} bytes (max_line_bytes)")


def _check_ratio(path: str, line: int, total: int, read_lines: int, raw: _Counted,
                 ratio: int) -> None:
    """Raise when ``total`` bytes decompressed, plus :data:`LINE_WEIGHT` for each of
    ``read_lines`` lines, are more than ``ratio`` times the compressed bytes read."""
    allowed = ratio * max(raw.tell(), 1)
    if total > allowed:
        raise InputLimit(path, line, f"the compressed input expands more than {ratio}x "
                       "(max_decompression_ratio): a decompression bomb?")
    if total + LINE_WEIGHT * read_lines > allowed:
        raise InputLimit(path, line, f"the compressed input expands more than {ratio}x, "
                       f"each line weighing {LINE_WEIGHT} bytes (max_decompression_ratio): "
                       f"{total:,} bytes in {read_lines:,} lines so far, a decompression "
                       "bomb?")


def decode_lines(path: str, lines: Iterable[tuple[int, bytes]], lenient: bool,
                 skipped: list[LogError]) -> Iterator[tuple[int, Any]]:
    """Decode ``(line, raw)`` pairs with orjson, yielding ``(line, object)``.

    Bad JSON raises :class:`LogError` naming the line (see
    :func:`~compaction_audit.io.jsonerrors.json_error` for the wording); in ``lenient``
    mode the error is appended to ``skipped`` and the line passed over.
    """
    for number, raw in lines:
        try:
            obj = loads(raw)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
        except orjson.JSONDecodeError as exc:
            err = LogError(path, number, json_error(raw, exc.msg, exc.pos))
            if not lenient:
                raise err from None
            skipped.append(err)
            continue
        yield number, obj


def valid_json_lines(path: str, lines: Iterable[tuple[int, bytes]],
                     skipped: list[LogError]) -> Iterator[tuple[int, bytes]]:
    """The ``(line, raw)`` pairs of ``lines`` that are valid JSON, for lenient reading
    by an adapter that decodes lines itself (Claude Code, Codex).

    A line that does not parse (a bad line in the middle, a truncated last line of a
    transcript still being written) is passed over and its :class:`LogError`
    (``FILE:LINE``, worded by :func:`~compaction_audit.io.jsonerrors.json_error`) appended
    to ``skipped``, as :func:`decode_lines` does for native logs (issue 11 class 2).
    Each kept line is decoded twice (here and by the adapter): lenient reading is
    slower, never wrong.
    """
    for number, raw in lines:
        try:
            loads(raw)  # a lone "\ud83d" is read, as decode_object reads it (adv67 #6)
        except orjson.JSONDecodeError as exc:
            skipped.append(LogError(path, number, json_error(raw, exc.msg, exc.pos)))
            continue
        yield number, raw
