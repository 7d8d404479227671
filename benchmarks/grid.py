"""The benchmark grid of issue 14: ``python benchmarks/run.py --grid``.

Rounds (100, 1,000, 10,000) x working set (100, 2,000, 20,000) x ``retained`` full or
delta (:func:`compaction_audit.simulate.scale.write_scale_session`, ``retained=False``) x with
or without span text (``texts=``): 36 cells.  Each cell generates its trace under
``--data-dir`` (deleted after the cell unless ``--keep``) and measures, each step in a
fresh subprocess (``run.py --step``): the parse floor (``orjson.loads`` over every
line, garbage collector paused: run.py's ``orjson`` step) and the audit (``api.audit``
plus the JSON report, bounded as ``audit --format json`` writes it by default).

Sizes: a cell's file is capped at ``--max-mb`` (default 250 MB) by running fewer rounds
than its nominal count (the table shows the rounds run, with ``*`` where capped);
``--scale F`` multiplies the rounds (at least 10) and the cap by F (``--scale 1/20`` for
a quick run while developing). Per cell the table gives the file size, the parse floor,
the audit time and its ratio to the floor, the audit's peak RSS over the file size,
findings (and their episodes), the JSON report's bytes and its ratio to the trace, and
the verdict against the targets (issue 14, section 2; they apply to cells of 100 MB and
more: audit <= 3x the floor, peak RSS <= 2x the file; the report bound, <= a tenth of
the trace, applies to every cell of 100 KB or more, which is every cell unscaled, and
under ``--scale`` to cells of 1 MB or more: :data:`SCALED_REPORT_MIN_MB`). Then
the growth exponent: the least-squares slope of log(audit seconds) against log(file
bytes) along the rounds axis (each working set, mode and text setting) and along the
working-set axis (each rounds count, mode and text setting); 1.0 is linear.

``--write-docs`` replaces the block between ``<!-- grid:begin -->`` and
``<!-- grid:end -->`` in docs/performance.md with the tables of this run;
``--from-json FILE`` re-renders a run saved with ``--json`` instead of running.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from fractions import Fraction
from itertools import product
from pathlib import Path
from typing import Any

from run import HERE, _child, _mb, _measure, machine

ROUNDS = (100, 1_000, 10_000)
WORKING_SETS = (100, 2_000, 20_000)
MODES = ("full", "delta")
TEXTS = (False, True)
MAX_MB = 250
"""Default cap of a cell's file (MB): keeps the full grid under half an hour on 2 cores."""
TARGET_MB = 100
"""Cells at least this large are held to the targets (issue 14, section 2)."""
TARGET_FLOOR, TARGET_RSS, TARGET_REPORT = 3.0, 2.0, 0.1
REPORT_MIN_KB = 100
SCALED_REPORT_MIN_MB = 1
"""Under ``--scale`` other than 1, the report bound is judged on cells of this size or
more only: a scaled-down cell is a shorter trace of the same shape, and its report's
fixed part and capped lists do not shrink with it (usertest74 F5: at ``--scale 1/20`` the
1,000-round cells of 100 items with text ran 50 rounds, 0.2-0.3 MB, with reports of
0.15-0.19 of the trace, where the unscaled cells' are 0.010-0.012)."""
"""The report bound applies to traces of at least this size (KB): a report's fixed
part (tool, settings, conditions, cosine: 2-4 KB) is more than a tenth of a smaller
one.  Every cell of the full grid is larger (the smallest, 100 rounds x 100 items in
delta mode, is about 140 KB)."""
DOCS = HERE.parent / "docs" / "performance.md"
BEGIN, END = "<!-- grid:begin -->", "<!-- grid:end -->"


def bytes_per_round(working_set: int, mode: str, texts: bool) -> float:
    """About how many bytes a round of the generator takes (measured at 100 rounds):
    ``retained`` pairs of about 22.5 bytes per working-set item, plus the changes."""
    change = 3_900 if texts else 1_300
    return change + (22.5 * working_set if mode == "full" else 0)


def capped_rounds(rounds: int, working_set: int, mode: str, texts: bool,
                  max_bytes: float) -> int:
    """``rounds``, or fewer so that the file stays under ``max_bytes`` (at least 10)."""
    first = working_set * (150 if texts else 35)  # round 0 brings the working set
    fit = int((max_bytes - first) / bytes_per_round(working_set, mode, texts))
    return max(10, min(rounds, fit))


MIN_SPREAD = 2.0
"""An exponent needs files at least this many times apart along its line (in delta mode
the file barely grows with the working set: a slope over files within a few percent is
noise)."""


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(y) on log(x); None when the largest x is less than
    :data:`MIN_SPREAD` times the smallest."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2 or max(x for x, _ in pts) - min(x for x, _ in pts) < math.log(MIN_SPREAD):
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx


def verdict(c: dict[str, Any]) -> str:
    """pass/FAIL against the targets, naming what failed; ``-`` under 100 MB (the
    report bound is checked on every cell of :data:`REPORT_MIN_KB` or more, of
    :data:`SCALED_REPORT_MIN_MB` or more in a scaled run: ``c["scale"]`` other than 1)."""
    failed = []
    least = (REPORT_MIN_KB * 1e3 if c.get("scale", "1") == "1"
             else SCALED_REPORT_MIN_MB * 1e6)
    judged = c["bytes"] >= least
    if c["report_ratio"] > TARGET_REPORT and judged:
        failed.append("report")
    if c["bytes"] >= TARGET_MB * 1e6:
        if c["ratio"] > TARGET_FLOOR:
            failed.append("time")
        if c["rss_ratio"] > TARGET_RSS:
            failed.append("memory")
        return "FAIL: " + ", ".join(failed) if failed else "pass"
    return ("FAIL: " + ", ".join(failed) if failed
            else "- (report ok)" if judged else "- (report not judged)")


def run_cell(rounds: int, working_set: int, mode: str, texts: bool, args: argparse.Namespace,
             max_bytes: float) -> dict[str, Any]:
    """Generate one cell's trace, measure the floor and the audit, delete the trace."""
    scaled = max(10, round(rounds * args.scale))
    run_rounds = capped_rounds(scaled, working_set, mode, texts, max_bytes)
    name = (f"grid-{run_rounds}x{working_set}-{mode}-{'text' if texts else 'notext'}"
            f"-seed{args.seed}.jsonl")
    path = args.data_dir / name
    made = False
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        _child(["generate", str(tmp), str(run_rounds), str(working_set), str(args.seed),
                "1" if texts else "0", "1" if mode == "full" else "0"])
        tmp.rename(path)
        made = True
    size = path.stat().st_size
    floor = _measure("orjson", path, args.repeat)
    audit = _measure("audit", path, args.repeat)
    if made and not args.keep:
        path.unlink()
    cell = {"rounds": rounds, "rounds_run": run_rounds, "capped": run_rounds < scaled,
            "working_set": working_set, "mode": mode, "texts": texts, "bytes": size,
            "floor_seconds": floor["seconds"], "audit_seconds": audit["seconds"],
            "peak_rss": audit["peak_rss"], "findings": audit["findings"],
            "episodes": audit["episodes"], "report_bytes": audit["report_bytes"],
            "cosine_seconds": audit.get("cosine_seconds", 0.0), "scale": str(args.scale)}
    cell["ratio"] = cell["audit_seconds"] / cell["floor_seconds"]
    cell["rss_ratio"] = cell["peak_rss"] / size
    cell["report_ratio"] = cell["report_bytes"] / size
    cell["verdict"] = verdict(cell)
    return cell


def _size(n: float) -> str:
    """Bytes as MB, or KB under 1 MB (a bounded report is tens of KB)."""
    return _mb(n) if n >= 1e6 else f"{n / 1e3:,.0f} KB"


def _share(c: dict[str, Any]) -> str:
    """The rebuilt cosine's share of the audit's wall time (issue 16, point 4): text
    cells only; a run saved before the column existed shows a dash."""
    if not c["texts"] or "cosine_seconds" not in c:
        return "-"
    return f"{c['cosine_seconds'] / c['audit_seconds']:.0%}"


def table(cells: list[dict[str, Any]]) -> str:
    """The cells as a Markdown table."""
    lines = ["| rounds (run) | working set | retained | span text | file | floor | audit "
             "| audit / floor | peak RSS / file | findings (episodes) | JSON report "
             "| report / trace | cosine share | targets |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for c in cells:
        run = f"{c['rounds_run']:,}{'*' if c['capped'] else ''}"
        lines.append(
            f"| {c['rounds']:,} ({run}) | {c['working_set']:,} | {c['mode']} "
            f"| {'yes' if c['texts'] else 'no'} | {_mb(c['bytes'])} "
            f"| {c['floor_seconds']:.2f} s | {c['audit_seconds']:.2f} s | {c['ratio']:.1f}x "
            f"| {c['rss_ratio']:.1f}x | {c['findings']:,} ({c['episodes']:,}) "
            f"| {_size(c['report_bytes'])} | {c['report_ratio']:.3f} | {_share(c)} "
            f"| {c['verdict']} |")
    return "\n".join(lines)


def exponents(cells: list[dict[str, Any]]) -> str:
    """The growth exponents along each axis as a Markdown table."""
    lines = ["| along | fixed | retained | span text | files | audit | exponent |",
             "|---|---|---|---|---|---|---:|"]
    for axis, other, fixed_values in (("rounds", "working_set", WORKING_SETS),
                                      ("working set", "rounds", ROUNDS)):
        for fixed, mode, texts in product(fixed_values, MODES, TEXTS):
            line = [c for c in cells if c[other] == fixed and c["mode"] == mode
                    and c["texts"] == texts]
            if len(line) < 2:
                continue
            e = slope([(c["bytes"], c["audit_seconds"]) for c in line])
            sizes = " / ".join(_mb(c["bytes"]) for c in line)
            times = " / ".join(f"{c['audit_seconds']:.1f} s" for c in line)
            label = f"working set {fixed:,}" if other == "working_set" else f"{fixed:,} rounds"
            lines.append(f"| {axis} | {label} | {mode} | {'yes' if texts else 'no'} "
                         f"| {sizes} | {times} "
                         f"| {'- (files within 2x)' if e is None else f'{e:.2f}'} |")
    return "\n".join(lines)


def docs_block(cells: list[dict[str, Any]], info: dict[str, Any], command: str,
               seconds: float, when: str) -> str:
    """The generated block of docs/performance.md."""
    return "\n".join([
        BEGIN,
        "<!-- generated by benchmarks/run.py --grid --write-docs: do not edit by hand -->",
        "",
        f"`{command}` ({when}) on "
        f"{info['nproc']} cores, {info['memory']}, {info['cpu']}; "
        f"Python {info['python']}, Polars {info['polars']}, orjson {info['orjson']}; "
        f"the whole grid took {seconds / 60:.1f} minutes.",
        "",
        table(cells),
        "",
        "Growth exponents (slope of log audit time against log file size; 1.0 is "
        "linear):",
        "",
        exponents(cells),
        "",
        END,
    ])


def write_docs(block: str, path: Path = DOCS) -> None:
    """Replace the generated block of ``path`` (it must hold both markers)."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} block to replace")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(head + block + tail)


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def grid_main(argv: list[str]) -> int:
    """Parse the grid's options, run the cells, print (and optionally write) the tables."""
    parser = argparse.ArgumentParser(prog="run.py --grid",
                                     description="the benchmark grid of issue 14")
    parser.add_argument("--scale", default="1",
                        help="multiply every cell's rounds and the file cap by this "
                             "fraction (default 1; 1/20 for a quick run)")
    parser.add_argument("--max-mb", type=float, default=MAX_MB,
                        help=f"cap a cell's file at this many MB by running fewer rounds "
                             f"(default {MAX_MB})")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per step, the best time kept (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=HERE / "data")
    parser.add_argument("--keep", action="store_true", help="keep the generated traces")
    parser.add_argument("--only", default="",
                        help="run only cells matching, e.g. 'rounds=1000,ws=2000,"
                             "mode=delta,text=yes' (any subset of the keys)")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument("--write-docs", action="store_true",
                        help="replace the generated grid block in docs/performance.md")
    parser.add_argument("--from-json", type=Path,
                        help="do not run: print (and with --write-docs write) the tables "
                             "of a run saved with --json")
    args = parser.parse_args(argv)
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        for c in saved["cells"]:
            c["verdict"] = verdict(c)
        print(table(saved["cells"]) + "\n\n" + exponents(saved["cells"]))
        if args.write_docs:
            when = saved.get("when") or _utc(args.from_json.stat().st_mtime)
            write_docs(docs_block(saved["cells"], saved["machine"], saved["command"],
                                  saved["seconds"], when))
        return 1 if any(c["verdict"].startswith("FAIL") for c in saved["cells"]) else 0
    try:
        args.scale = Fraction(args.scale)
    except (ValueError, ZeroDivisionError):
        raise SystemExit(f"--scale: expected a fraction such as 1/20, got {args.scale!r}"
                         ) from None
    if args.scale <= 0:
        raise SystemExit("--scale must be > 0")
    only = dict(kv.split("=", 1) for kv in args.only.split(",") if "=" in kv)
    info = machine()
    print(f"machine: {info['nproc']} cores, {info['memory']}, {info['cpu']}", flush=True)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    max_bytes = args.max_mb * 1e6 * float(args.scale)
    cells: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for rounds, ws, mode, texts in product(ROUNDS, WORKING_SETS, MODES, TEXTS):
        want = {"rounds": str(rounds), "ws": str(ws), "mode": mode,
                "text": "yes" if texts else "no"}
        if any(want.get(k) != v for k, v in only.items()):
            continue
        cell = run_cell(rounds, ws, mode, texts, args, max_bytes)
        cells.append(cell)
        print(f"[{rounds}x{ws} {mode} {'text' if texts else 'no text'}] "
              f"{_mb(cell['bytes'])} ({cell['rounds_run']} rounds): "
              f"{cell['audit_seconds']:.2f} s = {cell['ratio']:.1f}x floor, "
              f"RSS {cell['rss_ratio']:.1f}x, report {cell['report_ratio']:.3f}, "
              f"{cell['verdict']}", flush=True)
    seconds = time.perf_counter() - t0
    when = _utc(time.time())
    print()
    print(table(cells))
    print()
    print(exponents(cells))
    shown, skip = [], False
    for a in argv:  # the options that change what is measured
        if skip or a in ("--write-docs", "--keep"):
            skip = False
        elif a in ("--json", "--data-dir"):
            skip = True
        elif not a.startswith(("--json=", "--data-dir=")):
            shown.append(a)
    command = " ".join(["python benchmarks/run.py --grid", *shown])
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "command": command, "when": when,
                                         "seconds": seconds, "cells": cells}, indent=2)
                             + "\n")
    if args.write_docs:
        write_docs(docs_block(cells, info, command, seconds, when))
        print(f"\nwrote the grid block of {DOCS}")
    return 1 if any(c["verdict"].startswith("FAIL") for c in cells) else 0


if __name__ == "__main__":
    sys.exit(grid_main(sys.argv[1:]))
