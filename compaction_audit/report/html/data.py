"""What the HTML report shows, as plain bounded data: chart points, markers, episodes,
and the rows of the tables, built from the report model (no HTML here).

Bounds (issue 13, section 1: "a report of a 1 GB trace stays small enough to open"):
charts hold at most :data:`MAX_POINTS` points per quantity (consecutive rounds are
averaged in buckets beyond that), tables at most :data:`MAX_ROWS` rows, markers at
most :data:`MAX_MARKERS`, and a summary at most :data:`MAX_SUMMARY_CHARS` characters.
Every cut is counted so that the page can say what it left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl
import polars.selectors as cs

from compaction_audit.report.advice import episode_advice
from compaction_audit.report.lines import line_at, lines_span
from compaction_audit.report.model import SessionReport
from compaction_audit.report.summary import ends, said
from compaction_audit.report.summary import episodes as summary_episodes
from compaction_audit.rules.base import Finding

MAX_POINTS = 1000
"""Chart points per quantity; a longer series is averaged over buckets of rounds."""
MAX_ROWS = 200
"""Rows per table (episodes, lost facts, compactions); the rest is counted."""
MAX_PANEL_ITEMS = 2000
"""Finding episodes (or diff units) the round panel can look up."""
MAX_MARKERS = 200
"""Boundary markers drawn on a chart (onsets, then compactions in round order)."""
MAX_SUMMARY_CHARS = 50_000
"""Characters of one compaction summary shown (a 14,500-character summary is whole)."""

SIG_FIGS = 6
"""Significant digits kept of a charted value (the page's size, not its precision)."""

SERIES_QUANTITIES = ("raw_ratio", "distinct_source_spans", "query_cosine_retained",
                     "query_cosine_rebuilt",
                     "summary_depth_max", "rounds_at_max_depth", "ungrounded_summaries")
"""Per-round quantities charted, in order (the terminal's "Rounds that matter")."""
DEBT_COLUMNS = ("recall_debt", "recall_debt_fold", "recall_debt_eviction")
"""The recall-debt series (seed 002), charted together when present."""


def rule_anchor(code: str, rule: str) -> str:
    """The heading anchor of a rule in docs/rules.md (``## CA301 silent-...``), also
    the id of its entry in the page: ``ca301-silent-discriminating-fold``."""
    return f"{code}-{rule}".lower()


def downsample(frame: pl.DataFrame, cols: Iterable[str], max_points: int = MAX_POINTS
               ) -> pl.DataFrame:
    """``round``, ``round_end``, ``line`` (then ``line_file`` when the lines are in
    several files: :attr:`SessionReport.line_files`) and ``cols`` (those present), one row per
    round, or, past ``max_points`` rounds, one row per bucket of consecutive rounds
    (``round``/``line`` of its first round, ``round_end`` its last, each quantity the
    mean of its known values), floats to :data:`SIG_FIGS` significant digits.  Sorted
    by round."""
    cols = [c for c in cols if c in frame.columns]
    files = frame.get_column("line_file", default=None)
    # the file each line is in, third after the line, when not every line is the trace's
    where = ["line_file"] if files is not None and files.null_count() < len(files) else []
    base = frame.select("round", "line", *where, *cols)
    if frame.height <= max_points:
        out = base.select("round", pl.col("round").alias("round_end"), "line", *where, *cols)
    else:
        bucket = (pl.int_range(pl.len(), dtype=pl.Int64) * max_points) // frame.height
        out = (base.with_columns(bucket.alias("_bucket"))
               .group_by("_bucket", maintain_order=True)
               .agg(pl.col("round").first(), pl.col("round").last().alias("round_end"),
                    pl.col("line").first(), *(pl.col(c).first() for c in where),
                    *(pl.col(c).cast(pl.Float64).mean() for c in cols))
               .drop("_bucket"))
    # six significant digits are more than a chart or a reader can tell apart
    return out.with_columns(cs.float().round_sig_figs(SIG_FIGS))


def long_points(points: pl.DataFrame, cols: Iterable[str], group: str = "quantity"
                ) -> list[dict[str, Any]]:
    """``points`` (see :func:`downsample`) as long rows ``{round, round_end, line,
    <group>, value}``, one per quantity and point, for the charts."""
    cols = known_columns(points, cols)
    if not cols:
        return []
    frame = (points.with_columns(pl.col(c).cast(pl.Float64) for c in cols)
             .unpivot(cols, index=["round", "round_end", "line"], variable_name=group))
    return frame.to_dicts()


def same_lines(points: pl.DataFrame, cols: Iterable[str]) -> list[list[str]]:
    """``cols`` grouped by the line they draw: columns whose points (see
    :func:`downsample`) are equal at every one, unknown at the same ones, are one
    group, in the order of ``cols`` (``recall_debt`` is ``recall_debt_fold`` when
    nothing was lost by eviction: drawn under it, the line could not be seen)."""
    groups: list[list[str]] = []
    for c in cols:
        values = points[c].cast(pl.Float64)
        for g in groups:
            if values.equals(points[g[0]].cast(pl.Float64), check_names=False):
                g.append(c)
                break
        else:
            groups.append([c])
    return groups


def merged_points(points: pl.DataFrame, groups: list[list[str]]) -> list[dict[str, Any]]:
    """:func:`long_points` of the first column of each group of :func:`same_lines`,
    named for every column of it (``recall_debt = recall_debt_fold``): one line, and
    one legend entry that says it is both."""
    firsts = [g[0] for g in groups]
    names = {g[0]: " = ".join(g) for g in groups}
    rows = long_points(points, firsts)
    for row in rows:
        row["quantity"] = names[row["quantity"]]
    return rows


def known_columns(frame: pl.DataFrame, cols: Iterable[str]) -> list[str]:
    """The columns of ``cols`` present in ``frame`` with at least one known value (a
    series unknown at every round, such as ``query_cosine_retained`` in a log without
    salience, has nothing to draw)."""
    present = [c for c in cols if c in frame.columns]
    if not present:
        return []
    counts = frame.select(pl.col(c).count() for c in present).row(0)
    return [c for c, n in zip(present, counts, strict=True) if n]


def table(points: pl.DataFrame, bucketed: bool) -> dict[str, Any]:
    """A frame as ``{"columns": [...], "rows": [[...], ...], "bucketed"}`` (the round
    panel's lookup table; ``bucketed``: rows are buckets of rounds, so a round between
    two rows belongs to the earlier one)."""
    return {"columns": points.columns, "rows": [list(r) for r in points.iter_rows()],
            "bucketed": bucketed}


def markers(r: SessionReport) -> tuple[list[dict[str, Any]], int]:
    """Boundary markers ``{round, kind, label}``: inversion onset, inversion boundary,
    depth pin (the first depth-pin finding), then each compaction; at most
    :data:`MAX_MARKERS`.  Returns the markers and how many were left out."""
    out: list[dict[str, Any]] = []
    o = r.onsets
    for key, kind in (("inversion_onset", "inversion onset"),
                      ("inversion_boundary", "inversion boundary")):
        if o.get(key) is not None:
            out.append({"round": o[key], "kind": kind, "label": f"{kind} (round {o[key]})"})
    pin = (o.get("first_round") or {}).get("depth-pin")
    if pin is not None:
        out.append({"round": pin, "kind": "depth pin", "label": f"depth pin (round {pin})"})
    for c in r.compactions:
        where = line_at(c["line"], c.get("line_file"), str)
        out.append({"round": c["round"], "kind": "compaction",
                    "label": f"compaction at round {c['round']} ({where})"})
    return out[:MAX_MARKERS], max(0, len(out) - MAX_MARKERS)


@dataclass(frozen=True)
class Episode:
    """A run of one rule's findings at consecutive rounds (as the terminal groups them):
    first/last round and line, how many rounds and findings, first and last message."""

    code: str
    rule: str
    severity: str
    first_round: int
    last_round: int
    first_line: int
    last_line: int
    rounds: int
    findings: int
    message: str
    last_message: str
    action: str
    first_file: str | None = None  # the file first_line is in, when not the trace's
    last_file: str | None = None
    advice: str | None = None  # the rehydration advice (report.advice.episode_advice)

    @property
    def anchor(self) -> str:
        """The id of the rule's documentation entry."""
        return rule_anchor(self.code, self.rule)

    def where(self) -> str:
        """``round 5 (line 6)`` or ``rounds 5-40 (lines 6-41, 36 findings)``: the
        findings the verdict counts (ux5 F8), one per round unless a round holds
        several; with the file of each line when it is not the trace (``line 7 of X``)."""
        many = f", {self.findings} findings" if self.findings > 1 else ""
        if self.rounds == 1:
            return (f"round {self.first_round} "
                    f"({line_at(self.first_line, self.first_file, str)}{many})")
        lines = lines_span(self.first_line, self.first_file, self.last_line, self.last_file,
                           str)
        return f"rounds {self.first_round}-{self.last_round} ({lines}{many})"


def episodes(findings: list[Finding]) -> list[Episode]:
    """Findings grouped per rule (by code) into episodes of consecutive round numbers,
    ordered by code then first round."""
    out = []
    for run in summary_episodes(findings):
        first, last = ends(run)
        worst = max((f.severity for f in run), key=lambda s: s.rank)
        out.append(Episode(first.code, first.rule, worst.value, first.round, last.round,
                           first.line, last.line, len({f.round for f in run}), len(run),
                           said(first, worst), said(last, worst), first.action, first.line_file,
                           last.line_file, episode_advice(first, last)))
    return out


def panel_items(eps: list[Episode]) -> list[dict[str, Any]]:
    """Episodes as the round panel looks them up: ``{code, rule, severity, first, last,
    where, text, anchor}``; the first :data:`MAX_PANEL_ITEMS`, most severe first."""
    rank = {"error": 0, "warning": 1, "info": 2}
    chosen = sorted(eps, key=lambda e: (rank.get(e.severity, 3), e.first_round, e.code))
    return [{"code": e.code, "rule": e.rule, "severity": e.severity,
             "first": e.first_round, "last": e.last_round, "where": e.where(),
             "text": e.message, "anchor": e.anchor} for e in chosen[:MAX_PANEL_ITEMS]]


def compaction_points(r: SessionReport) -> list[dict[str, Any]]:
    """Tokens before and after each compaction with both known, as long rows
    ``{round, line, when, tokens}`` (``when``: ``before`` or ``after``), at most
    :data:`MAX_POINTS` compactions (evenly spaced when there are more)."""
    known = [c for c in r.compactions if isinstance(c.get("tokens_before"), int)
             and isinstance(c.get("tokens_after"), int)]
    step = max(1, -(-len(known) // MAX_POINTS))
    rows = []
    for c in known[::step]:
        for when in ("before", "after"):
            rows.append({"round": c["round"], "line": c["line"], "when": when,
                         "tokens": c[f"tokens_{when}"]})
    return rows


def clip(text: str | None, limit: int = MAX_SUMMARY_CHARS) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were cut."""
    text = text or ""
    return text[:limit], max(0, len(text) - limit)
