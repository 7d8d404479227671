"""The rebuilt cosine's share of the audit (issue 16, point 4), for a list of shapes.

Usage (from the repository root)::

    python benchmarks/cosine_share.py --shapes 200x2000,2000x2000 --runs 3
    python benchmarks/cosine_share.py TRACE.jsonl ... --runs 3

A shape is ``ROUNDSxWORKING_SET`` (add ``:delta`` for a log without ``retained``
lists): a session written by :func:`compaction_audit.simulate.scale.write_scale_session` with
texts, in a temporary folder (``--tmp``, default the system's) that is deleted after
it is measured.  200x2000 is the benchmark grid's 1/100 size (about 10 MB), 2000x2000
its 1/10 (about 100 MB), 20000x2000 its full size (about 1 GB).

Each run audits the trace in a fresh process (``compaction_audit.api.audit``, as the
CLI does: the model's load, once per process, is part of it), in two variants that
alternate:

- **on**: the audit as shipped;
- **off**: the same audit with the embedding replaced by a cheap stand-in (a number
  from each text's length) and the model never loaded (the rest of the stage, and
  CA204 on the stand-in cosines, still run).

It prints, best of ``--runs`` for each: the rebuild stage (``cosine.rebuild``: the
time spent inside it, waiting for a model still loading included, and that wait
alone: the wall time of the stage's calls to ``load_model``), the whole audit,
the stage's share of the audit, and the **marginal** share, (on - off) / on: what the
model costs the audit wherever it is spent (a load in a background thread is counted
there, not in the stage).  Wall seconds, and CPU seconds of the process and its
reaped helper processes (``resource.getrusage``).  ``COMPACTION_AUDIT_EMBED=lexical``
measures the fallback (then "off" differs only by the TF-IDF).  Timings are noisy on
a shared machine: compare the shares of one run, not absolute times across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _patch(module: Any, **values: Any) -> None:
    for name, value in values.items():
        setattr(module, name, value)


def _child(trace: str, variant: str) -> None:
    """Audit ``trace`` once in this process and print the timings as one JSON line."""
    import resource

    import compaction_audit.api as api
    import compaction_audit.engine as engine
    from compaction_audit.cosine import embed

    if variant == "off":
        def constant(texts: list[str], query: str, how: str | None = None
                     ) -> list[float | None]:
            return [len(t) % 89 / 89 for t in texts]  # spread, so CA204 ranks as usual

        stage_module = sys.modules["compaction_audit.cosine.rebuild"]
        _patch(embed, cosines=constant, method=lambda: embed.LEXICAL_NAME,
               start_loading=lambda: False)
        # the rebuild's cosine_column hands the lexical method to embed.cosines
        _patch(stage_module, method=lambda: embed.LEXICAL_NAME)
    stage: dict[str, Any] = {"wait": 0.0}
    original = engine.rebuild  # type: ignore[attr-defined]
    load_model = embed.load_model

    def waited() -> Any:  # the first call inside the stage waits for a load under way
        if threading.current_thread() is not threading.main_thread():
            return load_model()  # the background load itself
        w = time.perf_counter()
        try:
            return load_model()
        finally:
            stage["wait"] += time.perf_counter() - w

    _patch(embed, load_model=waited)

    def timed(*a: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        try:
            return original(*a)
        finally:
            stage["wall"], stage["cpu"] = time.perf_counter() - w, time.process_time() - c

    _patch(engine, rebuild=timed)

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    w, c = time.perf_counter(), cpu()
    report = api.audit(trace)
    wall, spent = time.perf_counter() - w, cpu() - c
    print(json.dumps({"wall": wall, "cpu": spent, "stage_wall": stage["wall"],
                      "stage_cpu": stage["cpu"], "stage_wait": stage["wait"],
                      "method": report.cosine.get("method"),
                      "texts": report.cosine.get("distinct_texts"),
                      "rounds": report.n_rounds}))


def _run(trace: str, variant: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, __file__, "--child", variant, trace], env=env,
                         check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def measure(trace: str, runs: int) -> dict[str, Any]:
    """Best of ``runs`` of each variant on ``trace`` (see the module docstring)."""
    best: dict[str, dict[str, Any]] = {}
    for _ in range(runs):
        for variant in ("on", "off"):
            r = _run(trace, variant)
            b = best.setdefault(variant, dict(r))
            for key in ("wall", "cpu", "stage_wall", "stage_cpu", "stage_wait"):
                b[key] = min(b[key], r[key])
    on, off = best["on"], best["off"]
    return {"trace": trace, "bytes": Path(trace).stat().st_size, "rounds": on["rounds"],
            "texts": on["texts"], "method": on["method"] or "none",
            "stage_wall": on["stage_wall"], "stage_cpu": on["stage_cpu"],
            "stage_wait": on["stage_wait"],
            "wall": on["wall"], "cpu": on["cpu"], "off_wall": off["wall"],
            "off_cpu": off["cpu"]}


def _shape(text: str) -> tuple[int, int, bool]:
    body, _, mode = text.partition(":")
    try:
        rounds, working_set = (int(x) for x in body.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--shapes: expected ROUNDSxWORKING_SET[:delta], got {text!r}"
                         ) from None
    if mode not in ("", "delta"):
        raise SystemExit(f"--shapes: unknown mode {mode!r} in {text!r} (only 'delta')")
    return rounds, working_set, mode == "delta"


def _pct(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole > 0 else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of ``rows`` (as :func:`measure` returns them)."""
    lines = ["| trace | size | distinct texts | method | stage | of which waiting for "
             "the model | audit | stage share | marginal share |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['bytes'] / 1e6:.1f} MB | {r['texts']:,} | {r['method']} "
            f"| {r['stage_wall']:.2f} s ({r['stage_cpu']:.2f} s CPU) "
            f"| {r['stage_wait']:.2f} s "
            f"| {r['wall']:.2f} s ({r['cpu']:.2f} s CPU) "
            f"| {_pct(r['stage_wall'], r['wall'])} ({_pct(r['stage_cpu'], r['cpu'])} CPU) "
            f"| {_pct(r['wall'] - r['off_wall'], r['wall'])} "
            f"({_pct(r['cpu'] - r['off_cpu'], r['cpu'])} CPU) |")
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, measure each trace or shape, print the table."""
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[3], sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", help="traces to measure as they are")
    parser.add_argument("--shapes", default="",
                        help="comma-separated ROUNDSxWORKING_SET[:delta] to generate")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tmp", default=None, help="folder for generated traces")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    args = parser.parse_args()
    shapes = [_shape(s.strip()) for s in args.shapes.split(",") if s.strip()]
    if not shapes and not args.traces:
        parser.error("give traces or --shapes")
    rows: list[dict[str, Any]] = []
    for trace in args.traces:
        rows.append({**measure(trace, args.runs), "name": Path(trace).name})
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    from compaction_audit.simulate.scale import write_scale_session

    for rounds, working_set, delta in shapes:
        name = f"{rounds}x{working_set}" + (" delta" if delta else "")
        with tempfile.TemporaryDirectory(dir=args.tmp) as folder:
            path = Path(folder) / "trace.jsonl"
            write_scale_session(path, rounds, working_set, texts=True, retained=not delta)
            rows.append({**measure(str(path), args.runs), "name": name})
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    print(table(rows))
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
