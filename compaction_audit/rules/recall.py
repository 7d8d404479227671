"""Recall rules: folds that dropped discriminators, and the recall floor (seed 002).

All three read :func:`recall_of`, the cached :class:`~compaction_audit.recall.Recall`
analysis of the session.  A fold finding names the fold (its ``entity``), each child
that lost something and what it lost; its severity follows the worst kind lost.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.discriminators import KIND_RANK, Kind
from compaction_audit.reachability import interval_sum
from compaction_audit.recall import Recall, analyse
from compaction_audit.rules.base import Context, Outcome, Rule, Severity, register

_ERROR_RANK = KIND_RANK[Kind.VERSION]
"""Losing a version pin or anything ranked above it (quantity, scope, causal, negation,
constraint) is an error; identifiers, ordering and links only a warning, and only info
when every lost one came from a tool's output (issue: "a lost negation or constraint
outranks a lost number, which outranks a lost identifier from a tool output")."""


LOW_SOURCES = "(?i)tool|meta|harness"
"""Sources whose lost identifiers rank lowest: tool output and product wrappers (the
adapters' ``harness:*`` and legacy ``user:meta``: product text, not the user's words)."""


def recall_of(ctx: Context) -> Recall:
    """The recall analysis of the context's session, computed once per audit."""
    if "recall" not in ctx.cache:
        ctx.cache["recall"] = analyse(ctx.session, ctx.series)
    result: Recall = ctx.cache["recall"]
    return result


def _severity(rank: int, from_tool: bool, ceiling: Severity) -> str:
    sev = (Severity.ERROR if rank >= _ERROR_RANK
           else Severity.INFO if from_tool else Severity.WARNING)
    return min(sev, ceiling, key=lambda s: s.rank).value


def _fold_findings(ctx: Context, silent: bool, ceiling: Severity) -> pl.DataFrame:
    folds = recall_of(ctx).folds.filter(pl.col("dropped").list.len() > 0)
    hidden = ~pl.col("child_resolvable") & ~pl.col("accounted")
    folds = folds.filter(hidden if silent else ~hidden)
    if folds.height == 0:
        return pl.DataFrame(schema={"ri": pl.Int64})
    tool = pl.col("child_source").fill_null("").str.contains(LOW_SOURCES)
    per_child = folds.with_columns(
        pl.col("dropped").list.eval(pl.element().struct.field("rank")).list.max()
        .alias("worst"), tool.alias("from_tool"))
    grouped = (
        per_child.sort("ri", "fold", "child")
        .group_by("ri", "fold", maintain_order=True)
        .agg(pl.struct("child", "child_source", "child_resolvable", "dropped")
             .alias("children"),
             pl.col("worst").max(), pl.col("from_tool").all(),
             pl.col("accounted").first(),
             pl.col("dropped").list.len().sum().alias("lost"))
    )
    sev = [_severity(w, t, ceiling) for w, t in
           zip(grouped["worst"], grouped["from_tool"], strict=True)]
    return grouped.with_columns(pl.Series("severity", sev), pl.col("fold").alias("entity"))


def _describe(children: list[dict[str, Any]], limit: int = 3) -> str:
    """The children's losses, worst kind first, at most ``limit`` children (the
    finding's values keep every child)."""
    parts = []
    ordered = sorted(children, key=lambda c: -max(d["rank"] for d in c["dropped"]))
    for c in ordered[:limit]:
        kinds = sorted(c["dropped"], key=lambda d: -d["rank"])
        lost = ", ".join(f"{d['kind']} {d['text']!r}" for d in kinds[:4])
        more = f" and {len(kinds) - 4} more" if len(kinds) > 4 else ""
        parts.append(f"{c['child']}: {lost}{more}")
    rest = len(children) - limit
    return "; ".join(parts) + (f"; and {rest} more children" if rest > 0 else "")


@register
class SilentDiscriminatingFold(Rule):
    """What it checks: a fold whose text drops a discriminator of a child (number,
    version pin, identifier, negation with its object, cause, ordering, scope, link),
    where the child is not resolvable after the round and the fold records no
    ``accounting``.

    Why it matters: seed 002 ("Decision Boundary"): silent folding of a discriminating
    predicate is the failure; the agent will later answer a precision query from a
    topic-level summary, confidently and wrongly.  Severity follows the worst kind lost.
    """

    code = "CA301"
    name = "silent-discriminating-fold"
    severity = Severity.ERROR
    family = "recall"
    summary = "a fold dropped a discriminator and nothing can recover it"
    action = ("retain a reference to the raw span (offload instead of evict), restate the "
              "discriminator in the summary, or record the surrendered precision as "
              "accounting")
    example = ("round 14: fold L3 dropped quantity '45000' and identifier "
               "'read_timeout_ms' of s-0213 (evicted)")

    def evaluate(self, ctx: Context) -> Outcome:
        return Outcome(_fold_findings(ctx, True, self.severity))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        return f"fold {v['fold']} silently dropped: {_describe(v['children'])}"


@register
class TopicOnlyFold(Rule):
    """What it checks: a fold whose text drops a discriminator of a child, but the
    child stays resolvable (offloaded or retained) or the fold is accounted.

    Why it matters: seed 002 ("Condition of Validity"): the precision is still
    recoverable by reference, or the loss was recorded; the fold is topic-preserving
    only, which is acceptable but debits the recall budget.
    """

    code = "CA302"
    name = "topic-only-fold"
    severity = Severity.WARNING
    family = "recall"
    summary = "a fold dropped a discriminator that stays recoverable or was accounted"
    action = "keep the reference resolvable for as long as an open task may need it"
    example = "round 6: fold m1 (accounted) dropped version 'v4.2.1' of s1 (offloaded)"

    def evaluate(self, ctx: Context) -> Outcome:
        return Outcome(_fold_findings(ctx, False, self.severity))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        how = "accounted fold" if v["accounted"] else "fold"
        return f"{how} {v['fold']} kept the topic only: {_describe(v['children'])}"


@register
class RecallFloor(Rule):
    """What it checks: a discriminating span covered by a working-set summary has
    fewer than the session's ``recall_floor`` resolvable references: the span itself
    while resolvable, plus each working-set summary whose text keeps all its
    discriminators.

    Why it matters: seed 002 ("Operational Effect"): raise a hard error when a fold
    would drop a predicate below the recall floor required by an open task.  Spans
    whose fold was accounted are left to topic-only-fold; severity follows the worst
    kind among the spans, like the fold rules.
    """

    code = "CA303"
    name = "recall-floor"
    severity = Severity.ERROR
    family = "recall"
    summary = "a discriminating span under a retained summary has too few references"
    action = "rehydrate the span from its source or restate its discriminators"
    example = "round 9: s-0031 ('Do NOT enable --force') has 0 references (floor 1)"

    def evaluate(self, ctx: Context) -> Outcome:
        """One row per round with spans under the floor: their count, the spans that
        fell under it at that round (``new_spans``), and the severity of the worst kind
        among all of them; computed on intervals, never one row per span per round."""
        floor = recall_of(ctx).floor
        if floor.height == 0:
            return Outcome(pl.DataFrame(schema={"ri": pl.Int64}))
        n = ctx.session.n_rounds
        spans = floor.with_columns(
            pl.col("rank").fill_null(KIND_RANK[Kind.NEGATION]),
            pl.col("source").fill_null("").str.contains(LOW_SOURCES).alias("low"))
        count = interval_sum(spans, n).rename({"value": "below_floor"})
        worst = (interval_sum(spans, n, by="rank").filter(pl.col("value") > 0)
                 .group_by("ri").agg(pl.col("rank").max()))
        loud = interval_sum(spans, n, (~pl.col("low")).cast(pl.Int64)).rename({"value": "loud"})
        new = (spans.sort("start", "leaf").group_by("start", maintain_order=True)
               .agg(pl.col("leaf").alias("new_spans")).rename({"start": "ri"}))
        rows = (count.filter(pl.col("below_floor") > 0)
                .join(worst, on="ri", how="left").join(loud, on="ri", how="left")
                .join(new, on="ri", how="left")
                .with_columns(pl.col("new_spans").fill_null(pl.lit([], pl.List(pl.String))))
                .sort("ri"))
        sev = [_severity(r, loud == 0, self.severity)
               for r, loud in zip(rows["rank"], rows["loud"], strict=True)]
        return Outcome(rows.with_columns(pl.Series("severity", sev),
                                         pl.lit(ctx.session.header.recall_floor)
                                         .alias("recall_floor")).drop("rank", "loud"))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        spans = v["new_spans"]
        shown = ", ".join(spans[:10]) + (f" and {len(spans) - 10} more"
                                          if len(spans) > 10 else "")
        newly = f"; new at this round: {shown}" if spans else ""
        return (f"{v['below_floor']} discriminating span(s) under a retained summary have "
                f"fewer than {v['recall_floor']} resolvable reference(s){newly}")
