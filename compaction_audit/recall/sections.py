"""The recall sections of a report: folded rounds, lost discriminators, disagreements.

Turns a :class:`~compaction_audit.recall.analysis.Recall` into JSON-able lists (the report
model's ``extra``), which the JSON report writes as is and the terminal report renders.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall.analysis import Recall


def recall_sections(recall: Recall, session: Session) -> dict[str, Any]:
    """``{"folded_rounds": [...], "lost_discriminators": [...],
    "classification_disagreements": [...], "folds_not_checked": int}``.

    ``folded_rounds``: one entry per round with a fold that dropped something:
    ``round``, ``line``, ``folds`` (ids), ``dropped`` (count).  ``lost_discriminators``:
    most severe kind first (see :data:`compaction_audit.recall.extract.KIND_RANK`), with
    ``span_type``, ``span_line``, ``reused_round``, ``reused_span`` (CONTRACT.md).
    ``recall_checkable`` is false, and ``recall_not_checkable`` says "redacted: not
    checkable", when most span text is redaction placeholders.
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
        "recall_checkable": not recall.redacted,
        "recall_not_checkable": "redacted: not checkable" if recall.redacted else None,
        "folds_not_checked_discriminating": not_checked.filter(
            pl.col("check") == "salience_class").height,
    }


SOURCE_ORDER = ("user", "assistant")
"""Issue order for a compaction's lost discriminators: the user's own instructions
first, then the assistant's decisions, then tool output and everything else."""


def _source_rank(source: str | None) -> int:
    if source in SOURCE_ORDER:
        return SOURCE_ORDER.index(source)
    return len(SOURCE_ORDER)


def compaction_view(session: Session, recall: Recall) -> list[dict[str, Any]]:
    """Each compaction recorded by an adapter, with what its summary lost.

    Adds to each ``compaction`` extension object: ``compression_ratio``
    (tokens_before / summary_tokens, null when either is unknown or zero, or the summary
    is opaque: an encrypted remote summary has a size only), ``lost_checked`` (false
    for an opaque summary, or a log that is mostly redaction placeholders),
    ``not_checkable`` (why not: "opaque", "redacted: not checkable", else null) and ``lost``:
    the discriminators of the folded content that became unrecoverable at that
    compaction, ranked user first (negations and constraints first), then assistant,
    then tool output; each marked ``asked_again`` when a later user message states
    it again, with ``reused_round``/``reused_span`` when a later action reused it
    (evidence the loss did harm), and its ``span_type`` and ``span_line``.
    """
    out = []
    lost = recall.lost
    for c in session.compactions:
        before, size = c.get("tokens_before"), c.get("summary_tokens")
        opaque = bool(c.get("opaque"))
        ratio = before / size if isinstance(before, int) and isinstance(size, int) \
            and size > 0 and before > 0 and not opaque else None
        here = pl.col("lost_round") == c["round"]
        if c.get("summary_id") is not None:
            here = here | (pl.col("fold") == c["summary_id"])
        rows = lost.filter(here).to_dicts()
        rows.sort(key=lambda d: (_source_rank(d["span_source"]), -d["rank"], d["text"]))
        entries = [{"kind": d["kind"], "text": d["text"], "span": d["span"],
                    "source": d["span_source"], "span_type": d["span_type"],
                    "span_line": d["span_line"], "cause": d["cause"],
                    "asked_again": d["asked_again_round"] is not None,
                    "asked_again_round": d["asked_again_round"],
                    "asked_again_span": d["asked_again_span"],
                    "reused_round": d["reused_round"], "reused_span": d["reused_span"]}
                   for d in rows]
        out.append({**c, "compression_ratio": ratio, "lost": entries,
                    "lost_checked": not opaque and not recall.redacted,
                    "not_checkable": ("opaque" if opaque else
                                      "redacted: not checkable" if recall.redacted else None)})
    return out
