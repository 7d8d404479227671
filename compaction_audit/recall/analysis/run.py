"""Lossy-recall analysis: what each fold surrendered, recall debt, the recall floor.

Seed 002 ("Core Distinction", "Operational Effect"): a fold that keeps the topic but
drops the discriminator debits the recall budget.  This module compares every child of
every fold with the fold's text (:mod:`compaction_audit.recall.extract`), then tracks
each discriminator seen in a raw span over the rounds: it stays *recoverable* while a
resolvable raw span holds it or a working-set summary's text still states it (spec
rules.md, "Discriminating spans and folds").

Python touches each distinct text once (extraction, after one Polars pass has set aside
the texts that cannot hold a discriminator: :mod:`compaction_audit.recall.prefilter`),
each distinct (child or leaf text, summary text) pair once and compares each class of
discriminators with a summary once (survival: :mod:`compaction_audit.recall.survclass`);
Polars joins the results back to the edges, spans and closure pairs.  All per-round
work is interval arithmetic in Polars, as for reachability.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from compaction_audit.emptyframes import kept_for_schemas
from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.plans import collect, one
from compaction_audit.reachability import interval_sum, interval_sums, resolvable_end
from compaction_audit.recall import extract as ext
from compaction_audit.recall import textwork
from compaction_audit.recall.harm import asked_again, reuse
from compaction_audit.recall.spantypes import PLACEHOLDER_RE, span_type
from compaction_audit.recall.textwork import (
    Extracted,
    Survived,
    TextJobs,
    TextKey,
    survival_flags,
)
from compaction_audit.series import Series

DROP_SCHEMA = pl.List(pl.Struct({"kind": pl.String, "text": pl.String, "norm": pl.String,
                                 "rank": pl.Int64}))
FOLD_SCHEMA: dict[str, Any] = {
    "fold": pl.String, "child": pl.String, "ri": pl.Int64, "line": pl.Int64,
    "accounted": pl.Boolean, "child_resolvable": pl.Boolean, "check": pl.String,
    "child_source": pl.String, "child_type": pl.String, "dropped": DROP_SCHEMA,
}


@dataclass
class Recall:
    """The analysis of one session.

    ``folds``: one row per (fold, child) with the discriminators dropped (schema
    :data:`FOLD_SCHEMA`; ``check`` is "text", "salience_class" or "not-possible").
    ``debt``: per round index ``discriminators_seen``, ``recall_debt``,
    ``recall_debt_fold``, ``recall_debt_eviction`` (counts of distinct discriminators).
    ``lost``: every discriminator that became unrecoverable, most severe kind first.
    ``floor``: (span, start, end) intervals of round indices under the recall floor.
    ``disagreements``: spans whose logged ``salience_class`` differs from the auditor's
    classification.
    """

    folds: pl.DataFrame
    debt: pl.DataFrame
    lost: pl.DataFrame
    floor: pl.DataFrame
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    redacted_share: float = 0.0
    """Share of raw span characters inside redaction placeholders (``[REDACTED_…]``)."""
    limits: list[Limit] = field(default_factory=list)
    """Checks of the analysis that stopped at their cap (issue 11, class 5)."""

    @property
    def redacted(self) -> bool:
        """True when most span text is redaction placeholders: the log is reported
        "redacted: not checkable" (issue 10, point 1; threshold :data:`REDACTED_SHARE`)."""
        return self.redacted_share > REDACTED_SHARE


REDACTED_SHARE = 0.5
"""Above this share of span characters in placeholders a log is not checkable: what the
summary dropped cannot be told from what the redaction removed (issue 10, point 1)."""

_KIND_VALUE = {kind: kind.value for kind in ext.Kind}


def redacted_share(session: Session) -> float:
    """Share of the raw spans' text characters that are redaction placeholders."""
    spans = session.items.filter((pl.col("kind") == "span") & pl.col("text").is_not_null())
    if spans.height == 0:
        return 0.0
    row = spans.select(
        pl.col("text").str.len_chars().sum().alias("all"),
        pl.col("text").str.extract_all(PLACEHOLDER_RE.pattern)
        .list.eval(pl.element().str.len_chars()).list.sum().sum().alias("redacted"),
    ).row(0)
    return float(row[1] or 0) / row[0] if row[0] else 0.0


def _key(d: ext.Discriminator) -> str:
    return f"{_KIND_VALUE[d.kind]}:{d.norm}"


def typed_items(session: Session) -> pl.DataFrame:
    """``session.items`` with ``stype``: the span type of each item
    (:func:`compaction_audit.recall.spantypes.span_type`, computed once per distinct
    (source, text)); a summary's text is read as prose.  ``source_line`` (the log line
    that stated the item) is the round's ``line`` where the table has none.

    The item columns are shared with ``session.items``, not copied (the texts are held
    once): only the ``stype`` column is new."""
    items = session.items
    if "source_line" not in items.columns:
        items = items.with_columns(pl.col("line").alias("source_line"))
    null = "\x00"  # joins on (source, text) with nulls as a value no log text holds
    keys = [pl.col("source").fill_null(null).alias("_src"),
            pl.col("text").fill_null(null).alias("_txt")]
    spans = one(items.lazy().filter(pl.col("kind") == "span").select(*keys, "source", "text")
                .unique(subset=["_src", "_txt"]))  # plans.one: one query, not three
    types = [span_type(src, text) for src, text in zip(spans["source"].to_list(),
                                                        spans["text"].to_list(), strict=True)]
    table = spans.select("_src", "_txt").with_columns(pl.Series("stype", types, pl.String))
    del spans, types
    stype = one(items.lazy().select(pl.col("kind"), *keys).with_row_index("_row")
                .join(table.lazy(), on=["_src", "_txt"], how="left").sort("_row")
                .select(pl.when(pl.col("kind") == "span").then(pl.col("stype"))
                        .otherwise(pl.lit("prose")).alias("stype")))
    return items.with_columns(stype.to_series())


def _text_work(session: Session, items: pl.DataFrame, series: Series,
               extracted: Extracted, survived: Survived, jobs: TextJobs | None = None
               ) -> tuple[set[str], bool]:
    """Extract every text the analysis reads and check every (child, summary) pair it
    compares, shared with a helper process on a large session
    (:mod:`compaction_audit.recall.textwork`; ``jobs``: started by the caller as soon
    as the session was read, else here).

    Texts: raw spans' and folded summaries', each with its span type.  Pairs: each fold
    edge (child, fold text) and each closure pair (leaf, summary text), each distinct
    pair once, up to the caps on closure pairs
    (:data:`~compaction_audit.recall.texthelper.SURVIVAL_MAX_CHECKS`, clause classes
    compared, and :data:`~compaction_audit.recall.texthelper.SURVIVAL_MAX_PAIRS`,
    discriminators looked up).  Returns the summary texts past them, checked against
    their own children only, and whether the second stopped the checks there.
    """
    jobs = jobs if jobs is not None else TextJobs.start(session, items)
    try:
        jobs.plan(session, items, series)
        jobs.extract_into(extracted)
        jobs.survive_into(extracted, survived)
    finally:
        jobs.close()
    return jobs.shallow(), jobs.by_pairs


def fold_checks(session: Session, extracted: Extracted | None = None,
                survived: Survived | None = None,
                items: pl.DataFrame | None = None) -> pl.DataFrame:
    """Compare every child of every fold with the fold's text (one row per edge).

    Python visits each distinct (child text, span type, fold text) once (the child's
    discriminators that do not survive in the fold's text,
    :func:`~compaction_audit.recall.textwork.survival_flags`); the dropped discriminators
    are collected flat, joined to the edges and grouped into the ``dropped`` list column
    by Polars.
    """
    items = items if items is not None else typed_items(session)
    edges = session.edges
    if not edges.height:  # no fold: no row, no text compared (issue 14, fleet audits)
        return kept_for_schemas("fold_checks", (edges, items),
                                lambda: _fold_rows(edges, items, Extracted(), {}))
    return _fold_rows(edges, items, extracted if extracted is not None else Extracted(),
                      survived)


def _fold_rows(edges: pl.DataFrame, items: pl.DataFrame, found_in: Extracted,
               survived: Survived | None) -> pl.DataFrame:
    """:func:`fold_checks` of ``edges`` (``session.edges``) over ``items`` (typed)."""
    # texts named by index on the edges ("ft", "ct"): a fold text of 100 KB over 2,500
    # children was copied onto every edge (issue 11, class 5, sixth pass's F1)
    text_at = (items.select("text").drop_nulls().unique().with_row_index("_t")
               .with_columns(pl.col("_t").cast(pl.Int64)))
    text_list = text_at["text"].to_list()
    indexed = items.join(text_at, on="text", how="left").drop("text").rename({"_t": "text"})
    texts = (  # every edge with what the checks and the result read, in one join each
        edges.select("parent", "child", "ri", "line").with_row_index("_edge")
        .with_columns(pl.col("_edge").cast(pl.Int64))
        .join(indexed.select(pl.col("id").alias("parent"), pl.col("text").alias("ft"),
                             pl.col("accounting").is_not_null().alias("acc")),
              on="parent", how="left")
        .join(indexed.select(pl.col("id").alias("child"), pl.col("text").alias("ct"),
                           pl.col("salience_class").alias("cls"), "stype", "gone_ri",
                           "source"),
              on="child", how="left")
        .sort("_edge")
        .with_columns(pl.when(pl.col("ft").is_null() | pl.col("ct").is_null())
                      .then(pl.when(pl.col("cls") == "discriminating")
                            .then(pl.lit("salience_class")).otherwise(pl.lit("not-possible")))
                      .otherwise(pl.lit("text")).alias("check"))
    )
    texted = texts.filter(pl.col("check") == "text")
    # Python visits each distinct (child text, type, fold text) once: a child folded
    # again with the same fold text drops the same discriminators
    distinct = texted.select("ct", "stype", "ft").unique()
    compared: list[tuple[TextKey, str]] = []
    compared_at: list[tuple[int, str, int]] = []
    for ct, stype, ft in zip(distinct["ct"].to_list(), distinct["stype"].to_list(),
                             distinct["ft"].to_list(), strict=True):
        if found_in[(text_list[ct], stype)]:
            compared.append(((text_list[ct], stype), text_list[ft]))
            compared_at.append((ct, stype, ft))
    memo: Survived = survived if survived is not None else {}
    todo = [key for key in compared if key not in memo]
    memo.update(zip(todo, survival_flags([(found_in[c], f) for c, f in todo]), strict=True))
    # one row per drop, keyed by the (child text, type, fold text) it came from by its
    # index in ``compared``: a child's text repeated on each of its drops took 650 MB
    # for one 130 KB text holding 5,000 facts (issue 11, class 5, fresh pass F3's class)
    drops: dict[str, list[Any]] = {"_key": [], "pos": [], "kind": [], "text": [],
                                   "norm": [], "rank": []}
    for index, key in enumerate(compared):
        for pos, (d, kept) in enumerate(zip(found_in[key[0]], memo[key], strict=True)):
            if not kept:
                drops["_key"].append(index)
                drops["pos"].append(pos)
                drops["kind"].append(d.kind.value)
                drops["text"].append(d.text)
                drops["norm"].append(d.norm)
                drops["rank"].append(ext.KIND_RANK[d.kind])
    dropped = pl.DataFrame(drops, schema={"_key": pl.Int64, "pos": pl.Int64,
                                          "kind": pl.String, "text": pl.String,
                                          "norm": pl.String, "rank": pl.Int64})
    keys = pl.DataFrame({"ct": [c for c, _, _ in compared_at],
                         "stype": [t for _, t, _ in compared_at],
                         "ft": [f for _, _, f in compared_at]},
                        schema={"ct": pl.Int64, "stype": pl.String, "ft": pl.Int64}
                        ).with_row_index("_key").with_columns(pl.col("_key").cast(pl.Int64))
    lost = (
        texted.select("_edge", "ct", "stype", "ft").join(keys, on=["ct", "stype", "ft"])
        .select("_edge", "_key").join(dropped, on="_key")
        .sort("_edge", "pos")
        .group_by("_edge", maintain_order=True)
        .agg(pl.struct("kind", "text", "norm", "rank").alias("dropped"))
    )
    # matched rows joined, the others added with a null list: a left join copies the
    # list of a one-row ``lost`` into every edge, matched or not (Polars 2.1; 10,000 lost
    # facts of one fold over 10,000 edges asked for 5.7 GB: issue 11, class 5, F3)
    unmatched = texts.join(lost, on="_edge", how="anti").with_columns(
        pl.lit(None, lost.schema["dropped"]).alias("dropped"))
    return (
        pl.concat([texts.join(lost, on="_edge", how="inner"), unmatched])
        .sort("_edge")
        .select(
            pl.col("parent").alias("fold"), "child", "ri", "line",
            pl.col("acc").alias("accounted"),
            (pl.col("gone_ri").is_null() | (pl.col("gone_ri") > pl.col("ri")))
            .alias("child_resolvable"),
            "check", pl.col("source").alias("child_source"),
            pl.col("stype").alias("child_type"),
            pl.col("dropped").fill_null(pl.lit([], DROP_SCHEMA)).cast(DROP_SCHEMA),
        )
    )


_VALUE_TYPES = ("code", "tool_output")
_NAME_KINDS = ("identifier", "link")


def _occurrences(session: Session, series: Series,
                 extracted: Extracted | None = None,
                 survived: Survived | None = None,
                 items: pl.DataFrame | None = None,
                 shallow: set[str] | None = None
                 ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``(occ, held, names)``: (key, span) for discriminators of raw spans; (key,
    summary) for summaries whose text still states a discriminator of one of their
    leaves; and the identifiers and links of code and tool output that no prose or spec
    span used before the compaction (issue 10, point 1), left out of ``occ``.

    ``occ`` columns: ``key``, ``id``, ``kind``, ``text``, ``rank``, ``stype`` (span
    type), ``line`` (1-based line of the discriminator in its span's cleaned text).
    "Before the compaction": a prose or spec span born no later than the round at which
    the tool span stops being resolvable (any round while it stays resolvable).
    Python visits each distinct (text, type) once for ``occ`` and each distinct (leaf
    text, type, summary text) of the closure once for ``held``, only for leaves with a
    discriminator; Polars joins the results back to the spans and the closure pairs.
    A summary whose text is in ``shallow`` (past the survival cap,
    :func:`_text_work`) is compared with its own children only."""
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
    rows: dict[str, list[Any]] = {"_d": [], "pos": [], "key": [], "kind": [],
                                  "text": [], "rank": [], "line": []}
    distinct = one(spans.lazy().select("text", "stype").unique().with_row_index("_d")
                   .with_columns(pl.col("_d").cast(pl.Int64)))
    for index, body, stype in zip(distinct["_d"].to_list(), distinct["text"].to_list(),
                                  distinct["stype"].to_list(), strict=True):
        for pos, d in enumerate(found_in[(body, stype)]):
            kind = _KIND_VALUE[d.kind]
            rows["_d"].append(index)
            rows["pos"].append(pos)
            rows["key"].append(f"{kind}:{d.norm}")
            rows["kind"].append(kind)
            rows["text"].append(d.text)
            rows["rank"].append(ext.KIND_RANK[d.kind])
            rows["line"].append(d.line)
    table = pl.DataFrame(rows, schema={"_d": pl.Int64, "pos": pl.Int64,
                                       "key": pl.String, "kind": pl.String, "text": pl.String,
                                       "rank": pl.Int64, "line": pl.Int64})
    del rows
    held_plan = (spans.lazy().select("id", pl.col("text").alias("body"), "stype")
                 .with_row_index("_row")
                 .join(distinct.lazy().rename({"text": "body"}), on=["body", "stype"])
                 .select("_row", "id", "_d").join(table.lazy(), on="_d").sort("_row", "pos"))
    del distinct
    held_by, occ = collect(held_plan, held_plan.select(
        "key", "id", "kind", "text", "rank", "line").join(
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
    bodies_at = list(zip(texts_b["body"].to_list(), texts_b["stype"].to_list(), strict=True))
    summary_at = texts_s["s"].to_list()
    distinct_pairs = pairs.select("_b", "_s").unique()
    memo: Survived = survived if survived is not None else {}
    index_pairs = list(zip(distinct_pairs["_b"].to_list(), distinct_pairs["_s"].to_list(),
                           strict=True))
    keys = [(bodies_at[b], summary_at[s]) for b, s in index_pairs]
    del distinct_pairs
    todo = [key for key in keys if key not in memo]
    memo.update(zip(todo, survival_flags([(found_in[leaf_key], body) for leaf_key, body in todo]),
                    strict=True))
    # each pair names the flags it got by number, and Polars joins them to the leaf's
    # keys: the rows made in Python grow with the pairs, not with the facts each pair
    # keeps (every summary of a chain keeps a clause of each leaf below it: issue 11,
    # class 5)
    shapes: dict[tuple[bool, ...], int] = {}
    kept: dict[str, list[int]] = {"_b": [], "_s": [], "_f": []}
    for (b, s), key in zip(index_pairs, keys, strict=True):
        flags = memo[key]
        f = shapes.get(flags)
        if f is None:
            f = shapes[flags] = len(shapes) if True in flags else -1
        if f >= 0:  # most summaries keep none of a leaf's discriminators
            kept["_b"].append(b)
            kept["_s"].append(s)
            kept["_f"].append(f)
    at: dict[str, list[int]] = {"_f": [], "pos": []}
    for flags, f in shapes.items():
        for pos, survives in enumerate(flags):
            if survives and f >= 0:
                at["_f"].append(f)
                at["pos"].append(pos)
    leaf_keys: dict[str, list[Any]] = {"_b": [], "pos": [], "key": []}
    for b in set(kept["_b"]):
        for pos, d in enumerate(found_in[bodies_at[b]]):
            leaf_keys["_b"].append(b)
            leaf_keys["pos"].append(pos)
            leaf_keys["key"].append(_key(d))
    surviving = (
        pl.DataFrame(kept, schema={"_b": pl.Int64, "_s": pl.Int64, "_f": pl.Int64})
        .join(pl.DataFrame(at, schema={"_f": pl.Int64, "pos": pl.Int64}), on="_f")
        .join(pl.DataFrame(leaf_keys, schema={"_b": pl.Int64, "pos": pl.Int64,
                                              "key": pl.String}), on=["_b", "pos"])
        .select("_b", "_s", "key"))
    del kept, leaf_keys
    held = pairs.join(surviving, on=["_b", "_s"]).select("key", "id").unique()
    return occ, held, names


def _prose_names(session: Session, items: pl.DataFrame, occ: pl.DataFrame
                 ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split ``occ``: identifiers and links of code and tool output stay only when a prose
    or spec span born no later than the round the tool span stops being resolvable
    states the same key (issue 10, point 1).  Returns (kept occ, left-out rows)."""
    is_name = pl.col("stype").is_in(_VALUE_TYPES) & pl.col("kind").is_in(_NAME_KINDS)
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


def _merge(intervals: pl.DataFrame, by: str) -> pl.DataFrame:
    """Merge overlapping (or touching) [start, end) intervals per ``by`` into disjoint
    ones; columns ``by``, ``start``, ``end``, sorted by ``by`` then ``start``.

    One integer sort and one cumulative max over the whole table, not a window per
    value of ``by`` (as :func:`compaction_audit.reachability.reachable_intervals`): each
    value gets a number (its categorical code) and every bound is shifted by that number
    times the span of the bounds, so the values' intervals never overlap."""
    if intervals.height == 0:
        return intervals.select(by, "start", "end")
    low = int(intervals["start"].min())  # type: ignore[arg-type]
    width = int(intervals["end"].max()) - low + 1  # type: ignore[arg-type]
    lead = pl.col("_code").cast(pl.Int64) * width - low
    keyed = one(  # collected once, so that the starts and the ends read the same codes
        intervals.lazy().select(by, "start", "end",
                                pl.col(by).cast(pl.Categorical).to_physical().alias("_code"))
        .with_columns((lead + pl.col("start")).alias("_key"), (lead + pl.col("end")).alias("_to"))
        .sort("_key")
        .with_columns(pl.col("_to").cum_max())
    ).lazy()
    new = (pl.col("_key") > pl.col("_to").shift(1)).fill_null(True)
    flagged = keyed.with_columns(new.alias("_new"), new.shift(-1).fill_null(True).alias("_last"))
    starts, ends = collect(flagged.filter("_new").select(by, "start"),
                           flagged.filter("_last").select((pl.col("_to") - lead).alias("end")))
    return starts.hstack(ends).sort(by, "start")


def _without_names(folds: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """``folds`` with the identifiers and links no prose used (``names``, per child span)
    left out of each ``dropped`` list: a fold does not lose what was never a fact."""
    if names.height == 0 or folds.filter(pl.col("dropped").list.len() > 0).height == 0:
        return folds
    rows = (folds.lazy().with_row_index("_row").explode("dropped")  # one plan (issue 14)
            .with_columns((pl.col("dropped").struct.field("kind") + ":"
                           + pl.col("dropped").struct.field("norm")).alias("_key"))
            .join(names.lazy().select(pl.col("key").alias("_key"), pl.col("id").alias("child"),
                                      pl.lit(True).alias("_name")).unique(),
                  on=["_key", "child"], how="left"))
    kept = (rows.filter(pl.col("dropped").is_not_null() & pl.col("_name").is_null())
            .group_by("_row").agg(pl.col("dropped")))
    indexed = folds.lazy().with_row_index("_row").drop("dropped")
    unmatched = indexed.join(kept, on="_row", how="anti").with_columns(  # as in _lost_by_fold
        pl.lit(None, kept.collect_schema()["dropped"]).alias("dropped"))
    return one(pl.concat([indexed.join(kept, on="_row", how="inner"), unmatched])
            .sort("_row").drop("_row")
            .with_columns(pl.col("dropped").fill_null(pl.lit([], DROP_SCHEMA))
                          .cast(DROP_SCHEMA))
            .select(folds.columns))


def analyse(session: Session, series: Series, items: pl.DataFrame | None = None,
            jobs: TextJobs | None = None) -> Recall:
    """Run the whole recall analysis of ``session`` (see :class:`Recall`); ``items``:
    :func:`typed_items` of the session when the caller has it already; ``jobs``: its
    text jobs (:meth:`~compaction_audit.recall.textwork.TextJobs.start` on the same
    ``items``) when the caller started them early (they are closed here)."""
    n = session.n_rounds
    items = items if items is not None else typed_items(session)
    extracted = Extracted()
    survived: Survived = {}
    shallow, by_pairs = _text_work(session, items, series, extracted, survived, jobs)
    folds = fold_checks(session, extracted, survived, items)
    occ, held, names = _occurrences(session, series, extracted, survived, items, shallow)
    folds = _without_names(folds, names)
    if jobs is not None:  # asked-again and flips index user and summary texts (as prose)
        jobs.narrow(items.filter(((pl.col("kind") == "span") & (pl.col("source") == "user"))
                                 | (pl.col("kind") == "summary"))
                    .select("text").drop_nulls().unique()["text"].to_list())
    del extracted, survived  # the text tables are not read again: free them early
    life = session.items.select("id", pl.col("ri").alias("born"),
                                resolvable_end(session).alias("gone"))
    recoverable = one(pl.concat([  # one plan (issue 14, fleet audits)
        occ.lazy().select("key", "id").unique().join(life.lazy(), on="id")
        .select("key", pl.col("born").alias("start"), pl.col("gone").alias("end")),
        held.lazy().join(session.membership.lazy(), on="id").select("key", "start", "end"),
    ]).filter(pl.col("start") < pl.col("end")))
    drops_plan = (
        folds.lazy().filter(pl.col("dropped").list.len() > 0).explode("dropped")
        .select(pl.col("dropped").struct.field("kind").alias("k"),
                pl.col("dropped").struct.field("norm").alias("norm"), "fold", "ri", "line",
                "child")
        .select((pl.col("k") + ":" + pl.col("norm")).alias("key"), "fold", "ri", "line",
                "child")
        .sort("ri")
    )
    dropped_keys = drops_plan.group_by("key", maintain_order=True).first()
    gaps_plan = (
        _merge(recoverable, "key").lazy()
        .with_columns(pl.col("start").shift(-1).over("key").fill_null(n).alias("next"))
        .select("key", pl.col("end").alias("start"), pl.col("next").alias("end"))
        .filter(pl.col("start") < pl.col("end"))
        .join(dropped_keys.select("key", pl.lit(True).alias("by_fold")), on="key", how="left")
        .with_columns(pl.col("by_fold").fill_null(False))
    )
    first_seen_plan = occ.lazy().join(life.lazy(), on="id").group_by("key").agg(
        pl.col("born").min().alias("start")).with_columns(pl.lit(n, pl.Int64).alias("end"))
    drops, gaps, first_seen = collect(drops_plan, gaps_plan, first_seen_plan)
    debt = one(
        interval_sum(first_seen, n).lazy().rename({"value": "discriminators_seen"})
        .join(interval_sums(gaps, n, {"recall_debt": pl.lit(1, pl.Int64),
                                      "recall_debt_fold": pl.col("by_fold").cast(pl.Int64)})
              .lazy(), on="ri")
        .with_columns((pl.col("recall_debt") - pl.col("recall_debt_fold"))
                      .alias("recall_debt_eviction"))
        .sort("ri")
    )
    losses = pl.concat([gaps.select("key", "start", "by_fold"),
                        _fold_losses(session, drops, occ, held, life)])
    limits: list[Limit] = [] if not shallow else [_survival_limit(items, shallow, by_pairs)]
    lost = _lost_table(session, items, occ, names, losses, drops, limits)
    floor = _floor(session, series, occ, held, life)
    return Recall(folds, debt, lost, floor, _disagreements(session, occ),
                  redacted_share(session), limits)


def _survival_limit(items: pl.DataFrame, shallow: set[str], by_pairs: bool) -> Limit:
    """The survival checks stopped at their cap (:func:`_text_work`; ``by_pairs``: the
    cap on discriminators looked up, else the one on clause classes compared): at the
    first summary (in log order) whose text is past it; ``left``: the summaries past
    it."""
    past = (items.filter((pl.col("kind") == "summary") & pl.col("text").is_in(list(shallow)))
            .sort("ri", "line", maintain_order=True))
    first = past.row(0, named=True)
    cap, unit = ((textwork.SURVIVAL_MAX_PAIRS,
                  "checks of a leaf's discriminators against a summary above its fold")
                 if by_pairs else
                 (textwork.SURVIVAL_MAX_CHECKS,
                  "comparisons of a class of clauses with a summary above its leaves' fold"))
    return Limit("recall-survival", cap, unit, f"summary {first['id']!r}", first["round"],
                 first["line"], past.height,
                 "summaries compared with their own children only, leaves below them")


def _fold_losses(session: Session, drops: pl.DataFrame, occ: pl.DataFrame,
                 held: pl.DataFrame, life: pl.DataFrame) -> pl.DataFrame:
    """:func:`_fold_losses_of`; with no drops (no fold dropped anything: most small
    traces), its empty result, kept per input schemas (issue 14, fleet audits)."""
    if drops.height:
        return _fold_losses_of(session, drops, occ, held, life)
    return kept_for_schemas(
        "fold_losses", (drops, occ, held, life, session.membership),
        lambda: _fold_losses_of(session, drops, occ, held, life))


def _fold_losses_of(session: Session, drops: pl.DataFrame, occ: pl.DataFrame,
                    held: pl.DataFrame, life: pl.DataFrame) -> pl.DataFrame:
    """Keys a fold dropped at round index ``ri`` that nothing held at that fold: no raw
    span born before ``ri`` and still resolvable at ``ri``, no working-set summary at
    ``ri`` that keeps it.  A span born at ``ri`` (read again after the compaction, in
    the same round) does not count: loss is judged at the fold (issue 10, point 4).

    Interval arithmetic: each span holds its keys over ``[born + 1, gone)`` here, each
    keeping summary over its membership; a drop is a loss when ``ri`` falls in no merged
    interval of its key.  Columns ``key``, ``start`` (= ``ri``), ``by_fold`` (true).

    Each drop is looked up in its key's merged intervals by an as-of join (the last
    interval starting at or before ``ri``; merged intervals are disjoint, so ``ri`` is
    in one of them only if it is in that one): one row per drop.  Joining every drop of
    a key with every interval of the key grows with rounds squared (a key dropped at
    1,200 rounds and held over 80 intervals: 1.4 million rows at 18 MB, 22 million and
    an abort at 73 MB; adv15 F4, issue 11 class 5)."""
    at = drops.select("key", "ri").unique()
    keys = at.lazy().select("key").unique()
    strict = one(pl.concat([  # one plan (issue 14, fleet audits)
        occ.lazy().select("key", "id").unique().join(keys, on="key").join(life.lazy(), on="id")
        .select("key", (pl.col("born") + 1).alias("start"), pl.col("gone").alias("end")),
        held.lazy().join(keys, on="key").join(session.membership.lazy(), on="id")
        .select("key", "start", "end"),
    ]).filter(pl.col("start") < pl.col("end")))
    return one(at.lazy().sort("ri")  # one plan (issue 14, fleet audits)
               .join_asof(_merge(strict, "key").lazy().sort("start"), left_on="ri",
                          right_on="start", by="key", strategy="backward",
                          check_sortedness=False)
               .filter(pl.col("end").is_null() | (pl.col("end") <= pl.col("ri")))
               .select("key", pl.col("ri").alias("start"), pl.lit(True).alias("by_fold")))


def _lost_table(session: Session, items: pl.DataFrame, occ: pl.DataFrame,
                names: pl.DataFrame, losses: pl.DataFrame,
                drops: pl.DataFrame, limits: list[Limit]) -> pl.DataFrame:
    """:func:`_lost_rows`; with no losses, its empty result (nothing is checked, no
    limit is met), kept per input schemas (issue 14, fleet audits)."""
    if losses.height:
        return _lost_rows(session, items, occ, names, losses, drops, limits)
    return kept_for_schemas(
        "lost_table", (session.rounds, items, occ, names, losses, drops),
        lambda: _lost_rows(session, items, occ, names, losses, drops, limits))


def _lost_rows(session: Session, items: pl.DataFrame, occ: pl.DataFrame,
               names: pl.DataFrame, losses: pl.DataFrame,
               drops: pl.DataFrame, limits: list[Limit]) -> pl.DataFrame:
    """First loss of each discriminator (a gap in its recoverability, or a fold that
    dropped it with nothing else holding it), with source span, its type and the log
    line that stated it (``span_line``: the earliest span holding it; ``text_line``:
    its 1-based line inside that span's cleaned text), the
    fold that lost it, the round, whether a user span stated it again afterwards, and
    whether a later action reused it (:func:`compaction_audit.recall.harm.reuse`).

    ``reread_round``/``reread_line``/``reread_span``: the first later span (born at the
    loss round or after, in log order) that holds the fact again, e.g. the agent re-ran the command
    that printed it: the fold still lost it (issue 10, point 4), but the context got it
    back there; null when nothing did.  A person's span is not a re-read: a person who
    names the fact again is asking about it (``asked_again_round``), and a question that
    names an identifier does not bring back the value it stood for."""
    # a few plans, each collected once (issue 14, fleet audits): the lost rows and the
    # user spans, which asked_again and reuse read as frames, then the table
    rounds = session.rounds.lazy().select("ri", "round", "line")
    first = losses.lazy().sort("start", descending=False).group_by(
        "key", maintain_order=True).agg(pl.col("start").first(), pl.col("by_fold").any())
    spans = items.lazy().select("id", pl.col("ri").alias("born"), "source", "source_line")
    source = (occ.lazy().rename({"line": "text_line"}).join(spans, on="id").sort("born")
              .group_by("key", maintain_order=True).first())
    fold_at = (first.select("key", "start").join(drops.lazy(), on="key")
               .filter(pl.col("ri") <= pl.col("start")).sort("ri", descending=True)
               .group_by("key", maintain_order=True).first()
               .join(rounds.select("ri", "round"), on="ri")
               .select("key", "fold", pl.col("round").alias("fold_round"),
                       pl.col("line").alias("fold_line")))
    lost_plan = (
        first.join(source, on="key")
        .join(rounds.rename({"ri": "start", "round": "lost_round", "line": "lost_line"}),
              on="start")
        .join(fold_at, on="key", how="left")
    )
    user_plan = items.lazy().filter(
        (pl.col("kind") == "span") & (pl.col("source") == "user")
        & (pl.col("stype") != "harness") & pl.col("text").is_not_null())
    lost, user_spans = collect(lost_plan, user_plan)
    # a bare number (a quantity without a unit) never counts alone (issue 12, point 5):
    # only asked_again judges it, with the words stated with it
    users = occ.lazy().filter(~(pl.col("key").str.starts_with("quantity:")
                                & ~pl.col("key").str.contains(" "))).join(
        user_spans.lazy().select("id", "ri", "round"), on="id")
    again = (pl.concat([
        lost.lazy().select("key", "start").join(users, on="key").select(
            "key", "start", "id", "ri", "round"),
        # in a total order: past its cap the check stops at the same item every run
        asked_again(lost.select("key", "kind", "text", "start").sort("start", "key"),
                    user_spans.select("id", "ri", "round", "text"), limits).lazy(),
    ]).filter(pl.col("ri") > pl.col("start")).sort("ri", "id")
        .group_by("key", maintain_order=True)
        .agg(pl.col("id").first().alias("asked_again_span"),
             pl.col("round").first().alias("asked_again_round")))
    reread = (
        lost.lazy().select("key", "start", pl.col("id").alias("src"))
        .join(occ.lazy().select("key", "id").join(spans, on="id"), on="key")
        .filter((pl.col("born") >= pl.col("start")) & (pl.col("id") != pl.col("src"))
                & (pl.col("source") != "user"))
        .join(rounds.select(pl.col("ri").alias("born"), "round"), on="born")
        .sort("born", "source_line", "id")
        .group_by("key", maintain_order=True)
        .agg(pl.col("round").first().alias("reread_round"),
             pl.col("source_line").first().alias("reread_line"),
             pl.col("id").first().alias("reread_span")))
    reused = reuse(lost.select("key", "start", pl.col("id").alias("span")),
                   pl.concat([occ.select("key", "id"), names.select("key", "id")]), items,
                   session.rounds)
    return one(
        lost.lazy().join(again, on="key", how="left").join(reused.lazy(), on="key", how="left")
        .join(reread, on="key", how="left")
        .select("kind", "text", "rank", pl.col("id").alias("span"),
                pl.col("source").alias("span_source"), pl.col("stype").alias("span_type"),
                pl.col("source_line").alias("span_line"), "text_line",
                pl.when(pl.col("by_fold")).then(pl.lit("fold")).otherwise(pl.lit("eviction"))
                .alias("cause"), "fold", "fold_round", "fold_line", "lost_round", "lost_line",
                "asked_again_span", "asked_again_round", "reused_round", "reused_span",
                "reused_destructive", "reread_round", "reread_line", "reread_span", "key")
        .sort(["rank", "lost_round", "key"], descending=[True, False, False])
    )


def _floor(session: Session, series: Series, occ: pl.DataFrame, held: pl.DataFrame,
           life: pl.DataFrame) -> pl.DataFrame:
    """Intervals ``[start, end)`` of round indices during which a discriminating span is
    covered by a working-set summary with fewer than ``recall_floor`` resolvable
    references (the span itself while resolvable, and each working-set summary whose
    text keeps all its discriminators).

    Spans whose own fold recorded ``accounting`` are left out: their surrendered
    precision was debited explicitly (seed 002, "Decision Boundary"), and
    topic-only-fold reports them.  Columns: ``leaf``, ``start``, ``end``, ``rank``
    (worst kind rank, null when only the logged salience_class marks it), ``source``.
    """
    floor = session.header.recall_floor
    empty = pl.DataFrame(schema={"leaf": pl.String, "start": pl.Int64, "end": pl.Int64,
                                 "rank": pl.Int64, "source": pl.String})
    if floor == 0:
        return empty
    accounted = session.items.lazy().filter(pl.col("accounting").is_not_null()).select("id")
    accounted_children = session.edges.lazy().join(accounted, left_on="parent", right_on="id")
    discriminating = one(pl.concat([  # one plan (issue 14, fleet audits)
        occ.lazy().select("id").unique(),
        session.items.lazy().filter((pl.col("kind") == "span")
                                    & (pl.col("salience_class") == "discriminating"))
        .select("id"),
    ]).unique().join(accounted_children, left_on="id", right_on="child", how="anti"))
    if discriminating.height == 0:
        return empty
    summaries = session.items.lazy().filter(pl.col("kind") == "summary").select("id")
    need, covering = collect(  # plans.collect (issue 14, fleet audits)
        occ.lazy().group_by("id").agg(pl.col("key").n_unique().alias("need")),
        series.closure.lazy().join(summaries, left_on="item", right_on="id")
        .join(discriminating.lazy(), left_on="leaf", right_on="id")
        .join(session.membership.lazy(), left_on="item", right_on="id"))
    # (summary, leaf) pairs whose summary text keeps every key of the leaf; only pairs
    # of the closure are counted (joining held and occ on the key alone pairs every
    # summary with every span sharing a common key: quadratic in long sessions)
    preserving = covering.lazy().join(_keeps(covering, occ, held, need).lazy(),
                                      left_on=["item", "leaf"], right_on=["id", "leaf"])
    own = discriminating.lazy().join(life.lazy(), on="id").select(
        pl.col("id").alias("leaf"), pl.col("born").alias("start"), pl.col("gone").alias("end"))
    covering_plan = covering.lazy()
    events_plan = pl.concat([
        covering_plan.select("leaf", pl.col("start").alias("ri"), pl.lit(1).alias("cov"),
                             pl.lit(0).alias("ref")),
        covering_plan.select("leaf", pl.col("end").alias("ri"), pl.lit(-1).alias("cov"),
                             pl.lit(0).alias("ref")),
        pl.concat([own, preserving.select("leaf", "start", "end")]).select(
            "leaf", pl.col("start").alias("ri"), pl.lit(0).alias("cov"),
            pl.lit(1).alias("ref")),
        pl.concat([own, preserving.select("leaf", "start", "end")]).select(
            "leaf", pl.col("end").alias("ri"), pl.lit(0).alias("cov"),
            pl.lit(-1).alias("ref")),
    ])
    n = session.n_rounds
    # leaves numbered, and the running sums per leaf taken from one cumulative sum over
    # the rows sorted by (leaf number, round) less its value where the leaf starts: no
    # sort of strings and no window per leaf over every event (issue 14)
    events, numbered = collect(  # numbered once: both joins below read the same numbers
        events_plan, events_plan.select(pl.col("leaf").unique()).with_row_index("_leaf"))
    first = (pl.col("_leaf") != pl.col("_leaf").shift(1)).fill_null(True)
    same_next = (pl.col("_leaf").shift(-1) == pl.col("_leaf")).fill_null(False)
    state = one(
        events.lazy().join(numbered.lazy(), on="leaf").group_by("_leaf", "ri")
        .agg(pl.col("cov", "ref").sum()).sort("_leaf", "ri")
        .with_columns([(pl.col(c).cum_sum()
                        - pl.when(first).then(pl.col(c).cum_sum() - pl.col(c)).forward_fill())
                       .alias(c) for c in ("cov", "ref")]
                      + [pl.when(same_next).then(pl.col("ri").shift(-1)).otherwise(n)
                         .alias("end")])
        .filter((pl.col("cov") > 0) & (pl.col("ref") < floor) & (pl.col("ri") < n))
        .join(numbered.lazy(), on="_leaf").drop("_leaf")
    )
    if state.height == 0:
        return empty
    worst = occ.lazy().group_by("id").agg(pl.col("rank").max().alias("rank"))
    # adjacent segments of one leaf become one interval: a span is "new" below the floor
    # only at the start of an interval
    prev_end = pl.col("end").shift(1).over("leaf")
    return one(
        state.lazy().select("leaf", "ri", "end").sort("leaf", "ri")
        .with_columns((prev_end.is_null() | (pl.col("ri") != prev_end)).cast(pl.Int64)
                      .cum_sum().alias("_run"))
        .group_by("leaf", "_run").agg(pl.col("ri").min().alias("start"), pl.col("end").max())
        .drop("_run")
        .join(worst, left_on="leaf", right_on="id", how="left")
        .join(session.items.lazy().select("id", "source"), left_on="leaf", right_on="id")
        .sort("start", "leaf")
    )


def _keeps(covering: pl.DataFrame, occ: pl.DataFrame, held: pl.DataFrame,
           need: pl.DataFrame) -> pl.DataFrame:
    """The (summary ``id``, ``leaf``) pairs of ``covering`` whose summary keeps (``held``)
    as many of the leaf's ``occ`` rows as the leaf has keys (``need``).

    The join of the pairs with the leaves' keys has one row per (pair, key of the leaf):
    it is made on integer codes, and only with keys some summary keeps (a row of another
    key counts nothing), so that a closure of 1.4 million pairs over leaves of 8 keys
    (the ``text-chain`` shape) does not hold 11 million rows of strings (1 GB; issue 11,
    class 5)."""
    keys, codes = collect(  # the codes in one collect (issue 14, fleet audits)
        held.lazy().select("key").unique().with_row_index("_k"),
        pl.concat([covering.lazy().select(pl.col("item").alias("id")),
                   covering.lazy().select(pl.col("leaf").alias("id"))])
        .unique().with_row_index("_i"))
    # the sizes of the joins below are what class 5 bounds (measured in
    # tests/recall/test_survival_cap.py, eager or lazy: tests/joinsize.py)
    pairs = (covering.select(pl.col("item").alias("id"), "leaf").unique()
             .join(codes.rename({"_i": "_s"}), on="id")
             .join(codes.rename({"id": "leaf", "_i": "_l"}), on="leaf"))
    kept = (pairs.select("_s", "_l")
            .join(occ.select("key", pl.col("id").alias("leaf")).join(keys, on="key")
                  .join(codes.rename({"id": "leaf", "_i": "_l"}), on="leaf")
                  .select("_l", "_k"), on="_l")
            .join(held.join(keys, on="key").join(codes.rename({"_i": "_s"}), on="id")
                  .select("_k", "_s"), on=["_k", "_s"])
            .group_by("_s", "_l").agg(pl.len().alias("kept")))
    return (pairs.join(kept, on=["_s", "_l"])
            .join(need, left_on="leaf", right_on="id")
            .filter(pl.col("kept") >= pl.col("need")).select("id", "leaf"))


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
