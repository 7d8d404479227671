"""Benchmark the auditor against the parse floor and the pure-Python series.

Usage (from the repository root, with the project installed)::

    python benchmarks/run.py --sizes 1/100,1/10,1

For each size it generates (or reuses) a scale session under ``benchmarks/data/``
(:func:`compaction_audit.simulate.scale.write_scale_session`: a 2,000-item working set,
20,000 rounds at size 1, about 1 GB; 1/10 and 1/100 have fewer rounds) and measures,
each step in a fresh subprocess:

* ``audit``: :func:`compaction_audit.api.audit` (read, series, rules, recall) plus the
  JSON report rendered and written to ``/dev/null``;
* the parse floor: the faster of ``orjson.loads`` over every line (with the cyclic
  garbage collector paused, as the auditor's reader does; the time with it on is
  recorded too) and ``polars.read_ndjson`` with an explicit schema, on the same file;
* ``pure Python``: ``benchmarks/reference_series.py`` (the straightforward series).

Times are wall-clock seconds inside the subprocess, the best of ``--repeat`` runs: the
imports a step makes before its clock starts are excluded, the audit's own lazy imports
are counted, from modules byte-compiled first as an installed wheel's are
(:func:`_byte_compile`).  Peak memory is the subprocess's peak resident set size as
reported by ``os.wait4`` for that one child (imports included: an idle
``import compaction_audit, polars`` holds about 100 MB), the largest of the runs.
The helper processes the audit starts count as Linux counts a child's descendants:
``ru_maxrss`` is the largest of the child's own peak and the peak of each helper it
waited for, never their sum (checked: a child of 100 MB that waits for one of 300 MB
reads 310 MB).  The helpers are new interpreters, not forks, and hold less than the
audit (about 20 MB each while reading, 93 MB for the text work of the 254 MB
10,000 x 2,000 text cell of the grid), so the figure is the audit process's own peak;
the machine also holds the helpers alive at that moment (measure them alone).
The table gives, per size: file size, parse floor, audit time, pure-Python time,
audit / parse floor, pure Python / audit and audit peak memory / file size.
``--json FILE`` also writes every measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FULL_ROUNDS = 20_000
WORKING_SET = 2_000


# ----------------------------------------------------------------------------- steps
# Each step runs in its own interpreter (``run.py --step NAME FILE``) and prints one
# JSON object with its wall time; the parent reads the child's peak RSS.


def _step_generate(path: str, rounds: int, working_set: int, seed: int,
                   texts: bool = True, retained: bool = True) -> dict[str, Any]:
    from compaction_audit.simulate.scale import write_scale_session

    t0 = time.perf_counter()
    write_scale_session(path, rounds, working_set, seed=seed, texts=texts,
                        retained=retained)
    return {"seconds": time.perf_counter() - t0}


def _orjson_pass(path: str) -> tuple[float, int]:
    import orjson

    loads = orjson.loads
    t0 = time.perf_counter()
    n = 0
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                loads(line)
                n += 1
    return time.perf_counter() - t0, n


def _step_orjson(path: str) -> dict[str, Any]:
    """``orjson.loads`` over every line, with the cyclic GC paused (as the reader does:
    the fastest way to parse) and, for the record, with it on."""
    import gc

    with_gc, _ = _orjson_pass(path)
    gc.disable()
    seconds, n = _orjson_pass(path)
    gc.enable()
    return {"seconds": seconds, "seconds_with_gc": with_gc, "records": n}


def _ndjson_schema() -> dict[str, Any]:
    """The schema of a scale session's records (``retained`` pairs read as strings)."""
    import polars as pl

    span = pl.Struct({"id": pl.String, "tokens": pl.Int64, "text": pl.String,
                      "salience_class": pl.String, "source": pl.String})
    fold = pl.Struct({"id": pl.String, "tokens": pl.Int64, "children": pl.List(pl.String),
                      "text": pl.String, "depth": pl.Int64})
    return {"type": pl.String, "round": pl.Int64, "spans": pl.List(span),
            "summaries": pl.List(fold), "evicted": pl.List(pl.String),
            "offloaded": pl.List(pl.String), "retained": pl.List(pl.List(pl.String))}


def _step_polars(path: str) -> dict[str, Any]:
    import polars as pl

    schema = _ndjson_schema()
    t0 = time.perf_counter()
    frame = pl.read_ndjson(path, schema=schema)
    return {"seconds": time.perf_counter() - t0, "records": frame.height}


def _timed(spent: dict[str, float], name: str, fn: Any) -> Any:
    """``fn`` wrapped to add its wall seconds to ``spent[name]`` on every call."""
    def run(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
    return run


def _step_audit(path: str) -> dict[str, Any]:
    import compaction_audit.engine as engine
    from compaction_audit.api import audit
    from compaction_audit.report.json_report import render_json
    from compaction_audit.report.model import Report
    from compaction_audit.report.summary import episodes
    from compaction_audit.runtime import startup

    startup.as_command()  # as the audit command runs one trace (startup.one_trace)
    startup.one_trace()

    spent: dict[str, float] = {}  # wall seconds inside the rebuilt cosine (issue 16,
    # point 4), waiting for the model's background load included
    engine.rebuild = _timed(spent, "cosine", engine.rebuild)  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    report = audit(path)
    data = render_json(Report([report], []), single=True)
    with open(os.devnull, "wb") as sink:
        sink.write(data)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "cosine_seconds": spent.get("cosine", 0.0),
            "rounds": report.n_rounds,
            "findings": len(report.findings),
            "episodes": sum(1 for _ in episodes(report.findings)),
            "report_bytes": len(data)}


def _step_reference(path: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from reference_series import reference_series

    t0 = time.perf_counter()
    rows = reference_series(path)
    return {"seconds": time.perf_counter() - t0, "rounds": len(rows)}


def _step_stages(path: str) -> dict[str, Any]:
    """The audit timed by stage: read, the rebuilt cosine (issue 16), series, recall
    analysis, salience-disagreement (CA204), the rest of the rules and the findings,
    JSON rendering (wall seconds)."""
    import compaction_audit.engine as engine
    import compaction_audit.rules.recallctx as recall_rules
    from compaction_audit.cosine.embed import method
    from compaction_audit.io.native import read_native
    from compaction_audit.report.json_report import render_json
    from compaction_audit.report.model import Report
    from compaction_audit.rules.salience import SalienceDisagreement

    spent: dict[str, float] = {"cosine": 0.0}
    engine.build_series = _timed(  # type: ignore[attr-defined]
        spent, "series", engine.build_series)
    recall_rules.analyse = _timed(  # type: ignore[attr-defined]
        spent, "recall", recall_rules.analyse)
    engine.rebuild = _timed(spent, "cosine", engine.rebuild)  # type: ignore[attr-defined]
    SalienceDisagreement.evaluate = _timed(  # type: ignore[method-assign]
        spent, "disagreement", SalienceDisagreement.evaluate)
    t0 = time.perf_counter()
    session = read_native(path)
    t1 = time.perf_counter()
    report = engine.audit_session(session)
    t2 = time.perf_counter()
    data = render_json(Report([report], []), single=True)
    t3 = time.perf_counter()
    return {"seconds": t3 - t0, "read": t1 - t0, "series": spent["series"],
            "recall": spent["recall"], "cosine": spent["cosine"],
            "cosine_method": method(), "disagreement": spent["disagreement"],
            "rules_and_findings": t2 - t1 - spent["series"] - spent["recall"]
            - spent["cosine"] - spent["disagreement"],
            "render": t3 - t2, "report_bytes": len(data), "findings": len(report.findings)}


STEPS = {"orjson": _step_orjson, "polars": _step_polars, "audit": _step_audit,
         "reference": _step_reference, "stages": _step_stages}


def _child(args: list[str]) -> tuple[dict[str, Any], int]:
    """Run ``run.py --step ...`` in a fresh interpreter; (its JSON, its peak RSS bytes)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--step", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"step failed ({proc.returncode}): {' '.join(args)}")
    result: dict[str, Any] = json.loads(out)
    return result, usage.ru_maxrss * 1024  # ru_maxrss is in KiB on Linux


def _measure(step: str, path: Path, repeat: int) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    peak = 0
    for _ in range(repeat):
        result, rss = _child([step, str(path)])
        peak = max(peak, rss)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    assert best is not None
    return {**best, "peak_rss": peak, "runs": repeat}


# ----------------------------------------------------------------------------- main


def machine() -> dict[str, Any]:
    """nproc, memory, CPU model and versions of what is measured."""
    import orjson
    import polars

    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kib = next(int(line.split()[1]) for line in
                       Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal"))
        memory = f"{mem_kib / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        memory = "unknown"
    return {"nproc": os.cpu_count(), "memory": memory, "cpu": model,
            "python": platform.python_version(), "polars": polars.__version__,
            "orjson": orjson.__version__}


def _sizes(text: str) -> list[Fraction]:
    try:
        sizes = [Fraction(s.strip()) for s in text.split(",") if s.strip()]
    except (ValueError, ZeroDivisionError):
        raise SystemExit(
            f"--sizes: expected fractions such as 1/100,1/10,1, got {text!r}") from None
    if not sizes or any(s <= 0 for s in sizes):
        raise SystemExit("--sizes: every size must be > 0")
    return sizes


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e7 else f"{n / 1e6:,.1f} MB"


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table."""
    head = ("| size | rounds | file | parse floor | audit | pure Python | audit / floor "
            "| pure Python / audit | audit peak RSS | peak / file |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        floor = r["floor_seconds"]
        audit = r["audit"]["seconds"]
        ref = r.get("reference")
        ref_s = f"{ref['seconds']:.2f} s" if ref else "skipped"
        ratio_ref = f"{ref['seconds'] / audit:.1f}x" if ref else "-"
        lines.append(
            f"| {r['size']} | {r['rounds']:,} | {_mb(r['bytes'])} "
            f"| {floor:.2f} s ({r['floor_by']}) | {audit:.2f} s | {ref_s} "
            f"| {audit / floor:.2f}x | {ratio_ref} | {_mb(r['audit']['peak_rss'])} "
            f"| {r['audit']['peak_rss'] / r['bytes']:.2f}x |")
    return "\n".join(lines)


def _byte_compile() -> None:
    """Byte-compile the package as an installed wheel is, so that ``PYTHONDONTWRITEBYTECODE``
    in the environment does not make every measured step compile our modules again (0.25 to
    0.5 s of a step's lazy imports on a 2-core machine; ``benchmarks/startup.py`` does the
    same)."""
    import compileall

    compileall.compile_dir(str(HERE.parent / "compaction_audit"), quiet=1)


def main(argv: list[str]) -> int:
    """Parse the options, run the benchmark, print the table."""
    if argv[:1] != ["--step"]:
        _byte_compile()
    if "--grid" in argv:
        sys.path.insert(0, str(HERE))
        from grid import grid_main

        return grid_main([a for a in argv if a != "--grid"])
    if argv[:1] == ["--step"]:
        step, path = argv[1], argv[2]
        if step == "generate":
            flags = argv[6:8] if len(argv) >= 8 else ["1", "1"]
            result = _step_generate(path, int(argv[3]), int(argv[4]), int(argv[5]),
                                    texts=flags[0] == "1", retained=flags[1] == "1")
        else:
            result = STEPS[step](path)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="--grid runs the grid of trace shapes instead (issue 14; docs/performance.md, "
               "'The grid'): python benchmarks/run.py --grid --help lists its options.")
    parser.add_argument("--sizes", default="1/100,1/10,1",
                        help="fractions of the full trace (20,000 rounds, about 1 GB)")
    parser.add_argument("--working-set", type=int, default=WORKING_SET,
                        help="working-set items (default 2000)")
    parser.add_argument("--full-rounds", type=int, default=FULL_ROUNDS,
                        help="rounds at size 1 (default 20000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=HERE / "data",
                        help="where the generated traces go (default benchmarks/data)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per step; the best time is kept (default 3)")
    parser.add_argument("--reference-repeat", type=int, default=1,
                        help="runs of the pure-Python series (default 1: it is slow)")
    parser.add_argument("--skip-reference", action="store_true",
                        help="do not run the pure-Python series")
    parser.add_argument("--stages", action="store_true",
                        help="also time the audit by stage (read, series, recall, rules and "
                             "findings, JSON), the run with the best total of --repeat")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--delete", action="store_true",
                        help="delete the generated traces at the end")
    args = parser.parse_args(argv)

    info = machine()
    print(f"machine: {info['nproc']} cores, {info['memory']}, {info['cpu']}; "
          f"Python {info['python']}, Polars {info['polars']}, orjson {info['orjson']}",
          flush=True)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    made: list[Path] = []
    for size in _sizes(args.sizes):
        rounds = max(1, round(args.full_rounds * size))
        path = args.data_dir / f"scale-{rounds}x{args.working_set}-seed{args.seed}.jsonl"
        row: dict[str, Any] = {"size": str(size), "rounds": rounds, "path": str(path)}
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            gen, _ = _child(["generate", str(tmp), str(rounds), str(args.working_set),
                             str(args.seed)])
            tmp.rename(path)
            made.append(path)
            row["generate_seconds"] = gen["seconds"]
            print(f"[{size}] generated {path} in {gen['seconds']:.1f} s", flush=True)
        row["bytes"] = path.stat().st_size
        for step in ("orjson", "polars", "audit"):
            row[step] = _measure(step, path, args.repeat)
            extra = (f" ({row[step]['seconds_with_gc']:.2f} s with the GC on)"
                     if step == "orjson" else "")
            print(f"[{size}] {step}: {row[step]['seconds']:.2f} s{extra}, "
                  f"peak {_mb(row[step]['peak_rss'])}", flush=True)
        if args.stages:
            row["stages"] = _measure("stages", path, args.repeat)
            st = row["stages"]
            print(f"[{size}] stages: read {st['read']:.2f} s, cosine {st['cosine']:.2f} s "
                  f"({st['cosine_method']}), series {st['series']:.2f} s, "
                  f"recall {st['recall']:.2f} s, CA204 {st['disagreement']:.2f} s, "
                  "rules and findings "
                  f"{st['rules_and_findings']:.2f} s, JSON {st['render']:.2f} s "
                  f"({_mb(st['report_bytes'])}), peak {_mb(st['peak_rss'])}", flush=True)
        if not args.skip_reference:
            row["reference"] = _measure("reference", path, args.reference_repeat)
            print(f"[{size}] pure Python: {row['reference']['seconds']:.2f} s, "
                  f"peak {_mb(row['reference']['peak_rss'])}", flush=True)
        by = "orjson" if row["orjson"]["seconds"] <= row["polars"]["seconds"] else "polars"
        row["floor_by"] = by
        row["floor_seconds"] = row[by]["seconds"]
        rows.append(row)
    print()
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": rows}, indent=2) + "\n")
    if args.delete:
        for generated in made:
            generated.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
