"""``audit --engine ray`` on a fleet in object storage equals the local run (issue 14,
item 5): a Ray cluster started here (2 CPUs, no dashboard), moto's S3 server on
127.0.0.1 holding 200 small generated traces (plain, .gz, .zst, delta mode, one bad),
the same traces audited locally with the process pool.  JSON and text reports must be
equal byte for byte once the local prefix ``s3__/traces/`` (the same length) reads
``s3://traces/``; the exit codes too (2: the bad trace).

Skips, saying why, when ray (the [ray] extra), obstore or moto is not installed; the
[test] extra installs all three, so CI runs it.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard

from compaction_audit.simulate import write_session
from compaction_audit.simulate.params import SimParams
from compaction_audit.simulate.scale import write_scale_session
from tests.gate_app import run
from tests.s3server import s3_server

TRACES = 200
BAD = "runs/g3/bad.jsonl"


def _write_fleet(root: Path) -> None:
    """``TRACES`` traces under ``root/runs/g0..g4``: generated sessions of 3 to 14
    rounds and 10 to 15 items, every 7th gzip'ed and every 11th zstd'ed, four
    simulated sessions of 8 rounds (two in delta mode), and one trace whose third line
    is not JSON."""
    for i in range(TRACES - 5):
        folder = root / "runs" / f"g{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        plain = folder / f"t{i:03d}.jsonl"
        write_scale_session(plain, 3 + i % 12, 10 + i % 6, seed=i)
        if i % 7 == 0:
            plain.with_suffix(".jsonl.gz").write_bytes(gzip.compress(plain.read_bytes(),
                                                                     mtime=0))
            plain.unlink()
        elif i % 11 == 0:
            plain.with_suffix(".jsonl.zst").write_bytes(
                zstandard.ZstdCompressor().compress(plain.read_bytes()))
            plain.unlink()
    (root / "runs" / "sim").mkdir()
    for seed in range(4):
        write_session(SimParams(rounds=8, seed=seed, delta_mode=seed % 2 == 1),
                      root / "runs" / "sim" / f"s{seed}.jsonl")
    lines = (root / "runs" / "g0" / "t005.jsonl").read_text().splitlines(keepends=True)
    (root / BAD).write_text("".join([*lines[:2], '{"type": "round", "round": \n', *lines[3:]]))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(the folder holding ``s3__/traces/runs``, the Ray cluster's address), with the
    traces in bucket ``traces`` of the S3 server and a local Ray cluster running."""
    ray = pytest.importorskip(
        "ray", reason="ray is not installed: pip install 'compaction-audit[ray]'")
    root = tmp_path_factory.mktemp("fleet")
    _write_fleet(root / "s3__" / "traces")
    with s3_server() as s3:
        s3.bucket("traces")
        assert s3.upload(root / "s3__" / "traces", "traces") == TRACES
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # after s3_server set the environment: the workers inherit it, credentials too
        # address "local": a new cluster, never one named by a stale
        # /tmp/ray/ray_current_cluster that another run left (ray.init's default)
        context = ray.init(address="local", num_cpus=2, include_dashboard=False,
                           logging_level=logging.ERROR, log_to_driver=False,
                           object_store_memory=100 << 20)
        try:
            yield root, context.address_info["address"]
        finally:
            ray.shutdown()


def _mapped(text: str) -> str:
    return text.replace("s3__/traces/", "s3://traces/")


def test_ray_json_equals_the_local_run(fleet: tuple[Path, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root, address = fleet
    monkeypatch.chdir(root)
    local = run("audit", "s3__/traces/runs", "-f", "json", "-j", "2")
    # the console script in its own process, connecting to the cluster by address
    remote = subprocess.run(
        [sys.executable, "-m", "compaction_audit", "audit", "s3://traces/runs/", "-f", "json",
         "--engine", "ray", "--ray-address", address],
        capture_output=True, text=True, timeout=600, check=False)
    assert local.exit_code == remote.returncode == 2, remote.stderr
    assert _mapped(local.stdout) == remote.stdout
    doc = json.loads(remote.stdout)
    assert doc["summary"]["traces"] == TRACES and doc["summary"]["unreadable"] == 1
    assert [e["path"] for e in doc["errors"]] == [f"s3://traces/{BAD}"]
    assert len(doc["sessions"]) == TRACES - 1
    assert any(s["path"].endswith(".jsonl.zst") for s in doc["sessions"])
    assert doc["summary"]["findings"]["error"] > 0  # the simulated sessions fail


def test_ray_text_equals_the_local_run(fleet: tuple[Path, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = fleet
    monkeypatch.chdir(root)
    # a fifth of the fleet (the JSON test covers all of it), named by a pattern
    local = run("audit", "s3__/traces/runs/g3/*", "-j", "2")
    # in this process: the engine uses the connection the fixture opened
    remote = run("audit", "s3://traces/runs/g3/*", "--engine", "ray")
    assert local.exit_code == remote.exit_code == 2
    assert _mapped(local.stdout) == remote.stdout
    assert f"s3://traces/{BAD}:3: " in remote.stdout
    # g3: 39 of the 195 generated sessions, and the bad trace
    assert "exit 2: 40 trace(s), 1 reach --fail-on error, 1 unreadable" in remote.stdout


def test_a_baseline_made_on_ray_equals_the_local_one(fleet: tuple[Path, str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest67 #2: ``baseline create`` and ``prune`` had no --engine, so a fleet's
    baseline could not be made on Ray."""
    root, _ = fleet
    monkeypatch.chdir(root)
    local = run("baseline", "create", "s3://traces/runs/g1/", "-o", "local.json", "-j", "2")
    remote = run("baseline", "create", "s3://traces/runs/g1/", "-o", "ray.json",
                 "--engine", "ray")
    assert local.exit_code == remote.exit_code == 0, remote.stderr
    assert (root / "local.json").read_bytes() == (root / "ray.json").read_bytes()
    assert json.loads((root / "ray.json").read_text())["findings"]
    pruned = run("baseline", "prune", "ray.json", "s3://traces/runs/g1/", "-o", "p.json",
                 "--engine", "ray")
    assert pruned.exit_code == 0, pruned.stderr
    assert (root / "p.json").read_bytes() == (root / "ray.json").read_bytes()
