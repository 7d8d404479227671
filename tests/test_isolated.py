"""Under an address-space limit each trace is audited in a child of its own
(compaction_audit.runtime.isolated; adv19b F4, F5): two traces that fit one at a time aborted
the process that audited both (exit 134), and a shape heavier than the estimates
passed the checks and aborted."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from compaction_audit.runtime import addrspace, isolated
from tests.gate_app import drift_records
from tests.logs import dump


def _children_under_a_limit(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Set an address-space limit (as seen by the code) and return the list the path
    of each trace audited in a child is appended to."""
    started: list[str] = []
    real = isolated.audit_in_child

    def spy(path: str, *args: object) -> object:
        started.append(path)
        return real(path, *args)

    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    monkeypatch.setattr(isolated, "audit_in_child", spy)
    return started


def test_each_trace_is_audited_in_a_child_under_a_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = dump(drift_records(), tmp_path / "a.jsonl")
    b = dump(drift_records(), tmp_path / "b.jsonl")
    (tmp_path / "bad.jsonl").write_text("{\n")
    paths = [str(a), str(tmp_path / "bad.jsonl"), str(b)]
    here = api.audit_paths(paths, jobs=1)
    started = _children_under_a_limit(monkeypatch)
    apart = api.audit_paths(paths, jobs=2)  # one child at a time, whatever -j says
    assert started == paths
    assert [s.verdict() for s in apart.sessions] == [s.verdict() for s in here.sessions]
    assert [s.path for s in apart.sessions] == [str(a), str(b)]
    assert [str(e) for e in apart.errors] == [str(e) for e in here.errors]
    assert "bad.jsonl:1" in str(apart.errors[0])


@pytest.mark.parametrize(("code", "err", "message"), [
    (-signal.SIGABRT, b"memory allocation of 25690128 bytes failed\nstack backtrace:\n",
     "out of memory: auditing this trace needs more than the address-space limit of "
     "1,024 MiB (ulimit -v, RLIMIT_AS)"),
    (-signal.SIGKILL, b"", "out of memory: auditing this trace needs more than the "
     "address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),
    (1, b"memory allocation of 8 bytes failed\n", "out of memory: auditing this trace "
     "needs more than the address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),
    (1, b"Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: boom\n",
     "the process auditing this trace ended without a result (exit status 1: "
     "RuntimeError: boom) under the address-space limit of 1,024 MiB (ulimit -v, "
     "RLIMIT_AS)"),  # adv27 F3: the cause was hidden
    (1, b"thread 'tokio-rt-worker' panicked at instance.rs:347:60:\nPyObject pointer is "
     b"null\nstack backtrace:\n", "out of memory: auditing this trace needs more than the "
     "address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),  # adv27 F3
    (-signal.SIGSEGV, b"", "out of memory: auditing this trace needs more than the "  # adv22b F4
     "address-space limit of 1,024 MiB (ulimit -v, RLIMIT_AS)"),
])
def test_a_child_that_died_is_the_trace_s_one_line(
        code: int, err: bytes, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 30)
    died = isolated._died("t.jsonl", code, err)
    assert isinstance(died, LogError) and str(died) == f"t.jsonl: {message}"


def test_without_a_limit_nothing_is_isolated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = dump(drift_records(), tmp_path / "a.jsonl")
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: None)
    assert not isolated.wanted(str(a)) and not isolated.wanted("-")
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    assert isolated.wanted(str(a)) and isolated.wanted("-")


def test_standard_input_and_dev_fd_paths_are_read_by_the_child(tmp_path: Path) -> None:
    """adv22b F4: they were read in the command's own process, where orjson's fault on
    a failed allocation ended the command with SIGSEGV and no line.  The child is
    given this process's standard input, and the descriptor /dev/fd/N names."""
    a = dump(drift_records(), tmp_path / "a.jsonl")
    args = (None, False, None, None)  # settings, lenient, rules, severity
    here = api.audit_or_error(str(a), *args)
    assert not isinstance(here, LogError)
    with open(a, "rb") as fh:
        saved = os.dup(0)
        os.dup2(fh.fileno(), 0)
        try:
            piped = isolated.audit_in_child("-", *args)
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    with open(a, "rb") as fh:
        by_number = f"/dev/fd/{fh.fileno()}"
        named = isolated.audit_in_child(by_number, *args)
    link = tmp_path / "link.jsonl"  # adv23 F2: a link to /proc/thread-self/fd/N
    with open(a, "rb") as fh:
        link.symlink_to(f"/proc/thread-self/fd/{fh.fileno()}")
        linked = isolated.audit_in_child(str(link), *args)
    for got, path in ((piped, "-"), (named, by_number), (linked, str(link))):
        assert not isinstance(got, LogError), got
        assert got.path == path
        assert [(f.code, f.round) for f in got.findings] == [
            (f.code, f.round) for f in here.findings]
        assert got.verdict() == here.verdict()


def test_what_a_child_wrote_on_standard_error_is_passed_on_escaped_and_bounded(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = b"  ::error title=x::y\n\x1b[31mred\xff ##[add-mask]s\n"
    isolated._pass_on(err, 0)
    assert capsys.readouterr().err == ("  \\x3a:error title=x::y\n"
                                       "\\x1b[31mred\ufffd \\x23#[add-mask]s\n")
    isolated._pass_on(b"w\n", 70_000)
    assert capsys.readouterr().err == ("w\ncompaction-audit: 70,000 more byte(s) of the "
                                       "child's standard error left out\n")


def test_the_child_s_standard_error_file_has_no_name_while_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv22b F6: the file was named in the temporary folder until the child ended, so
    a command killed with SIGKILL (a CI runner's last word) left it behind."""
    import tempfile

    a = dump(drift_records(), tmp_path / "a.jsonl")
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    seen: list[list[str]] = []
    from multiprocessing.context import SpawnProcess

    start = SpawnProcess.start

    def spy(self: SpawnProcess) -> None:
        seen.append(os.listdir(spool))
        start(self)

    monkeypatch.setattr(SpawnProcess, "start", spy)
    got = isolated.audit_in_child(str(a), None, False, None, None)
    assert not isinstance(got, LogError)
    assert seen == [[]] and os.listdir(spool) == []


def test_a_report_is_rendered_in_a_child_under_a_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv22b F10: orjson 3.13 faults on a failed allocation, and the JSON report of
    four 0.7 MB traces with --all under ulimit -v ended the command with SIGSEGV and
    no line; the bytes are now made in a child, whose death is out of memory."""
    from compaction_audit.report.formats import FORMATS, RenderOptions

    a = dump(drift_records(), tmp_path / "a.jsonl")
    report = api.audit_paths([str(a)], jobs=1)
    render = FORMATS["json"].render
    assert render is not None
    opts = RenderOptions()
    here = render(report, opts)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    assert isolated.render_in_child(render, report, opts) == here
    with pytest.raises(MemoryError):
        isolated.render_in_child(os.abort)  # SIGABRT: what an allocation failure ends in
    with pytest.raises(MemoryError):  # adv23 F7: a MemoryError raised in the child was
        isolated.render_in_child(bytearray, 1 << 62)  # "internal error: RuntimeError"
    with pytest.raises(RuntimeError, match=r"ended without it \(exit status 3\)"):
        isolated.render_in_child(os._exit, 3)


def test_a_file_that_plainly_holds_no_log_is_told_without_a_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv26 E4: under a limit every file found was audited in a new interpreter, so
    40 empty files took 56 s (4 s without).  An empty or blank file, or one whose first
    byte is no JSON, SQLite or compression header, is told here, with the same error
    as without a limit; anything else still goes to a child."""
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_bytes(b"\n  \n")
    (tmp_path / "notes.txt").write_text("hello\n")
    good = dump(drift_records(), tmp_path / "a.jsonl")
    paths = [str(tmp_path / n) for n in ("empty.jsonl", "blank.jsonl", "notes.txt")]
    here = api.audit_paths([*paths, str(good)], jobs=1)
    started = _children_under_a_limit(monkeypatch)
    apart = api.audit_paths([*paths, str(good)], jobs=1)
    assert started == [str(good)]
    assert [str(e) for e in apart.errors] == [str(e) for e in here.errors]
    assert [str(e).replace(f"{tmp_path}/", "") for e in apart.errors] == [
        "empty.jsonl: no round records: nothing to audit",
        "blank.jsonl: no round records: nothing to audit",
        "notes.txt:1: bad JSON: unexpected character, expected a JSON value"]
