"""Raw spans that state a lost fact in another form than the span that lost it.

A fact a fold dropped is not lost while a span in reach at the fold holds it
(:func:`~compaction_audit.recall.analysis.losses._fold_losses`).  The occurrences
(:func:`~compaction_audit.recall.analysis.occurrences._occurrences`) find those spans
by the discriminators extracted from their own text, and extraction depends on the
form: `` `12px` `` in backticks is an identifier, "(12px)" in prose is not extracted.  A
Cline session's kept message said "starts at `px-3` (12px)" while the folded one's
`` `12px` `` was reported lost (usertest10).  :func:`restated` finds, for the token
facts a first pass found lost, the prose spans that state them as a whole token.

What counts is the test of :mod:`compaction_audit.recall.wholetoken` (kept narrow:
adv54, adv55), and only in what someone wrote (prose or spec text), never in code or
tool output.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.plans import collect, one
from compaction_audit.recall.fences import FENCE_RUST
from compaction_audit.recall.needles import antichains
from compaction_audit.recall.wholetoken import HITS, JOINERS, STATING_TYPES, looked_for, states

__all__ = ["restated"]

def _said(window: bytes, fact: str) -> bool:
    """:func:`~compaction_audit.recall.wholetoken.states` of one hit whose neighbours
    are not ASCII: ``window`` is its bytes with four before and eight after (whole
    characters kept, the cut ones dropped)."""
    return states(window.decode("utf-8", "ignore"), fact, 1)


def _word(byte: pl.Expr) -> pl.Expr:
    """True for an ASCII byte of a word (letter, digit, ``_``); a byte of a non-ASCII
    character is told in Python (:func:`_said`)."""
    return (byte.is_between(48, 57) | byte.is_between(65, 90) | byte.is_between(97, 122)
            | (byte == 95))


def _joiner(byte: pl.Expr) -> pl.Expr:
    """True for a byte of :data:`JOINERS`."""
    return byte.is_in([ord(c) for c in JOINERS])


def _found(spans: pl.LazyFrame, needles: list[str], hits: int = HITS) -> pl.LazyFrame:
    """Each hit of ``needles`` in the texts of ``spans`` (``id``, ``text``), the first
    ``hits`` per span: ``needle``, ``at`` and ``end`` (byte offsets), the text's
    ``bytes``, the bytes ``before`` and ``after`` the hit and the one ``then`` after
    that, and whether those three are ``ascii``; fenced code blanked first."""
    text = pl.col("text")
    byte = pl.col("bytes").bin.get
    ascii_ = [(pl.col(c) < 128).fill_null(True) for c in ("before", "after", "then")]
    return (
        spans.filter(text.str.contains_any(needles))
        .with_columns(text.str.replace_all(FENCE_RUST, " "))  # code says nothing (adv55)
        .with_columns(text.str.extract_many(needles, overlapping=True).alias("needle"),
                      text.str.find_many(needles, overlapping=True).alias("at"))
        .filter(pl.col("needle").list.len() == pl.col("at").list.len())
        .with_columns(pl.col("needle").list.head(hits), pl.col("at").list.head(hits))
        .explode("needle", "at")
        .with_columns(text.cast(pl.Binary).alias("bytes"),
                      (pl.col("at").cast(pl.Int64)
                       + pl.col("needle").str.len_bytes().cast(pl.Int64)).alias("end"))
        .with_columns(
            pl.when(pl.col("at") > 0).then(byte(pl.col("at") - 1, null_on_oob=True))
            .alias("before"),
            byte(pl.col("end"), null_on_oob=True).alias("after"),
            byte(pl.col("end") + 1, null_on_oob=True).alias("then"))
        .with_columns(pl.all_horizontal(ascii_).alias("ascii"))
    )


def restated(items: pl.DataFrame, losses: pl.DataFrame, drops: pl.DataFrame,
             occ: pl.DataFrame, life: pl.DataFrame) -> pl.DataFrame:
    """``(key, id)``: prose or spec spans that state a lost fact as a whole token
    (:func:`states`) without holding it among their own discriminators, in reach at the
    round a fold lost it.

    ``items``: typed items (``id``, ``kind``, ``text``, ``stype``); ``losses``:
    ``key``, ``start`` (the round index of the loss), ``by_fold`` (a fold lost it: the
    losses looked at); ``drops``: ``key``, ``k`` (kind), ``t`` (the fact's text as the
    span that lost it wrote it), one row per drop; ``occ``: ``key``, ``id`` (spans
    holding a fact by extraction: left out); ``life``: ``id``, ``born``, ``gone`` (round
    indexes; in reach over ``[born + 1, gone)``, as for ``occ``).  Only the facts
    :func:`looked_for` admits.

    One Aho-Corasick pass over the span texts (Polars ``find_many``) for all the facts
    at once (one per layer where a fact holds another: :func:`antichains`), then
    joins: no Python per span.  Each hit is a row, :data:`HITS` per span
    at most: a span of 16 MB that repeated a fact of three letters made 2 GB of them
    (adv54)."""
    empty = pl.DataFrame(schema={"key": pl.String, "id": pl.String})
    lost, facts = collect(  # one query (issue 14, fleet audits)
        losses.lazy().filter("by_fold").select("key", pl.col("start").alias("ri")).unique(),
        drops.lazy().join(losses.lazy().filter("by_fold").select("key"), on="key", how="semi")
        .select("key", pl.col("k").alias("kind"), pl.col("t").alias("text"))
        .unique(["key", "text"]))  # each text of a fact: "12PX" and "12px" (adv55)
    looked = [looked_for(kind, text) for kind, text in zip(  # once per lost fact
        facts["kind"].to_list(), facts["text"].to_list(), strict=True)]
    if not any(looked):
        return empty
    wanted = facts.filter(pl.Series(looked, dtype=pl.Boolean)).select(
        "key", pl.col("text").alias("needle"))
    needles = wanted["needle"].unique().sort().to_list()
    spans = items.lazy().filter((pl.col("kind") == "span") & pl.col("text").is_not_null()
                                & pl.col("stype").is_in(STATING_TYPES)).select("id", "text")
    groups = antichains(needles)
    # where a needle holds another, one search per group none of whose needles holds
    # another, one after the other, each one's lists freed before the next, the HITS
    # of a span shared between them (adv83: nested numbers over a run of digits
    # listed gigabytes of hits before HITS cut them)
    share = max(HITS // len(groups), 1)
    found = (_found(spans, needles) if len(groups) <= 1 else
             pl.concat([one(_found(spans, group, share)) for group in groups]).lazy())
    start = pl.max_horizontal(pl.col("at").cast(pl.Int64) - 4, pl.lit(0))
    whole, unsure = collect(  # ASCII neighbours: told here; others: in Python
        found.filter(pl.col("ascii")
                     & ~(_word(pl.col("before")) | _joiner(pl.col("before"))).fill_null(False)
                     & ~_word(pl.col("after")).fill_null(False)
                     & ~(_joiner(pl.col("after")) & _word(pl.col("then"))).fill_null(False))
        .select("id", "needle").unique(),
        found.filter(~pl.col("ascii")).select(
            "id", "needle", pl.col("bytes").bin.slice(start, pl.col("end") + 8 - start)
            .alias("window")))
    said = [_said(window, fact) for window, fact in zip(  # the few hits beside non-ASCII
        unsure["window"].to_list(), unsure["needle"].to_list(), strict=True)]
    stating = pl.concat([whole, unsure.filter(pl.Series(said, dtype=pl.Boolean))
                         .select("id", "needle")]).unique()
    hits = one(
        stating.lazy().join(wanted.lazy(), on="needle")
        .join(occ.lazy().select("key", "id"), on=["key", "id"], how="anti")
        .join(life.lazy(), on="id")
        .join(lost.lazy(), on="key")
        .filter((pl.col("born") < pl.col("ri")) & (pl.col("ri") < pl.col("gone")))
        .select("key", "id").unique().sort("key", "id"))
    return hits if hits.height else empty
