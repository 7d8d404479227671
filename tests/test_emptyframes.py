"""when_empty: a frame function's result on empty input, computed once per schema."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

from compaction_audit.emptyframes import when_empty
from compaction_audit.recall.ranking import add_tiers


def test_computed_once_per_schema_and_arguments() -> None:
    calls: list[int] = []

    @when_empty
    def double(frame: pl.DataFrame, by: int = 2) -> pl.DataFrame:
        calls.append(frame.height)
        return frame.with_columns((pl.col("x") * by).alias("y"))

    empty = pl.DataFrame({"x": []}, schema={"x": pl.Int64})
    first, second = double(empty), double(empty)
    assert calls == [0]
    assert second.schema == {"x": pl.Int64, "y": pl.Int64} and second.height == 0
    double(empty, by=3)
    double(pl.DataFrame({"x": []}, schema={"x": pl.Float64}))
    assert calls == [0, 0, 0]  # other arguments, other schema: computed again
    assert double(pl.DataFrame({"x": [1, 2]}))["y"].to_list() == [2, 4]
    assert calls == [0, 0, 0, 2]  # rows: always computed
    first.insert_column(0, pl.Series("z", [], dtype=pl.String))
    assert double(empty).columns == ["x", "y"]  # a caller's change stays its own


def test_add_tiers_on_empty_input_is_unchanged() -> None:
    frame = pl.DataFrame(schema={"kind": pl.String, "text": pl.String,
                                 "span_source": pl.String, "span_type": pl.String,
                                 "asked_again_round": pl.Int64,
                                 "reused_round": pl.Int64})
    kept = add_tiers(frame)
    assert_frame_equal(kept, add_tiers.__wrapped__(frame))  # type: ignore[attr-defined]
    assert kept.columns == ["kind", "text", "span_source", "span_type",
                            "asked_again_round", "reused_round", "tier", "tier_why",
                            "tier_name"]


def test_interval_sums_without_intervals_match_the_full_pass() -> None:
    from compaction_audit.reachability import interval_sums
    schema = {"start": pl.Int64, "end": pl.Int64, "fold": pl.Boolean, "w": pl.Float64,
              "i32": pl.Int32, "i8": pl.Int8}
    values = {"value": pl.lit(1, pl.Int64), "f": pl.col("fold").cast(pl.Int64),
              "w": pl.col("w"), "i32": pl.col("i32"), "i8": pl.col("i8")}
    outside = pl.DataFrame({"start": [5], "end": [6], "fold": [True], "w": [1.0],
                            "i32": [1], "i8": [1]}, schema=schema)  # past the rounds
    for n in (0, 3):
        got = interval_sums(pl.DataFrame(schema=schema), n, values)
        assert_frame_equal(got, interval_sums(outside, n, values))
        assert got["value"].to_list() == [0] * n
        assert got.schema["i8"] == pl.Int64 and got.schema["i32"] == pl.Int32


def test_kept_for_schemas_computes_once_per_name_and_schemas() -> None:
    from compaction_audit.emptyframes import kept_for_schemas
    calls: list[str] = []
    empty = pl.DataFrame(schema={"k": pl.String})

    def compute() -> pl.DataFrame:
        calls.append("x")
        return empty.with_columns(pl.lit(1).alias("n"))

    got = [kept_for_schemas("test-once", (empty,), compute) for _ in range(2)]
    kept_for_schemas("test-once", (pl.DataFrame(schema={"k": pl.Int64}),), compute)
    assert calls == ["x", "x"]
    assert got[1].schema == {"k": pl.String, "n": pl.Int32} and got[1].height == 0
