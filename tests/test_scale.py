"""The scale generator writes valid logs whose series matches the reference series."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest

from benchmarks.reference_series import reference_series
from compaction_audit.io.native import read_native
from compaction_audit.scale import write_scale_session
from compaction_audit.series import build_series


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "tiny.jsonl"
    write_scale_session(path, rounds=30, working_set=50, seed=1)
    return path


def test_tiny_session_reads_strictly(tiny: Path) -> None:
    session = read_native(str(tiny))  # strict: raises on any input error
    assert session.n_rounds == 30
    assert session.skipped == []
    assert session.header.max_depth == 3
    # the working set holds 50 items at every round after the first
    records = [orjson.loads(line) for line in tiny.read_bytes().splitlines()]
    rounds = [r for r in records if r["type"] == "round"]
    assert all(len(r["retained"]) == 50 for r in rounds)
    assert all(type(pair) is list and len(pair) == 2 for r in rounds for pair in r["retained"])
    # the shape the benchmark relies on: arrivals, folds of summaries, eviction, offloads
    summaries = [s for r in rounds for s in r["summaries"]]
    assert {s["depth"] for s in summaries} >= {1, 2}
    assert sum(len(r["evicted"]) for r in rounds) > 0
    assert sum(len(r["offloaded"]) for r in rounds) > 0
    assert any(s.get("text") for r in rounds for s in r["spans"])


def test_tiny_series_matches_reference(tiny: Path) -> None:
    ours = build_series(read_native(str(tiny))).frame.to_dicts()
    ref = reference_series(str(tiny))
    assert len(ours) == len(ref) == 30
    for mine, theirs in zip(ours, ref, strict=True):
        for column, expected in theirs.items():
            got = mine[column]
            if isinstance(expected, float) and got is not None:
                assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12), column
            else:
                assert got == expected, (theirs["round"], column)


def test_deterministic_and_texts_optional(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    write_scale_session(a, 12, 20, seed=5)
    write_scale_session(b, 12, 20, seed=5)
    write_scale_session(c, 12, 20, seed=5, texts=False)
    assert a.read_bytes() == b.read_bytes()
    assert b'"text"' not in c.read_bytes()
    assert read_native(str(c)).n_rounds == 12


def test_rejects_bad_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_scale_session(tmp_path / "x.jsonl", 0, 50)
    with pytest.raises(ValueError):
        write_scale_session(tmp_path / "x.jsonl", 5, 3)
