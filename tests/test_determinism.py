"""Errors name the first offender in file order, whatever PYTHONHASHSEED, and the
sequential reader and the helper-process reader say the same (issue 11, item 8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.logs import ROOT, LogWriter, rnd, spans

IDS = [f"k{i}" for i in range(8)]
SCRIPT = """
import sys
from compaction_audit.errors import LogError
from compaction_audit.io import parallel
from compaction_audit.io.native import read_native

parallel.PARALLEL_MIN_BYTES = 0 if sys.argv[2] == "helpers" else 1 << 62
assert parallel.wanted(sys.argv[1]) == (sys.argv[2] == "helpers")
try:
    read_native(sys.argv[1])
except LogError as exc:
    print("strict:", exc)
s = read_native(sys.argv[1], lenient=True)
for e in s.skipped + s.dependent:
    print("lenient:", e)
"""


def _log(write_log: LogWriter) -> Path:
    known = spans(*((i, 1) for i in IDS))
    ws = [[i, 0.5] for i in IDS]
    return write_log([
        rnd(0, spans=known, retained=ws),
        # several ids never defined, in an order no hash order is likely to give
        rnd(1, retained=[*ws, *([f"u{i}", 0.1] for i in (5, 2, 7, 0, 3))]),
        # several ids both retained and evicted
        rnd(2, retained=ws, evicted=["k6", "k1", "k4"]),
        # several ids both evicted and offloaded
        rnd(3, retained=ws[:2], evicted=["k7", "k3", "k5"], offloaded=["k5", "k7", "k3"]),
        rnd(4, retained=ws[:2]),
    ])


def _run(path: Path, mode: str, seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(path), mode], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_errors_name_the_first_offender_whatever_the_hash_seed_and_reader(
        write_log: LogWriter) -> None:
    path = _log(write_log)
    outputs = {_run(path, mode, seed) for mode in ("plain", "helpers") for seed in (1, 2)}
    assert len(outputs) == 1, outputs
    lines = outputs.pop().splitlines()
    assert lines[0] == f"strict: {path}:2: id 'u5' is never defined (retained[8])"
    assert lines[1:] == [
        f"lenient: {path}:2: id 'u5' is never defined (retained[8])",
        f"lenient: {path}:3: id 'k1' is retained and also evicted or offloaded this round "
        "(retained[1])",
        f"lenient: {path}:4: id 'k7' is both evicted and offloaded (offloaded)",
    ]
