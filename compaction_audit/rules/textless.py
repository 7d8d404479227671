"""Folds whose summary carries no text: nothing to compare their children's text with.

The log format makes a summary's ``text`` optional (log-format spec, "summaries"), and
the rules that compare a fold's text with its children's (silent-discriminating-fold,
topic-only-fold, negation-flipped) can say nothing of a fold without one.  Such a fold
is neither a pass nor a loss: the rounds of those folds are counted as not evaluated,
with :data:`TEXTLESS`, and a rule none of whose folds had a text judged nothing
(:meth:`~compaction_audit.report.model.SessionReport.unjudged_rules`).  A logger that
stopped writing summary texts turned every loss into "resolved" under ``diff
--fail-on-new`` with no word, and made the audit of the trace a silent pass for these
rules (usertest73, the developer's own check of its #2).

A product's compactions are left out, and a compaction marked as not checkable in any
log (``lost_checked`` false, an opaque or redacted summary): every format counts those
as compactions that could not be checked already.
A fold whose children carry no text either has nothing to lose and is judged.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.rules.base import Context, Outcome
from compaction_audit.takeback import product_trace

TEXTLESS = "a fold's summary carries no text to compare its children's text with"
"""The note of a round whose folds (one or more) have a summary without text and a
child with text."""

NO_TEXT = "not applicable: no span or summary carries a text"
"""The note of these rules, over every round, for a trace with folds and no text at all
(as salience-disagreement's, which has no text to rebuild a cosine from)."""


TEXT_REASONS = (TEXTLESS, NO_TEXT)
"""The notes these rules give for want of text (``diff`` compares their rounds:
:func:`compaction_audit.report.gaps.folds_judged_less`)."""


def with_textless(ctx: Context, fired: pl.DataFrame) -> Outcome:
    """``fired`` as the :class:`Outcome` of a rule that compares folds' texts with their
    children's: the rounds of folds without a summary text (:func:`_fold_text`) not
    evaluated, and, when there are any, the rounds judged: those with a fold that has
    one (0: the rule judged nothing); every round, :data:`NO_TEXT`, when no item of a
    trace with folds carries a text."""
    textless, texted = _fold_text(ctx)
    if textless is None:
        return Outcome(fired, {NO_TEXT: ctx.frame.height}, 0)
    if not textless:
        return Outcome(fired)
    return Outcome(fired, {TEXTLESS: textless}, texted)


def _fold_text(ctx: Context) -> tuple[int | None, int]:
    """(rounds with a fold of text-carrying children whose summary has no text, rounds
    with a fold of text-carrying children whose summary has one), over the provenance
    edges these rules compare (:func:`_judged_edges`; a round counts once in each at
    most; (0, 0) without such an edge), or (None, 0) when those edges exist and no item
    carries a text.  Computed once per audit, for the three rules."""
    if "fold_text" in ctx.cache:
        cached: tuple[int | None, int] = ctx.cache["fold_text"]
        return cached
    session = ctx.session
    counts: tuple[int | None, int] = (0, 0)
    edges = _judged_edges(session)
    if edges.height and not bool(session.items["text"].is_not_null().any()):
        counts = (None, 0)
    elif edges.height:
        has_text = (session.items.lazy().group_by("id")
                    .agg(pl.col("text").is_not_null().any().alias("t")))
        rows = one(edges.lazy().select("parent", "child", "ri")
                   .join(has_text.rename({"id": "child", "t": "child_t"}), on="child")
                   .filter("child_t")
                   .join(has_text.rename({"id": "parent", "t": "fold_t"}), on="parent")
                   .group_by("ri").agg(pl.col("fold_t").all().alias("all_text"),
                                       pl.col("fold_t").any().alias("some_text"))
                   .select((~pl.col("all_text")).sum().alias("textless"),
                           pl.col("some_text").sum().alias("texted")))
        counts = (int(rows["textless"][0] or 0), int(rows["texted"][0] or 0))
    ctx.cache["fold_text"] = counts
    return counts


def _judged_edges(session: Session) -> pl.DataFrame:
    """The provenance edges these rules would compare: none in a product's trace, and
    none of a compaction marked as not checkable (``opaque``, ``redacted`` or an
    adapter's ``unchecked``, which make its ``lost_checked`` false in the report: counted
    as "could not be checked" in every format)."""
    if not session.edges.height or product_trace(session):
        return session.edges.head(0)
    opaque = [str(c["summary_id"]) for c in session.compactions  # as sections.py reads
              if (c.get("opaque") or c.get("unchecked") or c.get("redacted"))  # them
              and c.get("summary_id") is not None]
    return (session.edges.filter(~pl.col("parent").is_in(opaque)) if opaque
            else session.edges)
