"""Which finding rows the engine caps: a list longer than the cap at any depth (issue 14:
the engine copies only those rows through ``capped``)."""

from __future__ import annotations

import polars as pl

from compaction_audit.engine import _over_cap, _rows, capped


def test_over_cap_finds_long_lists_at_any_depth() -> None:
    frame = pl.DataFrame({
        "a": [[1] * 3, [1] * 4, None, [1] * 3],
        "b": [{"x": [[1, 2]], "y": 1}, {"x": [], "y": 2}, {"x": [[0] * 5], "y": 3},
              {"x": [[0] * 4], "y": 4}],
        "c": [1, 2, 3, 4],
    })
    # row 0: lists of 3 and 2 (not over 3); row 1: a holds 4; row 2: a list of 5 inside
    # b.x; row 3: a holds exactly 3, b.x's inner list 4
    assert _over_cap(frame, 3).to_list() == [False, True, True, True]
    assert _over_cap(frame, 5).to_list() == [False, False, False, False]
    # a row not over the cap is what capped() gives back
    for row, over in zip(frame.to_dicts(), _over_cap(frame, 3).to_list(), strict=True):
        assert (capped(row, 3) != row) == over


def test_over_cap_without_lists() -> None:
    assert _over_cap(pl.DataFrame({"c": [1, 2]}), 50).to_list() == [False, False]
    assert _over_cap(pl.DataFrame({"c": []}), 50).to_list() == []


def test_rows_share_the_strings_of_nested_columns() -> None:
    # two findings naming the same fact in a list of structs, and a struct column:
    # each distinct string is one object, the values as to_dicts gives them
    frame = pl.DataFrame({
        "children": [[{"child": "s1", "dropped": [{"kind": "quantity", "norm": "45 ms"}]}],
                     [{"child": "s2", "dropped": [{"kind": "quantity", "norm": "45 ms"}]},
                      {"child": "s1", "dropped": []}]],
        "where": [{"fold": "f1", "n": 1}, {"fold": "f1", "n": 2}],
        "plain": ["x", "x"],
    })
    rows = list(_rows(frame))
    assert rows == frame.to_dicts()
    first, second = rows[0]["children"], rows[1]["children"]
    assert first[0]["dropped"][0]["norm"] is second[0]["dropped"][0]["norm"]
    assert first[0]["dropped"][0]["kind"] is second[0]["dropped"][0]["kind"]
    assert first[0]["child"] is second[1]["child"]
    assert rows[0]["where"]["fold"] is rows[1]["where"]["fold"]
