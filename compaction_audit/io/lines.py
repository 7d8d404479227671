"""Open a log (plain, ``.gz``, ``.zst`` or ``-`` for stdin) and yield its lines.

Every reader and adapter goes through :func:`iter_lines`, so line numbers mean the
same thing everywhere: 1-based physical lines of the decompressed stream.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson
import zstandard

from compaction_audit.errors import LogError

_CHUNK = 1 << 20


def open_binary(path: str) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing ``.gz`` and ``.zst`` transparently.

    ``-`` is standard input.  Raises :class:`LogError` (line 0) when the file cannot be
    opened.
    """
    if path == "-":
        return sys.stdin.buffer
    try:
        if path.endswith(".gz"):
            return cast(IO[bytes], gzip.open(path, "rb"))
        raw = Path(path).open("rb")  # noqa: SIM115  (the caller closes the stream)
    except OSError as exc:
        raise LogError(path, 0, f"cannot open: {exc.strerror or exc}") from None
    if path.endswith(".zst"):
        return io.BufferedReader(_ZstdReader(raw), buffer_size=_CHUNK)
    return raw


class _ZstdReader(io.RawIOBase):
    """Decompress a ``.zst`` stream of one or more frames, and fail on a truncated one.

    zstandard's ``stream_reader`` ends quietly at a frame cut short, which would drop
    the rest of a log without a word; here the end of input inside a frame raises
    ``ZstdError`` ("truncated"), which :func:`iter_lines` reports with its line.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._buf = b""
        self._pos = 0
        self._in_frame = False
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._pos >= len(self._buf) and not self._done:
            chunk = self._raw.read(_CHUNK)
            if not chunk:
                self._done = True
                if self._in_frame:
                    raise zstandard.ZstdError("truncated zstd stream: the last frame is cut short")
                break
            self._buf, self._pos = self._feed(chunk), 0
        n = min(len(b), len(self._buf) - self._pos)
        b[:n] = self._buf[self._pos:self._pos + n]
        self._pos += n
        return n

    def _feed(self, data: bytes) -> bytes:
        out = []
        while data:
            out.append(self._obj.decompress(data))
            self._in_frame = not self._obj.eof
            if not self._obj.eof:
                break
            data = self._obj.unused_data
            self._obj = self._dctx.decompressobj()
        return b"".join(out)

    def close(self) -> None:
        self._raw.close()
        super().close()


def iter_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every non-blank line of ``path``.

    Line numbers are 1-based.  A last line without a trailing newline is yielded as is;
    the JSON decoder reports it as truncated if it does not parse.  Raises
    :class:`LogError` for unreadable or corrupt (bad gzip/zstd) files.
    """
    stream = open_binary(path)
    number = 0
    try:
        for raw in stream:
            number += 1
            if raw.strip():
                yield number, raw
    except (OSError, EOFError, zstandard.ZstdError) as exc:
        raise LogError(path, number + 1, f"cannot read: {exc}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def decode_lines(path: str, lines: Iterable[tuple[int, bytes]], lenient: bool,
                 skipped: list[LogError]) -> Iterator[tuple[int, Any]]:
    """Decode ``(line, raw)`` pairs with orjson, yielding ``(line, object)``.

    Bad JSON raises :class:`LogError` naming the line ("truncated last line" when the
    line lacks its newline); in ``lenient`` mode the error is appended to ``skipped``
    and the line passed over.
    """
    for number, raw in lines:
        try:
            yield number, orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            what = "truncated last line" if not raw.endswith(b"\n") else "bad JSON"
            err = LogError(path, number, f"{what}: {exc.msg}")
            if not lenient:
                raise err from None
            skipped.append(err)
