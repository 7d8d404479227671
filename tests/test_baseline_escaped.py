"""A baseline's entries apply to the file they were made for, not to another whose name
reads the same once escaped (adv103 #5): an undecodable byte of a file name is written
``\\xff`` in the baseline, which is also a name of four characters."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.gate_app import run
from tests.logs import CORPUS

LOCAL = CORPUS / "codex" / "synthetic-local-compaction.jsonl"


@pytest.mark.skipif(not LOCAL.exists(), reason="the corpus is not beside the project")
def test_an_escaped_name_is_not_the_file_it_spells(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    undecodable = os.fsdecode(b"d/\xff.jsonl")
    try:
        shutil.copy(LOCAL, undecodable)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes no undecodable name")
    assert run("baseline", "create", "d", "-o", "b.json", "--jobs", "1").exit_code == 0
    kept = run("audit", "d", "-q", "--baseline", "b.json", "--jobs", "1")
    assert kept.exit_code == 0 and "(2 in the baseline)" in kept.stdout
    os.rename(undecodable, "d/\\xff.jsonl")  # backslash, x, f, f: another file
    other = run("audit", "d", "-q", "--baseline", "b.json", "--jobs", "1")
    assert other.exit_code == 1, other.stdout
    assert "in the baseline" not in other.stdout


@pytest.mark.skipif(not LOCAL.exists(), reason="the corpus is not beside the project")
def test_the_file_an_escaped_name_spells_is_not_the_escaped_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv104 #4: the other way round, a baseline of the file named with the four
    characters hid the findings of the file whose name is the byte."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    shutil.copy(LOCAL, "d/\\xff.jsonl")
    assert run("baseline", "create", "d", "-o", "b.json", "--jobs", "1").exit_code == 0
    try:
        os.rename("d/\\xff.jsonl", os.fsdecode(b"d/\xff.jsonl"))
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes no undecodable name")
    other = run("audit", "d", "-q", "--baseline", "b.json", "--jobs", "1")
    assert other.exit_code == 1, other.stdout
    assert "in the baseline" not in other.stdout
