"""The per-round series: one row per round with every derived quantity of the spec.

Columns (names exactly as in the log-format spec, "Derived quantities"):

============================  ======  ==================================================
column                        unit    meaning
============================  ======  ==================================================
``round``, ``line``           -       round number and line of its record
``raw_tokens``                tokens  raw-span tokens in the working set
``summary_tokens``            tokens  summary tokens in the working set
``raw_ratio``                 ratio   raw / (raw + summary); 0.0 for an empty working set
``summary_to_raw``            ratio   summary / raw; null when raw_tokens is 0
``summary_depth_max``         tiers   deepest summary in the working set (0: none)
``rounds_at_max_depth``       rounds  consecutive rounds ending here at the depth cap
``distinct_source_spans``     spans   reachable leaves (see :mod:`reachability`)
``query_cosine_retained``     score   mean known salience of the working set, or null
``query_cosine_rebuilt``      cosine  mean cosine of the working set's texts to the task
                                      query, computed by the auditor (issue 16), or null
``ungrounded_summaries``      items   working-set summaries with no reachable leaf
``items``                     items   working-set size (``raw_items``+``summary_items``)
``new_spans``, ``folds``      items   spans that arrived, summaries created this round
``evictions``, ``offloads``   items   listed in ``evicted`` / ``offloaded``
``silent_drops``              items   left the working set without being listed
``retained_tokens``           tokens  raw_tokens + summary_tokens
``budget_tokens``             tokens  the round's budget (round override, else session)
``budget_used``               ratio   retained_tokens / budget_tokens (null: no budget)
``discriminators_seen``       discr.  distinct discriminators seen in raw spans so far
``recall_debt``               discr.  of those, recoverable from nothing resolvable
``recall_debt_fold``          discr.  ... of which a fold dropped
``recall_debt_eviction``      discr.  ... of which were lost by plain eviction
============================  ======  ==================================================

The four recall columns come from :mod:`compaction_audit.recall` and are joined by the
engine; :func:`build_series` returns the others, ``query_cosine_rebuilt`` from the
frame :func:`compaction_audit.cosine.rebuild` made (null without one).

The depth cap for ``rounds_at_max_depth`` is the session's ``max_depth``, else the
largest depth of any summary written in the session, retained or not.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from compaction_audit.closure import Closure, closure
from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.reachability import (
    interval_max,
    interval_sum,
    interval_sums,
    max_int,
    reachable_intervals,
    ungrounded_intervals,
)

SPEC_COLUMNS = (
    "round", "line", "raw_tokens", "summary_tokens", "raw_ratio", "summary_to_raw",
    "summary_depth_max", "rounds_at_max_depth", "distinct_source_spans",
    "query_cosine_retained", "query_cosine_rebuilt", "ungrounded_summaries", "items",
    "raw_items", "summary_items",
    "new_spans", "folds", "evictions", "offloads", "silent_drops", "retained_tokens",
    "budget_tokens", "budget_used", "discriminators_seen", "recall_debt", "recall_debt_fold",
    "recall_debt_eviction",
)
"""Columns of the series, in report order (``ri`` is kept first for joins)."""


@dataclass
class Series:
    """The series frame plus the intermediate tables rules need.

    ``frame``: one row per round (columns ``ri`` + :data:`SPEC_COLUMNS`).
    ``provenance``: the (item, leaf) provenance pairs, as a
    :class:`~compaction_audit.closure.Closure` (item rows) or a frame of ids;
    :attr:`closure` names them by id.  ``ungrounded``: (id, start, end) round-index
    intervals of ungrounded working-set summaries.  ``depth_cap``: the cap used for
    ``rounds_at_max_depth`` (tiers).
    """

    frame: pl.DataFrame
    provenance: Closure | pl.DataFrame
    ungrounded: pl.DataFrame
    depth_cap: int

    @property
    def closure(self) -> pl.DataFrame:
        """(``item``, ``leaf``) provenance pairs named by id (String columns)."""
        links = self.provenance
        return links.frame if isinstance(links, Closure) else links


def build_series(session: Session, rebuilt: pl.DataFrame | None = None) -> Series:
    """Compute the per-round series of ``session`` (pure Polars, no per-round loops).

    ``rebuilt``: (``ri``, ``query_cosine_rebuilt``) from
    :func:`compaction_audit.cosine.rebuild`; None leaves the column null.
    """
    n = session.n_rounds
    members = session.membership.join(
        session.items.select("id", "kind", "tokens", "depth").with_row_index("i"), on="id")
    is_raw = pl.col("kind") == "span"
    tokens = pl.col("tokens")
    sums = interval_sums(members, n, {
        "raw_tokens": pl.when(is_raw).then(tokens).otherwise(0),
        "summary_tokens": pl.when(is_raw).then(0).otherwise(tokens),
        "raw_items": is_raw.cast(pl.Int64),
        "summary_items": (~is_raw).cast(pl.Int64),
    })
    links = closure(session)
    reach = reachable_intervals(session, links, members)
    ungrounded = ungrounded_intervals(session, links, members)
    depth = interval_max(members.filter(~is_raw), n, "depth")
    # one plan from here to the series (issue 14, fleet audits: one collect, not ten)
    frame = session.rounds.lazy().sort("ri").with_columns(  # ri is 0 .. n-1, as in sums
        *sums.drop("ri").get_columns(),
        interval_sum(reach, n)["value"].alias("distinct_source_spans"),
        interval_sum(ungrounded, n)["value"].alias("ungrounded_summaries"),
    ).join(depth.lazy().rename({"value": "summary_depth_max"}), on="ri", how="left")
    if rebuilt is None:
        frame = frame.with_columns(pl.lit(None, pl.Float64).alias("query_cosine_rebuilt"))
    else:
        frame = frame.join(rebuilt.lazy().select("ri", "query_cosine_rebuilt"), on="ri",
                           how="left")
    cap = session.header.max_depth
    if cap is None:  # the largest depth seen in the whole session (spec, log-format)
        cap = max_int(session.items["depth"])
    at_cap = pl.col("summary_depth_max") == cap
    run = (at_cap != at_cap.shift(1)).fill_null(True).cum_sum()
    total = pl.col("raw_tokens") + pl.col("summary_tokens")
    budget = pl.col("budget_tokens").fill_null(pl.lit(session.header.budget_tokens,
                                                      pl.Int64))
    frame = (
        frame.with_columns(pl.col("summary_depth_max").fill_null(0))
        .with_columns(
            pl.when(total > 0).then(pl.col("raw_tokens") / total).otherwise(0.0)
            .alias("raw_ratio"),
            pl.when(pl.col("raw_tokens") > 0)
            .then(pl.col("summary_tokens") / pl.col("raw_tokens"))
            .otherwise(None).alias("summary_to_raw"),
            pl.when(cap > 0).then(
                pl.when(at_cap).then(pl.int_range(1, pl.len() + 1).over(run)).otherwise(0)
            ).otherwise(0).alias("rounds_at_max_depth"),
            pl.when(pl.col("has_retained") & (pl.col("salience_known") > 0))
            .then(pl.col("salience_sum") / pl.col("salience_known"))
            .otherwise(None).alias("query_cosine_retained"),
            (pl.col("raw_items") + pl.col("summary_items")).alias("items"),
            total.alias("retained_tokens"),
            budget.alias("budget_tokens"),
        )
        .with_columns(
            pl.when(pl.col("budget_tokens") > 0)
            .then(pl.col("retained_tokens") / pl.col("budget_tokens"))
            .otherwise(None).alias("budget_used"))
    )
    keep = ["ri", *SPEC_COLUMNS[:-4], "has_retained",
            *[c for c in session.rounds.columns if c.startswith("logged_")]]
    # the file each round's line is in (model.ROUND_SCHEMA; null: the trace itself)
    line_file = (pl.col("line_file") if "line_file" in session.rounds.columns
                 else pl.lit(None, pl.String).alias("line_file"))
    return Series(one(frame.select(*keep, line_file)), links, ungrounded, cap)
