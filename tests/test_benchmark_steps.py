"""The benchmark's measuring steps run on the code as it is (issue 14): each
``benchmarks/run.py --step NAME FILE`` patches functions of the package by module and
name, so a module split breaks a step, not an audit (``stages`` failed with an
AttributeError after rules/recall.py was split in three).  Timings are not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit.api import audit

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "research-decay.jsonl"


def _step(name: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--step", name, str(SAMPLE)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("name", ["stages", "audit"])
def test_a_measuring_step_audits_the_sample(name: str) -> None:
    result = _step(name)
    # the findings of the audit in this process (their number depends on the cosine
    # method installed: 321 with wordllama, more with the fallback)
    assert result["findings"] == len(audit(str(SAMPLE)).findings)


def test_the_stages_add_up_to_the_whole() -> None:
    result = _step("stages")
    parts = ("read", "series", "recall", "cosine", "disagreement", "rules_and_findings",
             "render")
    assert all(float(result[p]) >= 0.0 for p in parts)  # type: ignore[arg-type]
    total = sum(float(result[p]) for p in parts)  # type: ignore[arg-type]
    assert total == pytest.approx(float(result["seconds"]))  # type: ignore[arg-type]
