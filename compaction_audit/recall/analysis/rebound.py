"""A summary's bare value that stood for a pin: dropped, the pin is dropped with it.

A span pins ``requests==2.31.0`` (the fact ``version:2.31.0@requests``); a summary
keeps it in other words, "requests pinned at 2.31.0", whose own discriminator is the
bare value ``2.31.0`` (``version:2.31.0``: the words between the name and the value
bind nothing).  When a later fold drops that value from the summary, the pin is gone
with it; the fold checks named the bare value only, so the pin's loss was booked to
eviction (``recall_debt_eviction``, cause "eviction", no fold) and the fold's finding
said the value was "still held by another span" (usertest49 #1).

:func:`bound_again` rewrites each such drop as the pin the summary kept (its text
``requests to 2.31.0``, which :func:`~compaction_audit.recall.factkeys.fact_key` reads
as the pin's key), one drop per pin the summary kept of that value, and keeps the bare
value's drop where the summary kept the bare value as a fact of its own (usertest50 #2).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.plans import one
from compaction_audit.recall.analysis.model import DROP_SCHEMA
from compaction_audit.recall.bindings import BOUND_KINDS
from compaction_audit.recall.factkeys import fact_key

__all__ = ["bound_again"]

_BOUND = sorted(kind.value for kind in BOUND_KINDS)


def bound_again(folds: pl.DataFrame, held: pl.DataFrame) -> pl.DataFrame:
    """``folds`` (:data:`~compaction_audit.recall.analysis.model.FOLD_SCHEMA`) with
    each dropped bare value (``version:2.31.0``) of a child that keeps a pin of that
    value (``held``: ``key``, ``id``; ``version:2.31.0@requests`` kept by the child)
    dropped as that pin: its ``text`` is ``NAME to TEXT`` (``requests to 2.31.0``), one
    entry per pin, and as the bare value too where the child keeps the bare value as a
    fact of its own (``held`` has ``version:2.31.0`` for it: a span stated 2.31.0
    alone).  Unchanged (the same frame) when no child that dropped a value keeps a
    pin."""
    pins = held.filter(pl.col("key").str.contains("@", literal=True)
                       & pl.col("id").is_in(folds["child"].implode()))
    if pins.height == 0 or folds.filter(pl.col("dropped").list.len() > 0).height == 0:
        return folds
    split = pl.col("key").str.splitn("@", 2)
    pinned = pins.lazy().select(split.struct.field("field_0").alias("_key"),
                                split.struct.field("field_1").alias("_name"),
                                pl.col("id").alias("child"))
    bare = (held.lazy().filter(~pl.col("key").str.contains("@", literal=True))
            .select(pl.col("key").alias("_key"), pl.col("id").alias("child"),
                    pl.lit(True).alias("_bare")))
    dropped = pl.col("dropped")
    rows = (folds.lazy().with_row_index("_row").explode("dropped")
            .with_columns(fact_key(dropped.struct.field("kind"), dropped.struct.field("norm"),
                                   dropped.struct.field("text")).alias("_key"))
            .join(pinned, on=["_key", "child"], how="left")
            .join(bare, on=["_key", "child"], how="left")
            .with_columns((pl.col("_name").is_not_null()
                           & dropped.struct.field("kind").is_in(_BOUND)).alias("_pin")))
    pins_dropped = rows.filter("_pin").with_columns(dropped.struct.with_fields(
        (pl.col("_name") + pl.lit(" to ") + dropped.struct.field("text")).alias("text")))
    # the bare value stays dropped where the child kept it as a fact of its own too
    # (usertest50 #2: a span's "2.31.0" beside the pin was booked to eviction)
    as_is = rows.filter(~pl.col("_pin") | pl.col("_bare").fill_null(False))
    kept = (pl.concat([as_is, pins_dropped]).filter(dropped.is_not_null())
            .group_by("_row").agg(dropped.unique(maintain_order=True)))
    indexed = folds.lazy().with_row_index("_row").drop("dropped")
    return one(indexed.join(kept, on="_row", how="left").sort("_row").drop("_row")
               .with_columns(dropped.fill_null(pl.lit([], DROP_SCHEMA)).cast(DROP_SCHEMA))
               .select(folds.columns))
