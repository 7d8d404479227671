"""Paths, directories and glob patterns -> trace files (compaction_audit.discover)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.discover import discover, names_one_file, search_dir
from compaction_audit.errors import UsageError


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """logs/{b.jsonl, a.jsonl.gz, notes.txt, deep/c.jsonl.zst, .hidden/x.jsonl}, empty/."""
    for name in ("logs/b.jsonl", "logs/a.jsonl.gz", "logs/notes.txt", "logs/deep/c.jsonl.zst",
                 "logs/.hidden/x.jsonl", "logs/deep/d.json"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_directory_is_searched_recursively_sorted_hidden_skipped(tree: Path) -> None:
    assert discover(["logs"]) == ["logs/a.jsonl.gz", "logs/b.jsonl", "logs/deep/c.jsonl.zst"]
    assert discover(["logs/"]) == discover(["./logs"]) == discover(["logs"])
    assert search_dir("logs/deep") == ["logs/deep/c.jsonl.zst"]


def test_glob_patterns_keep_what_they_match(tree: Path) -> None:
    assert discover(["logs/*.jsonl"]) == ["logs/b.jsonl"]
    assert discover(["logs/**/*.zst"]) == ["logs/deep/c.jsonl.zst"]
    # a file the pattern names is kept whatever its suffix; a matched directory is searched
    assert discover(["logs/*.txt", "logs/d*"]) == ["logs/notes.txt", "logs/deep/c.jsonl.zst"]


def test_argument_order_and_no_repeats(tree: Path) -> None:
    assert discover(["logs/b.jsonl", "logs", "./logs/b.jsonl"]) == [
        "logs/b.jsonl", "logs/a.jsonl.gz", "logs/deep/c.jsonl.zst"]


def test_plain_paths_and_stdin_are_kept_even_when_missing(tree: Path) -> None:
    # a missing file is audited (and reported unreadable), not dropped
    assert discover(["missing.jsonl", "-"]) == ["missing.jsonl", "-"]


@pytest.mark.parametrize(("args", "message"), [
    (["empty"], "no trace files"),
    (["logs/*.nothing"], "no trace file matches 'logs/*.nothing'"),
    ([], "no trace given"),
])
def test_nothing_to_audit_is_a_usage_error(tree: Path, args: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("*", r"\*").replace(".", r"\.")):
        discover(args)


def test_names_one_file(tree: Path) -> None:
    assert names_one_file(["logs/b.jsonl"])
    assert names_one_file(["missing.jsonl"])
    assert not names_one_file(["logs"])
    assert not names_one_file(["logs/*.jsonl"])
    assert not names_one_file(["logs/b.jsonl", "logs/a.jsonl.gz"])
