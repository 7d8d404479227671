"""The native reader on the four shapes of issue 14: its time over the parse floor.

Shapes: ``full`` or ``delta`` (``retained`` every round or never) x with or without span
text, at a working set of 2,000 and 20,000 items.  Each trace is written to a
temporary directory (deleted at the end) by :func:`compaction_audit.simulate.scale`'s generator,
sized by ``--mb`` (about that many megabytes each: rounds are chosen from the shape's
bytes per round).  Delta traces are written with the generator's rehydration turned
off: an item taken back from the store is "retained again without being new", which
only a ``retained`` list can say, so the generator's delta mode writes a log the reader
rightly rejects once such an item is offloaded again.

Per trace, the best of ``--repeat`` runs, in this process:

``floor``  ``orjson.loads`` over every line, cyclic gc paused (issue 14's parse floor)
``seq``    the sequential reader: ``read_records(decode_lines(iter_lines(path)))``
``native`` ``read_native(path)`` as the CLI calls it (two decoding helper processes
           for plain files of 32 MB or more, when a second CPU is there)

Times are CPU seconds of this process (``--clock cpu``, the default: steady on a
shared machine, but blind to the helper processes, so ``native`` is left out) or wall
seconds (``--clock wall``).  Usage::

    python benchmarks/read_shapes.py --mb 20 --repeat 3
    python benchmarks/read_shapes.py --mb 40 --clock wall --only delta-2000-notext
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compaction_audit.io.lines import decode_lines, iter_lines
from compaction_audit.io.native import read_native, read_records
from compaction_audit.simulate import scale

SHAPES = [(mode, ws, texts) for ws in (2000, 20000) for mode in ("full", "delta")
          for texts in (False, True)]


class _NoRehydration(scale._Generator):
    """The scale generator whose occasional rehydration draw always says no."""

    def round(self, t: int) -> dict[str, Any]:
        if not self.store:
            return super().round(t)
        rng = self.rng
        real = rng.random
        first = [True]

        def draw() -> float:
            if first[0]:  # the rehydration draw (the first one of a round with a store)
                first[0] = False
                real()
                return 1.0
            return real()

        rng.random = draw  # type: ignore[method-assign]
        try:
            return super().round(t)
        finally:
            del rng.random


def write(path: Path, mode: str, ws: int, texts: bool, rounds: int) -> None:
    """Write one shape; ``delta`` without ``retained`` and without rehydration."""
    if mode == "full":
        scale.write_scale_session(path, rounds, ws, texts=texts)
        return
    gen = _NoRehydration(ws, 0, texts)
    with path.open("wb", buffering=1 << 22) as out:
        out.write(orjson.dumps(scale.session_record(rounds, ws, 0)) + b"\n")
        for t in range(rounds):
            record = gen.round(t)
            del record["retained"]
            out.write(orjson.dumps(record) + b"\n")


def sized(path: Path, mode: str, ws: int, texts: bool, mb: float) -> int:
    """Write the shape at about ``mb`` megabytes (a probe run gives bytes per round)."""
    probe = 200 if mode == "delta" else 20
    write(path, mode, ws, texts, probe)
    first = len(path.read_bytes().split(b"\n", 2)[1])  # round 0: the whole context
    per_round = max(1, (path.stat().st_size - first) / (probe - 1))
    rounds = max(probe, int((mb * 1e6 - first) / per_round))
    write(path, mode, ws, texts, rounds)
    return rounds


def floor(path: str) -> None:
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                orjson.loads(line)


def seq(path: str) -> None:
    read_records(decode_lines(path, iter_lines(path), False, []), path)


def best(fn: Callable[[str], None], path: str, repeat: int, clock: Callable[[], float],
         pause_gc: bool = False) -> float:
    times = []
    for _ in range(repeat):
        if pause_gc:
            gc.disable()
        start = clock()
        try:
            fn(path)
        finally:
            gc.enable()
        times.append(clock() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--only", action="append", default=[],
                        help="a shape name such as delta-2000-notext (repeatable)")
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"{'shape':22s} {'rounds':>7s} {'MB':>6s} {'floor s':>8s} {'seq':>7s}"
          + ("" if args.clock == "cpu" else f" {'native':>7s}"))
    with tempfile.TemporaryDirectory() as tmp:
        for mode, ws, texts in SHAPES:
            name = f"{mode}-{ws}-{'text' if texts else 'notext'}"
            if args.only and name not in args.only:
                continue
            path = Path(tmp) / f"{name}.jsonl"
            rounds = sized(path, mode, ws, texts, args.mb)
            p = str(path)
            f = best(floor, p, args.repeat, clock, pause_gc=True)
            row = (f"{name:22s} {rounds:7d} {path.stat().st_size / 1e6:6.1f} {f:8.3f} "
                   f"{best(seq, p, args.repeat, clock) / f:6.2f}x")
            if args.clock == "wall":
                row += f" {best(read_native, p, args.repeat, clock) / f:6.2f}x"
            print(row, flush=True)
            os.unlink(path)


if __name__ == "__main__":
    main()
