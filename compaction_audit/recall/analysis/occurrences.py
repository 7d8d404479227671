"""Where each discriminator occurs: in raw spans and in the summaries that still state it.

:func:`_occurrences` gives the (key, span) rows a discriminator is seen in, the
(key, summary) rows that keep it, and the names (identifiers, links) no prose used;
:func:`_disagreements` compares the spans that hold one with their logged
``salience_class``.
"""

from __future__ import annotations

from itertools import chain, filterfalse
from operator import attrgetter
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import collect
from compaction_audit.reachability import resolvable_end
from compaction_audit.recall import extract as ext
from compaction_audit.recall.analysis.items import typed_items
from compaction_audit.recall.analysis.stances import STANCE_SCHEMA, stance_rows
from compaction_audit.recall.factkeys import fact_key
from compaction_audit.recall.textwork import Extracted, Survived, survival_flags
from compaction_audit.series import Series

VALUE_TYPES = ("code", "tool_output")
NAME_KINDS = ("identifier", "link")
"""A name (:data:`NAME_KINDS`) found in a span of :data:`VALUE_TYPES` is a fact only when
prose states it too (:func:`_prose_names`, issue 10, point 1); ``trace`` says so of the
names it follows (:mod:`compaction_audit.trace.query`)."""


def _occurrences(session: Session, series: Series,
                 extracted: Extracted | None = None,
                 survived: Survived | None = None,
                 items: pl.DataFrame | None = None,
                 shallow: set[str] | None = None,
                 rows: DiscriminatorRows | None = None,
                 ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``(occ, held, names)``: (key, span) for discriminators of raw spans; (key,
    summary) for summaries whose text still states a discriminator of one of their
    leaves; and the identifiers and links of code and tool output that no prose or spec
    span used before the compaction (issue 10, point 1), left out of ``occ``.

    ``occ`` columns: ``key``, ``id``, ``kind``, ``text``, ``rank``, ``stype`` (span
    type), ``line`` (1-based line of the discriminator in its span's cleaned text),
    ``negated`` and ``asked`` (:func:`~compaction_audit.recall.analysis.stances.
    stance_rows`: stated negatively, as a rule's object; named in a question, which
    holds no fact: usertest38 #4).
    "Before the compaction": a prose or spec span born no later than the round at which
    the tool span stops being resolvable (any round while it stays resolvable).
    Python visits each distinct (text, type) once for ``occ`` and each distinct (leaf
    text, type, summary text) of the closure once for ``held``, only for leaves with a
    discriminator; Polars joins the results back to the spans and the closure pairs.
    A summary whose text is in ``shallow`` (past the survival cap,
    :func:`~compaction_audit.recall.analysis.folds._text_work`) is compared with its own
    children only.  ``rows``: the analysis's :class:`DiscriminatorRows` (shared with
    the fold checks), else the rows are read here."""
    found_in = extracted if extracted is not None else Extracted()
    items = items if items is not None else typed_items(session)
    spans, summaries = collect(  # plans.collect: a few queries, not one per step
        items.lazy().filter((pl.col("kind") == "span") & pl.col("text").is_not_null()),
        items.lazy().filter((pl.col("kind") == "summary") & pl.col("text").is_not_null())
        .select("id", "text"))
    # the discriminators of each distinct (text, type), made in Python once per text
    # and joined to the spans that hold it
    # (rows name their (text, type) by its index in ``distinct``: a text repeated on
    # each of its discriminators took 650 MB for one 130 KB text holding 5,000 facts;
    # issue 11, class 5, fresh pass F3's class)
    shared = rows if rows is not None else DiscriminatorRows(found_in)
    distinct = shared.of(spans)
    table = shared.table
    held_plan = (spans.lazy().select("id", pl.col("text").alias("body"), "stype")
                 .with_row_index("_row")
                 .join(distinct.lazy().rename({"text": "body"}), on=["body", "stype"])
                 .select("_row", "id", "_d").join(table.lazy(), on="_d").sort("_row", "pos"))
    stances = (stance_rows(distinct, found_in) if table.height  # usertest38 #4: asked,
               else pl.DataFrame(schema=STANCE_SCHEMA))  # stated negatively
    held_by, occ = collect(held_plan, held_plan.join(
        stances.lazy(), on=["_d", "pos"], how="left").select(
        "key", "id", "kind", "text", "rank", "line",
        *(pl.col(flag).fill_null(False) for flag in ("negated", "asked"))).join(
        items.lazy().select("id", "stype"), on="id", how="left"))
    occ, names = _prose_names(session, items, occ)
    if held_by.height == 0 or summaries.height == 0:  # no (summary text, leaf) pair
        return occ, pl.DataFrame(schema={"key": pl.String, "id": pl.String}), names
    # texts are named by index in every pair (a summary of 200 KB over 5,000 leaves
    # copied its text onto each pair and aborted the process: issue 11, class 5, the
    # sixth adversarial pass's F1); Python reads each distinct text once
    bodies = spans.select(pl.col("id"), pl.col("text").alias("body"), "stype")
    leaf_texts = (held_by.select(pl.col("id").alias("leaf")).unique()
                  .join(bodies.rename({"id": "leaf"}), on="leaf"))
    texts_b = (leaf_texts.select("body", "stype").unique().with_row_index("_b")
               .with_columns(pl.col("_b").cast(pl.Int64)))
    texts_s = (summaries.select(pl.col("text").alias("s")).unique().with_row_index("_s")
               .with_columns(pl.col("_s").cast(pl.Int64)))
    leaves = leaf_texts.join(texts_b, on=["body", "stype"]).select("leaf", "_b")
    closure = series.closure.select("leaf", "item")
    if shallow:  # past the cap: a summary's own children only
        cut = summaries.filter(pl.col("text").is_in(list(shallow))).select(
            pl.col("id").alias("item"))
        closure = pl.concat([
            closure.join(cut, on="item", how="anti"),
            closure.join(cut, on="item").join(
                session.edges.select(pl.col("parent").alias("item"),
                                     pl.col("child").alias("leaf")).unique(),
                on=["item", "leaf"], how="semi"),
        ])
    pairs = (
        summaries.join(texts_s, left_on="text", right_on="s").select("id", "_s")
        .join(closure, left_on="id", right_on="item")
        .join(leaves, on="leaf")
        .select("id", "_s", "_b")
    )
    del leaf_texts
    memo: Survived = survived if survived is not None else {}
    surviving = _surviving(pairs.select("_b", "_s").unique(), texts_b, texts_s, memo, found_in,
                           distinct.join(texts_b.rename({"body": "text"}), on=["text", "stype"])
                           .select("_b", "_d").join(table.select("_d", "pos", "key"), on="_d")
                           .drop("_d"))
    held = pairs.join(surviving, on=["_b", "_s"]).select("key", "id").unique()
    return occ, held, names


_RANK = {kind.value: rank for kind, rank in ext.KIND_RANK.items()}


def _discriminator_rows(distinct: pl.DataFrame, found_in: Extracted,
                        columns: tuple[str, ...] = ("key", "kind", "text", "rank", "line")
                        ) -> pl.DataFrame:
    """One row per discriminator of each distinct (``text``, ``stype``) of ``distinct``
    (numbered ``_d``): ``_d``, ``pos`` (its place among the text's), then ``columns``
    of ``key`` (``kind:norm``), ``kind``, ``text``, ``norm``, ``rank``
    (:data:`~compaction_audit.recall.extract.KIND_RANK`) and ``line``.
    Python reads the fields these need of each discriminator, by C-level maps where it
    can; the numbering, keys and ranks are Polars' (a kind is a ``StrEnum``: its string
    is its value)."""
    found = list(map(found_in.__getitem__, zip(distinct["text"].to_list(),
                                               distinct["stype"].to_list(), strict=True)))
    flat = list(chain.from_iterable(found))
    places = (pl.DataFrame({"_d": distinct["_d"], "n": list(map(len, found))},
                           schema={"_d": pl.Int64, "n": pl.Int64})
              .filter(pl.col("n") > 0)
              .select(pl.col("_d").repeat_by("n"), pl.int_ranges("n").alias("pos"))
              .explode("_d", "pos"))
    del found
    read = {"kind", "norm", "text"} if "key" in columns else set()
    read.update(c for c in columns if c in ("kind", "norm", "text", "line"))
    if "rank" in columns:
        read.add("kind")
    fields = pl.DataFrame({name: list(map(attrgetter(name), flat)) for name in sorted(read)},
                          schema={name: _FIELD_TYPES[name] for name in sorted(read)})
    made = {"key": fact_key(pl.col("kind"), pl.col("norm"), pl.col("text")).alias("key"),
            "rank": pl.col("kind").replace_strict(_RANK, return_dtype=pl.Int64).alias("rank")}
    return pl.concat([places, fields], how="horizontal").select(
        "_d", pl.col("pos").cast(pl.Int64), *(made.get(c, pl.col(c)) for c in columns))


_FIELD_TYPES = {"kind": pl.String, "norm": pl.String, "text": pl.String, "line": pl.Int64}
"""The discriminator fields :func:`_discriminator_rows` reads, with their Polars types."""


ROW_COLUMNS = ("key", "kind", "text", "rank", "line")
"""The columns of :class:`DiscriminatorRows`' table: what the fold checks and the
occurrence table read (the fold checks' ``norm`` is the ``key`` after its kind and
``:``: no column of its own, held while the occurrence table is made)."""


class DiscriminatorRows:
    """The rows of :func:`_discriminator_rows` of every distinct (text, span type) asked
    for, each text's read from its Python objects once per analysis: the fold checks
    (children's texts) and the occurrence table (spans' texts) share them (issue 14:
    reading the fields of 119,000 discriminators was about a third of each of the two
    on the benchmark grid's 254 MB text cell).  ``numbered``: ``text``, ``stype``, ``_d``
    (their number, from 0 in order); ``table``: :data:`ROW_COLUMNS` rows."""

    def __init__(self, found_in: Extracted) -> None:
        self.found_in = found_in
        self.numbered = pl.DataFrame(schema={"text": pl.String, "stype": pl.String,
                                             "_d": pl.Int64})
        self.table = _discriminator_rows(self.numbered, found_in, ROW_COLUMNS)

    def of(self, keys: pl.DataFrame) -> pl.DataFrame:
        """The distinct (``text``, ``stype``) of ``keys`` with their number ``_d`` (the
        texts not met yet are read and added to :attr:`table`)."""
        keys = keys.select("text", "stype").unique()
        have = keys.join(self.numbered, on=["text", "stype"], how="left", nulls_equal=True)
        missing = have.filter(pl.col("_d").is_null()).drop("_d")
        if missing.height == 0:
            return have
        extra = (missing.with_row_index("_d", offset=self.numbered.height)
                 .select("text", "stype", pl.col("_d").cast(pl.Int64)))
        self.numbered = pl.concat([self.numbered, extra])
        self.table = pl.concat([self.table, _discriminator_rows(extra, self.found_in,
                                                                ROW_COLUMNS)])
        return pl.concat([have.filter(pl.col("_d").is_not_null()), extra])


def _surviving(distinct_pairs: pl.DataFrame, texts_b: pl.DataFrame, texts_s: pl.DataFrame,
               memo: Survived, found_in: Extracted, leaf_keys: pl.DataFrame) -> pl.DataFrame:
    """(``_b``, ``_s``, ``key``): for each distinct (leaf text ``_b``, summary text
    ``_s``) pair, the keys of the leaf's discriminators the summary keeps.  The flags of
    a pair come from ``memo`` (computed here for the pairs it lacks,
    :func:`~compaction_audit.recall.textwork.survival_flags`); the pairs name their
    flags by number, and Polars joins each number to the places it keeps and
    ``leaf_keys`` (``_b``, ``pos``, ``key``) to the keys: the rows made in Python grow
    with the distinct flags, not with the facts each pair keeps (every summary of a
    chain keeps a clause of each leaf below it: issue 11, class 5).  Keys and flags are
    looked up by C-level maps, no bytecode per pair."""
    bodies_at = list(zip(texts_b["body"].to_list(), texts_b["stype"].to_list(), strict=True))
    keys = list(zip(map(bodies_at.__getitem__, distinct_pairs["_b"].to_list()),
                    map(texts_s["s"].to_list().__getitem__, distinct_pairs["_s"].to_list()),
                    strict=True))
    todo = list(filterfalse(memo.__contains__, keys))
    memo.update(zip(todo, survival_flags([(found_in[leaf_key], body) for leaf_key, body in todo]),
                    strict=True))
    got = list(map(memo.__getitem__, keys))
    del keys, todo
    number = {flags: n for n, flags in enumerate(dict.fromkeys(got))}
    at: dict[str, list[int]] = {"_f": [], "pos": []}
    for flags, n in number.items():  # most summaries keep none of a leaf's discriminators
        for pos, survives in enumerate(flags):
            if survives:
                at["_f"].append(n)
                at["pos"].append(pos)
    return (distinct_pairs.with_columns(pl.Series("_f", list(map(number.__getitem__, got)),
                                                  pl.Int64))
            .join(pl.DataFrame(at, schema={"_f": pl.Int64, "pos": pl.Int64}), on="_f")
            .join(leaf_keys, on=["_b", "pos"]).select("_b", "_s", "key"))


def _prose_names(session: Session, items: pl.DataFrame, occ: pl.DataFrame
                 ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split ``occ``: identifiers and links of code and tool output stay only when a prose
    or spec span born no later than the round the tool span stops being resolvable
    states the same key (issue 10, point 1).  Returns (kept occ, left-out rows)."""
    is_name = pl.col("stype").is_in(VALUE_TYPES) & pl.col("kind").is_in(NAME_KINDS)
    names = occ.filter(is_name)
    if names.height == 0:
        return occ, names
    life = items.lazy().select("id", pl.col("ri").alias("born"),
                               resolvable_end(session).alias("gone"))
    prose = (occ.lazy().filter(pl.col("stype").is_in(("prose", "spec")))
             .join(life, on="id").group_by("key").agg(pl.col("born").min().alias("said")))
    named = names.lazy()
    used = (named.join(life, on="id").join(prose, on="key")
            .filter(pl.col("said") <= pl.col("gone")).select("key", "id").unique())
    kept_names = named.join(used, on=["key", "id"], how="semi")
    left_out = named.join(used, on=["key", "id"], how="anti")
    kept, out = collect(pl.concat([occ.lazy().filter(~is_name), kept_names]), left_out)
    return kept, out


def _disagreements(session: Session, occ: pl.DataFrame) -> list[dict[str, Any]]:
    """Spans whose logged salience_class differs from the auditor's classification."""
    with_disc = set(occ["id"].unique().to_list())
    rows = session.items.filter((pl.col("kind") == "span")
                                & pl.col("salience_class").is_not_null()
                                & pl.col("text").is_not_null())
    out = []
    for item, cls, line, number in zip(rows["id"].to_list(), rows["salience_class"].to_list(),
                                       rows["line"].to_list(), rows["round"].to_list(),
                                       strict=True):
        auditor = "discriminating" if item in with_disc else "narrative"
        if auditor != cls:
            out.append({"span": item, "logged": cls, "auditor": auditor, "line": line,
                        "round": number})
    return out
