"""``audit --format html``: one section per trace (header, compactions and their lost
facts, findings most severe first, every lost fact, round panel, charts, notes), then
the rules reference."""

from __future__ import annotations

from typing import Any

from compaction_audit.conditions import can_invert
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.html import charts, data
from compaction_audit.report.html.page import esc, page
from compaction_audit.report.html.sections import (
    compactions_section,
    debt_unknown_note,
    episodes_table,
    html_table,
    lost_table,
    more,
    round_panel,
    rules_reference,
)
from compaction_audit.report.model import Report, SessionReport, reader_notes, session_named
from compaction_audit.report.summary import Row, gate_line, summary_rows, worst_first_key
from compaction_audit.rules.base import Severity, fmt


def _header(r: SessionReport) -> str:
    h = r.header
    rounds = r.series["round"]
    span = f"round {rounds[0]}..{rounds[-1]}" if len(rounds) else "no rounds"
    rows = [("trace", r.path), ("session", session_named(h)),
            ("format", r.source_format), ("rounds", f"{r.n_rounds} ({span})"),
            ("budget", f"{h.budget_tokens:,} tokens" if h.budget_tokens else "not recorded"),
            ("depth cap", str(h.max_depth) if h.max_depth else "not recorded")]
    if r.cosine:  # which cosine the charts draw and each rule read, as every report says
        rows.append(("cosine", r.cosine_line()))
    if unchecked := r.unchecked_phrase():  # as the text report's header (usertest15)
        rows.append(("unchecked", unchecked))
    for c in r.conditions:
        rows.append((c.name, f"{c.status}: {c.detail}"))
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    note = ("" if can_invert(r.conditions)
            else '<p><b>A condition fails: this loop can drift but not invert.</b></p>')
    verdict = r.verdict()
    head = r.verdict_head()  # the class that colours it: PASS, WARN or FAIL alone
    # the answer first, under the trace's name (as in the text report), then the facts
    # it rests on
    return (f'<p class="verdict {esc(head)}" id="verdict">{esc(verdict)}</p>'
            f'<table class="kv">{body}</table>{note}')


def session_section(r: SessionReport, index: int) -> tuple[str, dict[str, Any]]:
    """The HTML of one trace and its entry in the page data (charts, lookup table,
    findings for the round panel)."""
    sid = f"s{index}"
    quantities = data.known_columns(r.series, data.SERIES_QUANTITIES)
    debt = data.known_columns(r.series, data.DEBT_COLUMNS)
    points = data.downsample(r.series, [*quantities, *debt])
    marks, marks_cut = data.markers(r)
    eps = data.episodes(r.findings)
    chart_specs: dict[str, Any] = {}
    # the answer first, in the text report's order (issue 13: what the compactions
    # lost, then the findings, most severe first, then every lost fact), then the
    # round panel and the charts it explains
    html = [f'<section id="{sid}"><h2>{esc(r.path)}</h2>', _header(r)]
    if r.compactions:
        html.append(f"<h2>Compactions ({len(r.compactions)})</h2>"
                    + compactions_section(r.compactions))
    by_severity = sorted(eps, key=lambda e: (-Severity(e.severity).rank, e.code, e.first_round))
    html.append(f"<h2>Findings</h2>{episodes_table(by_severity)}")
    lost = r.extra.get("lost_discriminators") or []
    if lost and r.compactions:  # each compaction lists its own, as the text report says
        html.append(f'<p class="dim">{len(lost)} distinct lost discriminator(s) (a fact '
                    "several children stated is one): listed under Compactions</p>")
    elif lost:
        html.append(f"<h2>Lost discriminators ({len(lost)}, facts that matter first)</h2>"
                    + lost_table(lost))
    html.append(round_panel(sid))
    if r.n_rounds:
        chart_specs[f"{sid}-series"] = charts.series_chart(
            data.long_points(points, quantities), quantities, marks,
            r.settings.raw_ratio_floor)
        per = f"{r.n_rounds / points.height:.1f}".removesuffix(".0")  # 1.2, not "1"
        bucketed = (f" Each point is the mean of about {per} rounds."
                    if points.height < r.n_rounds else "")
        floor = (" The solid line across raw_ratio is its floor ("
                 + charts.floor_label(r.settings.raw_ratio_floor)
                 + ", the setting raw_ratio_floor): under it salience-inversion (the "
                 "inversion boundary) or compaction-drift can fire."
                 if "raw_ratio" in quantities else "")
        html.append(f"<h3>Series per round</h3><p class=\"dim\">Vertical rules mark the "
                    f"inversion onset (long dashes), the boundary (dash-dot), the depth "
                    f"pin (dots) and each compaction (grey dashes)."
                    f"{esc(floor)}{esc(bucketed)}</p>" + more(marks_cut, "marker")
                    + f'<div class="chart" id="{sid}-series"></div>')
    comp = data.compaction_points(r)
    if comp:
        chart_specs[f"{sid}-compactions"] = charts.compaction_chart(comp)
        html.append(f'<h3>Tokens before and after each compaction</h3>'
                    f'<div class="chart" id="{sid}-compactions"></div>')
    if debt and r.n_rounds:
        groups = data.same_lines(points, debt)
        chart_specs[f"{sid}-debt"] = charts.debt_chart(data.merged_points(points, groups),
                                                       marks)
        unknown = debt_unknown_note(r)
        same = "".join(f" {', '.join(g[:-1])} and {g[-1]} are equal at every round: one "
                       f"line, named for {'both' if len(g) == 2 else 'all'}."
                       for g in groups if len(g) > 1)
        html.append(f"<h3>Recall debt</h3><p class=\"dim\">Discriminators stated so far that "
                    f"nothing in the context can recover (seed 002), distinct facts at each "
                    f"round's end: a fact a compaction lost that the same round read again "
                    f"is no debt there, so the debt can be below a compaction's lost "
                    f"count.{esc(same)}"  # usertest61 A6: 215 lost, a debt of 143
                    f"{esc(unknown)}</p>"
                    f'<div class="chart" id="{sid}-debt"></div>')
    notes = r.rule_notes()
    said = reader_notes(r)
    notes += [f"note: {n}" for n in said[:data.MAX_ROWS]]
    notes += [f"limit: {x.message()}" for x in r.limits]
    notes += [f"skipped: {e}" for e in r.skipped[:data.MAX_ROWS]]
    if notes:
        html.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes)
                    + "</ul>" + more(len(said) - data.MAX_ROWS, "reader note")
                    + more(len(r.skipped) - data.MAX_ROWS, "skipped record"))
    html.append("</section>")
    entry = {"id": sid, "charts": chart_specs,
             "rounds": data.table(points, points.height < r.n_rounds),
             "items": data.panel_items(eps)}
    return "".join(html), entry


def traces_table(report: Report, fail_on: str | None = None,
                 rows: list[Row] | None = None) -> str:
    """One row per trace of a several-trace page, failing ones first, each linking to
    its section (usertest13: a folder's page opened on its first trace in path order, a
    PASS, with the four failing traces somewhere below); "" for one trace.  Given
    ``fail_on``, a trace whose verdict word does not say the gate's result says it in
    its note (:func:`~compaction_audit.report.summary.gate_note`).  ``rows``: the
    report's :func:`~compaction_audit.report.summary.summary_rows`, when made already."""
    rows = summary_rows(report, fail_on) if rows is None else rows
    if len(rows) < 2:
        return ""
    n = len(report.sessions)
    # the text and Markdown summaries' order (usertest24 #3): unreadable, failing,
    # warning, passing; within a verdict the traces the gate fails first
    order = sorted(range(len(rows)), key=lambda i: worst_first_key(rows[i]))
    body = []
    for i in order:
        r = rows[i]
        name = (f'<a href="#s{i}">{esc(r.trace)}</a>' if i < n else esc(r.trace))
        counts = ("" if r.errors is None else
                  f"{fmt(r.errors)} error(s), {fmt(r.warnings)} warning(s), {fmt(r.info)} info")
        onsets = "".join(f'<td class="num">{"-" if v is None else fmt(v)}</td>'
                         for v in (r.onset, r.boundary))  # as the text and Markdown
        body.append(f'<tr><td class="{esc(r.verdict)}">{esc(r.verdict)}</td><td>{name}</td>'
                    f'<td class="num">{fmt(r.rounds)}</td><td>{esc(counts)}</td>{onsets}'
                    f"<td>{esc(r.detail)}</td></tr>")  # summaries (usertest50)
    return ("<h2>Traces</h2>" + html_table(("verdict", "trace", "rounds", "findings",
                                            "inversion onset", "inversion boundary", "note"),
                                           body))


def render_html(report: Report, opts: RenderOptions) -> bytes:
    """The audit report as one self-contained HTML page (see :mod:`.page`)."""
    bodies, entries = [], []
    # the sections in the Traces table's order, failing first (usertest63 #7: the first
    # section under a failing-first table was a PASS, in argument order)
    rows = summary_rows(report, opts.fail_on)
    for i in sorted(range(len(report.sessions)), key=lambda i: worst_first_key(rows[i])):
        body, entry = session_section(report.sessions[i], i)
        bodies.append(body)
        entries.append(entry)
    errors = "".join(f'<li class="sev-error">{esc(e.named())}</li>' for e in report.errors)
    totals = {"error": 0, "warning": 0, "info": 0}
    for s in report.sessions:
        for k, v in s.counts().items():
            totals[k] += v
    # the gate's line, as the text and Markdown reports end: the exit code, what
    # reaches --fail-on, what could not be read or checked
    summary = (f"<p>{esc(gate_line(report, opts.fail_on))}; "
               f"{fmt(totals['error'])} error(s), {fmt(totals['warning'])} warning(s), "
               f"{fmt(totals['info'])} info in all</p>")
    codes = {f.code for s in report.sessions for f in s.findings}
    body = ("<h1>compaction-audit report</h1>" + summary + traces_table(report, opts.fail_on, rows)
            + (f"<h2>Unreadable traces</h2><ul>{errors}</ul>" if errors else "")
            + "".join(bodies)
            + (f"<h2>Rules</h2>{rules_reference(codes)}" if codes else ""))
    title = ("compaction-audit: " + report.sessions[0].path if len(report.sessions) == 1
             else "compaction-audit report")
    return page(title, body, {"kind": "audit", "sections": entries})
