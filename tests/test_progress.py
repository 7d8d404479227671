"""Progress of a single large trace: on a terminal only (issue 13, section 2)."""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.commands import progress
from tests.gate_app import drift_records
from tests.logs import dump

LINUX_PROC = os.path.exists("/proc/self/io")


def shown(out: io.StringIO, text: str, seconds: float = 20.0) -> bool:
    """Wait until the bar, refreshed by its own thread, has drawn ``text`` into
    ``out`` (a busy machine may delay a refresh well past ``POLL_SECONDS``)."""
    deadline = time.monotonic() + seconds
    while text not in out.getvalue():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_nothing_on_stderr_when_it_is_not_a_terminal(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", 0)  # every trace is "large"
    path = dump(drift_records(), tmp_path / "t.jsonl")
    result = CliRunner().invoke(app, ["audit", str(path), "-q"])
    assert result.exit_code == 1 and result.stderr == ""


def test_wanted_only_for_one_large_regular_file_on_a_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = dump(drift_records(), tmp_path / "t.jsonl")
    size = path.stat().st_size
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", size)
    assert progress.wanted([str(path)]) == size
    assert progress.wanted([str(path), str(path)]) is None  # several: the traces bar
    assert progress.wanted(["-"]) is None
    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", size + 1)
    assert progress.wanted([str(path)]) is None
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", 0)
    assert progress.wanted([str(path)]) is None


@pytest.mark.skipif(not LINUX_PROC, reason="bytes read come from /proc (Linux)")
def test_meter_counts_the_bytes_this_process_reads(tmp_path: Path) -> None:
    data = tmp_path / "blob"
    data.write_bytes(b"x" * 3_000_000)
    meter = progress.ReadMeter(3_000_000)
    assert meter.read() is not None and meter.read() < 100_000
    with open(data, "rb", buffering=0) as fh:
        fh.read(1_500_000)
        half = meter.read()
        fh.read()
    assert half is not None and 1_500_000 <= half < 1_600_000
    assert meter.read() == 3_000_000  # capped at the size, and it stays there


@pytest.mark.skipif(not LINUX_PROC, reason="bytes read come from /proc (Linux)")
def test_bar_shows_bytes_read_and_the_phase(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "trace.jsonl"
    data.write_bytes(b"x" * 2_000_000)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.01)
    with progress.single_trace_progress(str(data), 2_000_000, console):
        with open(data, "rb", buffering=0) as fh:
            fh.read(1_000_000)
            assert shown(out, "reading trace.jsonl")
            fh.read()
        assert shown(out, "running the rules")
    text = out.getvalue()
    assert "reading trace.jsonl" in text and "running the rules" in text
    assert "/2.0 MB" in text


def test_rounds_done_are_counted_by_the_readers(tmp_path: Path) -> None:
    from compaction_audit.io.meter import rounds_applied
    from compaction_audit.io.native import read_native

    path = dump(drift_records(), tmp_path / "t.jsonl")
    rounds = sum(1 for r in drift_records() if r.get("type") == "round")
    before = rounds_applied()
    session = read_native(str(path))
    assert session.n_rounds == rounds
    assert rounds_applied() - before == rounds


def test_bar_shows_the_rounds_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.io.native import read_native

    path = dump(drift_records(), tmp_path / "trace.jsonl")
    rounds = sum(1 for r in drift_records() if r.get("type") == "round")
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.01)
    with progress.single_trace_progress(str(path), path.stat().st_size, console):
        assert shown(out, "0 rounds")  # before the reading
        read_native(str(path))
        assert shown(out, f"{rounds} rounds")
    text = out.getvalue()
    assert "0 rounds" in text  # before the reading
    assert f"{rounds} rounds" in text  # every round of the trace, counted as read


def test_a_file_name_in_the_bar_is_shown_literally_never_as_markup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 (third pass, F8): a discovered name like ``[link=...]x[blink red]y`` was
    rich markup in the bar, drawn as an OSC 8 hyperlink and blinking text."""
    name = "[link=https:evil.example]click[blink red]me.jsonl"
    data = tmp_path / name
    data.write_bytes(b"x" * 1000)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.01)
    with progress.single_trace_progress(str(data), 1000, console):
        assert shown(out, "reading ")
    text = out.getvalue()
    assert "\x1b]8" not in text  # no hyperlink
    assert "\x1b[5" not in text and ";5m" not in text  # no blink
    assert f"reading {name}" in text
