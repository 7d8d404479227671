"""Which summary to rehydrate, and how many tokens bringing ``raw_ratio`` back costs.

Seed 000, "Decision Boundary": "Rehydrate by expanding the lowest-depth summary with
the highest provenance fan-out until ``raw_ratio`` >= 0.30."  Fan-out is the number of
direct children; ties go to more resolvable leaf tokens, then to the id.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.reachability import resolvable_end
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
    return max(0, math.ceil(need - 1e-9))


def suggestions(session: Session, series: Series, rounds: list[int],
                target: float) -> dict[int, dict[str, Any]]:
    """For each round index in ``rounds``: the summary to rehydrate and the cost.

    Returns ``{ri: {"summary", "depth", "fan_out", "resolvable_leaves",
    "resolvable_leaf_tokens", "tokens_needed"}}``; a round whose working set holds no
    summary maps to ``{"summary": None, "tokens_needed": ...}``.
    """
    if not rounds:
        return {}
    wanted = pl.DataFrame({"ri": rounds}, schema={"ri": pl.Int64})
    fan_out = session.edges.group_by("parent").agg(pl.len().alias("fan_out"))
    summaries = (
        session.membership
        .join(session.items.filter(pl.col("kind") == "summary").select("id", "depth"), on="id")
        .join(wanted, how="cross")
        .filter((pl.col("start") <= pl.col("ri")) & (pl.col("ri") < pl.col("end")))
        .join(fan_out, left_on="id", right_on="parent")
    )
    span_life = session.items.filter(pl.col("kind") == "span").select(
        pl.col("id").alias("leaf"), "tokens", pl.col("ri").alias("born"),
        resolvable_end(session).alias("gone"))
    leaf_tokens = (
        summaries.select("id", "ri")
        .join(series.closure, left_on="id", right_on="item")
        .join(span_life, on="leaf")
        .filter((pl.col("born") <= pl.col("ri")) & (pl.col("ri") < pl.col("gone")))
        .group_by("id", "ri")
        .agg(pl.len().alias("resolvable_leaves"),
             pl.col("tokens").sum().alias("resolvable_leaf_tokens"))
    )
    best = (
        summaries.join(leaf_tokens, on=["id", "ri"], how="left")
        .with_columns(pl.col("resolvable_leaves", "resolvable_leaf_tokens").fill_null(0))
        .sort(["ri", "depth", "fan_out", "resolvable_leaf_tokens", "id"],
              descending=[False, False, True, True, False])
        .group_by("ri", maintain_order=True).first()
    )
    frame = series.frame.filter(pl.col("ri").is_in(rounds)).select(
        "ri", "raw_tokens", "summary_tokens")
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
    return out
