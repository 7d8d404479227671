"""The three conditions of validity for salience inversion (seed 000).

Seed 000, "Condition of Validity": inversion needs (1) re-summarization depth >= 2,
(2) a scorer that does not penalize summary depth, (3) budget-driven, continuous
eviction.  If any fails, the loop can drift but not invert.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from compaction_audit.model import Session
from compaction_audit.reachability import max_int
from compaction_audit.series import Series
from compaction_audit.settings import Settings


@dataclass
class Condition:
    """One condition: ``status`` is "holds", "fails" or "unknown"; ``detail`` says why."""

    name: str
    status: str
    detail: str


def depth_condition(min_depth: int) -> str:
    """The name of the depth condition: the seed's "re-summarization depth >= 2", or the
    configured ``min_depth`` (adv103 #7, usertest59 #3: "--set min_depth=5" read "no
    re-summarization depth >= 2: ... depth 3")."""
    return f"re-summarization depth >= {min_depth:,}"


def conditions(session: Session, series: Series, settings: Settings,
               cosine: str | None = None) -> list[Condition]:
    """Evaluate the three conditions for ``session``.

    Depth comes from the series; the scorer from ``scorer.depth_penalty`` in the
    session record (unknown when absent); eviction from the session's ``eviction``
    (said to be set by the adapter when one of ours wrote the session record, its
    ``source_format``; else declared by the log), else inferred: continuous when
    items leave the working set (evicted or offloaded) in more than half of the
    rounds after the first.  ``cosine`` is the series the
    inversion signature read (:attr:`compaction_audit.rules.Context.cosine`): when it
    is the rebuilt cosine, the scorer's detail says so (issue 16).
    """
    frame = series.frame
    deepest = max_int(frame["summary_depth_max"])
    depth = Condition(
        depth_condition(settings.min_depth),
        "holds" if deepest >= settings.min_depth else "fails",
        f"deepest summary in the working set: depth {deepest}")
    scorer = session.header.scorer or {}
    penalty = scorer.get("depth_penalty")
    rebuilt = ("; the inversion signature is read on query_cosine_rebuilt, the "
               "auditor's rebuilt cosine of the texts to the task query"
               if cosine == "query_cosine_rebuilt" else "")
    if isinstance(penalty, int | float) and not isinstance(penalty, bool):
        score = Condition("scorer does not penalize depth",
                          "fails" if penalty > 0 else "holds",
                          f"scorer.depth_penalty = {penalty}" + rebuilt)
    elif not frame["has_retained"].any():
        score = Condition("scorer does not penalize depth", "unknown",
                          "no salience recorded: the log has no scorer" + rebuilt)
    else:
        score = Condition("scorer does not penalize depth", "unknown",
                          "scorer.depth_penalty not recorded" + rebuilt)
    declared = session.header.eviction
    adapter = session.header.extra.get("source_format")
    if declared is not None:
        # an adapter writes the eviction of a product (it compacts when its context
        # fills): the log itself declares nothing, so the detail says who set it
        from compaction_audit.io.load import FORMATS

        # (usertest9: "when its context fills" was false of a manual compaction)
        said = (f"set by the {adapter} adapter (the product compacts on an event: its "
                "context filling up, or a person asking)" if adapter in FORMATS
                and adapter != "native" else "declared")
        evict = Condition("eviction is continuous",
                          "holds" if declared == "continuous" else "fails",
                          f"{said}: eviction = {declared}"
                          + ("" if declared == "continuous" else " (event-driven)"))
    else:
        later = frame.slice(1)
        active = int(later.select(((pl.col("evictions") + pl.col("offloads")) > 0).sum())
                     .item()) if later.height else 0
        holds = later.height > 0 and active * 2 > later.height
        evict = Condition("eviction is continuous", "holds" if holds else "fails",
                          f"inferred: items were evicted or offloaded in {active} of "
                          f"{later.height} rounds after the first")
    return [depth, score, evict]


def can_invert(conds: list[Condition]) -> bool:
    """False when any condition fails: the session can drift but not invert."""
    return all(c.status != "fails" for c in conds)
