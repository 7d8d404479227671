"""Which summary to rehydrate, and how many tokens bringing ``raw_ratio`` back costs.

Seed 000, "Decision Boundary": "Rehydrate by expanding the lowest-depth summary with
the highest provenance fan-out until ``raw_ratio`` >= 0.30."  Fan-out is the number of
direct children; ties go to more resolvable leaf tokens, then to the id.  The summaries
with a leaf that can be read again come first: expanding one whose leaves are all gone
restores nothing (usertest56 #4: the advice named such a summary beside one whose
offloaded leaves could reach the target); where none has one, the seed's choice is
named, and the advice says none of its leaves can be read again.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.reachability import interval_max, resolvable_end
from compaction_audit.series import Series


def tokens_needed(raw_tokens: int, summary_tokens: int, target: float) -> int:
    """Raw tokens to add so that raw / (raw + summary) >= ``target``, summaries kept.

    Solves (R + d) / (R + d + S) = target for d: d = (target*S - (1-target)*R) / (1-target),
    rounded up; 0 when the ratio already meets the target.  Units: tokens.  Raises
    ValueError for a target outside [0, 1).
    """
    if not 0.0 <= target < 1.0:
        raise ValueError(f"target must be in [0, 1), got {target}")
    need = (target * summary_tokens - (1.0 - target) * raw_tokens) / (1.0 - target)

    def meets(d: int) -> bool:
        return raw_tokens + d >= target * (raw_tokens + d + summary_tokens)

    # the least d that meets the target, checked on whole tokens: rounding of the
    # quotient is a unit either way (adv79 #7: 66,666,666,668 where 66,666,666,667 met
    # 3/10 exactly, an absolute 1e-9 taken off before the ceiling)
    d = max(0, math.ceil(need))
    while d > 0 and meets(d - 1):
        d -= 1
    while not meets(d):
        d += 1
    return d


def _over_budget(row: dict[str, Any], needed: int) -> int:
    """Tokens by which the round's working set (``raw_tokens`` + ``summary_tokens``)
    with ``needed`` raw tokens added exceeds its ``budget_tokens``; 0 when it fits or
    the log records no budget."""
    budget, raw, summary = row.get("budget_tokens"), row["raw_tokens"], row["summary_tokens"]
    if not isinstance(budget, int) or budget <= 0 or raw is None or summary is None:
        return 0
    return max(0, int(raw) + int(summary) + needed - budget)


def suggestions(session: Session, series: Series, rounds: list[int],
                target: float) -> dict[int, dict[str, Any]]:
    """For each round index in ``rounds``: the summary to rehydrate and the cost.

    Returns ``{ri: {"summary", "depth", "fan_out", "resolvable_leaves",
    "resolvable_leaf_tokens", "tokens_needed", "over_budget"?}}`` (tokens;
    ``over_budget`` only where the raw tokens needed, every summary kept, take the
    working set past the round's budget: by how many); a round whose working set holds
    no summary maps to ``{"summary": None, "tokens_needed": ...}``.

    Never pairs every working-set summary with every round (issue 11, item 5): a
    summary's resolvable leaves only change when one of them goes, so each membership
    interval is cut there into pieces of constant (leaves, tokens); the pieces are
    ranked once by the order above and :func:`interval_max` finds the best piece
    covering each round.  Work: the closure pairs of working-set summaries plus
    rounds, times a log factor.
    """
    if not rounds:
        return {}
    fan_out = session.edges.group_by("parent").agg(pl.len().cast(pl.Int64).alias("fan_out"))
    summaries = (
        session.membership
        .join(session.items.filter(pl.col("kind") == "summary").select("id", "depth"), on="id")
        .join(fan_out, left_on="id", right_on="parent")
        .with_row_index("interval")
    )
    span_life = session.items.filter(pl.col("kind") == "span").select(
        pl.col("id").alias("leaf"), "tokens", resolvable_end(session).alias("gone"))
    # the leaves of each interval that are resolvable at its start (all were born by then)
    held = (summaries.select("interval", "start", "end", "id")
            .join(series.closure, left_on="id", right_on="item")
            .join(span_life, on="leaf")
            .filter(pl.col("gone") > pl.col("start")))
    total = held.group_by("interval").agg(pl.len().cast(pl.Int64).alias("n_all"),
                                          pl.col("tokens").sum().alias("t_all"))
    # leaves going inside the interval, with running totals of what has gone
    going = (held.filter(pl.col("gone") < pl.col("end"))
             .group_by("interval", "gone").agg(pl.len().cast(pl.Int64).alias("n"),
                                               pl.col("tokens").sum().alias("t"))
             .sort("interval", "gone")
             .select("interval", pl.col("gone").alias("at"),
                     pl.col("n").cum_sum().over("interval").alias("n_gone"),
                     pl.col("t").cum_sum().over("interval").alias("t_gone")))
    pieces = (
        pl.concat([summaries.select("interval", pl.col("start").alias("at"),
                                    pl.lit(0, pl.Int64).alias("n_gone"),
                                    pl.lit(0, pl.Int64).alias("t_gone")), going],
                  how="vertical_relaxed")
        .join(summaries, on="interval").join(total, on="interval", how="left")
        .sort("interval", "at")
        .with_columns(pl.col("at").shift(-1).over("interval").fill_null(pl.col("end"))
                      .alias("until"),
                      (pl.col("n_all").fill_null(0) - pl.col("n_gone"))
                      .alias("resolvable_leaves"),
                      (pl.col("t_all").fill_null(0) - pl.col("t_gone"))
                      .alias("resolvable_leaf_tokens"))
        .sort([pl.col("resolvable_leaves") > 0, "depth", "fan_out", "resolvable_leaf_tokens",
               "id", "at"], descending=[True, False, True, True, False, False])
        .with_row_index("rank")
        .with_columns(-pl.col("rank").cast(pl.Int64).alias("score"))
    )
    best = (interval_max(pieces.select(pl.col("at").alias("start"), pl.col("until").alias("end"),
                                       "score"), session.n_rounds, "score")
            .filter(pl.col("ri").is_in(rounds))
            .join(pieces.select("score", "id", "depth", "fan_out", "resolvable_leaves",
                                "resolvable_leaf_tokens"), left_on="value", right_on="score"))
    frame = series.frame.filter(pl.col("ri").is_in(rounds)).select(
        "ri", "raw_tokens", "summary_tokens", "budget_tokens")
    picked = {row["ri"]: row for row in best.iter_rows(named=True)}
    out: dict[int, dict[str, Any]] = {}
    for row in frame.iter_rows(named=True):
        choice = picked.get(row["ri"])
        out[row["ri"]] = {
            "summary": choice["id"] if choice else None,
            "depth": choice["depth"] if choice else None,
            "fan_out": choice["fan_out"] if choice else None,
            "resolvable_leaves": choice["resolvable_leaves"] if choice else 0,
            "resolvable_leaf_tokens": choice["resolvable_leaf_tokens"] if choice else 0,
            "tokens_needed": tokens_needed(row["raw_tokens"], row["summary_tokens"], target),
        }
        over = _over_budget(row, out[row["ri"]]["tokens_needed"])
        if over:  # the raw tokens needed do not fit beside every summary (usertest53 #7)
            out[row["ri"]]["over_budget"] = over
    return out
