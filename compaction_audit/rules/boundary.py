"""Boundary rules: per-round conditions on the series (spec rules.md, "Boundary rules").

Each rule is a Polars expression over the series; ``window`` shifts the comparison
round and ``sustain`` requires the condition on consecutive rounds.  Rules reading
``raw_ratio`` skip rounds whose working set holds no tokens; rules comparing salience
skip rounds where either compared round's salience is unknown, and say so.

Salience is the logged ``query_cosine_retained`` when the log records it, else the
auditor's ``query_cosine_rebuilt`` (issue 16; :attr:`Context.cosine`): the finding's
values are named after the series used.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import polars as pl

from compaction_audit.plans import collect
from compaction_audit.reachability import resolvable_end
from compaction_audit.recall.ranking import span_type_from_source
from compaction_audit.rules.base import (
    FELL,
    ROSE,
    Context,
    Outcome,
    Rule,
    Severity,
    fmt,
    fmt_below,
    fmt_change,
    product_fold_rounds,
    register,
    sustained,
)
from compaction_audit.takeback import product_trace

_HAS_TOKENS = pl.col("retained_tokens") > 0
_SALIENCE_KNOWN = (pl.col("query_cosine").is_not_null()
                   & pl.col("query_cosine_before").is_not_null())
WINDOW_REASON = "the first"
"""How the reason for the rounds before the first comparison begins (every trace has
them: ``diff`` does not count them as rounds checked less)."""
NO_SALIENCE = "not applicable: no salience recorded"
"""The note of a salience rule on a log with no salience and no text to rebuild it."""


class BoundaryRule(Rule):
    """A rule defined by one boolean expression per round, with ``sustain`` applied."""

    values: ClassVar[tuple[str, ...]] = ()
    reads_raw_ratio: ClassVar[bool] = False

    def columns(self, ctx: Context) -> list[str]:
        """The value columns of a fired row: :attr:`values`, with
        ``query_cosine_retained*`` renamed to the series :attr:`Context.cosine` used."""
        used = ctx.cosine or "query_cosine_retained"
        return [v.replace("query_cosine_retained", used) for v in self.values]

    def condition(self, ctx: Context) -> pl.Expr:
        """The per-round condition (before ``sustain``)."""
        raise NotImplementedError

    def evaluable(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """(reason, expression true where the rule can be judged) pairs."""
        checks: list[tuple[str, pl.Expr]] = []
        if self.reads_salience:  # first: a round before the first comparison is never
            w = ctx.settings.window  # judged, whatever else it lacks (a round not judged
            reason = (WINDOW_REASON + " round has no earlier round to compare with" if w == 1
                      else f"{WINDOW_REASON} {w} rounds have no round {w} rounds earlier "
                      "to compare with")  # is counted under its first check: usertest50
            if w > ctx.frame.height > 0:  # a window past the log's end (usertest51 #7)
                n = ctx.frame.height
                reason += f": the session has {n} round{'' if n == 1 else 's'}"
            checks.append((reason,  # #3, diff read an empty first round as judged less)
                           pl.col("distinct_source_spans_before").is_not_null()))
        if self.reads_raw_ratio:
            checks.append(("the working set holds no tokens", _HAS_TOKENS))
        if self.reads_salience:
            checks.append(("salience unknown at the round or the round compared with",
                           _SALIENCE_KNOWN | pl.col("distinct_source_spans_before").is_null()))
        return checks

    def fires(self, ctx: Context) -> pl.Expr:
        """Boolean per round: evaluable, condition true, sustained."""
        ok = pl.lit(True)
        for _, expr in self.evaluable(ctx):
            ok = ok & expr
        return sustained(ok & self.condition(ctx), ctx.settings.sustain)

    def evaluate(self, ctx: Context) -> Outcome:
        frame = ctx.frame
        notes: dict[str, int] = {}
        if self.reads_salience and ctx.cosine is None:
            return Outcome(frame.head(0).select("ri", *self.columns(ctx)),
                           {NO_SALIENCE: frame.height})
        if ctx.settings.sustain > frame.height:
            notes[f"sustain {ctx.settings.sustain} is longer than the session"] = frame.height
        checks = self.evaluable(ctx)
        lazy = frame.lazy()  # the counts and the rows in one collect (issue 14, fleets)
        plans = [lazy.filter(self.fires(ctx)).select("ri", *self.columns(ctx))]
        if checks:  # each round not judged counted once, under the first check it
            ok = pl.lit(True)  # fails (usertest49 #6: a round with no working set and
            counts = []  # no salience was counted under both, the notes summed past the
            for k, (_, expr) in enumerate(checks):  # rounds not judged), and the rounds
                passed = expr.fill_null(False)  # all of them let through, in one pass
                counts.append((ok & ~passed).sum().alias(str(k)))
                ok = ok & passed
            plans.append(lazy.select(*counts, ok.sum().alias("judged")))
        fired, *counted = collect(*plans)
        judged = frame.height
        if ctx.settings.sustain > frame.height:  # no round judged, for that one reason
            judged = 0  # (usertest50 #5: the checks' counts were added to it)
        elif counted:
            *skips, judged_here = counted[0].row(0)
            for (reason, _), skipped in zip(checks, skips, strict=True):
                if skipped:
                    notes[reason] = int(skipped)
            judged = int(judged_here)
        return Outcome(fired, notes, judged)


BARE_COMPACTION = ("no work follows the compaction in its round: raw_ratio and reachable "
                   "spans there measure what the compaction kept, not the loop")
"""The note of compaction-drift and salience-inversion at a product compaction round
with no work after it."""
PRODUCT_FOLDS = ("a product's compactions evict every span they fold: with a summary of a "
                 "summary, the reachable source spans are those since the last compaction, "
                 "by construction (what each compaction lost: silent-discriminating-fold)")
"""provenance-floor's note for the rounds at ``min_depth`` of a product's trace."""


@register
class SalienceInversion(BoundaryRule):
    """What it checks: at round t, ``summary_depth_max`` >= ``min_depth`` and
    ``raw_ratio`` < ``raw_ratio_floor`` and ``distinct_source_spans`` fell and
    ``query_cosine_retained`` rose (each compared with round t - ``window``, the round
    record ``window`` records earlier: where round numbers skip, round 10 after round 6
    is compared with round 6; a rise within floating-point rounding, a trillionth of
    the value or of 1 whichever is larger, is none: a salience that lives below about
    1e-10 rises unseen); without
    logged salience, ``query_cosine_rebuilt`` (the auditor's cosine of the texts to the
    task query, issue 16) stands in for it.  Not judged at a product's compaction round
    (Claude Code, Codex, Cline, ...) that holds no work after the compaction, as
    compaction-drift is not: its raw_ratio and reachable spans there are what the
    compaction kept, by construction.

    Why it matters: seed 000 ("Core Distinction", "Decision Boundary"): the working set
    looks more relevant by the scorer's own metric while fewer source spans stay
    reachable; the scorer now ranks by survivability and summaries become
    unfalsifiable.  Salience metrics that improve while reachability degrades are
    inverted, not healthy.

    Known problems: each condition compares round t with round t - ``window`` only, so
    with ``sustain`` 1 one noisy rise of the cosine is enough, and an inversion whose
    salience rises more slowly than its noise between those two rounds is missed. A loop
    that purges old offloads by design lowers ``distinct_source_spans`` at every purge.
    With neither logged salience nor span texts to rebuild it, the rule is not
    applicable, and the report says so.  The rule fires on the signature whatever the
    conditions of validity (seed 000: depth >= 2, a scorer that does not penalize
    depth, continuous eviction); where one fails, its finding says so ("but the
    condition 'eviction is continuous' fails: this loop can drift, not invert") and is
    a warning, as drift is (compaction-drift): an error would say the loop cannot
    invert, and fail the gate.
    """

    code = "CA101"
    name = "salience-inversion"
    severity = Severity.ERROR
    summary = "raw_ratio under the floor while reachable spans fall and salience rises"
    action = ("halt compaction and rehydrate: expand the lowest-depth summary with the "
              "highest provenance fan-out (of those with a leaf to read again) until "
              "raw_ratio >= rehydrate_target")
    example = ("round 21: depth 3, raw_ratio 0.22 (< 0.25), distinct_source_spans "
               "88 -> 81, query_cosine_retained 0.61 -> 0.63")
    settings = ("min_depth", "raw_ratio_floor", "window", "sustain", "rehydrate_target")
    values = ("summary_depth_max", "raw_ratio", "distinct_source_spans_before",
              "distinct_source_spans", "query_cosine_retained_before",
              "query_cosine_retained")
    reads_raw_ratio = True
    reads_salience = True
    severity_note = "warning where a condition of validity fails (the loop can drift, not invert)"

    def evaluable(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """Besides the base checks: not judged at a product's compaction round with no
        work after the compaction (:func:`bare_compaction_rounds`), as compaction-drift
        is not: its raw_ratio and reachable spans are what the compaction kept, by
        construction (usertest68 #1: every second compaction of a Claude Code session
        read as an inversion boundary, "halt compaction and rehydrate")."""
        checks = self.signature_checks(ctx)
        # a product's trace only: a native log's compaction records keep the rule
        # judged there, as before this exemption (adv132 #4)
        bare = bare_compaction_rounds(ctx) if product_trace(ctx.session) else []
        if bare:
            checks.append((BARE_COMPACTION, ~pl.col("ri").is_in(bare)))
        return checks

    def signature_checks(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """The checks without which the signature cannot be read at a round (an earlier
        round to compare with, tokens, salience): what compaction-drift asks before
        calling a low raw share drift rather than inversion."""
        return super().evaluable(ctx)

    def condition(self, ctx: Context) -> pl.Expr:
        s = ctx.settings
        return ((pl.col("summary_depth_max") >= s.min_depth)
                & (pl.col("raw_ratio") < s.raw_ratio_floor) & FELL & ROSE)

    def evaluate(self, ctx: Context) -> Outcome:
        out = super().evaluate(ctx)
        if out.fired.height and any(c.status == "fails" for c in ctx.conditions):
            return Outcome(out.fired.with_columns(
                pl.lit(Severity.WARNING.value).alias("severity")), out.not_evaluated, out.judged)
        return out

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        used = ctx.cosine or "query_cosine_retained"
        # where a condition of validity fails (seed 000) the signature is drift: every
        # format says so with the finding, not only the verdict (usertest17 #3)
        failing = [c.name for c in ctx.conditions if c.status == "fails"]
        caveat = (f"; but the condition {' and '.join(repr(n) for n in failing)} fails: "
                  "this loop can drift, not invert" if failing else "")
        return (f"salience inversion: raw_ratio "
                f"{fmt_below(v['raw_ratio'], ctx.settings.raw_ratio_floor)} < "
                f"{ctx.settings.raw_ratio_floor}, distinct_source_spans "
                f"{v['distinct_source_spans_before']} -> {v['distinct_source_spans']}, "
                f"{used} {fmt_change(v[used + '_before'], v[used])} "
                f"at depth {v['summary_depth_max']}{caveat}")


@register
class ProvenanceFloor(BoundaryRule):
    """What it checks: ``summary_depth_max`` >= ``min_depth`` and
    ``distinct_source_spans`` < max(1, floor(start_spans * ``span_floor_fraction``)),
    where start_spans is the session record's, else the first round's value (the
    product floored up to its floating-point rounding: 100 * 0.29 is 29).  In a trace of
    a product's compactions (Claude Code, Codex, Cline, Gemini CLI, opencode, OpenHands)
    not judged where the depth reaches ``min_depth``: each compaction evicts every span
    it folds, so once a summary folds a summary the reachable source spans are those
    since the last compaction, by construction; what each compaction lost is judged per
    fact by silent-discriminating-fold.

    Why it matters: seed 000 ("Operational Effect"): the reachable-leaf count must not
    fall below a floor set at session start, or retained summaries rest on evidence the
    agent can no longer consult.  What to do differs from the seed's "rehydrate the
    lowest-depth summary": a summary in the working set already reaches its offloaded
    leaves (spec log-format.md, "reachable leaves"), so expanding it lifts
    ``raw_ratio``, not ``distinct_source_spans``: such advice would leave the count and
    the finding as they were.  The count
    rises when an offloaded source span that nothing in the working set reaches is read
    back; the finding says how many there are (``sources_to_read``: spans resolvable at
    the round less ``distinct_source_spans``) against how many the floor needs.

    Known problems: the floor is relative to the session's start: without
    ``start_spans`` in the session record, a log that begins mid-run (a resumed session)
    takes its first round's count as the start, and a session that starts with few spans
    gets a floor of 1.
    """

    code = "CA102"
    name = "provenance-floor"
    severity = Severity.ERROR
    summary = "reachable source spans fell below the floor set at session start"
    action = ("read back offloaded source spans that nothing in the working set reaches "
              "(the report counts them), or evict fewer source spans; expanding a "
              "summary in the working set lifts raw_ratio, not this count")
    example = ("round 30: distinct_source_spans 37 < floor 42 (start_spans 214 x 0.20); "
               "12 offloaded source spans nothing in the working set reaches can be read "
               "back (5 needed)")
    settings = ("min_depth", "span_floor_fraction", "sustain")
    values = ("summary_depth_max", "distinct_source_spans")

    def evaluable(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """Besides the base checks: in a trace of a product's compactions
        (:func:`~compaction_audit.rules.base.product_fold_rounds`: Claude Code, Codex,
        Cline, Gemini CLI, opencode, OpenHands), not judged where the depth reaches
        ``min_depth``: each compaction evicts every span it folds, so once a summary
        folds a summary the reachable source spans are those since the last compaction,
        by construction, and the floor says nothing of the product (usertest68 #1: every
        Claude Code session with two compactions failed on this error, each compaction
        losing nothing); what each compaction lost is judged per fact by
        silent-discriminating-fold, as ungrounded-summary leaves a compaction's summary
        to it."""
        checks = super().evaluable(ctx)
        if product_trace(ctx.session) and product_fold_rounds(ctx.session):
            checks.append((PRODUCT_FOLDS,
                           pl.col("summary_depth_max") < ctx.settings.min_depth))
        return checks

    def floor(self, ctx: Context) -> int:
        """The floor in spans: max(1, floor(start_spans * span_floor_fraction))."""
        # floor() of the product up to its rounding: 100 * 0.29 is 28.999999999999996,
        # and int() made the floor 28, not 29 (adv78 #4); a product within a few units
        # in the last place of a whole number is that number, never one past it (adv79:
        # 5e9 x 0.2 read 1,000,000,001 when a share of the product was added)
        product = ctx.start_spans * ctx.settings.span_floor_fraction
        near = round(product)
        if abs(product - near) <= 16 * math.ulp(product):
            return max(1, int(near))
        return max(1, math.floor(product))

    def condition(self, ctx: Context) -> pl.Expr:
        return ((pl.col("summary_depth_max") >= ctx.settings.min_depth)
                & (pl.col("distinct_source_spans") < self.floor(ctx)))

    def evaluate(self, ctx: Context) -> Outcome:
        out = super().evaluate(ctx)
        if not out.fired.height:
            return out
        out.fired = out.fired.join(_sources_to_read(ctx), on="ri", how="left").with_columns(
            pl.lit(self.floor(ctx)).alias("floor"), pl.lit(ctx.start_spans).alias("start_spans"),
            pl.col("sources_to_read").fill_null(0))
        return out

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        have, need = v["sources_to_read"], v["floor"] - v["distinct_source_spans"]
        if have:
            held = (f"{have:,} offloaded source span{'' if have == 1 else 's'} nothing in "
                    f"the working set reaches can be read back ({need:,} needed)")
        else:
            held = ("no offloaded source span is left to read back (the ones missing "
                    "were evicted or dropped): only new spans lift the count")
        return (f"provenance floor breached: distinct_source_spans "
                f"{v['distinct_source_spans']} < {v['floor']} (start_spans "
                f"{v['start_spans']} x {ctx.settings.span_floor_fraction}); {held}")


def _sources_to_read(ctx: Context) -> pl.DataFrame:
    """``ri``, ``sources_to_read``: per round index, the raw spans resolvable at the
    round (born at or before it, not evicted since: spec log-format.md, "resolvable")
    that no working-set item reaches, i.e. that count minus ``distinct_source_spans``.
    One cumulative sum over the spans' births and ends; a session without an items
    table (a series alone) reads 0."""
    items = ctx.session.items
    if "kind" not in items.columns:
        return pl.DataFrame(schema={"ri": pl.Int64, "sources_to_read": pl.Int64})
    spans = items.filter(pl.col("kind") == "span").select(
        "ri", resolvable_end(ctx.session).alias("gone"))
    change = (pl.concat([spans.select(pl.col("ri").alias("at"), pl.lit(1, pl.Int64).alias("d")),
                         spans.select(pl.col("gone").alias("at"),
                                      pl.lit(-1, pl.Int64).alias("d"))])
              .group_by("at").agg(pl.col("d").sum()))
    return (ctx.frame.select("ri", "distinct_source_spans")
            .join(change, left_on="ri", right_on="at", how="left").sort("ri")
            .select("ri", (pl.col("d").fill_null(0).cum_sum()
                           - pl.col("distinct_source_spans")).clip(0).alias("sources_to_read")))


@register
class DepthPin(BoundaryRule):
    """What it checks: ``summary_depth_max`` >= ``min_depth`` and
    ``rounds_at_max_depth`` > ``depth_pin_rounds``.

    Why it matters: seed 000 ("Decision Boundary"): a hierarchy pinned at its cap for
    more than five consecutive rounds makes inversion structural; it will recur.

    Known problems: depth is the height of the provenance DAG as logged: a summarizer
    that writes each new summary over raw spans and its predecessor's text, without
    listing the predecessor as a child, never raises the depth, and the rule cannot see
    that its summaries are summaries of summaries.  A round whose depth is past the
    session's own ``max_depth`` is not judged (``rounds_at_max_depth`` counts rounds at
    the cap exactly); the notes say so.
    """

    code = "CA103"
    name = "depth-pin"
    severity = Severity.ERROR
    summary = "summary depth pinned at the cap for too many consecutive rounds"
    action = "cap the hierarchy at depth 2, or accept the token cost"
    example = "round 18: summary_depth_max 3 at the cap for 6 consecutive rounds (> 5)"
    settings = ("min_depth", "depth_pin_rounds", "sustain")
    values = ("summary_depth_max", "rounds_at_max_depth")

    def condition(self, ctx: Context) -> pl.Expr:
        s = ctx.settings
        return ((pl.col("summary_depth_max") >= s.min_depth)
                & (pl.col("rounds_at_max_depth") > s.depth_pin_rounds))

    def evaluable(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """Not judged at a round whose depth is past the session's own ``max_depth``:
        ``rounds_at_max_depth`` counts rounds at the cap exactly (spec), so a log whose
        summaries outgrow its declared cap would pass in silence (usertest41 #7: 9
        rounds at depth 3 under ``max_depth`` 2)."""
        cap = ctx.series.depth_cap
        return [*super().evaluable(ctx),
                (f"summary_depth_max is past the session's max_depth {cap} (the log "
                 "outgrew its own cap; rounds_at_max_depth counts rounds at the cap)",
                 pl.col("summary_depth_max") <= cap)]

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        return (f"hierarchy pinned at depth {v['summary_depth_max']} for "
                f"{v['rounds_at_max_depth']} consecutive rounds "
                f"(> {ctx.settings.depth_pin_rounds})")




def bare_compaction_rounds(ctx: Context) -> list[int]:
    """Round indices of a product's compactions (an adapter's ``compaction`` record
    with a summary) at which no raw span but harness text entered: nothing happened in
    the log after the compaction within its round (adapters open the compaction's round
    at the compaction; docs/adapters.md, "Rounds")."""
    folds = product_fold_rounds(ctx.session)
    if not folds:
        return []
    items = ctx.session.items
    worked = set(items.filter((pl.col("kind") == "span") & pl.col("ri").is_in(folds)
                              & (span_type_from_source(pl.col("source")) != "harness"))
                 ["ri"].unique().to_list())
    return sorted(set(folds) - worked)


@register
class CompactionDrift(BoundaryRule):
    """What it checks: ``raw_ratio`` < ``raw_ratio_floor`` at a round where
    salience-inversion does not fire (reachable spans stable, or depth < min_depth; with
    ``sustain`` > 1 also a signature not yet held for ``sustain`` rounds).

    Why it matters: seed 000 ("Decision Boundary"): a low raw share alone is drift,
    lossy paraphrase rather than inversion; it degrades gracefully but deserves watching.

    Not judged at a product's compaction round (an adapter's ``compaction`` record with
    a summary; Claude Code, Codex, Cline) that holds no work after the compaction: no
    raw span but harness text (a ``/compact`` command wrapper) entered that round.  Its
    working set is then the summary just written beside what the compaction kept, so
    its raw_ratio is low by construction at every such compaction and measures the
    compaction, not the loop: a session compacted by hand as its last act would end on
    a drift warning no round of work supports.  The notes say so; the next round with
    work is judged as usual.

    Known problems: a low raw share is also what a faithful condensation of many short
    spans looks like; the rule cannot tell lossy paraphrase from a good summary. The
    recall rules (CA301-CA303) judge what a fold kept.
    """

    code = "CA104"
    name = "compaction-drift"
    severity = Severity.WARNING
    summary = "raw_ratio under the floor without the inversion signature"
    action = "drift, not inversion: continue and monitor"
    example = "round 25: raw_ratio 0.21 < 0.25, distinct_source_spans stable at 120"
    settings = ("raw_ratio_floor", "sustain")
    values = ("raw_ratio", "summary_depth_max", "distinct_source_spans")
    reads_raw_ratio = True

    def cosine_used(self, ctx: Context) -> str | None:
        """Drift is judged where salience-inversion could be: it reads the same series."""
        return ctx.cosine

    def evaluable(self, ctx: Context) -> list[tuple[str, pl.Expr]]:
        """Besides a non-empty working set: drift is only called where salience-inversion
        could be judged, or where depth or reachable spans that did not fall rule
        inversion out (salience unknown or not); a round at or above
        ``raw_ratio_floor`` is judged (no drift) either way."""
        judged = pl.lit(True)
        for _, expr in SalienceInversion().signature_checks(ctx):
            judged = judged & expr
        shallow = pl.col("summary_depth_max") < ctx.settings.min_depth
        above = pl.col("raw_ratio") >= ctx.settings.raw_ratio_floor  # no drift, whatever
        # reachable spans that did not fall rule inversion out, salience or none (seed
        # 000: "raw_ratio < 0.25 but distinct_source_spans is stable -> drift"; adv131
        # #1: a log without salience never got a drift warning at depth 2)
        stable = pl.col("distinct_source_spans") >= pl.col("distinct_source_spans_before")
        checks = [*super().evaluable(ctx),  # inversion does (usertest49 #6)
                  ("salience-inversion could not be judged there",
                   judged.fill_null(False) | shallow | above.fill_null(False)
                   | stable.fill_null(False))]
        bare = bare_compaction_rounds(ctx)
        if bare:
            checks.append((BARE_COMPACTION, ~pl.col("ri").is_in(bare)))
        return checks

    def condition(self, ctx: Context) -> pl.Expr:
        inversion = SalienceInversion().fires(ctx)
        return (pl.col("raw_ratio") < ctx.settings.raw_ratio_floor) & ~inversion

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        sustain = ctx.settings.sustain
        # with sustain > 1 the signature may hold at this round, not yet for long enough
        # (usertest41 #4: "without the inversion signature" where spans fell, the
        # cosine rose at depth 3 under sustain=2)
        why = ("without the inversion signature" if sustain == 1 else
               "where salience-inversion does not fire (its signature absent, or held "
               f"for fewer than the {sustain} rounds sustain needs)")
        return (f"compaction drift: raw_ratio "
                f"{fmt_below(v['raw_ratio'], ctx.settings.raw_ratio_floor)} < "
                f"{ctx.settings.raw_ratio_floor} {why}")


@register
class SummaryMajority(BoundaryRule):
    """What it checks: the first round at which summary tokens exceed raw tokens
    (``raw_ratio`` < ``summary_majority_ratio``).  Fires once per session.

    Why it matters: seed 000 ("Core Distinction"): once the scorer's input is
    majority-summary the signal can invert; this is the early structural signal.

    Known problems: a session whose first round is already majority-summary (a resumed
    run, or a log that starts after its first compaction) fires at its first round.
    """

    code = "CA105"
    name = "summary-majority"
    severity = Severity.INFO
    summary = "summary tokens exceed raw tokens for the first time"
    action = "the early structural signal: start watching reachability"
    product_action = ("expected at a product's compaction, which replaces the transcript "
                      "with its summary: see what the summary lost (the fold rules)")
    example = "round 9: summary_tokens 91,000 > raw_tokens 88,000 (raw_ratio 0.49)"
    settings = ("summary_majority_ratio", "sustain")
    values = ("raw_ratio", "raw_tokens", "summary_tokens")
    reads_raw_ratio = True

    def condition(self, ctx: Context) -> pl.Expr:
        return pl.col("raw_ratio") < ctx.settings.summary_majority_ratio

    def evaluate(self, ctx: Context) -> Outcome:
        out = super().evaluate(ctx)
        out.fired = out.fired.head(1)
        n = ctx.settings.sustain
        if n > 1 and out.fired.height:  # the round the run of n rounds began at
            first = ctx.frame["round"][int(out.fired["ri"][0]) - n + 1]
            out.fired = out.fired.with_columns(pl.lit(first, pl.Int64).alias("first_round"))
        return out

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        n = ctx.settings.sustain  # with sustain > 1 the finding is at the nth round of
        ratio = ctx.settings.summary_majority_ratio
        # raw tokens still in the working set, not what a compaction folded: beside
        # "summary 545 tokens for 139 folded", "raw tokens 107" read as a second count
        # of the same thing (usertest29 #5)
        counts = (f"summary tokens {v['summary_tokens']:,}",
                  f"raw tokens in context {v['raw_tokens']:,}")
        if ratio == 0.5:  # raw_ratio < 0.5: the summaries outweigh the raw spans
            said = f"{counts[0]} exceed {counts[1]}"  # 92,104, not 92104 (usertest18 #8)
            why = f"raw_ratio {fmt(v['raw_ratio'])}"
        else:  # another threshold: "exceed" and "for the first time" were untrue there
            said = (f"raw_ratio {fmt_below(v['raw_ratio'], ratio)} below summary_majority_ratio "
                    f"{fmt(ratio)}")  # (usertest24: 72,957 "exceed" 102,054 at 0.6)
            why = f"{counts[0]}, {counts[1]}"
        if n == 1:  # the run, not the first: "for the first time" was untrue (usertest17)
            return f"{said} for the first time ({why})"
        return (f"{said} ({why}), {n} rounds in a row (sustain {n}), first at round "
                f"{v['first_round']}")
