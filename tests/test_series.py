"""Every derived quantity, exactly, on small logs computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.series import build_series
from tests.logs import SAMPLES, LogWriter, rnd, session, spans


def series_of(path: object) -> pl.DataFrame:
    return build_series(read_native(str(path))).frame


def test_handwritten_sample_by_hand() -> None:
    # sample_logs/handwritten.jsonl; values worked out in the comments.
    f = series_of(SAMPLES / "handwritten.jsonl")
    assert f["round"].to_list() == [0, 1, 2, 3, 4]
    assert f["line"].to_list() == [2, 3, 4, 5, 6]
    # r0: s1 200 + s2 150 + 3 100 + s4 50; r1: 3,s4,s5 = 270 raw + m1 40;
    # r2 (delta mode): s5 120 + s6 60 raw, m1 40 + m2 30; r3: s5,s6 + r1 25; r4: +s7 30
    assert f["raw_tokens"].to_list() == [500, 270, 180, 180, 210]
    assert f["summary_tokens"].to_list() == [0, 40, 70, 25, 25]
    assert f["raw_ratio"].to_list() == pytest.approx([1.0, 270 / 310, 180 / 250, 180 / 205,
                                                     210 / 235])
    assert f["summary_to_raw"].to_list() == pytest.approx([0.0, 40 / 270, 70 / 180,
                                                          25 / 180, 25 / 210])
    assert f["summary_depth_max"].to_list() == [0, 1, 1, 2, 2]
    assert f["rounds_at_max_depth"].to_list() == [0, 0, 0, 1, 2]
    # r1: m1 reaches s1 (offloaded, resolvable), not s2 (evicted): s1,3,s4,s5 = 4
    # r2: m2's leaves 3,s4 evicted: s1,s5,s6 = 3;  r3: r1 reaches s1: s1,s5,s6 = 3
    # r4: s1 purged from the store: s5,s6,s7 = 3
    assert f["distinct_source_spans"].to_list() == [4, 4, 3, 3, 3]
    assert f["ungrounded_summaries"].to_list() == [0, 0, 1, 0, 1]
    qcr = f["query_cosine_retained"].to_list()
    assert qcr[0] == pytest.approx(2.08 / 4)
    assert qcr[1] == pytest.approx(2.21 / 4)
    assert qcr[2] is None  # retained omitted: salience unknown
    assert qcr[3] == pytest.approx(1.2 / 2)  # s6 salience null is not counted
    assert qcr[4] == pytest.approx(1.7 / 4)
    assert f["items"].to_list() == [4, 4, 4, 3, 4]
    assert f["new_spans"].to_list() == [4, 1, 1, 0, 1]
    assert f["folds"].to_list() == [0, 1, 1, 1, 0]
    assert f["evictions"].to_list() == [0, 1, 2, 2, 1]
    assert f["offloads"].to_list() == [0, 1, 0, 0, 0]
    assert f["silent_drops"].to_list() == [0, 0, 0, 0, 0]
    assert f["budget_tokens"].to_list() == [1000, 1000, 800, 1000, 1000]
    assert f["budget_used"].to_list() == pytest.approx([0.5, 0.31, 250 / 800, 0.205, 0.235])


def test_empty_working_set_and_no_raw(write_log: LogWriter) -> None:
    path = write_log([
        rnd(0, spans=spans(("a", 10)), retained=[["a", 0.5]]),
        rnd(1, summaries=[{"id": "S", "tokens": 4, "children": ["a"]}], offloaded=["a"],
            retained=[["S", 0.9]]),
        rnd(2, evicted=["S"], retained=[]),
    ])
    f = series_of(path)
    assert f["raw_ratio"].to_list() == [1.0, 0.0, 0.0]
    assert f["summary_to_raw"].to_list() == [0.0, None, None]
    assert f["distinct_source_spans"].to_list() == [1, 1, 0]  # offloaded a stays reachable
    assert f["ungrounded_summaries"].to_list() == [0, 0, 0]
    assert f["query_cosine_retained"].to_list() == [0.5, 0.9, None]
    # no max_depth in the session: the cap is the deepest summary_depth_max (1)
    assert f["rounds_at_max_depth"].to_list() == [0, 1, 0]


def test_summary_of_summaries_reaches_leaves_through_tiers(write_log: LogWriter) -> None:
    path = write_log([
        session(max_depth=3),
        rnd(0, spans=spans(("a", 1), ("b", 1), ("c", 1))),
        rnd(1, summaries=[{"id": "L", "tokens": 1, "children": ["a", "b"]}],
            offloaded=["a"], evicted=["b"]),
        rnd(2, summaries=[{"id": "M", "tokens": 1, "children": ["L", "c"]}],
            evicted=["L"], offloaded=["c"]),
        rnd(3, summaries=[{"id": "R", "tokens": 1, "children": ["M"]}], evicted=["M"]),
        rnd(4, evicted=["a"]),
        rnd(5, evicted=["c"]),
    ])
    f = series_of(path)
    assert f["summary_depth_max"].to_list() == [0, 1, 2, 3, 3, 3]
    assert f["rounds_at_max_depth"].to_list() == [0, 0, 0, 1, 2, 3]
    # r1: L->a (offloaded), c in ws; r2: M->a, c (both offloaded); r3: R->a, c;
    # r4: a purged; r5: c purged -> R ungrounded
    assert f["distinct_source_spans"].to_list() == [3, 2, 2, 2, 1, 0]
    assert f["ungrounded_summaries"].to_list() == [0, 0, 0, 0, 0, 1]


def test_silent_drop_counts_as_gone(write_log: LogWriter) -> None:
    path = write_log([
        rnd(0, spans=spans(("a", 1), ("b", 1)), retained=[["a", 0.1], ["b", 0.2]]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a"]}],
            retained=[["S", 0.3], ["b", 0.2]]),
    ])
    s = read_native(str(path))
    assert s.events.filter(pl.col("action") == "silent-drop")["id"].to_list() == ["a"]
    f = build_series(s).frame
    assert f["silent_drops"].to_list() == [0, 1]
    assert f["distinct_source_spans"].to_list() == [2, 1]
    assert f["ungrounded_summaries"].to_list() == [0, 1]


def test_rehydrated_from_store(write_log: LogWriter) -> None:
    path = write_log([
        rnd(0, spans=spans(("a", 5)), retained=[["a", 0.1]]),
        rnd(1, offloaded=["a"], retained=[]),
        rnd(2, retained=[["a", 0.4]]),
    ])
    f = series_of(path)
    assert f["raw_tokens"].to_list() == [5, 0, 5]
    assert f["distinct_source_spans"].to_list() == [1, 0, 1]  # in the store: not covered


def test_depth_cap_is_the_deepest_summary_written(write_log: LogWriter) -> None:
    # A depth-2 summary is written and evicted at once: the cap is 2, never reached.
    path = write_log([
        rnd(0, spans=spans(("a", 1), ("b", 1))),
        rnd(1, summaries=[{"id": "L", "tokens": 1, "children": ["a"]},
                          {"id": "M", "tokens": 1, "children": ["L"]}],
            evicted=["a", "M"]),
    ])
    f = series_of(path)
    assert f["summary_depth_max"].to_list() == [0, 1]
    assert f["rounds_at_max_depth"].to_list() == [0, 0]


def test_rehydrated_span_stays_in_the_store(write_log: LogWriter) -> None:
    # offloaded, brought back, then dropped silently: the store still holds it
    path = write_log([
        rnd(0, spans=spans(("a", 5), ("b", 5)), retained=[["a", 0.1], ["b", 0.1]]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a"]}], offloaded=["a"],
            retained=[["S", 0.2], ["b", 0.1]]),
        rnd(2, retained=[["S", 0.2], ["a", 0.3], ["b", 0.1]]),
        rnd(3, retained=[["S", 0.2], ["b", 0.1]]),
    ])
    f = series_of(path)
    assert f["silent_drops"].to_list() == [0, 0, 0, 1]
    assert f["distinct_source_spans"].to_list() == [2, 2, 2, 2]
    assert f["ungrounded_summaries"].to_list() == [0, 0, 0, 0]
