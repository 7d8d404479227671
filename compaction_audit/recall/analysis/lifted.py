"""Rules the person lifted: a fold that drops them loses nothing.

A person says "Do not delete the prod-db-7 backups", later "you can delete the
prod-db-7 backups now", and a summary of both says the rule was lifted ("... the user
allowed it: delete the prod-db-7 backups").  The summary's last word on the rule
reverses it, so survival reads the rule as not kept (``recall.survival.flips.
_restated_last``, adv98 #2), and the fold dropped it: a silent-discriminating-fold
error and a flipped rule (CA304) on a faithful summary (usertest54 #3, usertest55 #4).

:func:`without_lifted` takes such rules out of the fold's dropped list and books them
held by the fold's summary (``held``: ``key``, ``id``): the summary carried the rule and
its lifting.  A rule is lifted when a child of the same fold that is a person's
(:func:`~compaction_audit.recall.ranking.person_source`; usertest55 #1: an assistant
span, a README read by a tool or a question lifted it too), born after the rule's child
(by round, then by its place among the children: usertest55 #5), states it with the
opposite polarity in a sentence that is no question
(:func:`~compaction_audit.recall.survival.flips.states_opposite`).  Only dropped rules
are read, each fold's person children once: a few rows of Python after the fold checks.
"""

from __future__ import annotations

import re

import polars as pl

from compaction_audit.recall import extract as ext
from compaction_audit.recall.factkeys import fact_key
from compaction_audit.recall.ranking import person_source
from compaction_audit.recall.survival.flips import _FLIP_KINDS, may_reverse, states_opposite

RULE_KINDS = tuple(sorted(kind.value for kind in _FLIP_KINDS))
"""The kinds of a rule a person can lift: the kinds a summary can flip."""

_SENTENCE_RE = re.compile(r"[^.!?\n]*[.!?\n]?")


def statements(text: str) -> str:
    """``text`` without its questions ("Can I delete the backups?" lifts nothing)."""
    return " ".join(s for s in _SENTENCE_RE.findall(text) if not s.rstrip().endswith("?"))


def lifts(rule: ext.Discriminator, said: str) -> bool:
    """Whether a person's ``said`` (a text's :func:`statements`: its questions out)
    states ``rule`` reversed: the test :func:`without_lifted` applies to each later
    person child of a fold, and ``trace`` to the spans beside the one it follows."""
    return may_reverse(rule, said.lower()) and states_opposite(rule, said)


def without_lifted(folds: pl.DataFrame, items: pl.DataFrame, held: pl.DataFrame
                   ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``folds`` without the lifted rules in their ``dropped`` lists, ``held`` with a
    (``key``, ``id``) row for each: the fold's summary holds it).  ``folds``:
    :data:`~compaction_audit.recall.analysis.model.FOLD_SCHEMA`; ``items``: the typed
    session items (``id``, ``ri``, ``source``, ``text``).  Both unchanged (the same
    frames) when no fold dropped a rule a later person child reverses."""
    rules = (folds.lazy().with_row_index("_row")
             .explode("dropped").filter(pl.col("dropped").struct.field("kind")
                                        .is_in(RULE_KINDS))
             .select("_row", "fold", "child", pl.col("dropped").struct.unnest())
             .collect())
    if rules.height == 0:
        return folds, held
    people = (folds.lazy().with_row_index("_pos")
              .filter(pl.col("fold").is_in(rules["fold"].unique().implode()))
              .select("fold", "child", "_pos")
              .join(items.lazy().select(pl.col("id").alias("child"), "ri", "source", "text"),
                    on="child", how="left")
              .collect())
    born = {(f, c): (r if r is not None else -1, p)
            for f, c, p, r in people.select("fold", "child", "_pos", "ri").iter_rows()}
    speakers: dict[str, list[tuple[tuple[int, int], str]]] = {}
    for fold, pos, ri, text in (people.filter(person_source(pl.col("source"))
                                              & pl.col("text").is_not_null())
                                .select("fold", "_pos", "ri", "text").iter_rows()):
        speakers.setdefault(fold, []).append(((ri if ri is not None else -1, pos),
                                              statements(text)))
    lifted: list[tuple[int, str, str, str, str]] = []  # (_row, kind, norm, text, fold)
    for row, fold, child, kind, text, norm, _rank in rules.iter_rows():
        after = born.get((fold, child), (-1, -1))
        d = ext.Discriminator(ext.Kind(kind), text, norm, 0, len(text))
        if any(when > after and lifts(d, said) for when, said in speakers.get(fold, ())):
            lifted.append((row, kind, norm, text, fold))
    if not lifted:
        return folds, held
    gone = pl.DataFrame(lifted, schema={"_row": pl.UInt32, "kind": pl.String,
                                        "norm": pl.String, "text": pl.String,
                                        "fold": pl.String}, orient="row")
    keep = (folds.lazy().with_row_index("_row").explode("dropped")
            .join(gone.lazy().select("_row", pl.col("kind").alias("_k"),
                                     pl.col("norm").alias("_n"), pl.lit(True).alias("_gone")),
                  left_on=["_row", pl.col("dropped").struct.field("kind"),
                           pl.col("dropped").struct.field("norm")],
                  right_on=["_row", "_k", "_n"], how="left")
            .group_by("_row", maintain_order=True)
            .agg(pl.col("dropped").filter(pl.col("_gone").is_null()
                                          & pl.col("dropped").is_not_null()))
            .collect())
    trimmed = (folds.with_row_index("_row").drop("dropped")
               .join(keep, on="_row", how="left", maintain_order="left")
               .with_columns(pl.col("dropped").fill_null(pl.lit([], folds.schema["dropped"]))
                             .cast(folds.schema["dropped"]))
               .select(folds.columns))
    books = gone.select(fact_key(pl.col("kind"), pl.col("norm"), pl.col("text")).alias("key"),
                        pl.col("fold").alias("id"))
    return trimmed, pl.concat([held, books.cast(held.schema)]).unique()
