"""Interval merging of the recall analysis (one global sort, issue 14) against a
point-by-point reference on random intervals."""

from __future__ import annotations

import random

import polars as pl

from compaction_audit.recall.analysis.intervals import _merge


def _runs(points: set[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for p in sorted(points):
        if out and out[-1][1] == p:
            out[-1] = (out[-1][0], p + 1)
        else:
            out.append((p, p + 1))
    return out


def test_merge_matches_covered_points() -> None:
    rng = random.Random(7)
    for _ in range(100):
        rows = []
        for _ in range(rng.randint(0, 40)):
            start = rng.randint(0, 30)
            rows.append((rng.choice(["a", "b", "c:1", "d e"]), start, start + rng.randint(1, 8)))
        frame = pl.DataFrame(rows, schema={"key": pl.String, "start": pl.Int64,
                                           "end": pl.Int64}, orient="row")
        want = []
        for key in sorted({r[0] for r in rows}):
            points = {p for k, a, b in rows if k == key for p in range(a, b)}
            want += [{"key": key, "start": a, "end": b} for a, b in _runs(points)]
        assert _merge(frame, "key").to_dicts() == want


def test_merge_of_nothing() -> None:
    empty = pl.DataFrame(schema={"key": pl.String, "start": pl.Int64, "end": pl.Int64})
    assert _merge(empty, "key").columns == ["key", "start", "end"]
    assert _merge(empty, "key").height == 0
