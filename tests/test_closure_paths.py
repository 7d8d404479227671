"""The two ways the provenance closure is built give the same pairs (issue 14).

:func:`compaction_audit.closure.closure` builds the summaries' leaf sets a depth
at a time in Polars up to ``MAX_LEVELS`` depths, else summary by summary in Python;
both must give the same (item, leaf) pairs, and the limit must stop both at the same
summary.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from compaction_audit import closure as reach
from compaction_audit.errors import LogError
from compaction_audit.io.native import read_native
from compaction_audit.model import Session
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import LogWriter, rnd, spans


def _both(session: Session) -> tuple[pl.DataFrame, pl.DataFrame]:
    spans_n = int((session.items["kind"] == "span").sum())
    by_depth = reach._by_depth(session, spans_n, reach.MAX_CLOSURE_PAIRS)
    assert by_depth is not None
    return by_depth, reach._walk(session, spans_n, reach.MAX_CLOSURE_PAIRS)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_by_depth_equals_the_walk_on_generated_sessions(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "s.jsonl"
    write_scale_session(path, 80, 40, seed=seed, texts=False)
    session = read_native(str(path))
    by_depth, walked = _both(session)
    assert by_depth.height > 1000  # summaries of summaries: depths 1..3
    assert by_depth.to_dicts() == walked.to_dicts()  # both sorted by item, leaf


def test_duplicate_and_shared_children(write_log: LogWriter) -> None:
    # S and T share b; U folds S, T and b again: its leaves are a, b, c once each
    path = write_log([
        rnd(0, spans=spans(("a", 1), ("b", 1), ("c", 1))),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a", "b"]},
                          {"id": "T", "tokens": 1, "children": ["b", "c"]}]),
        rnd(2, summaries=[{"id": "U", "tokens": 1, "children": ["S", "T", "b"]}]),
    ])
    session = read_native(str(path))
    by_depth, walked = _both(session)
    assert by_depth.to_dicts() == walked.to_dicts()
    frame = reach.leaves(session)
    got = {(i, leaf) for i, leaf in frame.iter_rows()}
    assert got == {("a", "a"), ("b", "b"), ("c", "c"), ("S", "a"), ("S", "b"), ("T", "b"),
                   ("T", "c"), ("U", "a"), ("U", "b"), ("U", "c")}
    assert frame.height == 10


def test_limit_stops_at_the_same_summary_either_way(write_log: LogWriter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_log([
        rnd(0, spans=spans(("a", 1), ("b", 1), ("c", 1))),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a", "b"]},
                          {"id": "T", "tokens": 1, "children": ["c"]}]),
        rnd(2, summaries=[{"id": "U", "tokens": 1, "children": ["S", "T"]}]),
    ])
    session = read_native(str(path))
    # 3 span rows + S 2 (5) + T 1 = 6; U takes it to 9
    assert reach.leaves(session, limit=9).height == 9
    for levels in (reach.MAX_LEVELS, 0):  # by depth, then the walk alone
        monkeypatch.setattr(reach, "MAX_LEVELS", levels)
        with pytest.raises(LogError) as info:
            reach.leaves(session, limit=8)
        assert info.value.line == 3 and "'U' (depth 2)" in info.value.message
        with pytest.raises(LogError) as info:
            reach.leaves(session, limit=4)
        assert info.value.line == 2 and "'S' (depth 1)" in info.value.message


def test_id_bytes_limit_names_the_summary_that_crosses_it(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    # the summaries' pairs name (item id + leaf id) bytes: SS over a, b: 3 + 3 = 6;
    # T over SS (leaves a, b): 2 + 2 = 4; 10 in all (the span rows name no pair bytes)
    path = write_log([
        rnd(0, spans=spans(("a", 1), ("b", 1))),
        rnd(1, summaries=[{"id": "SS", "tokens": 1, "children": ["a", "b"]}]),
        rnd(2, summaries=[{"id": "T", "tokens": 1, "children": ["SS"]}]),
    ])
    session = read_native(str(path))
    monkeypatch.setattr(reach, "MAX_CLOSURE_ID_BYTES", 10)
    assert reach.leaves(session).height == 6  # 10 is not past 10
    monkeypatch.setattr(reach, "MAX_CLOSURE_ID_BYTES", 9)
    with pytest.raises(LogError) as info:
        reach.leaves(session)
    assert info.value.line == 3 and "summary 'T' (depth 2)" in info.value.message
    assert "past 9 bytes" in info.value.message
    monkeypatch.setattr(reach, "MAX_CLOSURE_ID_BYTES", 5)
    with pytest.raises(LogError) as info:
        reach.leaves(session)
    assert info.value.line == 2 and "summary 'SS' (depth 1)" in info.value.message


def test_a_long_id_in_the_limit_error_is_cut_to_keep_the_message(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    long_id = "S" * 500
    path = write_log([rnd(0, spans=spans(("a", 1))),
                      rnd(1, summaries=[{"id": long_id, "tokens": 1, "children": ["a"]}])])
    monkeypatch.setattr(reach, "MAX_CLOSURE_ID_BYTES", 100)
    with pytest.raises(LogError) as info:
        reach.leaves(read_native(str(path)))
    assert f"summary {'S' * 80!r}... (500 chars) (depth 1)" in info.value.message
    assert info.value.message.endswith("see docs/performance.md (limits)")
