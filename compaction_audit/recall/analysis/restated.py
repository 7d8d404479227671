"""Raw spans that state a lost fact in another form than the span that lost it.

A fact a fold dropped is not lost while a span in reach at the fold holds it
(:func:`~compaction_audit.recall.analysis.losses._fold_losses`).  The occurrences
(:func:`~compaction_audit.recall.analysis.occurrences._occurrences`) find those spans
by the discriminators extracted from their own text, and extraction depends on the
form: `` `12px` `` in backticks is an identifier, "(12px)" in prose is not extracted.  A
Cline session's kept message said "starts at `px-3` (12px)" while the folded one's
`` `12px` `` was reported lost (usertest10).  :func:`restated` finds, for the token
facts a first pass found lost, the spans that state them as a whole token.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.plans import one
from compaction_audit.recall.extract import CLAUSE_KINDS

__all__ = ["looked_for", "restated"]

_CLAUSES = tuple(kind.value for kind in CLAUSE_KINDS)

_MIN_CHARS = 3
"""Characters a fact needs to be looked for: ``0``, ``ok`` or ``x1`` stand for many things."""

_MIN_NUMBER = 4
"""Characters a number without a unit needs: ``70`` in another span is rarely the same
70 (a sample log's lost "70" was held by a step count), ``45000`` mostly is."""
_NAME_KINDS = ("identifier", "link")
_VALUE_TYPES = ("code", "tool_output")


def looked_for(kind: str, norm: str) -> bool:
    """Whether a span stating the fact ``(kind, norm)`` as a whole token holds it: a
    token kind (a clause in other words is not the same clause), of :data:`_MIN_CHARS`
    characters at least, a number without a unit of :data:`_MIN_NUMBER`."""
    if kind in _CLAUSES or len(norm) < _MIN_CHARS:
        return False
    return kind != "quantity" or " " in norm or len(norm) >= _MIN_NUMBER


def _word(byte: pl.Expr) -> pl.Expr:
    """True for a byte of a word (ASCII letter, digit, ``_``) or of a non-ASCII
    character (a letter to :meth:`str.isalnum` as often as not: never a boundary)."""
    return (byte.is_between(48, 57) | byte.is_between(65, 90) | byte.is_between(97, 122)
            | (byte == 95) | (byte >= 128))


def restated(items: pl.DataFrame, lost: pl.DataFrame, facts: pl.DataFrame,
             occ: pl.DataFrame, life: pl.DataFrame) -> pl.DataFrame:
    """``(key, id)``: raw spans that state a lost token fact as a whole token (case
    aside) without holding it among their own discriminators, in reach at the round
    a fold lost it.

    ``items``: typed items (``id``, ``kind``, ``text``, ``stype``); ``lost``: ``key``,
    ``ri`` (a fold lost the fact at round index ``ri``); ``facts``: ``key``, ``kind``,
    ``norm``; ``occ``: ``key``, ``id`` (spans holding a fact by extraction: left out);
    ``life``: ``id``, ``born``, ``gone`` (round indexes; in reach over ``[born + 1,
    gone)``, as for ``occ``).  A clause is not looked for (a paraphrase is not a token),
    nor a fact of fewer than :data:`_MIN_CHARS` characters or a number without a unit
    of fewer than :data:`_MIN_NUMBER`, nor a name (identifier, link) in code or tool
    output, as in ``occ`` (issue 10, point 1).  Whole token: the bytes around it are
    not of a word (the survival check's test,
    :func:`~compaction_audit.recall.survival.check._raw_in`: a flag followed by ``-``
    and a word, or a number by ``.`` and a digit, is another token).

    One Aho-Corasick pass over the lowercased span texts (Polars ``find_many``) for all
    the facts at once, then joins: no Python per span or per fact."""
    empty = pl.DataFrame(schema={"key": pl.String, "id": pl.String})
    facts = facts.join(lost.select("key").unique(), on="key").unique("key")
    looked = [looked_for(kind, norm) for kind, norm in zip(  # once per lost fact
        facts["kind"].to_list(), facts["norm"].to_list(), strict=True)]
    wanted = (facts.filter(pl.Series(looked, dtype=pl.Boolean))
              .select("key", "kind", pl.col("norm").str.to_lowercase().alias("needle")))
    if wanted.height == 0:
        return empty
    needles = wanted["needle"].unique().sort().to_list()
    low = pl.col("text").str.to_lowercase()
    hits = one(
        items.lazy().filter((pl.col("kind") == "span") & pl.col("text").is_not_null())
        .select("id", "stype", low.alias("low"))
        .filter(pl.col("low").str.contains_any(needles))
        .with_columns(pl.col("low").str.extract_many(needles, overlapping=True)
                      .alias("needle"),
                      pl.col("low").str.find_many(needles, overlapping=True).alias("at"))
        .filter(pl.col("needle").list.len() == pl.col("at").list.len())
        .explode("needle", "at")
        .with_columns(pl.col("low").cast(pl.Binary).alias("bytes"),
                      (pl.col("at").cast(pl.Int64)
                       + pl.col("needle").str.len_bytes().cast(pl.Int64)).alias("end"))
        .with_columns(
            pl.when(pl.col("at") > 0).then(pl.col("bytes").bin.get(pl.col("at") - 1,
                                                                   null_on_oob=True))
            .alias("before"),
            pl.col("bytes").bin.get(pl.col("end"), null_on_oob=True).alias("after"),
            pl.col("bytes").bin.get(pl.col("end") + 1, null_on_oob=True).alias("then"))
        .filter(~_word(pl.col("before")).fill_null(False)
                & ~_word(pl.col("after")).fill_null(False)
                & ~(pl.col("needle").str.starts_with("-") & (pl.col("after") == 45)
                    & _word(pl.col("then")).fill_null(False))
                & ~(pl.col("needle").str.contains(r"\d$") & (pl.col("after") == 46)
                    & pl.col("then").is_between(48, 57).fill_null(False)))
        .select("id", "stype", "needle").unique()
        .join(wanted.lazy(), on="needle")
        .filter(~(pl.col("kind").is_in(_NAME_KINDS) & pl.col("stype").is_in(_VALUE_TYPES)))
        .join(occ.lazy().select("key", "id"), on=["key", "id"], how="anti")
        .join(life.lazy(), on="id")
        .join(lost.lazy().select("key", "ri").unique(), on="key")
        .filter((pl.col("born") < pl.col("ri")) & (pl.col("ri") < pl.col("gone")))
        .select("key", "id").unique().sort("key", "id"))
    return hits if hits.height else empty
