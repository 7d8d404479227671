"""--lenient for adapters that read JSON Lines themselves (Claude Code, Codex; issue 11
class 2): a line that is not JSON, or a truncated last line, is skipped and counted
with its FILE:LINE message, and the trace never passes silently; strict mode stops."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.load import load_session

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"
CASES = [("claude-session.jsonl", "claude-code"), ("codex-local.jsonl", "codex")]


def _damaged(tmp_path: Path, name: str, how: str) -> tuple[Path, int]:
    """The fixture with line 3 replaced by broken JSON ("middle") or its last line cut
    in half with no newline ("truncated"); returns the path and the bad line number."""
    lines = (FIXTURES / name).read_bytes().splitlines(keepends=True)
    if how == "middle":
        lines[2] = b'{"type": "user", "message": oops\n'
        bad = 3
    else:
        last = lines[-1].rstrip(b"\n")
        lines[-1] = last[:len(last) // 2]
        bad = len(lines)
    path = tmp_path / f"{how}-{name}"
    path.write_bytes(b"".join(lines))
    return path, bad


@pytest.mark.parametrize(("name", "fmt"), CASES)
@pytest.mark.parametrize("how", ["middle", "truncated"])
def test_strict_stops_with_file_and_line(tmp_path: Path, name: str, fmt: str,
                                         how: str) -> None:
    path, bad = _damaged(tmp_path, name, how)
    result = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert result.exit_code == 2
    assert f"{path}:{bad}: " in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(("name", "fmt"), CASES)
@pytest.mark.parametrize("how", ["middle", "truncated"])
def test_lenient_skips_and_counts_the_bad_line(tmp_path: Path, name: str, fmt: str,
                                               how: str) -> None:
    path, bad = _damaged(tmp_path, name, how)
    session, got = load_session(str(path), lenient=True)
    assert got == fmt
    assert [(e.line, e.path) for e in session.skipped] == [(bad, str(path))]
    if how == "truncated":
        assert "truncated last line" in session.skipped[0].message
    result = CliRunner().invoke(app, ["audit", str(path), "--lenient", "-f", "json"])
    assert result.exit_code != 2, result.output
    doc = json.loads(result.output)
    assert len(doc["skipped"]) == 1
    assert "1 bad record(s) skipped" in doc["verdict"]
    assert not doc["verdict"].startswith("PASS")


def test_lenient_truncated_gz_of_an_adapter_log(tmp_path: Path) -> None:
    data = gzip.compress((FIXTURES / "claude-session.jsonl").read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[:len(data) - 8])  # the gzip trailer is missing
    strict = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert strict.exit_code == 2
    session, fmt = load_session(str(path), lenient=True)
    assert fmt == "claude-code"
    assert len(session.skipped) == 1 and "cannot read" in session.skipped[0].message
