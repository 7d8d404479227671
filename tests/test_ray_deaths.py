"""Worker deaths on ``--engine ray``, with a stand-in for Ray that runs each worker's
calls in the order sent (as an actor does) and kills a worker on a trace named
``kill``: only the trace it was auditing pays for the death (adv53: a healthy trace
queued behind one that killed its worker twice was reported dead too)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from compaction_audit import __version__
from compaction_audit.errors import LogError
from compaction_audit.fleet import connect
from compaction_audit.fleet.ray_engine import _Run


class RayError(Exception):
    pass


class RayTaskError(RayError):
    pass


class _Exceptions:
    RayError, RayTaskError, RaySystemError = RayError, RayTaskError, OSError


class _Handle:
    def __init__(self, ray: FakeRay) -> None:
        self.ray, self.calls, self.dead = ray, [], False
        self.ready = _Method(self, "ready")
        self.audit = _Method(self, "audit")


class _Method:
    def __init__(self, handle: _Handle, name: str) -> None:
        self.handle, self.name = handle, name

    def remote(self, *args: Any) -> tuple[Any, ...]:
        ref = (self.name, self.handle, next(self.handle.ray.ids), *args)
        if self.name == "audit":
            self.handle.calls.append(ref)
        return ref


class _Actor:
    def __init__(self, ray: FakeRay) -> None:
        self.ray = ray

    def options(self, **_: Any) -> _Actor:
        return self

    def remote(self, *_: Any) -> _Handle:
        return _Handle(self.ray)


class FakeRay:
    """What :class:`_Run` calls of Ray.  ``wait`` gives the last ref that is done (the
    order Ray gives is not the order sent), where a worker's call is done when it is
    the first of its calls (it runs one at a time) or its worker is dead."""

    exceptions = _Exceptions

    def __init__(self) -> None:
        self.ids = itertools.count()
        self.sent: list[str] = []  # paths, in the order audited

    def remote(self, _cls: Any) -> _Actor:
        return _Actor(self)

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 1}

    def nodes(self) -> list[dict[str, Any]]:
        return [{"Alive": True, "Resources": {"memory": 1 << 34}}]

    def kill(self, handle: _Handle) -> None:
        handle.dead = True

    def _done(self, ref: tuple[Any, ...]) -> bool:
        name, handle = ref[0], ref[1]
        if name == "ready" or handle.dead:
            return True
        if handle.calls[0] is ref:
            if "kill" in ref[4]:
                handle.dead = True
            return True
        return False

    def wait(self, refs: list[Any], num_returns: int, timeout: float) -> tuple[list, list]:
        assert refs, "nothing in flight and traces left: the run would wait forever"
        done = [ref for ref in refs if self._done(ref)]
        return done[-1:], []

    def get(self, ref: tuple[Any, ...]) -> Any:
        name, handle = ref[0], ref[1]
        if name == "ready":
            return __version__, 1
        if handle.dead:
            raise RayError("A worker died or was killed while executing a task. " + "x" * 900)
        handle.calls.remove(ref)
        self.sent.append(ref[4])
        return ref[3], LogError(ref[4], 0, "audited")


def audit(paths: list[str]) -> tuple[dict[str, str], list[str]]:
    ray = FakeRay()
    sizes = {p: 1000 - k for k, p in enumerate(paths)}  # largest first: in this order
    run = _Run(ray, paths, (), None, None, sizes)
    run.run()
    results = {p: r.message for p, r in zip(paths, run.results, strict=True)
               if isinstance(r, LogError)}
    return results, ray.sent


DIED = ("the Ray worker auditing it died: A worker died or was killed while executing "
        "a task.")


def test_a_trace_queued_behind_a_killer_is_audited(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    results, sent = audit(["kill.jsonl", "x.jsonl"])
    assert results == {"kill.jsonl": DIED, "x.jsonl": "audited"}
    assert sent == ["x.jsonl"]
    # one short line for the retry, naming the trace
    assert capsys.readouterr().err == (
        "compaction-audit: ray: the worker auditing kill.jsonl died (A worker died or "
        "was killed while executing a task.); auditing it again on a new worker\n")


def test_healthy_traces_are_audited_once_each() -> None:
    results, sent = audit(["a.jsonl", "b.jsonl", "c.jsonl"])
    assert results == dict.fromkeys(["a.jsonl", "b.jsonl", "c.jsonl"], "audited")
    assert sorted(sent) == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_two_killers_each_pay_for_their_own_deaths() -> None:
    results, _ = audit(["kill-1.jsonl", "kill-2.jsonl", "x.jsonl"])
    assert results == {"kill-1.jsonl": DIED, "kill-2.jsonl": DIED, "x.jsonl": "audited"}


def test_rays_own_message_is_its_first_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    connect._say_cluster_message({"lines": [
        "A worker died or was killed while executing a task by an unexpected system "
        "error. To troubleshoot the problem, check the logs. Worker ID: " + "f" * 900]})
    connect._say_cluster_message({"lines": ["y" * 300]})
    assert capsys.readouterr().err == (
        "compaction-audit: ray: A worker died or was killed while executing a task by an "
        "unexpected system error.\n"
        "compaction-audit: ray: " + "y" * 200 + "...\n")
