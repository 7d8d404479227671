"""The recall analysis of an audit's session, computed once and kept in the rule
context's cache: the typed items, the :class:`~compaction_audit.recall.analysis.Recall`
analysis and its ranked lost table, read by the recall rules
(:mod:`compaction_audit.rules.recall`), the faithfulness rules
(:mod:`compaction_audit.rules.faithfulness`), the fold findings' wording
(:mod:`compaction_audit.rules.foldwords`) and the engine's report sections."""

from __future__ import annotations

import polars as pl

from compaction_audit.recall.analysis import Recall, analyse, typed_items
from compaction_audit.recall.sections import ranked_lost
from compaction_audit.rules.base import Context

__all__ = ["ranked_of", "recall_of", "typed_items_of"]


def typed_items_of(ctx: Context) -> pl.DataFrame:
    """The session items with their span type
    (:func:`~compaction_audit.recall.analysis.typed_items`), computed once per audit."""
    if "typed_items" not in ctx.cache:
        ctx.cache["typed_items"] = typed_items(ctx.session)
    result: pl.DataFrame = ctx.cache["typed_items"]
    return result


def recall_of(ctx: Context) -> Recall:
    """The recall analysis of the context's session, computed once per audit (with
    its text jobs when the engine started them early: ``text_jobs`` in the cache)."""
    if "recall" not in ctx.cache:
        ctx.cache["recall"] = analyse(ctx.session, ctx.series, typed_items_of(ctx),
                                      ctx.cache.pop("text_jobs", None))
    result: Recall = ctx.cache["recall"]
    return result


def ranked_of(ctx: Context) -> pl.DataFrame:
    """The session's lost table in report order, with tiers
    (:func:`~compaction_audit.recall.sections.ranked_lost`), computed once per audit."""
    if "ranked" not in ctx.cache:
        ctx.cache["ranked"] = ranked_lost(recall_of(ctx), ctx.session)
    result: pl.DataFrame = ctx.cache["ranked"]
    return result

