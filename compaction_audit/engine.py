"""Run the selected rules over a session and collect every finding into a report."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import polars as pl

from compaction_audit.cosine import Rebuilt, rebuild
from compaction_audit.cosine.embed import answer_pending
from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.model import Session
from compaction_audit.onset import onsets
from compaction_audit.pyvalues import values as python_values
from compaction_audit.recall.analysis import typed_items
from compaction_audit.recall.caches import forget as forget_text_caches
from compaction_audit.recall.caches import keeps as keeps_text_caches
from compaction_audit.recall.extract import share as share_extraction
from compaction_audit.recall.sections import compaction_view, recall_sections
from compaction_audit.recall.textwork import TextJobs
from compaction_audit.rehydrate import suggestions
from compaction_audit.report.model import NotEvaluated, SessionReport
from compaction_audit.rules import RULES, Context, Finding, Rule, Severity
from compaction_audit.rules.applies import not_applicable
from compaction_audit.rules.recall import fold_facts, ranked_of, recall_of
from compaction_audit.series import build_series
from compaction_audit.settings import Settings

REHYDRATE_RULES = ("salience-inversion", "provenance-floor")
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
            notes_of[at].append(NotEvaluated(rule.name, rule.code, reason, count))
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
        over = _over_cap(rows, VALUES_LIST_CAP).to_list()  # rows with a list to cut
        for k, row in enumerate(_rows(rows)):
            ri, number, line = row.pop("ri"), row.pop("round"), row.pop("line")
            line_file = row.pop("line_file", None)
            entity = row.pop("entity", None)
            own = row.pop("severity", None)
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


VALUES_LIST_CAP = 50
"""Most elements a list in a finding's values keeps (at any depth); the message is
written from the whole list first.  Keeps output proportional to what a person can act
on (issue 11, item 5: a 2.3 MB trace gave a 976 MB JSON report)."""


def capped(value: Any, cap: int = VALUES_LIST_CAP) -> Any:
    """``value`` with every list cut to ``cap`` elements, recursively.

    A list cut inside an object (``{"children": [...]}``) gets a sibling key
    ``children_more`` with the number of elements left out; the object's other keys are
    kept.  Shapes: dicts, lists and scalars as in a finding's values.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, list):
                out[key] = _capped_list(item, cap)
                if len(item) > cap:
                    out[f"{key}_more"] = len(item) - cap
            else:
                out[key] = capped(item, cap) if isinstance(item, dict) else item
        return out
    if isinstance(value, list):
        return _capped_list(value, cap)
    return value


def _capped_list(items: list[Any], cap: int) -> list[Any]:
    """The first ``cap`` of ``items``, each :func:`capped` (scalars as they are, without
    a call: a fold finding holds thousands of them)."""
    return [capped(item, cap) if isinstance(item, dict | list) else item
            for item in items[:cap]]


def _longest(expr: pl.Expr, dtype: Any) -> pl.Expr | None:
    """Per row, the longest list anywhere inside ``expr`` (of type ``dtype``); None
    when the type holds no list (``dtype``: a Polars data type)."""
    if isinstance(dtype, pl.List):
        inner = _longest(pl.element(), dtype.inner)
        own = expr.list.len()
        if inner is None:
            return own
        return pl.max_horizontal(own, expr.list.eval(inner).list.max())
    if isinstance(dtype, pl.Struct):
        parts = [part for f in dtype.fields
                 if (part := _longest(expr.struct.field(f.name), f.dtype)) is not None]
        return pl.max_horizontal(parts) if parts else None
    if dtype.is_nested():  # another nested type: assume the worst
        return pl.lit(1 << 62, pl.Int64)
    return None


def _over_cap(frame: pl.DataFrame, cap: int) -> pl.Series:
    """Per row: does a list anywhere in it hold more than ``cap`` elements?  Computed
    in Polars, so that :func:`capped` (which copies) walks only the rows it changes."""
    parts = [part for name, dtype in frame.schema.items()
             if (part := _longest(pl.col(name), dtype)) is not None]
    if not parts:
        return pl.Series([False] * frame.height, dtype=pl.Boolean)
    return frame.select((pl.max_horizontal(parts).fill_null(0) > cap).alias("over"))["over"]


_CHUNK_ROWS = 512
_CHUNK_VALUES = 50_000
"""Most list elements (at any depth) :func:`_rows` converts at a time: a chunk ends
before :data:`_CHUNK_ROWS` rows when its rows hold more (adv75 #1: 300 folds of 100
children with 50 dropped facts each were converted at once, 1.5 M dicts, before any
row was capped)."""


def _weight(expr: pl.Expr, dtype: Any) -> pl.Expr | None:
    """Per row, the number of list elements anywhere inside ``expr`` (of type
    ``dtype``); None when the type holds no list."""
    if isinstance(dtype, pl.List):
        inner = _weight(pl.element(), dtype.inner)
        own = expr.list.len().fill_null(0)
        if inner is None:
            return own
        return own + expr.list.eval(inner).list.sum().fill_null(0)
    if isinstance(dtype, pl.Struct):
        parts = [part for f in dtype.fields
                 if (part := _weight(expr.struct.field(f.name), f.dtype)) is not None]
        return pl.sum_horizontal(parts) if parts else None
    return None


def _chunks(frame: pl.DataFrame) -> list[tuple[int, int]]:
    """(start, length) of the chunks :func:`_rows` converts: at most
    :data:`_CHUNK_ROWS` rows and, past its first row, :data:`_CHUNK_VALUES` list
    elements each."""
    parts = [part for name, dtype in frame.schema.items()
             if (part := _weight(pl.col(name), dtype)) is not None]
    if not parts:
        return [(start, _CHUNK_ROWS) for start in range(0, frame.height, _CHUNK_ROWS)]
    weights = frame.select(pl.sum_horizontal(parts).alias("w"))["w"].to_list()
    out: list[tuple[int, int]] = []
    start = total = 0
    for k, w in enumerate(weights):
        if k > start and (k - start >= _CHUNK_ROWS or total + w > _CHUNK_VALUES):
            out.append((start, k - start))
            start, total = k, 0
        total += w
    if start < frame.height:
        out.append((start, frame.height - start))
    return out


def _rows(frame: pl.DataFrame) -> Iterator[dict[str, Any]]:
    """``frame.iter_rows(named=True)``, converted a column and a chunk at a time.

    Strings inside list and struct columns (the summaries of an ungrounded-summary
    finding, one list per round; a fold finding's children and their dropped
    discriminators) are shared across the frame: an id listed at many rounds is one
    Python string, not one per round, which keeps the findings of a long session to
    pointers.
    """
    names = frame.columns
    shared: dict[str, str] = {}
    for start, length in _chunks(frame):
        chunk = frame.slice(start, length)
        columns: list[list[Any]] = []
        for name in names:
            column = chunk[name]
            columns.append(python_values(column, shared))  # keys, strings shared (issue 14)
        for row in zip(*columns, strict=True):
            yield dict(zip(names, row, strict=True))


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


DEBT_UNKNOWN = ("recall_debt", "recall_debt_fold", "recall_debt_eviction")
"""The debt columns that are unknown from a compaction whose loss cannot be checked."""


def debt_checked(debt: pl.DataFrame, session: Session, redacted: bool) -> pl.DataFrame:
    """``debt`` (one row per round index ``ri``) with :data:`DEBT_UNKNOWN` null from
    the round of the first compaction whose loss cannot be checked (opaque, redacted or
    marked ``unchecked`` by its adapter; every round of a log that is mostly redaction,
    ``redacted``): what it lost is not counted, so a count there would be a floor read
    as a measure (a 0 plotted after an encrypted compaction; ``diff`` called it
    "8 -> 0 (-8)", usertest26 #1)."""
    rounds = [c["ri"] for c in session.compactions
              if c.get("opaque") or c.get("redacted") or c.get("unchecked")]
    start = 0 if redacted else min(rounds, default=None)
    if start is None or not set(DEBT_UNKNOWN) <= set(debt.columns):
        return debt
    return debt.with_columns(pl.when(pl.col("ri") < start).then(pl.col(name)).alias(name)
                             for name in DEBT_UNKNOWN)


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
                unjudged=unjudged,
            )
        finally:
            share_extraction(None)
            jobs.close()


def cosine_section(ctx: Context, rebuilt: Rebuilt, rules: list[Rule]) -> dict[str, Any]:
    """How the rebuilt cosine was made and which series each salience rule read (issue
    16): ``method``, ``query`` (origin), ``query_detail``, ``task`` (a digest of the
    task query or the first prompt, None without one:
    :meth:`~compaction_audit.cosine.query.TaskQuery.task_digest`), ``items``,
    ``distinct_texts``,
    ``reason`` (why nothing was rebuilt), ``used_by`` (rule name -> series, None when
    the rule had no salience to read) and ``inversion_signature`` (the series the
    onsets read)."""
    used = {r.name: r.cosine_used(ctx) for r in rules
            if r.reads_salience or type(r).cosine_used is not Rule.cosine_used}
    return {**rebuilt.as_dict(), "used_by": used, "inversion_signature": ctx.cosine}
