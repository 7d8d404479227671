"""A standard output that cannot be written (a full disk, ``> /dev/full``) ends every
command with one line and exit 2, as a failed ``-o`` file does (issue 11, class 9,
adv11 F5 and F7): the report said "internal error: OSError: [Errno 28] ...", and
``simulate`` printed click's usage block ("Invalid value for --output")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate_app import drift_records
from tests.logs import dump

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "adapters"
FULL = "compaction-audit: standard output: cannot write: No space left on device\n"

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


def _run(args: list[str], cwd: Path, stdout: int | None, unbuffered: bool = False
         ) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(ROOT), **({"PYTHONUNBUFFERED": "1"} if unbuffered else {}))
    with open("/dev/full", "wb") as full:
        return subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=cwd,
                              env=env, stdout=full if stdout is None else stdout,
                              stderr=subprocess.PIPE, timeout=120)


@pytest.mark.parametrize("args", [
    ["audit", "drift.jsonl"],
    ["audit", "drift.jsonl", "--format", "json"],
    ["convert", str(FIXTURES / "claude-session.jsonl"), "-o", "-"],
    ["simulate", "-o", "-", "--rounds", "3"],
    ["--version"], ["--help"], ["audit", "--help"],  # exit 120 and "Exception ignored" (adv61)
])
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_full_standard_output_is_one_line_and_exit_2(tmp_path: Path, args: list[str],
                                                       unbuffered: bool) -> None:
    # buffered (no PYTHONUNBUFFERED), simulate's records waited in the buffer and the
    # failed flush at exit printed "Exception ignored" and exited 120
    dump(drift_records(), tmp_path / "drift.jsonl")
    result = _run(args, tmp_path, None, unbuffered)
    assert (result.returncode, result.stderr.decode()) == (2, FULL)


def test_simulate_into_a_closed_pipe_exits_141_quietly(tmp_path: Path) -> None:
    # a closed pipe is the command line's, as for every command (usertest12: 1, a gate's
    # code, for | head); it was one line and exit 2 here, and 120 with a buffered stdout
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads: the first write fails with EPIPE
    try:
        for args in (["simulate", "-o", "-", "--rounds", "3"], ["--version"], ["--help"]):
            for unbuffered in (False, True):
                result = _run(args, tmp_path, writer, unbuffered)
                assert (result.returncode, result.stderr.decode()) == (141, ""), args
    finally:
        os.close(writer)


CLOSED = "compaction-audit: standard output: cannot write: Bad file descriptor\n"


@pytest.mark.parametrize("args", [
    "audit drift.jsonl", "audit drift.jsonl -q", "audit drift.jsonl --format json",
    "audit drift.jsonl --format sarif", "trace drift.jsonl s1", "rules",
    "config show", "thresholds", "--version",
])
def test_a_closed_standard_output_is_one_line_and_exit_2(tmp_path: Path, args: str) -> None:
    """Started with file descriptor 1 closed (``>&-``), Python leaves ``sys.stdout``
    None: every command ended "internal error: AttributeError" (adv16 F2)."""
    dump(drift_records(), tmp_path / "drift.jsonl")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(["sh", "-c", f"'{sys.executable}' -m compaction_audit {args} >&-"],
                            cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert (result.returncode, result.stderr) == (2, CLOSED)


def test_a_closed_standard_output_is_not_needed_with_an_output_file(tmp_path: Path) -> None:
    dump(drift_records(), tmp_path / "drift.jsonl")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(["sh", "-c", f"'{sys.executable}' -m compaction_audit audit "
                             "drift.jsonl --format json -o report.json >&-"],
                            cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert (result.returncode, result.stderr) == (1, "")  # the drift trace fails its gate
    assert (tmp_path / "report.json").read_bytes().startswith(b"{")
