"""Summaries that carry no text over children that do: folds no text comparison judges.

The log format makes a summary's ``text`` optional (log-format spec, "summaries"); a
fold whose summary has none while a child has one cannot be compared with what it
folded.  The compactions section counts such a compaction as one that could not be
checked (:func:`compaction_audit.recall.sections.compaction_view`), and the fold
rules count the rounds of other such folds as not evaluated
(:mod:`compaction_audit.rules.textless`): a fold is never judged lossless for want of
a text (adv143 F5: "1 compaction lost 0 fact(s)" over a summary with no text).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import one

NO_SUMMARY_TEXT = "no summary text"
"""A compaction's ``not_checked_reason`` when its summary carries no text and a child
it folded does."""


def has_text(session: Session) -> pl.LazyFrame:
    """Per item id (``id``): whether any of its rows carries a ``text`` (``t``), and
    whether it or an item below it carries one (``b``): a summary with no text of its
    own over a text is, below another summary's fold, what a text is (adv144 F3: a
    compaction with no text over a summary with no text over a span with one read as
    checked, "lost 3 fact(s)").  ``b`` reaches down through summaries with no text
    only (:func:`_textless_over_text`)."""
    own = (session.items.lazy().group_by("id")
           .agg(pl.col("text").is_not_null().any().alias("t")).collect())
    over = _textless_over_text(session.edges, own)
    below = pl.col("t") | pl.col("id").is_in(over.implode()) if over.len() else pl.col("t")
    return own.lazy().with_columns(below.alias("b"))


def _textless_over_text(edges: pl.DataFrame, own: pl.DataFrame) -> pl.Series:
    """The summaries with no text that fold a text, or fold such a summary, at any depth
    (``own``: ``id``, ``t`` per item).  Those directly over a text in one Polars pass;
    the chains of summaries with no text above them in the order the folds were logged
    (a child is logged before its parent), one set look-up per edge between two such
    summaries: linear in the chain (adv144 F3's fix first took one pass per level, 39 s
    for a chain of 5,000)."""
    if not edges.height or own["t"].all() or not own["t"].any():
        return pl.Series("id", [], pl.String)
    bare = own.filter(~pl.col("t"))["id"].implode()
    edges = edges.with_row_index("_at").filter(pl.col("parent").is_in(bare))
    hits = edges.filter(pl.col("child").is_in(own.filter(pl.col("t"))["id"].implode()))
    if not hits.height:
        return pl.Series("id", [], pl.String)
    found = set(hits["parent"].to_list())
    chain = edges.filter(pl.col("child").is_in(bare)).sort("ri", "_at")
    for parent, child in chain.select("parent", "child").iter_rows():
        if child in found:
            found.add(parent)
    return pl.Series("id", sorted(found), pl.String)


def folds_with_text(edges: pl.DataFrame, texts: pl.LazyFrame) -> pl.LazyFrame:
    """Per fold of ``edges`` (its ``parent`` and ``ri``): whether its summary carries a
    text (``fold_t``) and whether one of its children does, or an item below one
    (``child_t``); ``texts`` as :func:`has_text` gives it.  An item with no row in
    ``texts`` counts as textless."""
    return (edges.lazy().select("parent", "child", "ri")
            .join(texts.select(pl.col("id").alias("child"), pl.col("b").alias("child_t")),
                  on="child", how="left")
            .join(texts.select(pl.col("id").alias("parent"), pl.col("t").alias("fold_t")),
                  on="parent", how="left")
            .group_by("parent", "ri")
            .agg(pl.col("fold_t").fill_null(False).first(),
                 pl.col("child_t").fill_null(False).any()))


def summaries_without_text(session: Session, parents: list[str] | None = None
                           ) -> frozenset[str]:
    """The ids of the summaries that carry no text while a child they fold carries one,
    or an item below one does (:func:`has_text`), over the provenance edges of
    ``session`` (those of the summaries ``parents`` only, when given); empty without
    edges."""
    edges = session.edges
    if parents is not None:
        edges = edges.filter(pl.col("parent").is_in(parents))
    if not edges.height:
        return frozenset()
    texts = has_text(session)
    if parents is not None:
        ids = pl.concat([edges["parent"], edges["child"]]).unique()
        texts = texts.filter(pl.col("id").is_in(ids.implode()))
    rows = one(folds_with_text(edges, texts)
               .filter(~pl.col("fold_t") & pl.col("child_t")).select("parent").unique())
    return frozenset(str(p) for p in rows["parent"].to_list())


def compactions_without_text(session: Session) -> frozenset[str]:
    """:func:`summaries_without_text` of the summaries ``session``'s compactions name
    (``summary_id``): a compaction whose loss cannot be checked for want of a text."""
    ids = [sid for c in session.compactions if isinstance(sid := c.get("summary_id"), str)]
    return summaries_without_text(session, ids) if ids else frozenset()
