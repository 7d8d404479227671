"""An input named explicitly that can be read only once (a FIFO, ``<(cat log)``,
``/dev/stdin``, ``/dev/fd/N``) is opened once: the lines read to detect its format are
the lines audited (issue 11, item 6; docs/security.md "File names and discovery").
Before, a native log there was opened a second time: "no round records" on a pipe, a
hang forever on a FIFO.  Every run is a subprocess with a timeout, and no writer is
left blocked."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from compaction_audit.io.lines import reads_once
from tests.fifos import fed_fifo, unblock
from tests.gate_app import drift_records
from tests.logs import dump

TIMEOUT = 60


def cli(*args: str, input: bytes | None = None, pass_fds: tuple[int, ...] = ()
        ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "compaction_audit", *args], input=input,
                          pass_fds=pass_fds, capture_output=True, timeout=TIMEOUT,
                          check=False)


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return dump(drift_records(), tmp_path / "t.jsonl")


@pytest.fixture
def expected(trace: Path) -> subprocess.CompletedProcess[bytes]:
    """The quiet verdict for the same trace read from its regular file."""
    done = cli("audit", str(trace), "-q")
    assert done.returncode == 1 and done.stdout.startswith(b"FAIL"), done
    return done


def pipe_with(data: bytes) -> int:
    """The read end of a pipe holding ``data`` with its write end closed (``data``
    fits the pipe buffer, so nothing blocks)."""
    assert len(data) < 60_000
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    return r


COMPRESS = {"plain": lambda b: b, "gzip": gzip.compress,
            "zstd": lambda b: zstandard.ZstdCompressor().compress(b)}


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_dev_fd_pipe(trace: Path, expected: subprocess.CompletedProcess[bytes],
                     kind: str) -> None:
    """``audit <(cat t.jsonl)``, ``<(gzip -c ...)``, ``<(zstd -c ...)``: compression
    is told by its magic bytes, since the name has no suffix."""
    r = pipe_with(COMPRESS[kind](trace.read_bytes()))
    try:
        done = cli("audit", f"/dev/fd/{r}", "-q", pass_fds=(r,))
    finally:
        os.close(r)
    assert (done.returncode, done.stdout, done.stderr) == (1, expected.stdout, b"")


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_dev_stdin_pipe(trace: Path, expected: subprocess.CompletedProcess[bytes],
                        kind: str) -> None:
    done = cli("audit", "/dev/stdin", "-q", input=COMPRESS[kind](trace.read_bytes()))
    assert (done.returncode, done.stdout, done.stderr) == (1, expected.stdout, b"")


def test_named_fifo(tmp_path: Path, trace: Path,
                    expected: subprocess.CompletedProcess[bytes]) -> None:
    fifo = tmp_path / "f.jsonl"
    writer = fed_fifo(fifo, trace.read_bytes())
    try:
        done = cli("audit", str(fifo), "-q")
    finally:
        unblock(fifo, writer)
    assert (done.returncode, done.stdout, done.stderr) == (1, expected.stdout, b"")


@pytest.mark.parametrize("command", [["audit", "{fifo}", "-q"], ["convert", "{fifo}"]])
def test_an_output_file_check_reads_nothing_of_a_fifo(
        tmp_path: Path, trace: Path, command: list[str]) -> None:
    """-o's check for an SQLite store's journal (adv81 #5) opened each input to read
    its first bytes: of a FIFO, those were the trace's ("no round records")."""
    fifo = tmp_path / "f.jsonl"
    writer = fed_fifo(fifo, trace.read_bytes())
    out = tmp_path / "out.txt"
    try:
        done = cli(*(a.format(fifo=fifo) for a in command), "-o", str(out))
    finally:
        unblock(fifo, writer)
    assert done.returncode == (1 if command[0] == "audit" else 0), done.stderr
    assert out.read_bytes().startswith(b"FAIL: " if command[0] == "audit" else b'{"type":')


def test_several_pipes_in_a_pool_are_read_here(trace: Path) -> None:
    """Spawned pool workers cannot open this process's descriptors: such inputs are
    read in the main process, the regular files in the workers."""
    fds = (pipe_with(trace.read_bytes()), pipe_with(trace.read_bytes()))
    try:
        done = cli("audit", f"/dev/fd/{fds[0]}", str(trace), f"/dev/fd/{fds[1]}", "-q",
                   "-j", "2", pass_fds=fds)
    finally:
        for fd in fds:
            os.close(fd)
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 1, done.stderr
    assert [line.split(": ", 1)[0] for line in lines[:3]] == [
        f"/dev/fd/{fds[0]}", str(trace), f"/dev/fd/{fds[1]}"]
    assert len({line.split(": ", 1)[1] for line in lines[:3]}) == 1  # the same verdict


def test_convert_from_a_pipe(trace: Path) -> None:
    r = pipe_with(trace.read_bytes())
    try:
        done = cli("convert", f"/dev/fd/{r}", "-o", "-", pass_fds=(r,))
    finally:
        os.close(r)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(b'"type":"round"') == len(drift_records()) - 1


def test_reads_once(tmp_path: Path, trace: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert [reads_once(p) for p in ("-", "/dev/stdin", "/dev/fd/0", str(fifo))] == [True] * 4
    assert [reads_once(p) for p in (str(trace), str(tmp_path / "missing"))] == [False] * 2


def test_a_link_into_dev_or_proc_reads_once(tmp_path: Path, trace: Path) -> None:
    """adv22b F1: ``x.jsonl -> /dev/stdin`` with standard input a regular file was
    re-openable by its name, and the parallel reader's helpers read their own
    standard input (/dev/null): "no round records", where reading alone passed."""
    links = {"stdin.jsonl": "/dev/stdin", "fd.jsonl": "/proc/self/fd/0",
             "chain.jsonl": "stdin.jsonl", "plain.jsonl": str(trace)}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    (tmp_path / "fds").symlink_to("/proc/self/fd")
    with open(trace, "rb") as fh:  # standard input a regular file, as in the report
        saved = os.dup(0)
        os.dup2(fh.fileno(), 0)
        try:
            got = {n: reads_once(str(tmp_path / n)) for n in [*links, "fds/0"]}
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    assert got == {"stdin.jsonl": True, "fd.jsonl": True, "chain.jsonl": True,
                   "plain.jsonl": False, "fds/0": True}


@pytest.mark.parametrize("args", [("audit", "-", "-q"), ("trace", "-", "s1"),
                                  ("baseline", "create", "-", "-o", "-")])
def test_standard_input_that_cannot_be_read_is_one_line(tmp_path: Path,
                                                        args: tuple[str, ...]) -> None:
    """adv22b F8: standard input open for writing only failed at the first peek of its
    bytes with "internal error: OSError"."""
    with open(tmp_path / "w.txt", "wb") as wo:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], stdin=wo,
                              capture_output=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines()[-1].startswith(
        "compaction-audit: -: cannot read: Bad file descriptor")
