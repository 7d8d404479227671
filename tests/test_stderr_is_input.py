"""Standard error that is a file the command reads is refused, before anything is
written onto it (adv23, left open: ``audit t.jsonl 2>> t.jsonl`` appended an error
line or a note to the trace, and ``config show >> pyproject.toml`` the table of options
to the configuration).  The refusal is the one line the run prints, on standard
output, exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.logs import ROOT, SAMPLES

TIMEOUT = 120
CONFIG = b"[tool.compaction-audit]\nwindow = 2\n"


def run_into(target: Path, args: list[str], cwd: Path, fd: int = 2
             ) -> subprocess.CompletedProcess[bytes]:
    """Run the command with standard error (``fd`` 2) or output (1) appended onto
    ``target``, with the repository on the path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with target.open("ab") as sink:
        streams = ({"stderr": sink, "stdout": subprocess.PIPE} if fd == 2
                   else {"stdout": sink, "stderr": subprocess.PIPE})
        return subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=cwd,
                              env=env, timeout=TIMEOUT, check=False, **streams)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "t.jsonl")
    (tmp_path / "pyproject.toml").write_bytes(CONFIG)
    return tmp_path


@pytest.mark.parametrize("args", [
    ["audit", "t.jsonl"], ["audit", "t.jsonl", "--select", "CA999"],
    ["audit", "t.jsonl", "--no-such-option"], ["audit", "t.jsonl", "-o", "r.json"],
    ["diff", "t.jsonl", "t.jsonl"], ["trace", "t.jsonl", "s1"],
    ["convert", "t.jsonl", "-o", "c.jsonl"], ["baseline", "create", "t.jsonl", "-o", "b.json"],
])
def test_standard_error_onto_the_trace_is_refused(folder: Path, args: list[str]) -> None:
    trace = folder / "t.jsonl"
    before = trace.read_bytes()
    done = run_into(trace, args, folder)
    assert done.returncode == 2
    assert done.stdout.decode() == (
        "compaction-audit: standard error: is t.jsonl, which this command reads; "
        "refusing to write onto it (redirect it elsewhere)\n")
    assert trace.read_bytes() == before
    assert not (folder / "r.json").exists() and not (folder / "c.jsonl").exists()


def test_a_trace_found_in_a_folder_is_checked_too(folder: Path) -> None:
    """The folder is named, not the trace: the check at start finds the trace under
    it (adv25 N1)."""
    (folder / "pyproject.toml").unlink()
    trace = folder / "t.jsonl"
    before = trace.read_bytes()
    done = run_into(trace, ["audit", "."], folder)
    assert done.returncode == 2
    assert done.stdout.decode() == (
        f"compaction-audit: standard error: is {os.path.realpath(trace)}, which this "
        "command reads; refusing to write onto it (redirect it elsewhere)\n")
    assert trace.read_bytes() == before


@pytest.mark.parametrize("fd", [1, 2])
def test_config_show_onto_the_configuration_is_refused(folder: Path, fd: int) -> None:
    config = folder / "pyproject.toml"
    done = run_into(config, ["config", "show", *(["--select", "CA999"] if fd == 2 else [])],
                    folder, fd)
    assert done.returncode == 2
    said = done.stdout if fd == 2 else done.stderr
    assert said.decode().startswith(
        f"compaction-audit: standard {'error' if fd == 2 else 'output'}: is ")
    assert config.read_bytes() == CONFIG


def test_standard_error_to_another_file_is_used(folder: Path) -> None:
    errors = folder / "errors.txt"
    done = run_into(errors, ["audit", "t.jsonl", "--select", "CA999"], folder)
    assert done.returncode == 2 and done.stdout == b""
    assert errors.read_text().startswith("compaction-audit: --select: 'CA999' matches no rule")
    shown = run_into(folder / "config.txt", ["config", "show"], folder, fd=1)
    assert shown.returncode == 0 and b"window" in (folder / "config.txt").read_bytes()


@pytest.mark.parametrize(("args", "target"), [
    (["audit", "t.jsonl"], "t.jsonl"), (["audit", "."], "t.jsonl"),
    (["config", "show", "--select", "CA999"], "pyproject.toml"),
    (["config", "show"], "pyproject.toml"),
])
def test_both_streams_onto_an_input_write_nothing(folder: Path, args: list[str],
                                                  target: str) -> None:
    """adv24 F8: with ``&>> t.jsonl`` the refusal went to standard output, which was
    the trace too (after a pyproject.toml, every command there failed on bad TOML).
    Both are silenced: exit 2 is all that is said."""
    if args == ["audit", "."]:
        (folder / "pyproject.toml").unlink()
    path = folder / target
    before = path.read_bytes()
    with path.open("ab") as sink:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=folder,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=sink,
                              stderr=subprocess.STDOUT, timeout=TIMEOUT, check=False)
    assert done.returncode == 2
    assert path.read_bytes() == before


@pytest.mark.parametrize("args", [
    ["audit", "d", "-q"], ["audit", "d/**/*.jsonl", "-q"], ["audit", "d", "--window", "abc"],
    ["audit", "d", "--select", "NOPE"], ["baseline", "create", "d", "-o", "b.json"],
])
def test_a_trace_a_search_will_find_is_checked_before_anything_is_said(
        folder: Path, args: list[str]) -> None:
    """adv25 N1: the search's note of a hidden directory, or a usage error, was
    appended onto ``d/t.jsonl`` before the command looked at what the folder holds."""
    (folder / "d" / ".hidden").mkdir(parents=True)
    shutil.copy(SAMPLES / "handwritten.jsonl", folder / "d" / "t.jsonl")
    trace = folder / "d" / "t.jsonl"
    before = trace.read_bytes()
    done = run_into(trace, args, folder)
    assert done.returncode == 2
    assert done.stdout.decode().startswith("compaction-audit: standard error: is ")
    assert trace.read_bytes() == before


@pytest.mark.parametrize("args", [["audit", "-", "-q"], ["convert", "-", "--from", "bogus"]])
def test_standard_input_s_file_is_checked_too(folder: Path, args: list[str]) -> None:
    trace = folder / "t.jsonl"
    before = trace.read_bytes()
    with trace.open("rb") as stdin, trace.open("ab") as sink:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=folder,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=stdin,
                              stderr=sink, stdout=subprocess.PIPE, timeout=TIMEOUT,
                              check=False)
    assert done.returncode == 2
    assert done.stdout.decode() == (
        "compaction-audit: standard error: is - (standard input), which this command "
        "reads; refusing to write onto it (redirect it elsewhere)\n")
    assert trace.read_bytes() == before


@pytest.mark.parametrize(("name", "refused"), [
    ("err.json", False), ("s.json", True), ("s.messages.json", True),
    ("x.compaction.json", True), ("err.jsonl", True)])
def test_standard_error_onto_a_json_file_a_folder_search_does_not_read(
        folder: Path, name: str, refused: bool) -> None:
    """adv33 B7: every ``.json`` under a folder named counted as read, though a folder
    search names the ones it does not read: ``audit d 2> d/err.json`` was refused as
    writing onto an input.  Only the names a folder search reads are refused: traces,
    Cline's messages and compaction files, and the manifest ``s.json`` beside
    ``s.messages.json``."""
    (folder / "d").mkdir()
    shutil.copy(SAMPLES / "handwritten.jsonl", folder / "d" / "t.jsonl")
    (folder / "d" / "s.messages.json").write_bytes(b"")  # the manifest's partner
    target = folder / "d" / name
    done = run_into(target, ["audit", "d", "-q"], folder)
    said = done.stdout.decode()
    if refused:
        assert done.returncode == 2
        assert said.startswith("compaction-audit: standard error: is ")
    else:
        assert said.startswith("d/t.jsonl: "), said
        assert "standard error" not in target.read_text()


FIXTURES = ROOT / "tests" / "fixtures" / "adapters"


@pytest.mark.parametrize(("files", "trace", "onto", "args"), [
    # a usage error before any command runs: Cline's compaction file beside its
    # messages file, Gemini CLI's telemetry.log beside its session (adv78 #5: the line
    # was appended onto them, and every later audit of the session failed)
    ({"s.messages.json": "cline/session.messages.json",
      "s.compaction.json": "cline/basic.compaction.json"},
     "s.messages.json", "s.compaction.json", ["--fail-on", "bogus"]),
    ({"session.jsonl": "gemini-cli/compression.jsonl", "telemetry.log": "gemini-cli/telemetry.log"},
     "session.jsonl", "telemetry.log", ["-o", "out.xz"]),
])
def test_standard_error_onto_a_file_read_along_with_the_input_is_refused(
        tmp_path: Path, files: dict[str, str], trace: str, onto: str,
        args: list[str]) -> None:
    for name, fixture in files.items():
        shutil.copy(FIXTURES / fixture, tmp_path / name)
    before = (tmp_path / onto).read_bytes()
    done = run_into(tmp_path / onto, ["audit", trace, *args], tmp_path)
    assert done.returncode == 2
    assert done.stdout.decode() == (
        f"compaction-audit: standard error: is {onto}, which this command reads; "
        "refusing to write onto it (redirect it elsewhere)\n")
    assert (tmp_path / onto).read_bytes() == before
    # another file beside them takes the line, as before
    other = tmp_path / "err.txt"
    done = run_into(other, ["audit", trace, *args], tmp_path)
    assert done.returncode == 2 and other.read_bytes().startswith(b"compaction-audit: ")


@pytest.mark.parametrize(("files", "arg", "onto"), [
    # the input reached through a folder or a pattern, the usage error before discovery
    # (adv79: both appended the line; an SQLite store then failed "readonly database")
    ({"g/session.jsonl": "gemini-cli/compression.jsonl",
      "g/telemetry.log": "gemini-cli/telemetry.log"}, "g", "g/telemetry.log"),
    ({"o/opencode.db": "opencode/real/opencode.db"}, "o/*.db", "o/opencode.db-journal"),
])
def test_standard_error_onto_a_companion_of_a_searched_input_is_refused(
        tmp_path: Path, files: dict[str, str], arg: str, onto: str) -> None:
    for name, fixture in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURES / fixture, tmp_path / name)
    target = tmp_path / onto
    target.touch()
    before = target.read_bytes()
    done = run_into(target, ["audit", arg, "--fail-on", "bogus"], tmp_path)
    assert done.returncode == 2
    assert done.stdout.decode().startswith(
        f"compaction-audit: standard error: is {target}, which this command reads; ")
    assert target.read_bytes() == before



def run_plain(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the command with both streams captured apart."""
    return subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          timeout=TIMEOUT, check=False)


@pytest.mark.parametrize("output", [
    ["-o", "/dev/stdout"], ["-o", "out.txt"], ["--output=/dev/stdout"], ["-o/dev/stdout"],
    ["--output", "out.txt"]])
@pytest.mark.parametrize("command", [["audit", "t.jsonl"], ["diff", "t.jsonl", "t.jsonl"]])
def test_the_output_file_that_is_also_standard_output_and_error_is_written(
        folder: Path, output: list[str], command: list[str]) -> None:
    """adv84: ``audit -q -o /dev/stdout LOG > out.txt 2>&1`` exited 2 with nothing in
    out.txt: the value of ``-o`` counted as a file the command reads, so standard error
    (out.txt) was refused, and the refusal silenced along with standard output.  The
    report is written, as without ``-o``."""
    (folder / "pyproject.toml").unlink()
    plain = run_plain([*command, "-q"], folder)
    assert plain.stdout and plain.returncode in (0, 1)
    path = folder / "out.txt"
    with path.open("wb") as out:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", *command, "-q",
                               *output], cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=out, stderr=subprocess.STDOUT, timeout=TIMEOUT,
                              check=False)
    assert (done.returncode, path.read_bytes()) == (plain.returncode, plain.stdout)


def test_the_output_file_that_is_standard_error_is_written(folder: Path) -> None:
    """adv84: ``-o /dev/stderr 2> err.txt`` was refused as "standard error: is
    /dev/stderr, which this command reads": the command writes it, reads nothing
    from it."""
    (folder / "pyproject.toml").unlink()
    done = run_into(folder / "err.txt", ["audit", "-q", "-o", "/dev/stderr", "t.jsonl"],
                    folder)
    plain = run_plain(["audit", "-q", "t.jsonl"], folder)
    assert done.stdout == b"" and done.returncode == plain.returncode
    assert (folder / "err.txt").read_bytes() == plain.stdout


def test_a_trace_named_like_a_pattern_is_no_pattern_when_it_exists(folder: Path) -> None:
    """adv86 #6: ``audit 'a[1].jsonl' 2> err.json`` audits the file as named, but the
    standard-error check read the name as a pattern over its folder and refused
    err.json, exit 2; a pattern that names no file still counts its folder."""
    shutil.copy(folder / "t.jsonl", folder / "a[1].jsonl")
    done = run_into(folder / "err.json", ["audit", "a[1].jsonl", "-q"], folder)
    assert done.returncode == 1, done.stdout  # the sample's findings
    assert done.stdout.decode() == "FAIL: 6 error(s), 2 warning(s), 0 info\n"
    assert (folder / "err.json").read_bytes() == b""
    (folder / "x1.jsonl").write_bytes((folder / "t.jsonl").read_bytes())
    refused = run_into(folder / "x1.jsonl", ["audit", "x[12].jsonl", "-q"], folder)
    assert refused.returncode == 2
    assert refused.stdout.decode().startswith("compaction-audit: standard error: is ")
