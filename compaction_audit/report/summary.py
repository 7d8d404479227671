"""The summary across traces: one row per trace (and per unreadable trace), totals and
the gate's result; shared by the terminal and Markdown reports.  Also groups findings
into episodes for the renderers that show runs of rounds rather than every round.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from compaction_audit.errors import LogError
from compaction_audit.report.gaps import gate_phrases, row_note
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import printable
from compaction_audit.rules.base import Finding, Severity

VERDICT_STYLE = {"FAIL": "bold red", "WARN": "yellow", "PASS": "green",
                 "UNREADABLE": "bold red"}


@dataclass(frozen=True)
class Row:
    """One trace in the summary.  Counts are None for an unreadable trace, whose
    ``detail`` holds the error; ``onset`` and ``boundary`` are the inversion onset's and
    boundary's rounds."""

    trace: str
    verdict: str
    rounds: int | None = None
    errors: int | None = None
    warnings: int | None = None
    info: int | None = None
    baselined: int | None = None
    stale: int | None = None
    onset: int | None = None
    boundary: int | None = None
    detail: str = ""
    fails_gate: bool = False
    """The trace fails the gate :func:`summary_rows` was given (False without one)."""


def baseline_info(s: SessionReport) -> dict[str, Any] | None:
    """The ``baseline`` section :func:`compaction_audit.baseline.apply` added, if any."""
    info = s.extra.get("baseline")
    return info if isinstance(info, dict) else None


def summary_rows(report: Report, fail_on: str | None = None) -> list[Row]:
    """One :class:`Row` per audited trace, then one per unreadable trace; an audited
    trace's ``detail`` says when no selected rule could judge it (a PASS that is not
    one: adv25 N3), how many compactions could not be checked and how many lines were
    not read (:func:`~compaction_audit.report.gaps.row_note`; adv29 F2) and, given
    ``fail_on``, when its verdict word does not say whether it fails the gate
    (:func:`gate_note`).  An unreadable trace's ``detail`` is its error without the
    file's name, which the row names (usertest23 #6: the path printed twice)."""
    rows = []
    for s in report.sessions:
        c, b = s.counts(), baseline_info(s)
        rows.append(Row(trace=s.path, verdict=s.verdict_head(), rounds=s.n_rounds,
                        errors=c["error"], warnings=c["warning"], info=c["info"],
                        baselined=None if b is None else b["suppressed"],
                        stale=None if b is None else len(b["stale"]),
                        onset=s.onsets.get("inversion_onset"),
                        boundary=s.onsets.get("inversion_boundary"),
                        detail=" ".join(filter(None, (
                            "(no selected rule could judge it)" if s.judged_nothing() else "",
                            drift_note(s),
                            row_note(s),
                            "" if fail_on is None else gate_note(s, fail_on)))),
                        fails_gate=fail_on is not None and s.fails(fail_on)))
    rows += [Row(trace=e.trace or e.path, verdict="UNREADABLE", detail=_unreadable(e))
             for e in report.errors]
    return rows


def drift_note(s: SessionReport) -> str:
    """``"(drift only: a condition of inversion fails)"`` for a trace that reached an
    inversion onset or boundary while a condition of inversion fails, else "": the
    tables print the rounds bare, and the verdict reads them as drift (usertest63 #2:
    a summary row "boundary at round 3" beside the report's "drift only")."""
    return "(drift only: a condition of inversion fails)" if s.drift_only() else ""


def _unreadable(error: LogError) -> str:
    """An unreadable trace's error as its summary row says it: ``line 8: ...`` when the
    error is in the trace itself, else the whole line (a companion file's name)."""
    if error.trace is None and error.path:
        return (f"line {error.line}: " if error.line else "") + error.message + (
            f" ({error.field})" if error.field else "")
    return error.named()


def gate_note(s: SessionReport, fail_on: str) -> str:
    """``"(fails --fail-on warning)"`` when ``s`` fails the gate though its verdict
    word is not FAIL (a compaction that could not be checked, a warning, an info finding
    under ``--fail-on info``), ``"(passes --fail-on never)"`` for a FAIL it lets through;
    "" when the word says it (usertest23 #1: seven rows read PASS, the run exited 1, and
    nothing named the trace that failed)."""
    failing = s.fails(fail_on)
    if failing == (s.verdict_head() == "FAIL"):
        return ""
    return f"({'fails' if failing else 'passes'} --fail-on {fail_on})"


WORST_FIRST = {"UNREADABLE": 0, "FAIL": 1, "WARN": 2}
"""The order of the summary's rows by verdict (PASS last), each in trace order: a
comment cut to fit, or a CI log read from its end, still names the traces that fail
first (adv33: a failing trace sorted last was cut from a table of 400; usertest23 #6:
the text summary listed the unreadable trace last)."""


def worst_first_key(row: Row) -> tuple[int, bool]:
    """A row's place in the summaries (text, Markdown, HTML): by verdict
    (:data:`WORST_FIRST`), and within a verdict the traces that fail the gate first;
    ``sorted`` keeps trace order among equals."""
    return WORST_FIRST.get(row.verdict, 3), not row.fails_gate


def worst_rows(report: Report, fail_on: str | None = None) -> list[Row]:
    """:func:`summary_rows` in :func:`worst_first_key` order."""
    return sorted(summary_rows(report, fail_on), key=worst_first_key)


def gate_line(report: Report, fail_on: str) -> str:
    """One line: traces, how many reach ``fail_on``, unreadable ones, what could not be
    covered (:func:`~compaction_audit.report.gaps.gate_phrases`), what ``[[suppress]]``
    and ``--baseline`` held back, the exit code."""
    failing = sum(s.fails(fail_on) for s in report.sessions)
    total = len(report.sessions) + len(report.errors)
    parts = [f"{total} trace(s)", f"{failing} reach --fail-on {fail_on}"]
    if report.errors:
        parts.append(f"{len(report.errors)} unreadable")
    unjudged = sum(s.judged_nothing() for s in report.sessions)
    if unjudged:
        parts.append(f"{unjudged} no selected rule could judge")
    parts += gate_phrases(report.sessions)  # unchecked compactions, lines not read
    capped = sum(len(s.limits) for s in report.sessions)
    if capped:
        parts.append(f"{capped} check(s) stopped at a limit")
    suppressed = sum(s.suppressed() for s in report.sessions)
    if suppressed:
        parts.append(f"{suppressed} finding(s) suppressed by [[suppress]]")
    baselined = sum(s.baselined() for s in report.sessions)
    if baselined:  # held back by --baseline (usertest63 #5: no word in the github log)
        parts.append(f"{baselined} finding(s) in the baseline")
    return f"exit {report.exit_code(fail_on)}: " + ", ".join(parts)


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)


def summary_renderable(report: Report, fail_on: str, show_all: bool = False
                       ) -> RenderableType:
    """The rich summary table, the baseline's lines (:func:`stale_lines`, capped
    unless ``show_all``) and the gate line."""
    from compaction_audit.report.terminal_text import WIDE, ByWidth, hanging

    rows = worst_rows(report, fail_on)
    parts: list[RenderableType] = [ByWidth(lambda: _table(rows), lambda: _listing(rows),
                                           max(WIDE, _table_width(rows)))]
    for line in stale_lines(report, show_all):
        parts.append(hanging((printable(line), "yellow")))  # wrapped under its indent
    failing = report.exit_code(fail_on) != 0
    parts.append(hanging((gate_line(report, fail_on), "bold red" if failing else "bold green")))
    return Group(*parts)


def _listing(rows: list[Row]) -> RenderableType:
    """The summary as a list (a narrow terminal): per trace, its verdict and counts on
    one line (wrapped under its indent where the width is too small: usertest13), then
    its path whole on the next (never split; issue 13, section 2)."""
    from compaction_audit.report.terminal_text import hanging, line, t

    parts: list[RenderableType] = [Text("Summary", style="bold")]
    for r in rows:
        counts = ("" if r.rounds is None else
                  f"  {r.rounds} rounds, {r.errors} error(s), {r.warnings} warning(s), "
                  f"{r.info} info"
                  + ("" if r.baselined is None else f", {r.baselined} baselined, "
                     f"{r.stale} stale")
                  + ("" if r.onset is None else f", onset at round {r.onset}")
                  + ("" if r.boundary is None else f", boundary at round {r.boundary}"))
        parts.append(hanging(("  " + r.verdict, VERDICT_STYLE[r.verdict]), counts,
                             " " + printable(r.detail) if r.detail else "", indent=4))
        parts.append(line("    ", t(r.trace)))  # whole, to paste
    return Group(*parts)


def _columns(rows: list[Row]) -> list[tuple[str, list[str]]]:
    """The summary table's columns as printed: each header and its cells, in order."""
    with_baseline = any(r.baselined is not None for r in rows)
    names = ("rounds", "errors", "warnings", "info",
             *(("baselined", "stale") if with_baseline else ()), "inversion onset",
             "inversion boundary")
    counts = [[r.rounds, r.errors, r.warnings, r.info,
               *((r.baselined, r.stale) if with_baseline else ()), r.onset, r.boundary]
              for r in rows]
    return [("trace", [printable(r.trace) for r in rows]),
            *((name, [_cell(c[i]) for c in counts]) for i, name in enumerate(names)),
            ("verdict", [r.verdict + (f" {printable(r.detail)}" if r.detail else "")
                         for r in rows])]


def _table_width(rows: list[Row]) -> int:
    """Columns the summary table needs with no header or cell wrapped or cut (each
    column's widest text, and rich's three columns of padding and rule per column):
    a narrower console gets the list (usertest16 #5: at 120 columns a baseline's two
    columns cut the headers to "warnin…" and wrapped a verdict over five lines)."""
    return 1 + sum(3 + max([len(h), *(len(v) for v in cells)]) for h, cells in _columns(rows))


def _table(rows: list[Row]) -> RenderableType:
    """The summary as a table (a wide terminal); a trace's path is never split."""
    table = Table(title="Summary", title_justify="left")
    columns = _columns(rows)
    for i, (name, _) in enumerate(columns):
        if i == 0:
            table.add_column(name, no_wrap=True, overflow="ellipsis")
        else:
            table.add_column(name, justify="left" if i == len(columns) - 1 else "right")
    for n, r in enumerate(rows):
        verdict = Text(r.verdict, style=VERDICT_STYLE[r.verdict])
        if r.detail:
            verdict.append(f" {printable(r.detail)}", style="")
        table.add_row(Text(columns[0][1][n]), *(cells[n] for _, cells in columns[1:-1]),
                      verdict)
    return table


BASELINE_LINES = 20
"""Most baseline lines (:func:`stale_lines`) a report shows without ``--all``: a
baseline is a file of the checkout, and one that went stale by the thousands after a
fix printed 50,000 lines, and in Markdown pushed every trace section out of the pull
request comment (adv24 F1)."""


def _named_new(grown: dict[str, Any]) -> str:
    """`` (negation 'Never deploy on Fridays', quantity '45000' and 3 more)``: the new
    facts a grown baseline entry names (:func:`compaction_audit.baseline._new_units`),
    "" when it names none."""
    new = [d for d in grown.get("new") or () if isinstance(d, dict)]
    if not new:
        return ""
    names = [f"{d.get('kind')} {d.get('text')!r}" if d.get("kind") != "more"
             else "facts past the finding's list" for d in new]
    total = grown.get("new_facts")
    more = total - len(new) if type(total) is int and total > len(new) else 0
    return f" ({', '.join(names)}{f' and {more} more' if more else ''})"


def grown_phrase(grown: dict[str, Any]) -> str:
    """``now loses 1 more fact(s) (negation 'Never deploy on Fridays')``: what a grown
    baseline entry (:func:`compaction_audit.baseline.grown_findings`) adds to the
    baseline, as the text report's baseline lines, the ``github`` annotation and the
    SARIF result say it (usertest16 #6: the annotation named only a fact the baseline
    held)."""
    verb = grown.get("verb", "loses")
    return (f"now {verb} {grown.get('new_facts')} more fact(s){_named_new(grown)}"
            + (", none lost" if verb == "drops" else ""))


def grown_prefix(grown: dict[int, dict[str, Any]], f: Finding) -> str:
    """``Baselined, now loses 1 more fact(s) (...): ``, what the ``github`` annotation
    and the SARIF result of ``f`` say first when the baseline holds it but it now loses
    more (``grown``: :func:`compaction_audit.baseline.grown_findings`), else ""."""
    g = grown.get(id(f))
    return "" if g is None else f"Baselined, {grown_phrase(g)}: "


def _rounds_text(spans: list[list[int]]) -> str:
    """``round 5``, ``rounds 24-26``, ``rounds 2, 7-9``: episodes by first and last
    round."""
    one = len(spans) == 1 and spans[0][0] == spans[0][1]
    return ("round " if one else "rounds ") + ", ".join(
        str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _stale_line(e: dict[str, Any]) -> str:
    """The line of a stale baseline entry; an episode's entry whose rule has an
    episode reported as new in the trace (``new_rounds``) says the rule fires at
    other rounds, not that it no longer occurs (usertest38 #10: that read as fixed)."""
    entry = f"{e['trace']} {e['code']} {e['rule']} {e['key']}"
    moved = e.get("new_rounds")
    if not moved:
        return f"baseline entry no longer occurs: {entry}"
    was = e.get("rounds")
    held = f" ({_rounds_text([was])})" if was else ""
    more = e.get("new_rounds_more")
    more = f" and {more:,} more episode(s)" if isinstance(more, int) and more > 0 else ""
    return (f"baseline entry {entry}{held}: {e['code']} fires at {_rounds_text(moved)}{more} "
            "instead, reported "
            "as new (not fixed: an entry holds an episode only at rounds that overlap "
            "its own)")


def stale_lines(report: Report, show_all: bool = False) -> list[str]:
    """One line per baseline entry that no longer occurs, naming trace, rule and key,
    and one per fold finding of the baseline that now loses facts the baseline does
    not hold (reported as new: :func:`compaction_audit.baseline.apply`), the sessions
    and paths the baseline was made for instead; at most :data:`BASELINE_LINES` of
    them unless ``show_all``, then one line counting the rest."""
    out = []
    for s in report.sessions:
        info = baseline_info(s)
        for e in (info or {}).get("stale", []):
            out.append(_stale_line(e))
        out += other_session_lines(s)
        for g in (info or {}).get("grown", []):
            out.append(f"baseline entry {s.path} {g['code']} {g['rule']} {g['key']} "
                       f"{grown_phrase(g)}: reported as new")
        out += other_path_lines(s)
    if show_all or len(out) <= BASELINE_LINES:
        return out
    rest = len(out) - BASELINE_LINES
    return [*out[:BASELINE_LINES], f"... and {rest:,} more baseline line(s) (--all lists "
                                   "them; so does the JSON report with --all)"]


def other_session_lines(s: SessionReport) -> list[str]:
    """One line per session the baseline's entries for ``s``'s path were made of, when
    that is not ``s``'s session: those entries are not applied.  A log of our format
    is told it may keep its session id; a product's names its own (adv139 #12)."""
    own = s.header.extra.get("source_format") in (None, "native")
    how = " or write the same session_id when recording the trace again" if own else ""
    return [f"baseline entries for {s.path} are of session {other}, not of this trace's "
            f"session {s.header.session_id}: not applied (make the baseline of this "
            f"session{how})"
            for other in (baseline_info(s) or {}).get("other_session", [])]


def baseline_held_nothing(s: SessionReport) -> list[str]:
    """Why a baseline held none of ``s``'s findings, where it says: its entries for
    this path are of another session (:func:`other_session_lines`) or it has entries
    only under another path of the file's name (:func:`other_path_lines`); what
    ``audit --baseline -q`` and ``--statistics`` say on standard error."""
    return [*other_session_lines(s), *other_path_lines(s)]


def other_path_lines(s: SessionReport) -> list[str]:
    """One line per path the baseline has for a trace of ``s``'s file name when it has
    no entry under ``s``'s own path (``baseline has no entry for t.jsonl but has for
    traces/t.jsonl: ...``)."""
    return [f"baseline has no entry for {s.path} but has for {other}: if that is the "
            "same file, name it as when the baseline was made (docs/ci.md)"
            for other in (baseline_info(s) or {}).get("other_path", [])]


def worst_first(runs: list[list[Finding]]) -> list[list[Finding]]:
    """Episodes ordered by their worst severity, errors first; a stable sort, so
    episodes of one severity keep the order they came in (a reader of a pull-request
    comment or a SARIF viewer sees the errors before the info)."""
    return sorted(runs, key=lambda run: -max(f.severity.rank for f in run))


def said(f: Finding, shown: Severity) -> str:
    """``f``'s message as shown under ``shown`` (its episode's worst severity, or the
    heading's over several episodes): led by its own severity where that is below,
    ``"warning: fold t2.204 dropped, but lost nothing ..."`` under an ERROR episode
    (usertest43 #5: the row read as an error that lost nothing; the error was the
    episode's other fold; usertest44 #4: a warning's episode under an ERROR rule
    heading of the text report).  The caller reads ``shown`` once per episode."""
    return f.message if f.severity.rank >= shown.rank else f"{f.severity.value}: {f.message}"


def ends(run: list[Finding]) -> tuple[Finding, Finding]:
    """The findings that stand for an episode (``run``, in round order): the worst of
    its first round and the worst of its last round (the earliest of equals), whose
    messages the reports show as its first and "last:" lines (usertest24 #1: an ERROR
    episode led by a fold that lost nothing, a warning, hid the fold at the same round
    that lost a "do NOT" rule)."""
    def worst_at(round_: int) -> Finding:
        at = [f for f in run if f.round == round_]
        return max(at, key=lambda f: f.severity.rank)  # max keeps the first of equals

    return worst_at(run[0].round), worst_at(run[-1].round)


def episodes(findings: Iterable[Finding]) -> Iterator[list[Finding]]:
    """Findings grouped per rule (by code, then round) into episodes: runs of
    consecutive round numbers, however many items (folds, spans) the rule's findings
    at those rounds are about (issue 13, section 4: one annotation per episode, not
    per fold); each finding of a rule that is not :attr:`~compaction_audit.rules.base.
    Rule.episodic` (a broken rule, a reversed one) is an episode of its own.  Every
    format groups findings so (text, JSON, Markdown, HTML, SARIF, JUnit, GitHub)."""
    from compaction_audit.rules.base import episodic

    run: list[Finding] = []
    for f in sorted(findings, key=lambda f: (f.code, f.round)):
        if run and (f.code != run[-1].code or f.round not in (run[-1].round,
                                                             run[-1].round + 1)
                    or not episodic(f.code)):
            yield run
            run = []
        run.append(f)
    if run:
        yield run
