"""Provenance closure and reachability as interval arithmetic in Polars.

Definitions (log-format spec, "Derived quantities"; seed 000, "Operational Effect"):

- ``leaves(x)``: a raw span's leaves are itself; a summary's are the union of its
  children's, through summaries of summaries.
- resolvable at round t: a raw span in the working set, or offloaded and not evicted
  since.  A span is resolvable on ``[created, gone)`` in round indices, where ``gone``
  is the round it was evicted (or silently dropped outside the store).
- reachable leaves at t: resolvable raw spans in ``leaves(x)`` for some working-set
  item ``x``.  A leaf is *covered* while any item whose leaves include it is in the
  working set; covered intervals are cut to the leaf's resolvable one and merged.

Nothing here loops over rounds: every step is a join, a sort, a gather or a cumulative
sum, so the work grows with membership changes and provenance size, not rounds times
working-set size.  Items are named by their row in ``session.items`` (UInt32) from the
closure (:mod:`compaction_audit.closure`) on: integer joins, gathers and sorts instead
of string ones (issue 14).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.closure import MAX_CLOSURE_PAIRS, Closure, closure, leaves
from compaction_audit.model import Session
from compaction_audit.plans import collect, one

__all__ = ["MAX_CLOSURE_PAIRS", "Closure", "closure", "interval_max", "interval_sum",
           "interval_sums", "leaves", "max_int", "reachable_intervals", "resolvable_end",
           "ungrounded_intervals"]


def max_int(column: pl.Series) -> int:
    """The largest value of an integer column, 0 when it is empty or all null."""
    value = column.max()
    return int(value) if isinstance(value, int) else 0


def resolvable_end(session: Session) -> pl.Expr:
    """Expression for the end (exclusive round index) of an item's resolvable span."""
    return pl.col("gone_ri").fill_null(session.n_rounds)


def reachable_intervals(session: Session, links: Closure, members: pl.DataFrame
                        ) -> pl.DataFrame:
    """Half-open round-index intervals ``[start, end)`` during which each leaf is reachable.

    ``members``: the working-set membership with each item's row ``i`` (UInt32),
    ``kind``, ``start`` and ``end``.  Each (member, leaf) interval is cut to the leaf's resolvable
    span, then the intervals of a leaf are merged.  The merge is one sort and one
    cumulative max over the whole table, not a window per leaf: the leaf's row times
    (rounds + 1) is added to every bound, so the leaves' intervals never overlap.
    Shape: columns ``leaf`` (UInt32 item row), ``start``, ``end`` (Int64); intervals
    of one leaf are disjoint and not adjacent.
    """
    n = session.n_rounds
    is_span = pl.col("kind") == "span"
    parts = [members.lazy().filter(is_span).select(pl.col("i").alias("leaf"), "start", "end")]
    if links.summary_pairs.height:  # a raw span is its own only leaf: no join for those
        parts.append(members.lazy().filter(~is_span).select("i", "start", "end")
                     .join(links.summary_pairs.lazy(), left_on="i", right_on="item")
                     .select("leaf", "start", "end"))
    covered = one(pl.concat(parts))
    leaf = covered["leaf"]
    bounds = session.items.select(pl.col("ri").gather(leaf).alias("born"),
                                  pl.col("gone_ri").fill_null(n).gather(leaf).alias("gone"))
    lead = pl.col("leaf").cast(pl.Int64) * (n + 1)
    cut = (  # one plan (issue 14, fleet audits): the starts and the ends are run together
        covered.lazy()
        .with_columns(pl.max_horizontal(pl.col("start"), bounds["born"]).alias("start"),
                      pl.min_horizontal(pl.col("end"), bounds["gone"]).alias("end"))
        .filter(pl.col("start") < pl.col("end"))
        .with_columns((lead + pl.col("start")).alias("key"), (lead + pl.col("end")).alias("to"))
        .sort("key")
        .with_columns(pl.col("to").cum_max().alias("to"))
    )
    new = (pl.col("key") > pl.col("to").shift(1)).fill_null(True)
    flagged = cut.with_columns(new.alias("_new"), new.shift(-1).fill_null(True).alias("_last"))
    starts, ends = collect(flagged.filter("_new").select("leaf", "start"),
                           flagged.filter("_last").select((pl.col("to") - lead).alias("end")))
    return starts.hstack(ends)


def ungrounded_intervals(session: Session, links: Closure, members: pl.DataFrame
                         ) -> pl.DataFrame:
    """Intervals during which a working-set summary has no reachable leaf.

    A summary's leaves all exist when it is created, and a leaf that stops being
    resolvable never comes back, so a summary is grounded until the last of its leaves
    goes.  ``members`` as for :func:`reachable_intervals`, with ``id``.
    Shape: columns ``id``, ``start``, ``end`` (round indices, half-open).
    """
    pairs = links.summary_pairs
    gone = session.items.select(pl.col("gone_ri").fill_null(session.n_rounds)
                                .gather(pairs["leaf"]).alias("gone"))["gone"]
    last_leaf = (pairs.lazy().select("item").with_columns(gone)
                 .group_by("item").agg(pl.col("gone").max().alias("grounded_until")))
    return one(  # one plan (issue 14, fleet audits)
        members.lazy().filter(pl.col("kind") == "summary")
        .join(last_leaf, left_on="i", right_on="item", how="left")
        .select(
            "id",
            pl.max_horizontal("start", pl.col("grounded_until").fill_null(0)).alias("start"),
            "end",
        )
        .filter(pl.col("start") < pl.col("end"))
    )


def interval_sums(intervals: pl.DataFrame, n_rounds: int,
                  values: dict[str, pl.Expr]) -> pl.DataFrame:
    """Several :func:`interval_sum` at once: columns ``ri`` (0 .. n_rounds-1) and one
    per entry of ``values`` (name -> value expression), from one pass over the
    intervals.  Each interval ``[start, end)`` adds its value at ``start`` and takes it
    away at ``end``; the per-round changes are summed, scattered over the rounds and
    summed cumulatively."""
    names = list(values)
    if not intervals.height:  # no interval: zeros, typed as the pass below would type them
        return _zero_sums(intervals, n_rounds, values)
    lazy = intervals.lazy()  # one plan, one collect (a fixed cost per call: issue 14)
    up = lazy.select(pl.col("start").cast(pl.Int64).alias("ri"),
                     *(v.alias(k) for k, v in values.items()))
    down = lazy.select(pl.col("end").cast(pl.Int64).alias("ri"),
                       *((-v).alias(k) for k, v in values.items()))
    deltas = one(pl.concat([up, down]).group_by("ri").agg(pl.col(names).sum())
                 .filter((pl.col("ri") >= 0) & (pl.col("ri") < n_rounds)))
    at = deltas["ri"]
    columns = [pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")]
    for name in names:  # scattered on zeros, then one cumulative sum for every column
        column = deltas[name]
        columns.append(_zeros(name, column.dtype, n_rounds).scatter(at, column))
    return pl.DataFrame(columns).with_columns(pl.col(names).cum_sum())


def _zeros(name: str, dtype: pl.DataType, n: int) -> pl.Series:
    """``n`` zeros of ``dtype`` without a query (``pl.zeros(eager=True)`` runs one)."""
    return pl.Series(name, [0], dtype).new_from_index(0, n)


def _zero_sums(intervals: pl.DataFrame, n_rounds: int,
               values: dict[str, pl.Expr]) -> pl.DataFrame:
    """:func:`interval_sums` of intervals with no rows, without running its pass (a
    small trace has many such: issue 14, fleet audits): the types are those of the
    summed values, from the plan's schema."""
    plan = intervals.lazy().select(*(v.alias(k) for k, v in values.items())).select(
        pl.all().sum().cum_sum())  # typed as the pass above: summed, then summed along
    columns = [pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")]
    columns += [_zeros(name, dtype, n_rounds) for name, dtype in plan.collect_schema().items()]
    return pl.DataFrame(columns)


def interval_sum(intervals: pl.DataFrame, n_rounds: int, value: pl.Expr | None = None,
                 by: str | None = None) -> pl.DataFrame:
    """Sum ``value`` (default 1) over the intervals covering each round index.

    Each interval ``[start, end)`` contributes +value at ``start`` and -value at
    ``end``; a cumulative sum over round indices gives the total.  Returns columns
    ``ri`` (0 .. n_rounds-1), optionally ``by``, and ``value`` (Int64 or Float64).
    """
    val = value if value is not None else pl.lit(1, pl.Int64)
    if by is None:
        return interval_sums(intervals, n_rounds, {"value": val})
    val = val.alias("value")
    up = intervals.select(by, pl.col("start").cast(pl.Int64).alias("ri"), val)
    down = intervals.select(by, pl.col("end").cast(pl.Int64).alias("ri"), -val)
    deltas = pl.concat([up, down]).group_by(by, "ri").agg(pl.col("value").sum())
    grid = pl.DataFrame({"ri": pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64)})
    grid = grid.join(deltas.select(by).unique(), how="cross")
    return (
        grid.join(deltas, on=[by, "ri"], how="left")
        .with_columns(pl.col("value").fill_null(0))
        .sort(by, "ri")
        .with_columns(pl.col("value").cum_sum().over(by))
    )
def interval_max(intervals: pl.DataFrame, n_rounds: int, value: str) -> pl.DataFrame:
    """The largest ``value`` among the intervals ``[start, end)`` covering each round.

    Linear in the intervals and rounds up to a log factor, whatever the number of
    distinct values (a sum grouped by value would take rounds times values: a chain of
    N folds has N depths).  Each interval is split into the O(log n) aligned blocks of
    a segment tree over the round indices (the bottom-up walk: a block ``l`` or
    ``r - 1`` is taken when ``l`` or ``r`` is odd, then both halve), every block keeps
    the largest value put on it, and a round's answer is the largest over the blocks
    that contain it (its leaf and that leaf's ancestors).  Returns columns ``ri`` and
    ``value`` for the rounds that some interval covers.
    """
    size = 1 << max(n_rounds - 1, 1).bit_length()
    level = one(intervals.lazy().select((pl.col("start") + size).cast(pl.Int64).alias("l"),
                                        (pl.col("end") + size).cast(pl.Int64).alias("r"),
                                        pl.col(value).alias("value"))
                .filter(pl.col("l") < pl.col("r")))
    blocks = []
    while level.height:  # one collect per level (issue 14, fleet audits)
        here = level.lazy()
        left, right, level = collect(
            here.filter(pl.col("l") % 2 == 1).select(pl.col("l").alias("node"), "value"),
            here.filter(pl.col("r") % 2 == 1).select((pl.col("r") - 1).alias("node"), "value"),
            here.select(((pl.col("l") + 1) // 2).alias("l"), (pl.col("r") // 2).alias("r"),
                        "value").filter(pl.col("l") < pl.col("r")))
        blocks += [left, right]
    if not blocks:
        return pl.DataFrame(schema={"ri": pl.Int64, "value": intervals.schema[value]})
    best = pl.concat(blocks).group_by("node").agg(pl.col("value").max())
    rounds = pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")
    paths = pl.concat([pl.DataFrame({"ri": rounds, "node": (rounds + size) // (1 << k)})
                       for k in range(size.bit_length())])
    return (paths.join(best, on="node").group_by("ri").agg(pl.col("value").max())
            .sort("ri"))
