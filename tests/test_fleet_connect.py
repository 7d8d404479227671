"""The Ray connect (compaction_audit/fleet/connect.py; issue 11, ninth adversarial
pass, F3): the address's shape checked before Ray sees it, the connect bounded in
time, Ray's native stderr kept off the user's, SIGTERM during the wait."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction_audit.errors import UsageError
from compaction_audit.fleet import connect
from compaction_audit.fleet.connect import check_address, connect_timeout, init_quietly
from compaction_audit.runtime.childproc import reap

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("address", "expected"), [
    ("auto", None), ("local", None),
    ("127.0.0.1:6379", ("127.0.0.1", 6379)),
    ("head-1.example.com:1", ("head-1.example.com", 1)),
    ("ray://10.0.0.7:10001", ("10.0.0.7", 10001)),
    ("[::1]:65535", ("::1", 65535)),
])
def test_addresses_of_the_documented_shapes_pass(address: str,
                                                  expected: tuple[str, int] | None) -> None:
    assert check_address(address) == expected


@pytest.mark.parametrize("address", [
    "x##[add-mask]y:1", "::error::x:1", "host", "host:0", "host:65536", "a b:1",
    "h:1\n", "http://h:1", "ray://h", "-h:1", "h:1:2", "AUTO", "", "h:+1",
])
def test_other_addresses_are_refused_before_ray(address: str) -> None:
    with pytest.raises(UsageError, match="expected auto, local, HOST:PORT or ray://"):
        check_address(address)


def test_connect_timeout_default_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(connect.TIMEOUT_ENV, raising=False)
    assert connect_timeout() == 60.0
    monkeypatch.setenv(connect.TIMEOUT_ENV, " 0.25 ")
    assert connect_timeout() == 0.25
    for bad in ("0", "-1", "abc", "nan", "inf"):
        monkeypatch.setenv(connect.TIMEOUT_ENV, bad)
        with pytest.raises(UsageError, match=connect.TIMEOUT_ENV):
            connect_timeout()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


def test_closed_port_is_an_error_at_once_without_ray() -> None:
    port = _closed_port()
    calls: list[int] = []
    start = time.monotonic()
    with pytest.raises(UsageError) as caught:
        init_quietly(lambda: calls.append(1), f"127.0.0.1:{port}", 30.0, str)
    assert time.monotonic() - start < 5
    assert str(caught.value).startswith(f"cannot connect to the Ray cluster at 127.0.0.1:{port}: ")
    assert calls == []  # Ray never called


def test_native_stderr_of_a_successful_connect_is_kept_off(
        capfd: pytest.CaptureFixture[str], silent_port: int) -> None:
    def noisy_init() -> None:  # what Ray's C++ and gRPC do: fd 2, also from a child
        os.write(2, b"##[add-mask]native noise\n")
        subprocess.run([sys.executable, "-c",
                        "import os; os.write(2, b'::error::child noise\\n')"], check=True)
        print("our own line", file=sys.stderr)

    before = sys.stderr
    init_quietly(noisy_init, f"127.0.0.1:{silent_port}", 30.0, str)
    assert sys.stderr is before
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert err == "our own line\nafter\n"


def test_a_failing_init_is_one_line_naming_the_address(
        capfd: pytest.CaptureFixture[str], silent_port: int) -> None:
    def failing_init() -> None:
        os.write(2, b"##[add-mask]native noise\n")
        raise ConnectionError("GCS said no\nsecond line")

    with pytest.raises(UsageError) as caught:
        init_quietly(failing_init, f"127.0.0.1:{silent_port}", 30.0,
                     lambda exc: str(exc).split("\n")[0])
    assert str(caught.value) == \
        f"cannot connect to the Ray cluster at 127.0.0.1:{silent_port}: GCS said no"
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"


def test_a_failed_connection_names_the_error_it_was_raised_from(silent_port: int) -> None:
    # Ray raises "Failed to connect" from the error that says why (usertest74 F10: a
    # cluster that asks for a token read as a network failure)
    class AuthenticationError(Exception):
        pass

    def refused() -> None:
        try:
            try:
                raise AuthenticationError("Authentication token is missing\nhow to set it")
            except AuthenticationError as auth:
                raise RuntimeError("handshake failed") from auth
        except RuntimeError as err:
            raise ConnectionError(f"Failed to connect to Ray cluster at {address}") from err

    def traced() -> None:  # Ray's GCS error quotes the last error's traceback
        trace = ('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
                 "ray.exceptions.AuthenticationError: Authentication token is missing\n")
        raise ConnectionError("Failed to connect to Ray cluster") from RuntimeError(
            f"Failed to connect to GCS. Last connection error: {trace}")

    address = f"127.0.0.1:{silent_port}"
    with pytest.raises(UsageError) as caught:
        init_quietly(refused, address, 30.0, lambda exc: str(exc).split("\n")[0])
    assert str(caught.value) == (
        f"cannot connect to the Ray cluster at {address}: Failed to connect to Ray cluster "
        f"at {address} (because: handshake failed) (because: Authentication token is "
        "missing)")
    with pytest.raises(UsageError) as caught:
        init_quietly(traced, address, 30.0, lambda exc: str(exc).split("\n")[0])
    assert str(caught.value).endswith(
        "Failed to connect to Ray cluster (because: Failed to connect to GCS. Last "
        "connection error: ray.exceptions.AuthenticationError: Authentication token is "
        "missing)")


_HANGING = """
import os, sys, threading
from compaction_audit.runtime import stopline
from compaction_audit.runtime.childproc import reap
from compaction_audit.errors import UsageError
from compaction_audit.fleet.connect import init_quietly
stopline.announce_interrupts()
def hang():
    os.write(2, b"##[add-mask]native noise\\n")
    print("waiting", flush=True)
    threading.Event().wait()
try:
    init_quietly(hang, sys.argv[1], float(sys.argv[2]), str)
except UsageError as exc:
    print("compaction-audit: " + str(exc), file=sys.stderr)
    sys.exit(2)
except KeyboardInterrupt:
    sys.exit(143)
"""


def _hanging(address: str, timeout: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _HANGING, address, str(timeout)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_connect_that_never_ends_is_cut_at_the_timeout(silent_port: int) -> None:
    proc = _hanging(f"127.0.0.1:{silent_port}", 0.5)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out == "waiting\n"
    assert err == (f"compaction-audit: cannot connect to the Ray cluster at 127.0.0.1:"
                   f"{silent_port}: no connection within 0.5 s (the limit: "
                   f"{connect.TIMEOUT_ENV})\n")


def test_sigterm_during_the_connect_says_so(silent_port: int) -> None:
    proc = _hanging(f"127.0.0.1:{silent_port}", 60)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "waiting\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert err == "compaction-audit: terminated by signal 15\n"


_SIGNAL_ON_THE_THREAD = """
import signal, sys, threading, time
from compaction_audit.runtime import stopline
from compaction_audit.fleet.connect import init_quietly
stopline.announce_interrupts()
def hang():  # the kernel may give a process-directed signal to any thread
    time.sleep(1)  # the main thread is waiting by now
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
    threading.Event().wait()
try:
    init_quietly(hang, None, 40.0, str)
except KeyboardInterrupt:
    sys.exit(143)
"""


def test_sigterm_taken_by_the_connect_thread_still_stops_the_wait_at_once() -> None:
    """A signal delivered to another thread does not interrupt the main thread's
    wait; Python runs the handler when the main thread wakes, so the wait is sliced
    (compaction_audit.runtime.waits).  One 40 s wait made this take 40 s."""
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-c", _SIGNAL_ON_THE_THREAD], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 143
    assert run.stderr == "compaction-audit: terminated by signal 15\n"
    assert time.monotonic() - start < 30


def test_ray_against_a_silent_cluster_ends_with_one_line(silent_port: int) -> None:
    pytest.importorskip("ray")
    env = {**os.environ, "PYTHONPATH": str(ROOT), connect.TIMEOUT_ENV: "3"}
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "compaction_audit", "audit", "sample_logs/handwritten.jsonl",
         "--engine", "ray", "--ray-address", f"127.0.0.1:{silent_port}", "-q"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr == (f"compaction-audit: cannot connect to the Ray cluster at "
                          f"127.0.0.1:{silent_port}: no connection within 3 s (the limit: "
                          f"{connect.TIMEOUT_ENV})\n")
    assert time.monotonic() - start < 60


def test_a_hostile_address_is_escaped_and_never_reaches_ray() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "compaction_audit", "audit", "sample_logs/handwritten.jsonl",
         "--engine", "ray", "--ray-address", "x##[add-mask]y:1", "-q"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=120)
    if "needs: pip install" in run.stderr:
        pytest.skip("Ray is not installed")
    assert run.returncode == 2
    assert len(run.stderr.splitlines()) == 1
    assert "##[" not in run.stderr
    assert "expected auto, local, HOST:PORT" in run.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_processes_the_connect_starts_outlive_it() -> None:
    """Ray starts its local cluster with PR_SET_PDEATHSIG, which fires when the
    *thread* that started a process ends: the connect's thread must not end while the
    cluster is used (adv10 F4: every local run lost its cluster and ended with exit 1).
    The child here arms the same signal, as Ray's processes do."""
    started: list[subprocess.Popen[bytes]] = []
    program = ("import ctypes, signal, sys, time\n"
               "ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)\n"
               "sys.stdout.write('armed\\n'); sys.stdout.flush(); time.sleep(120)\n")

    def init() -> None:
        child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE)
        started.append(child)
        assert child.stdout is not None
        assert child.stdout.readline() == b"armed\n"

    try:
        init_quietly(init, None, 30.0, str)
        time.sleep(1.0)  # a SIGKILL on the thread's end would have landed by now
        assert started[0].poll() is None
    finally:
        connect.release()
        reap(started)


def test_release_ends_the_kept_thread() -> None:
    assert connect.bounded(lambda: None, 10.0)
    kept = [t for t in __import__("threading").enumerate() if t.name == "ray-connect"]
    assert kept and all(t.is_alive() for t in kept)
    connect.release()
    for t in kept:
        t.join(10.0)
        assert not t.is_alive()


class _FakeRay:
    """What ray_engine.connect asks of Ray; ``init`` notes the working directory."""

    def __init__(self) -> None:
        self.cwd: list[str] = []

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: object) -> None:
        self.cwd.append(os.getcwd())
        assert os.listdir(".") == []  # nothing there to import


def test_ray_starts_in_a_private_empty_folder(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray puts the driver's working directory first on every worker's sys.path and a
    local cluster starts its workers in it: a polars.py in the checkout ran in every
    worker (adv10 F7).  ray.init now runs from a new empty folder, removed after."""
    from compaction_audit.fleet import ray_engine

    (tmp_path / "polars.py").write_text("raise SystemExit('planted')\n")
    monkeypatch.chdir(tmp_path)
    fake = _FakeRay()
    try:
        assert ray_engine.connect(fake, None)
    finally:
        connect.release()
    assert len(fake.cwd) == 1 and fake.cwd[0] != str(tmp_path)
    assert os.getcwd() == str(tmp_path)  # back where the command runs
    assert Path(fake.cwd[0]).is_dir()  # kept while the cluster may run in it
    ray_engine._remove_folders()
    assert not Path(fake.cwd[0]).exists()


def test_a_worker_takes_the_drivers_directory(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # relative trace paths mean what they mean to the driver
    from compaction_audit.fleet.worker import TraceAuditor

    monkeypatch.chdir(ROOT)
    TraceAuditor(None, False, None, None, str(tmp_path))
    assert os.getcwd() == str(tmp_path)
    TraceAuditor(None, False, None, None, str(tmp_path / "gone"))  # not on this node
    assert os.getcwd() == str(tmp_path)


def test_a_worker_that_lacks_the_drivers_store_variables_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # usertest74 F11: a cluster started without AWS_ENDPOINT_URL failed with instance
    # metadata's error, no word of where the object was read
    from compaction_audit.errors import LogError
    from compaction_audit.fleet import worker

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    names = worker.store_names()
    assert {"AWS_ENDPOINT_URL", "AWS_REGION"} <= set(names)
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # the worker's environment lacks it
    auditor = worker.TraceAuditor(None, False, None, None, None, names)

    def fails(path: str, *_: object) -> LogError:
        return LogError(path, 0, "cannot open: metadata said no")

    monkeypatch.setattr(auditor, "_audit", fails)
    assert str(auditor.audit(0, "s3://b/t.jsonl")[1]) == (
        "s3://b/t.jsonl: cannot open: metadata said no (read on a Ray worker whose "
        "environment lacks AWS_ENDPOINT_URL, which this command's has: set the object "
        "store's variables where the cluster runs)")
    assert str(auditor.audit(0, "local/t.jsonl")[1]) == \
        "local/t.jsonl: cannot open: metadata said no"  # a local path: no store read
    both = worker.TraceAuditor(None, False, None, None, None, ("AWS_REGION",))
    monkeypatch.setattr(both, "_audit", fails)
    assert str(both.audit(0, "s3://b/t.jsonl")[1]) == \
        "s3://b/t.jsonl: cannot open: metadata said no"  # the same variables: as it is


def test_a_failed_connect_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.fleet import ray_engine

    class Refused(_FakeRay):
        def init(self, **kwargs: object) -> None:
            super().init(**kwargs)
            raise ConnectionError("no cluster here")

    monkeypatch.chdir(tmp_path)
    fake = Refused()
    with pytest.raises(UsageError, match="cannot start a local Ray: no cluster here"):
        ray_engine.connect(fake, None)
    assert os.getcwd() == str(tmp_path)
    assert not Path(fake.cwd[0]).exists()


def test_the_clusters_messages_never_reach_stdout(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Ray's driver prints the cluster's error messages (a worker that died) from its
    listener thread through ``ray._private.worker.print_to_stdstream``, on stdout with
    a coloured ``(raylet)`` prefix: a ``-f json`` report there was no JSON any more
    (adv16b F5).  After the connect, a message as the listener hands it over is one
    escaped line on stderr (old code: two lines of ~1 KB on stdout, raw ESC)."""
    pytest.importorskip("ray")
    from ray._private import worker as ray_worker

    from compaction_audit.fleet import ray_engine

    monkeypatch.setattr(ray_worker, "print_to_stdstream", ray_worker.print_to_stdstream)
    monkeypatch.chdir(tmp_path)
    try:
        assert ray_engine.connect(_FakeRay(), None)
    finally:
        connect.release()
        ray_engine._remove_folders()
    capsys.readouterr()
    ray_worker.print_to_stdstream({  # what listen_error_messages does with one message
        "lines": ["A worker ::error::x \x1b[31m died or was killed while executing a task "
                  "by an unexpected system error. To troubleshoot, check the logs.\n"
                  "RayTaskError: Worker PID: 6011"],
        "pid": "raylet", "is_err": False}, ignore_prefix=False)
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("compaction-audit: ray: A worker ::error::x \\x1b[31m died or was killed "
                   "while executing a task by an unexpected system error.\n")  # 1st sentence


def test_ray_s_own_flag_is_named_as_this_command_s_option() -> None:
    """usertest67 #8: Ray's advice names ``ray start``'s ``--address`` flag."""
    def no_cluster() -> None:
        raise ConnectionError("Could not find any running Ray instance. Please specify the "
                              "one to connect to by setting `--address` flag or "
                              "`RAY_ADDRESS` environment variable.")

    with pytest.raises(UsageError) as caught:
        init_quietly(no_cluster, "auto", 30.0, str)
    assert str(caught.value) == (
        "cannot connect to the Ray cluster at auto: Could not find any running Ray "
        "instance. Please specify the one to connect to by setting --ray-address or "
        "`RAY_ADDRESS` environment variable.")
