"""Which finding rows the engine caps: a list longer than the cap at any depth (issue 14:
the engine copies only those rows through ``capped``)."""

from __future__ import annotations

import polars as pl

from compaction_audit.findingvalues import capped, over_cap


def test_over_cap_finds_long_lists_at_any_depth() -> None:
    frame = pl.DataFrame({
        "a": [[1] * 3, [1] * 4, None, [1] * 3],
        "b": [{"x": [[1, 2]], "y": 1}, {"x": [], "y": 2}, {"x": [[0] * 5], "y": 3},
              {"x": [[0] * 4], "y": 4}],
        "c": [1, 2, 3, 4],
    })
    # row 0: lists of 3 and 2 (not over 3); row 1: a holds 4; row 2: a list of 5 inside
    # b.x; row 3: a holds exactly 3, b.x's inner list 4
    assert over_cap(frame, 3).to_list() == [False, True, True, True]
    assert over_cap(frame, 5).to_list() == [False, False, False, False]
    # a row not over the cap is what capped() gives back
    for row, over in zip(frame.to_dicts(), over_cap(frame, 3).to_list(), strict=True):
        assert (capped(row, 3) != row) == over


def test_over_cap_without_lists() -> None:
    assert over_cap(pl.DataFrame({"c": [1, 2]}), 50).to_list() == [False, False]
    assert over_cap(pl.DataFrame({"c": []}), 50).to_list() == []
