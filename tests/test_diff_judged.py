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


def test_onsets_read_from_different_series_are_said(tmp_path: Path) -> None:
    """usertest41 #2: the same simulated loop logged with ``retained`` (research-decay)
    and without it (delta-text) diffed as an onset move with no word that one onset read
    the logged salience and the other the auditor's rebuilt cosine."""
    base, cand = str(SAMPLES / "research-decay.jsonl"), str(SAMPLES / "delta-text.jsonl")
    doc = json.loads(run("diff", base, cand, "-f", "json").stdout)
    assert (doc["baseline"]["inversion_signature"], doc["candidate"]["inversion_signature"]) \
        == ("query_cosine_retained", "query_cosine_rebuilt")
    assert doc["verdict"].endswith(
        "; the inversion onsets read different series: baseline query_cosine_retained, "
        "candidate query_cosine_rebuilt")
    same = json.loads(run("diff", base, base, "-f", "json").stdout)
    assert same["verdict"] == "no change"
    assert same["candidate"]["inversion_signature"] == "query_cosine_retained"
