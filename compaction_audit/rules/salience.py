"""Salience rules that compare the agent's scorer with the auditor's own cosine.

Issue 16: the rebuilt cosine (:mod:`compaction_audit.cosine`) measures each item's
relevance to the task query from its text, independently of the agent; seed 000's
inversion is the scorer's metric going wrong (ranking by survivability, not by
relevance), which shows as the two rankings of the working set parting ways.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from compaction_audit.limits import Limit
from compaction_audit.rules.base import (
    Context,
    Outcome,
    Rule,
    Severity,
    fmt,
    ids_per_round,
    register,
    sustained,
)

MIN_RANKED = 5
"""Working-set items with both a logged salience and a rebuilt cosine needed to judge
a round (a rank correlation of fewer items is noise)."""
MAX_ITEM_ROUNDS = 500_000
"""Working-set items times judged rounds above which rounds are judged at an even
stride (1 round in k), so a long session costs a bounded join; the skipped rounds are
reported as not evaluated."""
_NAMES = 10


def judged_rounds(ctx: Context) -> tuple[list[int], int]:
    """Round indices to judge (rounds that list ``retained``) and the stride used."""
    frame = ctx.series.frame
    rounds = frame.filter(pl.col("has_retained")).select("ri", "items")
    total = int(rounds["items"].sum() or 0)
    stride = max(1, math.ceil(total / MAX_ITEM_ROUNDS))
    return rounds["ri"].to_list()[::stride], stride


def _at_rounds(intervals: pl.DataFrame, rounds: list[int],
               keep: tuple[str, ...] = ()) -> pl.DataFrame:
    """(``id``, ``ri``, ``keep`` columns) for every interval [start, end) and every
    ``ri`` of ``rounds`` (sorted) inside it, without expanding the rounds that are not
    judged."""
    grid = pl.Series("r", rounds, dtype=pl.Int64)
    return (
        intervals.with_columns(
            lo=grid.search_sorted(intervals["start"], side="left"),
            hi=grid.search_sorted(intervals["end"], side="left"))
        .filter(pl.col("hi") > pl.col("lo"))
        .select("id", *keep, pl.int_ranges("lo", "hi").alias("k"))
        .explode("k")
        .select("id", pl.lit(grid).gather(pl.col("k")).alias("ri"), *keep)
    )


def _fixed(salience: pl.DataFrame) -> bool:
    """True when no item's logged salience ever changes (a scorer of fixed scores)."""
    return bool(salience.unique(["id", "salience"]).height == salience["id"].n_unique())


def _first_logged(salience: pl.DataFrame, key: str = "id", name: str = "salience"
                  ) -> pl.DataFrame:
    """Each item's first logged salience (``name``) and its round index ``sal_ri``."""
    return (salience.group_by("id").agg(pl.col("ri").min(), pl.col("salience").first())
            .rename({"id": key, "ri": "sal_ri", "salience": name}))


def _logged_at(rows: pl.DataFrame, salience: pl.DataFrame, key: str = "id",
               name: str = "salience") -> pl.DataFrame:
    """``rows`` with column ``name``: the logged salience of the item in column ``key``
    at its last row at or before ``ri`` (a plain join when no item's salience ever
    changes, as with a scorer of fixed scores)."""
    if _fixed(salience):
        first = _first_logged(salience, key, name)
        return (rows.join(first, on=key, how="left")
                .with_columns(pl.when(pl.col("sal_ri") <= pl.col("ri"))
                              .then(pl.col(name)).alias(name))
                .drop("sal_ri"))
    table = salience.sort("ri").rename({"id": key, "ri": "sal_ri", "salience": name})
    return rows.sort("ri").join_asof(table, left_on="ri", right_on="sal_ri", by=key,
                                     strategy="backward", check_sortedness=False
                                     ).drop("sal_ri")


@register
class SalienceDisagreement(Rule):
    """What it checks: at rounds that list ``retained``, the Spearman rank correlation
    between the working set's logged salience and its rebuilt cosine to the task query
    (``query_cosine_rebuilt`` per item; items with both values, at least 5), below
    ``salience_agreement_floor`` on ``disagreement_rounds`` consecutive judged rounds.
    Each finding names the summaries the scorer favours over the spans they compressed:
    logged salience above the mean of its children's last logged salience while the
    rebuilt cosine is not above theirs.  Sessions with more than 500,000 item-rounds
    are judged at an even stride (the rest is reported as not evaluated).

    Why it matters: seed 000 ("Core Distinction"): under inversion the scorer ranks by
    survivability, not relevance; summaries look more salient than the evidence they
    compressed.  An independent cosine (issue 16) sees this without trusting the
    agent's metric.  The floor 0.0 means no agreement at all: the scorer's order is
    unrelated, or opposite, to relevance (a low positive value is common: the rebuilt
    cosine is coarse, the lexical fallback more so).

    Known problems: the rebuilt cosine is lexical or a small embedding model
    (docs/cosine.md), not the agent's scorer: a scorer that weights recency or source on
    purpose disagrees with it without being inverted. Sessions over 500,000 item-rounds
    are judged at a stride, so a disagreement between judged rounds is missed.
    """

    code = "CA204"
    name = "salience-disagreement"
    severity = Severity.WARNING
    family = "provenance"
    summary = "the logged salience ranks the working set unlike the rebuilt cosine"
    action = ("check the scorer: it ranks by something other than relevance to the task "
              "(survivability, recency, depth); penalize summary depth or rescore summaries "
              "from their sources")
    example = ("round 22: Spearman -0.21 < 0.0 over 40 items for 3 rounds; the scorer "
               "favours 2 summaries over the spans they compressed: t2.31, t1.40")
    settings = ("salience_agreement_floor", "disagreement_rounds")
    reads_salience = True

    def cosine_used(self, ctx: Context) -> str | None:
        """Both series: the logged per-item salience against the rebuilt cosine (None
        when either is missing)."""
        rebuilt = ctx.rebuilt is not None and ctx.rebuilt.items.height > 0
        logged = ctx.session.salience["salience"].is_not_null().any()
        return "logged salience vs query_cosine_rebuilt" if rebuilt and logged else None

    def evaluate(self, ctx: Context) -> Outcome:
        s = ctx.settings
        n = ctx.series.frame.height
        empty = pl.DataFrame(schema={"ri": pl.Int64})
        rebuilt = ctx.rebuilt
        if rebuilt is None or rebuilt.items.height == 0:
            reason = rebuilt.reason if rebuilt is not None and rebuilt.reason else "no text"
            return Outcome(empty, {f"not applicable: no rebuilt cosine ({reason})": n})
        sal = ctx.session.salience.filter(pl.col("salience").is_not_null())
        if sal.height == 0:
            return Outcome(empty, {"not applicable: no salience recorded": n})
        rounds, stride = judged_rounds(ctx)
        if stride > 1:  # a capped check: said as every other is, and it counts for the
            # gate (adv104 #8: a note alone, and a log padded past the cap passed)
            skipped = (ctx.series.frame.filter(pl.col("has_retained")
                                               & ~pl.col("ri").is_in(rounds))
                       .select("ri").join(ctx.session.rounds.select("ri", "round", "line"),
                                          on="ri", how="left", maintain_order="left"))
            first = skipped.row(0, named=True)  # stride > 1: a round was skipped
            ctx.limits.append(Limit(
                self.name, MAX_ITEM_ROUNDS, "(working-set item, round) pairs",
                f"the first round off the judging stride (1 round in {stride})",
                first["round"], first["line"], skipped.height, "rounds"))
        notes: dict[str, int] = {}
        if n - len(rounds):
            why = ("rounds without retained (no logged salience) or not on the judging "
                   f"stride (1 round in {stride})" if stride > 1
                   else "rounds without retained: no logged salience")
            notes[why] = n - len(rounds)
        cos = rebuilt.items
        fixed = _fixed(sal)
        if fixed:  # cosine and salience joined per membership interval, not per round
            # (intervals sorted by item: the rows come out in (id, ri) order, and a
            # stable sort by round alone puts them in (round, id) order, without
            # sorting every item-round by its id string; issue 14)
            members = (ctx.session.membership.join(cos, on="id")
                       .join(_first_logged(sal), on="id").sort("id", "start"))
            ws = (_at_rounds(members, rounds, ("cosine", "salience", "sal_ri"))
                  .filter(pl.col("sal_ri") <= pl.col("ri")).drop("sal_ri"))
            in_order = ws.sort("ri", maintain_order=True)
        else:
            ws = (_logged_at(_at_rounds(ctx.session.membership, rounds), sal)
                  .join(cos, on="id").filter(pl.col("salience").is_not_null()))
            in_order = ws.sort("ri", "id")
        ranked = (  # rows in (round, id) order: a join's output order varies with
            # Polars' threads, and the correlation's float sums with the row order
            # (issue 11, class 8: its last digits changed from run to run)
            in_order.group_by("ri", maintain_order=True).agg(
                pl.len().alias("items_ranked"),
                pl.corr("salience", "cosine", method="spearman").alias("rank_correlation"))
        )
        grid = pl.DataFrame({"ri": rounds}, schema={"ri": pl.Int64})
        per_round = grid.join(ranked, on="ri", how="left").sort("ri").with_columns(
            pl.col("items_ranked").fill_null(0))
        enough = (pl.col("items_ranked") >= MIN_RANKED) & pl.col("rank_correlation").is_not_nan()
        few = int(per_round.select((~enough.fill_null(False)).sum()).item())
        if few:
            notes[f"fewer than {MIN_RANKED} working-set items with both a logged salience "
                  "and a rebuilt cosine (or all tied)"] = few
        low = enough & (pl.col("rank_correlation") < s.salience_agreement_floor)
        fired = (per_round.with_columns(sustained(low, s.disagreement_rounds).alias("hit"))
                 .filter("hit").drop("hit"))
        if fired.height == 0:
            return Outcome(fired, notes)
        at_fired = ws.filter(pl.col("ri").is_in(fired["ri"].implode()))
        favoured = (_favoured_fixed(ctx, at_fired, sal, cos) if fixed
                    else self._favoured(ctx, at_fired.drop("cosine"), sal, cos))
        fired = ids_per_round(fired, favoured, "favoured_summaries").with_columns(
            pl.lit(s.disagreement_rounds).alias("rounds"))
        return Outcome(fired.sort("ri"), notes)

    @staticmethod
    def _favoured(ctx: Context, ws: pl.DataFrame, sal: pl.DataFrame,
                  cos: pl.DataFrame) -> pl.DataFrame:
        """(``ri``, ``id``): per round, summaries whose logged salience beats their
        children's mean (last logged value) while their rebuilt cosine does not beat the
        children's mean."""
        edges = ctx.session.edges.select(pl.col("parent").alias("id"), "child")
        pairs = ws.filter(pl.col("salience").is_not_null()).join(edges, on="id")
        if pairs.height == 0:
            return pl.DataFrame(schema={"ri": pl.Int64, "id": pl.String})
        pairs = _logged_at(pairs, sal, key="child", name="child_salience")
        pairs = (pairs.join(cos, on="id")
                 .join(cos.rename({"id": "child", "cosine": "child_cosine"}), on="child"))
        return (
            pairs.group_by("ri", "id").agg(
                pl.col("salience").first(), pl.col("cosine").first(),
                pl.col("child_salience").mean(), pl.col("child_cosine").mean())
            .filter((pl.col("salience") > pl.col("child_salience"))
                    & (pl.col("cosine") <= pl.col("child_cosine")))
            .select("ri", "id")
        )

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        head = (f"logged salience and the rebuilt cosine rank the working set differently: "
                f"Spearman {fmt(v['rank_correlation'])} < "
                f"{ctx.settings.salience_agreement_floor} over {v['items_ranked']} items for "
                f"{v['rounds']} judged round(s)")
        ids = v.get("favoured_summaries") or []
        if not ids:
            return head
        shown = ", ".join(ids[:_NAMES]) + (f" and {len(ids) - _NAMES} more"
                                           if len(ids) > _NAMES else "")
        return (f"{head}; the scorer favours {len(ids)} summar{'y' if len(ids) == 1 else 'ies'}"
                f" over the spans they compressed: {shown}")


def _favoured_fixed(ctx: Context, ws: pl.DataFrame, sal: pl.DataFrame,
                    cos: pl.DataFrame) -> pl.DataFrame:
    """:meth:`SalienceDisagreement._favoured` for a scorer of fixed scores (issue 14:
    without a (round, summary, child) table).  ``ws``: (``id``, ``ri``, ``cosine``,
    ``salience``) of working-set items with both values.  A child's salience is its
    first logged value from the round it was logged on, so a summary's children's mean
    is the same at every round from the last of those rounds on (``settled``); only the
    rounds before that (rare) are joined child by child."""
    empty = pl.DataFrame(schema={"ri": pl.Int64, "id": pl.String})
    edges = ctx.session.edges.select(pl.col("parent").alias("id"), "child")
    rows = ws.join(edges.select("id").unique(), on="id", how="semi")
    if rows.height == 0:
        return empty
    # only children with a rebuilt cosine count, in both means (as in the joined form)
    kids = (edges.join(rows.select("id").unique(), on="id", how="semi")
            .join(cos.rename({"id": "child", "cosine": "child_cosine"}), on="child")
            .join(_first_logged(sal, "child", "child_salience"), on="child", how="left"))
    per = kids.group_by("id").agg(
        pl.col("child_salience").mean(), pl.col("child_cosine").mean(),
        pl.col("sal_ri").filter(pl.col("child_salience").is_not_null()).max()
        .alias("settled"))
    rows = rows.join(per, on="id")
    early = rows.filter(pl.col("ri") < pl.col("settled"))
    if early.height:  # a child logged after the round: that round's own mean
        exact = (early.select("id", "ri").join(kids, on="id")
                 .with_columns(pl.when(pl.col("sal_ri") <= pl.col("ri"))
                               .then(pl.col("child_salience")).alias("child_salience"))
                 .group_by("ri", "id").agg(pl.col("child_salience").mean()))
        rows = pl.concat([
            rows.filter(~(pl.col("ri") < pl.col("settled")).fill_null(False)).drop("settled"),
            early.drop("child_salience", "settled").join(exact, on=["ri", "id"])
            .select(rows.drop("settled").columns),
        ])
    return (
        rows.filter((pl.col("salience") > pl.col("child_salience"))
                    & (pl.col("cosine") <= pl.col("child_cosine")))
        .select("ri", "id")
    )
