"""``diff`` names the configuration file and says when the selection judged neither
run (adv25 N2: a checkout's ``select = ["CA203"]`` on two Claude Code transcripts,
which log no aggregate, gave "0 new, 0 resolved" and exit 0 with no word, where
without it the diff gate failed on 210 new findings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.gate_app import run
from tests.logs import ROOT, SAMPLES

CLAUDE = ROOT / "tests" / "fixtures" / "adapters" / "claude-session.jsonl"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(CLAUDE, tmp_path / "a.jsonl")
    shutil.copy(CLAUDE, tmp_path / "b.jsonl")
    (tmp_path / "pyproject.toml").write_text('[tool.compaction-audit]\nselect = ["CA203"]\n')
    return tmp_path


def test_a_selection_that_judges_neither_run_is_said(checkout: Path) -> None:
    text = run("diff", "a.jsonl", "b.jsonl").output
    assert "\nconfig     pyproject.toml\n" in text
    assert "no selected rule could judge either run" in text
    doc = json.loads(run("diff", "a.jsonl", "b.jsonl", "-f", "json").stdout)
    assert doc["config"] == "pyproject.toml"
    assert doc["verdict"].endswith("; no selected rule could judge either run")


def test_a_selection_that_judges_is_not_noted(checkout: Path) -> None:
    (checkout / "pyproject.toml").unlink()
    shutil.copy(SAMPLES / "handwritten.jsonl", checkout / "a.jsonl")
    shutil.copy(SAMPLES / "handwritten.jsonl", checkout / "b.jsonl")
    doc = json.loads(run("diff", "a.jsonl", "b.jsonl", "-f", "json").stdout)
    assert doc["config"] is None
    assert "could judge" not in doc["verdict"]
    assert "\nconfig     none\n" in run("diff", "a.jsonl", "b.jsonl").output
