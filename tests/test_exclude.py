"""``--exclude PATTERN`` leaves out what a directory or glob yields (ux5 F13: a folder
holding one `.jsonl` that is no trace failed the whole run, and nothing could leave it
out but rewriting the command as globs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.discover import find_traces
from compaction_audit.errors import UsageError
from tests.gate_app import clean_records, run
from tests.logs import dump


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``runs/a.jsonl``, ``runs/b.jsonl``, ``runs/labels/x.items.jsonl`` (no trace)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "labels").mkdir(parents=True)
    for name in ("a", "b"):
        dump(clean_records(), tmp_path / "runs" / f"{name}.jsonl")
    (tmp_path / "runs" / "labels" / "x.items.jsonl").write_text('{"fact": "port 8080"}\n')
    return tmp_path


@pytest.mark.parametrize(("args", "exclude", "traces", "excluded"), [
    (["runs"], [], ["runs/a.jsonl", "runs/b.jsonl", "runs/labels/x.items.jsonl"], 0),
    (["runs"], ["labels"], ["runs/a.jsonl", "runs/b.jsonl"], 1),
    (["runs"], ["*.items.jsonl"], ["runs/a.jsonl", "runs/b.jsonl"], 1),
    (["runs"], ["runs/labels/*"], ["runs/a.jsonl", "runs/b.jsonl"], 1),
    (["runs"], ["runs"], ["runs/a.jsonl", "runs/b.jsonl", "runs/labels/x.items.jsonl"], 0),
    (["runs/**/*.jsonl"], ["labels", "b.jsonl"], ["runs/a.jsonl"], 2),
    (["runs/labels/x.items.jsonl"], ["labels"], ["runs/labels/x.items.jsonl"], 0),
    # a file a directory yields and the command line names is audited: not left out
    (["runs", "runs/a.jsonl"], ["a.*"],
     ["runs/b.jsonl", "runs/labels/x.items.jsonl", "runs/a.jsonl"], 0),
    (["runs", "runs/a.jsonl"], ["a.*", "labels"], ["runs/b.jsonl", "runs/a.jsonl"], 1),
])
def test_what_exclude_leaves_out(tree: Path, args: list[str], exclude: list[str],
                                 traces: list[str], excluded: int) -> None:
    """A name pattern matches a name below the directory searched (``runs`` itself is
    not matched); a pattern with ``/`` the whole path; a file named is kept."""
    found = find_traces(args, exclude)
    assert (found.traces, found.excluded) == (traces, excluded)


def test_a_directory_left_empty_by_exclude_is_a_usage_error(tree: Path) -> None:
    with pytest.raises(UsageError, match=r"under directory 'runs/labels' \(1 left out by "
                                         r"--exclude\)"):
        find_traces(["runs/labels"], ["*.items.jsonl"])


def test_the_run_that_failed_on_a_label_file_passes_with_exclude(tree: Path) -> None:
    failed = run("audit", "runs", "-q", "--jobs", "1")
    assert failed.exit_code == 2 and "x.items.jsonl:1" in failed.output
    passed = run("audit", "runs", "-q", "--jobs", "1", "--exclude", "labels")
    assert passed.exit_code == 0, passed.output
    assert "exit 0: 2 trace(s)" in passed.output
    assert passed.stderr == "compaction-audit: 1 trace(s) left out by --exclude\n"  # adv23
    made = run("baseline", "create", "runs", "-o", "b.json", "--exclude", "labels")
    assert made.exit_code == 0 and "in 0 of 2 trace(s)" in made.stderr


def test_a_file_a_folder_search_found_that_is_not_a_log_suggests_exclude(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # hand labels beside the traces: the run fails on them (exit 2) and now says how
    # to leave them out (a CI engineer's test); a file named directly gets no hint
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces" / "labels").mkdir(parents=True)
    dump(clean_records(), tmp_path / "traces" / "t.jsonl")
    (tmp_path / "traces" / "labels" / "x.items.jsonl").write_text('{"key": "a"}\n')
    result = run("audit", "traces", "-q")
    assert result.exit_code == 2
    assert ("compaction-audit: 1 file(s) a folder or pattern search found are not logs "
            "(first: traces/labels/x.items.jsonl): leave such files out with --exclude, a "
            "file or folder name (--exclude 'labels'); the run fails on them otherwise"
            ) in result.stderr
    assert run("audit", "traces", "-q", "--exclude", "labels").exit_code == 0
    named = run("audit", "traces/labels/x.items.jsonl", "-q")
    assert named.exit_code == 2 and "--exclude" not in named.stderr
    made = run("baseline", "create", "traces", "-o", "b.json")
    assert made.exit_code == 2 and "(--exclude 'labels')" in made.stderr
    assert not (tmp_path / "b.json").exists()
    # usertest37 #4: beside the traces in the folder given, the file is named, not the
    # folder given ('--exclude traces' matched nothing)
    (tmp_path / "traces" / "labels" / "x.items.jsonl").rename(tmp_path / "traces" / "n.jsonl")
    beside = run("audit", "traces", "-q")
    assert "file or folder name (--exclude 'n.jsonl'); the run fails" in beside.stderr
    assert run("audit", "traces", "-q", "--exclude", "n.jsonl").exit_code == 0


def test_a_pattern_that_matches_nothing_is_said_and_an_empty_one_refused(tree: Path) -> None:
    """adv62: `--exclude '['`, `'/'` or a misspelt name left nothing out without a
    word; an empty pattern is no pattern."""
    found = find_traces(["runs"], ["labels", "lables", "*.items.jsonl"])
    assert found.exclude_used == {0, 2}
    result = run("audit", "runs", "-q", "--jobs", "1", "--exclude", "labels",
                 "--exclude", "lables", "--exclude", "[")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "compaction-audit: 1 trace(s) left out by --exclude\n"
        "compaction-audit: --exclude 'lables', '[' matched no file the directories and "
        "patterns yielded\n")
    empty = run("audit", "runs", "--exclude", " ")
    assert (empty.exit_code, empty.stderr) == (
        2, "compaction-audit: --exclude needs a pattern (a name such as 'labels' or "
           "'*.items.jsonl', or a path pattern with '/')\n")


def test_a_pattern_that_matches_only_a_file_named_says_so(tree: Path) -> None:
    """usertest15: `audit runs/a.jsonl --exclude 'a.*'` said the pattern matched no
    file, which reads as a typo; the file named is audited whatever the patterns say."""
    result = run("audit", "runs/a.jsonl", "-q", "--exclude", "a.*", "--exclude", "zz")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "compaction-audit: --exclude 'a.*' matched only files named on the command line, "
        "which are audited whatever the patterns say\n"
        "compaction-audit: --exclude 'zz' matched no file the directories and patterns "
        "yielded\n")


def test_a_pattern_whose_file_is_also_named_leaves_nothing_out(tree: Path) -> None:
    """usertest26b #4: `audit runs runs/a.jsonl --exclude 'a.*'` said "1 trace(s) left
    out by --exclude" of a trace it audited."""
    result = run("audit", "runs", "runs/a.jsonl", "-q", "--jobs", "1", "--exclude", "a.*",
                 "--exclude", "labels")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "compaction-audit: 1 trace(s) left out by --exclude\n"
        "compaction-audit: --exclude 'a.*' matched only files named on the command line, "
        "which are audited whatever the patterns say\n")


def test_a_file_named_by_another_path_is_not_left_out_either(tree: Path) -> None:
    """usertest27 #2: the same file named by its absolute path (or through '..') was
    still counted as left out."""
    for named in (str(tree / "runs" / "a.jsonl"), "runs/../runs/a.jsonl"):
        found = find_traces(["runs", named], ["a.*", "labels"])
        assert found.excluded == 1  # labels/x.items.jsonl only
        assert found.exclude_used == {1}


def test_a_named_file_a_folder_also_holds_through_a_link_keeps_its_name(tree: Path) -> None:
    """adv77 #4: the folder's symlink to a named file came first and the file was
    reported under the link's name; without the file named, the pattern that left it
    out said it "matched no file"."""
    (tree / "runs" / "link.jsonl").symlink_to("a.jsonl")
    found = find_traces(["runs", "runs/a.jsonl"], ["a.jsonl", "labels"])
    assert "runs/a.jsonl" in found.traces and "runs/link.jsonl" not in found.traces
    assert found.excluded == 1 and found.exclude_used == {1}  # labels only
    alone = find_traces(["runs"], ["a.jsonl", "labels"])
    assert "runs/link.jsonl" in alone.traces and "runs/a.jsonl" not in alone.traces
    assert alone.excluded == 2 and alone.exclude_used == {0, 1}


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_a_folder_whose_only_trace_is_no_log_says_its_error_on_stderr(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet: list[str]) -> None:
    """adv84: ``audit labels`` (its one .jsonl no log) printed ``error: ...`` on
    standard output, then ``config: none``: the run's one trace could not be read, so
    its error is a line on stderr, as for a file named alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "x.items.jsonl").write_text('{"key": "a"}\n')
    result = run("audit", "labels", "--isolated", *quiet)
    assert (result.exit_code, result.stdout) == (2, "")
    what = ("unrecognized log format: not compaction-audit/1, Claude Code, Codex, Cline, "
            "Gemini CLI, opencode or OpenHands (first 50 lines) (type)")
    assert result.stderr == (
        f"compaction-audit: labels/x.items.jsonl:1: {what}\n"
        "compaction-audit: 1 file(s) a folder or pattern search found are not logs "
        "(first: labels/x.items.jsonl): leave such files out with --exclude, a file or "
        "folder name (--exclude 'x.items.jsonl'); the run fails on them otherwise\n")
