"""The recall sections of a report: folded rounds, lost discriminators, disagreements.

Turns a :class:`~compaction_audit.recall.Recall` into JSON-able lists (the report
model's ``extra``), which the JSON report writes as is and the terminal report renders.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall import Recall


def recall_sections(recall: Recall, session: Session) -> dict[str, Any]:
    """``{"folded_rounds": [...], "lost_discriminators": [...],
    "classification_disagreements": [...], "folds_not_checked": int}``.

    ``folded_rounds``: one entry per round with a fold that dropped something:
    ``round``, ``line``, ``folds`` (ids), ``dropped`` (count).  ``lost_discriminators``:
    most severe kind first (see :data:`compaction_audit.discriminators.KIND_RANK`).
    """
    rounds = session.rounds.select("ri", "round", "line")
    dropping = recall.folds.filter(pl.col("dropped").list.len() > 0)
    folded = (
        dropping.group_by("ri").agg(pl.col("fold").unique().sort().alias("folds"),
                                    pl.col("dropped").list.len().sum().alias("dropped"))
        .join(rounds, on="ri").sort("ri").select("round", "line", "folds", "dropped")
    )
    not_checked = recall.folds.filter(pl.col("check") != "text")
    return {
        "folded_rounds": folded.to_dicts(),
        "lost_discriminators": recall.lost.drop("key").to_dicts(),
        "classification_disagreements": recall.disagreements,
        "folds_not_checked": not_checked.height,
        "folds_not_checked_discriminating": not_checked.filter(
            pl.col("check") == "salience_class").height,
    }
