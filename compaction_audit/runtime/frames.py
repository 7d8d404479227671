"""Messages between the audit and its helper processes, each checked on arrival.

The decoding helpers (:mod:`compaction_audit.io.parallel`), the text helper
(:mod:`compaction_audit.recall.texthelper`) and the embedding helper
(:mod:`compaction_audit.cosine.server`) send :mod:`marshal` bodies over pipes.  Each
body travels with its CRC-32 (:func:`zlib.crc32`, about 1 ms per MB), and the
receiver compares it before decoding: a message whose bytes are not the ones sent
raises :class:`Damaged`, which every receiver treats as the helper having failed
(the audit then does the helper's work itself, as it does when a helper dies).

Why: a pipe can hand the reader a stream with a stretch missing.  Seen on Linux
6.18 under a sampling profiler that stops the process with ptrace (``py-spy
record``, without ``--nonblocking``): a thread reading 24 MB from a child's pipe got
17.7 MB, with no error.  Unchecked, the decoding helper's batch then failed to decode
("bad marshal data", an internal error), and a loss that still decoded would have
been read as records.

A message lost whole passes its own CRC, so the CRC is chained (:class:`Chain`): each
message's is the CRC-32 of every body sent so far in its direction, continued from the
previous message's (``zlib.crc32(body, previous)``).  A message missing from the
stream makes the next one differ, and the receiver stops there (adv146 F9: a decoding
batch lost whole dropped 489 of 4,000 rounds in silence, and a text chunk lost whole
shifted every later text's discriminators).

A message of the helpers' own protocol (:func:`send`, :func:`receive`, :func:`read`)
is an 8-byte little-endian body length, the body's chained 4-byte CRC-32, then the
body.  Each direction of a pipe has its own :class:`Chain` at each end.
Standard library only: the helpers load this module without the package's
``__init__``.
"""

from __future__ import annotations

import marshal
import os
import select
import time
import zlib
from typing import IO, Any

HEAD = 12
"""Bytes before a body: its length (8) and its CRC-32 (4), little-endian."""


class Damaged(ValueError):
    """A message whose body is not what was sent (its CRC-32 differs)."""


class Chain:
    """The running CRC-32 of one direction of a pipe, at one end: the sender seals
    each body (:meth:`seal`), the receiver checks it (:meth:`check`), both in order."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0
        """The CRC-32 of every body so far (0: none yet)."""

    def seal(self, data: bytes) -> bytes:
        """The chained CRC-32 of the next body ``data``, as 4 little-endian bytes."""
        self.value = zlib.crc32(data, self.value)
        return self.value.to_bytes(4, "little")

    def check(self, data: bytes, expected: bytes) -> bytes:
        """``data`` when it is the next body: its chained CRC-32 is ``expected`` (4
        bytes, :meth:`seal`'s); else raises :class:`Damaged` (a body altered, or one
        before it lost whole) and the chain stays where it was."""
        value = zlib.crc32(data, self.value)
        if value.to_bytes(4, "little") != expected:
            raise Damaged("a helper's message arrived damaged, or after one lost (its "
                          "CRC-32 differs)")
        self.value = value
        return data


def encode(message: Any, chain: Chain) -> bytes:
    """``message`` framed as the next of ``chain``: :data:`HEAD` bytes, then its
    marshal body."""
    data = marshal.dumps(message)
    return len(data).to_bytes(8, "little") + chain.seal(data) + data


def send(stream: IO[bytes], message: Any, chain: Chain) -> None:
    """Write one message (:func:`encode`) to ``stream`` and flush it."""
    stream.write(encode(message, chain))
    stream.flush()


def _decode(head: bytes | None, body: bytes | None, chain: Chain) -> Any:
    if head is None or body is None:
        return None
    return marshal.loads(chain.check(body, head[8:]))


def read_exact(stream: IO[bytes], n: int) -> bytes | None:
    """``n`` bytes of a buffered ``stream``, None when it ends first; read 16 MiB at a
    time, so a damaged length asks for no more memory than the stream holds."""
    parts = []
    while n > 0:
        part = stream.read(min(n, 1 << 24))
        if not part:
            return None
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def read(stream: IO[bytes], chain: Chain) -> Any:
    """The next message of ``chain`` from a buffered ``stream``; None at the end of
    input (or a message cut short).  Raises :class:`Damaged` (a ``ValueError``), or
    what :func:`marshal.loads` raises (``ValueError``, ``EOFError``, ``TypeError``)."""
    head = stream.read(HEAD)
    if len(head) < HEAD:
        return None
    return _decode(head, read_exact(stream, int.from_bytes(head[:8], "little")), chain)


def _read_fd(fd: int, n: int, deadline: float | None) -> bytes | None:
    parts = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            return None
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def receive(fd: int, chain: Chain, deadline: float | None = None) -> Any:
    """The next message of ``chain`` from file descriptor ``fd``; None at the end of
    input, or when it is not whole by ``deadline`` (``time.monotonic``; None: no
    limit).  Raises as :func:`read` does."""
    head = _read_fd(fd, HEAD, deadline)
    if head is None:
        return None
    return _decode(head, _read_fd(fd, int.from_bytes(head[:8], "little"), deadline),
                   chain)
