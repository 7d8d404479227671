"""The words of the raw spans kept beside a summary in its working set, for rule
unsupported-summary-claim (CA305; :func:`compaction_audit.recall.claims.unsupported`).

A product writes its summary from the whole context and keeps some of that context
verbatim beside it (the person's messages in Codex's ``replacement_history``, Claude
Code's preserved segment), so a claim such a span says is no invention (adv84 #1).
:func:`beside_words` answers, for each summary asked about, which of the asked terms
occur in the raw spans of the working set at the summary's round: one inequality join
of the summaries' rounds with the membership intervals, then the leaf-word join of
:func:`~compaction_audit.recall.leafwords.held`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall.leafwords import held, leaf_words

__all__ = ["beside_words"]


def beside_words(session: Session, items: pl.DataFrame,
                 asked: dict[str, tuple[set[str], set[str]]]
                 ) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """For each summary id of ``asked`` (the words and the stems its claims ask
    about), those of them that the raw spans with text in the working set at the
    summary's round (its ``ri``, by ``session.membership``) hold: ``(words, stems)``;
    a summary beside which none is held is absent.  ``items``: the session's items."""
    nodes = items.select("id", "kind", "text", "ri").with_row_index("s")
    stating = nodes.filter(pl.col("id").is_in(list(asked))).select("id", "s", "ri")
    spans = nodes.filter((pl.col("kind") == "span") & (pl.col("text") != "")).select(
        "id", "text")
    beside = (stating.select("s", "ri")
              .join_where(session.membership.join(spans, on="id"),
                          pl.col("ri") >= pl.col("start"), pl.col("ri") < pl.col("end"))
              .select("s", "text"))
    if not beside.height:
        return {}
    texts = beside["text"].unique(maintain_order=True)
    pairs = (beside.join(pl.DataFrame({"text": texts}).with_row_index("t"), on="text")
             .select("s", "t").unique())
    id_of = dict(zip(stating["s"].to_list(), stating["id"].to_list(), strict=True))
    terms: dict[str, list[Any]] = {"s": [], "term": [], "stem": []}
    for s, summary in id_of.items():
        words, stems = asked[summary]
        terms["s"] += [s] * (len(words) + len(stems))
        terms["term"] += [*words, *stems]
        terms["stem"] += [False] * len(words) + [True] * len(stems)
    hits = held(pairs, leaf_words(texts), pl.DataFrame(
        terms, schema={"s": pl.UInt32, "term": pl.String, "stem": pl.Boolean}))
    found: dict[str, tuple[set[str], set[str]]] = {}
    for s, term, is_stem in hits.iter_rows():
        found.setdefault(id_of[s], (set(), set()))[is_stem].add(term)
    return {summary: (frozenset(words), frozenset(stems))
            for summary, (words, stems) in found.items()}
