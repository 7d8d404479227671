"""Polars' thread pool is held to the cores this process may use (adv24: a job
environment with ``POLARS_MAX_THREADS=100000`` started about 5,000 threads in one
audit of a 3 KB trace, which ran past 16 minutes at a load of 2,600)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit.runtime.cores import available_cores, cap_polars_threads
from tests.logs import ROOT

NO_QUOTA = "/nonexistent-cgroup"


@pytest.mark.parametrize(("value", "expected"), [
    ("100000", "cores"), ("0", "cores"), ("-3", "cores"), ("many", "cores"), ("", None),
    ("1", "1"), ("\u00b2", "cores"), ("9" * 5000, "cores"), ("\u0661", "cores"),
])
def test_the_value_is_held_to_the_cores(value: str, expected: str | None) -> None:
    env = {"POLARS_MAX_THREADS": value} if value else {}
    cap_polars_threads(env, NO_QUOTA)
    cores = str(available_cores(NO_QUOTA))
    want = cores if expected == "cores" else expected
    if want is None and available_cores(NO_QUOTA) < (os.cpu_count() or 1):
        want = cores  # an affinity mask smaller than the machine: set
    assert env.get("POLARS_MAX_THREADS") == want


def test_a_quota_below_the_cores_sets_it(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("100000 100000\n")  # one CPU
    env: dict[str, str] = {}
    cap_polars_threads(env, str(tmp_path))
    assert env == {"POLARS_MAX_THREADS": "1"}


def test_the_command_caps_it_before_polars_loads() -> None:
    code = ("import os, sys\n"
            "sys.argv = ['compaction-audit', '--version']\n"
            "from compaction_audit import cli\n"
            "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
            "import polars\n"
            "print(os.environ['POLARS_MAX_THREADS'], polars.thread_pool_size())\n")
    env = {**os.environ, "POLARS_MAX_THREADS": "100000", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    cores = available_cores()
    assert out[-2:] == [str(cores), str(cores)]
