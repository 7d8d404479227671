"""``--lenient`` keeps at most MAX_SKIPPED skipped records per trace; one more makes the
trace unreadable, exit 2, with a one-line FILE:LINE error (issue 11, class 4, adv11 F1).

Each skipped record kept its error (about 600 bytes) for the report, and a line of bad
JSON can be two bytes: 8 MB of ``x`` lines took 2.5 GB and 39 s, and the memory grew
with the file without a limit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io.load import load_session
from compaction_audit.io.native import read_native
from tests.gate_app import drift_records, run

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"
MAX_SKIPPED = 100_000  # compaction_audit.errors.MAX_SKIPPED, written out (see the last test)


def native_with_bad_lines(path: Path, bad: int) -> Path:
    """The drift session with ``bad`` lines of bad JSON after its session record."""
    lines = [json.dumps(r) for r in drift_records()]
    path.write_text("\n".join([lines[0], *["x"] * bad, *lines[1:]]) + "\n")
    return path


def claude_with_bad_lines(path: Path, bad: int) -> Path:
    """The Claude Code fixture with ``bad`` lines of bad JSON after its third line."""
    lines = (FIXTURES / "claude-session.jsonl").read_text().splitlines()
    path.write_text("\n".join([*lines[:3], *["x"] * bad, *lines[3:]]) + "\n")
    return path


@pytest.mark.parametrize("make", [native_with_bad_lines, claude_with_bad_lines])
def test_one_bad_record_past_the_cap_is_exit_2_at_its_line(
        tmp_path: Path, make: Callable[[Path, int], Path]) -> None:
    path = make(tmp_path / "t.jsonl", MAX_SKIPPED + 50)
    first_bad = 2 if make is native_with_bad_lines else 4
    result = run("audit", str(path), "--lenient")
    assert result.exit_code == 2
    assert result.stderr == (f"compaction-audit: {path}:{first_bad + MAX_SKIPPED}: more than "
                             f"{MAX_SKIPPED:,} bad records (--lenient): too damaged to audit\n")


def test_the_reader_stops_at_the_cap(tmp_path: Path) -> None:
    path = native_with_bad_lines(tmp_path / "t.jsonl", MAX_SKIPPED + 50)
    with pytest.raises(LogError) as info:
        read_native(str(path), lenient=True)
    assert type(info.value).__name__ == "TooDamaged" and info.value.line == MAX_SKIPPED + 2


def test_at_the_cap_the_trace_is_read(tmp_path: Path) -> None:
    """MAX_SKIPPED bad lines are still skipped and counted (the verdict says so)."""
    path = native_with_bad_lines(tmp_path / "t.jsonl", MAX_SKIPPED)
    session, fmt = load_session(str(path), lenient=True)
    assert fmt == "native" and len(session.skipped) == MAX_SKIPPED
    assert session.rounds["round"].to_list() == [0, 1, 2, 3, 4]


def test_the_cap_is_the_documented_one() -> None:
    from compaction_audit import errors

    assert errors.MAX_SKIPPED == MAX_SKIPPED


def test_the_decoding_helper_sends_bad_lines_in_batches(tmp_path: Path) -> None:
    """A large file is decoded by helper processes (io/parallel.py) that send their
    messages in batches; a bad line added nothing to a batch's size, so a file of bad
    lines went as one batch at the end of each half: 34 MB of ``x`` lines took more
    than 300 s and 2 GB even in strict mode, where the error is at line 2."""
    from compaction_audit.io import reduce as records

    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"x\n" * 10_000)
    frames: list[bytes] = []
    records.reduce_lines(str(path), frames.append, batch_bytes=1 << 12)
    assert len(frames) > 100  # about 66 bytes a bad line: a batch every ~62 lines


@pytest.mark.parametrize("lenient", [False, True])
def test_a_large_file_of_bad_lines_stops_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               lenient: bool) -> None:
    from compaction_audit.io import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 10)  # read by the helpers
    path = native_with_bad_lines(tmp_path / "t.jsonl", MAX_SKIPPED + 50)
    assert parallel.wanted(str(path))
    result = run("audit", str(path), *(["--lenient"] if lenient else []))
    assert result.exit_code == 2
    assert result.stderr == (
        f"compaction-audit: {path}:{MAX_SKIPPED + 2}: more than {MAX_SKIPPED:,} bad "
        "records (--lenient): too damaged to audit\n" if lenient else
        f"compaction-audit: {path}:2: bad JSON: unexpected character, expected a JSON value\n")


def dependent_rejects(path: Path, rounds: int) -> Path:
    """One bad record (span X, tokens not a number) then ``rounds`` rounds retaining X:
    each is one dependent reject (a 64-byte line, about 1 KB kept per reject)."""
    session = {"type": "session", "schema": "compaction-audit/1", "session_id": "d",
               "budget_tokens": 10 ** 8}
    first = {"type": "round", "round": 0, "spans": [
        {"id": "X", "tokens": "bad", "text": "a"}, {"id": "Y", "tokens": 5, "text": "b"}],
        "retained": [["Y", 0.5]]}
    lines = [json.dumps(session), json.dumps(first)] + [
        json.dumps({"type": "round", "round": i, "retained": [["X", 0.5], ["Y", 0.5]]})
        for i in range(1, rounds + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("parallel_read", [False, True])
def test_dependent_rejects_are_capped_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          parallel_read: bool) -> None:
    """Dependent rejects were kept without a limit: 200,000 of them (13 MB) took 424 MB
    against 225 MB for the same trace without the bad record (adv12 F4).  One past the
    cap is exit 2 at its line, as for bad records, from either reader."""
    from compaction_audit import errors
    from compaction_audit.io import parallel

    monkeypatch.setattr(errors, "MAX_SKIPPED", 5)
    if parallel_read:
        monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 8)
    path = dependent_rejects(tmp_path / "t.jsonl", 20)
    assert parallel.wanted(str(path)) == parallel_read
    result = run("audit", str(path), "--lenient")
    assert result.exit_code == 2, result.stdout
    assert result.stderr == (f"compaction-audit: {path}:8: more than 5 dependent rejects "
                             "(--lenient): too damaged to audit\n")
    at_cap = dependent_rejects(tmp_path / "u.jsonl", 5)
    session, _ = load_session(str(at_cap), lenient=True)
    assert len(session.skipped) == 1 and len(session.dependent) == 5
