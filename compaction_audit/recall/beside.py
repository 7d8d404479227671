"""The words of the raw spans kept beside a summary in its working set, for rule
unsupported-summary-claim (CA305; :func:`compaction_audit.recall.claims.unsupported`).

A product writes its summary from the whole context and keeps some of that context
verbatim beside it (the person's messages in Codex's ``replacement_history``, Claude
Code's preserved segment), so a claim such a span says is no invention (adv84 #1).
:func:`beside_words` answers, for each summary asked about, which of the asked terms
occur in the raw spans of the working set at the summary's round, by the rounds at
which a span holding each term is in the working set.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall.leafwords import leaf_words, term_hits

__all__ = ["beside_words"]


def beside_words(session: Session, items: pl.DataFrame,
                 asked: dict[str, tuple[set[str], set[str]]]
                 ) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """For each summary id of ``asked`` (the words and the stems its claims ask
    about), those of them that the raw spans with text in the working set at the
    summary's round (its ``ri``, by ``session.membership``) hold: ``(words, stems)``;
    a summary beside which none is held is absent.  ``items``: the session's items.

    Linear in the spans and the terms, not their product (adv85 #1: 4,000 summaries
    beside 4,000 kept spans made 16 million pairs, 3.7 GB): the rounds at which some
    span holding a term is in the working set are merged into disjoint intervals per
    term, and each (summary, term) looks up the one interval that could hold its round
    (an as-of join)."""
    nodes = items.select("id", "kind", "text", "ri")
    terms = pl.DataFrame(
        [(s, term, is_stem) for s, (words, stems) in asked.items()
         for is_stem, group in ((False, words), (True, stems)) for term in group],
        schema={"summary": pl.String, "term": pl.String, "stem": pl.Boolean}, orient="row")
    stating = (nodes.filter(pl.col("id").is_in(list(asked)))
               .select(pl.col("id").alias("summary"), "ri"))
    rounds = stating["ri"].unique().sort()
    spans = nodes.filter((pl.col("kind") == "span") & (pl.col("text") != "")).select(
        "id", "text")
    alive = session.membership.join(spans, on="id")
    # only the intervals that hold a round a summary asks about: the first such round
    # at or after an interval's start is before its end
    at = rounds.search_sorted(alive["start"], side="left")
    first = rounds.append(pl.Series([None], dtype=rounds.dtype)).gather(at)
    alive = alive.filter(first.is_not_null() & (first < alive["end"]))
    if not alive.height or not terms.height:
        return {}
    texts = alive["text"].unique(maintain_order=True)
    alive = alive.join(pl.DataFrame({"text": texts}).with_row_index("t"), on="text")
    wanted = (terms.select("term", "stem").unique().with_row_index("k")
              .with_columns(pl.col("k").cast(pl.UInt32)))
    run_end = pl.col("end").cum_max().over("k")
    merged = (term_hits(leaf_words(texts), wanted)
              .join(alive.lazy().select("t", "start", "end"), on="t")
              .select("k", "start", "end").sort("k", "start")
              .with_columns((pl.col("start") > run_end.shift(1).over("k")).fill_null(True)
                            .cum_sum().over("k").alias("g"))
              .group_by("k", "g").agg(pl.col("start").min(), pl.col("end").max())
              .sort("start"))
    hits = (terms.lazy().join(wanted.lazy(), on=["term", "stem"])
            .join(stating.lazy(), on="summary").sort("ri")
            .join_asof(merged, left_on="ri", right_on="start", by="k", strategy="backward",
                       check_sortedness=False)  # both sorted on their keys above
            .filter(pl.col("ri") < pl.col("end"))
            .select("summary", "term", "stem").collect())
    found: dict[str, tuple[set[str], set[str]]] = {}
    for summary, term, is_stem in hits.iter_rows():
        found.setdefault(summary, (set(), set()))[is_stem].add(term)
    return {summary: (frozenset(words), frozenset(stems))
            for summary, (words, stems) in found.items()}
