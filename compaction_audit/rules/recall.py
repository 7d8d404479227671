"""Recall rules: folds that dropped discriminators, and the recall floor (seed 002).

All three read :func:`~compaction_audit.rules.recallctx.recall_of`, the cached
:class:`~compaction_audit.recall.analysis.Recall` analysis of the session, and
:func:`~compaction_audit.rules.recallctx.ranked_of`, its lost table with tiers.  A fold
finding names the fold (its ``entity``), each child that lost something and what it
lost (worded by :mod:`compaction_audit.rules.foldwords`); its severity follows the
worst kind lost, capped at a warning when every lost item is in a low tier (issue 10,
point 6).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import polars as pl

from compaction_audit.plans import one
from compaction_audit.reachability import interval_sum, interval_sums
from compaction_audit.recall.extract import KIND_RANK, Kind
from compaction_audit.recall.factkeys import fact_key
from compaction_audit.recall.ranking import (
    LOW_TIERS,
    TIER_NAMES,
    add_tiers,
    person_source,
    span_type_from_source,
)
from compaction_audit.rules.base import (
    Context,
    Outcome,
    Rule,
    Severity,
    ids_per_round,
    product_fold_rounds,
    register,
)
from compaction_audit.rules.foldwords import describe_at
from compaction_audit.rules.recallctx import ranked_of, recall_of
from compaction_audit.rules.textless import with_textless

_ERROR_RANK = KIND_RANK[Kind.VERSION]
"""Losing a version pin or anything ranked above it (quantity, scope, causal, negation,
constraint) is an error; identifiers, ordering and links only a warning unless they are
a person's specific words (:func:`person_fact`; usertest71 #3, a person's migration id
lost passed the gate), and only info when every lost one is in a low tier (issue: "a
lost negation or constraint outranks a lost number, which outranks a lost identifier
from a tool output")."""

PERSON_TIERS = ASKED_AGAIN, TYPED = (1, 2)
"""The tiers of a person's words (asked again, typed by a person:
:data:`~compaction_audit.recall.ranking.TIER_NAMES`): losing a fact of them is an error
whatever its kind where :func:`person_fact` says so (spec rules.md:
silent-discriminating-fold and recall-floor are errors by default; docs/log-format.md:
a span's ``role`` makes its losses fail a gate)."""


def person_fact(tier: pl.Expr, kind: pl.Expr, text: pl.Expr) -> pl.Expr:
    """Whether a lost fact of ``tier``, ``kind`` and ``text`` makes an error whatever
    its kind: the person asked for it again (tier 1), or typed it (tier 2) and it is no
    name, or a name with a digit, a dot or a slash in it (a migration id, a file, a
    URL: usertest71 #3), not a bare flag or command a summary may say in words
    (``--verbose``, ``npm test``: adv139 #4)."""
    return ((tier == ASKED_AGAIN) | ((tier == TYPED) & (~kind.is_in(list(_NAME_KINDS))
                                                      | text.str.contains(_SPECIFIC))))


def is_person_fact(tier: object, kind: str, text: str) -> bool:
    """:func:`person_fact` of one fact (the diff's units)."""
    return tier == ASKED_AGAIN or (tier == TYPED and (kind not in _NAME_KINDS
                                                      or re.search(_SPECIFIC, text) is not None))


_NAME_KINDS = ("identifier", "link")
_SPECIFIC = r"[0-9./\\]"
"""A character that makes a name specific: a digit, a dot, a slash or a backslash."""


def _span_types(ctx: Context) -> pl.DataFrame:
    """``(id, span_type)`` of the spans the lost table names, where it knows the type."""
    lost = recall_of(ctx).lost
    if "span_type" not in lost.columns:
        return pl.DataFrame(schema={"id": pl.String, "span_type": pl.String})
    return (lost.filter(pl.col("span_type").is_not_null())
            .select(pl.col("span").alias("id"), "span_type").unique("id"))


def loss_severity(rank: int, low: bool, ceiling: Severity, person: bool = False) -> str:
    """The severity of losing a fact of kind rank ``rank`` (:data:`~compaction_audit.
    recall.kinds.KIND_RANK`, the worst of a fold's), at most ``ceiling``: error from a
    version pin up, or when ``person`` (a lost fact :func:`person_fact` names), else
    warning; when ``low`` (every loss in a low
    tier, :data:`~compaction_audit.recall.ranking.LOW_TIERS`, or no dropped fact lost)
    at most a warning, and info below a version pin (issue 10, point 6)."""
    sev = (Severity.ERROR if (rank >= _ERROR_RANK or person) and not low
           else Severity.INFO if low and rank < _ERROR_RANK else Severity.WARNING)
    return (ceiling if _RANK[ceiling] < _RANK[sev] else sev).value  # min(sev, ceiling)


def _low_note(v: dict[str, Any]) -> str:
    """``" (a warning, not an error: every lost fact ranks other prose or below)"``:
    why a fold that lost a kind of error rank (a number, a version pin, a negation...)
    is not an error, where :func:`loss_severity` capped it (``low_tier``; usertest43 #1:
    "Set read_timeout_ms to 45000 on prod." in a span with no ``role``, lost silently,
    read as a plain warning under a rule whose default severity is error); "" elsewhere,
    and where a configuration sets the rule's severity (the engine drops ``low_tier``)."""
    best, worst = v.get("best_tier"), v.get("worst")
    if not (v.get("low_tier") and v.get("facts_lost") and type(best) is int
            and type(worst) is int and worst >= _ERROR_RANK):
        return ""
    return (" (a warning, not an error: every lost fact ranks "
            f"{TIER_NAMES.get(best, 'low')} or below)")


_RANK = {s: s.rank for s in Severity}
"""``Severity.rank`` of each severity, read from a dict (the property searches a tuple)."""


def _dropped_facts(ctx: Context) -> pl.DataFrame | None:
    """Every fact a fold dropped from a child, one row per (round ``ri``, ``fold``,
    ``child``, fact ``key``), harness children left out (boilerplate is never a
    finding), with its tier, ``pos`` (its place in the ranked lost table; null: another
    span still holds it, so it is not lost) and ``_silent`` (the child is not resolvable
    after the round and the fold is not accounted: silent-discriminating-fold, else
    topic-only-fold).  None when no fold dropped anything.  Computed once per audit:
    the fold findings and the report's Folds section (:func:`fold_facts`) count the
    same rows."""
    if "dropped_facts" in ctx.cache:
        cached: pl.DataFrame | None = ctx.cache["dropped_facts"]
        return cached
    ctx.cache["dropped_facts"] = None
    folds = recall_of(ctx).folds.filter(pl.col("dropped").list.len() > 0)
    if folds.height == 0:
        return None
    again = recall_of(ctx).lost.lazy().select("key", "asked_again_round")
    flat = one(  # one plan (issue 14, fleet audits)
        folds.lazy().with_columns((~pl.col("child_resolvable") & ~pl.col("accounted"))
                                  .alias("_silent"))
        .explode("dropped").unnest("dropped")
        .with_columns(fact_key(pl.col("kind"), pl.col("norm"), pl.col("text")).alias("key"))
        .join(again, on="key", how="left", maintain_order="left")
        # the child's own span type (recall/spantypes.py), which the fold checks carry
        .rename({"child_type": "span_type"})
    )
    # a fact's tier is where it was first stated (its row of the ranked lost table),
    # else where this child states it; the agent's own salience_class "discriminating"
    # on either span says a decision hinges on it (seed 002, "Decision Boundary")
    # (the tier's name and why come with it: a child's own would contradict it)
    stated = ranked_of(ctx).lazy().select("key", pl.col("tier").alias("_tier"),
                                          pl.col("tier_name").alias("_tier_name"),
                                          pl.col("tier_why").alias("_tier_why"),
                                          pl.col("span").alias("_span"),
                                          pl.int_range(pl.len()).alias("pos"))
    stated = stated.with_columns(pl.col("_span").alias("stated_in"))
    tagged = ctx.session.items.filter(pl.col("salience_class") == "discriminating")["id"]
    tiered = one(
        add_tiers(flat, source="child_source").lazy().filter(pl.col("span_type") != "harness")
        .join(stated, on="key", how="left", maintain_order="left")
        .with_columns(*(pl.when(pl.col("_tier").is_not_null()).then(f"_{c}")
                        .otherwise(c).alias(c) for c in ("tier", "tier_name", "tier_why")),
                      (pl.col("child").is_in(tagged.implode())
                       | pl.col("_span").is_in(tagged.implode())).alias("declared"))
        .drop("_tier", "_tier_name", "_tier_why", "_span")
    )
    found = tiered if tiered.height else None
    ctx.cache["dropped_facts"] = found
    return found


def _fact_counts(tiered: pl.DataFrame) -> pl.DataFrame:
    """Per (``ri``, ``fold``) of :func:`_dropped_facts` rows: ``facts`` (distinct facts
    dropped: a fact several children stated is one), ``facts_lost`` (those in the
    ranked lost table; the rest are still held by another span) and ``drops`` (rows:
    one per child and fact)."""
    return tiered.group_by("ri", "fold").agg(
        pl.col("key").n_unique().alias("facts"),
        pl.col("key").filter(pl.col("pos").is_not_null()).n_unique().alias("facts_lost"),
        pl.len().alias("drops"))


def fold_facts(ctx: Context) -> pl.DataFrame:
    """One row per (``ri``, ``fold``) that dropped a fact of a non-harness child:
    ``facts``, ``facts_lost`` and ``drops`` (:func:`_fact_counts`), the numbers the fold
    findings say (their values ``facts`` and ``facts_lost``); sorted by ``ri``, ``fold``."""
    tiered = _dropped_facts(ctx)
    if tiered is None:
        return pl.DataFrame(schema={"ri": pl.Int64, "fold": pl.String, "facts": pl.UInt32,
                                    "facts_lost": pl.UInt32, "drops": pl.UInt32})
    return _fact_counts(tiered).sort("ri", "fold")


def _fold_findings(ctx: Context, silent: bool, ceiling: Severity) -> pl.DataFrame:
    """One row per (round, fold) with a loss: children (their dropped discriminators
    with tiers; harness children left out: boilerplate is never a finding), worst kind
    rank, best tier, ``lost`` (drops: one per child and fact), ``facts`` and
    ``facts_lost`` (:func:`_fact_counts`) and severity."""
    tiered = _dropped_facts(ctx)
    if tiered is not None:
        tiered = tiered.filter(pl.col("_silent") == silent).drop("_silent")
    if tiered is None or tiered.height == 0:
        return pl.DataFrame(schema={"ri": pl.Int64})
    # severity follows what was lost: a fact another span still holds (no place in the
    # lost list, ``pos`` null) counts only when nothing was lost (usertest21 #1, adv70
    # #2: a held negation made an error of a fold that lost one value from tool output)
    is_lost = pl.col("pos").is_not_null()
    per_child = (
        tiered.group_by("ri", "fold", "child", maintain_order=True)
        .agg(pl.col("child_source", "child_resolvable", "accounted").first(),
             pl.struct("kind", "text", "norm", "rank", "tier", "tier_name", "key", "pos",
                       "stated_in")
             .sort_by("tier", "rank", descending=[False, True]).alias("dropped"),
             pl.col("rank").max().alias("_worst_any"),
             pl.col("tier").min().alias("_best_any"),
             pl.col("rank").filter(is_lost).max().alias("_worst_lost"),
             pl.col("tier").filter(is_lost).min().alias("_best_lost"),
             pl.col("declared").filter(is_lost).any(),
             (person_fact(pl.col("tier"), pl.col("kind"), pl.col("text")) & is_lost)
             .any().alias("_person"))
    )
    grouped = (
        per_child.sort("ri", "fold", "child")
        .group_by("ri", "fold", maintain_order=True)
        .agg(pl.struct("child", "child_source", "child_resolvable", "dropped")
             .alias("children"),
             pl.coalesce(pl.col("_worst_lost").max(), pl.col("_worst_any").max())
             .alias("worst"),
             pl.coalesce(pl.col("_best_lost").min(), pl.col("_best_any").min())
             .alias("best_tier"),
             pl.col("declared").any(), pl.col("_person").any(), pl.col("accounted").first(),
             pl.col("dropped").list.len().sum().alias("lost"))
        .join(_fact_counts(tiered).drop("drops"), on=["ri", "fold"], how="left",
              maintain_order="left")
    )
    # every loss in a low tier, or nothing lost at all: each fact it dropped is still
    # held by another span (usertest20 #1: an error for "0 lost facts")
    low = ((grouped["best_tier"].is_in(list(LOW_TIERS)) & ~grouped["declared"]
            & (not _asked_capped(ctx)))
           | (grouped["facts_lost"].fill_null(0) == 0))
    person = grouped["_person"].fill_null(False)
    grouped = grouped.drop("declared", "_person")
    sev = [loss_severity(w, lo, ceiling, pe)
           for w, lo, pe in zip(grouped["worst"], low, person, strict=True)]
    return grouped.with_columns(pl.Series("severity", sev), pl.col("fold").alias("entity"),
                                low.alias("low_tier"))


def _asked_capped(ctx: Context) -> bool:
    """Whether the "asked again" check stopped at its cap
    (:data:`~compaction_audit.recall.harm.ASKED_AGAIN_MAX_CHECKS`): a lost fact it did
    not reach may have been asked again, the tier that makes an error, so the tiers do
    not lower a severity then (adv103 #2: a tool output of 500 timings, lost in the
    same fold, spent the checks and turned 102 errors into warnings, exit 0)."""
    return any(x.check == "asked-again" for x in recall_of(ctx).limits)


@register
class SilentDiscriminatingFold(Rule):
    """What it checks: a fold whose text drops a discriminator of a child (number,
    version pin, identifier, negation with its object, cause, ordering, scope, link),
    where the child is not resolvable after the round and the fold records no
    ``accounting``.

    Why it matters: seed 002 ("Decision Boundary"): silent folding of a discriminating
    predicate is the failure; the agent will later answer a precision query from a
    topic-level summary, confidently and wrongly.  Severity follows the worst kind lost:
    an error from a version pin up (numbers, scopes, causes, negations, rules), a
    warning for identifiers, orderings and links, an error again for an ordering a
    person typed, a name they typed with a digit, a dot or a slash in it (a migration
    id, a file, a URL; not a bare flag), and any fact they
    asked for again (tiers 1 and 2: :func:`person_fact`).  A fold whose lost
    items are all in the low tiers (other prose, values and
    identifiers from tool output, finished work;
    :mod:`compaction_audit.recall.ranking`) is at most a
    warning, and info when what it lost ranks below a version pin (identifiers,
    orderings, links) (issue 10, point 6), unless the log marks a child
    ``salience_class: "discriminating"`` (the agent's own word that a decision hinges
    on it); so is a fold all of whose dropped facts another span still holds (nothing
    it dropped is lost: "5 facts, all still recoverable").  A fold that lost a kind of
    error rank and is a warning for its tiers says so in its message ("a warning, not
    an error: every lost fact ranks other prose or below").  A dropped fact another
    span still holds does not weigh in the severity of a fold that lost others.
    Harness text (caveats, skill documents, command wrappers) never yields a finding.
    A fold whose summary carries no text over a child that has one has nothing to
    compare: its round is counted as not evaluated, and such a compaction as one that
    could not be checked (in a log with no text at all, the rule is not applicable).

    Known problems: discriminators are found by regex heuristics
    (docs/discriminators.md, "Known limitations"): a number restated in words or a fact
    kept in other words outside the paraphrase classes counts as lost; proper nouns with
    an inner capital and IPv4 addresses count as discriminators; timings in tool output
    are reported, in the lowest tier.
    """

    code = "CA301"
    judges = "folds"
    reads_recall = True
    name = "silent-discriminating-fold"
    severity = Severity.ERROR
    severity_note = ("a warning where every fact lost is an identifier, ordering or "
                     "link no person typed (a person's bare flag or command too), or is "
                     "in the low tiers: other prose, tool "
                     "output, finished work; info where those are identifiers, "
                     "orderings or links; never lowered when the asked-again check "
                     "stopped at its limit")
    family = "recall"
    summary = "a fold dropped a discriminator and kept no reference to it or account of it"
    action = ("retain a reference to the raw span (offload instead of evict), restate the "
              "discriminator in the summary, or record the surrendered precision as "
              "accounting")
    product_action = ("before a decision rests on a lost fact, read it again at the line "
                      "shown; to keep such facts, say what to keep when compacting where "
                      "the product allows it, and put standing rules in a file the agent "
                      "reads again (its project instructions)")
    product_actions: ClassVar[dict[str, str]] = {
        "claude-code": ("before a decision rests on a lost fact, read it again at the line "
                        "shown; to keep such facts, say what to keep when compacting "
                        "(/compact followed by instructions) and put standing rules in a "
                        "file the agent reads again (CLAUDE.md)"),
        **{product: ("before a decision rests on a lost fact, read it again at the line "
                     "shown; to keep such facts, put standing rules in a file the agent "
                     f"reads again ({name})")
           for product, name in (("codex", "AGENTS.md"), ("opencode", "AGENTS.md"),
                                 ("cline", ".clinerules"), ("gemini-cli", "GEMINI.md"))},
    }
    example = ("round 14: fold L3 dropped quantity '45000' and identifier "
               "'read_timeout_ms' of s-0213, a person's span (evicted)")

    def evaluate(self, ctx: Context) -> Outcome:
        return with_textless(ctx, _fold_findings(ctx, True, self.severity))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        # a fold every one of whose dropped facts another span still holds lost nothing:
        # "silently dropped" said a loss (usertest25 #3); its severity is at most warning
        verb = "dropped, but lost nothing" if v.get("facts_lost") == 0 else "silently dropped"
        described = describe_at(v["children"], ctx, v["fold"])
        return f"fold {v['fold']} {verb}: {described}{_low_note(v)}"


@register
class TopicOnlyFold(Rule):
    """What it checks: a fold whose text drops a discriminator of a child, but the
    child stays resolvable (offloaded or retained) or the fold is accounted.

    Why it matters: seed 002 ("Condition of Validity"): the precision is still
    recoverable by reference, or the loss was recorded; the fold is topic-preserving
    only, which is acceptable but debits the recall budget.

    A warning; info where what it dropped ranks below a version pin and is in the low
    tiers or still held by another span, as silent-discriminating-fold's is set.

    Known problems: the same extraction as silent-discriminating-fold, with the same
    limits; "resolvable" means the log says the child was offloaded or is retained, not
    that the agent can or will fetch it again.
    """

    code = "CA302"
    judges = "folds"
    reads_recall = True
    name = "topic-only-fold"
    severity = Severity.WARNING
    severity_note = ("info where what it dropped ranks below a version pin and is in "
                     "the low tiers or still held by another span; never lowered by the "
                     "tiers when the asked-again check stopped at its limit")
    family = "recall"
    summary = "a fold dropped a discriminator that stays recoverable or was accounted"
    action = "keep the reference resolvable for as long as an open task may need it"
    example = "round 6: fold m1 (accounted) dropped version 'v4.2.1' of s1 (offloaded)"

    def evaluate(self, ctx: Context) -> Outcome:
        return with_textless(ctx, _fold_findings(ctx, False, self.severity))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        how = "accounted fold" if v["accounted"] else "fold"
        return (f"{how} {v['fold']} kept the topic only: "
                f"{describe_at(v['children'], ctx, v['fold'])}")


def _product_folds(ctx: Context) -> list[int]:
    """Round indices at which a product's compaction (an adapter's ``compaction``
    record with a summary) folded the working set, when the floor is the default 1:
    a span falling under the floor there is a loss silent-discriminating-fold reports
    at that fold (see :class:`RecallFloor`).  Empty for a native log, or a floor above
    1 (a span a summary keeps whole is then under the floor too, and no fold rule says
    so)."""
    if ctx.session.header.recall_floor > 1:
        return []
    return product_fold_rounds(ctx.session)


@register
class RecallFloor(Rule):
    """What it checks: a discriminating span covered by a working-set summary has
    fewer than the session's ``recall_floor`` resolvable references: the span itself
    while resolvable, plus each working-set summary whose text keeps all its
    discriminators.

    Why it matters: seed 002 ("Operational Effect"): raise a hard error when a fold
    would drop a predicate below the recall floor required by an open task.  Spans
    whose fold was accounted are left to topic-only-fold; harness text (caveats,
    skill documents, command wrappers) is never counted.  Severity follows the worst
    kind among the spans, like the fold rules (an error from a version pin up or for a
    person's lost fact, :func:`person_fact`; a warning for identifiers, orderings and
    links), and is at most a
    warning when every
    span's lost facts are in the low tiers (other prose, values from tool output,
    finished work; issue 10, point 6) and none is marked ``salience_class:
    "discriminating"``, info when those rank below a version pin (identifiers,
    orderings, links).  Spans an opaque compaction summary folded are not judged (the
    verdict counts that compaction as not checked).  A summary that names the full
    transcript on disk adds no reference (docs/adapters.md, "A summary that points to
    the transcript").

    Compactions read from a product's log (Claude Code, Codex, Cline): the adapter
    evicts everything a compaction folds, so with the default floor of 1 a span falls
    under the floor at that compaction exactly when the fold dropped one of its
    discriminators, which silent-discriminating-fold already reports, naming what was
    lost; and it stays under the floor at every later round.  A span that falls under
    the floor at a product compaction's round is therefore left to that rule (one
    finding per loss, not one per round after it).  The rule still fires where it adds
    something: in a native log (offloads purged later, a ``recall_floor`` above 1, a
    summary that keeps a span's facts until a later eviction), and in a product log
    where a span falls under the floor at another round (a microcompact evicting what
    an earlier summary only covered).

    Known problems: a summary counts as a reference only while it keeps every
    discriminator of the span, by the same word-overlap check as the fold rules, so a
    summary that keeps a fact in other words does not count.
    """

    code = "CA303"
    judges = "folds"
    reads_recall = True
    name = "recall-floor"
    severity = Severity.ERROR
    severity_note = ("a warning where the spans' lost facts are identifiers, orderings "
                     "or links no person typed (a person's bare flag or command too), or "
                     "where every span's lost "
                     "facts are in the low tiers: "
                     "other prose, tool output, finished work; info where those rank "
                     "below a version pin; never lowered when the asked-again check "
                     "stopped at its limit")
    family = "recall"
    summary = "a discriminating span under a retained summary has too few references"
    action = "rehydrate the span from its source or restate its discriminators"
    example = ("round 9: 1 discriminating span(s) under a retained summary have no "
               "resolvable reference; new at this round: s-0031")

    def evaluate(self, ctx: Context) -> Outcome:
        """One row per round with spans under the floor: their count, the spans that
        fell under it at that round (``new_spans``), and the severity of the worst kind
        among all of them; computed on intervals, never one row per span per round."""
        floor = recall_of(ctx).floor
        if floor.height == 0:
            return Outcome(pl.DataFrame(schema={"ri": pl.Int64}))
        n = ctx.session.n_rounds
        best = (ranked_of(ctx).group_by("span")
                .agg(pl.col("tier").min(),
                     person_fact(pl.col("tier"), pl.col("kind"), pl.col("text")).any()
                     .alias("_person"))
                .rename({"span": "leaf"}))
        person = person_source(pl.col("source"))
        opaque = [c["summary_id"] for c in ctx.session.compactions
                  if c.get("opaque") and c.get("summary_id") is not None]
        unchecked = ctx.session.edges.filter(pl.col("parent").is_in(opaque))["child"]
        spans = (
            # what an opaque (encrypted) summary folded cannot be checked: the verdict
            # says so (issue 10, point 8); counting it under the floor would be a guess
            floor.filter(~pl.col("leaf").is_in(unchecked.implode())
                         & ~pl.col("start").is_in(_product_folds(ctx)))
            .join(_span_types(ctx).rename({"id": "leaf"}), on="leaf", how="left")
            .with_columns(pl.col("span_type").fill_null(span_type_from_source(pl.col("source"))))
            .filter(pl.col("span_type") != "harness")
            .join(best, on="leaf", how="left")
            # a span whose lost facts rank elsewhere (or only the logged salience_class
            # marks it) keeps its source's weight: a person's words are never low
            .join(ctx.session.items.select(pl.col("id").alias("leaf"), "salience_class"),
                  on="leaf", how="left")
            # a fact of a person's the lost list holds makes an error whatever its
            # kind (person_fact); a person's span whose facts another span holds does
            # not (adv139 #3: CA301 said "lost nothing", CA303 failed the gate), nor
            # the agent's tag alone
            .with_columns(pl.col("_person").fill_null(False).alias("typed"))
            .with_columns(pl.when(pl.col("salience_class") == "discriminating").then(2)
                          .when(pl.col("tier").is_not_null()).then(pl.col("tier"))
                          .when(person | pl.col("rank").is_null()).then(2).otherwise(6)
                          .alias("tier"))
            .with_columns(pl.col("rank").fill_null(KIND_RANK[Kind.NEGATION]),
                          pl.col("tier").is_in(list(LOW_TIERS)).alias("low"))
        )
        if spans.height == 0:
            return Outcome(pl.DataFrame(schema={"ri": pl.Int64}))
        count = interval_sum(spans, n).rename({"value": "below_floor"})
        worst = (interval_sum(spans, n, by="rank").filter(pl.col("value") > 0)
                 .group_by("ri").agg(pl.col("rank").max()))
        loud = interval_sums(spans, n, {"loud": (~pl.col("low")).cast(pl.Int64),
                                        "typed": pl.col("typed").cast(pl.Int64)})
        rows = ids_per_round(count.filter(pl.col("below_floor") > 0)
                             .join(worst, on="ri", how="left").join(loud, on="ri", how="left"),
                             spans.select(pl.col("start").alias("ri"), pl.col("leaf").alias("id")),
                             "new_spans")
        capped = _asked_capped(ctx)  # then no tier lowers it (as for the folds)
        sev = [loss_severity(r, loud == 0 and not capped, self.severity, bool(typed))
               for r, loud, typed in zip(rows["rank"], rows["loud"],
                                         rows["typed"].fill_null(0), strict=True)]
        return Outcome(rows.with_columns(pl.Series("severity", sev),
                                         pl.lit(ctx.session.header.recall_floor)
                                         .alias("recall_floor")).drop("rank", "loud", "typed"))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        spans = v["new_spans"]
        shown = ", ".join(spans[:10]) + (f" and {len(spans) - 10} more"
                                          if len(spans) > 10 else "")
        newly = f"; new at this round: {shown}" if spans else ""
        floor = v["recall_floor"]
        refs = ("no resolvable reference" if floor == 1 else
                f"fewer than {floor} resolvable references")
        return (f"{v['below_floor']} discriminating span(s) under a retained summary have "
                f"{refs}{newly}")
