"""compaction-drift (CA104) where salience is unknown (adv131 #1): reachable spans that
did not fall rule inversion out, so a low raw_ratio there is drift (seed 000, "Decision
Boundary": "raw_ratio < 0.25 but distinct_source_spans is stable -> drift").  A log
without salience got no drift warning at depth 2, and --fail-on warning passed.  Where
the spans fell, salience decides between the two, and the round is not judged."""

from __future__ import annotations

from typing import Any

from compaction_audit import api
from tests.logs import LogWriter, rnd


def log(last_evicts: list[str]) -> list[dict[str, Any]]:
    """a, b raw; m1 folds a (offloaded: still reachable); m2 folds m1 at depth 2 and
    evicts ``last_evicts``; no salience anywhere (delta mode, no retained)."""
    return [rnd(0, spans=[{"id": "a", "tokens": 10}, {"id": "b", "tokens": 10}]),
            rnd(1, summaries=[{"id": "m1", "tokens": 20, "children": ["a"]}],
                offloaded=["a"]),
            rnd(2, summaries=[{"id": "m2", "tokens": 90, "children": ["m1"]}],
                evicted=["m1", *last_evicts])]


def drift(path: str) -> tuple[list[int], dict[str, int]]:
    report = api.audit(path)
    notes = {n.reason: n.rounds for n in report.not_evaluated if n.code == "CA104"}
    return [f.round for f in report.findings if f.code == "CA104"], notes


def test_stable_spans_at_depth_2_are_drift(write_log: LogWriter) -> None:
    path = str(write_log(log([])))
    report = api.audit(path)
    # round 2: m2 (90) and b (10): raw_ratio 10 / 100; a reachable through m2 -> m1
    assert report.series["raw_ratio"][2] == 0.1
    assert report.series["distinct_source_spans"].to_list() == [2, 2, 2]
    assert report.series["summary_depth_max"][2] == 2
    rounds, notes = drift(path)
    assert rounds == [2]
    assert "salience-inversion could not be judged there" not in notes


def test_spans_that_fell_without_salience_are_not_judged(write_log: LogWriter) -> None:
    path = str(write_log(log(["b"])))  # b evicted too: 2 -> 1 reachable
    report = api.audit(path)
    assert report.series["distinct_source_spans"].to_list() == [2, 2, 1]
    rounds, notes = drift(path)
    assert 2 not in rounds
    assert notes["salience-inversion could not be judged there"] == 1
