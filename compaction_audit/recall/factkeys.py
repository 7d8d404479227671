"""Fact keys: how the recall analysis names a fact in its Polars frames.

A fact is its kind and norm (``quantity:45000``, ``negation:not enable --force``), and
for a value its text binds to a name, that name too (``version:1.2.0@lib2`` for
``lib2==1.2.0``; :mod:`compaction_audit.recall.bindings`, usertest38 #3): a span that
states 1.2.0 alone, or binds it to another name, does not hold the pin.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.recall.bindings import BOUND_KINDS, BOUND_TEXT
from compaction_audit.recall.ranking import document_source
from compaction_audit.recall.wholetoken import STATING_TYPES

__all__ = ["MAX_NAMES_PER_VALUE", "STANCES", "fact_key", "key_norm", "stated_in",
           "with_unbound_holders"]

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


STANCES = ("negated", "asked", "restated")
"""The stance columns of the occurrence table
(:mod:`compaction_audit.recall.analysis.stances`) kept by :func:`with_unbound_holders`,
and ``restated`` (a row :func:`~compaction_audit.recall.analysis.restated.restated`
added, not an occurrence: :func:`stated_in` leaves it out)."""


MAX_NAMES_PER_VALUE = 16
"""Most names one value may be bound to (``n0==1.2.0`` ... ``n15==1.2.0``) for a span
stating the value alone to hold them: past it, "we use 1.2.0" names none of them, and
each such span would be a holder of every pin (adv88 #1: 4,000 names and 4,000 mentions
spread over as many rounds made 16 million holder rows, 1.5 GB at 2,000)."""


def _bound_keys(pairs: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(``bound``: each bound value's key among ``pairs``' keys with its ``base``,
    ``kind`` and ``name`` (:func:`_parts`), of a value bound to at most
    :data:`MAX_NAMES_PER_VALUE` names: the keys a span stating the value alone may hold;
    ``binds``: ``id``, ``kind``, ``name`` of each span that binds a name to a value of
    the kind, whatever the count)."""
    bound = (pairs.select("key").unique().with_columns(_parts(pl.col("key")))
             .drop_nulls("base"))
    binds = pairs.join(bound, on="key").select("id", "kind", "name").unique()
    return bound.filter(pl.len().over("base") <= MAX_NAMES_PER_VALUE), binds


def with_unbound_holders(occ: pl.DataFrame, items: pl.DataFrame,
                         life: pl.DataFrame) -> pl.DataFrame:
    """``occ``'s ``key`` and ``id`` rows (with its :data:`STANCES` columns, those it
    has), and for each bound value's key (``version:1.2.0@lib2``) the spans that state
    the same value bound to no name (``version:1.2.0``) and bind that name to no other
    value of the kind, with that occurrence's stance: such a span in reach holds the
    bound fact, as a summary that binds the name to nothing keeps it
    (:func:`compaction_audit.recall.survival.bindings.bound_kept`).  A span stating
    ``lib2==1.3.0`` and "1.2.0 breaks" does not hold ``lib2==1.2.0``, nor does one that
    binds 1.2.0 to another name.

    One row per holder is K x M rows for K names pinned to one value and M spans
    stating it alone (adv88 #1: 4,000 of each made 16 million rows, 44 s and 5.4 GB).
    What reads the holders aggregates them by key (first seen: the least ``born``; the
    reach: the union of ``[born, gone)``, a rule's ``until`` from the negated ones;
    :func:`~compaction_audit.recall.analysis.stances.holding`), and a re-read takes a
    key's first span by (``born``, ``source_line``, ``id``) of a document
    (:func:`~compaction_audit.recall.analysis.losses._lost_rows`): spans that share
    ``born``, ``gone`` (``life``: ``id``, ``born``, ``gone``), stance, ``stype``,
    whether the ``source`` is a document's (``items``: ``id``, ``stype``, ``source``,
    ``source_line``) and ``restated`` count alike, and only the first of them by
    (``source_line``, ``id``) is listed for each key: rows = ``occ``'s + bound keys x
    such classes of spans stating their value alone (K x 1 on adv88 #1's log).  A span
    that states the value alone and binds some name of its kind is paired with each
    bound key of the value, as before; a value is paired with at most
    :data:`MAX_NAMES_PER_VALUE` keys, so the rows added are at most that many per span
    stating a value alone, however many names and spans there are."""
    stances = [c for c in STANCES if c in occ.columns]
    pairs = occ.lazy().select("key", "id", *stances)
    bound, binds = _bound_keys(pairs)
    mentions = (pairs.rename({"key": "base"})
                .join(bound.select("base").unique(), on="base", how="semi")
                .with_columns(pl.col("base").str.splitn(":", 2).struct.field("field_0")
                              .alias("kind")))
    tied = binds.select("id", "kind").unique()
    paired = (mentions.join(tied, on=["id", "kind"], how="semi")
              .join(bound, on=["base", "kind"])
              .join(binds, on=["id", "kind", "name"], how="anti")
              .select("key", "id", *stances))
    like = ["born", "gone", "stating", "document", "present"]
    free = (mentions.join(tied, on=["id", "kind"], how="anti")
            .join(life.lazy().select("id", "born", "gone"), on="id", how="left")
            .join(items.lazy().select("id", "source_line",
                                      pl.col("stype").is_in(STATING_TYPES).fill_null(False)
                                      .alias("stating"),
                                      document_source(pl.col("source")).alias("document"),
                                      pl.lit(True).alias("present")), on="id", how="left")
            .group_by("base", *like, *stances)
            .agg(pl.col("id").sort_by("source_line", "id").first())
            .join(bound.select("key", "base"), on="base")
            .select("key", "id", *stances))
    return pl.concat([pairs, paired, free]).collect()  # a span states one of the two


def stated_in(frame: pl.LazyFrame, occ: pl.DataFrame) -> pl.LazyFrame:
    """The rows of ``frame`` (``key``, ``id`` among its columns; none named ``base``,
    ``kind`` or ``name``) whose (``key``, ``id``) is a row of
    ``with_unbound_holders(occ)`` were it listed one row per holder: an occurrence in
    ``occ`` (``key``, ``id``), or for a bound value's key among ``occ``'s a span that
    states the value alone and binds the name to no other value of the kind.  A test
    of each row, without the K x M pairs (adv88 #1): linear in ``frame`` and ``occ``."""
    pairs = occ.lazy().select("key", "id")
    bound, binds = _bound_keys(pairs)
    own = frame.join(pairs, on=["key", "id"], how="semi")
    alone = (frame.join(bound, on="key")  # an occurrence binds its name: not both
             .join(pairs.rename({"key": "base"}), on=["base", "id"], how="semi")
             .join(binds, on=["id", "kind", "name"], how="anti")
             .drop("base", "kind", "name"))
    return pl.concat([own, alone])
