"""Standard output that is a trace the command reads is refused, as ``-o`` onto it is
(adv22a, observation 2: ``audit t.jsonl -f json >> t.jsonl`` appended the report to
the trace, and the next run failed on it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.logs import ROOT, SAMPLES

TIMEOUT = 120


@pytest.mark.parametrize("args", [
    ("audit", "{t}", "-f", "json"), ("diff", "{t}", "{t}"),
    ("baseline", "create", "{t}", "-o", "-"), ("convert", "{t}", "-o", "-"),
    ("trace", "{t}", "s1"),
])
def test_appending_the_output_to_the_trace_is_refused(tmp_path: Path,
                                                      args: tuple[str, ...]) -> None:
    trace = tmp_path / "t.jsonl"
    shutil.copy(SAMPLES / "handwritten.jsonl", trace)
    before = trace.read_bytes()
    with trace.open("ab") as out:
        done = subprocess.run([sys.executable, "-m", "compaction_audit",
                               *(a.format(t=trace) for a in args)], stdout=out,
                              stderr=subprocess.PIPE, cwd=ROOT, timeout=TIMEOUT, check=False)
    assert done.returncode == 2
    assert done.stderr.decode() == (f"compaction-audit: standard output: is the input {trace}; "
                                    "refusing to overwrite it (redirect it elsewhere)\n")
    assert trace.read_bytes() == before


def test_output_to_another_file_is_written(tmp_path: Path) -> None:
    with (tmp_path / "report.json").open("wb") as out:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit",
                               str(SAMPLES / "handwritten.jsonl"), "-f", "json"], stdout=out,
                              cwd=ROOT, timeout=TIMEOUT, check=False)
    assert done.returncode == 1 and (tmp_path / "report.json").stat().st_size > 0


@pytest.mark.parametrize("name", ["pyproject.toml", "compaction-audit.toml"])
def test_simulate_onto_the_configuration_is_refused(tmp_path: Path, name: str) -> None:
    """adv81 #2: ``simulate -o - >> pyproject.toml`` appended 58 KB of JSON Lines to the
    project's packaging file, and every later command in the folder exited 2."""
    config = tmp_path / name
    config.write_text('[project]\nname = "x"\n')
    with config.open("ab") as out:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", "simulate",
                               "--rounds", "2", "-o", "-"], stdout=out,
                              stderr=subprocess.PIPE, cwd=tmp_path, timeout=TIMEOUT,
                              check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr.decode() == (
        f"compaction-audit: --output: standard output: is {config}, which the "
        "configuration search reads; refusing to overwrite it (redirect it elsewhere)\n")
    assert config.read_text() == '[project]\nname = "x"\n'
