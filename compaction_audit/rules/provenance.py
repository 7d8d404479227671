"""Provenance and logging rules: ungrounded summaries, silent drops, logged mismatches."""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.emptyframes import kept_for_schemas
from compaction_audit.io.records import LOGGED_FLOATS, LOGGED_INTS
from compaction_audit.reachability import interval_sum
from compaction_audit.rules.base import (
    EXPONENT_FROM,
    Context,
    Outcome,
    Rule,
    Severity,
    exceeds,
    fmt,
    fmt_change,
    register,
)

LIST_CAP = 20
"""Most ids a finding of this module lists; the rest are counted ("and N more")."""


def _names(ids: list[str], total: int) -> str:
    shown = ", ".join(ids[:LIST_CAP])
    return shown + (f" and {total - len(ids[:LIST_CAP])} more" if total > LIST_CAP else "")


@register
class UngroundedSummary(Rule):
    """What it checks: a summary in the working set whose leaves are all unresolvable
    (evicted, or dropped without being offloaded).  Fires once per round with the
    count, naming the summaries that became ungrounded at that round (at most 20, the
    rest counted): a summary that stays ungrounded for many rounds is named once.

    Why it matters: seed 000 ("What Was Observed", "Operational Effect"): the agent
    cited a summary-of-a-summary whose leaf source had been evicted eight rounds
    earlier; every retained summary must have at least one reachable leaf, or it is
    unfalsifiable from inside the context.

    A compaction's summary (a compaction record, as every product's log gives: Claude
    Code, Codex, Cline, Gemini CLI, opencode, OpenHands) whose compaction evicted every
    leaf it summarized is not judged at that compaction: it has no reachable leaf by
    construction, whatever it says (a pointer to the full transcript on disk does not
    ground it either: docs/adapters.md, "A summary that points to the transcript"),
    and what it lost is judged per fact by silent-discriminating-fold.  It is judged
    when it had a reachable leaf and lost it later (a microcompact evicting a span it
    only covered).

    Known problems: grounding is reachability, not support: one reachable leaf grounds a
    summary even when the sentence that matters came from an evicted leaf
    (unsupported-summary-claim judges sentences against their leaves).
    """

    code = "CA201"
    judges = "summaries"
    name = "ungrounded-summary"
    severity = Severity.ERROR
    family = "provenance"
    summary = "a retained summary has no reachable leaf span"
    action = "the summary is unfalsifiable: rehydrate its sources or drop it"
    example = "round 31: summary s-3-0007 (depth 3) has no reachable leaf"
    settings = ()

    def evaluate(self, ctx: Context) -> Outcome:
        ungrounded = _not_born_so(ctx.series.ungrounded, ctx.session.compactions)
        if not ungrounded.height:  # most traces: no rows, typed once per process
            return Outcome(kept_for_schemas("ungrounded_rows", (ungrounded,),
                                            lambda: _rows(ungrounded, 0)))
        return Outcome(_rows(ungrounded, ctx.session.n_rounds))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        n, new = v["ungrounded_summaries"], v["new_summaries"]
        noun = "summary has" if n == 1 else "summaries have"
        named = (f": {_names(v['summaries'], new)}" if new == n
                 else f"; new at this round: {_names(v['summaries'], new)}" if new
                 else " (all since earlier rounds)")
        return f"{n} retained {noun} no reachable leaf{named}"


def _not_born_so(ungrounded: pl.DataFrame, compactions: list[dict[str, Any]]
                 ) -> pl.DataFrame:
    """``ungrounded`` (columns ``id``, ``start``, ``end``: round indices) without the
    intervals of a compaction's summary that start at its compaction's round index
    (``summary_id`` and ``ri`` of a compaction record): that compaction evicted every
    leaf it summarized, so its summary is ungrounded from the round it is made, by
    construction, whatever it says (every product's compaction: docs/adapters.md),
    and what it lost is judged per fact by silent-discriminating-fold.  A summary that
    had a reachable leaf and lost it later (seed 000's case) is kept, whatever made
    it."""
    born = [(c["summary_id"], c["ri"]) for c in compactions
            if isinstance(c.get("summary_id"), str) and isinstance(c.get("ri"), int)]
    if not born or not ungrounded.height:
        return ungrounded
    made = pl.DataFrame({"id": [b[0] for b in born], "start": [b[1] for b in born]},
                        schema={"id": ungrounded.schema["id"],
                                "start": ungrounded.schema["start"]})
    return ungrounded.join(made, on=["id", "start"], how="anti")


def _rows(ungrounded: pl.DataFrame, n_rounds: int) -> pl.DataFrame:
    """:class:`UngroundedSummary`'s rows before the compaction check: per round index
    ``ri`` with an ungrounded summary, the count and the summaries new there."""
    count = (interval_sum(ungrounded, n_rounds)
             .filter(pl.col("value") > 0).rename({"value": "ungrounded_summaries"}))
    new = (ungrounded.sort("start", "id").group_by("start", maintain_order=True)
           .agg(pl.col("id").head(LIST_CAP).alias("summaries"),
                pl.len().cast(pl.Int64).alias("new_summaries"))
           .rename({"start": "ri"}))
    return (count.join(new, on="ri", how="left")
            .with_columns(pl.col("summaries").fill_null(pl.lit([], pl.List(pl.String))),
                          pl.col("new_summaries").fill_null(0))
            .select("ri", "summaries", "ungrounded_summaries", "new_summaries")
            .sort("ri"))


@register
class SilentDrop(Rule):
    """What it checks: an item left the working set without being listed in
    ``evicted`` or ``offloaded`` (retained lists disagree with the eviction lists).

    Why it matters: log-format spec ("round"): the auditor cannot tell a silent drop
    from an eviction or an offload, so reachability after it is a guess; the auditor
    treats the item as gone, unless the store still holds it from an earlier offload.

    Known problems: a logger that lists ``retained`` but forgets some ``evicted``
    entries makes every forgotten eviction a finding: the auditor cannot tell a logging
    slip from a real silent drop.
    """

    code = "CA202"
    name = "silent-drop"
    severity = Severity.WARNING
    family = "provenance"
    summary = "an item left the working set without being evicted or offloaded"
    action = "fix the logger: every eviction and offload must be recorded"
    example = "round 7: s-0031 left the working set but is in neither evicted nor offloaded"

    def evaluate(self, ctx: Context) -> Outcome:
        events = ctx.session.events.filter(pl.col("action") == "silent-drop")
        rows = (
            events.sort("ri", "id").group_by("ri", maintain_order=True)
            .agg(pl.col("id").head(LIST_CAP).alias("items"),
                 pl.len().cast(pl.Int64).alias("silent_drops"))
        )
        return Outcome(rows)

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        return (f"{v['silent_drops']} item(s) left the working set without being evicted "
                f"or offloaded: {_names(v['items'], v['silent_drops'])}")


@register
class LoggedMismatch(Rule):
    """What it checks: a ``logged`` aggregate (``raw_ratio``, ``query_cosine_retained``,
    ``distinct_source_spans``, ``summary_depth_max``) differs from the value the
    auditor rebuilt: ratios by more than ``logged_tolerance`` (a difference that is the
    tolerance up to floating-point rounding is not more), counts at all.

    Why it matters: seed 000 ("Operational Effect") asks for a guard computing these
    signals at the compaction boundary; if the agent's own numbers are wrong, its guard
    is blind.

    Known problems: the rebuilt value follows the log format's definitions; an agent
    that computes an aggregate by another definition (another token weighting, a cosine
    over other vectors) disagrees at every round, though its guard may be right by its
    own definition.
    """

    code = "CA203"
    judges = "logged"
    name = "logged-mismatch"
    severity = Severity.WARNING
    family = "provenance"
    summary = "the agent's own logged aggregate disagrees with the rebuilt value"
    action = "the agent's own instrumentation is wrong: fix how it computes the aggregate"
    example = "round 4: logged distinct_source_spans 120, rebuilt 97"
    settings = ("logged_tolerance",)

    def evaluate(self, ctx: Context) -> Outcome:
        tol = ctx.settings.logged_tolerance
        frame = ctx.series.frame.lazy()  # one plan for every field (issue 14)
        parts = []
        for key in (*LOGGED_FLOATS, *LOGGED_INTS):
            logged, rebuilt = pl.col(f"logged_{key}"), pl.col(key)
            if key in LOGGED_FLOATS:
                bad = exceeds((logged - rebuilt).abs(), tol)  # tol itself: no (adv78 #3)
                bad = pl.when(rebuilt.is_null()).then(False).otherwise(bad)
            else:
                bad = logged != rebuilt
            parts.append(
                frame.filter(logged.is_not_null() & bad).select(
                    "ri", pl.lit(key).alias("field"),
                    logged.cast(pl.Float64).alias("logged"),
                    rebuilt.cast(pl.Float64).alias("rebuilt")))
        rows = (
            pl.concat(parts).sort("ri").group_by("ri", maintain_order=True)
            .agg(pl.struct("field", "logged", "rebuilt").alias("mismatches"))
        )
        return Outcome(rows.collect())

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        parts = [f"{m['field']} logged " + _pair(m) for m in v["mismatches"]]
        return "logged aggregates disagree: " + "; ".join(parts)


def _pair(m: dict[str, Any]) -> str:
    """``"1.000, rebuilt 0.500"``: a mismatch's two values, a ratio with as many more
    decimals as it takes to show that they differ (:func:`~compaction_audit.rules.base.
    fmt_change`; usertest50 #6: "raw_ratio logged 1.000, rebuilt 1.000" under a
    tolerance of 0.0001)."""
    logged, rebuilt = _num(m["logged"], m["field"]), _num(m["rebuilt"], m["field"])
    if any(isinstance(v, float) and abs(v) >= EXPONENT_FROM for v in (logged, rebuilt)):
        return f"{fmt(logged)}, rebuilt {fmt(rebuilt)}"  # with an exponent (adv94 #10)
    before, _, after = fmt_change(logged, rebuilt).partition(" -> ")
    return f"{before}, rebuilt {after}"


def _num(value: float | None, field: str) -> float | int | None:
    """A count (:data:`LOGGED_INTS`) as an int, a ratio as it is: "raw_ratio logged
    0.020, rebuilt 0.000", not "rebuilt 0" (usertest49 #7)."""
    if value is not None and field not in LOGGED_FLOATS and value.is_integer():
        return int(value)
    return value
