"""``diff --format html``: the two runs overlaid per quantity with both inversion onsets
marked, the onsets side by side, the finding units by status, the gates."""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.diff import (
    STATUSES,
    FindingDelta,
    Occurrence,
    RunDiff,
    describe,
    failed_heading,
    gated_headline,
    gates_named,
    onset_label,
    split_onsets,
    status_heading,
)
from compaction_audit.report.gaps import coverage_phrases
from compaction_audit.report.html import charts, data
from compaction_audit.report.html.page import esc, page
from compaction_audit.report.html.sections import (
    debt_unknown_note,
    html_table,
    more,
    round_panel,
    rule_link,
    rules_reference,
)
from compaction_audit.report.lines import line_at

RUNS = ("baseline", "candidate")


def _points(diff: RunDiff) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The aligned series downsampled (wide, for the panel) and as long rows
    ``{round, round_end, line, quantity, run, value}`` (for the chart)."""
    frame = diff.series.with_columns(pl.lit(None, pl.Int64).alias("line"))
    cols = [f"{q}_{run}" for q in diff.quantities for run in RUNS]
    points = data.downsample(frame, cols)
    long = (points.with_columns(pl.col(c).cast(pl.Float64) for c in cols)
            .unpivot(cols, index=["round", "round_end", "line"], variable_name="column")
            .with_columns(pl.col("column").str.extract(r"^(.*)_(?:baseline|candidate)$", 1)
                          .alias("quantity"),
                          pl.col("column").str.extract(r"_(baseline|candidate)$", 1)
                          .alias("run"))
            .drop("column"))
    return points, long.to_dicts()


NO_ROUND = "no such round"
"""What the round panel shows for a run that has no such round (its values are not
unknown: usertest27 #6), as the text report's ``-``."""


def _without_missing(diff: RunDiff, table: dict[str, Any]) -> dict[str, Any]:
    """``table`` (:func:`~compaction_audit.report.html.data.table` of the aligned
    series, one row per round) with :data:`NO_ROUND` in each value of a run that lacks
    the row's round; a table of buckets is left as it is (a bucket's means)."""
    if table["bucketed"]:
        return table
    series = diff.series
    missing = {run: set(series.filter(~pl.col(f"in_{run}"))["round"].to_list())
               for run in RUNS}
    columns = table["columns"]
    at = {run: [k for k, c in enumerate(columns) if c.endswith(f"_{run}")] for run in RUNS}
    for row in table["rows"]:
        for run in RUNS:
            if row[0] in missing[run]:
                for k in at[run]:
                    row[k] = NO_ROUND
    return table


def _markers(diff: RunDiff) -> list[dict[str, Any]]:
    o = diff.onset("inversion_onset")
    out = []
    for run, value in (("baseline", o.baseline), ("candidate", o.candidate)):
        if value is not None:
            out.append({"round": value, "kind": f"{run} onset",
                        "label": f"{run} inversion onset (round {value})"})
    return out


def _occ(o: Occurrence | None) -> str:
    if o is None:
        return "-"
    if o.rounds == 1:
        return f"round {o.first_round} ({line_at(o.line, o.line_file, str)})"
    return (f"rounds {o.first_round}-{o.last_round} ({o.rounds} rounds, "
            f"{line_at(o.line, o.line_file, str)})")


def _units_table(units: list[FindingDelta]) -> str:
    rows = []
    previous = None
    for f in units[:data.MAX_ROWS]:
        occ = f.candidate or f.baseline
        message = occ.message if occ else ""
        # the lost facts of one fold are a unit each with the fold's message: said once
        said = ('<td class="msg dim">(as above)</td>' if message and message == previous
                else f'<td class="msg">{esc(message)}</td>')
        previous = message
        was = f" as {esc(f.baseline_code)}" if f.baseline_code else ""
        rows.append(f'<tr><td class="sev-{esc(f.severity.value)}">'
                    f"{esc(f.severity.value.upper())}</td><td>{rule_link(f.code, f.rule)}</td>"
                    f'<td class="mono unit">{esc(f.key)}</td><td>{esc(_occ(f.baseline))}{was}</td>'
                    f"<td>{esc(_occ(f.candidate))}</td>{said}</tr>")
    return (html_table(("severity", "rule", "unit", "baseline", "candidate", "message"), rows)
            + more(len(units) - data.MAX_ROWS, "unit"))  # --format json --all


def _panel_items(diff: RunDiff) -> list[dict[str, Any]]:
    """The per-round panel's items: each finding unit's occurrence in each run, the
    statuses in the order of :data:`~compaction_audit.diff.STATUSES` with "not reached"
    last (what a shorter candidate never ran is the least to act on, and the panel is
    capped: adv144 F6), then by severity, round, code and run; each status written as
    its heading reads ("not reached", not the JSON key "unreached")."""
    rank = {"error": 0, "warning": 1, "info": 2}
    order = {s: k for k, s in enumerate(s for s in STATUSES if s != "unreached")}
    order["unreached"] = len(order)
    keyed: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for f in diff.findings:
        for side, occ in (("baseline", f.baseline), ("candidate", f.candidate)):
            if occ is not None:
                item = {"code": f.code, "rule": f.rule, "severity": occ.severity.value,
                        "first": occ.first_round, "last": occ.last_round,
                        "where": f"{status_heading(f.status).lower()} {f.key}, {_occ(occ)}",
                        "side": side, "text": occ.message,
                        "anchor": data.rule_anchor(f.code, f.rule)}
                keyed.append(((order[f.status], rank.get(occ.severity.value, 3),
                               occ.first_round, f.code, side), item))
    keyed.sort(key=lambda pair: pair[0])
    return [item for _, item in keyed[:data.MAX_PANEL_ITEMS]]


def render_diff_html(diff: RunDiff, gates: dict[str, Any] | None = None,
                     reasons: list[str] | None = None) -> bytes:
    """The diff as one self-contained HTML page (see :mod:`.page`)."""
    reasons = reasons or []
    wide, long = _points(diff)
    drawn = [q for q in diff.quantities
             if data.known_columns(wide, [f"{q}_{run}" for run in RUNS])]
    # both runs are audited with the same settings (diff_reports), so one floor
    spec = charts.diff_chart(long, drawn, _markers(diff),
                             diff.baseline.settings.raw_ratio_floor)
    # the path, then its rounds below it: two columns fit a phone (usertest18 #11)
    runs = "".join(f"<tr><th>{run}</th><td>{esc(r.path)}<br>{r.n_rounds} rounds"
                   + "".join(f", {esc(p)}" for p in coverage_phrases(r)) + "</td></tr>"
                   for run, r in zip(RUNS, (diff.baseline, diff.candidate), strict=True))
    shown, neither = split_onsets(diff)
    onset_rows = [f"<tr><td>{esc(onset_label(o))}</td><td>{esc(describe(o))}</td>"
                  f"<td>{esc(diff.verdict_shown(o))}</td></tr>" for o in shown]
    neither_html = (f'<p class="dim">In neither run: {esc(" ".join(neither))}</p>'
                    if neither else "")
    set_ = {k: v for k, v in (gates or {}).items() if v is not None}
    given = gates_named(set_)
    if not set_:
        gate_html = '<p class="dim">No gates set (--fail-if-onset-earlier, --fail-on-new).</p>'
    elif reasons:
        gate_html = (f'<p class="FAIL">{esc(failed_heading(reasons, set_))}</p><ul>'
                     + "".join(f"<li>{esc(r)}</li>" for r in reasons) + "</ul>")
    elif unchecked := coverage_phrases(diff.candidate):  # as the baseline (adv29 F3)
        gate_html = (f'<p class="WARN">Gates passed ({esc(given)}), but the candidate was '
                     f'not fully checked ({esc(", ".join(unchecked))}, as the baseline): '
                     "see the verdict.</p>")
    else:
        gate_html = f'<p class="PASS">Gates passed ({esc(given)}).</p>'
    status_html = "".join(
        f"<h3>{status_heading(status)} ({len(diff.by_status(status))})</h3>"
        + _units_table(diff.by_status(status)) for status in STATUSES
        if status != "unreached" or diff.by_status(status))
    moved = diff.moved()  # the onset's or the boundary's move, new errors (usertest53 #5)
    head = ("FAIL" if reasons or moved == "earlier"
            else "WARN" if coverage_phrases(diff.candidate)  # not fully checked (adv29 F3)
            else "PASS" if not diff.changed or moved == "later" else "WARN")
    body = ("<h1>compaction-audit diff</h1>"
            f'<table class="kv">{runs}</table>'
            f'<p class="verdict {head}" id="verdict">'
            f'{esc(gated_headline(diff, reasons, gates))}</p>'
            + round_panel("d0")
            + "<h2>Series, both runs overlaid</h2><p class=\"dim\">Dashed rules mark each "
            "run's inversion onset." + esc("".join(
                debt_unknown_note(r, f"The {label}'s") for label, r in (
                    ("baseline", diff.baseline), ("candidate", diff.candidate)))) + "</p>"
            '<div class="chart" id="d0-series"></div>'
            + "<h2>Onsets (none = never, later than any round)</h2>"
            + html_table(("onset", "baseline -> candidate", "verdict"), onset_rows)
            + neither_html
            + "<h2>Findings</h2>" + status_html + "<h2>Gates</h2>" + gate_html
            + "<h2>Rules</h2>" + rules_reference(f.code for f in diff.findings))
    entry = {"id": "d0", "charts": {"d0-series": spec},
             "rounds": _without_missing(diff, data.table(wide, wide.height
                                                          < diff.series.height)),
             "items": _panel_items(diff)}
    return page("compaction-audit diff", body, {"kind": "diff", "sections": [entry]})
