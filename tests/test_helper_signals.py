"""The helper processes that decode a large plain trace (io/parallel.py), and the one
that loads the embedding model (cosine/server.py), end with the command and print
nothing, and SIGTERM ends a single-trace audit with its one line and exit 143 (issue 11,
third pass, F6: a helper printed a ``BrokenPipeError`` traceback, and the command died
of SIGTERM without a word)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compaction_audit.cosine import server
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import ROOT
from tests.test_processes import _children, _gone, _running

LAUNCHER = """\
import sys, time
from pathlib import Path
from compaction_audit.io import parallel

READY = Path(sys.argv[2])
parallel.PARALLEL_MIN_BYTES = 0  # a small trace goes to the helpers too
messages = parallel._messages


def stalled(*args):
    # the command stops reading after a few records: the helpers fill their pipes and
    # wait, as they do while a slow main process checks a large trace
    for number, msg in enumerate(messages(*args)):
        if number == 20:
            READY.write_text("ready")
            time.sleep(600)
        yield msg


def drain_nothing(stream, out):  # the second helper's reader waits too
    time.sleep(600)


parallel._messages = stalled
parallel._drain = drain_nothing
sys.argv = ["compaction-audit", "audit", "-q", sys.argv[1]]
from compaction_audit.__main__ import run

run()
"""


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended since it was listed
        return b""


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("helpers") / "t.jsonl"
    # delta mode: no retained list for the helpers to reduce, so their frames are as
    # large as the lines and each half fills its pipe many times over
    write_scale_session(path, rounds=400, working_set=300, seed=1, retained=False)
    assert path.stat().st_size > 1 << 20
    return path


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="helpers need a second CPU")
@pytest.mark.parametrize(("sig", "code", "group"), [
    (signal.SIGTERM, 143, False), (signal.SIGKILL, -9, False),
    (signal.SIGINT, 130, True)])  # Ctrl-C reaches the whole process group
def test_helpers_end_with_the_command_without_a_word(
        tmp_path: Path, trace: Path, sig: int, code: int, group: bool) -> None:
    ready = tmp_path / "ready"
    main = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(trace), str(ready)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    helpers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and main.poll() is None and not ready.exists():
            time.sleep(0.05)
        if not ready.exists():
            main.kill()
            pytest.skip("the helpers did not start in time (machine too busy)")
        helpers = [k for k in _children(main.pid) if _running(k)]
        # the two decoding helpers, and the embedding helper the command starts before
        # loading the auditor when the trace has texts (cosine/server.py); the early
        # text helper too when a core looked idle then (recall/textearly.py: it
        # depends on the machine's load, so it is told apart, not counted)
        text = [k for k in helpers if b"texthelper" in _cmdline(k)]
        assert len(text) <= 1
        assert len(helpers) - len(text) == 2 + server.wanted()
        time.sleep(0.3)  # the helpers are blocked on their full pipes
        if group:
            os.killpg(main.pid, sig)
        else:
            main.send_signal(sig)
        assert main.wait(timeout=30) == code
        assert _gone(helpers), [k for k in helpers if _running(k)]
        assert main.stderr is not None
        err = main.stderr.read()  # the helpers' stderr too: it is the same pipe
        assert b"Traceback" not in err and b"Error" not in err, err
        if sig == signal.SIGTERM:
            assert err == b"compaction-audit: terminated by signal 15\n"
        if sig == signal.SIGINT:
            assert err == b"compaction-audit: interrupted\n"
    finally:
        for pid in helpers:  # only our own children, should the test fail
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        if main.poll() is None:
            main.kill()
            main.wait()
        if main.stderr is not None:
            main.stderr.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_helper_whose_parent_is_already_gone_ends_at_once() -> None:
    from compaction_audit.runtime.childproc import prelude

    done = subprocess.run([sys.executable, "-c", prelude(1) + "print('work')"],
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (1, b"", b"")
    done = subprocess.run([sys.executable, "-c", prelude(os.getpid()) + "print('work')"],
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"work\n", b"")


@pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="POSIX pipes")
def test_a_helper_writing_to_a_closed_pipe_ends_quietly_and_ignores_ctrl_c() -> None:
    from compaction_audit.runtime.childproc import prelude

    program = (prelude(os.getpid()) + "import signal, sys\n"
               "assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
               "while True:\n    sys.stdout.buffer.write(b'x' * 65536)\n")
    helper = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert helper.stdout is not None and helper.stderr is not None
    assert len(helper.stdout.read(1 << 16)) == 1 << 16
    helper.send_signal(signal.SIGINT)  # ignored: it keeps writing
    time.sleep(0.2)
    assert helper.poll() is None
    helper.stdout.close()  # the reader is gone: SIGPIPE, no BrokenPipeError
    assert helper.wait(timeout=30) == -signal.SIGPIPE
    assert helper.stderr.read() == b""
    helper.stderr.close()
