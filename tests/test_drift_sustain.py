"""compaction-drift under ``sustain``: the condition held from the first round fires
at round ``sustain - 1``, as every other rule does (adv142 #1: salience-inversion's
sustained result was null on the first ``sustain - 1`` rounds, and compaction-drift,
which negates it, counted none of them: it fired ``sustain - 1`` rounds late, or never
on a short log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.rules.base import sustained
from tests.gate_app import run
from tests.logs import dump, rnd, session


def drift_log(path: Path, rounds: int) -> Path:
    """A summary of depth 1 (40 tokens) over one offloaded span, and one new 1-token
    span a round: raw_ratio 1/41, 2/42, ... (under 0.25 on every round up to 7), the
    working set growing; salience known.  Depth 1 cannot invert: drift at each round."""
    records: list[Any] = [session(session_id="drift")]
    live = ["b", "m"]
    records.append(rnd(0, spans=[{"id": "a", "tokens": 1}, {"id": "b", "tokens": 1}],
                       summaries=[{"id": "m", "tokens": 40, "children": ["a"]}],
                       offloaded=["a"], retained=[[i, 0.5] for i in live]))
    for r in range(1, rounds):
        live.append(f"n{r}")
        records.append(rnd(r, spans=[{"id": f"n{r}", "tokens": 1}],
                           retained=[[i, 0.5] for i in live]))
    return dump(records, path)


def _drift_rounds(path: Path, sustain: int) -> list[int]:
    doc = json.loads(run("audit", str(path), "-f", "json", "--all",
                         "--sustain", str(sustain)).stdout)
    return [f["round"] for f in doc["findings"] if f["code"] == "CA104"]


@pytest.mark.parametrize("sustain", [1, 2, 3, 4])
def test_drift_from_the_first_round_fires_at_round_sustain_minus_one(
        tmp_path: Path, sustain: int) -> None:
    path = drift_log(tmp_path / "drift.jsonl", 7)
    assert _drift_rounds(path, sustain) == list(range(sustain - 1, 7))


def test_a_two_round_log_drifts_under_sustain_two(tmp_path: Path) -> None:
    path = drift_log(tmp_path / "short.jsonl", 2)
    assert _drift_rounds(path, 2) == [1]
    assert run("audit", str(path), "--sustain", "2", "--fail-on", "warning").exit_code == 1
    assert _drift_rounds(path, 3) == []  # shorter than sustain: never held long enough


def test_sustained_is_false_not_null_before_enough_rounds() -> None:
    frame = pl.DataFrame({"c": [True, True, None, True, True, True]})
    got = frame.select(sustained(pl.col("c"), 2).alias("s"))["s"].to_list()
    assert got == [False, True, False, False, True, True]
    assert frame.select(sustained(pl.col("c"), 1).alias("s"))["s"].to_list() == [
        True, True, False, True, True, True]
