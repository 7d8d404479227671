"""Start-up of the command line (issue 14, item 4): what ``--version``, ``--help`` and an
audit of a ~3 MB Claude Code transcript cost end to end, and what the imports they
need cost alone.

Usage (from the repository root)::

    python benchmarks/startup.py [--repeat 7] [--transcript FILE] [--imports]

Each case runs in a fresh interpreter (``python -m compaction_audit ...``, output to
``/dev/null``), ``--repeat`` times; the table gives the best wall time and the best
CPU time (user + system of that child, from ``os.wait4``), in milliseconds.  The
floors (``python -c pass``, ``import polars`` ...) say what part of a case is not ours
to remove.  The transcript defaults to the corpus's Claude Code session
(``../shared/corpus/claude-code/spotter-auto-compact.jsonl``, 2.8 MB); without it the
audit rows are skipped (``-o FILE`` writes a file in the temporary folder, the same
each run).  ``--imports`` adds where the audit's import time goes: the self times of
``python -X importtime`` summed per group of packages (the best of ``--repeat`` runs
per group).

The package is byte-compiled first (``compileall``, as an installed wheel is), so that
``PYTHONDONTWRITEBYTECODE`` in the environment does not make every run compile our
modules from source.  On a loaded machine compare CPU times, and ratios within one
run: wall times then mostly measure the wait for a core.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPT = ROOT.parent / "shared" / "corpus" / "claude-code" / "spotter-auto-compact.jsonl"

FLOORS: list[tuple[str, list[str]]] = [
    ("python -c pass (the interpreter)", ["-c", "pass"]),
    ("import typer, rich.console", ["-c", "import typer, rich.console"]),
    ("import pydantic (typer's coercion of a path or number value)",
     ["-c", "import pydantic"]),
    ("import polars", ["-c", "import polars"]),
    ("import numpy, tokenizers, safetensors (the model)",
     ["-c", "import numpy, tokenizers, safetensors"]),
    ("import compaction_audit.cli", ["-c", "import compaction_audit.cli"]),
]


def cases(transcript: Path | None) -> list[tuple[str, list[str], dict[str, str]]]:
    """``(label, python arguments, extra environment)`` of each measured command."""
    cli = ["-m", "compaction_audit"]
    out: list[tuple[str, list[str], dict[str, str]]] = [
        ("compaction-audit --version", [*cli, "--version"], {}),
        ("compaction-audit --help", [*cli, "--help"], {}),
        ("compaction-audit audit --help", [*cli, "audit", "--help"], {}),
        ("compaction-audit rules", [*cli, "rules"], {}),
    ]
    if transcript is not None:
        size = f"{transcript.stat().st_size / 1e6:.1f} MB"
        report = os.path.join(tempfile.gettempdir(), f"startup-report-{os.getpid()}.txt")
        out += [
            (f"audit {size} transcript (text report)", [*cli, "audit", str(transcript)], {}),
            (f"audit {size} transcript, lexical cosine", [*cli, "audit", str(transcript)],
             {"COMPACTION_AUDIT_EMBED": "lexical"}),
            (f"audit {size} transcript -o FILE", [*cli, "audit", str(transcript), "-o", report],
             {}),
        ]
    return out


GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("polars", ("polars", "_polars_runtime")),
    ("numpy, tokenizers, safetensors (the cosine model)",
     ("numpy", "tokenizers", "safetensors", "huggingface_hub")),
    ("typer, click, rich", ("typer", "click", "rich", "shellingham", "annotated_doc")),
    ("pydantic (typer's coercion of a path or number value)",
     ("pydantic", "pydantic_core", "annotated_types", "typing_inspection", "typing_extensions")),
    ("compaction_audit", ("compaction_audit",)),
    ("orjson, zstandard", ("orjson", "zstandard")),
]
"""Groups of top-level packages for ``--imports``; the rest is the standard library."""


def import_times(args: list[str], env: dict[str, str], repeat: int) -> dict[str, float]:
    """Seconds of import self time per :data:`GROUPS` entry (and ``standard library``)
    in ``python -X importtime ARGS``, the best of ``repeat`` runs for each group."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **env})
        sums: dict[str, float] = {}
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            fields = line[len("import time:"):].split("|")
            top = fields[2].strip().split(".")[0]
            group = next((g for g, tops in GROUPS if top.startswith(tops)), "standard library")
            sums[group] = sums.get(group, 0.0) + int(fields[0]) / 1e6
        for group, seconds in sums.items():
            best[group] = min(best.get(group, seconds), seconds)
    return best


def measure(args: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Best wall and best CPU (user + system) seconds of ``python ARGS`` over
    ``repeat`` fresh runs."""
    import time

    walls, cpus = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, **env})
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):  # an audit with findings exits 1
            raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}")
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per case (best kept)")
    parser.add_argument("--transcript", type=Path, default=TRANSCRIPT,
                        help="the Claude Code transcript to audit")
    parser.add_argument("--imports", action="store_true",
                        help="also the audit's import time per group of packages")
    opts = parser.parse_args()
    transcript = opts.transcript if opts.transcript.is_file() else None
    if transcript is None:
        print(f"no transcript at {opts.transcript}: the audit rows are skipped",
              file=sys.stderr)
    compileall.compile_dir(str(ROOT / "compaction_audit"), quiet=1)
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    rows = [(label, args, env) for label, args in FLOORS]
    rows += [(label, args, {**env, **extra}) for label, args, extra in cases(transcript)]
    print(f"| case (best of {opts.repeat}, fresh interpreter each) | wall ms | CPU ms |")
    print("|---|---:|---:|")
    for label, args, run_env in rows:
        wall, cpu = measure(args, run_env, opts.repeat)
        print(f"| {label} | {wall * 1000:,.0f} | {cpu * 1000:,.0f} |", flush=True)
    if opts.imports and transcript is not None:
        times = import_times(["-m", "compaction_audit", "audit", str(transcript)], env,
                             opts.repeat)
        print(f"\n| imports of the audit, by group (best of {opts.repeat}) | ms |")
        print("|---|---:|")
        for group, seconds in sorted(times.items(), key=lambda item: -item[1]):
            print(f"| {group} | {seconds * 1000:,.0f} |")
        print(f"| total | {sum(times.values()) * 1000:,.0f} |")


if __name__ == "__main__":
    main()
