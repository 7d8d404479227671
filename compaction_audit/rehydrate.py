"""Which summary to rehydrate, and how many tokens bringing ``raw_ratio`` back costs.

Seed 000, "Decision Boundary": "Rehydrate by expanding the lowest-depth summary with
the highest provenance fan-out until ``raw_ratio`` >= 0.30."  Fan-out is the number of
direct children; ties go to more tokens of leaves to read again, then to the id.  A
leaf *to read again* is a raw span under the summary that is resolvable and out of the
working set (offloaded, not evicted since): expanding the summary brings those back,
while a leaf already in the working set or evicted brings nothing (usertest65 #1: a leaf
read back earlier counted).  The summaries with a leaf to read again come first:
expanding one whose leaves are all gone restores nothing (usertest56 #4: the advice
named such a summary beside one whose offloaded leaves could reach the target); where
none has one, the seed's choice is named, and the advice says none of its leaves can
be read again.
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

    Returns ``{ri: {"summary", "depth", "fan_out", "leaves_to_read",
    "leaf_tokens_to_read", "tokens_needed", "over_budget"?}}`` (tokens;
    ``over_budget`` only where the raw tokens needed, every summary kept, take the
    working set past the round's budget: by how many); a round whose working set holds
    no summary maps to ``{"summary": None, "tokens_needed": ...}``.

    Never pairs every working-set summary with every round (issue 11, item 5): a
    summary's leaves to read again only change when one of them is offloaded, read
    back or goes, so each membership interval is cut there into pieces of constant
    (leaves, tokens); the pieces are
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
    spans = session.items.filter(pl.col("kind") == "span").select(
        pl.col("id").alias("leaf"), "tokens", "ri", resolvable_end(session).alias("gone"))
    # where each raw span can be read again: resolvable and out of the working set
    # (offloaded), the gaps between its membership intervals and after the last one up
    # to its end; a leaf in the working set reads nothing back (usertest65 #1)
    bounds = pl.concat([
        session.membership.join(spans, left_on="id", right_on="leaf")
        .select(pl.col("id").alias("leaf"), "start", "end"),
        spans.select("leaf", pl.col("gone").alias("start"), pl.col("gone").alias("end"))])
    gaps = (bounds.join(spans, on="leaf").sort("leaf", "start", "end")
            .select("leaf", "tokens",
                    pl.col("end").shift(1).over("leaf").fill_null(pl.col("ri")).alias("lo"),
                    pl.min_horizontal("start", "gone").alias("hi"))
            .filter(pl.col("lo") < pl.col("hi")))
    # each interval's leaves, while each can be read again within it
    held = (summaries.select("interval", "start", "end", "id")
            .join(series.closure, left_on="id", right_on="item")
            .join(gaps, on="leaf")
            .with_columns(pl.max_horizontal("lo", "start").alias("lo"),
                          pl.min_horizontal("hi", "end").alias("hi"))
            .filter(pl.col("lo") < pl.col("hi")))
    one = pl.lit(1, pl.Int64)
    changes = pl.concat([
        summaries.select("interval", pl.col("start").alias("at"),
                         pl.lit(0, pl.Int64).alias("n"), pl.lit(0, pl.Int64).alias("t")),
        held.select("interval", pl.col("lo").alias("at"), one.alias("n"),
                    pl.col("tokens").cast(pl.Int64).alias("t")),
        held.filter(pl.col("hi") < pl.col("end")).select(
            "interval", pl.col("hi").alias("at"), (-one).alias("n"),
            (-pl.col("tokens").cast(pl.Int64)).alias("t"))])
    pieces = (
        changes.group_by("interval", "at").agg(pl.col("n").sum(), pl.col("t").sum())
        .sort("interval", "at")
        .join(summaries, on="interval")
        .with_columns(pl.col("at").shift(-1).over("interval").fill_null(pl.col("end"))
                      .alias("until"),
                      pl.col("n").cum_sum().over("interval").alias("leaves_to_read"),
                      pl.col("t").cum_sum().over("interval").alias("leaf_tokens_to_read"))
        .sort([pl.col("leaves_to_read") > 0, "depth", "fan_out", "leaf_tokens_to_read",
               "id", "at"], descending=[True, False, True, True, False, False])
        .with_row_index("rank")
        .with_columns(-pl.col("rank").cast(pl.Int64).alias("score"))
    )
    best = (interval_max(pieces.select(pl.col("at").alias("start"), pl.col("until").alias("end"),
                                       "score"), session.n_rounds, "score")
            .filter(pl.col("ri").is_in(rounds))
            .join(pieces.select("score", "id", "depth", "fan_out", "leaves_to_read",
                                "leaf_tokens_to_read"), left_on="value", right_on="score"))
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
            "leaves_to_read": choice["leaves_to_read"] if choice else 0,
            "leaf_tokens_to_read": choice["leaf_tokens_to_read"] if choice else 0,
            "tokens_needed": tokens_needed(row["raw_tokens"], row["summary_tokens"], target),
        }
        over = _over_budget(row, out[row["ri"]]["tokens_needed"])
        if over:  # the raw tokens needed do not fit beside every summary (usertest53 #7)
            out[row["ri"]]["over_budget"] = over
    return out
