"""The fold checks: every child of every fold compared with the fold's text.

:func:`_text_work` extracts every text the analysis reads and checks every pair it
compares (shared with a helper process: :mod:`compaction_audit.recall.textwork`);
:func:`fold_checks` turns the dropped discriminators into one row per fold edge
(:data:`~compaction_audit.recall.analysis.model.FOLD_SCHEMA`), and :func:`_without_names`
leaves out the names no prose used.
"""

from __future__ import annotations

from itertools import filterfalse

import polars as pl

from compaction_audit.emptyframes import kept_for_schemas
from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.recall.analysis.items import typed_items
from compaction_audit.recall.analysis.model import DROP_SCHEMA
from compaction_audit.recall.analysis.occurrences import DiscriminatorRows
from compaction_audit.recall.factkeys import fact_key, key_norm
from compaction_audit.recall.textwork import Extracted, Survived, TextJobs, survival_flags
from compaction_audit.series import Series


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
                items: pl.DataFrame | None = None,
                rows: DiscriminatorRows | None = None) -> pl.DataFrame:
    """Compare every child of every fold with the fold's text (one row per edge).

    Python visits each distinct (child text, span type, fold text) once (the child's
    discriminators that do not survive in the fold's text,
    :func:`~compaction_audit.recall.textwork.survival_flags`); the dropped discriminators
    are collected flat, joined to the edges and grouped into the ``dropped`` list column
    by Polars.  ``rows``: the analysis's
    :class:`~compaction_audit.recall.analysis.occurrences.DiscriminatorRows`, else
    read here.
    """
    items = items if items is not None else typed_items(session)
    edges = session.edges
    if not edges.height:  # no fold: no row, no text compared (issue 14, fleet audits)
        return kept_for_schemas("fold_checks", (edges, items),
                                lambda: _fold_rows(edges, items, Extracted(), {}))
    checks = _fold_rows(edges, items, extracted if extracted is not None else Extracted(),
                        survived, rows)
    _check_drops(session.path, checks)
    return checks


MAX_FOLD_DROPS = 2_000_000
"""Most (fold, child, dropped discriminator) rows an audit goes on with (docs/
performance.md, "Limits").  Each is a fact a fold finding lists, ranks and keys, at
about 0.8 KB and 5 µs over the rest of the audit, and they grow with folds x children
x facts per child: a 391 KB log of 300 summaries, each folding the same 100 spans of 50
facts that stay in the working set, held 1,860,000 and took 3.0 GB and 45 s (adv75
#1).  The benchmark grid's 254 MB text cell holds 72,828.  Past it the audit stops
with a one-line error at the line of the summary that crossed it (exit 2), as the
provenance closure does (:data:`compaction_audit.closure.MAX_CLOSURE_PAIRS`)."""


MAX_FOLD_DROP_BYTES = 256 * 2**20
"""Most bytes of those rows' text and ids (each row holds its fact's text, its fold's id
and its child's id): rows of long facts or long ids cost with their length (adv76 #2:
1,997,000 rows of 1,500-character version pins, a 2.9 MB log, took 2.9 GB and 35 s
under :data:`MAX_FOLD_DROPS`; adv77 #1: 8,000-character fold ids, 16 GB).  256 MiB is
2,000,000 rows of 134 bytes; past it the audit stops the same way."""


def _check_drops(path: str, checks: pl.DataFrame) -> None:
    """Raise :class:`~compaction_audit.errors.LogError` at the line of the first fold
    (in log order) at which the dropped discriminators of ``checks`` (``fold``,
    ``line``, ``dropped``) pass :data:`MAX_FOLD_DROPS` rows or
    :data:`MAX_FOLD_DROP_BYTES` bytes of text."""
    rows = pl.col("dropped").list.len()
    sizes = checks.select(  # a row holds its fact's text and its fold's and child's ids
        rows.alias("n"),
        (pl.col("dropped").list.eval(pl.element().struct.field("text").str.len_bytes())
         .list.sum().fill_null(0)
         + rows * (pl.col("fold").str.len_bytes() + pl.col("child").str.len_bytes())
         ).alias("bytes"))
    for column, limit, what in (("n", MAX_FOLD_DROPS, "(fold, child, dropped fact) rows"),
                                ("bytes", MAX_FOLD_DROP_BYTES,
                                 "bytes of text and ids of (fold, child, dropped fact) "
                                 "rows")):
        counts = sizes[column]
        if int(counts.sum() or 0) <= limit:
            continue
        from compaction_audit.closure import _short
        from compaction_audit.errors import LogError

        at = int((counts.cum_sum() > limit).arg_max() or 0)
        row = checks.row(at, named=True)
        raise LogError(path, row["line"],
                       f"folds drop too many facts: summary {_short(str(row['fold']))} "
                       f"takes the {what} past {limit:,}: audit the rounds before that "
                       "line on their own (see docs/performance.md, limits)", "summaries")


def _fold_rows(edges: pl.DataFrame, items: pl.DataFrame, found_in: Extracted,
               survived: Survived | None, rows: DiscriminatorRows | None = None
               ) -> pl.DataFrame:
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
    lost = _lost_by_edge(texted, text_at, text_list, found_in,
                         survived if survived is not None else {},
                         rows if rows is not None else DiscriminatorRows(found_in))
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


def _lost_by_edge(texted: pl.DataFrame, text_at: pl.DataFrame, text_list: list[str],
                  found_in: Extracted, memo: Survived, rows: DiscriminatorRows
                  ) -> pl.DataFrame:
    """``_edge``, ``dropped`` (the list of its child's discriminators its fold's text does
    not keep, in the child's order) for each edge of ``texted`` (``_edge``, ``ct``,
    ``stype``, ``ft``: texts by their index ``_t`` in ``text_at``, ``text_list``) that
    drops any.

    Python reads each distinct child (text, type)'s discriminators once (``rows``,
    shared with the occurrence table), the
    flags of each distinct (child, type, fold text) from ``memo`` (computed for those it
    lacks, :func:`~compaction_audit.recall.textwork.survival_flags`) by C-level maps,
    and the places each distinct tuple of flags drops; Polars joins the places to the
    discriminators and the edges (issue 14: a loop over every discriminator of every
    pair was 60 % of the fold checks on the benchmark grid's 254 MB text cell)."""
    distinct = texted.select("ct", "stype", "ft").unique()
    children = (distinct.select("ct", "stype").unique()
                .join(text_at.select(pl.col("_t").alias("ct"), "text"), on="ct"))
    children = children.join(rows.of(children), on=["text", "stype"], nulls_equal=True)
    table = rows.table
    held = table.select("_d").unique()  # a child with no discriminator drops none
    pairs = distinct.join(children.join(held, on="_d").select("ct", "stype", "_d"),
                          on=["ct", "stype"])
    child_keys = list(zip(rows.numbered["text"].to_list(), rows.numbered["stype"].to_list(),
                          strict=True))  # by number: _d
    keys = list(zip(map(child_keys.__getitem__, pairs["_d"].to_list()),
                    map(text_list.__getitem__, pairs["ft"].to_list()), strict=True))
    todo = list(filterfalse(memo.__contains__, keys))
    memo.update(zip(todo, survival_flags([(found_in[c], f) for c, f in todo]), strict=True))
    got = list(map(memo.__getitem__, keys))
    del keys, todo
    number = {flags: n for n, flags in enumerate(dict.fromkeys(got))}
    places: dict[str, list[int]] = {"_f": [], "pos": []}
    for flags, n in number.items():  # the distinct tuples of flags only
        for pos, kept in enumerate(flags):
            if not kept:
                places["_f"].append(n)
                places["pos"].append(pos)
    return (
        texted.select("_edge", "ct", "stype", "ft")
        .join(pairs.with_columns(pl.Series("_f", list(map(number.__getitem__, got)),
                                           pl.Int64)),
              on=["ct", "stype", "ft"])
        .select("_edge", "_d", "_f")
        .join(pl.DataFrame(places, schema={"_f": pl.Int64, "pos": pl.Int64}), on="_f")
        .join(table.select("_d", "pos", "kind", "text",
                           key_norm(pl.col("key"), pl.col("kind")).alias("norm"), "rank"),
              on=["_d", "pos"])
        .sort("_edge", "pos")
        .group_by("_edge", maintain_order=True)
        .agg(pl.struct("kind", "text", "norm", "rank").alias("dropped"))
    )


def _without_names(folds: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """``folds`` with the identifiers and links no prose used (``names``, per child span)
    left out of each ``dropped`` list: a fold does not lose what was never a fact."""
    if names.height == 0 or folds.filter(pl.col("dropped").list.len() > 0).height == 0:
        return folds
    rows = (folds.lazy().with_row_index("_row").explode("dropped")  # one plan (issue 14)
            .with_columns(fact_key(pl.col("dropped").struct.field("kind"),
                                   pl.col("dropped").struct.field("norm"),
                                   pl.col("dropped").struct.field("text")).alias("_key"))
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


def summary_wording(folds: pl.DataFrame, occ: pl.DataFrame, items: pl.DataFrame,
                    held: pl.DataFrame) -> pl.DataFrame:
    """(``key``, ``id``) of each fact a fold dropped from a summary child that no raw
    span states as a fact (``occ``: the raw spans' facts), where that summary keeps no
    fact of its leaves (``held``: ``key``, ``id``): the summary's own wording ("Tests
    passed (412)." over a tool line "412 passed in 33.1s", whose bare count is no fact
    of tool output), which no leaf lost.  Such a drop read "(still held by another
    span)" in the fold finding and "lost nothing", where nothing held it (usertest56
    #1); it is left out as :func:`_without_names` leaves out names no prose used.  A
    summary that keeps a leaf's fact may state it in other words ("Timeout is 45 s."
    of "45000 ms", "port 8443" of "port: 8443"): its drops stay (usertest57 #1).
    ``items``: the session's items (``id``, ``kind``)."""
    summaries = (items.lazy().filter(pl.col("kind") == "summary")
                 .select(pl.col("id").alias("child"))
                 .join(held.lazy().select(pl.col("id").alias("child")), on="child",
                       how="anti"))
    return one(
        folds.lazy().filter(pl.col("dropped").list.len() > 0)
        .join(summaries, on="child", how="semi")
        .explode("dropped")
        .select(fact_key(pl.col("dropped").struct.field("kind"),
                         pl.col("dropped").struct.field("norm"),
                         pl.col("dropped").struct.field("text")).alias("key"),
                pl.col("child").alias("id"))
        .join(occ.lazy().select("key"), on="key", how="anti")
        .unique())
