"""Fact keys: how the recall analysis names a fact in its Polars frames.

A fact is its kind and norm (``quantity:45000``, ``negation:not enable --force``), and
for a value its text binds to a name, that name too (``version:1.2.0@lib2`` for
``lib2==1.2.0``; :mod:`compaction_audit.recall.bindings`, usertest38 #3): a span that
states 1.2.0 alone, or binds it to another name, does not hold the pin.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.recall.bindings import BOUND_KINDS, BOUND_TEXT

__all__ = ["fact_key", "key_norm", "with_unbound_holders"]

_BOUND = sorted(kind.value for kind in BOUND_KINDS)


def fact_key(kind: pl.Expr, norm: pl.Expr, text: pl.Expr) -> pl.Expr:
    """A fact's key: ``kind:norm``, then ``@name`` for a value its text binds to a name
    (``version:1.2.0@lib2`` for ``lib2==1.2.0``, :mod:`compaction_audit.recall.bindings`;
    usertest38 #3): the pin is not held by a span that states 1.2.0 alone or binds it to
    another name.  No value's norm holds ``@``."""
    name = text.str.extract("^" + BOUND_TEXT, 1).str.to_lowercase()
    return pl.concat_str(kind, pl.lit(":"), norm,
                         pl.when(kind.is_in(_BOUND) & name.is_not_null())
                         .then(pl.lit("@") + name).otherwise(pl.lit("")))


def key_norm(key: pl.Expr, kind: pl.Expr) -> pl.Expr:
    """The norm of a fact's key (:func:`fact_key`): after its kind and ``:``, less a
    bound value's ``@name``."""
    norm = key.str.splitn(":", 2).struct.field("field_1")
    return (pl.when(kind.is_in(_BOUND)).then(norm.str.splitn("@", 2).struct.field("field_0"))
            .otherwise(norm))


def _parts(key: pl.Expr) -> list[pl.Expr]:
    """``base`` (a bound value's key less its ``@name``; null for any other key),
    ``kind`` and ``name`` of a fact key (:func:`fact_key`)."""
    value = pl.any_horizontal([key.str.starts_with(kind + ":") for kind in _BOUND])
    bound = value & key.str.contains("@", literal=True)
    split = key.str.splitn("@", 2)
    return [pl.when(bound).then(split.struct.field("field_0")).alias("base"),
            key.str.splitn(":", 2).struct.field("field_0").alias("kind"),
            split.struct.field("field_1").alias("name")]


STANCES = ("negated", "asked")
"""The stance columns of the occurrence table
(:mod:`compaction_audit.recall.analysis.stances`) kept by :func:`with_unbound_holders`."""


def with_unbound_holders(occ: pl.DataFrame) -> pl.DataFrame:
    """``occ``'s ``key`` and ``id`` rows (with its :data:`STANCES` columns, those it
    has), and for each bound value's key (``version:1.2.0@lib2``) a row for each span
    that states the same value bound to no name (``version:1.2.0``) and binds that name
    to no other value of the kind, with that occurrence's stance: such a span in reach
    holds the bound fact, as a summary that binds the name to nothing keeps it
    (:func:`compaction_audit.recall.survival.bindings.bound_kept`).  A span stating
    ``lib2==1.3.0`` and "1.2.0 breaks" does not hold ``lib2==1.2.0``, nor does one that
    binds 1.2.0 to another name."""
    stances = [c for c in STANCES if c in occ.columns]
    pairs = occ.lazy().select("key", "id", *stances)
    bound = (pairs.select("key").unique().with_columns(_parts(pl.col("key")))
             .drop_nulls("base"))
    binds = (pairs.join(bound, on="key").select("id", "kind", "name").unique())
    extra = (pairs.rename({"key": "base"}).join(bound, on="base")
             .join(binds, on=["id", "kind", "name"], how="anti")
             .select("key", "id", *stances))
    return pl.concat([pairs, extra]).collect()  # a span states one of the two
