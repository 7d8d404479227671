"""A local Ray cluster that ``audit --engine ray`` starts leaves no folder and no
process behind, after a normal run and after SIGTERM (issue 11, class 7; adv22b O1:
its dashboard and runtime-env agents outlived a SIGTERM by about 60 s, and every run
left ``/tmp/ray/session_*``, 416 KB of logs in folders of mode 0777)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction_audit.fleet.ray_temp import MAX_ROOT, PREFIX, new_root, remove_root
from tests.logs import ROOT, SAMPLES


def naming(root: Path) -> list[str]:
    """Command lines of live processes that hold ``root``."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if entry.isdigit() and os.fsencode(str(root)) in line:
            out.append(line.replace(b"\0", b" ").decode(errors="replace"))
    return out


def test_remove_root_stops_what_runs_from_it_and_removes_it() -> None:
    root = new_root()
    assert os.path.isabs(root) and Path(root).name.startswith(PREFIX)
    assert Path(root).stat().st_mode & 0o777 == 0o700
    (Path(root) / "session_1" / "logs").mkdir(parents=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    inside = subprocess.Popen([*sleeper, root])
    outside = subprocess.Popen([*sleeper, root + "-other"])
    try:
        remove_root(root)
        assert inside.wait(timeout=10) == -signal.SIGKILL
        assert outside.poll() is None
        assert not os.path.exists(root)
    finally:
        outside.kill()
        inside.kill()
        outside.wait()


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder of a short path for TMPDIR: Ray's socket names under it must fit."""
    folder = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_long_tmpdir_falls_back_to_tmp(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / ("x" * 40)))
    root = new_root()
    try:
        assert Path(root).parent == Path("/tmp") and len(root) <= MAX_ROOT
    finally:
        remove_root(root)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))  # short enough: kept
    if len(str(tmp_path)) + 1 + len(PREFIX) + 8 <= MAX_ROOT:
        root = new_root()
        assert Path(root).parent == tmp_path
        remove_root(root)


@pytest.mark.parametrize("stop", [False, True])
def test_a_local_cluster_leaves_nothing(short_tmp: Path, stop: bool) -> None:
    pytest.importorskip("ray", reason="ray is not installed: pip install "
                                      "'compaction-audit[ray]'")
    tmp_path = short_tmp
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("RAY_TMPDIR", None)
    child = subprocess.Popen([sys.executable, "-m", "compaction_audit", "audit",
                              str(SAMPLES / "handwritten.jsonl"), "--engine", "ray", "-q"],
                             env=env, cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    if stop:  # once the cluster's session folder is there: the cluster is starting
        deadline = time.monotonic() + 120
        while not any(tmp_path.glob(f"{PREFIX}*/session_*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any(tmp_path.glob(f"{PREFIX}*/session_*"))
        child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=300)
    assert child.returncode == (143 if stop else 1), err
    assert list(tmp_path.iterdir()) == []
    assert naming(tmp_path) == []
