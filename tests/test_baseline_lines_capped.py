"""A report shows at most 20 of the baseline's lines (entries that no longer occur,
and the like), then one line counting the rest; ``--all`` shows them all (adv24 F1:
a baseline of 50,000 stale entries printed 50,090 lines, and in Markdown pushed the
failing trace's section out of the pull-request comment)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compaction_audit.report.summary import BASELINE_LINES
from tests.gate_app import run
from tests.logs import SAMPLES

STALE = 30


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "t.jsonl")
    entries = [{"fingerprint": f"{i:064x}", "trace": "t.jsonl", "code": "CA202",
                "rule": "silent-drop", "key": f"episode:{i + 100}"} for i in range(STALE)]
    (tmp_path / "bl.json").write_text(json.dumps(
        {"baseline_format": 1, "tool": "compaction-audit", "findings": entries}))
    return tmp_path


def stale_shown(out: str) -> int:
    return out.count("baseline entry no longer occurs:")


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_baseline_lines_are_capped(folder: Path, fmt: str) -> None:
    out = run("audit", "t.jsonl", "--isolated", "--baseline", "bl.json", "-f", fmt).output
    assert stale_shown(out) == BASELINE_LINES == 20
    assert f"and {STALE - BASELINE_LINES} more baseline line" in out  # Markdown escapes ( -
    everything = run("audit", "t.jsonl", "--isolated", "--baseline", "bl.json", "-f", fmt,
                     "--all").output
    assert stale_shown(everything) == STALE
    assert "more baseline line(s)" not in everything


def test_a_few_lines_are_all_shown(folder: Path) -> None:
    doc = json.loads((folder / "bl.json").read_text())
    doc["findings"] = doc["findings"][:BASELINE_LINES]
    (folder / "bl.json").write_text(json.dumps(doc))
    out = run("audit", "t.jsonl", "--isolated", "--baseline", "bl.json").output
    assert stale_shown(out) == BASELINE_LINES and "more baseline line(s)" not in out
