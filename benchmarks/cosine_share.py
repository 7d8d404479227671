"""The rebuilt cosine's share of the audit (issue 16, point 4), measured in one process.

Usage (from the repository root, traces made by ``benchmarks/run.py``)::

    python benchmarks/cosine_share.py benchmarks/data/scale-2000x2000-seed0.jsonl --runs 3

For each run: read the trace and audit it (``read_native`` + ``audit_session``), timing
the rebuild stage (``compaction_audit.cosine.rebuild``) inside it.  Prints the best wall
time and the best CPU time of this process (``time.process_time``: all its threads, not
the reader's helper processes, so the share it gives is an upper bound) for the stage
and the whole, and their ratio.  The model is loaded before the first run and its load
is reported apart (once per process).  ``COMPACTION_AUDIT_EMBED=lexical`` measures the
fallback.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import compaction_audit.engine as engine
from compaction_audit.cosine import embed
from compaction_audit.io.native import read_native


def main() -> None:
    """Parse the arguments, measure, print one line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spent: dict[str, float] = {}
    original = engine.rebuild

    def timed(*a: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        try:
            return original(*a)
        finally:
            spent["wall"], spent["cpu"] = time.perf_counter() - w, time.process_time() - c

    engine.rebuild = timed  # type: ignore[attr-defined]
    w, c = time.perf_counter(), time.process_time()
    how = embed.method()  # loads the model when it is the one used
    load = (time.perf_counter() - w, time.process_time() - c)
    best = {"wall": 1e9, "cpu": 1e9, "stage_wall": 1e9, "stage_cpu": 1e9}
    for _ in range(args.runs):
        w, c = time.perf_counter(), time.process_time()
        engine.audit_session(read_native(args.trace))
        best["wall"] = min(best["wall"], time.perf_counter() - w)
        best["cpu"] = min(best["cpu"], time.process_time() - c)
        best["stage_wall"] = min(best["stage_wall"], spent["wall"])
        best["stage_cpu"] = min(best["stage_cpu"], spent["cpu"])
    print(f"{args.trace}: {how}; load {load[0]:.2f} s wall, {load[1]:.2f} s CPU (once); "
          f"cosine {best['stage_wall']:.2f} s wall, {best['stage_cpu']:.2f} s CPU; audit "
          f"{best['wall']:.2f} s wall, {best['cpu']:.2f} s CPU; share "
          f"{best['stage_wall'] / best['wall']:.0%} wall, "
          f"{best['stage_cpu'] / best['cpu']:.0%} CPU")


if __name__ == "__main__":
    main()
