"""Raw spans that state a lost fact in another form than the span that lost it.

A fact a fold dropped is not lost while a span in reach at the fold holds it
(:func:`~compaction_audit.recall.analysis.losses._fold_losses`).  The occurrences
(:func:`~compaction_audit.recall.analysis.occurrences._occurrences`) find those spans
by the discriminators extracted from their own text, and extraction depends on the
form: `` `12px` `` in backticks is an identifier, "(12px)" in prose is not extracted.  A
Cline session's kept message said "starts at `px-3` (12px)" while the folded one's
`` `12px` `` was reported lost (usertest10).  :func:`restated` finds, for the token
facts a first pass found lost, the prose spans that state them as a whole token.

What counts is kept narrow, since a span wrongly said to hold a fact hides a loss
(adv54, adv55): the fact's own text, case kept (``PATH`` is not "the path"); a name
only when its form says it is one (a digit, a joiner such as ``-`` or ``.``, or mixed
capitals: ``main``, ``WARN`` and ``Config`` are words); a token no joiner continues
on either side (not inside a path, a URL, ``JIRA-5000``, ``3.45000`` or
``settings.yaml.bak``); and only in what someone wrote (prose or spec text, outside
fenced code), never in code or tool output.
"""

from __future__ import annotations

import re

import polars as pl

from compaction_audit.plans import collect, one

__all__ = ["HITS", "STATING_TYPES", "looked_for", "restated", "states"]

_TOKEN_KINDS = ("identifier", "link", "quantity", "version")
"""Kinds looked for; a clause in other words is not the same clause, and a scope
(``prod``, ``staging``) is a plain word that prose uses for other things."""

STATING_TYPES = ("prose", "spec")
"""Span types whose words can restate a fact (not code, not tool output)."""

_MIN_CHARS = 3
"""Characters a fact needs to be looked for: ``0``, ``ok`` or ``x1`` stand for many things."""

_MIN_NUMBER = 4
"""Characters a number without a unit needs: ``70`` in another span is rarely the same
70 (a sample log's lost "70" was held by a step count), ``45000`` mostly is."""

HITS = 1024
"""Occurrences of the facts read per span at most, the first ones (a span that names
the facts more often and never as a whole token in the first 1,024 does not hold
them; :func:`states` reads as many of one fact)."""

_JOINERS = "/\\.-:@#+~$%"
"""Characters that continue a token when a letter or digit follows them (after the
fact) or that join it to what comes before: ``docs/README.md``, ``JIRA-5000``."""

_NAME = re.compile(r"[0-9_./:@#\\-]|[a-z].*[A-Z]|.[A-Z].*[a-z]")
"""A name's mark: a digit or joiner, or capitals mixed with small letters after the
first character (``sidebarItem``; not ``PATH``, ``WARN`` or ``Config``: words)."""

_FENCE = r"(?ms)^[ \t]*```.*?(?:^[ \t]*```|\z)"
"""A fenced code block (as :mod:`compaction_audit.recall.extract` reads one): code in
a message is not what it says (adv55: CSS in a kept reply held a lost `12px`)."""


def looked_for(kind: str, text: str) -> bool:
    """Whether a span stating the fact ``(kind, text)`` as a whole token holds it: a
    token kind (:data:`_TOKEN_KINDS`) of :data:`_MIN_CHARS` characters at least; a
    number without a unit of :data:`_MIN_NUMBER`; a name (identifier, link) only
    with the mark of one (:data:`_NAME`: ``12px``, ``px-3``, ``sidebarItem``, not
    ``main``, ``PATH``, ``WARN`` or ``Config``)."""
    if kind not in _TOKEN_KINDS or len(text) < _MIN_CHARS:
        return False
    if kind == "quantity":
        return " " in text or len(text) >= _MIN_NUMBER
    return kind == "version" or _NAME.search(text) is not None


def _is_word(char: str) -> bool:
    """A character of a word: a letter or digit of any script, or ``_`` (a dash, a
    quote, an arrow or a space of any script is a boundary: adv55)."""
    return char.isalnum() or char == "_"


def blank_fences(text: str) -> str:
    """``text`` with its fenced code blocks blanked (:data:`_FENCE`)."""
    return re.sub(_FENCE.replace("\\z", "\\Z"), lambda m: re.sub(r"[^\n]", " ", m.group()),
                  text) if "```" in text else text


def states(text: str, fact: str, hits: int = HITS) -> bool:
    """Whether ``text`` (its fenced code blanked) holds ``fact`` as a whole token (case
    kept) in its first ``hits`` occurrences: no letter, digit or joiner before it, and
    after it no letter or digit, nor a joiner followed by one.  The test of
    :func:`restated`, for ``trace``."""
    text = blank_fences(text)
    start = text.find(fact)
    while start >= 0 and hits > 0:
        hits -= 1
        end = start + len(fact)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        then = text[end + 1] if end + 1 < len(text) else " "
        if not (_is_word(before) or before in _JOINERS or _is_word(after)
                or (after in _JOINERS and _is_word(then))):
            return True
        start = text.find(fact, start + 1)
    return False


def _said(window: bytes, fact: str) -> bool:
    """:func:`states` of one hit whose neighbours are not ASCII: ``window`` is its bytes
    with four on each side (whole characters kept, the cut ones dropped)."""
    return states(window.decode("utf-8", "ignore"), fact, 1)


def _word(byte: pl.Expr) -> pl.Expr:
    """True for an ASCII byte of a word (letter, digit, ``_``); a byte of a non-ASCII
    character is told in Python (:func:`_said`)."""
    return (byte.is_between(48, 57) | byte.is_between(65, 90) | byte.is_between(97, 122)
            | (byte == 95))


def _joiner(byte: pl.Expr) -> pl.Expr:
    """True for a byte of :data:`_JOINERS`."""
    return byte.is_in([ord(c) for c in _JOINERS])


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
    at once, then joins: no Python per span.  Each hit is a row, :data:`HITS` per span
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
    text = pl.col("text")
    byte = pl.col("bytes").bin.get
    ascii_ = [(pl.col(c) < 128).fill_null(True) for c in ("before", "after", "then")]
    found = (
        items.lazy().filter((pl.col("kind") == "span") & text.is_not_null()
                            & pl.col("stype").is_in(STATING_TYPES))
        .select("id", "text")
        .filter(text.str.contains_any(needles))
        .with_columns(text.str.replace_all(_FENCE, " "))  # code says nothing (adv55)
        .with_columns(text.str.extract_many(needles, overlapping=True).alias("needle"),
                      text.str.find_many(needles, overlapping=True).alias("at"))
        .filter(pl.col("needle").list.len() == pl.col("at").list.len())
        .with_columns(pl.col("needle").list.head(HITS), pl.col("at").list.head(HITS))
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
