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

from itertools import chain

import polars as pl

from compaction_audit.errors import LogError
from compaction_audit.model import Session


def max_int(column: pl.Series) -> int:
    """The largest value of an integer column, 0 when it is empty or all null."""
    value = column.max()
    return int(value) if isinstance(value, int) else 0


MAX_CLOSURE_PAIRS = 2_000_000
"""Most (item, leaf) provenance pairs an audit builds (issue 11, item 5; documented in
``docs/performance.md``, "Limits").  The recall analysis checks each pair's leaf text
against the summary's text, so its work grows with the pairs, and the pairs can grow
with the square of the input: N compactions that each fold the previous summary and
new spans hold about N x spans pairs.  Past this bound (about 1,400 such Claude Code
compactions of two spans each; the 1 GB benchmark trace holds about 950,000 pairs) the
audit stops with a one-line error naming the summary that crossed it (exit 2)."""


def leaves(session: Session, limit: int = MAX_CLOSURE_PAIRS) -> pl.DataFrame:
    """The provenance closure: one row per (``item``, ``leaf``) pair, deduplicated.

    Shape: columns ``item`` and ``leaf`` (String); a raw span is its own leaf (one row
    each), then the summaries in order of depth.  Each summary's leaf set is the union
    of its children's, taken in order of depth (so children come first); a summary
    with one child shares its child's set, so the work is proportional to the pairs
    written, never to depth times pairs.  Raises :class:`LogError` at the line of the
    first summary whose leaves take the closure past ``limit`` pairs.
    """
    items = session.items
    ids = items["id"]
    index = {item: i for i, item in enumerate(ids.to_list())}
    is_span = items["kind"] == "span"
    span_rows = is_span.arg_true()
    total = len(span_rows)
    summaries = (items.with_row_index("i").filter(~is_span)
                 .select("i", "id", "depth", "line").sort("depth", "i", maintain_order=True))
    children = dict(session.edges.group_by("parent", maintain_order=True)
                    .agg("child").iter_rows())
    of: dict[int, frozenset[int]] = {}
    order: list[int] = []
    for i, item, depth, line in summaries.iter_rows():
        kids = [index[c] for c in children.get(item, ()) if c in index]
        if len(kids) == 1 and kids[0] in of:
            found = of[kids[0]]
        else:
            found = frozenset().union(*(of.get(k, (k,)) for k in kids))
        total += len(found)
        if total > limit:
            raise LogError(session.path, line or 0,
                           f"provenance too large: summary {item!r} (depth {depth}) takes "
                           f"the closure past {limit:,} (item, leaf) pairs; see "
                           "docs/performance.md (limits)", "summaries")
        of[i] = found
        order.append(i)
    sets = [of[i] for i in order]
    item_rows = (pl.DataFrame({"i": order, "n": [len(x) for x in sets]},
                              schema={"i": pl.UInt32, "n": pl.UInt32})
                 .select(pl.col("i").repeat_by("n").explode().drop_nulls())["i"])
    leaf_rows = pl.Series("l", list(chain.from_iterable(sets)), dtype=pl.UInt32)
    pairs = pl.DataFrame({"item": ids.gather(item_rows), "leaf": ids.gather(leaf_rows)})
    spans = pl.DataFrame({"item": ids.gather(span_rows), "leaf": ids.gather(span_rows)})
    return pl.concat([spans, pairs])


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
    level = intervals.select((pl.col("start") + size).cast(pl.Int64).alias("l"),
                             (pl.col("end") + size).cast(pl.Int64).alias("r"),
                             pl.col(value).alias("value"))
    blocks = []
    while True:
        level = level.filter(pl.col("l") < pl.col("r"))
        if level.height == 0:
            break
        blocks.append(level.filter(pl.col("l") % 2 == 1).select(
            pl.col("l").alias("node"), "value"))
        blocks.append(level.filter(pl.col("r") % 2 == 1).select(
            (pl.col("r") - 1).alias("node"), "value"))
        level = level.select(((pl.col("l") + 1) // 2).alias("l"), (pl.col("r") // 2).alias("r"),
                             "value")
    if not blocks:
        return pl.DataFrame(schema={"ri": pl.Int64, "value": intervals.schema[value]})
    best = pl.concat(blocks).group_by("node").agg(pl.col("value").max())
    rounds = pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")
    paths = pl.concat([pl.DataFrame({"ri": rounds, "node": (rounds + size) // (1 << k)})
                       for k in range(size.bit_length())])
    return (paths.join(best, on="node").group_by("ri").agg(pl.col("value").max())
            .sort("ri"))
