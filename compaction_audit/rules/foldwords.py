"""How a fold finding words what a fold lost (silent-discriminating-fold,
topic-only-fold: :mod:`compaction_audit.rules.recall`): each child and its dropped
facts, in the order of the report's lost list, a fact not lost said as held by another
span, recoverable (its span retained or offloaded) or stated only by a summary, and a
product's spans named by their lines (:func:`stated_at`, also read by the
faithfulness rules)."""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.recall.sections import _span_file
from compaction_audit.rules.base import Context
from compaction_audit.rules.recallctx import ranked_of, recall_of

__all__ = ["describe_at", "stated_at", "stated_lines"]


def stated_at(ctx: Context, ids: set[str]) -> dict[str, str]:
    """``"line 660"`` (``"line 451 of session.messages.json"`` for a span an adapter
    read from a companion file) for each of ``ids`` that has a ``source_line``: a
    product's span ids (tool-use ids, ``line-3``, message ids) say nothing to a reader,
    its line does, as in the report's lost list.  A native log's ids are the logger's
    own and several spans share a round's line: they stay (``{}``)."""
    return {item: f"line {line}" + (f" of {file}" if file else "")
            for item, (line, file) in stated_lines(ctx, ids).items()}


def stated_lines(ctx: Context, ids: set[str]) -> dict[str, tuple[int, str | None]]:
    """What :func:`stated_at` words: ``(line, companion file or None)`` per span of
    ``ids`` that has a ``source_line``, in a product's log (``{}`` in a native one)."""
    if ctx.session.header.extra.get("source_format") in (None, "native"):
        return {}
    if "stated_lines" not in ctx.cache:  # once per audit, not a query per finding
        ctx.cache["stated_lines"] = dict(  # (adv116 P2: 20,000 CA307 findings, 6 s)
            ctx.session.items.filter((pl.col("kind") == "span")
                                     & pl.col("source_line").is_not_null())
            .select("id", "source_line").iter_rows())
    lines: dict[str, int] = ctx.cache["stated_lines"]
    extra = ctx.session.header.extra
    own = set(extra.get("span_line_file_except") or ())
    out = {}
    for item in ids:
        if (line := lines.get(item)) is None:
            continue
        named = _span_file(extra.get("span_line_file"), own, item,
                           extra.get("span_line_file_except_in"))
        out[item] = (line, named.get("span_file"))  # as report.lines.line_at words it
    return out


def _describe(children: list[dict[str, Any]], limit: int = 3,
              at: dict[str, str] | None = None, span_word: str = "",
              said: dict[str, str] | None = None,
              retained: frozenset[str] = frozenset(),
              own: frozenset[tuple[str, str]] = frozenset()) -> str:
    """The children's losses, best tier first (then worst kind), at most ``limit``
    children (the finding's values keep every child).  A fold that lost more than
    :data:`_LISTED` distinct facts is said in counts with its first :data:`_SHOWN`
    facts in the order of the report's lost list, each cut to :data:`_CUT` characters:
    that list has them all, and a finding line should fit on a screen (issue 10).
    ``at`` names a span by its line (:func:`stated_at`) instead of its id;
    ``span_word`` goes before an id the counted form names ("span 3": a native log's
    numeric id read as a line, usertest20); ``said``: each lost fact's key -> its
    text as the span the lost list names words it (the counted form quotes that);
    ``retained``: the children still in the working set after the fold (a recoverable
    child is "retained", else "offloaded": usertest71 #7); ``own``: (child, fact key)
    of each fact a summary child states that no raw span does (:func:`_own_words`)."""
    at = at or {}
    # each fact once, in the order of the report's lost list (its position there),
    # named by the span that list names; a fact the list does not hold (another span
    # still holds it) is counted apart
    facts: dict[str, tuple[dict[str, Any], str]] = {}
    for c in children:
        for d in c["dropped"]:
            facts.setdefault(d["key"], (d, d.get("stated_in") or c["child"]))
    # a fact named by the span that stated it is quoted as that span words it, not as
    # a summary restated it (usertest70 #4: the first summary's "breaks the COPY path"
    # was quoted as the person's line 1, "breaks our COPY path")
    worded = {k: ((said or {}).get(k) if d.get("stated_in") else None) or d["text"]
              for k, (d, _) in facts.items()}
    # the counts of fold_facts: distinct facts, and those the lost list holds
    listed = {k: v for k, v in facts.items() if v[0].get("pos") is not None}
    total = len(facts)
    if total > _LISTED:
        pool = listed or facts  # the facts named first: lost ones, else held ones
        best = sorted(pool.values(), key=lambda dc: (
            dc[0]["pos"] is None, dc[0]["pos"] or 0, dc[0]["tier"], -dc[0]["rank"]))[:_SHOWN]
        shown = ", ".join(f"{d['kind']} {_cut(worded[d['key']])!r} "
                          f"({at.get(child) or f'{span_word}{child}'})" for d, child in best)
        said_only = {k for _, k in own} - set(listed)
        held = total - len(listed) - len(said_only)
        elsewhere = ", ".join(
            ([f"{held:,} more still held by another span"] if held else [])
            + ([f"{len(said_only):,} more only a summary states"] if said_only else []))
        elsewhere = f" ({elsewhere})" if elsewhere else ""
        rest = len(pool) - len(best)  # no "and 0 more" (usertest21 #1)
        counted = (f"{len(listed):,} lost facts{elsewhere}" if listed else  # usertest21
                   f"{total:,} facts, all still recoverable,")  # #4: not "0 lost facts"
        # the children that stated a dropped fact, a part of the fold ("from 105
        # children" read as the fold's size beside the 309 spans below it: usertest62
        # B5; not "dropped by", which contradicted "all still recoverable": adv117 P7)
        return (f"{counted} from {len(children):,} of its children, first {shown}"
                + (f" and {rest:,} more" if rest else ""))
    # the children in order only here (a fold of more facts is said in counts): the sort
    # key read every dropped fact of every child of each of 5,842 fold findings on the
    # 254 MB 10,000 x 2,000 full-text grid cell (issue 14)
    ordered = sorted(children, key=lambda c: (min(d["tier"] for d in c["dropped"]),
                                              -max(d["rank"] for d in c["dropped"])))
    parts = []
    for c in ordered[:limit]:
        kinds = c["dropped"]  # already in tier order; a fact still recoverable (its
        how = "retained" if c["child"] in retained else "offloaded"
        mark = (f" (recoverable: the span is {how})" if c.get("child_resolvable")
                else " (still held by another span)")  # span kept, or another
        lost = ", ".join(f"{d['kind']} {d['text']!r}" + (  # holds it) is not lost
            "" if d["key"] in listed  # (usertest19 #5, usertest22 #1)
            else _OWN_WORDS if (c["child"], d["key"]) in own and not c.get("child_resolvable")
            else mark) for d in kinds)
        parts.append(f"{at.get(c['child'], c['child'])}: {lost}")
    rest = len(children) - limit
    return "; ".join(parts) + (f"; and {rest} more children" if rest > 0 else "")


def _retained_children(ctx: Context, fold: str) -> frozenset[str]:
    """The children of ``fold`` still in the working set after its round: from one join
    of the fold edges with the membership intervals, once per audit."""
    if "retained_children" not in ctx.cache:
        s = ctx.session
        kept = (s.edges.lazy().select("parent", "child", "ri")
                .join(s.membership.lazy(), left_on="child", right_on="id")
                .filter((pl.col("start") <= pl.col("ri")) & (pl.col("ri") < pl.col("end")))
                .group_by("parent").agg(pl.col("child").unique()).collect())
        ctx.cache["retained_children"] = {p: frozenset(c) for p, c in kept.iter_rows()}
    found: dict[str, frozenset[str]] = ctx.cache["retained_children"]
    return found.get(fold, frozenset())


def _own_words(ctx: Context, children: list[dict[str, Any]]) -> frozenset[tuple[str, str]]:
    """(child, key) of each fact a summary child of a fold dropped that the lost list
    does not hold and no raw span states (:attr:`~compaction_audit.recall.analysis.
    Recall.fact_keys`): the summary's own words, held by no span (usertest71 #6: they
    read "still held by another span").  The raw spans' keys are read into a set once
    per audit, when a finding first has such a fact."""
    if "summary_ids" not in ctx.cache:
        ctx.cache["summary_ids"] = frozenset(
            ctx.session.items.filter(pl.col("kind") == "summary")["id"].to_list())
    summaries: frozenset[str] = ctx.cache["summary_ids"]
    pairs = {(c["child"], d["key"]) for c in children if c["child"] in summaries
             for d in c["dropped"] if d.get("pos") is None}
    if not pairs:
        return frozenset()
    if "fact_key_set" not in ctx.cache:
        ctx.cache["fact_key_set"] = frozenset(recall_of(ctx).fact_keys.to_list())
    stated: frozenset[str] = ctx.cache["fact_key_set"]
    return frozenset(p for p in pairs if p[1] not in stated)


def describe_at(children: list[dict[str, Any]], ctx: Context, fold: str = "") -> str:
    """:func:`_describe` with the spans named by their lines where the log has them, a
    recoverable child of ``fold`` said retained or offloaded."""
    if "stated_texts" not in ctx.cache:  # each lost fact as its stating span words it
        ctx.cache["stated_texts"] = dict(ranked_of(ctx).select("key", "text").iter_rows())
    said = ctx.cache["stated_texts"]
    retained = (_retained_children(ctx, fold)
                if any(c.get("child_resolvable") for c in children) else frozenset())
    own = _own_words(ctx, children)
    if ctx.session.header.extra.get("source_format") in (None, "native"):
        return _describe(children, span_word="span ", said=said,  # its ids stay
                         retained=retained, own=own)
    ids = {c["child"] for c in children} | {d.get("stated_in") for c in children
                                             for d in c["dropped"]} - {None}
    return _describe(children, at=stated_at(ctx, ids), said=said, retained=retained,
                     own=own)


_LISTED = 4  # a fold that lost at most this many distinct facts lists them all
_OWN_WORDS = " (only a summary states it, no raw span)"
"""The mark of a fact a fold dropped from a summary child that no raw span states (a
name of tool output no prose used, a value the summary wrote): no span holds it, and
it is no lost fact (usertest71 #6: "still held by another span", where none did)."""
_SHOWN = 2  # else: the best this many, and counts
_CUT = 80  # characters of one item's text in a finding line


def _cut(text: str) -> str:
    return text if len(text) <= _CUT else text[:_CUT - 3] + "..."

