"""Under an address-space limit (``ulimit -v``) an audit runs to its end or stops with
one line, exit 2: never a Rust abort (exit 134) or a traceback (adv15 F4, issue 11
class 5).  The command runs in a subprocess under ``RLIMIT_AS``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit import addrspace, api, isolated
from compaction_audit.errors import LogError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as on Linux")

TIMEOUT = 120


def _under(limit: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m compaction_audit ARGS`` with an address-space limit of ``limit``."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-m", "compaction_audit", *args],
                          preexec_fn=cap, capture_output=True, timeout=TIMEOUT, check=False)


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2.4 MB simulated trace of adv15 F4's shape (fact-rich span text, folds that
    drop facts), 200 rounds."""
    path = tmp_path_factory.mktemp("addrspace") / "provenance.jsonl"
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "simulate", "--preset",
                           "research-provenance", "--rounds", "200", "--spans-per-round",
                           "40", "-o", str(path)], capture_output=True, timeout=TIMEOUT,
                          check=False)
    assert done.returncode == 0, done.stderr
    return path


def test_an_audit_within_its_budget_runs_to_the_end(trace: Path) -> None:
    """At the limit the budget asks for, the audit completes.  Before: glibc reserved
    64 MiB of address space per thread's malloc arena (about 1 GB at 12 threads), and
    this audit aborted in Polars under 800 MB (exit 134, ``memory allocation of
    400128 bytes failed`` and a backtrace)."""
    size = trace.stat().st_size
    assert 2_000_000 < size < 3_000_000
    limit = addrspace.needed(size)
    assert limit < 800 << 20
    done = _under(limit, "audit", "-f", "json", str(trace))
    assert done.returncode == 0, done.stderr[-2000:]  # warnings only: not a crash
    assert done.stderr == b""
    report = json.loads(done.stdout)
    assert report["path"] == str(trace)
    assert report["verdict"].startswith("WARN: 0 error(s)")


def test_an_audit_past_its_budget_is_one_line_naming_the_file_and_limit(
        trace: Path) -> None:
    limit = addrspace.needed(trace.stat().st_size) - 1
    done = _under(limit, "audit", "-f", "json", str(trace))
    assert done.returncode == 2
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"compaction-audit: {trace}: needs about ")
    assert f"over the address-space limit of {limit / (1 << 20):,.0f} MiB" in lines[0]
    assert "Traceback" not in lines[0] and done.stdout == b""


def test_no_limit_no_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: None)
    addrspace.check(str(tmp_path))  # nothing to refuse
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 20)
    with pytest.raises(LogError) as info:
        addrspace.check(str(tmp_path))
    assert info.value.path == str(tmp_path) and info.value.line == 0
    addrspace.check("-")  # standard input: its size is not known before it is read


def test_a_memory_error_is_the_traces_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError while auditing a trace was ``internal error: MemoryError:``: now
    the trace is unreadable, with the limit named, and the other traces are audited."""
    path = str(tmp_path / "t.jsonl")

    def exhausted(*_args: object, **_kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(api, "audit", exhausted)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 3 << 30)
    monkeypatch.setattr(isolated, "wanted", lambda _path: False)  # in this process
    report = api.audit_paths([path], jobs=1)
    assert [str(e) for e in report.errors] == [
        f"{path}: out of memory: auditing this trace needs more than the address-space "
        "limit of 3,072 MiB (ulimit -v, RLIMIT_AS)"]


def _chain(folds: int) -> list[dict[str, object]]:
    """A native trace of ``folds`` chained folds, each over the one before and a new
    span: the closure holds about folds**2 / 2 (summary, leaf) pairs."""
    from tests.logs import rnd, session, spans

    records: list[dict[str, object]] = [session(session_id="chain", budget_tokens=10**6,
                                                max_depth=10**6)]
    records.append(rnd(0, spans=spans(("s0", 10))))
    below = "s0"
    for k in range(1, folds + 1):
        records.append(rnd(k, spans=spans((f"s{k}", 10)),
                           summaries=[{"id": f"f{k}", "tokens": 5,
                                       "children": [below, f"s{k}"]}],
                           evicted=[below]))
        below = f"f{k}"
    return records


def test_a_closure_past_the_limit_is_refused_before_the_work_it_would_take(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv18 F1: a 1.2 MB transcript of 1,000 chained compactions passed the check at
    the start (546 MiB) and then aborted under 977 MiB (exit 134, or a pyo3 panic):
    its closure's pairs grow with the square of the chain.  Once the closure is known
    it is checked too, at BYTES_PER_CLOSURE_PAIR per pair."""
    from compaction_audit import api
    from compaction_audit.closure import closure
    from compaction_audit.errors import LogError
    from tests.logs import dump

    path = dump(_chain(60), tmp_path / "chain.jsonl")
    session, _ = api.load(str(path))
    pairs = closure(session).frame.height - session.items.filter(
        session.items["kind"] == "span").height
    need = addrspace.BASE_BYTES + addrspace.BYTES_PER_CLOSURE_PAIR * pairs
    assert pairs == sum(k + 1 for k in range(1, 61))  # f_k reaches s0..s_k
    monkeypatch.setattr(addrspace, "BYTES_PER_INPUT_BYTE", 0)  # what the start allowed
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: need)
    closure(session)  # exactly at the limit: not over it
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: need - 1)
    with pytest.raises(LogError, match=f"{pairs:,} provenance pairs at 800 bytes each"):
        closure(session)
    monkeypatch.setattr(addrspace, "BYTES_PER_INPUT_BYTE", 10**6)  # the start's estimate
    closure(session)  # covers it: the closure is not checked twice over
    # standard input has no size for the start to check: the closure is (adv19b F1)
    monkeypatch.setattr(session, "path", "-")
    with pytest.raises(LogError, match=f"^-: needs about .* {pairs:,} provenance pairs"):
        closure(session)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: need)
    closure(session)
