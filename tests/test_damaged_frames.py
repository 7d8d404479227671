"""Messages from helper processes that arrive damaged or not at all (runtime/frames.py).

Seen under a profiler that stops the process with ptrace: a pipe handed the reader a
stream with a stretch missing, and the decoding helper's batch failed to decode (an
internal error).  Each message now travels with its CRC-32, chained over the messages
before it, so a message lost whole is caught too (adv146 F9); a damaged one is the
helper failing, and the audit does the helper's work itself, without waiting on the
helper (adv146 F1: a damaged text-helper message hung the audit).
"""

from __future__ import annotations

import io
import marshal
import os
import subprocess
import sys
import threading
import zlib
from typing import IO, Any

import pytest

from compaction_audit.cosine import server
from compaction_audit.io import parallel
from compaction_audit.io.native import read_native
from compaction_audit.recall import textwork
from compaction_audit.runtime import frames
from tests.logs import ROOT

MESSAGE = ("x", 3, ["span-1", 0.25], {"k": None})


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def test_a_message_reads_back_as_sent() -> None:
    sent, got = frames.Chain(), frames.Chain()
    stream = io.BytesIO(frames.encode(MESSAGE, sent) + frames.encode(("s",), sent))
    assert frames.read(stream, got) == MESSAGE
    assert frames.read(stream, got) == ("s",)
    assert frames.read(stream, got) is None  # the end of input
    assert got.value == sent.value


def test_a_message_through_a_pipe_reads_back_as_sent() -> None:
    read, write = os.pipe()
    sent, got = frames.Chain(), frames.Chain()
    with os.fdopen(write, "wb") as sink:
        frames.send(sink, MESSAGE, sent)
        frames.send(sink, ("s",), sent)
    try:
        assert frames.receive(read, got) == MESSAGE
        assert frames.receive(read, got) == ("s",)
        assert frames.receive(read, got) is None
    finally:
        os.close(read)


def test_the_head_is_length_then_the_chained_crc() -> None:
    body, second = marshal.dumps(MESSAGE), marshal.dumps(("s",))
    chain = frames.Chain()
    framed = frames.encode(MESSAGE, chain)
    assert framed[:8] == len(body).to_bytes(8, "little")
    assert framed[8:12] == zlib.crc32(body).to_bytes(4, "little") and framed[12:] == body
    # the second message's CRC is that of both bodies, the first one's continued
    assert frames.encode(("s",), chain)[8:12] == zlib.crc32(body + second).to_bytes(
        4, "little")


def _assert_damaged(data: bytes) -> None:
    """``data``, read as a stream's first message, is damaged: from a buffer and from
    a pipe."""
    with pytest.raises(frames.Damaged):
        frames.read(io.BytesIO(data), frames.Chain())
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    try:
        with pytest.raises(frames.Damaged):
            frames.receive(read, frames.Chain())
    finally:
        os.close(read)


def test_a_message_lost_whole_makes_the_next_one_damaged() -> None:
    sent = frames.Chain()
    first, second = frames.encode(MESSAGE, sent), frames.encode(("s",), sent)
    _assert_damaged(second)  # the first never came
    got = frames.Chain()  # the stream whole: both read
    assert frames.read(io.BytesIO(first + second), got) == MESSAGE


@pytest.mark.parametrize("at", [frames.HEAD, frames.HEAD + 7, -1, 9])  # body; CRC itself
def test_a_flipped_bit_is_damage(at: int) -> None:
    framed = frames.encode(MESSAGE, frames.Chain())
    _assert_damaged(_flip(framed, at % len(framed)))


def test_a_message_cut_short_is_the_end_of_input() -> None:
    framed = frames.encode(MESSAGE, frames.Chain())
    assert frames.read(io.BytesIO(framed[:-1]), frames.Chain()) is None
    assert frames.read(io.BytesIO(framed[:5]), frames.Chain()) is None


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
    framed = frames.encode(MESSAGE, frames.Chain())
    damaged = (1 << 60).to_bytes(8, "little") + framed[8:]
    assert frames.read(io.BytesIO(damaged), frames.Chain()) is None
    assert frames.read_exact(io.BytesIO(b"abc"), 3) == b"abc"
    assert frames.read_exact(io.BytesIO(b"abc"), 4) is None


class _Lost:
    """A decoding helper's stdout that loses its first batch whole, head and body."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.lost = False

    def read(self, n: int) -> bytes:
        if not self.lost and n == 8:  # the first batch's head: skip it and its body
            head = self._stream.read(8)
            size = int.from_bytes(head[:4], "little")
            if not size >> 31:  # not the last batch
                self._stream.read(size)
                self.lost = True
                return self._stream.read(8)
            return head
        return self._stream.read(n)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def test_a_decoding_helpers_batch_lost_whole_reads_the_file_alone(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # adv146 F9: the rounds of a lost batch were dropped with no error
    path = tmp_path / "many.jsonl"
    lines = ['{"type":"session","schema":"compaction-audit/1","session_id":"s"}']
    lines += [f'{{"type":"round","round":{r},"spans":[{{"id":"a{r}","tokens":{r + 1},'
              f'"text":"{"x" * 200}"}}]}}' for r in range(3000)]  # 3 batches or more
    path.write_text("\n".join(lines) + "\n")
    alone = read_native(str(path))
    lost: list[_Lost] = []

    class Popen(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if not lost:
                lost.append(_Lost(self.stdout))  # type: ignore[arg-type]
                self.stdout = lost[0]  # type: ignore[assignment]

    monkeypatch.setattr(subprocess, "Popen", Popen)
    with pytest.raises(parallel.HelperFailed):
        parallel.read_parallel(str(path), False)
    assert lost[0].lost
    lost.clear()
    monkeypatch.setattr(parallel, "wanted", lambda _path: True)
    session = read_native(str(path))
    assert lost[0].lost and session.rounds.height == 3000
    for name in ("rounds", "items", "edges", "membership", "events", "salience"):
        assert getattr(session, name).equals(getattr(alone, name)), name


STUCK = ("import marshal, sys, zlib\n"
         "body = marshal.dumps(('x', 1, b''))\n"
         "bad = (zlib.crc32(body) ^ 1).to_bytes(4, 'little')\n"
         "out = sys.stdout.buffer\n"
         "out.write(len(body).to_bytes(8, 'little') + bad + body)\n"
         "out.write(bytes(1 << 20))\n"  # blocks once the pipe is full: no one reads it
         "out.flush()\n")
"""A text helper whose first message is damaged, which then writes 1 MB and never
reads its input."""


def test_a_text_helper_whose_message_is_damaged_is_ended_not_waited_for() -> None:
    # adv146 F1: the reader stopped at the damage, the helper blocked on its full
    # output, the audit's next message blocked on the helper's full input, and close()
    # waited for that message before ending the helper: a hang
    process = subprocess.Popen([sys.executable, "-c", STUCK], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    helper = textwork._Helper(process, [("Keep port 8080.", "user")])
    helper.post(("g", ["x" * (1 << 20)]))  # 1 MB it never reads
    closing = threading.Thread(target=helper.close, daemon=True)
    closing.start()
    closing.join(120)
    if closing.is_alive():  # leave nothing behind
        process.kill()
    assert not closing.is_alive()
    assert helper.done == 0 and helper.chunks == []  # the damaged chunk is not used
    assert process.poll() is not None
