"""Helpers for the tests of the Cline, Gemini CLI, opencode and OpenHands adapters."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from compaction_audit.errors import LogError
from compaction_audit.io.native import read_records
from compaction_audit.io.records import SPAN_LINE_KEY

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"

Records = list[tuple[int, dict[str, Any]]]
Adapter = Callable[..., Iterator[tuple[int, dict[str, Any]]]]


def run_adapter(records: Adapter, path: str | Path,
                skipped: list[LogError] | None = None) -> Records:
    """Convert ``path`` and check every record with the native reader."""
    out = list(records(str(path), None, skipped))
    read_records(out, str(path))
    return out


def compaction_rounds(out: Records) -> list[tuple[int, dict[str, Any]]]:
    """``(line, round)`` of each round that carries a ``compaction`` extension."""
    return [(line, r) for line, r in out[1:] if "compaction" in r]


def all_spans(out: Records) -> dict[str, dict[str, Any]]:
    """Every raw span by id."""
    return {s["id"]: s for _, r in out[1:] for s in r["spans"]}


def working_set(out: Records, rounds: int | None = None) -> list[str]:
    """The delta-mode working set after the first ``rounds`` rounds (None: all)."""
    ws: dict[str, None] = {}
    for _, r in out[1:][:rounds]:
        ws.update(dict.fromkeys(s["id"] for s in [*r["spans"], *r.get("summaries", [])]))
        for gone in r.get("evicted", []):
            ws.pop(gone, None)
    return list(ws)


def write_json(path: Path, value: Any) -> Path:
    """``value`` as indented JSON (the layout the products write), one key a line."""
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return path


def strict_then_lenient(records: Adapter, path: Path) -> tuple[str, Records, list[int]]:
    """The one-line error a strict read raises, then what a lenient read gives: the
    records and the lines of the elements it skipped."""
    try:
        run_adapter(records, path)
    except LogError as exc:
        error = str(exc)
    else:
        raise AssertionError("the strict read did not fail")
    skipped: list[LogError] = []
    out = run_adapter(records, path, skipped)
    return error, out, [e.line for e in skipped]


def notes_and_spans(records: Adapter, path: Path) -> tuple[list[str], list[str]]:
    """What the adapter said about ``path`` (its reader notes) and the span ids it read."""
    out = run_adapter(records, path)
    return list(out[0][1].get("reader_notes", [])), list(all_spans(out))


def without_lines(out: Records) -> list[dict[str, Any]]:
    """The records without the line each span was stated on (for comparing the same
    session read from files whose lines differ: an export and a store, JSON and JSONL)."""
    return [{**r, "spans": [{k: v for k, v in s.items() if k != SPAN_LINE_KEY}
                            for s in r.get("spans", [])]} if "spans" in r else r
            for _, r in out]


def assert_output_refused(given: Path, companion: Path) -> None:
    """``companion`` is a file read with the trace ``given`` (an adapter's companion):
    ``audit GIVEN -o COMPANION`` is refused, exit 2, and leaves it as it was."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app
    from compaction_audit.io.companions import companion_files

    assert str(companion) in companion_files(str(given))
    before = companion.read_bytes()
    result = CliRunner().invoke(app, ["audit", str(given), "-o", str(companion)])
    assert result.exit_code == 2 and "read along with the input" in result.output
    assert companion.read_bytes() == before
