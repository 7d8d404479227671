"""The recall analysis's result: :class:`Recall`, its frames' schemas, the redaction share.

:data:`FOLD_SCHEMA` and :data:`DROP_SCHEMA` are the columns of the fold checks
(:mod:`~compaction_audit.recall.analysis.folds`); :func:`redacted_share` tells a log whose
span text is mostly redaction placeholders, reported "redacted: not checkable" (issue 10,
point 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.recall.spantypes import PLACEHOLDER_RE

DROP_SCHEMA = pl.List(pl.Struct({"kind": pl.String, "text": pl.String, "norm": pl.String,
                                 "rank": pl.Int64}))
FOLD_SCHEMA: dict[str, Any] = {
    "fold": pl.String, "child": pl.String, "ri": pl.Int64, "line": pl.Int64,
    "accounted": pl.Boolean, "child_resolvable": pl.Boolean, "check": pl.String,
    "child_source": pl.String, "child_type": pl.String, "dropped": DROP_SCHEMA,
}


@dataclass
class Recall:
    """The analysis of one session.

    ``folds``: one row per (fold, child) with the discriminators dropped (schema
    :data:`FOLD_SCHEMA`; ``check`` is "text", "salience_class" or "not-possible").
    ``debt``: per round index ``discriminators_seen``, ``recall_debt``,
    ``recall_debt_fold``, ``recall_debt_eviction`` (counts of distinct discriminators).
    ``lost``: every discriminator that became unrecoverable, most severe kind first.
    ``floor``: (span, start, end) intervals of round indices under the recall floor.
    ``disagreements``: spans whose logged ``salience_class`` differs from the auditor's
    classification.
    """

    folds: pl.DataFrame
    debt: pl.DataFrame
    lost: pl.DataFrame
    floor: pl.DataFrame
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    redacted_share: float = 0.0
    """Share of raw span characters inside redaction placeholders (``[REDACTED_…]``)."""
    limits: list[Limit] = field(default_factory=list)
    """Checks of the analysis that stopped at their cap (issue 11, class 5)."""
    fact_keys: pl.Series = field(default_factory=lambda: pl.Series("key", [], pl.String))
    """The keys of every fact a raw span states (unique): a fact a fold dropped from a
    summary child that is none of these is the summary's own wording, held by no span
    (usertest71 #6: it read "still held by another span")."""

    @property
    def redacted(self) -> bool:
        """True when most span text is redaction placeholders: the log is reported
        "redacted: not checkable" (issue 10, point 1; threshold :data:`REDACTED_SHARE`)."""
        return self.redacted_share > REDACTED_SHARE


REDACTED_SHARE = 0.5
"""Above this share of span characters in placeholders a log is not checkable: what the
summary dropped cannot be told from what the redaction removed (issue 10, point 1)."""


def redacted_share(session: Session) -> float:
    """Share of the raw spans' text characters that are redaction placeholders."""
    spans = session.items.filter((pl.col("kind") == "span") & pl.col("text").is_not_null())
    if spans.height == 0:
        return 0.0
    row = spans.select(
        pl.col("text").str.len_chars().sum().alias("all"),
        pl.col("text").str.extract_all(PLACEHOLDER_RE.pattern)
        .list.eval(pl.element().str.len_chars()).list.sum().sum().alias("redacted"),
    ).row(0)
    return float(row[1] or 0) / row[0] if row[0] else 0.0
