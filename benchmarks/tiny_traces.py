"""The fixed cost of one trace (issue 14, fleet audits): CPU per trace when the command
line audits a directory of many tiny traces, where nothing scales with size.

Usage (from the repository root)::

    python benchmarks/tiny_traces.py [--count 200] [--repeat 3] [--kind native|codex|all]

Writes ``--count`` copies of a tiny trace into a temporary directory (``native``: a
2-round native log of about 260 bytes with no text work; ``codex``: the test suite's
Codex fixture ``tests/fixtures/adapters/codex-local.jsonl``, about 1 KB), then runs
``python -m compaction_audit audit DIR -j 1 --format json -o /dev/null`` in a fresh
interpreter, and the same over one copy.  CPU time is user + system of that child
(``os.wait4``: the audit process and what it started), the best of ``--repeat`` runs.
CPU per trace = (CPU of count copies - CPU of one copy) / (count - 1): interpreter
start, imports and the run's own set-up are left out.  Milliseconds.  On a loaded
machine compare CPU times of runs made back to back.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NATIVE = (
    '{"type": "session", "schema": "compaction-audit/1", "session_id": "tiny", '
    '"budget_tokens": 1000}\n'
    '{"type": "round", "round": 0, "spans": [{"id": "s1", "tokens": 20, "text": "a"}]}\n'
    '{"type": "round", "round": 1, "spans": [{"id": "s2", "tokens": 20, "text": "b"}]}\n'
)
CODEX = ROOT / "tests" / "fixtures" / "adapters" / "codex-local.jsonl"


def cpu_of(directory: Path) -> float:
    """CPU seconds (user + system) of one audit of ``directory`` in a fresh child."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "compaction_audit", "audit", str(directory), "-j", "1",
           "--format", "json", "-o", os.devnull, "--fail-on", "never"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"audit failed: {err.decode(errors='replace')[-500:]}")
    return usage.ru_utime + usage.ru_stime


def fill(directory: Path, kind: str, count: int) -> None:
    """``count`` copies of the ``kind`` trace in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    text = NATIVE if kind == "native" else CODEX.read_text(encoding="utf-8")
    for k in range(count):
        (directory / f"trace-{k:05d}.jsonl").write_text(text, encoding="utf-8")


def measure(kind: str, count: int, repeat: int) -> tuple[float, float]:
    """(CPU ms per trace, CPU ms of the run over one copy), best of ``repeat``."""
    base = Path(tempfile.mkdtemp(prefix="tiny-traces-"))
    try:
        fill(base / "one", kind, 1)
        fill(base / "many", kind, count)
        one = min(cpu_of(base / "one") for _ in range(repeat))
        many = min(cpu_of(base / "many") for _ in range(repeat))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return (many - one) / (count - 1) * 1e3, one * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kind", choices=["native", "codex", "all"], default="all")
    args = parser.parse_args()
    if args.count < 2:
        parser.error("--count must be at least 2")
    print(f"{'trace':8} {'count':>6} {'CPU ms/trace':>13} {'CPU ms, 1 trace':>16}")
    for kind in (["native", "codex"] if args.kind == "all" else [args.kind]):
        per, one = measure(kind, args.count, args.repeat)
        print(f"{kind:8} {args.count:>6} {per:>13.1f} {one:>16.0f}")


if __name__ == "__main__":
    main()
