"""Flipped rules (issue 12, point 1; rule ``negation-flipped``): fold children whose rule
the fold states reversed (a double negation, a "not" dropped or added on the same verb
and object, an antonym, the opposite bound), read from the fold checks' dropped lists
(:func:`compaction_audit.recall.survival.flip_sentence`); and values a child binds to a
name that the fold binds to another value ("Pin lib2==1.2.0" folded into "Pin
lib2==1.3.0": :func:`compaction_audit.recall.survival.bindings.changed_sentence`,
usertest38 #3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from compaction_audit.recall import extract as ext
from compaction_audit.recall.bindings import BOUND_KINDS, BOUND_TEXT
from compaction_audit.recall.survival import flip_sentence
from compaction_audit.recall.survival.bindings import (
    Bindings,
    changed_sentence,
    merged_bindings,
)

__all__ = ["flips"]

_FLIP_KINDS = ("negation", "constraint", "condition", "requirement")
VALUE_KINDS = tuple(sorted(kind.value for kind in BOUND_KINDS))
"""The kinds of a value a fold can state bound to another value (not reversed)."""


def flips(folds: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """One row per (fold, child, clause) the fold states reversed, and per (fold, child,
    value bound to a name) the fold states with another value.

    ``folds``: the fold checks (:data:`compaction_audit.recall.analysis.FOLD_SCHEMA`).
    ``items``: the session items.  Returns ``ri``, ``fold``, ``child``, ``kind``,
    ``text``, ``sentence`` (the fold's sentence that reverses or changes it).
    """
    schema = {"ri": pl.Int64, "fold": pl.String, "child": pl.String, "kind": pl.String,
              "text": pl.String, "sentence": pl.String}
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    if not folds.height:  # no fold (most small traces): no row, without a query
        return pl.DataFrame(rows, schema=schema)
    cand = (folds.filter((pl.col("dropped").list.len() > 0)
                         & (pl.col("child_type") != "harness"))
            .explode("dropped").unnest("dropped")
            .filter(pl.col("kind").is_in(_FLIP_KINDS)
                    | (pl.col("kind").is_in(VALUE_KINDS)
                       & pl.col("text").str.contains("^" + BOUND_TEXT))))
    # each fold's text once, one Python string for all its rows: a text joined to every
    # row was copied per row and compared whole in the survival caches (adv60: a 2.5
    # MB Claude Code summary over 20,000 clauses took 15 s of a 25 s audit)
    texts = dict(items.filter(pl.col("id").is_in(cand.get_column("fold").unique().implode()))
                 .select("id", "text").iter_rows())
    # the texts each fold folded, for the folds that dropped a bound value: a value one
    # of them binds the name to is no change of the fold's (a setting made later)
    folded: dict[str, list[str]] = {}
    valued = cand.filter(pl.col("kind").is_in(VALUE_KINDS)).get_column("fold").unique()
    if valued.len():
        for fold, body in (folds.filter(pl.col("fold").is_in(valued.implode()))
                           .select("fold", pl.col("child").alias("id"))
                           .join(items.select("id", "text"), on="id")
                           .drop_nulls("text").select("fold", "text").iter_rows()):
            folded.setdefault(fold, []).append(body)
    made: dict[str, Bindings] = {}

    def sources(fold: str) -> Callable[[], Bindings]:
        """What the texts ``fold`` folded bind, made when first asked: only a fold that
        binds a name to another value asks (issue 14: making them for every fold that
        dropped a bound value cost 0.9 s on the 254 MB grid cell with text)."""
        def made_for() -> Bindings:
            if fold not in made:
                made[fold] = merged_bindings(folded.get(fold, ()))
            return made[fold]
        return made_for
    for ri, fold, child, kind, text, norm in cand.select(
            "ri", "fold", "child", "kind", "text", "norm").iter_rows():
        d = ext.Discriminator(ext.Kind(kind), text, norm, 0, len(text))
        fold_text = texts.get(fold)
        sentence = None if not fold_text else (
            changed_sentence(d, fold_text, sources(fold)) if kind in VALUE_KINDS
            else flip_sentence(d, fold_text))
        if sentence is not None:
            for name, value in zip(schema, (ri, fold, child, kind, text, sentence),
                                   strict=True):
                rows[name].append(value)
    return pl.DataFrame(rows, schema=schema)
