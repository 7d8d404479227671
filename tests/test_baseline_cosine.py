"""A baseline records the rebuilt cosine's method, and an audit against one made with
another method says so on standard error (usertest61 B1: a baseline made without the
``[embed]`` extra failed a run with it, with no word)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compaction_audit.baseline import load
from compaction_audit.errors import UsageError
from tests.gate_app import run
from tests.logs import SAMPLES

LEXICAL = "lexical TF-IDF"


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A trace whose rules read the rebuilt cosine (no logged salience), audited with
    the lexical method, from its own folder."""
    monkeypatch.setenv("COMPACTION_AUDIT_EMBED", "lexical")
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "delta-text.jsonl", tmp_path / "t.jsonl")
    return Path("t.jsonl")


def test_the_baseline_records_the_method_and_loads_it(trace: Path) -> None:
    made = run("baseline", "create", str(trace), "-o", "b.json")
    assert made.exit_code == 0, made.output
    assert json.loads(Path("b.json").read_text())["cosine"] == [LEXICAL]
    assert load(Path("b.json")).cosine == (LEXICAL,)  # type: ignore[attr-defined]
    same = run("audit", "-q", str(trace), "--baseline", "b.json")
    assert same.exit_code == 0 and "rebuilt cosine" not in same.stderr


def test_an_audit_with_another_method_says_so(trace: Path) -> None:
    assert run("baseline", "create", str(trace), "-o", "b.json").exit_code == 0
    doc = json.loads(Path("b.json").read_text())
    Path("other.json").write_text(json.dumps({**doc, "cosine": ["another method"]}))
    result = run("audit", "-q", str(trace), "--baseline", "other.json")
    assert result.exit_code == 0  # the same findings: the line warns, it does not fail
    assert result.stderr == (
        "compaction-audit: baseline other.json: made with the rebuilt cosine of another "
        f"method, this run used {LEXICAL}: the findings that read it (salience-inversion, "
        "compaction-drift, salience-disagreement) may differ from the baseline's; make and "
        "use a baseline with the same extras installed ('[embed]' or none: docs/ci.md)\n")
    # a baseline written before the method was recorded says nothing of it
    del doc["cosine"]
    Path("old.json").write_text(json.dumps(doc))
    assert run("audit", "-q", str(trace), "--baseline", "old.json").stderr == ""


@pytest.mark.parametrize("cosine", ["lexical", [1], {"a": "b"}])
def test_a_cosine_that_is_no_list_of_strings_is_refused(tmp_path: Path,
                                                        cosine: object) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"baseline_format": 1, "cosine": cosine, "findings": []}))
    with pytest.raises(UsageError, match="cosine must be a list of strings"):
        load(path)


def test_prune_says_so_too(trace: Path) -> None:
    """adv113 #8: prune drops entries as fixed that another method may not find."""
    assert run("baseline", "create", str(trace), "-o", "b.json").exit_code == 0
    doc = json.loads(Path("b.json").read_text())
    Path("other.json").write_text(json.dumps({**doc, "cosine": ["another method"]}))
    result = run("baseline", "prune", "other.json", str(trace), "-o", "pruned.json")
    assert result.exit_code == 0, result.output
    first, *_ = result.stderr.splitlines()
    assert first.startswith("compaction-audit: baseline other.json: made with the rebuilt "
                            "cosine of another method, this run used")
    assert json.loads(Path("pruned.json").read_text())["cosine"] == ["another method"]
