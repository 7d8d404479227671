"""The session's items as the recall analysis reads them: each with its span type.

:func:`typed_items` adds the span type of each item (computed once per distinct (source,
text)).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.recall.spantypes import SPEC_WORDS, TEXT_MATTERS, span_type


def typed_items(session: Session) -> pl.DataFrame:
    """``session.items`` with ``stype``: the span type of each item
    (:func:`compaction_audit.recall.spantypes.span_type`, computed once per distinct
    (source, text), or once per source for the texts whose type their source alone
    decides: :data:`~compaction_audit.recall.spantypes.TEXT_MATTERS`; the spec test
    only on the texts that hold a requirement word,
    :data:`~compaction_audit.recall.spantypes.SPEC_WORDS`, found with Polars); a
    summary's text is read as prose.  ``source_line`` (the log line
    that stated the item) is the round's ``line`` where the table has none.

    The item columns are shared with ``session.items``, not copied (the texts are held
    once): only the ``stype`` column is new."""
    items = session.items
    if "source_line" not in items.columns:
        items = items.with_columns(pl.col("line").alias("source_line"))
    null = "\x00"  # joins on (source, text) with nulls as a value no log text holds
    keys = [pl.col("source").fill_null(null).alias("_src"),
            pl.col("text").fill_null(null).alias("_txt")]
    matters = pl.col("text").fill_null("").str.contains_any(list(TEXT_MATTERS))
    spans = one(items.lazy().filter(pl.col("kind") == "span").select(*keys, "source", "text")
                .unique(subset=["_src", "_txt"])  # plans.one: one query, not three
                .with_columns(matters.alias("_read"),
                              pl.col("text").str.contains(SPEC_WORDS).fill_null(True)
                              .alias("_spec")))  # the spec test only where it can hold
    read = spans.filter(pl.col("_read"))  # the others are typed by their source alone
    types = [span_type(src, text, spec) for src, text, spec in zip(
        read["source"].to_list(), read["text"].to_list(), read["_spec"].to_list(),
        strict=True)]
    by_source = spans.filter(~pl.col("_read")).select("_src", "source").unique()
    of_source = {filled: span_type(src, None) for filled, src in
                 zip(by_source["_src"].to_list(), by_source["source"].to_list(), strict=True)}
    table = pl.concat([
        read.select("_src", "_txt").with_columns(pl.Series("stype", types, pl.String)),
        spans.filter(~pl.col("_read")).select(
            "_src", "_txt", pl.col("_src").replace_strict(of_source, default=None,
                                                          return_dtype=pl.String)
            .alias("stype")),
    ])
    del spans, read, types
    stype = one(items.lazy().select(pl.col("kind"), *keys).with_row_index("_row")
                .join(table.lazy(), on=["_src", "_txt"], how="left").sort("_row")
                .select(pl.when(pl.col("kind") == "span").then(pl.col("stype"))
                        .otherwise(pl.lit("prose")).alias("stype")))
    return items.with_columns(stype.to_series())
