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

A compaction the compactions section counts as not checked (``lost_checked`` false: an
opaque or redacted summary, one an adapter marked, or one with no text,
:mod:`compaction_audit.recall.bare`) is left out: every format counts it as a compaction
that could not be checked already.  A fold whose children carry no text either has
nothing to lose and is judged.  ``diff`` compares the share of the rounds with a fold
that these rules could not judge (adv143 F3: a share of every round called a run that
folded twice as often "checked less").
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.recall.bare import compactions_without_text, folds_with_text, has_text
from compaction_audit.recall.sections import loss_unchecked
from compaction_audit.rules.base import Context, Outcome

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
    children's: the rounds of folds without a summary text (:func:`fold_text`) not
    evaluated, each reason's share counted over the rounds with a fold (``of``, which
    ``diff`` compares), and, when there are any, the rounds judged: those with a fold
    that has a text or whose children have none (0: the rule judged nothing); every
    round, :data:`NO_TEXT`, when no item of a trace with folds carries a text."""
    counts = fold_text(ctx)
    if counts.textless is None:
        return Outcome(fired, {NO_TEXT: ctx.frame.height}, 0, {NO_TEXT: counts.folds})
    if not counts.textless:
        return Outcome(fired)
    return Outcome(fired, {TEXTLESS: counts.textless}, counts.judged,
                   {TEXTLESS: counts.folds})


@dataclass(frozen=True)
class FoldText:
    """Rounds (counts) of the folds the fold rules compare (:func:`_judged_edges`): with
    a fold whose summary has no text over a child that has one (``textless``; None when
    such folds exist and no item of the trace carries a text), with a fold they judge
    (``judged``: its summary has a text, or none of its children has one: nothing to
    lose), with any fold (``folds``).  A round with both kinds counts in both."""

    textless: int | None
    judged: int
    folds: int


def fold_text(ctx: Context) -> FoldText:
    """The :class:`FoldText` counts of ``ctx``'s session; computed once per audit, for
    the three rules."""
    if "fold_text" in ctx.cache:
        cached: FoldText = ctx.cache["fold_text"]
        return cached
    session = ctx.session
    counts = FoldText(0, 0, 0)
    edges = _judged_edges(session)
    if edges.height:
        folds = edges["ri"].n_unique()
        if not bool(session.items["text"].is_not_null().any()):
            counts = FoldText(None, 0, folds)
        else:
            rows = one(folds_with_text(edges, has_text(session))
                       .with_columns((~pl.col("fold_t") & pl.col("child_t")).alias("bare"))
                       .group_by("ri").agg(pl.col("bare").any().alias("textless"),
                                           (~pl.col("bare")).any().alias("judged"))
                       .select(pl.col("textless").sum(), pl.col("judged").sum()))
            counts = FoldText(int(rows["textless"][0] or 0), int(rows["judged"][0] or 0),
                              folds)
    ctx.cache["fold_text"] = counts
    return counts


def _judged_edges(session: Session) -> pl.DataFrame:
    """The provenance edges these rules would compare: those of every fold but the
    summaries of compactions the compactions section counts as not checked (in every
    format): one marked ``opaque``, ``redacted`` or by an adapter ``unchecked``, or one
    whose summary carries no text (:func:`~compaction_audit.recall.bare.compactions_without_text`;
    adv143 F5).  A native log that names its own ``source_format`` is judged as any
    other (adv143 F1: such a log's textless folds passed silently)."""
    if not session.edges.height:
        return session.edges
    left_out = {str(c["summary_id"]) for c in session.compactions
                if loss_unchecked(c) and c.get("summary_id") is not None}
    left_out |= compactions_without_text(session)
    return (session.edges.filter(~pl.col("parent").is_in(sorted(left_out))) if left_out
            else session.edges)
