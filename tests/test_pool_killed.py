"""A pool worker killed from outside costs at most its trace, not the run (adv30 F3).

A cgroup OOM kill (SIGKILL) or a reaper's SIGTERM of one worker broke the whole
``ProcessPoolExecutor``: the run ended in ``internal error: BrokenProcessPool`` and no
trace was reported.  The work functions here kill their own process for one chosen
job, so which job's worker dies is known; no timing is asserted.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from compaction_audit.runtime import addrspace, isolated
from compaction_audit.runtime.pooled import run_pooled
from tests.logs import ROOT


def square_or_die(n: int, culprit: int, sig: int) -> int:
    """``n * n``, in a worker; the process auditing job ``culprit`` kills itself with
    ``sig`` every time (a trace too large for the container's memory)."""
    if n == culprit:
        os.kill(os.getpid(), sig)
    return n * n


def square_or_die_once(n: int, culprit: int, marker: str) -> int:
    """``n * n``; job ``culprit``'s process kills itself the first time only (a kill
    from outside that was not the trace's fault)."""
    if n == culprit and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return n * n


def _run(fn: Any, jobs: list[tuple[Any, ...]]) -> dict[int, Any]:
    got: dict[int, Any] = {}

    def done(i: int, result: Any) -> None:
        assert i not in got  # each job once
        got[i] = result

    run_pooled(2, fn, jobs, done, lambda i, exc: ("died", exc.code))
    return got


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_job_that_kills_its_worker_again_alone_is_the_one_that_died(sig: int) -> None:
    got = _run(square_or_die, [(n, 3, int(sig)) for n in range(7)])
    assert got == {0: 0, 1: 1, 2: 4, 3: ("died", -int(sig)), 4: 16, 5: 25, 6: 36}


def test_a_job_whose_worker_was_killed_once_keeps_its_result(tmp_path: Path) -> None:
    marker = str(tmp_path / "killed")
    got = _run(square_or_die_once, [(n, 2, marker) for n in range(6)])
    assert os.path.exists(marker)  # the worker was killed
    assert got == {0: 0, 1: 1, 2: 4, 3: 9, 4: 16, 5: 25}


def test_the_line_of_a_trace_whose_process_was_killed() -> None:
    sigkill = isolated.killed("big.jsonl", isolated.ChildDied(-9, b""))
    assert str(sigkill) == ("big.jsonl: the process auditing this trace was killed "
                            "(signal 9, SIGKILL); out of memory?")
    sigterm = isolated.killed("big.jsonl", isolated.ChildDied(-15, b""))
    assert str(sigterm) == ("big.jsonl: the process auditing this trace was killed "
                            "(signal 15, SIGTERM)")
    exited = isolated.killed("big.jsonl", isolated.ChildDied(3, b"ValueError: x\n"))
    assert "ended without a result (exit status 3: ValueError: x)" in str(exited)


def test_a_worker_killed_during_a_run_costs_no_trace(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``audit_paths`` with a pool (no address-space limit seen): once the first
    trace is reported, one worker is killed with SIGKILL; every trace is still
    audited, as without the kill (the old code raised BrokenProcessPool)."""
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: None)
    traces = [str(ROOT / "sample_logs" / name) for name in (
        "handwritten.jsonl", "delta-text.jsonl", "research-no-decay.jsonl",
        "faithfulness.jsonl", "handwritten.jsonl", "delta-text.jsonl",
        "research-no-decay.jsonl", "faithfulness.jsonl")]
    killed: list[int] = []

    def progress(done: int, total: int, path: str) -> None:
        if killed:
            return
        workers = [p for p in multiprocessing.active_children() if p.pid is not None]
        assert workers  # the pool's
        killed.append(workers[0].pid or 0)
        os.kill(killed[0], signal.SIGKILL)

    report = api.audit_paths(traces, jobs=2, progress=progress)
    assert killed
    assert report.errors == []
    assert [s.path for s in report.sessions] == traces
    alone = [api.audit(p) for p in traces[:4]]
    def codes(sessions: list[Any]) -> list[list[str]]:
        return [sorted(f.code for f in s.findings) for s in sessions]

    assert codes(report.sessions) == codes(alone) * 2


def test_a_trace_whose_process_is_killed_again_is_one_unreadable_line() -> None:
    """What ``audit_paths`` makes of a job that kills every process auditing it."""
    got: dict[int, Any] = {}
    run_pooled(2, square_or_die, [(n, 1, int(signal.SIGKILL)) for n in range(3)],
               got.__setitem__, lambda i, exc: isolated.killed(f"t{i}.jsonl", exc))
    assert got[0] == 0 and got[2] == 4
    assert isinstance(got[1], LogError)
    assert str(got[1]) == ("t1.jsonl: the process auditing this trace was killed "
                           "(signal 9, SIGKILL); out of memory?")
