"""The terminal report: rich renderables built from the report model.

Log text only ever enters as ``rich.text.Text`` made :func:`printable`, never as
markup.  Colour comes from rich's own detection: none when stdout is not a terminal or
``NO_COLOR`` is set.

The report answers first (issue 13, section 2): the header (the verdict on its
second line; one line for the inversion when the log records no salience), the
compactions and the facts they lost, the findings by rule (errors first, each rule's
episodes capped), then the series and the rounds that matter, notes, and the verdict
again last, as pytest does.  Untrusted text wraps only under an indent of ours
(:mod:`compaction_audit.report.terminal_text`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import polars as pl
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from compaction_audit.conditions import can_invert, depth_condition
from compaction_audit.report.advice import episode_advice
from compaction_audit.report.bounded import most_severe
from compaction_audit.report.lines import line_at, lines_span
from compaction_audit.report.model import Report, SessionReport, reader_notes, session_named
from compaction_audit.report.safe import printable
from compaction_audit.report.summary import (
    baseline_info,
    ends,
    episodes,
    gate_note,
    grown_phrase,
    said,
)
from compaction_audit.report.terminal_lost import compactions_section, recall_section
from compaction_audit.report.terminal_text import (
    WIDE,
    ByWidth,
    Hanging,
    Trimmed,
    block,
    capped,
    group,
    hang,
    hanging,
    heading,
    line,
    more_line,
    t,
    w,
)
from compaction_audit.rules.base import Finding, Severity, fmt

__all__ = ["SEVERITY_STYLE", "SPARK", "bucket_means", "buckets", "line", "report_renderable",
           "sparkline", "statistics_renderable", "t", "verdict_line"]

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
STATUS_MARK = {"holds": ("yes", "green"), "fails": ("no", "red"), "unknown": ("?", "yellow")}
SPARK = "▁▂▃▄▅▆▇█"
SPARK_COLUMNS = ("raw_ratio", "distinct_source_spans", "query_cosine_retained",
                 "query_cosine_rebuilt", "summary_depth_max")
KEY_COLUMNS = ("raw_ratio", "distinct_source_spans", "query_cosine_retained",
               "query_cosine_rebuilt", "summary_depth_max", "rounds_at_max_depth",
               "ungrounded_summaries")
SHORT = {"raw_ratio": "raw", "distinct_source_spans": "spans",
         "query_cosine_retained": "cosine", "query_cosine_rebuilt": "rebuilt",
         "summary_depth_max": "depth",
         "rounds_at_max_depth": "at cap", "ungrounded_summaries": "ungr"}
"""Short column headings; the legend under the rounds names the series fields."""
EPISODES_PER_RULE = 3
"""Episodes listed per rule before "N more (--all)"."""
LABEL = 11
"""Width of the header's labels."""
WHERE_BESIDE = 22
"""An episode's "round N (line L): " longer than this goes above its message."""
"""Width of the header's labels."""


SPARK_WIDTH = 36
"""At most this many characters per sparkline: longer series are averaged in buckets."""


def buckets(n: int, width: int = SPARK_WIDTH) -> list[range]:
    """Split ``n`` rounds (by index) into at most ``width`` contiguous buckets."""
    if n <= width:
        return [range(i, i + 1) for i in range(n)]
    edges = [i * n // width for i in range(width + 1)]
    return [range(edges[i], edges[i + 1]) for i in range(width)]


FIXED_SCALE: dict[str, tuple[float, float]] = {"raw_ratio": (0.0, 1.0)}
"""Series drawn on their whole range instead of their min to max: ``raw_ratio`` is a
share (0 to 1, the floor at 0.25), so a fall from 1.000 to 0.890 is a small step, not
a fall to the bottom row (a product log's compaction keeps most of its raw tokens)."""


def spark_marks(means: list[float | None], scale: tuple[float, float] | None = None
                ) -> str:
    """One block character per value, scaled between ``scale`` (lo, hi; values outside
    it clamped) or else the min and max of the known values; a space for None."""
    present = [v for v in means if v is not None]
    if not present:
        return " " * len(means)
    lo, hi = scale or (min(present), max(present))
    # halves: a range from -1e308 to 1e308 is past a float (adv94 #2: NaN, a crash)
    span = hi / 2 - lo / 2 or 1.0
    top = len(SPARK) - 1

    def mark(v: float) -> str:
        at = (v / 2 - lo / 2) / span * top
        return SPARK[min(top, max(0, int(at)))] if math.isfinite(at) else SPARK[0]

    return "".join(" " if v is None else mark(v) for v in means)


def bucket_means(values: list[float | None], width: int = SPARK_WIDTH
                 ) -> list[float | None]:
    """The mean of the known values of each bucket of rounds (:func:`buckets`), None
    for a bucket with none; each value divided before the sum, which a bucket of values
    near a float's largest would overflow."""
    means: list[float | None] = []
    for b in buckets(len(values), width):
        known = [v for v in values[b.start:b.stop] if v is not None]
        means.append(sum(v / len(known) for v in known) if known else None)
    return means


def sparkline(values: list[float | None], width: int = SPARK_WIDTH,
              scale: tuple[float, float] | None = None) -> str:
    """Block characters (:func:`spark_marks`), one per bucket of rounds (the mean of
    its known values, :func:`bucket_means`); a space where a bucket has none."""
    return spark_marks(bucket_means(values, width), scale)


def has_salience(r: SessionReport) -> bool:
    """True when some round records a salience score (``query_cosine_retained`` known):
    without one the inversion signature cannot be computed (every Claude Code or Codex
    session)."""
    col = r.series.get_column("query_cosine_retained") if r.n_rounds else None
    return col is not None and col.null_count() < len(col)


FAILS_SHORT = {"scorer does not penalize depth": "scorer penalizes depth",
               "eviction is continuous": "event-driven eviction"}
"""A failing condition in two or three words, for the one inversion line (the depth
condition's, named by ``min_depth``, is made there: "depth < 2")."""


VERDICT_STYLE = {"FAIL": "bold red", "WARN": "bold yellow"}
"""The verdict's colour by its head word (any other head: bold green)."""


def _inversion_line(r: SessionReport) -> Text:
    """The conditions of validity in one line for a log without salience: "not
    applicable: no salience recorded", or "no salience recorded; drift only (...)"
    naming the conditions that fail; when the salience rules read a rebuilt cosine,
    "salience rebuilt; " and "no condition of inversion fails" or "drift only (...)"
    (wrapped under its label when three conditions fail).  The details are in
    ``--format json``."""
    m = r.settings.min_depth
    short = {**FAILS_SHORT, depth_condition(m): f"depth < {m}"}
    failing = [short.get(c.name, c.name) for c in r.conditions if c.status == "fails"]
    if (r.cosine or {}).get("inversion_signature"):  # the rules read a rebuilt cosine:
        head = "salience rebuilt; "  # none recorded: the conditions apply (usertest19 #2:
        if not failing:  # "not applicable" sat above an inversion found with it)
            return Text(head + "no condition of inversion fails")
        return Text(f"{head}drift only ({', '.join(failing)})")
    if not failing:
        return Text("not applicable: no salience recorded")
    return Text(f"no salience recorded; drift only ({', '.join(failing)})")


def header(r: SessionReport, config: str | None = None) -> RenderableType:
    """Trace, the verdict (the answer first; it is repeated last, where a scrolled
    terminal ends), session, rounds, budget, the configuration file (``config``, as shown;
    None: none) and the conditions of validity (one line when the log records no
    salience: they cannot apply), as pytest's header names its config file."""
    h = r.header
    rounds = r.series["round"]
    span = f"round {rounds[0]}..{rounds[-1]}" if len(rounds) else "none"
    budget = f"{h.budget_tokens:,} tokens" if h.budget_tokens else "not recorded"
    depth = str(h.max_depth) if h.max_depth else "not recorded"
    parts: list[RenderableType] = [
        line(("compaction-audit ", "bold underline"), t(r.path)),  # a path whole
        hang("verdict".ljust(LABEL), w(r.verdict(), VERDICT_STYLE.get(r.verdict_head(),
                                                                     "bold green"))),
        hang("session".ljust(LABEL), w(session_named(h)),
             f" ({printable(r.source_format)})"),
        hang("rounds".ljust(LABEL), f"{r.n_rounds} ({span}); budget {budget}; "
             f"depth cap {depth}"),
        hang("config".ljust(LABEL), w(config or "none"))]
    if not has_salience(r):
        parts.append(hang("inversion".ljust(LABEL), _inversion_line(r)))
    else:
        for i, c in enumerate(r.conditions):
            mark, style = STATUS_MARK[c.status]
            parts.append(hang(("conditions" if i == 0 else "").ljust(LABEL),
                              (f"{mark:<4}", style), f"{c.name}: ", w(c.detail)))
        if not can_invert(r.conditions):
            parts.append(hang(" " * LABEL, ("a condition fails: this loop can drift but "
                                            "not invert", "bold")))
    if r.cosine:
        parts.append(hang("cosine".ljust(LABEL), w(r.cosine_line())))
    unchecked = r.unchecked_phrase()
    if unchecked:  # the verdict says it last; a reader of the first screen needs it too
        parts.append(hang("unchecked".ljust(LABEL), w(unchecked, "yellow")))
    if r.skipped:
        parts.append(hang("skipped".ljust(LABEL), (r.lenient_phrase(), "yellow")))
    for limit in r.limits:  # a check that stopped at its cap (issue 11, class 5)
        parts.append(hang("limit".ljust(LABEL), w(limit.message(), "yellow")))
    held = _baseline_line(r)
    if held:  # the counts above leave these out: say so where they are read
        parts.append(hang("baseline".ljust(LABEL), w(held)))
    return Group(*parts)


def _baseline_line(r: SessionReport) -> str:
    """What ``--baseline`` left out of this trace's verdict, for the header ("" when
    no baseline was given): how many findings it holds, the path it has for a trace of
    this file name when it has none under this one's, and the fold findings it held
    that now lose more facts (reported as new; ux5 F3)."""
    info = baseline_info(r)
    if info is None:
        return ""
    out = f"{info['suppressed']} finding(s) in {info['file'] or 'the baseline'}, not shown"
    other = info.get("other_path") or []
    if other:  # usertest33 #7: the reason was only in the summary's lines
        out += (f"; it has no entry under this trace's path, but has for {other[0]}"
                + (f" and {len(other) - 1} more" if len(other) > 1 else "")
                + " (named otherwise when the baseline was made?)")
    grown = info.get("grown") or []
    if grown:  # each with the facts it now loses (usertest29 #6: they were named only
        # far below, under the finding, and the lost list left them "not listed")
        out += (f"; {len(grown)} finding(s) of it now name more facts, shown as new: "
                + ", ".join(f"{g['code']} {g['key']} {grown_phrase(g)}" for g in grown[:3])
                + (f" and {len(grown) - 3} more" if len(grown) > 3 else ""))
    return out


def glance(r: SessionReport) -> RenderableType:
    """Sparklines of the key series (a series unknown at every round is left out;
    ``raw_ratio`` from 0 to 1, the others from their min to max: :data:`FIXED_SCALE`)
    with flagged rounds marked below them."""
    frame = r.series
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(no_wrap=True, overflow="crop")
    grid.add_column()
    for col in SPARK_COLUMNS:
        values = frame[col].to_list()
        if all(v is None for v in values):
            continue
        first, last = values[0] if values else None, values[-1] if values else None
        grid.add_row("  " + col, sparkline(values, scale=FIXED_SCALE.get(col)),
                     f"{fmt(first)} -> {fmt(last)}")
    flagged = {(f.round, f.severity.value) for f in r.findings}
    rounds = frame["round"].to_list()
    marks = []
    for b in buckets(len(rounds)):
        here = rounds[b.start:b.stop]
        if any((n, "error") in flagged for n in here):
            marks.append("E")
        elif any((n, "warning") in flagged for n in here):
            marks.append("w")
        else:
            marks.append(" ")
    per = ("" if len(rounds) <= SPARK_WIDTH
           else f" ({len(rounds)} rounds in {SPARK_WIDTH} marks)")
    # the legend only where a mark needs it (ux6: "E error, w warning" beside no mark)
    info = "" if not any(sev == "info" for _, sev in flagged) else "; info not marked"
    grid.add_row("  flagged", Text("".join(marks), style="red"),  # usertest32 #8: "none"
                 ("E error, w warning" if marks.count(" ") < len(marks) else "none")
                 + info)  # beside a round whose only finding was info
    return Group(heading("Series at a glance" + per), Trimmed(grid))


def _key_rows(r: SessionReport) -> tuple[list[dict[str, Any]], dict[int, list[str]],
                                         tuple[str, ...]]:
    """The rounds that matter (first, last, onsets, each rule's first round), the
    codes that fired at each, and the columns to show (a series unknown everywhere
    left out)."""
    wanted = set()
    rounds = r.series["round"]
    if len(rounds):
        wanted |= {int(rounds[0]), int(rounds[-1])}
    for key in ("inversion_onset", "inversion_boundary", "summary_majority"):
        if r.onsets.get(key) is not None:
            wanted.add(r.onsets[key])
    firsts: dict[str, int] = {}
    labels: dict[int, list[str]] = {}
    for f in r.findings:
        firsts.setdefault(f.code, f.round)
        codes = labels.setdefault(f.round, [])
        if f.code not in codes:
            codes.append(f.code)
    wanted |= set(firsts.values())
    cols = tuple(c for c in KEY_COLUMNS if r.series[c].null_count() < r.n_rounds
                 and not (c == "rounds_at_max_depth" and _no_depth_to_count(r)))
    rows = list(r.series.filter(pl.col("round").is_in(sorted(wanted))).sort("round")
                .iter_rows(named=True))
    return rows, labels, cols


def _no_depth_to_count(r: SessionReport) -> bool:
    """True when ``rounds_at_max_depth`` says nothing: no cap recorded and no summary
    in any working set (the column is 0 at every round)."""
    return not r.header.max_depth and not (r.series["summary_depth_max"].max() or 0)


def _compactions_own_ungrounded(r: SessionReport) -> bool:
    """True when the series counts ungrounded summaries at some round but CA201 found
    none: the compactions' own summaries, ungrounded by construction
    (:class:`~compaction_audit.rules.provenance.UngroundedSummary`); a count of 1 over
    no finding read as a missed one (ux7)."""
    counts = r.series["ungrounded_summaries"] if "ungrounded_summaries" in r.series.columns \
        else None
    return (bool(r.compactions) and counts is not None and bool(counts.max() or 0)
            and not any(f.code == "CA201" for f in r.findings))


def column_names(r: SessionReport, cols: tuple[str, ...]) -> tuple[dict[str, str], str]:
    """Short headings of ``cols`` and the legend naming their series (after
    :data:`ROUND_END`).  Without a
    recorded ``max_depth`` the spec counts ``rounds_at_max_depth`` at the deepest
    summary the session wrote, so its heading is "at max", not "at cap" (the header
    says the cap is not recorded), and the legend says so; and it says when raw_ratio
    counts a summary the product encrypted at the adapter's estimate of its size."""
    short, named = dict(SHORT), {c: c for c in cols}
    if not r.header.max_depth:
        short["rounds_at_max_depth"] = "at max"
        named["rounds_at_max_depth"] = ("rounds_at_max_depth (no cap recorded: at the "
                                        "deepest depth written)")
    if "ungrounded_summaries" in cols and _compactions_own_ungrounded(r):
        named["ungrounded_summaries"] = (
            "ungrounded_summaries (a compaction's own summary, whose leaves it evicted: "
            "CA201 judges it only if it loses a leaf it kept, its facts are judged per "
            "fold)")
    opaque = sorted({c["round"] for c in r.compactions
                     if c.get("opaque") and c.get("summary_tokens") is not None
                     and isinstance(c.get("round"), int)})
    absent = sorted({c["round"] for c in r.compactions
                     if c.get("opaque") and c.get("unchecked") and c.get("summary_tokens")
                     is None and isinstance(c.get("round"), int)})
    if opaque and "raw_ratio" in cols:  # usertest31 #3: a 0.792 read as measured
        named["raw_ratio"] = (f"raw_ratio (from round {opaque[0]} on, an encrypted "
                              "summary counted at a size estimated from its ciphertext's "
                              "length, not the product's token count)")
    elif absent and "raw_ratio" in cols:  # a Claude Code summary line never written
        named["raw_ratio"] = (f"raw_ratio (from round {absent[0]} on, a summary not in "
                              "the log counted at the product's context size after the "
                              "compaction, 0 where it gives none)")
    return short, ROUND_END + ", ".join(f"{short[c]} = {named[c]}" for c in cols)


ROUND_END = "each value at its round's end; "
"""The legend's first words: a round's values are the working set at its end, which
for a product's compaction in the middle of a task is where the task's next turn
begins, not the line the round opens at (usertest31 #2: "round 3 (line 1256): raw
0.890" read as the context right after a compaction that left only its summary)."""


def key_rounds(r: SessionReport) -> RenderableType:
    """The rounds that matter: a table on a wide terminal, a list on a narrow one."""
    rows, labels, cols = _key_rows(r)
    short, legend = column_names(r, cols)
    files = r.line_files

    def table() -> RenderableType:
        tab = Table(title="Rounds that matter", title_justify="left", show_edge=False)
        tab.add_column("round", justify="right")
        tab.add_column("line", justify="right")
        if files:  # the file each line is in, when they are not all the trace's
            tab.add_column("of file", no_wrap=True)  # a name split mid-word reads as two
        for col in cols:
            tab.add_column(short[col], justify="right")
        tab.add_column("findings")
        for row in rows:
            where = [w(row["line_file"] or "")] if files else []
            tab.add_row(fmt(row["round"]), fmt(row["line"]), *where,
                        *(fmt(row[c]) for c in cols),
                        " ".join(sorted(labels.get(row["round"], []))))
        return tab

    def listing() -> RenderableType:
        parts: list[RenderableType] = [Text("Rounds that matter", style="bold")]
        for row in rows:
            values = ", ".join(f"{short[c]} {fmt(row[c])}" for c in cols)
            codes = " ".join(sorted(labels.get(row["round"], [])))
            parts.append(hang(f"round {row['round']} ({line_at(row['line'], row['line_file'])}): ",
                              values + (f"; {codes}" if codes else "")))
        parts.append(block((legend, "dim"), indent=2))
        return Group(*parts)

    def wide() -> RenderableType:
        # the legend under the table at the screen's width, not as its caption (that
        # wrapped at the table's width, ~78 columns of 100: ux6)
        return Group(table(), block((legend, "dim"), indent=2))

    return ByWidth(wide, listing, _natural_width(table()) if files else WIDE)


def _natural_width(table: RenderableType) -> int:
    """The width ``table`` takes unwrapped (at least :data:`WIDE`): below it, the
    list, rather than a table that splits its file names (a Cline trace read from
    several files)."""
    wide = Console(width=10_000)
    return max(WIDE, Measurement.get(wide, wide.options, table).maximum)


def _episodes(findings: Iterable[Finding]) -> Iterator[tuple[str, list[Finding]]]:
    """(code, episode) of :func:`compaction_audit.report.summary.episodes`."""
    return ((run[0].code, run) for run in episodes(findings))


def _where(run: list[Finding]) -> str:
    first, last = ends(run)
    rounds = len({f.round for f in run})
    several = f", {len(run)} findings" if len(run) > rounds else ""
    lines = lines_span(first.line, first.line_file, last.line, last.line_file)
    return (f"round {first.round} ({line_at(first.line, first.line_file)}{several})"
            if rounds == 1 else f"rounds {first.round}-{last.round} ({lines}{several})")


def _episode(run: list[Finding], show_all: bool = False,
             heading: Severity | None = None) -> list[RenderableType]:
    """One episode: where (beside the message when short, else above it), the first
    message, the last one when it differs (the first and last: :func:`~compaction_audit.
    report.summary.ends`), and the rehydration suggestion of the last round ("at round
    N:" where it differs from the first's).  Where a round holds
    several findings (a summary's distinct claims), a line counts those not shown;
    ``show_all`` shows every finding's message, each with its round when the episode
    spans several (usertest37 #3: three of a summary's four invented claims were seen
    in no text report, even with --all).  ``heading``: the severity of the rule's head
    line, above which a message is led by its own (:func:`~compaction_audit.report.
    summary.said`)."""
    first, last = ends(run)
    under = max((f.severity for f in run), key=lambda s: s.rank)
    if heading is not None and heading.rank > under.rank:
        under = heading
    where = _where(run) + ": "
    parts: list[RenderableType] = (
        [hang(where, w(said(first, under)))] if len(where) <= WHERE_BESIDE else
        [hang(where, ""), hang("", w(said(first, under)), indent=4)])
    rounds = len({f.round for f in run})
    if show_all and len(run) > 1:
        parts += [hang(f"round {f.round}: " if rounds > 1 else "", w(said(f, under)),
                       indent=4) for f in run if f is not first]
    elif len(run) > 1:
        shown = 1
        if last.message != first.message:
            parts.append(hang("last: ", w(said(last, under)), indent=4))
            shown = 2
        if len(run) > rounds:  # several at a round: each its own item, not a repeat
            parts.append(more_line(len(run) - shown, "more finding(s) in this episode",
                                   indent=4))
    if advice := episode_advice(first, last):  # the state the reader acts on
        parts.append(hang("", w(advice), indent=4))
    return parts


def findings_section(r: SessionReport, show_all: bool = False) -> RenderableType:
    """Findings by rule, errors first: a head line per rule (severity, code, name, how
    many findings in how many episodes: :func:`rule_count`), its episodes (at most
    :data:`EPISODES_PER_RULE`, the most severe: :func:`~compaction_audit.report.
    bounded.most_severe`, unless ``show_all``) with line and message, and the rule's
    action once."""
    if not r.findings:
        return Group(Text("Findings", style="bold"), Text("  No findings.", style="green"))
    by_rule: dict[str, list[list[Finding]]] = {}
    for code, run in _episodes(r.findings):
        by_rule.setdefault(code, []).append(run)

    def worst(code: str) -> Severity:
        return max((f.severity for run in by_rule[code] for f in run), key=lambda s: s.rank)

    parts: list[RenderableType] = [Text("Findings", style="bold")]
    for code in sorted(by_rule, key=lambda c: (-worst(c).rank, c)):
        runs = by_rule[code]
        sev = worst(code).value
        first = runs[0][0]
        parts.append(hanging((f"{sev.upper():<8}", SEVERITY_STYLE[sev]),
                             (f"{code} {first.rule}", "bold"), f"  {rule_count(runs)}",
                             indent=8))
        shown, left = (runs, []) if show_all else most_severe(runs, EPISODES_PER_RULE)
        for run in shown:
            parts += _episode(run, show_all, worst(code))
        if hidden := len(left):
            spans = list(dict.fromkeys(_span(run) for run in left))
            rest = ", ".join(spans[:8])  # each once: a broken rule's findings are
            more = ", ..." if len(spans) > 8 else ""  # episodes of their own (adv120 #6)
            one = len(spans) == 1 and "-" not in rest  # one round
            parts.append(more_line(hidden, f"more episode{'' if hidden == 1 else 's'} of "
                                           f"{code} (round{'' if one else 's'} {rest}{more})"))
        parts.append(hang(Text("action: ", style="dim"), w(first.action)))
    return Group(*parts)


def rule_count(runs: list[list[Finding]]) -> str:
    """``11 findings in 6 episodes`` (``3 findings in 1 episode, 2 rounds`` when a
    round holds several; ``40 findings (26 error, 14 warning) in ...`` when the rule's
    findings differ in severity): the findings the verdict counts by severity (one per
    rule and round, or per fold: spec rules.md), grouped as the report lists them (ux5
    F8: "2 info" under a head line that said "1 episode")."""
    n = sum(len(run) for run in runs)
    rounds = len({f.round for run in runs for f in run})
    where = f", {rounds} round{'s' if rounds > 1 else ''}" if rounds != n else ""
    by = Counter(f.severity for run in runs for f in run)
    mixed = (" (" + ", ".join(f"{by[s]} {s.value}" for s in sorted(by, key=lambda s: -s.rank))
             + ")" if len(by) > 1 else "")
    return (f"{n} finding{'s' if n > 1 else ''}{mixed} in {len(runs)} "
            f"episode{'s' if len(runs) > 1 else ''}{where}")


def _span(run: list[Finding]) -> str:
    a, b = run[0].round, run[-1].round
    return str(a) if a == b else f"{a}-{b}"


def notes_section(r: SessionReport, show_all: bool = False) -> RenderableType | None:
    """Reader notes (capped), rules a round could not be judged by, rules that do not
    apply (the salience rules are already named by the header's inversion line when
    no salience is recorded), and skipped records (capped)."""
    salience = has_salience(r)
    notes, hidden_notes = capped(reader_notes(r), show_all, 20)
    # indented as the section's other lines (ux5 F11: "note ..." at column 0)
    lines: list[RenderableType] = [hang(Text("note: ", style="yellow"), w(note))
                                   for note in notes]
    if hidden_notes:
        lines.append(more_line(hidden_notes, "more reader notes"))
    lines += [hang("", (line, "dim")) for line in r.rule_notes(salience_named=not salience)]
    for label, records in (("skipped ", r.skipped), ("dependent ", r.dependent)):
        shown, hidden = capped(records, show_all, 20)
        for e in shown:
            lines.append(hang(Text(label, style="yellow"), w(str(e))))
        if hidden:
            lines.append(more_line(hidden, f"more {label.strip()} records"))
    return Group(Text("Notes", style="bold"), *lines) if lines else None


def verdict_line(r: SessionReport) -> Text:
    """The one-line verdict, coloured by its head word (shown wrapped under a hanging
    indent: :class:`~compaction_audit.report.terminal_text.Hanging`)."""
    v = r.verdict()
    return line((v, VERDICT_STYLE.get(r.verdict_head(), "bold green")))


def _baselined(r: SessionReport, config: str | None) -> RenderableType | None:
    """A trace whose findings are all in the baseline: its header and that fact, no
    lists (issue 13, section 4)."""
    info = baseline_info(r)
    if info is None or r.findings or not info.get("suppressed"):
        return None
    return Group(header(r, config), Text(""), Text(f"  all {info['suppressed']} finding(s) are in "
                                           "the baseline: nothing new", style="green"))


def session_renderable(r: SessionReport, sections: Iterable[RenderableType] = (),
                       show_all: bool = False, config: str | None = None) -> RenderableType:
    """The whole terminal report of one trace (see the module docstring); ``sections``
    are extra renderables placed after the findings; ``show_all`` lists everything
    (``audit --all``) instead of the first screen's worth; ``config``: the
    configuration file, for the header."""
    short = _baselined(r, config)
    if short is not None:
        return Group(short, Text(""), Hanging(verdict_line(r)))
    body = [compactions_section(r, show_all), findings_section(r, show_all),
            recall_section(r, show_all), *sections, glance(r), key_rounds(r),
            notes_section(r, show_all)]
    parts: list[RenderableType] = [header(r, config)]
    for part in body:
        if part is not None:
            parts += [Text(""), part]
    parts += [Text(""), Hanging(verdict_line(r))]
    return Group(*parts)


def report_renderable(report: Report, show_all: bool = False) -> RenderableType:
    """Every trace's report, then unreadable traces (``show_all``: see
    :func:`session_renderable`)."""
    parts: list[RenderableType] = []
    for i, s in enumerate(report.sessions):
        if i:
            parts.append(Text(""))
        parts.append(session_renderable(s, show_all=show_all, config=report.config))
    for e in report.errors:
        parts.append(line(("error: ", "bold red"), t(e.named())))  # its path whole
    if not report.sessions:  # no header to name it in
        parts.append(line(("config: ", "dim"), t(report.config or "none")))
    return Group(*parts)


def quiet_renderable(report: Report, fail_on: str | None = None) -> RenderableType:
    """``audit -q``: the verdict only; one line per trace, never wrapped (a script
    reads it by lines), prefixed by its path when there are several (then the
    summary's gate line follows); given ``fail_on``, among several traces one whose
    verdict word does not say whether it fails the gate ends with
    :func:`~compaction_audit.report.summary.gate_note` (usertest23 #1: seven lines
    read PASS, the run exited 1; one trace's gate line follows it)."""
    several = len(report.sessions) + len(report.errors) > 1
    parts: list[RenderableType] = []
    for s in report.sessions:
        v = verdict_line(s)
        note = "" if fail_on is None or not several else gate_note(s, fail_on)
        if note:
            v.append(" " + note)
        parts.append(line(t(s.path), ": ", v) if several else line(v))
    for e in report.errors:
        parts.append(line(("error: ", "bold red"), t(e.named())))
    return Group(*parts)


def rule_statistics(report: Report) -> list[tuple[int, int, str, str, str, str]]:
    """Per rule over every trace: (findings, episodes, code, name, worst severity,
    severities), most findings first, then by code (``audit --statistics``, as
    ruff's).  ``severities`` is the worst severity's name when every finding has it,
    else the count of each, worst first (``"26 error, 14 warning"``: a rule whose
    severity follows what it found said "error" for 40 findings of which 14 were
    warnings, ux7)."""
    counts: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    names: dict[str, str] = {}
    by_severity: dict[str, Counter[Severity]] = {}
    for s in report.sessions:
        for code, run in _episodes(s.findings):
            runs[code] += 1
            counts[code] += len(run)
            names[code] = run[0].rule
            by_severity.setdefault(code, Counter()).update(f.severity for f in run)
    out = []
    for code, n in counts.items():
        mix = sorted(by_severity[code].items(), key=lambda kv: -kv[0].rank)
        worst = mix[0][0].value
        said = worst if len(mix) == 1 else ", ".join(f"{k} {sev.value}" for sev, k in mix)
        out.append((n, runs[code], code, names[code], worst, said))
    return sorted(out, key=lambda x: (-x[0], x[2]))


def statistics_renderable(report: Report) -> RenderableType:
    """``audit --statistics``: one line per rule, ``COUNT  CODE  name  (N episodes,
    severity)``, most findings first; "No findings." when there are none; then the
    findings the baseline and ``[[suppress]]`` held back, which the counts leave out
    (usertest58 #8: a run over a baseline read "No findings." alone)."""
    stats = rule_statistics(report)
    baselined = sum(s.baselined() for s in report.sessions)
    suppressed = sum(s.suppressed() for s in report.sessions)
    held = ([f"{baselined} in the baseline"] if baselined else []) + (
        [f"{suppressed} suppressed by [[suppress]]"] if suppressed else [])
    note = f" ({', '.join(held)})" if held else ""
    if not stats:
        return Text(f"No findings{note}.", style="green")
    width = len(str(stats[0][0]))
    lines = [line(f"{n:>{width}}  ", (code, SEVERITY_STYLE[sev]), f"  {name}",
                  (f"  ({e} episode{'s' if e > 1 else ''}, {said})", "dim"))
             for n, e, code, name, sev, said in stats]
    if held:
        lines.append(Text(f"not counted above: {', '.join(held)}", style="dim"))
    return group(lines)
