"""``diff`` reads standard input for one run at most: it can be read once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.logs import ROOT, SAMPLES

LOG = SAMPLES / "research-decay.jsonl"


def _diff(*args: str, stdin: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compaction_audit", "diff", *args, "-q"],
                          stdin=stdin, capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)


@pytest.mark.parametrize("pair", [("-", "-"), ("-", "/dev/stdin"), ("/dev/stdin", "-"),
                                  ("/dev/fd/0", "/dev/stdin")])
def test_standard_input_by_any_name_for_both_runs_is_one_usage_error(
        pair: tuple[str, str]) -> None:
    """adv86 #7: ``diff - /dev/stdin`` with a pipe said "/dev/stdin: no round records:
    nothing to audit" (the first run had read the stream)."""
    with subprocess.Popen(["cat", str(LOG)], stdout=subprocess.PIPE) as cat:
        result = _diff(*pair, stdin=cat.stdout)
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("compaction-audit: baseline and candidate cannot both be "
                             "standard input\n")


def test_a_file_redirected_to_standard_input_is_read_by_both_names() -> None:
    """A file redirected to standard input opens again by its other names: not refused."""
    with LOG.open("rb") as fh:
        result = _diff("-", "/dev/stdin", stdin=fh)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("no change")


def test_one_fifo_or_pipe_for_both_runs_is_one_usage_error(tmp_path: Path) -> None:
    """adv87 #4: ``diff ff ff`` on a FIFO waited for ever (the second open has no
    writer), and ``diff /dev/fd/3 /dev/fd/3`` said the second was empty."""
    import os

    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    result = _diff(str(fifo), str(fifo), stdin=subprocess.DEVNULL)  # opens nothing
    assert result.returncode == 2, result.stderr
    assert result.stderr == (f"compaction-audit: baseline and candidate are one stream "
                             f"({fifo}), which can be read once: give two files\n")
    with subprocess.Popen(["cat", str(LOG)], stdout=subprocess.PIPE) as cat:
        piped = subprocess.run(  # the pipe as descriptor 3, standard input none
            ["bash", "-c", 'exec 3<&0 0</dev/null; exec "$0" -m compaction_audit diff '
             '/dev/fd/3 /dev/fd/3 -q', sys.executable], stdin=cat.stdout,
            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert piped.returncode == 2, piped.stderr
    assert "baseline and candidate are one stream (/dev/fd/3)" in piped.stderr
    same = _diff(str(LOG), str(LOG), stdin=subprocess.DEVNULL)  # a file: read twice
    assert same.returncode == 0 and same.stdout.strip().endswith("no change")
