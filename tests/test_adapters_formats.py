"""Issue 15 across adapters: detection of every fixture, ``convert --from``, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.detect import detect_format, peek_format
from tests.foreign import FIXTURES

RUNNER = CliRunner()
EXPECTED = {
    "cline/session.json": "cline",
    "cline/session.messages.json": "cline",
    "cline/basic.compaction.json": "cline",
    "cline/agentic.compaction.json": "cline",
    "gemini-cli/compression.jsonl": "gemini-cli",
    "gemini-cli/two-compressions/session.jsonl": "gemini-cli",
    "opencode/export.json": "opencode",
    "opencode/real/export.json": "opencode",
    "opencode/real/opencode.db": "opencode",
    "openhands/condensation.json": "openhands",
    "openhands/sdk-events.jsonl": "openhands",
}


def test_every_new_fixture_is_listed() -> None:
    found = {str(p.relative_to(FIXTURES)) for folder in ("cline", "gemini-cli", "opencode",
                                                          "openhands")
             for p in (FIXTURES / folder).rglob("*")
             if p.suffix in (".json", ".jsonl", ".db")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize(("name", "fmt"), sorted(EXPECTED.items()))
def test_detection_picks_the_adapter(name: str, fmt: str) -> None:
    assert detect_format(str(FIXTURES / name)) == fmt
    detected, lines = peek_format(str(FIXTURES / name))
    # a whole document is read to decide: the lines come back all the same
    assert detected == fmt and sum(1 for _ in lines) > 0


@pytest.mark.parametrize(("name", "fmt"), sorted(EXPECTED.items()))
def test_convert_from_name(name: str, fmt: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = RUNNER.invoke(app, ["convert", str(FIXTURES / name), "--from", fmt, "-o",
                                 str(out)])
    assert result.exit_code == 0, result.output
    first = json.loads(out.read_text().splitlines()[0])
    assert first["source_format"] == fmt


def test_terminal_report_shows_strategy_and_messages_removed() -> None:
    result = RUNNER.invoke(app, ["audit", str(FIXTURES / "cline" / "basic.compaction.json")],
                           env={"COLUMNS": "200"})
    assert "compact (basic, 6 removed)" in result.output  # 12 messages, 6 kept
    result = RUNNER.invoke(app, ["audit", str(FIXTURES / "gemini-cli" / "compression.jsonl")],
                           env={"COLUMNS": "200"})
    assert "compact (state_snapshot, 4 removed, inferred)" in result.output


def test_reader_notes_appear_in_the_report(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "opencode" / "export.json").read_text())
    doc["info"]["version"] = "9.1.0"
    path = tmp_path / "e.json"
    path.write_text(json.dumps(doc, indent=2))
    result = RUNNER.invoke(app, ["audit", str(path)], env={"COLUMNS": "200"})
    assert "  note: opencode format version 9.1.0 not seen before; read as 1.x" in result.output
    result = RUNNER.invoke(app, ["audit", str(path), "--format", "json"])
    assert json.loads(result.output)["session"]["extra"]["reader_notes"] == [
        "opencode format version 9.1.0 not seen before; read as 1.x"]
    page = tmp_path / "r.html"
    RUNNER.invoke(app, ["audit", str(path), "--format", "html", "-o", str(page)])
    assert "<li>note: opencode format version 9.1.0 not seen before" in page.read_text()


def test_unknown_json_document_is_still_unrecognized(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": ["world"]}, indent=2))
    result = RUNNER.invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    assert "unrecognized log format: a JSON document" in result.output


def test_html_report_shows_the_strategy_too(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = RUNNER.invoke(app, ["audit", str(FIXTURES / "cline" / "agentic.compaction.json"),
                                 "--format", "html", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert "compact (agentic, 10 removed), trigger unknown" in out.read_text()  # 12, 2 kept
