"""Open a log (plain, ``.gz``, ``.zst`` or ``-`` for stdin) and yield its lines.

Every reader and adapter goes through :func:`iter_lines`, so line numbers mean the
same thing everywhere: 1-based physical lines of the decompressed stream.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

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
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader, buffer_size=_CHUNK)
    return raw


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


def iter_objects(path: str) -> Iterator[tuple[int, object]]:
    """Yield ``(line_number, decoded_json)`` for every non-blank line of ``path``.

    Raises :class:`LogError` naming the line for bad JSON, and calls a last line that
    does not parse and lacks its newline "truncated".
    """
    for number, raw in iter_lines(path):
        try:
            yield number, orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            what = "truncated last line" if not raw.endswith(b"\n") else "bad JSON"
            raise LogError(path, number, f"{what}: {exc.msg}") from None
