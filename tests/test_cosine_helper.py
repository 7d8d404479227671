"""The embedding helper process (cosine/server.py; issue 16, point 4, issue 14, item 4):
the same cosines as the audit's own process, and a helper that is dead, silent, slow or
wrong never stops the audit or changes a number: the audit does the work itself.

The stand-in helpers are small Python programs speaking (or not) the helper's protocol.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.cosine import embed, server
from tests.logs import ROOT

TEXTS = ["fix the unicode bug in the tokenizer", "lunch: soup and salad",
         "the parser splits words on spaces", "ünïcödé ☃ text with symbols 12345"]
QUERY = "fix the tokenizer's unicode handling"


def needs_model() -> None:
    embed.forget_model()
    if embed.load_model() is None:
        pytest.skip("the [embed] extra (wordllama) is not installed")


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    """No helper, model or early helper left over before or after a test."""
    embed.forget_model()
    while (early := server.take_early()) is not None:
        early.close()
    yield
    embed.forget_model()
    while (early := server.take_early()) is not None:
        early.close()


def _local(texts: list[str], query: str) -> list[float | None]:
    embed.forget_model()
    return embed.cosines(texts, query, embed.MODEL_NAME)


def _stub(program: str) -> server.Helper:
    """A :class:`server.Helper` around a stand-in process running ``program``."""
    process = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return server.Helper(process)


SILENT = "import time\ntime.sleep(600)\n"
"""A helper that never answers (and never reads)."""
_SEND = ("import marshal, sys, time, zlib\n"
         "chain = [0]\n"
         "def send(m):\n"
         "    body = marshal.dumps(m)\n"
         "    chain[0] = zlib.crc32(body, chain[0])\n"
         "    crc = chain[0].to_bytes(4, 'little')\n"
         "    sys.stdout.buffer.write(len(body).to_bytes(8, 'little') + crc + body)\n"
         "    sys.stdout.buffer.flush()\n")
"""A stand-in's ``send``, written out (runtime.frames: length, the CRC-32 chained over
the messages sent, marshal body)."""
READY_THEN_SILENT = _SEND + "send(('ready', 'model', ''))\ntime.sleep(600)\n"
"""Says it is ready, then neither reads nor answers."""
WRONG = (_SEND + "send(('ready', 'model', ''))\n"
         "head = sys.stdin.buffer.read(12)\n"
         "sys.stdin.buffer.read(int.from_bytes(head[:8], 'little'))\n"
         "send(('v', [0.5]))\n")  # one value, whatever the texts
"""Says it is ready, then answers with the wrong number of values."""


def test_the_helper_gives_the_audits_own_cosines_bit_for_bit() -> None:
    needs_model()
    texts = [*TEXTS, "x " * 9_000, "a" * 20_000]  # long ones: cut, many pieces
    cut = [t[:embed.TEXT_CHARS] for t in texts]
    here = _local(cut, QUERY)
    helper = server.Helper.start()
    assert helper is not None
    try:
        assert helper.ready() and helper.status == "model"
        assert helper.cosines(cut, QUERY) == here  # floats compared exactly
        assert helper.cosines(cut[:2], "lunch") == _local(cut[:2], "lunch")  # reused
    finally:
        helper.close()
    assert helper.process.poll() is not None and helper.status == "dead"


def test_the_audit_uses_the_helper_it_was_handed(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_model()
    monkeypatch.delenv(embed.ENV, raising=False)
    here = embed.cosines(TEXTS, QUERY)
    embed.forget_model()
    helper = server.Helper.start()
    assert helper is not None
    monkeypatch.setattr(server, "_early", [helper])
    assert embed.start_loading() is True
    assert embed.start_loading() is False  # one at a time
    assert embed.method() == embed.MODEL_NAME
    assert embed.cosines(TEXTS, QUERY) == here
    assert embed._load.cache_info().currsize == 0  # the model never loaded here
    embed.forget_model()
    assert helper.process.poll() is not None  # ended with the model


@pytest.mark.parametrize("same", [True, False])
def test_texts_sent_early_are_collected_by_the_rebuild(
        monkeypatch: pytest.MonkeyPatch, same: bool) -> None:
    """embed.prefetch sends the texts as cosines() will ask for them (cut, blanks left
    out); cosines() collects that answer, or, asked for other texts, reads it and asks
    again: the same values either way."""
    needs_model()
    monkeypatch.delenv(embed.ENV, raising=False)
    texts = [*TEXTS, "  ", "y " * 9_000]
    here = embed.cosines(texts, QUERY)
    embed.forget_model()
    helper = server.Helper.start()
    assert helper is not None
    monkeypatch.setattr(server, "_early", [helper])
    assert embed.start_loading() is True and embed.helper_waiting()
    asked: list[list[str]] = []
    request = helper.request

    def counted(t: list[str], q: str) -> None:
        if helper._pending is None:
            asked.append(t)
        request(t, q)

    monkeypatch.setattr(helper, "request", counted)
    assert embed.prefetch(texts if same else texts[:2], QUERY) is True
    assert embed.method() == embed.MODEL_NAME
    assert embed.cosines(texts, QUERY) == here
    assert len(asked) == (1 if same else 2)
    assert asked[-1] == [t[:embed.TEXT_CHARS] for t in texts if t.strip()]
    assert embed._load.cache_info().currsize == 0


def _until(check: Any, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


def test_waiting_says_whether_the_answer_has_begun_without_blocking() -> None:
    silent = _stub(READY_THEN_SILENT)
    answering = _stub(WRONG)
    try:
        assert not silent.waiting()  # nothing asked: nothing to wait for
        silent.request(TEXTS, QUERY)
        answering.request(TEXTS, QUERY)
        # its ready message is read by waiting(), which goes on saying True
        _until(lambda: silent.waiting() and silent.status == "model")
        started = time.monotonic()
        assert silent.waiting() and silent.waiting()
        assert time.monotonic() - started < 1.0
        _until(lambda: not answering.waiting())  # its answer has arrived
        assert answering.status == "model"
        assert answering.cosines(TEXTS, QUERY) is None  # read there: the wrong length
    finally:
        silent.close()
        answering.close()
    assert not silent.waiting()  # ended


def test_the_audit_works_while_the_helper_embeds_and_gets_the_same_cosines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    needs_model()
    monkeypatch.delenv(embed.ENV, raising=False)
    here = embed.cosines(TEXTS, QUERY)
    embed.forget_model()
    assert not embed.answer_pending()  # no helper
    helper = server.Helper.start()
    assert helper is not None
    monkeypatch.setattr(server, "_early", [helper])
    assert embed.start_loading() is True
    assert not embed.answer_pending()  # nothing asked yet
    assert embed.prefetch(TEXTS, QUERY) is True
    _until(lambda: not embed.answer_pending())
    assert embed.method() == embed.MODEL_NAME
    assert embed.cosines(TEXTS, QUERY) == here
    assert embed._load.cache_info().currsize == 0  # the model never loaded here


@pytest.mark.parametrize("case", ["dead", "silent", "ready-then-silent", "wrong"])
def test_a_failing_helper_leaves_the_work_to_the_audit(
        monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    needs_model()
    monkeypatch.delenv(embed.ENV, raising=False)
    # long texts: the request (about 800 KB) fills the pipe of a helper that never reads
    texts = [*TEXTS, *(f"{i} " + "word " * 3_000 for i in range(50))]
    here = embed.cosines(texts, QUERY)
    embed.forget_model()
    monkeypatch.setattr(server, "READY_SECONDS", 1.0)
    monkeypatch.setattr(server, "SECONDS_PER_CHAR", 0.0)
    if case == "dead":
        helper = _stub("pass")
        helper.process.wait()
    else:
        helper = _stub({"silent": SILENT, "ready-then-silent": READY_THEN_SILENT,
                        "wrong": WRONG}[case])
    monkeypatch.setattr(server, "_early", [helper])
    assert embed.start_loading() is True
    started = time.monotonic()
    assert embed.method() == embed.MODEL_NAME  # the helper's load, or this process's
    assert embed.cosines(texts, QUERY) == here
    assert time.monotonic() - started < 60  # bounded waits (1 s each here), not a hang
    assert embed._helper is None  # forgotten ...
    assert helper.process.poll() is not None  # ... and ended


def test_start_early_is_a_hint_for_one_file_with_texts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texted = tmp_path / "t.jsonl"
    texted.write_text('{"type": "round", "spans": [{"id": "a", "text": "hi"}]}\n')
    bare = tmp_path / "b.jsonl"
    bare.write_text('{"type": "round", "spans": [{"id": "a"}]}\n')
    monkeypatch.setattr(server, "wanted", lambda: True)
    started: list[object] = []

    class Fake:
        def close(self) -> None:
            pass

    def fake_start() -> Fake:
        started.append(Fake())
        return started[-1]  # type: ignore[return-value]

    monkeypatch.setattr(server.Helper, "start", staticmethod(fake_start))
    assert server.start_early([str(bare)]) is False  # no text in its start
    assert server.start_early([str(texted), str(texted)]) is False  # a pool's work
    assert server.start_early([str(tmp_path)]) is False  # a folder
    assert server.start_early(["-"]) is False  # standard input
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        assert server.start_early([str(tmp_path / "fifo")]) is False  # never opened
    assert started == []
    assert server.start_early([str(texted)]) is True
    assert server.start_early([str(texted)]) is False  # one is waiting already
    assert server.take_early() is started[0]
    assert server.take_early() is None  # handed once
    monkeypatch.setattr(server, "wanted", lambda: False)
    assert server.start_early([str(texted)]) is False


def test_no_helper_when_the_fallback_is_forced_or_one_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.ENV, "lexical")
    assert server.wanted() is False
    monkeypatch.setenv(embed.ENV, "auto")
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        assert server.wanted() is False


LAUNCHER = """\
import sys
from compaction_audit.cosine import server
{patch}
sys.argv = ["compaction-audit", "audit", "-f", "json", "--all", sys.argv[1]]
from compaction_audit.__main__ import run

run()
"""


def _cli(trace: Path, patch: str = "") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", LAUNCHER.format(patch=patch), str(trace)],
                          cwd=ROOT, capture_output=True, timeout=300)


def test_the_command_reports_the_same_with_or_without_the_helper(tmp_path: Path) -> None:
    needs_model()
    if not server.wanted():
        pytest.skip("no helper here (one CPU, or the fallback forced)")
    from compaction_audit.simulate.scale import write_scale_session

    trace = tmp_path / "t.jsonl"
    write_scale_session(trace, rounds=30, working_set=40, seed=3)
    # the early helper started (and used: numpy is never imported by the command)
    probe = _cli(trace, "import atexit\natexit.register(lambda: print("
                        "'numpy' in sys.modules, file=sys.stderr))")
    assert probe.stderr.splitlines()[-1] == b"False"
    without = _cli(trace, "server.wanted = lambda: False")
    assert probe.returncode == without.returncode
    assert probe.stdout == without.stdout and b'"query_cosine_rebuilt"' in probe.stdout


STUCK = """\
import sys, time
from pathlib import Path
from compaction_audit.cosine import server
READY = Path(sys.argv[2])
start = server.Helper.start
def stuck():
    helper = start()
    if helper is not None:
        part = READY.with_suffix(".part")  # whole or absent: the test polls for it
        part.write_text(str(helper.process.pid))
        part.rename(READY)
    return helper
server.Helper.start = staticmethod(stuck)
receive = server.receive
def slow(fd, chain, deadline=None):
    time.sleep(600)  # the helper is late: the command waits (bounded) for it
server.receive = slow
sys.argv = ["compaction-audit", "audit", "-q", sys.argv[1]]
from compaction_audit.__main__ import run

run()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
@pytest.mark.parametrize(("sig", "code", "group"), [
    (signal.SIGTERM, 143, False), (signal.SIGINT, 130, True)])
def test_a_signal_ends_the_command_waiting_for_its_helper(
        tmp_path: Path, sig: int, code: int, group: bool) -> None:
    if not server.wanted():
        pytest.skip("no helper here (one CPU, the fallback forced, or no model)")
    from compaction_audit.simulate.scale import write_scale_session

    trace = tmp_path / "t.jsonl"
    write_scale_session(trace, rounds=30, working_set=40, seed=3)
    ready = tmp_path / "ready"
    main = subprocess.Popen([sys.executable, "-c", STUCK, str(trace), str(ready)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    helper = 0
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and main.poll() is None and not ready.exists():
            time.sleep(0.05)
        if not ready.exists():
            pytest.skip("the helper did not start in time (machine too busy)")
        helper = int(ready.read_text())
        time.sleep(2.0)  # the command is past its imports, waiting for the helper
        if group:
            os.killpg(main.pid, sig)
        else:
            main.send_signal(sig)
        assert main.wait(timeout=30) == code
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _alive(helper):
            time.sleep(0.1)
        assert not _alive(helper)
        assert main.stderr is not None
        err = main.stderr.read()
        assert b"Traceback" not in err, err
    finally:
        if main.poll() is None:
            main.kill()
            main.wait()
        if helper and _alive(helper):
            os.kill(helper, signal.SIGKILL)
        if main.stderr is not None:
            main.stderr.close()


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
