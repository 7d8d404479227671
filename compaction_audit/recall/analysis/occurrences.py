"""Where each discriminator occurs: in raw spans and in the summaries that still state it.

:func:`_occurrences` gives the (key, span) rows a discriminator is seen in, the
(key, summary) rows that keep it, and the names (identifiers, links) no prose used;
:func:`_disagreements` compares the spans that hold one with their logged
``salience_class``.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import collect, one
from compaction_audit.reachability import resolvable_end
from compaction_audit.recall import extract as ext
from compaction_audit.recall.analysis.items import _KIND_VALUE, _key, typed_items
from compaction_audit.recall.textwork import Extracted, Survived, survival_flags
from compaction_audit.series import Series

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
    :func:`~compaction_audit.recall.analysis.folds._text_work`) is compared with its own
    children only."""
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
    distinct = one(spans.lazy().select("text", "stype").unique().with_row_index("_d")
                   .with_columns(pl.col("_d").cast(pl.Int64)))
    # built a column at a time (one comprehension each, not seven appends per fact)
    owner: list[int] = []
    places: list[int] = []
    flat: list[ext.Discriminator] = []
    for index, body, stype in zip(distinct["_d"].to_list(), distinct["text"].to_list(),
                                  distinct["stype"].to_list(), strict=True):
        found = found_in[(body, stype)]
        owner += [index] * len(found)
        places += range(len(found))
        flat += found
    kinds, rank_of = [_KIND_VALUE[d.kind] for d in flat], ext.KIND_RANK
    rows: dict[str, list[Any]] = {
        "_d": owner, "pos": places,
        "key": [f"{kind}:{d.norm}" for kind, d in zip(kinds, flat, strict=True)],
        "kind": kinds, "text": [d.text for d in flat],
        "rank": [rank_of[d.kind] for d in flat], "line": [d.line for d in flat]}
    del flat, owner, places, kinds
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
