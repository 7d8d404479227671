"""The Ray engine's scheduling, on a stand-in for Ray (no cluster): largest trace first,
the memory each worker asks for, smaller workers as the traces get smaller, a dead
worker's trace retried once and then reported unreadable (issue 14, item 5).

The stand-in runs calls in the order they were made and TraceAuditor for real on
small files; tests/test_fleet_ray.py runs the real thing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit.errors import LogError
from compaction_audit.fleet.plan import BASE_MEMORY
from compaction_audit.fleet.ray_engine import _Run
from compaction_audit.report.model import SessionReport
from tests.gate_app import clean_records
from tests.logs import dump

GIB = 1 << 30


class RayError(Exception):
    pass


class RayTaskError(RayError):
    pass


class ActorDiedError(RayError):
    pass


class Ref:
    def __init__(self, call: Any) -> None:
        self.call = call


class FakeRay:
    """What _Run uses of ``ray``: one node of ``memory`` bytes and ``cpus`` CPUs;
    ``dies``: paths whose call kills its worker (each time)."""

    class exceptions:  # ray.exceptions
        RayError = RayError
        RayTaskError = RayTaskError

    def __init__(self, cpus: int, memory: int, dies: set[str] = frozenset()) -> None:
        self.cpus, self.memory, self.dies = cpus, memory, dies
        self.started: list[int] = []  # memory asked by each worker, in order
        self.calls: list[tuple[int, str]] = []  # (worker number, path), in order
        self.killed: list[int] = []

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": float(self.cpus), "memory": float(self.memory)}

    def nodes(self) -> list[dict[str, Any]]:
        return [{"Alive": True, "Resources": {"CPU": self.cpus, "memory": self.memory}}]

    def remote(self, cls: type) -> Any:
        fake = self

        class Handle:
            def __init__(self, number: int, instance: Any) -> None:
                self.number, self.dead = number, False
                self.ready = _Method(lambda: instance.ready())
                self.audit = _Method(self._audit)
                self._instance = instance

            def _audit(self, index: int, path: str) -> Any:
                fake.calls.append((self.number, path))
                if self.dead or path in fake.dies:
                    self.dead = True
                    raise ActorDiedError(f"The actor died unexpectedly\nworker {self.number}")
                return self._instance.audit(index, path)

        class ActorClass:
            def options(self, *, num_cpus: int, memory: int, max_restarts: int) -> Any:
                assert num_cpus == 1 and max_restarts == 0

                class Bound:
                    def remote(self, *args: Any) -> Handle:
                        fake.started.append(memory)
                        return Handle(len(fake.started) - 1, cls(*args))

                return Bound()

        return ActorClass()

    def wait(self, refs: list[Ref], num_returns: int, timeout: float) -> tuple[list[Ref], list]:
        return refs[:1], refs[1:]  # the oldest call finishes first

    def get(self, ref: Ref) -> Any:
        return ref.call()

    def kill(self, handle: Any) -> None:
        self.killed.append(handle.number)


class _Method:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def remote(self, *args: Any) -> Ref:
        return Ref(lambda: self.fn(*args))


@pytest.fixture
def traces(tmp_path: Path) -> list[str]:
    """Five small traces; their sizes are given to the run, not read from the files."""
    return [str(dump(clean_records(), tmp_path / f"{name}.jsonl"))
            for name in ("a", "b", "c", "d", "e")]


def _run(fake: FakeRay, paths: list[str], sizes: dict[str, int],
         jobs: int | None = None) -> tuple[list[Any], list[tuple[int, str]]]:
    done: list[str] = []
    report = _Run(fake, paths, (None, False, None, None), jobs,
                  lambda _d, _t, path: done.append(path), sizes).run()
    results = [*report.sessions, *report.errors]
    assert sorted(done) == sorted(paths)  # progress once per trace
    return results, fake.calls


def test_largest_first_and_memory_by_size_class(traces: list[str]) -> None:
    a, b, c, d, e = traces
    # needs: 256 MiB + 8 x size -> class 4 GiB for a (3.4 GB), 512 MiB for the others
    sizes = {a: 400_000_000, b: 1_000, c: 3_000, d: 2_000, e: -1}
    fake = FakeRay(cpus=2, memory=64 * GIB)
    results, calls = _run(fake, traces, sizes)
    assert [path for _, path in calls] == [a, c, d, b, e]  # largest first
    assert all(isinstance(r, SessionReport) for r in results) and len(results) == 5
    # two workers of the largest class; each, idle once a is done and only small traces
    # are left, is replaced by one that asks for the least
    assert fake.started[:2] == [4 * GIB, 4 * GIB]
    assert fake.started[2:] == [BASE_MEMORY, BASE_MEMORY]
    assert calls[0][0] in (0, 1) and {w for w, _ in calls[1:]} <= {2, 3}
    assert sorted(fake.killed) == [0, 1, 2, 3]  # every worker ends with the run


def test_memory_asked_is_capped_at_the_largest_node(traces: list[str]) -> None:
    fake = FakeRay(cpus=1, memory=3 * GIB)
    _run(fake, traces[:1], {traces[0]: 10 * GIB})
    assert fake.started == [3 * GIB]


def test_workers_are_jobs_at_most_and_never_more_than_cpus(traces: list[str]) -> None:
    sizes = dict.fromkeys(traces, 100)
    fake = FakeRay(cpus=4, memory=64 * GIB)
    _run(fake, traces, sizes, jobs=3)
    assert len(fake.started) == 3
    fake = FakeRay(cpus=2, memory=64 * GIB)
    _run(fake, traces, sizes, jobs=8)
    assert len(fake.started) == 2


def test_a_dead_worker_is_replaced_and_its_trace_retried_once(traces: list[str]) -> None:
    a = traces[0]
    fake = FakeRay(cpus=1, memory=64 * GIB, dies={a})
    results, calls = _run(fake, traces, {a: 5_000, **dict.fromkeys(traces[1:], 100)})
    assert [path for _, path in calls].count(a) == 2  # tried twice, on two workers
    errors = [r for r in results if isinstance(r, LogError)]
    assert [str(e) for e in errors] == [
        f"{a}: the Ray worker auditing it died: The actor died unexpectedly"]
    assert sum(isinstance(r, SessionReport) for r in results) == 4


def test_a_cluster_that_stops_answering_is_one_line(traces: list[str]) -> None:
    """adv27 F5: the local raylet died (under ulimit -v), ``ray.wait`` raised
    ``OSError: Connection reset by peer``, and the command ended in "internal error"."""
    from compaction_audit.errors import UsageError

    class Lost(FakeRay):
        def wait(self, refs: list[Ref], num_returns: int, timeout: float
                 ) -> tuple[list[Ref], list]:
            raise OSError("Connection reset by peer")

    fake = Lost(cpus=1, memory=3 * GIB)
    with pytest.raises(UsageError) as caught:
        _Run(fake, traces[:2], (None, False, None, None), None, None,
             dict.fromkeys(traces[:2], 100)).run()
    assert str(caught.value) == (
        "the Ray cluster stopped answering (Connection reset by peer); under a memory "
        "limit (ulimit -v) Ray's object store may not fit: raise it, or audit without "
        "--engine ray")
    assert fake.killed == [0]  # the worker started is still killed



def test_a_bug_met_on_one_trace_is_its_line_and_the_rest_are_audited(
        traces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """adv66 #2: the worker caught only LogError, so a bug met on one trace ended the
    whole Ray run with one "internal error" line and no report, where the local pool
    gives that trace its line and audits the others."""
    from compaction_audit import api

    real = api.audit

    def buggy(path: str, *args: Any, **kwargs: Any) -> Any:
        if path == traces[2]:
            raise KeyError("injected bug")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(api, "audit", buggy)
    results, _ = _run(FakeRay(cpus=1, memory=64 * GIB), traces, dict.fromkeys(traces, 100))
    errors = [r for r in results if isinstance(r, LogError)]
    assert [e.path for e in errors] == [traces[2]]
    assert "internal error: KeyError: 'injected bug'" in str(errors[0])
    assert sum(isinstance(r, SessionReport) for r in results) == 4
