"""Render a :class:`~compaction_audit.diff.RunDiff`: rich terminal view and JSON.

JSON shape (see docs/diff.md)::

    {"tool": {...}, "kind": "diff",
     "baseline": {"path", "session_id", "rounds", "first_round", "last_round",
                  "skipped_records", "dependent_rejects", "skipped": ["FILE:LINE: why"],
                  "compactions_not_checked", "lines_not_read", "parents_missing",
                  "inversion_signature"},
     "candidate": {...}, "settings": {...},
     "verdict": "no change" | "<headline>", "changed": bool, "tasks_differ": bool,
     "onsets": [{"name", "kind", "baseline", "candidate", "delta", "verdict", "shown"},
                ...],
     "series": {"quantities": [...], "diverging_rounds": [...],
                "rows": [{"round", "<q>_baseline", "<q>_candidate", ...,
                          "in_baseline", "in_candidate", "diverges"}, ...]},
     "findings": {"counts": {"new", "resolved", "unreached", "persisting"},
                  "new": [<unit>], "resolved": [<unit>], "unreached": [<unit>],
                  "persisting": [<unit>],
                  "<status>_truncated"?: {"truncated", "shown", "total", "by_rule"}},
     "gates": {"fail_if_onset_earlier", "fail_on_new", "passed", "reasons": [...]}}

with ``<unit>`` = ``{"code", "rule", "key", "severity", "baseline": <occ>|null,
"candidate": <occ>|null}`` and ``<occ>`` = ``{"first_round", "last_round", "rounds",
"line", "severity", "message"}``.  Untrusted text goes through :func:`terminal.t`.
"""

from __future__ import annotations

import dataclasses
from itertools import groupby
from typing import Any

import orjson
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from compaction_audit.diff import (
    FLOAT_TOLERANCE,
    STATUSES,
    FindingDelta,
    Occurrence,
    RunDiff,
    failed_heading,
    gated_headline,
    gates_named,
    onset_label,
    split_onsets,
    status_heading,
)
from compaction_audit.report.gaps import coverage_phrases
from compaction_audit.report.json_report import TOOL
from compaction_audit.report.lines import line_at
from compaction_audit.report.model import SessionReport
from compaction_audit.report.safe import clip_tree, json_safe
from compaction_audit.report.terminal import (
    FIXED_SCALE,
    SEVERITY_STYLE,
    bucket_means,
    line,
    spark_marks,
    t,
)
from compaction_audit.report.terminal_text import (
    ByWidth,
    Trimmed,
    hang,
    hanging,
    heading,
    note_line,
)
from compaction_audit.rules.base import fmt

MAX_ROWS = 15
"""Diverging rounds shown in the terminal (JSON has all)."""
PER_RULE = 3
"""Finding units shown per rule and status in the terminal (JSON has all)."""

VERDICT_STYLE = {"earlier": "bold red", "appeared": "bold red", "later": "green",
                 "disappeared": "green", "unchanged": "dim"}
HEADLINE_STYLE = {"earlier": "bold red", "appeared": "bold red", "later": "bold green",
                  "disappeared": "bold green", "unchanged": "bold yellow"}
SKIPPED_SHOWN = 20
"""Skipped records named per run (text and JSON); the count says the rest."""


# ---------------------------------------------------------------------------- JSON

def _run(r: SessionReport) -> dict[str, Any]:
    rounds = r.series["round"]
    return {"path": r.path, "session_id": r.header.session_id, "rounds": r.n_rounds,
            "first_round": int(rounds[0]) if len(rounds) else None,
            "last_round": int(rounds[-1]) if len(rounds) else None,
            "skipped_records": len(r.skipped), "dependent_rejects": len(r.dependent),
            "skipped": [str(e) for e in r.skipped[:SKIPPED_SHOWN]],
            "compactions_not_checked": r.compactions_not_checked(),  # adv29 F3
            "lines_not_read": r.lines_not_read(),
            "parents_missing": r.parents_missing(),
            # the cosine its onset reads: two runs may differ (usertest41 #2)
            "inversion_signature": r.signature_series()}


def _occ(o: Occurrence | None) -> dict[str, Any] | None:
    if o is None:
        return None
    doc = {**dataclasses.asdict(o), "severity": o.severity.value}
    if o.line_file is None:  # a trace read from one file: the line is the trace's
        del doc["line_file"]
    return doc


def _unit(f: FindingDelta) -> dict[str, Any]:
    return {"code": f.code, "rule": f.rule, "key": f.key, "severity": f.severity.value,
            "baseline": _occ(f.baseline), "candidate": _occ(f.candidate),
            "baseline_code": f.baseline_code}


JSON_PER_RULE = 10
"""Finding units the JSON report lists per status and rule without ``--all`` (issue 14,
section 3: adv98 #3, a 0.58 MB candidate's 9,002 new units made 5.2 MB of JSON)."""


def _units(units: list[FindingDelta], show_all: bool
           ) -> tuple[list[FindingDelta], dict[str, int]]:
    """The first :data:`JSON_PER_RULE` units of each rule of ``units`` (in their order;
    every unit with ``show_all``), and each rule's count of units."""
    groups = [(code, list(group)) for code, group in groupby(units, key=lambda f: f.code)]
    shown = units if show_all else [f for _, group in groups for f in group[:JSON_PER_RULE]]
    return shown, {code: len(group) for code, group in groups}


def diff_dict(diff: RunDiff, gates: dict[str, Any] | None = None,
              reasons: list[str] | None = None, show_all: bool = False) -> dict[str, Any]:
    """The diff as a JSON-able dict (see the module docstring); ``gates`` holds the
    gate options given (None when unset), ``reasons`` what :func:`gate` returned.
    Each status lists at most :data:`JSON_PER_RULE` units per rule, with
    ``"<status>_truncated": {"truncated": true, "shown", "total", "by_rule": {code:
    total}}`` when it left some out, unless ``show_all``."""
    reasons = reasons or []
    findings: dict[str, Any] = {"counts": {s: len(diff.by_status(s)) for s in STATUSES}}
    for s in STATUSES:
        units = diff.by_status(s)
        shown, by_rule = _units(units, show_all)
        findings[s] = [_unit(f) for f in shown]
        if len(shown) < len(units):  # with each rule's total: a script tells which
            findings[f"{s}_truncated"] = {"truncated": True, "shown": len(shown),  # rules
                                          "total": len(units), "by_rule": by_rule}  # it cut
    return {
        "tool": TOOL, "kind": "diff", "config": diff.config,
        "baseline": _run(diff.baseline), "candidate": _run(diff.candidate),
        "settings": dataclasses.asdict(diff.baseline.settings),
        "verdict": diff.headline(), "changed": diff.changed,
        "tasks_differ": diff.tasks_differ,
        # "shown": the tables' words ("not reached (the candidate ends at round 6)"
        # where "disappeared" is only the candidate's end: adv146 F8)
        "onsets": [{**dataclasses.asdict(o), "shown": diff.verdict_shown(o)}
                   for o in diff.onsets],
        "series": {"quantities": diff.quantities, "diverging_rounds": diff.diverging_rounds,
                   "rows": diff.series.to_dicts()},
        "findings": findings,
        "gates": {"fail_if_onset_earlier": None, "fail_on_new": None, **(gates or {}),
                  "passed": not reasons, "reasons": reasons},
    }


def render_diff_json(diff: RunDiff, gates: dict[str, Any] | None = None,
                     reasons: list[str] | None = None, show_all: bool = False) -> bytes:
    """:func:`diff_dict` as indented JSON bytes, newline-terminated."""
    doc = clip_tree(diff_dict(diff, gates, reasons, show_all))
    return json_safe(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")


# ------------------------------------------------------------------------ terminal

def _runs(diff: RunDiff) -> RenderableType:
    rows = []
    for label, r in (("baseline", diff.baseline), ("candidate", diff.candidate)):
        info = _run(r)
        span = (f"round {info['first_round']}..{info['last_round']}" if info["rounds"]
                else "no rounds")
        gaps = "".join(f", {p}" for p in coverage_phrases(r))  # adv29 F3
        rows.append(line((f"{label:<11}", "bold"), t(r.path),
                         f"  ({info['rounds']} rounds, {span}{gaps})"))
    return Group(*rows)  # one line each, never wrapped (a path is log text)


def _skipped(diff: RunDiff) -> RenderableType | None:
    """The records each run skipped under ``--lenient``, as ``audit`` names them
    (``FILE:LINE: reason``; the first :data:`SKIPPED_SHOWN` of each run, then a count;
    ux5 F5: the verdict counted them and named none)."""
    rows: list[RenderableType] = []
    for label, r in (("baseline", diff.baseline), ("candidate", diff.candidate)):
        for e in r.skipped[:SKIPPED_SHOWN]:
            rows.append(hanging((f"  skipped  {label:<10} ", "yellow"), t(str(e)), indent=22))
        if len(r.skipped) > SKIPPED_SHOWN:
            rows.append(note_line(f"and {len(r.skipped) - SKIPPED_SHOWN} more skipped "
                                  f"record(s) of the {label}", style="yellow"))
    return Group(*rows) if rows else None


def _round(value: int | None) -> str:
    return "none" if value is None else str(value)


def onsets_table(diff: RunDiff) -> RenderableType:
    """Onsets and first rounds side by side with delta (rounds) and verdict; the rules
    that fired in neither run are one line under the table, by code (ux6: 13 rows of
    "none none unchanged" put the findings off the first screen)."""
    title = heading("Onsets (round; none = never, later than any round)")
    shown, neither = split_onsets(diff)
    rows = [(onset_label(o), _round(o.baseline), _round(o.candidate),
             "" if o.delta is None else f"{o.delta:+d}", diff.verdict_shown(o)) for o in shown]

    def table() -> RenderableType:
        tab = Table(show_edge=False)
        for col in ("", "baseline", "candidate", "delta", "verdict"):
            tab.add_column(col, justify="left" if col in ("", "verdict") else "right")
        for label, b, c, delta, verdict in rows:
            tab.add_row(t(label), b, c, delta, Text(verdict, style=VERDICT_STYLE.get(
                verdict, "dim")))  # "not reached (...)": neither better nor worse
        return Trimmed(tab)

    def listing() -> RenderableType:  # a narrow terminal: a rule's name never cut
        return Group(*(hang(f"{label}: ", f"{b} -> {c}{f' ({delta})' if delta else ''} ",
                            (verdict, VERDICT_STYLE.get(verdict, "dim")), indent=2)
                       for label, b, c, delta, verdict in rows))

    widest = max((len(row[0]) for row in rows), default=0)  # + the columns' own 46
    parts = [title, ByWidth(table, listing, widest + 46)]  # (usertest16 #8: cut names)
    if neither:
        parts.append(hang(Text("in neither run: ", style="dim"), (" ".join(neither), "dim"),
                          indent=1))
    return Group(*parts)


def paired_sparklines(base: list[float | None], cand: list[float | None],
                      scale: tuple[float, float] | None = None) -> tuple[str, str]:
    """Two sparklines of the same rounds on one scale: each run bucketed on its own
    (at most :data:`~compaction_audit.report.terminal.SPARK_WIDTH` marks, bucket means),
    scaled between ``scale`` or else the min and max over both; a space where a bucket
    has no value."""
    means = (bucket_means(base), bucket_means(cand))
    present = [v for m in means for v in m if v is not None]
    both = scale or ((min(present), max(present)) if present else (0.0, 1.0))
    return spark_marks(means[0], both), spark_marks(means[1], both)


def sparklines(diff: RunDiff) -> RenderableType:
    """Both runs' series as sparklines on one scale per quantity (``raw_ratio`` from 0
    to 1), aligned by round."""
    frame = diff.series
    rows = []
    for q in diff.quantities:
        b, c = frame[f"{q}_baseline"].to_list(), frame[f"{q}_candidate"].to_list()
        for label, part, values in zip(("baseline", "candidate"),
                                       paired_sparklines(b, c, FIXED_SCALE.get(q)),
                                       (b, c), strict=True):
            known = [v for v in values if v is not None]
            # the run's own last round: a value unknown there (a recall debt after a
            # compaction that could not be checked) is said, not the last known one
            # (usertest27 #1: "0 -> 0" under a verdict of "-> unknown")
            own = [v for v, there in zip(values, frame[f"in_{label}"], strict=True) if there]
            last = fmt(known[-1]) if own and own[-1] is not None else "unknown"
            ends = f"{fmt(known[0])} -> {last}" if known else "unknown"
            rows.append((q, label, part, ends))

    def grid() -> RenderableType:
        out = Table.grid(padding=(0, 2))
        out.add_column(style="bold", no_wrap=True)
        out.add_column()
        out.add_column(no_wrap=True, overflow="crop")
        out.add_column(no_wrap=True)
        for q, label, part, ends in rows:
            out.add_row(q if label == "baseline" else "", label, part, ends)
        return Trimmed(out)

    def stacked() -> RenderableType:
        """Each quantity's name on a line above its two runs: at 80 columns the name's
        column cut query_cosine_retained and query_cosine_rebuilt to the same
        "query_cosine_r…" (usertest16 #8)."""
        marks = max((len(row[2]) for row in rows), default=0)
        out: list[RenderableType] = []
        for q, label, part, ends in rows:
            if label == "baseline":
                out.append(Text(q, style="bold"))
            out.append(Text(f"  {label:<9}  {part:<{marks}}  {ends}", no_wrap=True,
                            overflow="crop"))
        return Group(*out)

    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    return ByWidth(grid, stacked, sum(widths) + 6)


def _cell(row: dict[str, Any], q: str, side: str) -> str:
    return fmt(row[f"{q}_{side}"]) if row[f"in_{side}"] else "-"


def _cells(row: dict[str, Any], q: str) -> tuple[str, str]:
    """Baseline and candidate cells of ``q``; two floats that differ (beyond
    :data:`~compaction_audit.diff.FLOAT_TOLERANCE`) but print alike at 3 decimals get
    the fewest decimals (up to 9) that tell them apart, so a round listed as diverging
    always shows how."""
    b, c = _cell(row, q, "baseline"), _cell(row, q, "candidate")
    vb, vc = row[f"{q}_baseline"], row[f"{q}_candidate"]
    if (b == c and isinstance(vb, float) and isinstance(vc, float)
            and abs(vb - vc) > FLOAT_TOLERANCE):
        for digits in range(4, 10):
            b, c = f"{vb:.{digits}f}", f"{vc:.{digits}f}"
            if b != c:
                break
    return b, c


def divergence_table(diff: RunDiff) -> RenderableType:
    """The first :data:`MAX_ROWS` rounds at which the runs differ (baseline -> candidate;
    ``-``: the run has no such round)."""
    rounds = diff.diverging_rounds
    if not rounds:
        return Text("The series are identical at every round.", style="green")
    title = (f"Rounds where the series diverge ({len(rounds)}; baseline -> candidate, "
             "- = no such round)")
    rows = []
    for row in diff.series.filter("diverges").head(MAX_ROWS).iter_rows(named=True):
        cells = []
        for q in diff.quantities:
            b, c = _cells(row, q)
            cells.append((q, b, c))
        rows.append((row["round"], cells))

    def table() -> RenderableType:
        tab = Table(show_edge=False)
        tab.add_column("round", justify="right")
        for q in diff.quantities:
            tab.add_column(q, justify="right")
        for number, cells in rows:
            tab.add_row(str(number), *(b if b == c else f"{b} -> {c}" for _, b, c in cells))
        return Group(heading(title), tab)

    def listing() -> RenderableType:  # a narrow terminal: the quantities that differ
        items: list[RenderableType] = [heading(title)]
        for number, cells in rows:
            moved = "; ".join(f"{q} {b} -> {c}" for q, b, c in cells if b != c)
            items.append(hang(f"round {number}: ", moved or "equal where both have it"))
        return Group(*items)

    parts: list[RenderableType] = [ByWidth(table, listing, 16 + 16 * len(diff.quantities))]
    if len(rounds) > MAX_ROWS:
        parts.append(note_line(f"... and {len(rounds) - MAX_ROWS} more round(s); "
                               "--format json has the full aligned table", indent=0))
    return Group(*parts)


def _where(o: Occurrence) -> str:
    """Where a unit occurs: ``round 5 (line 6)``, ``rounds 16-19 (4 rounds, line
    17)``, and for rounds with gaps ``rounds 2 and 38 (line 3)`` or ``5 rounds from 2
    to 40 (line 3)`` (usertest23 #4: "rounds 2-38 (2 rounds" read as 37 rounds); the
    line is the first round's."""
    at = line_at(o.line, o.line_file)
    if o.rounds == 1:
        return f"round {o.first_round} ({at})"
    if o.rounds == 2 and o.last_round - o.first_round > 1:
        return f"rounds {o.first_round} and {o.last_round} ({at})"
    if o.rounds < o.last_round - o.first_round + 1:
        return f"{o.rounds} rounds from {o.first_round} to {o.last_round} ({at})"
    return f"rounds {o.first_round}-{o.last_round} ({o.rounds} rounds, {at})"


def _unit_lines(f: FindingDelta, with_message: bool) -> list[RenderableType]:
    # wrapped under the key, never back to the first column (issue 13, section 2)
    if f.baseline and f.candidate:
        was = f" as {f.baseline_code}" if f.baseline_code else ""  # adv84 #6
        return [hang("", t(f.key), "  ", f"baseline {_where(f.baseline)}{was}, "
                     f"candidate {_where(f.candidate)}", indent=6)]
    occ = f.candidate or f.baseline
    assert occ is not None
    head = hang("", t(f.key), "  ", _where(occ), indent=6)
    if not with_message:
        return [head]
    message = Text.assemble("        ", t(occ.message), no_wrap=True, overflow="ellipsis")
    return [head, message]


def findings_section(diff: RunDiff, show_all: bool = False) -> RenderableType:
    """Finding units by status, grouped by rule: a count per rule, then the first
    :data:`PER_RULE` units (every one with ``show_all``; with the message of the first
    new or resolved one)."""
    parts: list[RenderableType] = []
    for status in STATUSES:
        units = diff.by_status(status)
        if status == "unreached" and not units:
            continue  # a heading only where the candidate ended first
        parts.append(Text(f"{status_heading(status)} ({len(units)})", style="bold"))
        for code, group in groupby(units, key=lambda f: f.code):
            members = list(group)
            sev = max((f.severity for f in members), key=lambda s: s.rank).value
            parts.append(hang(Text(f"{sev.upper():<8}", SEVERITY_STYLE[sev]),
                              (f"{code} {members[0].rule}", "bold"),
                              f"  {len(members)} unit(s){_mix(members)}", indent=2))
            cap = len(members) if show_all else PER_RULE
            for i, f in enumerate(members[:cap]):
                parts += _unit_lines(f, with_message=i == 0 and status != "persisting")
            if len(members) > cap:
                parts.append(note_line(f"... and {len(members) - cap} more (--all lists "
                                       "every unit)", indent=6))
    return Group(*parts)


def _mix(members: list[FindingDelta]) -> str:
    """``": 32 error, 93 warning, 86 info"`` where a rule's units differ in severity (a
    fold's facts weigh by their own tier: usertest66 F4), "" where they do not."""
    count: dict[str, int] = {}
    for f in sorted(members, key=lambda f: -f.severity.rank):
        count[f.severity.value] = count.get(f.severity.value, 0) + 1
    return ": " + ", ".join(f"{n} {sev}" for sev, n in count.items()) if len(count) > 1 else ""


def gates_section(gates: dict[str, Any] | None, reasons: list[str],
                  unchecked: list[str] | None = None) -> RenderableType:
    """Which gates were set, and why they failed; a pass over a candidate that could
    not be fully checked (``unchecked``: :func:`~compaction_audit.report.gaps.
    coverage_phrases`, as much as the baseline) says so (adv29 F3)."""
    set_ = {k: v for k, v in (gates or {}).items() if v is not None}
    if not set_:
        return Text("No gates set (--fail-if-onset-earlier, --fail-on-new).", style="dim")
    given = gates_named(set_)
    if not reasons and unchecked:
        return Text(f"Gates passed ({given}), but the candidate was not fully checked "
                    f"({', '.join(unchecked)}, as the baseline): see the verdict.",
                    style="yellow")
    if not reasons:
        return Text(f"Gates passed ({given}).", style="green")
    lines: list[RenderableType] = [hanging((failed_heading(reasons, set_), "bold red"),
                                           indent=2)]
    lines += [hanging("  ", t(r), indent=4) for r in reasons]  # never back to column 0
    return Group(*lines)


def verdict_text(diff: RunDiff, reasons: list[str] | None = None,
                 gates: dict[str, Any] | None = None) -> Text:
    """The one-line verdict (:func:`~compaction_audit.diff.gated_headline`), red when a
    gate failed or the inversion onset or boundary came earlier or appeared, green when
    one moved later or vanished and no new error appeared (:meth:`RunDiff.moved`).
    Print it with ``soft_wrap=True`` so that it stays one line."""
    style = HEADLINE_STYLE[diff.moved()] if diff.changed else "bold green"
    return Text(gated_headline(diff, reasons or [], gates),
                style="bold red" if reasons else style)


def diff_renderable(diff: RunDiff, gates: dict[str, Any] | None = None,
                    reasons: list[str] | None = None, show_all: bool = False
                    ) -> RenderableType:
    """The terminal view of a diff, up to the gates; :func:`verdict_text` follows it.
    The verdict is said first too, under the runs, as the audit report says it under
    the trace's name (the answer on the first screen, not only 100 lines down)."""
    skipped = _skipped(diff)
    return Group(
        Text("compaction-audit diff", style="bold underline"), _runs(diff),
        hanging((f"{'verdict':<11}", "bold"), verdict_text(diff, reasons, gates), indent=11),
        hanging((f"{'config':<11}", "bold"), t(diff.config or "none"), indent=11),
        *([skipped] if skipped is not None else []), Text(""),
        onsets_table(diff), Text(""),
        heading("Series (aligned by round, one scale per quantity)"),
        sparklines(diff), Text(""), divergence_table(diff), Text(""),
        Text("Findings", style="bold"), findings_section(diff, show_all), Text(""),
        gates_section(gates, reasons or [], coverage_phrases(diff.candidate)), Text(""))
