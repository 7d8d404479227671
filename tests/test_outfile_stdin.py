"""-o never destroys a file read as standard input (``- < FILE``), and never splits a
hard link (issue 11, item 3; docs/security.md "Output files").  Standard input must be
a real file descriptor here, so the CLI runs in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate_app import drift_records, run
from tests.logs import dump


def cli(args: list[str], stdin: Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    with stdin.open("rb") as fh:
        return subprocess.run([sys.executable, "-m", "compaction_audit", *args], stdin=fh,
                              cwd=cwd, capture_output=True, timeout=60, check=False)


@pytest.mark.parametrize("args", [
    ["audit", "-", "-o", "t.jsonl"],
    ["audit", "-", "-f", "json", "-o", "t.jsonl"],
    ["diff", "-", "other.jsonl", "-o", "t.jsonl"],
    ["baseline", "create", "-", "-o", "t.jsonl"],
    ["convert", "-", "-o", "t.jsonl"],
    ["audit", "-", "-o", "link.jsonl"],  # a hard link to the file stdin reads
])
def test_stdin_redirected_from_the_output_is_refused(tmp_path: Path, args: list[str]) -> None:
    trace = dump(drift_records(), tmp_path / "t.jsonl")
    dump(drift_records(), tmp_path / "other.jsonl")
    os.link(trace, tmp_path / "link.jsonl")
    before = trace.read_bytes()
    done = cli(args, trace, tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.decode().splitlines()
    assert lines == [f"compaction-audit: {args[-1]}: is the input - (standard input); "
                     "refusing to overwrite it (choose another output)"]
    assert trace.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


def test_stdin_from_another_file_may_write_the_output(tmp_path: Path) -> None:
    trace = dump(drift_records(), tmp_path / "t.jsonl")
    (tmp_path / "out.jsonl").write_text("old")
    done = cli(["convert", "-", "-o", "out.jsonl"], trace, tmp_path)
    assert done.returncode == 0, done.stderr
    assert b'"compaction-audit/1"' in (tmp_path / "out.jsonl").read_bytes()


def test_hard_linked_output_is_written_in_place(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every name of a hard-linked output sees the new content (os.replace would leave
    the other name with the old one); a failed run still leaves it as it was."""
    monkeypatch.chdir(tmp_path)
    dump(drift_records(), tmp_path / "t.jsonl")
    out, other = tmp_path / "report.txt", tmp_path / "other-name.txt"
    out.write_text("old content, much longer than nothing " * 500)
    os.link(out, other)
    inode = out.stat().st_ino
    for args in (["audit", "t.jsonl", "-o", "report.txt"],
                 ["audit", "t.jsonl", "-f", "json", "-o", "report.txt"],
                 ["convert", "t.jsonl", "-o", "report.txt"]):
        result = run(*args)
        assert result.exit_code in (0, 1), result.stderr
        assert out.stat().st_ino == inode and out.stat().st_nlink == 2
        assert other.read_bytes() == out.read_bytes()
        assert b"old content" not in out.read_bytes()
    written = out.read_bytes()
    bad = dump([{"type": "round", "round": 0}, "{oops"], tmp_path / "bad.jsonl")
    assert run("convert", str(bad), "-o", "report.txt").exit_code == 2
    assert other.read_bytes() == written == out.read_bytes()
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


@pytest.mark.parametrize("names", [["-", "/dev/stdin"], ["/dev/stdin", "-"],
                                   ["-", "t.jsonl"]])
def test_stdin_named_twice_is_audited_once(tmp_path: Path, names: list[str]) -> None:
    # docs/security.md: the same file named twice is audited once, by device and inode;
    # '-' is standard input's (adv9, minor note)
    trace = dump(drift_records(), tmp_path / "t.jsonl")
    result = cli(["audit", *names, "-q"], trace, tmp_path)
    out = result.stdout.decode()
    assert result.returncode == 1, result.stderr
    assert out.count("FAIL") == 1 and "trace(s)" not in out, out
