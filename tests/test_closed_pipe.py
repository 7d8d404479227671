"""A standard output whose reader went away (``| head``) ends the command with 141
(128 + SIGPIPE, what a shell reports for a program the signal ended), quietly: it was 1,
which a gate reads as "a finding reaches --fail-on" or "a diff gate failed"
(usertest12: ``diff A B | head -1`` under ``set -o pipefail``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compaction_audit.cli import CLOSED_PIPE
from tests.logs import SAMPLES

DECAY, NO_DECAY = str(SAMPLES / "research-decay.jsonl"), str(SAMPLES / "research-no-decay.jsonl")


@pytest.mark.parametrize("args", [
    ["diff", NO_DECAY, DECAY, "--format", "json", "--all"],  # 590 KB: rich is not the writer
    ["audit", DECAY, "--all"],  # 100 KB of text through rich's console
    ["convert", DECAY, "-o", "-"],  # 250 KB copied to stdout
    ["diff", NO_DECAY, DECAY, "-f", "json", "-o", "/dev/stdout"],  # adv63: was exit 2
    ["audit", DECAY, "--all", "-f", "json", "-o", "/proc/self/fd/1"],
], ids=["diff-json", "audit-text", "convert", "diff-o-dev-stdout", "audit-o-proc-fd"])
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_closed_pipe_exits_141_quietly(args: list[str], unbuffered: bool) -> None:
    # each output is larger than a pipe's buffer (64 KiB), so the write meets the
    # closed pipe whatever the timing.  Unbuffered (PYTHONUNBUFFERED), the raw stream
    # took the first 64 KiB, the rest was dropped and the command exited 0 or 1
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "compaction_audit", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()
    assert proc.wait(timeout=120) == CLOSED_PIPE == 141
    assert proc.stderr.read() == b""


def test_an_open_pipe_gets_the_whole_report_and_the_gate_s_code() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "diff", NO_DECAY, DECAY,
                           "--format", "json", "--all"], capture_output=True, timeout=120,
                          env=env)  # every unit: over 500 KB
    assert done.returncode == 0 and len(done.stdout) > 500_000
    assert done.stdout.startswith(b"{") and done.stdout.rstrip().endswith(b"}")
