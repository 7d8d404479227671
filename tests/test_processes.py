"""Worker processes never outlive the audit and never exceed the cores (issue 11,
item 7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compaction_audit import api
from compaction_audit.runtime import procs
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import ROOT

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_jobs_never_exceed_the_cores_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "available_cores", lambda: 2)
    assert api.worker_count(40, 10) == 2
    assert api.worker_count(None, 10) == 2
    assert api.worker_count(40, 1) == 1
    assert api.worker_count(1, 10) == 1
    monkeypatch.setattr(api, "available_cores", lambda: 8)
    assert api.worker_count(40, 5) == 5
    assert api.worker_count(None, 5) == 2
    if hasattr(os, "sched_getaffinity"):
        assert procs.available_cores() == len(os.sched_getaffinity(0))


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("procs")
    paths = []
    for seed in range(4):
        path = folder / f"t{seed}.jsonl"
        write_scale_session(path, rounds=300, working_set=300, seed=seed)
        paths.append(str(path))
    return paths


def _hangup_default() -> None:
    """SIGHUP as a terminal leaves it: a test suite started under ``nohup`` passes its
    ignored SIGHUP on, and the command then leaves it ignored, as it should."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start_with_workers(traces: list[str]) -> tuple[subprocess.Popen[bytes], list[int]]:
    main = subprocess.Popen([sys.executable, "-m", "compaction_audit", "audit", "-j", "2",
                             *traces, *traces], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_hangup_default)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and main.poll() is None:
        kids = [k for k in _children(main.pid) if _running(k)]
        if len(kids) >= 3:  # the resource tracker and two workers
            return main, kids
        time.sleep(0.05)
    main.kill()
    main.wait()
    pytest.skip("the pool did not start in time (machine too busy)")


def _gone(pids: list[int], seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_running(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


@linux_only
@pytest.mark.parametrize(("sig", "code", "group"), [
    (signal.SIGTERM, 143, False), (signal.SIGKILL, -9, False),
    (signal.SIGINT, 130, True),  # Ctrl-C reaches the whole process group
    (signal.SIGHUP, 129, False)])  # as SIGTERM (adv19b O1)
def test_the_workers_end_with_the_main_process(traces: list[str], sig: int,
                                               code: int, group: bool) -> None:
    main, kids = _start_with_workers(traces)
    try:
        if group:
            time.sleep(1.5)  # past the workers' interpreter start-up, which Python's own
            os.killpg(main.pid, sig)  # SIGINT handling would end with a fatal error
        else:
            main.send_signal(sig)
        assert main.wait(timeout=30) == code
        assert _gone(kids), [k for k in kids if _running(k)]
        assert main.stderr is not None
        err = main.stderr.read()
        if sig == signal.SIGKILL and (b"resource_tracker" in err or err.rstrip().endswith(
                b"EOFError: Ran out of input")):
            # after a SIGKILL nothing of ours runs; multiprocessing's resource tracker
            # (stdlib, sharing the stderr) may still report the pool's semaphores,
            # with its own traceback on a loaded machine, and a worker still reading
            # its start data from the killed parent (spawn's bootstrap, before any code
            # of ours) ends with EOFError: not outputs of ours (CI under load)
            err = b""
        assert b"Traceback" not in err
        if sig in (signal.SIGTERM, signal.SIGHUP):
            assert err == f"compaction-audit: terminated by signal {int(sig)}\n".encode()
    finally:
        for pid in kids:  # only our own children, should the test fail
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        if main.stderr is not None:
            main.stderr.close()


def _blocked_signals() -> set[int]:
    return {int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])}


@linux_only
def test_workers_start_with_ctrl_c_blocked_and_the_parent_keeps_it() -> None:
    """A Ctrl-C reaches the whole process group: a worker still starting up must not
    get it (it would print a KeyboardInterrupt traceback), the parent must."""
    from compaction_audit.runtime.procs import submit_all, worker_pool

    before = _blocked_signals()
    with worker_pool(2) as pool:
        (future,) = submit_all(pool, _blocked_signals, [()])
        in_worker = future.result(timeout=60)
        assert signal.SIGINT in in_worker
        # SIGTERM, blocked while the worker started (its start data is written whole),
        # is unblocked by the worker's initializer
        assert signal.SIGTERM not in in_worker
        assert _blocked_signals() == before  # the mask is restored in the parent
    assert signal.SIGINT not in before


def test_a_pool_worker_knows_it_is_one_and_this_process_is_not() -> None:
    from compaction_audit.runtime.childproc import in_worker_process
    from compaction_audit.runtime.procs import submit_all, worker_pool

    assert not in_worker_process()
    with worker_pool(1) as pool:
        (future,) = submit_all(pool, in_worker_process, [()])
        assert future.result(timeout=60) is True


def test_a_ctrl_c_anywhere_in_a_command_ends_with_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Typer would turn a KeyboardInterrupt raised outside the pool (start-up, report
    printing) into a silent exit 130; every command says why it stopped."""
    from compaction_audit.commands.common import interruptible
    from compaction_audit.runtime import stopline
    from compaction_audit.runtime.procs import Terminated

    def interrupted() -> None:
        raise KeyboardInterrupt

    def terminated() -> None:
        raise Terminated(15)

    for command, code, line in ((interrupted, 130, "interrupted"),
                                (terminated, 143, "terminated by signal 15")):
        stopline._said.clear()  # the line is written once per process
        with pytest.raises(SystemExit) as stop:
            interruptible(command)()
        assert stop.value.code == code
        assert capsys.readouterr().err == f"compaction-audit: {line}\n"



_CAUGHT_ELSEWHERE = """
import os, signal, sys, time
import compaction_audit.__main__ as entry
from compaction_audit.runtime import stopline
def caught_by_others():
    try:  # SIGTERM while typer parses (it exits 130), or inside Ray, whose core
        os.kill(os.getpid(), signal.SIGTERM)  # worker re-raises a plain
        time.sleep(30)  # KeyboardInterrupt
    except KeyboardInterrupt:
        raise {exit} from None
def cli_main():
    if sys.argv[1] == "interruptible":
        from compaction_audit.commands.common import interruptible
        interruptible(caught_by_others)()
    caught_by_others()
entry._run = lambda: (stopline.announce_interrupts(), cli_main())
entry.run()
"""


@pytest.mark.parametrize(("where", "exit"), [
    ("typer", "SystemExit(130)"),
    ("interruptible", "KeyboardInterrupt()"),
])
def test_a_sigterm_caught_as_something_else_still_ends_143(where: str, exit: str) -> None:
    """The status follows the signal whose line was written, whoever catches the
    interrupt last: a SIGTERM during typer's parsing, or under ``--engine ray``
    (whose core worker turns a handler's exception into a plain KeyboardInterrupt),
    ended with exit 130, and under Ray with the line "interrupted" (adv16b F3)."""
    run = subprocess.run([sys.executable, "-c", _CAUGHT_ELSEWHERE.format(exit=exit), where],
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stderr) == (143, "compaction-audit: terminated by signal 15\n")


def test_the_stop_line_is_written_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The SIGINT handler writes the line as the signal arrives (typer would exit 130
    silently while parsing); the handlers that unwind later do not repeat it."""
    from compaction_audit.runtime import stopline

    stopline._said.clear()
    with pytest.raises(KeyboardInterrupt):
        stopline._on_sigint(signal.SIGINT, None)
    stopline.say_stopped()
    assert capsys.readouterr().err == "compaction-audit: interrupted\n"
    stopline._said.clear()


@linux_only
def test_a_signal_landing_on_another_thread_waits_for_the_submissions() -> None:
    """The mask of submit_all holds for the main thread only: a SIGINT the kernel
    hands to another thread (the model loader, the pool's manager) made Python raise
    KeyboardInterrupt in the main thread in the middle of a worker's start (its
    EOFError traceback under load). The submissions now all finish first, then the
    signal is raised."""
    import threading

    go = threading.Event()

    def other_thread() -> None:  # started before submit_all: SIGINT is not blocked here
        go.wait(10)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=other_thread)
    sender.start()
    submitted: list[int] = []

    class Pool:
        def submit(self, fn: object, n: int) -> int:
            if n == 0:
                go.set()
                sender.join(10)
                time.sleep(0.05)  # bytecodes run here: the handler would have fired
            submitted.append(n)
            return n

    with pytest.raises(KeyboardInterrupt):
        procs.submit_all(Pool(), print, [(0,), (1,), (2,)])  # type: ignore[arg-type]
    assert submitted == [0, 1, 2]


_IN_CLASS_CREATION = """
import os, signal, sys
import compaction_audit.__main__ as entry
from compaction_audit.runtime import stopline
SIG = getattr(signal, sys.argv[1])
def make_a_class():  # the signal lands while a class's descriptors get their names
    class Named:
        def __set_name__(self, owner, name):
            os.kill(os.getpid(), SIG)
    class Owner:
        field = Named()
def cli_main():
    from compaction_audit.cli import main
    sys.argv[1:] = ["rules"]
    import compaction_audit.cli as cli
    cli._invoke = make_a_class
    main()
entry._run = lambda: (stopline.announce_interrupts(), cli_main())
entry.run()
"""


@pytest.mark.parametrize(("sig", "code", "line"), [
    ("SIGTERM", 143, "terminated by signal 15"), ("SIGINT", 130, "interrupted")])
def test_a_signal_during_class_creation_ends_with_its_line_only(sig: str, code: int,
                                                                 line: str) -> None:
    """adv22b F5: Python 3.11 wraps an exception raised in ``__set_name__`` in a
    RuntimeError, so the stop line was followed by "internal error: RuntimeError"."""
    run = subprocess.run([sys.executable, "-c", _IN_CLASS_CREATION, sig], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stderr) == (code, f"compaction-audit: {line}\n")


@pytest.mark.parametrize(("files", "cpus"), [
    ({"cpu.max": "200000 100000\n"}, 2),
    ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
    ({"cpu.max": "50000 100000\n"}, 1),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({"cpu.max": "garbage"}, None),
    ({}, None),
])
def test_the_cgroup_quota_caps_the_cores(tmp_path: Path, files: dict[str, str],
                                         cpus: int | None) -> None:
    """adv22b O4: -j looked at the affinity mask only, so a pod limited to one CPU on a
    64-core node started 64 workers."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert procs.cgroup_cpus(str(tmp_path)) == cpus
    cores = procs.available_cores(str(tmp_path / "none"))  # no quota: the mask
    assert procs.available_cores(str(tmp_path)) == (cores if cpus is None else min(cores, cpus))
