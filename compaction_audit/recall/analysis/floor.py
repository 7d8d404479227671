"""The recall floor: when a discriminating span has too few references to be recalled.

:func:`_floor` gives the ``[start, end)`` intervals of round indices during which a
discriminating span is covered by a working-set summary with fewer than ``recall_floor``
resolvable references (the span itself while resolvable, and each working-set summary
whose text keeps all its discriminators: :func:`_keeps`).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import collect, one
from compaction_audit.series import Series


def _floor(session: Session, series: Series, occ: pl.DataFrame, held: pl.DataFrame,
           life: pl.DataFrame) -> pl.DataFrame:
    """Intervals ``[start, end)`` of round indices during which a discriminating span is
    covered by a working-set summary with fewer than ``recall_floor`` resolvable
    references (the span itself while resolvable, and each working-set summary whose
    text keeps all its discriminators).

    Spans whose own fold recorded ``accounting`` are left out: their surrendered
    precision was debited explicitly (seed 002, "Decision Boundary"), and
    topic-only-fold reports them.  Columns: ``leaf``, ``start``, ``end``, ``rank``
    (worst kind rank, null when only the logged salience_class marks it), ``source``.
    """
    floor = session.header.recall_floor
    empty = pl.DataFrame(schema={"leaf": pl.String, "start": pl.Int64, "end": pl.Int64,
                                 "rank": pl.Int64, "source": pl.String})
    if floor == 0:
        return empty
    accounted = session.items.lazy().filter(pl.col("accounting").is_not_null()).select("id")
    accounted_children = session.edges.lazy().join(accounted, left_on="parent", right_on="id")
    discriminating = one(pl.concat([  # one plan (issue 14, fleet audits)
        occ.lazy().select("id").unique(),
        session.items.lazy().filter((pl.col("kind") == "span")
                                    & (pl.col("salience_class") == "discriminating"))
        .select("id"),
    ]).unique().join(accounted_children, left_on="id", right_on="child", how="anti"))
    if discriminating.height == 0:
        return empty
    summaries = session.items.lazy().filter(pl.col("kind") == "summary").select("id")
    need, covering = collect(  # plans.collect (issue 14, fleet audits)
        occ.lazy().group_by("id").agg(pl.col("key").n_unique().alias("need")),
        series.closure.lazy().join(summaries, left_on="item", right_on="id")
        .join(discriminating.lazy(), left_on="leaf", right_on="id")
        .join(session.membership.lazy(), left_on="item", right_on="id"))
    # (summary, leaf) pairs whose summary text keeps every key of the leaf; only pairs
    # of the closure are counted (joining held and occ on the key alone pairs every
    # summary with every span sharing a common key: quadratic in long sessions)
    preserving = covering.lazy().join(_keeps(covering, occ, held, need).lazy(),
                                      left_on=["item", "leaf"], right_on=["id", "leaf"])
    own = discriminating.lazy().join(life.lazy(), on="id").select(
        pl.col("id").alias("leaf"), pl.col("born").alias("start"), pl.col("gone").alias("end"))
    covering_plan = covering.lazy()
    events_plan = pl.concat([
        covering_plan.select("leaf", pl.col("start").alias("ri"), pl.lit(1).alias("cov"),
                             pl.lit(0).alias("ref")),
        covering_plan.select("leaf", pl.col("end").alias("ri"), pl.lit(-1).alias("cov"),
                             pl.lit(0).alias("ref")),
        pl.concat([own, preserving.select("leaf", "start", "end")]).select(
            "leaf", pl.col("start").alias("ri"), pl.lit(0).alias("cov"),
            pl.lit(1).alias("ref")),
        pl.concat([own, preserving.select("leaf", "start", "end")]).select(
            "leaf", pl.col("end").alias("ri"), pl.lit(0).alias("cov"),
            pl.lit(-1).alias("ref")),
    ])
    n = session.n_rounds
    # leaves numbered, and the running sums per leaf taken from one cumulative sum over
    # the rows sorted by (leaf number, round) less its value where the leaf starts: no
    # sort of strings and no window per leaf over every event (issue 14)
    events, numbered = collect(  # numbered once: both joins below read the same numbers
        events_plan, events_plan.select(pl.col("leaf").unique()).with_row_index("_leaf"))
    first = (pl.col("_leaf") != pl.col("_leaf").shift(1)).fill_null(True)
    same_next = (pl.col("_leaf").shift(-1) == pl.col("_leaf")).fill_null(False)
    state = one(
        events.lazy().join(numbered.lazy(), on="leaf").group_by("_leaf", "ri")
        .agg(pl.col("cov", "ref").sum()).sort("_leaf", "ri")
        .with_columns([(pl.col(c).cum_sum()
                        - pl.when(first).then(pl.col(c).cum_sum() - pl.col(c)).forward_fill())
                       .alias(c) for c in ("cov", "ref")]
                      + [pl.when(same_next).then(pl.col("ri").shift(-1)).otherwise(n)
                         .alias("end")])
        .filter((pl.col("cov") > 0) & (pl.col("ref") < floor) & (pl.col("ri") < n))
        .join(numbered.lazy(), on="_leaf").drop("_leaf")
    )
    if state.height == 0:
        return empty
    worst = occ.lazy().group_by("id").agg(pl.col("rank").max().alias("rank"))
    # adjacent segments of one leaf become one interval: a span is "new" below the floor
    # only at the start of an interval
    prev_end = pl.col("end").shift(1).over("leaf")
    return one(
        state.lazy().select("leaf", "ri", "end").sort("leaf", "ri")
        .with_columns((prev_end.is_null() | (pl.col("ri") != prev_end)).cast(pl.Int64)
                      .cum_sum().alias("_run"))
        .group_by("leaf", "_run").agg(pl.col("ri").min().alias("start"), pl.col("end").max())
        .drop("_run")
        .join(worst, left_on="leaf", right_on="id", how="left")
        .join(session.items.lazy().select("id", "source"), left_on="leaf", right_on="id")
        .sort("start", "leaf")
    )


def _keeps(covering: pl.DataFrame, occ: pl.DataFrame, held: pl.DataFrame,
           need: pl.DataFrame) -> pl.DataFrame:
    """The (summary ``id``, ``leaf``) pairs of ``covering`` whose summary keeps (``held``)
    as many of the leaf's ``occ`` rows as the leaf has keys (``need``).

    The join of the pairs with the leaves' keys has one row per (pair, key of the leaf):
    it is made on integer codes, and only with keys some summary keeps (a row of another
    key counts nothing), so that a closure of 1.4 million pairs over leaves of 8 keys
    (the ``text-chain`` shape) does not hold 11 million rows of strings (1 GB; issue 11,
    class 5)."""
    keys, codes = collect(  # the codes in one collect (issue 14, fleet audits)
        held.lazy().select("key").unique().with_row_index("_k"),
        pl.concat([covering.lazy().select(pl.col("item").alias("id")),
                   covering.lazy().select(pl.col("leaf").alias("id"))])
        .unique().with_row_index("_i"))
    # the sizes of the joins below are what class 5 bounds (measured in
    # tests/recall/test_survival_cap.py, eager or lazy: tests/joinsize.py)
    pairs = (covering.select(pl.col("item").alias("id"), "leaf").unique()
             .join(codes.rename({"_i": "_s"}), on="id")
             .join(codes.rename({"id": "leaf", "_i": "_l"}), on="leaf"))
    kept = (pairs.select("_s", "_l")
            .join(occ.select("key", pl.col("id").alias("leaf")).join(keys, on="key")
                  .join(codes.rename({"id": "leaf", "_i": "_l"}), on="leaf")
                  .select("_l", "_k"), on="_l")
            .join(held.join(keys, on="key").join(codes.rename({"_i": "_s"}), on="id")
                  .select("_k", "_s"), on=["_k", "_s"])
            .group_by("_s", "_l").agg(pl.len().alias("kept")))
    return (pairs.join(kept, on=["_s", "_l"])
            .join(need, left_on="leaf", right_on="id")
            .filter(pl.col("kept") >= pl.col("need")).select("id", "leaf"))
