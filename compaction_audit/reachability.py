"""Provenance closure and reachability as interval arithmetic in Polars.

Definitions (log-format spec, "Derived quantities"; seed 000, "Operational Effect"):

- ``leaves(x)``: a raw span's leaves are itself; a summary's are the union of its
  children's, through summaries of summaries.
- resolvable at round t: a raw span in the working set, or offloaded and not evicted
  since.  A span is resolvable on ``[created, gone)`` in round indices, where ``gone``
  is the round it was evicted (or silently dropped outside the store).
- reachable leaves at t: resolvable raw spans in ``leaves(x)`` for some working-set
  item ``x``.  A leaf is *covered* while any item whose leaves include it is in the
  working set; covered intervals are merged per leaf and cut to the resolvable one.

Nothing here loops over rounds: every step is a join, a sort or a cumulative sum, so
the work grows with membership changes and provenance size, not rounds times
working-set size.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session


def max_int(column: pl.Series) -> int:
    """The largest value of an integer column, 0 when it is empty or all null."""
    value = column.max()
    return int(value) if isinstance(value, int) else 0


def leaves(session: Session) -> pl.DataFrame:
    """The provenance closure: one row per (``item``, ``leaf``) pair, deduplicated.

    Built tier by tier (depth 1, 2, ...), each tier joining its edges with the leaves
    of the tiers below, so the number of joins is the maximum depth.  Shape: columns
    ``item`` and ``leaf`` (String).
    """
    items = session.items
    spans = items.filter(pl.col("kind") == "span").select(
        pl.col("id").alias("item"), pl.col("id").alias("leaf"))
    parts = [spans]
    known = spans
    depth_of = items.select("id", "depth")
    edges = session.edges.join(depth_of, left_on="parent", right_on="id")
    max_depth = max_int(items["depth"])
    for depth in range(1, max_depth + 1):
        tier = (
            edges.filter(pl.col("depth") == depth)
            .join(known, left_on="child", right_on="item")
            .select(pl.col("parent").alias("item"), "leaf")
            .unique()
        )
        parts.append(tier)
        known = pl.concat([known, tier])
    return pl.concat(parts)


def resolvable_end(session: Session) -> pl.Expr:
    """Expression for the end (exclusive round index) of an item's resolvable span."""
    return pl.col("gone_ri").fill_null(session.n_rounds)


def reachable_intervals(session: Session, closure: pl.DataFrame) -> pl.DataFrame:
    """Half-open round-index intervals ``[start, end)`` during which each leaf is reachable.

    Shape: columns ``leaf``, ``start``, ``end``; intervals of one leaf are disjoint.
    """
    covered = (
        session.membership.join(closure, left_on="id", right_on="item")
        .select("leaf", "start", "end")
        .sort("leaf", "start")
    )
    prev_end = pl.col("end").cum_max().shift(1).over("leaf")
    merged = (
        covered.with_columns(
            (prev_end.is_null() | (pl.col("start") > prev_end)).cast(pl.Int64).alias("_new"))
        .with_columns(pl.col("_new").cum_sum().alias("_grp"))
        .group_by("leaf", "_grp")
        .agg(pl.col("start").min(), pl.col("end").max())
    )
    life = session.items.filter(pl.col("kind") == "span").select(
        pl.col("id").alias("leaf"), pl.col("ri").alias("born"),
        resolvable_end(session).alias("gone"))
    return (
        merged.join(life, on="leaf")
        .select(
            "leaf",
            pl.max_horizontal("start", "born").alias("start"),
            pl.min_horizontal("end", "gone").alias("end"),
        )
        .filter(pl.col("start") < pl.col("end"))
    )


def ungrounded_intervals(session: Session, closure: pl.DataFrame) -> pl.DataFrame:
    """Intervals during which a working-set summary has no reachable leaf.

    A summary's leaves all exist when it is created, and a leaf that stops being
    resolvable never comes back, so a summary is grounded until the last of its leaves
    goes.  Shape: columns ``id``, ``start``, ``end`` (round indices, half-open).
    """
    last_leaf = (
        closure.join(
            session.items.select(pl.col("id").alias("leaf"), resolvable_end(session)
                                 .alias("gone")), on="leaf")
        .group_by("item")
        .agg(pl.col("gone").max().alias("grounded_until"))
    )
    summaries = session.items.filter(pl.col("kind") == "summary").select("id")
    return (
        session.membership.join(summaries, on="id")
        .join(last_leaf, left_on="id", right_on="item", how="left")
        .select(
            "id",
            pl.max_horizontal("start", pl.col("grounded_until").fill_null(0)).alias("start"),
            "end",
        )
        .filter(pl.col("start") < pl.col("end"))
    )


def interval_sum(intervals: pl.DataFrame, n_rounds: int, value: pl.Expr | None = None,
                 by: str | None = None) -> pl.DataFrame:
    """Sum ``value`` (default 1) over the intervals covering each round index.

    Each interval ``[start, end)`` contributes +value at ``start`` and -value at
    ``end``; a cumulative sum over round indices gives the total.  Returns columns
    ``ri`` (0 .. n_rounds-1), optionally ``by``, and ``value`` (Int64 or Float64).
    """
    val = (value if value is not None else pl.lit(1, pl.Int64)).alias("value")
    keys = [by] if by else []
    up = intervals.select(*keys, pl.col("start").cast(pl.Int64).alias("ri"), val)
    down = intervals.select(*keys, pl.col("end").cast(pl.Int64).alias("ri"), -val)
    deltas = pl.concat([up, down]).group_by(*keys, "ri").agg(pl.col("value").sum())
    grid = pl.DataFrame({"ri": pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64)})
    if by:
        grid = grid.join(deltas.select(by).unique(), how="cross")
    out = (
        grid.join(deltas, on=[*keys, "ri"], how="left")
        .with_columns(pl.col("value").fill_null(0))
        .sort(*keys, "ri")
        .with_columns(pl.col("value").cum_sum().over(keys) if keys
                      else pl.col("value").cum_sum())
    )
    return out
