"""Paths, directories and glob patterns -> trace files (compaction_audit.discover)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.discover import (
    Discovery,
    discover,
    expand_pattern,
    find_traces,
    names_one_file,
    search_dir,
)
from compaction_audit.errors import UsageError
from tests.gate_app import drift_records, run
from tests.logs import SAMPLES, dump


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


def test_a_path_named_like_its_pattern_is_the_path_and_the_pattern(tree: Path) -> None:
    """adv98 #1: a file or directory named like the pattern ('logs/*.jsonl',
    'logs/**/...') was the only trace audited, hiding the pattern's other matches (a gate
    passed on one harmless file).  Both are audited now, as a shell's ``*`` matches the
    file of that name too; a bracketed name matching nothing else stays one file."""
    (tree / "logs" / "*.jsonl").write_bytes(b"")
    assert discover(["logs/*.jsonl"]) == ["logs/*.jsonl", "logs/b.jsonl"]
    assert not names_one_file(["logs/*.jsonl"])
    (tree / "logs" / "**").mkdir()
    (tree / "logs" / "**" / "*.zst").write_bytes(b"")
    assert discover(["logs/**/*.zst"]) == ["logs/**/*.zst", "logs/deep/c.jsonl.zst"]
    (tree / "logs" / "run[1].jsonl").write_bytes(b"")  # matches run1.jsonl: none here
    assert discover(["logs/run[1].jsonl"]) == ["logs/run[1].jsonl"]
    assert names_one_file(["logs/run[1].jsonl"])
    (tree / "logs" / "run1.jsonl").write_bytes(b"")
    assert discover(["logs/run[1].jsonl"]) == ["logs/run[1].jsonl", "logs/run1.jsonl"]


def test_a_fifo_named_like_its_pattern_is_skipped_as_a_match(tree: Path) -> None:
    """adv100 #7: a FIFO (or a link to /dev/stdin) named like its pattern was opened as
    a named path and the gate hung; it is one of the pattern's matches, skipped as
    they are, and the pattern's other matches are audited."""
    os.mkfifo(tree / "logs" / "*.jsonl")
    found = find_traces(["logs/*.jsonl"])
    assert found.traces == ["logs/b.jsonl"]
    assert found.skipped == ["logs/*.jsonl: skipped, a FIFO (only regular files are "
                             "searched; name it explicitly to read it)"]
    (tree / "logs" / "b.jsonl").unlink()
    with pytest.raises(UsageError, match=r"no trace file matches 'logs/\*\.jsonl'"):
        find_traces(["logs/*.jsonl"])


# issue 11, item 6: non-regular files, symlink loops, same file twice, unreadable dirs

def test_fifo_under_a_directory_or_pattern_is_skipped_and_reported(tree: Path) -> None:
    os.mkfifo(tree / "logs" / "pipe.jsonl")
    for args in (["logs"], ["logs/*.jsonl"]):
        found = find_traces(args)
        assert "logs/pipe.jsonl" not in found.traces
        assert found.skipped == ["logs/pipe.jsonl: skipped, a FIFO (only regular files are "
                                 "searched; name it explicitly to read it)"]
    # named explicitly, a FIFO is read (process substitution is one)
    assert discover(["logs/pipe.jsonl"]) == ["logs/pipe.jsonl"]
    dump(drift_records(), tree / "logs" / "b.jsonl")
    result = run("audit", "logs/*.jsonl", "--jobs", "1", "--format", "json")
    assert result.exit_code == 1  # audited b.jsonl, did not hang on the FIFO
    assert "compaction-audit: logs/pipe.jsonl: skipped, a FIFO" in result.stderr


def test_many_fifos_are_noted_once_each_and_listed_on_one_screen(tree: Path) -> None:
    """A folder of k FIFOs: each skipped once, no list search per note (k^2 before), and
    stderr names 20 of them, then counts the rest."""
    for i in range(45):
        os.mkfifo(tree / "logs" / f"p{i:02d}.jsonl")
    found = find_traces(["logs/**"])  # '**' meets each FIFO twice: noted once
    assert len(found.skipped) == 45 and len(set(found.skipped)) == 45

    class Scanned(list[str]):
        items = 0

        def __contains__(self, x: object) -> bool:
            Scanned.items += len(self)
            return super().__contains__(x)

    from compaction_audit import discover as disc
    again = disc.Discovery(skipped=Scanned())
    fifos = sorted(str(p) for p in (tree / "logs").glob("p*.jsonl"))
    assert disc._keep_regular(fifos + fifos, again) == []
    assert len(again.skipped) == 45 and Scanned.items == 0  # no scan of the notes per note
    dump(drift_records(), tree / "logs" / "b.jsonl")
    result = run("audit", "logs", "--jobs", "1", "--format", "json")
    lines = [x for x in result.stderr.splitlines() if "skipped" in x]
    assert len(lines) == 21 and lines[0].endswith("logs/p00.jsonl: skipped, a FIFO (only "
                                                  "regular files are searched; name it "
                                                  "explicitly to read it)")
    assert lines[-1] == "compaction-audit: ... and 25 more non-regular files skipped"


def test_double_star_does_not_follow_directory_symlinks(tree: Path) -> None:
    (tree / "logs" / "loop").symlink_to(tree / "logs")
    assert discover(["logs/**/*.jsonl"]) == ["logs/b.jsonl"]
    assert discover(["logs/**/*.zst"]) == ["logs/deep/c.jsonl.zst"]
    assert discover(["logs"]) == ["logs/a.jsonl.gz", "logs/b.jsonl", "logs/deep/c.jsonl.zst"]


def test_two_symlink_loops_finish(tree: Path) -> None:
    (tree / "logs" / "loop").symlink_to(tree / "logs")
    (tree / "logs" / "deep" / "up").symlink_to(tree / "logs")
    code = "from compaction_audit.discover import discover; print(discover(['**/*.jsonl']))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "['logs/b.jsonl']"


def test_the_same_file_twice_is_audited_once(tree: Path) -> None:
    (tree / "logs" / "alias.jsonl").symlink_to(tree / "logs" / "b.jsonl")
    os.link(tree / "logs" / "b.jsonl", tree / "hard.jsonl")
    assert discover(["logs/b.jsonl", "logs/alias.jsonl", "hard.jsonl", "logs"]) == [
        "logs/b.jsonl", "logs/a.jsonl.gz", "logs/deep/c.jsonl.zst"]


def test_unreadable_subdirectory_is_an_unreadable_trace(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory that cannot be listed (simulated: root may list anything) is
    reported and fails the run (exit 2), never skipped silently."""
    (tree / "runs").mkdir()
    dump(drift_records(), tree / "runs" / "b.jsonl")
    (tree / "runs" / "secret").mkdir()
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.path.basename(os.path.normpath(os.fspath(path))) == "secret":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    for args in (["runs"], ["runs/**/*.jsonl"]):
        found = find_traces(args)
        assert found.traces == ["runs/b.jsonl"]
        assert [str(e) for e in found.unreadable] == [
            "runs/secret: cannot list directory: Permission denied"], args
    result = run("audit", "runs", "--jobs", "1", "--format", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert [e["text"] for e in doc["errors"]] == [
        "runs/secret: cannot list directory: Permission denied"]
    assert [s["path"] for s in doc["sessions"]] == ["runs/b.jsonl"]
    assert run("baseline", "create", "runs", "-o", "b.json").exit_code == 2
    assert not (tree / "b.json").exists()


def test_a_directory_of_only_fifos_is_no_trace(tmp_path: Path) -> None:
    """Skipped non-regular files are no trace: a gate must not pass on nothing."""
    (tmp_path / "fe").mkdir()
    os.mkfifo(tmp_path / "fe" / "only.jsonl")
    for arg in (str(tmp_path / "fe"), str(tmp_path / "fe" / "*.jsonl")):
        with pytest.raises(UsageError, match=r"\(1 skipped: not regular files\)"):
            find_traces([arg])


# adv14 F1: a name a pattern gives literally below a directory it matched, where that
# directory cannot be searched (mode 700 of another owner), was taken as "no such name"
# (os.path.isdir/lexists return False on EACCES): 'runs/*/x.jsonl' passed on runs/a alone
SEARCH_PATTERNS = ["runs/*/x.jsonl", "runs/[as]*/x.jsonl", "runs/*/sub/*.jsonl", "runs/*/sub"]


def _runs(tree: Path) -> Path:
    """runs/{a,secret}/x.jsonl and runs/{a,secret}/sub/t.jsonl."""
    for name in ("a/x.jsonl", "a/sub/t.jsonl", "secret/x.jsonl", "secret/sub/t.jsonl"):
        (tree / "runs" / name).parent.mkdir(parents=True, exist_ok=True)
        dump(drift_records(), tree / "runs" / name)
    return tree / "runs"


def _unsearchable(monkeypatch: pytest.MonkeyPatch, *dirs: Path) -> None:
    """Make a lookup of any name in ``dirs`` fail as in a directory the user may not
    search (root may search anything, so the test simulates it)."""
    blocked = {os.path.abspath(d) for d in dirs}
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def look(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if isinstance(path, (str, os.PathLike)) and \
                    os.path.dirname(os.path.abspath(os.fspath(path))) in blocked:
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, look)


@pytest.mark.parametrize("pattern", SEARCH_PATTERNS)
def test_a_pattern_through_an_unsearchable_directory_reports_it(
        tree: Path, monkeypatch: pytest.MonkeyPatch, pattern: str) -> None:
    runs = _runs(tree)
    _unsearchable(monkeypatch, runs / "secret")
    found = find_traces([pattern])
    assert found.traces == ["runs/a/sub/t.jsonl" if "sub" in pattern else "runs/a/x.jsonl"]
    assert [str(e) for e in found.unreadable] == [
        "runs/secret: cannot search directory: Permission denied"]
    result = run("audit", pattern, "--jobs", "1", "--format", "json")
    assert result.exit_code == 2, result.stdout
    assert [e["text"] for e in json.loads(result.stdout)["errors"]] == [
        "runs/secret: cannot search directory: Permission denied"]


def test_a_pattern_through_links_reports_what_it_cannot_look_up(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wildcard matching a symlink to a directory does not follow it (adv33 B6: only
    a name typed out is followed) and says so; a link whose target cannot be looked
    up at all (a target name past the OS's limit) reports the link; a link loop holds
    no trace and is passed over, as glob does; a missing name, a loop and a name
    longer than any file's are no match, not an error."""
    runs = _runs(tree)
    (runs / "in").symlink_to("secret")
    (runs / "long").symlink_to("x" * 300)
    (runs / "loop").symlink_to("loop")
    _unsearchable(monkeypatch, runs / "in")
    found = find_traces(["runs/*/x.jsonl"])
    assert found.traces == ["runs/a/x.jsonl", "runs/secret/x.jsonl"]
    assert [str(e) for e in found.unreadable] == [
        "runs/long: cannot look up: File name too long"]
    assert found.links == ["runs/in: a symbolic link to a directory, not followed (name "
                           "it to audit what it holds)"]
    (runs / "a" / "loop").symlink_to("loop")
    none = Discovery()
    for pattern in ("runs/[as]*/missing/x.jsonl", "runs/[a]/loop/x.jsonl",
                    "runs/[as]*/" + "y" * 300):  # a name no file can have
        assert expand_pattern(pattern, none) == []
    assert none.unreadable == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may search any directory")
@pytest.mark.parametrize("mode", [0o000, 0o600])
def test_a_pattern_through_a_real_unsearchable_directory(tree: Path, mode: int) -> None:
    runs = _runs(tree)
    (runs / "secret").chmod(mode)
    try:
        found = find_traces(["runs/*/x.jsonl"])
    finally:
        (runs / "secret").chmod(0o755)
    assert found.traces == ["runs/a/x.jsonl"]
    assert [str(e) for e in found.unreadable] == [
        "runs/secret: cannot search directory: Permission denied"]


def test_dotdot_after_a_symlink_is_the_file_the_kernel_opens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv19a F5/F6: ``link/../t.jsonl`` was made ``t.jsonl`` by its letters, but
    ``link/..`` is the parent of the folder ``link`` names: another file was audited
    under the name given, ``-o`` onto it was not refused, and the baseline of one file
    applied to the other.  ``..`` is kept; a baseline key resolves it."""
    from compaction_audit.baseline import trace_key

    (tmp_path / "job").mkdir()
    (tmp_path / "other" / "dir").mkdir(parents=True)
    dump(drift_records(), tmp_path / "other" / "t.jsonl")  # fails
    (tmp_path / "job" / "t.jsonl").write_text("")
    (tmp_path / "job" / "link").symlink_to("../other/dir")
    monkeypatch.chdir(tmp_path / "job")
    assert discover(["link/../t.jsonl"]) == ["link/../t.jsonl"]
    assert discover(["link/..//./t.jsonl"]) == ["link/../t.jsonl"]
    assert discover(["link/.."]) == ["link/../t.jsonl"]
    assert discover(["./t.jsonl"]) == ["t.jsonl"]
    assert trace_key("link/../t.jsonl") == str(tmp_path / "other" / "t.jsonl")
    assert trace_key("./t.jsonl") == "t.jsonl"
    before = (tmp_path / "other" / "t.jsonl").read_bytes()
    result = run("audit", "link/../t.jsonl", "-o", "link/../t.jsonl")
    assert result.exit_code == 2, result.output
    assert (tmp_path / "other" / "t.jsonl").read_bytes() == before
    assert run("audit", "-q", "link/../t.jsonl").exit_code == 1


def test_a_link_to_a_directory_is_said_not_followed(tmp_path: Path) -> None:
    """adv22a observation 4: a failing trace behind a linked folder was never read and
    the run passed without a word; the link is still not followed (loops)."""
    from compaction_audit.discover import find_traces
    from compaction_audit.errors import UsageError
    from tests.gate_app import run

    (tmp_path / "real").mkdir()
    (tmp_path / "top").mkdir()
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "real" / "t.jsonl")
    (tmp_path / "top" / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "top" / ".hidden").symlink_to(tmp_path / "real")  # hidden: named as such
    with pytest.raises(UsageError, match=r"\(1 link\(s\) to directories not followed\)"):
        find_traces([str(tmp_path / "top")])
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "top" / "a.jsonl")
    found = find_traces([str(tmp_path / "top")])
    assert found.traces == [f"{tmp_path}/top/a.jsonl"]
    assert found.links == [f"{tmp_path}/top/linked: a symbolic link to a directory, not "
                           "followed (name it to audit what it holds)"]
    said = run("audit", "-q", str(tmp_path / "top")).stderr
    assert said == (f"compaction-audit: {found.links[0]}\ncompaction-audit: 1 hidden "
                    f"directory not searched: {tmp_path}/top/.hidden; name one to audit what "
                    "it holds\n")


def test_hidden_directories_are_named_not_searched(tree: Path) -> None:
    """adv24 F4: agents keep their sessions in hidden folders (``~/.claude/projects``,
    ``~/.codex/sessions``); a failing session there passed without a word.  They are
    still not searched (``.git``), but named: sorted, one line."""
    (tree / "logs" / ".claude" / "p").mkdir(parents=True)
    shutil.copy(SAMPLES / "handwritten.jsonl", tree / "logs" / ".claude" / "p" / "s.jsonl")
    for args in (["logs"], ["logs/**/*.jsonl"]):
        found = find_traces(args)
        assert found.hidden in (["logs/.hidden", "logs/.claude"],
                                ["logs/.claude", "logs/.hidden"])
        assert "logs/.claude/p/s.jsonl" not in found.traces
    said = run("audit", "-q", "logs/deep").stderr
    assert said.startswith("compaction-audit: 1 file not searched (.json, .db")  # adv31 N9
    assert "hidden" not in said  # nothing hidden there
    out = run("audit", "-q", "logs/b.jsonl", "logs")
    assert out.stderr.splitlines()[-2] == (
        "compaction-audit: 2 hidden directories not searched: logs/.claude, logs/.hidden; "
        "name one to audit what it holds")
    assert run("audit", "-q", "logs/.claude").exit_code == 1  # named: audited, it fails
    with pytest.raises(UsageError, match=r"under directory 'only' \(1 hidden directory not "
                                         r"searched: only/\.claude; name one"):
        shutil.copytree(tree / "logs" / ".claude", tree / "only" / ".claude")
        find_traces(["only"])


def test_hidden_trace_files_a_pattern_leaves_out_are_named(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """adv26 E2: ``*`` does not match a leading dot, so ``audit '**/*.jsonl'`` passed
    where ``audit .`` (which searches every file) failed on ``.failing.jsonl``, and said
    nothing of it.  The files are still not matched, but named, as hidden directories
    are; a hidden file that is no trace's (``.gitignore``), or that the run audits
    anyway (``**`` searches the directories it matches), is no news."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "ok.jsonl")
    shutil.copy(SAMPLES / "research-decay.jsonl", ".failing.jsonl")
    Path(".gitignore").write_text("x\n")
    Path("sub").mkdir()
    shutil.copy(SAMPLES / "handwritten.jsonl", "sub/.x.jsonl")
    assert find_traces(["."]).hidden_files == []  # a directory search audits them
    assert ".failing.jsonl" in find_traces(["."]).traces
    assert find_traces(["*"]).hidden_files == [".failing.jsonl"]
    assert sorted(find_traces(["**/*.jsonl"]).hidden_files) == [".failing.jsonl",
                                                               "sub/.x.jsonl"]
    doublestar = find_traces(["**"])
    assert "sub/.x.jsonl" in doublestar.traces and doublestar.hidden_files == [".failing.jsonl"]
    assert find_traces(["**"], exclude=[".fail*"]).hidden_files == []
    said = run("audit", "-q", "**/*.jsonl")
    assert said.stderr.splitlines() == [
        "compaction-audit: 2 hidden files not matched (a pattern's * leaves out a leading "
        "dot): .failing.jsonl, sub/.x.jsonl; name one to audit it"]
    assert run("audit", "-q", ".*.jsonl").exit_code == 1  # named: audited, it fails
    # usertest32 #8: when nothing else matched, the error names them too
    Path("ok.jsonl").unlink()
    alone = run("audit", "-q", "*.jsonl")
    assert (alone.exit_code, alone.stderr) == (2, (
        "compaction-audit: no trace file matches '*.jsonl'; 1 hidden file not matched (a "
        "pattern's * leaves out a leading dot): .failing.jsonl; name one to audit it\n"))


def test_a_directory_doublestar_cannot_list_is_reported_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv26 E3: ``f`` listable but not searchable (mode 744 of another owner): ``**``
    met ``f/sub`` as a directory it could not list and, its status unknown, as a file
    it could not open, two unreadable traces for one folder.  Root may search anything,
    so the lookups and the listing under ``f`` fail as they would."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f" / "sub").mkdir(parents=True)
    (tmp_path / "ok").mkdir()
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "ok" / "t.jsonl")
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "f" / "sub" / "t.jsonl")
    blocked = os.path.abspath("f")

    def inside(path: Any) -> bool:
        return isinstance(path, (str, os.PathLike)) and os.path.abspath(
            os.fspath(path)).startswith(blocked + os.sep)

    for name in ("stat", "lstat", "scandir"):
        real = getattr(os, name)

        def call(path: Any = ".", *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if inside(path):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, call)
    found = find_traces(["**"])
    assert found.traces == ["ok/t.jsonl"]
    assert [str(e) for e in found.unreadable] == [
        "f/sub: cannot list directory: Permission denied"]


def test_a_wildcard_level_names_the_hidden_directories_it_passes_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv28 F5: ``runs/*/t.jsonl`` passed over ``runs/.agent/t.jsonl`` (failing)
    without a word, where ``runs/**/t.jsonl`` named the folder."""
    monkeypatch.chdir(tmp_path)
    for d in ("runs/a", "runs/.agent"):
        Path(d).mkdir(parents=True)
        shutil.copy(SAMPLES / "handwritten.jsonl", Path(d) / "t.jsonl")
    for pattern in ("runs/*/t.jsonl", "runs/*/*.jsonl", "runs/**/t.jsonl"):
        found = find_traces([pattern])
        assert found.traces == ["runs/a/t.jsonl"] and found.hidden == ["runs/.agent"]


def test_trace_suffixes_match_in_any_letter_case(tmp_path: Path) -> None:
    """adv29 F9: a failing ``B.JSONL`` beside a passing trace was never audited and never
    named; a folder search, and a prefix in object storage, now take the JSON Lines
    suffixes in any letter case.  Cline's fixed names are matched as written."""
    from compaction_audit.discover import TRACE_SUFFIXES
    from compaction_audit.discover_urls import matches
    for name in ("a.jsonl", "B.JSONL", "c.Jsonl.GZ", "d.JSONL.ZST", "e.MESSAGES.JSON",
                 "f.json"):
        (tmp_path / name).write_bytes(b"")
    assert search_dir(str(tmp_path)) == [
        f"{tmp_path}/{n}" for n in ("B.JSONL", "a.jsonl", "c.Jsonl.GZ", "d.JSONL.ZST")]
    assert [matches("runs/", f"runs/{n}", TRACE_SUFFIXES)
            for n in ("x.JSONL", "x.jsonl.Zst", "x.MESSAGES.JSON")] == [True, True, False]


def test_a_file_named_dash_is_that_file_never_standard_input(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv30 F4: ``./-`` and a pattern's match of a file named ``-`` became ``-``, so
    standard input was audited in its place, and ``-o ./-`` wrote over the file (or
    was standard output, for ``convert``)."""
    monkeypatch.chdir(tmp_path)
    dump(drift_records(), tmp_path / "-")
    before = (tmp_path / "-").read_bytes()
    assert discover(["./-"]) == discover(["[-]"]) == ["./-"]
    assert discover(["-"]) == ["-"]
    for args in (["audit", "./-", "-o", "./-"], ["convert", "./-", "-o", "./-"]):
        result = run(*args)
        assert result.exit_code == 2, result.stdout
        assert result.stderr == (f"compaction-audit: {tmp_path}/-: is the input ./-; "
                                 "refusing to overwrite it (choose another output)\n")
    assert (tmp_path / "-").read_bytes() == before
    assert run("audit", "./-", "-q").exit_code == 1  # the drift trace, not empty stdin


def test_json_and_db_files_a_folder_search_leaves_out_are_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv31 N9: ``audit DIR`` audited only ``a.jsonl`` and passed, leaving a failing
    opencode export, an OpenHands trajectory and an opencode store beside it unaudited
    without a word (a pattern over them audits them all).  The search still takes
    only its suffixes, but names each ``.json`` (not Cline's) and ``.db`` it left out
    in one stderr line; those a pattern audits or ``--exclude`` leaves out are no news."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "a.jsonl")
    Path("d").mkdir()
    for name in ("export.json", "d/opencode.DB", "d/s.messages.json",
                 "d/s.compaction.json", "d/s.json", "notes.txt"):  # d/s.json: Cline's
        Path(name).write_text("{}\n")
    found = find_traces(["."])
    assert found.traces == ["a.jsonl", "d/s.compaction.json", "d/s.messages.json"]
    assert found.not_searched == ["export.json", "d/opencode.DB"]
    assert find_traces(["."], exclude=["*.DB"]).not_searched == ["export.json"]
    assert find_traces([".", "*.json"]).not_searched == ["d/opencode.DB"]
    said = run("audit", "-q", ".", "--exclude", "d")
    assert said.stderr.splitlines() == [
        "compaction-audit: 1 file not searched (.json, .db, .ndjson and other .jsonl "
        "names: a folder search takes .jsonl, .jsonl.gz, .jsonl.zst and Cline's "
        ".messages.json): export.json; name one to "
        "audit it (an opencode export or store, an OpenHands trajectory, a Gemini CLI "
        "session)", "compaction-audit: 2 trace(s) left out by --exclude"]
    Path("a.jsonl").unlink()
    with pytest.raises(UsageError, match=r"under directory 'd'.*\(2 files not searched "
                                         r"\(\.json, \.db.*\): d/opencode\.DB, d/s\.json; "
                                         r"name one"):  # no messages file: s.json named
        Path("d/s.messages.json").unlink()
        Path("d/s.compaction.json").unlink()
        find_traces(["d"])


def test_the_run_s_own_baseline_and_output_are_not_files_left_unsearched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest12: ``baseline create . -o cab.json`` then ``audit . --baseline cab.json``
    named cab.json "1 file not searched (... an opencode export or store ...)"."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "a.jsonl")
    assert run("baseline", "create", ".", "-o", "cab.json").exit_code == 0
    assert "not searched" in run("audit", "-q", ".").stderr  # a stranger's .json is named
    said = run("audit", ".", "--baseline", "cab.json", "-f", "json", "-o", "r.json")
    assert said.exit_code == 0 and "not searched" not in said.stderr
    Path("export.json").write_text("{}\n")
    said = run("audit", ".", "--baseline", "./cab.json", "-f", "json", "-o", "r.json")
    assert "not searched (" in said.stderr and ": export.json; name one" in said.stderr
    again = run("baseline", "create", ".", "-o", "cab.json")
    assert ": export.json, r.json; name one" in again.stderr  # its own output left out


def test_the_run_s_own_jsonl_baseline_is_not_audited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest13: a ``cab.jsonl`` baseline in the audited folder was audited (an
    unreadable trace, exit 2).  An output the search finds is still a trace, whose
    overwriting is refused (it may be a hard link to a trace)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "a.jsonl")
    assert run("baseline", "create", ".", "-o", "cab.jsonl").exit_code == 0
    said = run("audit", "-q", ".", "--baseline", "cab.jsonl")
    assert said.exit_code == 0 and said.stdout.startswith("PASS")
    assert run("audit", ".", "--baseline", "cab.jsonl", "-f", "json",
               "-o", "out.jsonl").exit_code == 0
    assert json.loads(Path("out.jsonl").read_text())["summary"]["traces"] == 1
    again = run("audit", ".", "--baseline", "cab.jsonl", "-f", "json", "-o", "out.jsonl")
    assert again.exit_code == 2 and "refusing to overwrite" in again.stderr
    # named on the command line, a file is a trace whatever else it is
    assert run("audit", "-q", ".", "cab.jsonl", "--baseline", "cab.jsonl").exit_code == 2


@pytest.mark.parametrize("pattern", ["traces/*", "traces/**/*.jsonl", "traces/*/*.jsonl",
                                     "traces/[x]"])
def test_a_pattern_does_not_follow_a_link_to_a_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str) -> None:
    """adv33 B6: 'traces/*' matched a committed link to a directory anywhere (``/``,
    ``~/.claude``) and searched it, printing other sessions' facts into the CI log;
    a folder search and '**' did not follow it (and '**' said nothing).  Every
    spelling now names the link and leaves it; the link typed out is followed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "elsewhere").mkdir()
    dump(drift_records(), tmp_path / "traces" / "t.jsonl")
    dump(drift_records(), tmp_path / "elsewhere" / "private.jsonl")
    (tmp_path / "traces" / "x").symlink_to(tmp_path / "elsewhere")
    if pattern in ("traces/*/*.jsonl", "traces/[x]"):  # nothing else matches
        with pytest.raises(UsageError) as info:
            find_traces([pattern])
        assert str(info.value) == (f"no trace file matches {pattern!r} (1 link(s) to "
                                   "directories not followed)")
        return
    found = find_traces([pattern])
    assert found.traces == ["traces/t.jsonl"]
    assert found.links == ["traces/x: a symbolic link to a directory, not followed (name "
                           "it to audit what it holds)"]
    assert find_traces(["traces/x"]).traces == ["traces/x/private.jsonl"]


def test_json_lines_under_other_names_a_folder_search_leaves_out_are_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv33: a failing ``t.jsonl.xz`` (or ``.ndjson``) beside a passing trace was left
    out without a word: a plain exit 0.  Each is named as not searched."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "a.jsonl")
    for name in ("t.jsonl.xz", "u.ndjson", "v.NDJSON.gz", "w.jsonl.bz2", "notes.jsonlx",
                 # adv65 #1: a compressed trajectory, messages file or store too
                 "x.json.gz", "y.messages.json.zst", "z.db.gz", "notes.jsonx"):
        Path(name).write_text("{}\n")
    assert sorted(find_traces(["."]).not_searched) == [
        "t.jsonl.xz", "u.ndjson", "v.NDJSON.gz", "w.jsonl.bz2", "x.json.gz",
        "y.messages.json.zst", "z.db.gz"]


def test_a_pattern_matching_a_cline_manifest_and_its_messages_file_audits_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest40 #4: ``audit 'corpus/*/*'`` audited a Cline session twice, as its
    manifest ``s.json`` and as ``s.messages.json`` (the manifest leads to it), where a
    folder search audits it once.  adv89 #3: by content, not by name: a log named
    ``run.json`` beside ``run.messages.json`` was left out, its FAIL unseen (exit 0),
    and so is no manifest of another session."""
    monkeypatch.chdir(tmp_path)
    Path("d").mkdir()
    for name, sid in (("s", "S1"), ("run", "R"), ("o", "O")):
        Path(f"d/{name}.messages.json").write_text(
            f'{{"version": 1, "sessionId": "{sid}", "messages": []}}\n')
    Path("d/s.compaction.json").write_text("{}\n")
    Path("d/s.json").write_text(  # names no file that exists: the session's by its id
        '{"session_id": "S1", "messages_path": "/elsewhere/S1.messages.json"}\n')
    Path("d/o.json").write_text(  # another session's manifest
        '{"session_id": "S2", "messages_path": "/elsewhere/S2.messages.json"}\n')
    shutil.copy(SAMPLES / "handwritten.jsonl", "d/run.json")  # a log, not a manifest
    Path("d/t.json").write_text("{}\n")
    # adv90 #1: x.json's session is T, whose messages file is a.messages.json; x.messages
    # .json names T only inside a message: the reader takes a.messages.json, so x.json
    # is audited (it was left out by the first "sessionId" in the file)
    Path("d/x.json").write_text('{"session_id": "T", "messages_path": "gone.messages.json"}')
    Path("d/x.messages.json").write_text(
        '{"version": 1, "messages": [{"role": "user", "content": [], "metadata": '
        '{"sessionId": "T"}}], "sessionId": "X"}\n')
    Path("d/a.messages.json").write_text('{"version": 1, "sessionId": "T", "messages": []}')
    assert find_traces(["d/*"]).traces == [
        "d/a.messages.json", "d/o.json", "d/o.messages.json", "d/run.json",
        "d/run.messages.json", "d/s.compaction.json", "d/s.messages.json", "d/t.json",
        "d/x.json", "d/x.messages.json"]
    assert find_traces(["d/s*"]).traces == ["d/s.compaction.json", "d/s.messages.json"]
    assert find_traces(["d/s.json"]).traces == ["d/s.json"]
    assert find_traces(["d/s.json*"]).traces == ["d/s.json"]  # its partner not matched
