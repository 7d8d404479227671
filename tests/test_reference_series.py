"""The pure-Python reference series on tiny hand-written logs, values computed by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from reference_series import main, reference_series  # noqa: E402

KEYS = [
    "round",
    "raw_tokens",
    "summary_tokens",
    "raw_ratio",
    "summary_to_raw",
    "summary_depth_max",
    "rounds_at_max_depth",
    "distinct_source_spans",
    "query_cosine_retained",
    "ungrounded_summaries",
]


def _write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


SESSION = {"type": "session", "schema": "compaction-audit/1", "max_depth": 2}

ROUNDS: list[dict[str, Any]] = [
    # Round 1: three raw spans; retained in both forms, an int id, one null salience.
    {
        "type": "round",
        "round": 1,
        "spans": [
            {"id": "a", "tokens": 100},
            {"id": "b", "tokens": 200},
            {"id": 3, "tokens": 300},
        ],
        "retained": [{"id": "a", "salience": 0.5}, ["b", 0.3], [3, None]],
    },
    # Round 2: S1 folds a and b; a is offloaded (resolvable), b evicted (gone).
    {
        "type": "round",
        "round": 2,
        "summaries": [{"id": "S1", "tokens": 50, "children": ["a", "b"]}],
        "offloaded": ["a"],
        "evicted": ["b"],
        "retained": [["3", 0.2], ["S1", 0.6]],
    },
    # Round 3: S2 folds S1 and 3 (depth 2); retained omitted, so the working set is
    # derived and salience is unknown.
    {
        "type": "round",
        "round": 3,
        "spans": [{"id": "c", "tokens": 400}],
        "summaries": [{"id": "S2", "tokens": 80, "children": ["S1", 3]}],
        "offloaded": [3],
        "evicted": ["S1"],
    },
    # Round 4: a is purged from the store; c leaves the working set silently.
    {"type": "round", "round": 4, "evicted": ["a"], "retained": [["S2", 0.9]]},
    # Round 5: 3 is purged: S2 has no reachable leaf left.
    {"type": "round", "round": 5, "evicted": ["3"], "retained": [["S2", 0.8]]},
    # Round 6: the working set is emptied.
    {"type": "round", "round": 6, "evicted": ["S2"], "retained": []},
]

EXPECTED: list[list[Any]] = [
    [1, 600, 0, 1.0, 0.0, 0, 0, 3, 0.4, 0],
    [2, 300, 50, 300 / 350, 50 / 300, 1, 0, 2, 0.4, 0],
    [3, 400, 80, 400 / 480, 80 / 400, 2, 1, 3, None, 0],
    [4, 0, 80, 0.0, None, 2, 2, 1, 0.9, 0],
    [5, 0, 80, 0.0, None, 2, 3, 0, 0.8, 1],
    [6, 0, 0, 0.0, None, 0, 0, 0, None, 0],
]


def _check(rows: list[dict[str, Any]], expected: list[list[Any]]) -> None:
    assert len(rows) == len(expected)
    for row, values in zip(rows, expected, strict=True):
        assert list(row) == KEYS
        for key, value in zip(KEYS, values, strict=True):
            if isinstance(value, float):
                assert row[key] == pytest.approx(value), (row["round"], key)
            else:
                assert row[key] == value, (row["round"], key)


def test_hand_computed_series(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [SESSION, *ROUNDS])
    _check(reference_series(path), EXPECTED)


def test_cap_falls_back_to_the_deepest_summary_depth_max(tmp_path: Path) -> None:
    # Without a session record the cap is the largest summary_depth_max (2 here, the
    # same as max_depth above), so the series is unchanged.
    path = _write(tmp_path / "t.jsonl", ROUNDS)
    _check(reference_series(path), EXPECTED)


def test_cap_from_the_session_counts_only_rounds_at_that_depth(tmp_path: Path) -> None:
    # max_depth 3 is never reached: rounds_at_max_depth stays 0.
    session = {**SESSION, "max_depth": 3}
    path = _write(tmp_path / "t.jsonl", [session, *ROUNDS])
    assert [row["rounds_at_max_depth"] for row in reference_series(path)] == [0] * 6


def test_silent_drop_is_not_resolvable_and_rehydration_is(tmp_path: Path) -> None:
    records = [
        {
            "type": "round",
            "round": 0,
            "spans": [{"id": "x", "tokens": 10}, {"id": "y", "tokens": 10}],
            "retained": [["x", 0.1], ["y", 0.2]],
        },
        # T folds x, which leaves the working set without being listed: a silent drop.
        {
            "type": "round",
            "round": 1,
            "summaries": [{"id": "T", "tokens": 5, "children": ["x"]}],
            "retained": [["y", 0.2], ["T", 0.4]],
        },
        # y is offloaded, then brought back (rehydrated) while still in the store.
        {"type": "round", "round": 2, "offloaded": ["y"], "retained": [["T", 0.4]]},
        {"type": "round", "round": 3, "retained": [["T", 0.4], ["y", 0.2]]},
    ]
    rows = reference_series(_write(tmp_path / "t.jsonl", records))
    assert [r["distinct_source_spans"] for r in rows] == [2, 1, 0, 1]
    assert [r["ungrounded_summaries"] for r in rows] == [0, 1, 1, 1]
    assert [r["summary_depth_max"] for r in rows] == [0, 1, 1, 1]
    # No session: the cap is the deepest summary_depth_max (1).
    assert [r["rounds_at_max_depth"] for r in rows] == [0, 1, 2, 3]
    assert rows[2]["raw_ratio"] == 0.0
    assert rows[3]["raw_ratio"] == pytest.approx(10 / 15)


def test_a_session_without_summaries_never_counts_depth_pin(tmp_path: Path) -> None:
    records = [
        {"type": "round", "round": 1, "spans": [{"id": 1, "tokens": 5}], "retained": [[1, 0.3]]},
        {"type": "round", "round": 2, "retained": [[1, 0.3]]},
    ]
    rows = reference_series(_write(tmp_path / "t.jsonl", records))
    assert [r["rounds_at_max_depth"] for r in rows] == [0, 0]
    assert [r["summary_to_raw"] for r in rows] == [0.0, 0.0]


def test_main_prints_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "t.jsonl", [SESSION, *ROUNDS])
    assert main([path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["round"] for line in lines] == [1, 2, 3, 4, 5, 6]
    assert main([]) == 2
