"""Interval merging for the recall analysis: one global sort, no per-key Python (issue 14)."""

from __future__ import annotations

import polars as pl

from compaction_audit.plans import collect, one


def _merge(intervals: pl.DataFrame, by: str) -> pl.DataFrame:
    """Merge overlapping (or touching) [start, end) intervals per ``by`` into disjoint
    ones; columns ``by``, ``start``, ``end``, sorted by ``by`` then ``start``.

    One integer sort and one cumulative max over the whole table, not a window per
    value of ``by`` (as :func:`compaction_audit.reachability.reachable_intervals`): each
    value gets a number (its categorical code) and every bound is shifted by that number
    times the span of the bounds, so the values' intervals never overlap."""
    if intervals.height == 0:
        return intervals.select(by, "start", "end")
    low = int(intervals["start"].min())  # type: ignore[arg-type]
    width = int(intervals["end"].max()) - low + 1  # type: ignore[arg-type]
    lead = pl.col("_code").cast(pl.Int64) * width - low
    keyed = one(  # collected once, so that the starts and the ends read the same codes
        intervals.lazy().select(by, "start", "end",
                                pl.col(by).cast(pl.Categorical).to_physical().alias("_code"))
        .with_columns((lead + pl.col("start")).alias("_key"), (lead + pl.col("end")).alias("_to"))
        .sort("_key")
        .with_columns(pl.col("_to").cum_max())
    ).lazy()
    new = (pl.col("_key") > pl.col("_to").shift(1)).fill_null(True)
    flagged = keyed.with_columns(new.alias("_new"), new.shift(-1).fill_null(True).alias("_last"))
    starts, ends = collect(flagged.filter("_new").select(by, "start"),
                           flagged.filter("_last").select((pl.col("_to") - lead).alias("end")))
    return starts.hstack(ends).sort(by, "start")
