"""Auditing many traces: directories, parallel workers, the summary table, exit codes."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.commands.audit import effective_options, run_audit
from compaction_audit.discover import discover
from compaction_audit.errors import LogError
from compaction_audit.report.model import Report
from tests.gate_app import clean_records, drift_records, run
from tests.logs import SAMPLES, dump, rnd, spans


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """traces/clean.jsonl, traces/drift.jsonl and traces/sub/warn.jsonl (a silent drop:
    one warning) under the working directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces" / "sub").mkdir(parents=True)
    dump(clean_records(), tmp_path / "traces" / "clean.jsonl")
    dump(drift_records(), tmp_path / "traces" / "drift.jsonl")
    dump([rnd(0, spans=spans(("a", 1), ("b", 1)), retained=[["a", 0.1], ["b", 0.1]]),
          rnd(1, retained=[["a", 0.1]])], tmp_path / "traces" / "sub" / "warn.jsonl")
    return tmp_path


def summary_rows(out: str) -> dict[str, list[str]]:
    """Rows of the rich summary table: trace -> the other cells."""
    rows = {}
    for line in out.split("Summary", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip("│┃").split("│")]
        if len(cells) > 5 and cells[0].startswith("traces/"):
            rows[cells[0]] = cells[1:]
    return rows


def test_directory_detail_then_summary_and_worst_exit(traces: Path) -> None:
    result = run("audit", "traces", "--jobs", "1")
    assert result.exit_code == 1
    out = result.stdout
    assert out.count("Series at a glance") == 3
    assert out.index("traces/sub/warn.jsonl") < out.index("Summary")
    rows = summary_rows(out)
    assert rows == {
        "traces/clean.jsonl": ["2", "0", "0", "0", "-", "-", "PASS"],
        "traces/drift.jsonl": ["5", "4", "1", "1", "-", "-", "FAIL"],
        "traces/sub/warn.jsonl": ["2", "0", "1", "0", "-", "-", "WARN"],
    }
    assert "exit 1: 3 trace(s), 1 reach --fail-on error" in out


def test_summary_only(traces: Path) -> None:
    result = run("audit", "traces", "--summary", "--jobs", "1", "--fail-on", "warning")
    assert result.exit_code == 1
    assert "Series at a glance" not in result.stdout
    assert "exit 1: 3 trace(s), 2 reach --fail-on warning" in result.stdout


@pytest.mark.parametrize(("args", "code"), [
    (["traces/clean.jsonl", "traces/sub"], 0),
    (["traces/clean.jsonl", "traces/sub", "--fail-on", "warning"], 1),
    (["traces/*.jsonl", "--fail-on", "never"], 0),
])
def test_exit_code_is_the_worst(traces: Path, args: list[str], code: int) -> None:
    assert run("audit", *args, "--jobs", "1").exit_code == code


def test_an_unreadable_trace_is_counted_and_hides_nothing(traces: Path) -> None:
    (traces / "traces" / "broken.jsonl").write_text('{"type": "round", "round": "x"}\n')
    result = run("audit", "traces", "--format", "json", "--jobs", "2")
    assert result.exit_code == 2  # unreadable input is an input error
    doc = json.loads(result.stdout)
    assert [s["path"] for s in doc["sessions"]] == [
        "traces/clean.jsonl", "traces/drift.jsonl", "traces/sub/warn.jsonl"]
    assert [e["path"] for e in doc["errors"]] == ["traces/broken.jsonl"]
    assert doc["summary"]["unreadable"] == 1 and doc["summary"]["traces"] == 4
    text = run("audit", "traces", "--summary", "--jobs", "1").stdout
    assert "UNREADABLE" in text
    assert "exit 2: 4 trace(s), 1 reach --fail-on error, 1 unreadable" in text


def test_one_unreadable_file_is_still_a_one_line_error(traces: Path) -> None:
    result = run("audit", "traces/missing.jsonl")
    assert result.exit_code == 2
    assert result.stderr == ("compaction-audit: traces/missing.jsonl: cannot open: "
                             "No such file or directory\n")


def test_parallel_equals_sequential_in_a_stable_order(traces: Path) -> None:
    paths = [*discover(["traces"]), "traces/missing.jsonl"]
    calls: list[tuple[int, int, str]] = []
    parallel = api.audit_paths(paths, jobs=2, progress=lambda *a: calls.append(a))
    sequential = api.audit_paths(paths, jobs=1)

    def shape(r: Report) -> list[Any]:
        return [(s.path, [(f.code, f.round, f.line, f.severity, f.message) for f in s.findings])
                for s in r.sessions] + [str(e) for e in r.errors]

    assert shape(parallel) == shape(sequential)
    assert [s.path for s in parallel.sessions] == paths[:3]
    assert sorted(c[2] for c in calls) == sorted(paths)
    assert [c[0] for c in calls] == [1, 2, 3, 4] and {c[1] for c in calls} == {4}


def test_stdin_is_read_in_the_main_process(traces: Path) -> None:
    data = (traces / "traces" / "drift.jsonl").read_bytes()
    result = run("audit", "-", "traces/clean.jsonl", "--format", "json", "--jobs", "2",
                 input=data)
    doc = json.loads(result.stdout)
    assert [s["path"] for s in doc["sessions"]] == ["-", "traces/clean.jsonl"]
    assert result.exit_code == 1


def test_log_errors_cross_process_boundaries() -> None:
    err = pickle.loads(pickle.dumps(LogError("a.jsonl", 3, "bad JSON", "round")))
    assert (err.path, err.line, err.message, err.field) == ("a.jsonl", 3, "bad JSON", "round")
    assert str(err) == "a.jsonl:3: bad JSON (round)"


def test_progress_bar_only_on_a_terminal(traces: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def fake(paths: list[str], *args: Any, progress: Any = None, **kwargs: Any) -> Report:
        seen.append(progress is not None)
        if progress is not None:
            progress(1, 2, paths[0])
        return Report([])

    monkeypatch.setattr(api, "audit_paths", fake)
    eff = effective_options(isolated=True)
    run_audit(["a", "b"], eff, False, 1)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    run_audit(["a", "b"], eff, False, 1)
    run_audit(["a"], eff, False, 1)
    assert seen == [False, True, False]


@pytest.mark.skipif(not any(SAMPLES.glob("*.jsonl*")), reason="no sample logs yet")
def test_whole_sample_logs_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SAMPLES.parent)
    traces = discover(["sample_logs"])
    report = api.audit_paths(traces)
    result = run("audit", "sample_logs", "--summary")
    assert result.exit_code == report.exit_code("error")
    assert "Summary" in result.stdout
    for path in traces:
        assert path in result.stdout
    assert f"exit {result.exit_code}: {len(traces)} trace(s)" in result.stdout


def test_the_summary_is_a_table_only_where_every_header_and_verdict_fits(
        traces: Path) -> None:
    """usertest16 #5: with a baseline's two columns, a 120-column CI log cut the headers
    to "warnin…" and wrapped a verdict over five lines.  The table needs each column's
    widest text plus three: here 21 + 6 + 6 + 8 + 4 + 9 + 5 + 15 + 18 + 7 (every
    verdict is PASS, shorter than its header), ten columns and a rule, 130; below that
    the summary is the list."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    assert run("baseline", "create", "traces", "-o", "b.json").exit_code == 0

    def summary(width: int) -> str:
        out = CliRunner().invoke(app, ["audit", "traces", "--baseline", "b.json"],
                                 env={"COLUMNS": str(width)}).stdout
        assert "\n\nSummary\n" in out  # apart from the last trace's verdict
        return out.split("\nSummary\n", 1)[1]

    wide = summary(130)
    assert "┃ trace                 ┃ rounds ┃ errors ┃ warnings ┃ info ┃ baselined ┃ stale" \
           " ┃ inversion onset ┃ inversion boundary ┃ verdict ┃" in wide
    narrow = summary(129)
    assert narrow.splitlines()[:2] == [
        "  PASS  2 rounds, 0 error(s), 0 warning(s), 0 info, 0 baselined, 0 stale",
        "    traces/clean.jsonl"]
