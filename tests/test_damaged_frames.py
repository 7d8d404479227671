"""Messages from helper processes that arrive damaged (runtime/frames.py).

Seen under a profiler that stops the process with ptrace: a pipe handed the reader a
stream with a stretch missing, and the decoding helper's batch failed to decode (an
internal error).  Each message now travels with its CRC-32; a damaged one is the
helper failing, and the audit does the helper's work itself.
"""

from __future__ import annotations

import io
import marshal
import os
import subprocess
import sys
from typing import IO, Any

import pytest

from compaction_audit.cosine import server
from compaction_audit.io import parallel
from compaction_audit.io.native import read_native
from compaction_audit.runtime import frames
from tests.logs import ROOT

MESSAGE = ("x", 3, ["span-1", 0.25], {"k": None})


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def test_a_message_reads_back_as_sent() -> None:
    stream = io.BytesIO(frames.encode(MESSAGE) + frames.encode(("s",)))
    assert frames.read(stream) == MESSAGE
    assert frames.read(stream) == ("s",)
    assert frames.read(stream) is None  # the end of input


def test_a_message_through_a_pipe_reads_back_as_sent() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "wb") as sink:
        frames.send(sink, MESSAGE)
    try:
        assert frames.receive(read) == MESSAGE
        assert frames.receive(read) is None
    finally:
        os.close(read)


def test_the_head_is_length_then_crc() -> None:
    body = marshal.dumps(MESSAGE)
    framed = frames.encode(MESSAGE)
    assert framed[:8] == len(body).to_bytes(8, "little")
    assert framed[8:12] == frames.crc(body) and framed[12:] == body


@pytest.mark.parametrize("at", [frames.HEAD, frames.HEAD + 7, -1, 9])  # body; CRC itself
def test_a_flipped_bit_is_damage(at: int) -> None:
    framed = frames.encode(MESSAGE)
    damaged = _flip(framed, at % len(framed))
    with pytest.raises(frames.Damaged):
        frames.read(io.BytesIO(damaged))
    read, write = os.pipe()
    os.write(write, damaged)
    os.close(write)
    try:
        with pytest.raises(frames.Damaged):
            frames.receive(read)
    finally:
        os.close(read)


def test_a_message_cut_short_is_the_end_of_input() -> None:
    framed = frames.encode(MESSAGE)
    assert frames.read(io.BytesIO(framed[:-1])) is None
    assert frames.read(io.BytesIO(framed[:5])) is None


class _Altered:
    """A helper's stdout whose first message body has one letter changed on the way."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.altered = False

    def read(self, n: int) -> bytes:
        data = self._stream.read(n)
        if not self.altered and n > 8:  # a body
            for at in range(len(data) // 2, len(data)):
                if 0x61 <= data[at] <= 0x78:  # a..x: a letter of a key, an id or a text
                    self.altered = True
                    return data[:at] + bytes([data[at] + 1]) + data[at + 1:]
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def test_a_decoding_helpers_damaged_batch_reads_the_file_alone(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    path = str(ROOT / "sample_logs" / "handwritten.jsonl")
    alone = read_native(path)
    altered: list[_Altered] = []

    class Popen(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if not altered:  # the first helper's stream
                altered.append(_Altered(self.stdout))  # type: ignore[arg-type]
                self.stdout = altered[0]  # type: ignore[assignment]

    monkeypatch.setattr(subprocess, "Popen", Popen)  # what parallel.py calls
    with pytest.raises(parallel.HelperFailed):
        parallel.read_parallel(path, False)
    assert altered[0].altered
    altered.clear()
    monkeypatch.setattr(parallel, "wanted", lambda _path: True)
    session = read_native(path)  # tried the helpers, then read alone
    assert altered[0].altered
    for name in ("rounds", "items", "edges", "membership", "events", "salience"):
        assert getattr(session, name).equals(getattr(alone, name)), name
    assert capfd.readouterr().err == ""


def test_an_embedding_helper_whose_message_is_damaged_is_not_used() -> None:
    # it says it is ready, but the CRC-32 is not its body's: the audit embeds itself
    program = ("import marshal, sys, time, zlib\n"
               "body = marshal.dumps(('ready', 'model', ''))\n"
               "crc = (zlib.crc32(body) ^ 1).to_bytes(4, 'little')\n"
               "sys.stdout.buffer.write(len(body).to_bytes(8, 'little') + crc + body)\n"
               "sys.stdout.buffer.flush()\n"
               "time.sleep(600)\n")
    process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    helper = server.Helper(process)
    try:
        assert not helper.ready(timeout=60)
        assert helper.status == "dead"
    finally:
        helper.close()


def test_a_damaged_length_asks_for_no_more_than_the_stream_holds() -> None:
    # a length of 2**60 bytes in front of a short body: the end of input, not a
    # MemoryError from reading 2**60 bytes at once
    framed = frames.encode(MESSAGE)
    damaged = (1 << 60).to_bytes(8, "little") + framed[8:]
    assert frames.read(io.BytesIO(damaged)) is None
    assert frames.read_exact(io.BytesIO(b"abc"), 3) == b"abc"
    assert frames.read_exact(io.BytesIO(b"abc"), 4) is None
