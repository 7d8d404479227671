"""Flipped rules (issue 12, point 1; rule ``negation-flipped``): fold children whose rule
the fold states reversed (a double negation, a "not" dropped or added on the same verb
and object, an antonym, the opposite bound), read from the fold checks' dropped lists
(:func:`compaction_audit.recall.survival.flip_sentence`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.recall import extract as ext
from compaction_audit.recall.survival import flip_sentence

__all__ = ["flips"]

_FLIP_KINDS = ("negation", "constraint", "condition", "requirement")


def flips(folds: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """One row per (fold, child, clause) the fold states reversed.

    ``folds``: the fold checks (:data:`compaction_audit.recall.analysis.FOLD_SCHEMA`).
    ``items``: the session items.  Returns ``ri``, ``fold``, ``child``, ``kind``,
    ``text``, ``sentence`` (the fold's sentence that reverses it).
    """
    schema = {"ri": pl.Int64, "fold": pl.String, "child": pl.String, "kind": pl.String,
              "text": pl.String, "sentence": pl.String}
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    if not folds.height:  # no fold (most small traces): no row, without a query
        return pl.DataFrame(rows, schema=schema)
    cand = (folds.filter((pl.col("dropped").list.len() > 0)
                         & (pl.col("child_type") != "harness"))
            .explode("dropped").unnest("dropped")
            .filter(pl.col("kind").is_in(_FLIP_KINDS)))
    # each fold's text once, one Python string for all its rows: a text joined to every
    # row was copied per row and compared whole in the survival caches (adv60: a 2.5
    # MB Claude Code summary over 20,000 clauses took 15 s of a 25 s audit)
    texts = dict(items.filter(pl.col("id").is_in(cand.get_column("fold").unique().implode()))
                 .select("id", "text").iter_rows())
    for ri, fold, child, kind, text, norm in cand.select(
            "ri", "fold", "child", "kind", "text", "norm").iter_rows():
        d = ext.Discriminator(ext.Kind(kind), text, norm, 0, len(text))
        fold_text = texts.get(fold)
        sentence = flip_sentence(d, fold_text) if fold_text else None
        if sentence is not None:
            for name, value in zip(schema, (ri, fold, child, kind, text, sentence),
                                   strict=True):
                rows[name].append(value)
    return pl.DataFrame(rows, schema=schema)
