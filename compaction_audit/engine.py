"""Run the selected rules over a session and collect every finding into a report."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from compaction_audit.cosine import Rebuilt, rebuild
from compaction_audit.cosine.embed import answer_pending
from compaction_audit.findingvalues import VALUES_LIST_CAP, capped, frame_rows, over_cap
from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.model import Session
from compaction_audit.onset import onsets
from compaction_audit.recall.analysis import typed_items
from compaction_audit.recall.caches import forget as forget_text_caches
from compaction_audit.recall.caches import keeps as keeps_text_caches
from compaction_audit.recall.extract import share as share_extraction
from compaction_audit.recall.sections import compaction_view, debt_checked, recall_sections
from compaction_audit.recall.textwork import TextJobs
from compaction_audit.rehydrate import suggestions
from compaction_audit.report.model import NotEvaluated, SessionReport
from compaction_audit.rules import RULES, Context, Finding, Rule, Severity
from compaction_audit.rules.applies import not_applicable
from compaction_audit.rules.recall import fold_facts
from compaction_audit.rules.recallctx import ranked_of, recall_of
from compaction_audit.series import build_series
from compaction_audit.settings import Settings

REHYDRATE_RULES = ("salience-inversion",)
"""Rules whose findings name the summary to rehydrate (seed 000, Decision Boundary)."""


def select_rules(codes: Iterable[str] | None = None) -> list[Rule]:
    """Instances of the registered rules, all by default, else those whose code or
    name is listed; ordered by code."""
    wanted = set(codes) if codes is not None else None
    return [cls() for code, cls in sorted(RULES.items())
            if wanted is None or code in wanted or cls.name in wanted]


def run_rules(ctx: Context, rules: list[Rule],
              severity: dict[str, Severity] | None = None, keep_caches: bool = False
              ) -> tuple[list[Finding], list[NotEvaluated], dict[str, str]]:
    """Evaluate ``rules``; returns findings (by round, then code), skipped rounds (in
    the order of ``rules``) and the rules that judged no round, code -> reason.

    A rule whose kind of input the trace lacks (:func:`~compaction_audit.rules.applies.
    not_applicable`) is not evaluated: one note covers every round.

    ``severity`` overrides a rule's default severity by rule name.  Rules that read the
    recall analysis (``Rule.reads_recall``) are evaluated last: its text work runs in a
    helper process meanwhile (issue 14); each rule's findings are its own, so the
    order of evaluation changes nothing in the result.

    The recall modules' text caches are cleared after each rule, or with
    ``keep_caches`` once after the last (:func:`compaction_audit.recall.caches.keeps`).
    """
    series = ctx.series.frame  # line_file: the file of each round's line (series.py)
    frame = series.select("ri", "round", "line", *(["line_file"] if "line_file" in
                                                    series.columns else []))
    findings: list[Finding] = []
    notes_of: list[list[NotEvaluated]] = [[] for _ in rules]
    unjudged: dict[str, str] = {}
    n = frame.height  # one row per round
    lacks = {kind: not_applicable(kind, ctx.session)  # once per kind, not per rule
             for kind in dict.fromkeys(rule.judges for rule in rules)}
    for at in sorted(range(len(rules)), key=lambda k: rules[k].reads_recall):
        rule = rules[at]
        lacking = lacks[rule.judges]
        if lacking is not None and n:
            notes_of[at].append(NotEvaluated(rule.name, rule.code, lacking, n))
            unjudged[rule.code] = lacking
            continue
        outcome = rule.evaluate(ctx)
        if not keep_caches:
            forget_text_caches()  # the trace's texts, memoized by the rule's text work
        for reason, count in outcome.not_evaluated.items():
            notes_of[at].append(NotEvaluated(rule.name, rule.code, reason, count,
                                             outcome.of.get(reason)))
        skipped = sum(outcome.not_evaluated.values())
        if n and outcome.not_evaluated and (
                outcome.judged == 0 if outcome.judged is not None else skipped >= n):
            unjudged[rule.code] = max(outcome.not_evaluated.items(), key=lambda x: x[1])[0]
        if not outcome.fired.height:  # nothing fired: no join, no rows (issue 14, fleets)
            continue
        rows = outcome.fired.join(frame, on="ri", how="left").sort("ri")
        del outcome  # a long session's fired rows can be large: keep one copy
        rehydrate: dict[int, dict[str, Any]] = {}
        if rule.name in REHYDRATE_RULES and rows.height:
            rehydrate = suggestions(ctx.session, ctx.series, rows["ri"].to_list(),
                                    ctx.settings.rehydrate_target)
        override = (severity or {}).get(rule.name)
        action = (rule.product_actions.get(
            str(ctx.session.header.extra.get("source_format")), rule.product_action)
            if rule.product_action and ctx.session.compactions else rule.action)
        over = over_cap(rows, VALUES_LIST_CAP).to_list()  # rows with a list to cut
        for k, row in enumerate(frame_rows(rows)):
            ri, number, line = row.pop("ri"), row.pop("round"), row.pop("line")
            line_file = row.pop("line_file", None)
            if (at_line := row.pop("at_line", None)) is not None:  # a line of the round
                line = at_line  # the rule names (CA307: the call that broke the rule)
            entity = row.pop("entity", None)
            own = row.pop("severity", None)
            if override:  # the configured severity, not the tiers' cap (rules/recall.py)
                row.pop("low_tier", None)
            sev = override or (Severity(own) if own else rule.severity)
            if ri in rehydrate:
                row["rehydrate"] = rehydrate[ri]
            message = row.pop("message", None) or rule.message(row, ctx)
            findings.append(Finding(rule.name, rule.code, sev, number, line, message,
                                    action, capped(row) if over[k] else row, entity,
                                    line_file))
    if keep_caches:
        forget_text_caches()
    findings.sort(key=lambda f: (f.round, f.code))
    return findings, [note for notes in notes_of for note in notes], unjudged


def with_summary_text(compactions: list[dict[str, Any]], session: Session
                      ) -> list[dict[str, Any]]:
    """Each compaction with ``summary_text``: the text of its summary item (found by
    ``summary_id``), null when the summary has no id, no text or is not in the log.
    The HTML report shows it on demand (issue 13, section 1: "each compaction's full
    summary")."""
    ids = [c["summary_id"] for c in compactions if c.get("summary_id") is not None]
    if not ids:
        return [{**c, "summary_text": None} for c in compactions]
    texts = dict(session.items.filter(pl.col("id").is_in(ids))
                 .select("id", "text").unique("id", keep="first").iter_rows())
    return [{**c, "summary_text": texts.get(c.get("summary_id"))} for c in compactions]


def audit_session(session: Session, settings: Settings | None = None,
                  rules: list[Rule] | None = None,
                  severity: dict[str, Severity] | None = None,
                  source_format: str = "native") -> SessionReport:
    """Build the series, run the rules and assemble the :class:`SessionReport`."""
    with paused_gc():  # the audit builds many small objects and no cycles
        settings = settings or Settings()
        # the recall analysis's texts, listed now: on a large session a helper process
        # extracts them (then checks the pairs planned once the series is built) while
        # this one rebuilds the cosine, the series and runs the rules before the recall
        # ones (issue 14)
        items = typed_items(session)
        jobs = TextJobs.start(session, items)
        share_extraction(jobs.lookup)  # the rules read these texts' discriminators too
        try:
            # the wait for the embedding helper's answer, if any, spent extracting
            jobs.extract_while(answer_pending)
            rebuilt = rebuild(session)
            series = build_series(session, rebuilt.series)
            jobs.plan(session, items, series)  # the helper's survival checks, queued
            ctx = Context(session, series, settings, rebuilt=rebuilt,
                          cache={"typed_items": items, "text_jobs": jobs})
            chosen = rules if rules is not None else select_rules()
            findings, notes, unjudged = run_rules(ctx, chosen, severity, keeps_text_caches(
                int(session.items["text"].str.len_chars().sum() or 0)))
            recall, ranked = recall_of(ctx), ranked_of(ctx)
            return SessionReport(
                path=session.path,
                header=session.header,
                settings=settings,
                series=series.frame.join(debt_checked(recall.debt, session, recall.redacted),
                                         on="ri", how="left").sort("ri").drop("ri"),
                findings=findings,
                conditions=ctx.conditions,
                onsets=onsets(ctx, findings),
                not_evaluated=notes,
                limits=[*recall.limits, *ctx.limits],
                skipped=session.skipped,
                dependent=session.dependent,
                compactions=with_summary_text(compaction_view(session, recall, ranked),
                                              session),
                source_format=source_format,
                extra=recall_sections(recall, session, ranked, fold_facts(ctx)),
                cosine=cosine_section(ctx, rebuilt, chosen),
                rules_run=[r.code for r in chosen],
                task=rebuilt.query.task_words(),
                unjudged=unjudged,
            )
        finally:
            share_extraction(None)
            jobs.close()


def cosine_section(ctx: Context, rebuilt: Rebuilt, rules: list[Rule]) -> dict[str, Any]:
    """How the rebuilt cosine was made and which series each salience rule read (issue
    16): ``method``, ``query`` (origin), ``query_detail``, ``items``, ``distinct_texts``,
    ``reason`` (why nothing was rebuilt), ``used_by`` (rule name -> series, None when
    the rule had no salience to read) and ``inversion_signature`` (the series the
    onsets read)."""
    used = {r.name: r.cosine_used(ctx) for r in rules
            if r.reads_salience or type(r).cosine_used is not Rule.cosine_used}
    return {**rebuilt.as_dict(), "used_by": used, "inversion_signature": ctx.cosine,
            **({"rebuilt_because": ctx.cosine_why} if ctx.cosine_why else {})}
