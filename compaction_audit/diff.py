"""Compare two audited runs: onsets, the aligned series, and findings (``diff``).

Pure: takes two :class:`SessionReport` objects and returns a :class:`RunDiff`; the
renderers (:mod:`compaction_audit.report.diff_render`) and the command print it.

- Onsets (spec rules.md, "Onsets"): inversion onset, inversion boundary, the round at
  which summary tokens first exceed raw tokens, and the first round of every rule, side
  by side, with the delta in rounds and a verdict word (:data:`VERDICTS`).  None (no
  onset) counts as later than any round.  Seed 000, "What Was Observed": removing the
  recency decay moved the inversion onset from round 12 to round 19 ("later", +7).
- Series: the quantities of :data:`SERIES_COLUMNS` (plus any ``recall_debt*`` column)
  joined on the round number (full join: a round missing on one side is null there).
- Findings: grouped into comparable units with a stable identity, see
  :func:`finding_units`, and classified new / resolved / persisting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from compaction_audit.cosine.embed import LEXICAL_NAME
from compaction_audit.report.gaps import checked_less, coverage_phrases
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import RULES, Finding, Severity

SERIES_COLUMNS = ("raw_ratio", "distinct_source_spans", "query_cosine_retained",
                  "summary_depth_max", "query_cosine_rebuilt")
"""Series quantities compared side by side (the logged and the rebuilt cosine both, issue
16); ``recall_debt*`` columns are added when a run's series has them."""

ONSET_KEYS = ("inversion_onset", "inversion_boundary", "summary_majority")
"""The session-level onsets, compared before the per-rule first rounds."""

VERDICTS = ("earlier", "later", "unchanged", "appeared", "disappeared")
"""Verdict words of one onset row (candidate compared with baseline)."""

FLOAT_TOLERANCE = 1e-9
"""Two float series values closer than this are equal (ratios, scores)."""


@dataclass(frozen=True)
class OnsetDelta:
    """One onset side by side: rounds (None: none), ``delta`` = candidate - baseline in
    rounds (None unless both are rounds), ``verdict`` one of :data:`VERDICTS`.
    ``kind`` is ``"onset"`` (inversion onset, boundary, summary majority) or ``"rule"``
    (first round of the rule named ``name``)."""

    name: str
    kind: str
    baseline: int | None
    candidate: int | None
    delta: int | None
    verdict: str


@dataclass(frozen=True)
class Occurrence:
    """A finding unit in one run: first and last round, number of rounds it fired at,
    the line of its first round, the highest severity, the first message; ``line_file``
    the file that line is in when it is not the trace (a Cline trace read from several
    files: :attr:`~compaction_audit.rules.base.Finding.line_file`)."""

    first_round: int
    last_round: int
    rounds: int
    line: int
    severity: Severity
    message: str
    line_file: str | None = None


@dataclass(frozen=True)
class FindingDelta:
    """One finding unit compared across runs.

    ``identity`` is ``(code, key)`` with ``key`` ``"lost:<kind>:<text>"``,
    ``"entity:<id>"`` or ``"episode:<n>"`` (see :func:`finding_units`); ``status`` is
    ``new``, ``resolved`` or ``persisting``; ``baseline``/``candidate`` are None on the
    side where it does not occur.  ``baseline_code``: the rule that reported a
    persisting unit in the baseline when it is not ``code`` (a fact a topic-only fold
    lost there and a silent fold here: CA302, then CA301), else None.
    """

    code: str
    rule: str
    key: str
    status: str
    baseline: Occurrence | None
    candidate: Occurrence | None
    baseline_code: str | None = None

    @property
    def severity(self) -> Severity:
        """The candidate's severity when it occurs there, else the baseline's."""
        occ = self.candidate or self.baseline
        assert occ is not None
        return occ.severity


@dataclass
class RunDiff:
    """The comparison of ``candidate`` with ``baseline``.

    ``onsets``: one :class:`OnsetDelta` per onset and per rule (registered rules by
    code, then any other rule that fired).  ``series``: one row per round present in
    either run, sorted by round, columns ``round``, then ``<q>_baseline``,
    ``<q>_candidate`` for each quantity in ``quantities``, then ``in_baseline``,
    ``in_candidate`` and ``diverges`` (booleans).  ``findings``: one
    :class:`FindingDelta` per unit, ordered by code then first round.
    """

    baseline: SessionReport
    candidate: SessionReport
    onsets: list[OnsetDelta]
    quantities: list[str]
    series: pl.DataFrame
    findings: list[FindingDelta]
    config: str | None = None
    """The configuration file both runs were audited with, as shown (None: none)."""

    def onset(self, name: str) -> OnsetDelta:
        """The row named ``name`` (e.g. ``"inversion_onset"`` or a rule name)."""
        return next(o for o in self.onsets if o.name == name)

    def by_status(self, status: str) -> list[FindingDelta]:
        """Finding units with ``status`` (new, resolved or persisting)."""
        return [f for f in self.findings if f.status == status]

    @property
    def diverging_rounds(self) -> list[int]:
        """Round numbers at which a compared quantity differs or one run lacks the round."""
        return [int(r) for r in self.series.filter("diverges")["round"]]

    @property
    def changed(self) -> bool:
        """False when onsets, findings and series are all the same: "no change"."""
        return (any(o.verdict != "unchanged" for o in self.onsets)
                or any(f.status != "persisting" for f in self.findings)
                or bool(self.diverging_rounds))

    def last_debt(self) -> tuple[int | None, int | None] | None:
        """``recall_debt`` at each run's last round (baseline, candidate), in
        discriminators nothing in the context can recover (seed 002); a run's value is
        None when its last round's debt is unknown (a compaction whose loss could not
        be checked: :func:`compaction_audit.recall.sections.debt_checked`); None when a run
        has no such column or no round."""
        ends: list[int | None] = []
        for r in (self.baseline, self.candidate):
            col = r.series.get_column("recall_debt", default=None)
            if col is None or col.len() == 0:
                return None
            value = col[-1]
            ends.append(None if value is None else int(value))
        return ends[0], ends[1]

    def lenient_note(self) -> str:
        """What ``--lenient`` left out of either run, e.g. ``candidate: 1 bad record(s)
        skipped and 4 dependent reject(s) (--lenient)``; "" when nothing was.  A run
        with skipped records never compares silently (issue 11, class 2: a damaged
        candidate passed ``--fail-on-new error`` without a word; adv19a F4)."""
        return "; ".join(
            f"{label}: {r.lenient_phrase()}"
            for label, r in (("baseline", self.baseline), ("candidate", self.candidate))
            if r.skipped or r.dependent)

    def headline(self) -> str:
        """A one-line plain verdict: ``no change``, or the inversion onset's move and
        the finding counts; then :meth:`lenient_note` when a run skipped records and
        :meth:`coverage_note` when a run could not be fully checked."""
        note = self.lenient_note()
        return (self._changes() + self.judged_note() + (f"; {note}" if note else "")
                + self.coverage_note() + self.sessions_note() + self.signature_note())

    def signature_note(self) -> str:
        """``"; the inversion onsets read different series: baseline
        query_cosine_retained, candidate query_cosine_rebuilt"`` when the two runs' onsets
        come from different cosines (one log records salience, the other does not:
        :meth:`SessionReport.signature_series`), else "": the same loop logged both ways moved its
        onset 8 -> 11 with no word (usertest41 #2)."""
        base, cand = (r.signature_series() for r in (self.baseline, self.candidate))
        if base == cand:
            return ""
        return (f"; the inversion onsets read different series: baseline {base}, "
                f"candidate {cand}")

    @property
    def tasks_differ(self) -> bool:
        """True when both runs name their task (:attr:`SessionReport.task`: the
        ``task_query``, else the person's first prompt, whitespace collapsed) and the
        two texts differ."""
        tasks = (self.baseline.task, self.candidate.task)
        return None not in tasks and tasks[0] != tasks[1]

    def sessions_note(self) -> str:
        """``"; different tasks: ..."`` when :attr:`tasks_differ`, else "".  ``diff``
        compares two runs of one task (docs/diff.md); two unrelated sessions gave "214
        new, 1 resolved" without a word (usertest26 #2).  Session ids are not compared:
        every run has its own."""
        if not self.tasks_differ:
            return ""
        return ("; different tasks (the task queries, or the person's first prompts, "
                "differ): their findings may not correspond")

    def coverage_note(self) -> str:
        """What either run's audit could not cover (compactions that could not be
        checked, lines its reader did not read: :mod:`compaction_audit.report.gaps`),
        e.g. ``"; candidate not fully checked: 2 lines not read, so its 210 resolved
        finding(s) may be unread, not fixed"``; "" when both were fully checked.  A
        candidate that stopped reading its compaction showed as 210 findings resolved,
        with no word (adv29 F3)."""
        parts = []
        for label, r in (("baseline", self.baseline), ("candidate", self.candidate)):
            said = _covered(r)
            if said:
                parts.append(f"{label} not fully checked: {', '.join(said)}")
        resolved = len(self.by_status("resolved"))
        if resolved and _covered(self.candidate):
            parts[-1] += f", so its {resolved} resolved finding(s) may be unread, not fixed"
        return "".join(f"; {p}" for p in parts)

    def judged_note(self) -> str:
        """``"; no selected rule could judge either run"`` (or the one run it could not
        judge), "" when the selection judged both: a configuration whose rules judge
        nothing turned a diff gate green with no word (adv25 N2)."""
        base, cand = self.baseline.judged_nothing(), self.candidate.judged_nothing()
        if base and cand:
            return "; no selected rule could judge either run"
        if base or cand:
            return f"; no selected rule could judge the {'baseline' if base else 'candidate'}"
        return ""

    def _changes(self) -> str:
        if not self.changed:
            return "no change"
        o = self.onset("inversion_onset")
        parts = [f"inversion onset {o.verdict}: {describe(o)}"]
        counts = {s: len(self.by_status(s)) for s in ("new", "resolved", "persisting")}
        # units, not findings: a fold finding is one unit per fact it lost (docs/diff.md)
        parts.append(", ".join(f"{n} {s}" for s, n in counts.items()) + " finding unit(s)")
        debt = self.last_debt()
        if debt is not None and debt[0] != debt[1]:
            # what a loop that cannot invert still loses (a product's compactions)
            if debt[0] is None or debt[1] is None:
                parts.append("recall debt at the last round "
                             + " -> ".join("unknown" if d is None else f"{d:,}" for d in debt)
                             + " (a compaction whose loss could not be checked)")
            else:
                parts.append(f"recall debt at the last round {debt[0]:,} -> {debt[1]:,} "
                             f"({debt[1] - debt[0]:+,})")
        if self.diverging_rounds:
            parts.append(f"series differ at {len(self.diverging_rounds)} round(s)")
        return "; ".join(parts)


def _covered(r: SessionReport) -> list[str]:
    """:func:`~compaction_audit.report.gaps.coverage_phrases` of ``r`` and its checks
    that stopped at their cap ("1 check stopped at its limit": usertest28 #1, a
    candidate whose carried-claim walk stopped read as fully compared)."""
    stopped = len(r.limits)
    said = ("1 check stopped at its limit" if stopped == 1
            else f"{stopped} checks stopped at their limits")
    return [*coverage_phrases(r), *([said] if stopped else [])]


def describe(o: OnsetDelta) -> str:
    """``round 12 -> round 19 (+7 rounds)`` or ``none -> round 8`` for one onset row."""
    def side(v: int | None) -> str:
        return "none" if v is None else f"round {v}"

    text = f"{side(o.baseline)} -> {side(o.candidate)}"
    if o.delta:
        text += f" ({o.delta:+d} round{'s' if abs(o.delta) != 1 else ''})"
    return text


def verdict(baseline: int | None, candidate: int | None) -> str:
    """The verdict word for one onset, candidate against baseline (None: no onset,
    later than any round): appeared, disappeared, earlier, later or unchanged."""
    if baseline is None and candidate is not None:
        return "appeared"
    if baseline is not None and candidate is None:
        return "disappeared"
    if baseline is None or candidate is None or baseline == candidate:
        return "unchanged"
    return "earlier" if candidate < baseline else "later"


def compare_onsets(base: dict[str, Any], cand: dict[str, Any],
                   run: set[str] | None = None) -> list[OnsetDelta]:
    """Onset rows from two ``SessionReport.onsets`` dicts (spec rules.md, "Onsets"):
    :data:`ONSET_KEYS` first, then the first round of every registered rule (by code)
    that either run ran (``run``, rule codes; None: every registered rule) and of any
    other rule that fired in either run.  A rule neither run selected is no row: it
    was not "in neither run" (the diff listed all 20 rules under ``--select CA101``)."""
    names = [(k, "onset") for k in ONSET_KEYS]
    rule_names = [cls.name for code, cls in sorted(RULES.items())
                  if run is None or code in run]
    fired = set(base.get("first_round", {})) | set(cand.get("first_round", {}))
    rule_names += sorted(fired - set(rule_names))
    names += [(n, "rule") for n in rule_names]
    rows = []
    for name, kind in names:
        source_b = base if kind == "onset" else base.get("first_round", {})
        source_c = cand if kind == "onset" else cand.get("first_round", {})
        b, c = source_b.get(name), source_c.get(name)
        delta = c - b if b is not None and c is not None else None
        rows.append(OnsetDelta(name, kind, b, c, delta, verdict(b, c)))
    return rows


def quantities(base: SessionReport, cand: SessionReport) -> list[str]:
    """:data:`SERIES_COLUMNS` plus every ``recall_debt*`` column of either series (in
    series order, baseline first), without a quantity neither run has a value of (a
    product's log records no salience: "query_cosine_retained unknown" in both runs
    and at every diverging round, usertest26 #6)."""
    debt = [c for r in (base, cand) for c in r.series.columns if c.startswith("recall_debt")]
    return [q for q in [*SERIES_COLUMNS, *dict.fromkeys(debt)]
            if any(q in r.series.columns and r.series[q].null_count() < r.series.height
                   for r in (base, cand))]


def _side(r: SessionReport, cols: list[str], suffix: str) -> pl.DataFrame:
    frame = r.series
    exprs = [pl.col("round").cast(pl.Int64)]
    for c in cols:
        expr = pl.col(c) if c in frame.columns else pl.lit(None)
        exprs.append(expr.alias(f"{c}{suffix}"))
    exprs.append(pl.lit(True).alias(f"in{suffix}"))
    return frame.select(exprs)


def _differs(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """Null-aware inequality; floats within :data:`FLOAT_TOLERANCE` are equal."""
    one_null = a.is_null() != b.is_null()
    far = (a.cast(pl.Float64) - b.cast(pl.Float64)).abs() > FLOAT_TOLERANCE
    return one_null | far.fill_null(False)


def _fitted(r: SessionReport) -> bool:
    """True when ``r``'s ``query_cosine_rebuilt`` came from the lexical TF-IDF, whose
    weights are fitted on the session's own texts: two runs with the same working set
    at a round get different values when their other rounds differ (the two Cline
    compactions of one task differed at every round by 0.001), so the rebuilt cosine
    makes no round diverge; the shipped model's cosine depends on the texts alone."""
    return str((r.cosine or {}).get("method") or "").startswith(LEXICAL_NAME)


def align_series(base: SessionReport, cand: SessionReport, cols: list[str]) -> pl.DataFrame:
    """The two series joined on ``round`` (full outer join, sorted by round); see
    :class:`RunDiff` for the columns.  A round missing on one side is null there.
    ``diverges``: a round one run lacks, or where a quantity differs (floats beyond
    :data:`FLOAT_TOLERANCE`; ``query_cosine_rebuilt`` not when a run's is the lexical
    TF-IDF's: :func:`_fitted`)."""
    joined = (_side(base, cols, "_baseline")
              .join(_side(cand, cols, "_candidate"), on="round", how="full", coalesce=True)
              .sort("round"))
    present = [pl.col(f"in{s}").fill_null(False) for s in ("_baseline", "_candidate")]
    diverges = ~(present[0] & present[1])
    for c in cols:
        if c == "query_cosine_rebuilt" and (_fitted(base) or _fitted(cand)):
            continue  # shown, not compared (see _fitted)
        diverges = diverges | _differs(pl.col(f"{c}_baseline"), pl.col(f"{c}_candidate"))
    return joined.with_columns(present[0].alias("in_baseline"),
                               present[1].alias("in_candidate"),
                               diverges.alias("diverges"))


def finding_units(r: SessionReport) -> dict[tuple[str, str], Occurrence]:
    """Group one run's findings into units keyed by a stable identity.

    - A fold finding (its ``values`` list ``children``, each with the discriminators it
      ``dropped``) belongs to one unit ``(code, "lost:<kind>:<text>")`` per
      discriminator it dropped: what was lost, not the fold's id, which is local to
      its run (issue 13, section 4: the better of two runs failed ``--fail-on-new``
      with "3 new CA301" because its folds had other ids).  A discriminator lost by
      folds of several rules (a silent fold here, a topic-only fold there) is one
      unit, under the code of its most severe finding (ties: the lowest code).
    - Any other finding with an ``entity`` belongs to the unit
      ``(code, "entity:<entity>")``: every round at which that rule fired about that
      item; one about what a summary states, to one unit per claim or flip, by what
      it states (``claim:<kind>:<text>``, ``flip:<kind>:<text>``: :func:`stated_units`),
      not by the summary's id, which is local to its run; a lost rule's violation by
      the rule and what was done (``violated:<kind>:<text>:<object>``); a stale
      summary (CA306) by its ordinal among the run's stale summaries
      (``stale:<n>``, 0-based, in round order), as an episode is.
    - Otherwise to ``(code, "episode:<n>")``: the episode of that rule after n others
      (0-based, as a baseline file numbers them: usertest38 #10, "episode:0" there was
      "episode:1" here), an episode being a run of findings of the rule at
      consecutive round records (consecutive in the log, so skipped round numbers do
      not split an episode, where they split a baseline's).

    Episodes are matched by ordinal, not by first round, so an episode that moved (the
    same inversion, a few rounds later) persists rather than counting as one new and
    one resolved; the move shows in the onset rows.  A run diffed with itself gives
    only persisting units.
    """
    position = {int(n): i for i, n in enumerate(r.series["round"])}
    by_entity: dict[tuple[str, str], list[Finding]] = {}
    plain: dict[str, list[Finding]] = {}
    by_lost: dict[str, list[Finding]] = {}
    lost_by_fold = fold_lost_units(r)
    keys_of = {id(f): lost_keys(f, lost_by_fold) for f in r.findings}
    for f in r.findings:
        for key in keys_of[id(f)]:
            by_lost.setdefault(key, []).append(f)
    stale = {id(f): f"stale:{n}" for n, f in enumerate(sorted(
        (f for f in r.findings if f.code == STALE_CODE), key=lambda f: (f.round, f.line)))}
    for f in r.findings:
        if f.entity is not None and not keys_of[id(f)]:
            # each claim or flip a unit (adv27 F1), by what is stated, not by the
            # summary's id, local to its run as a fold's is (usertest17: one claim was
            # "new" and "resolved" across two runs); a stale summary by its ordinal
            # (usertest18 #10: by its id, the same one was new and resolved)
            own = stale.get(id(f)) or _violation_unit(f)
            for key in ([own] if own else stated_units(f)) or [f"entity:{f.entity}"]:
                by_entity.setdefault((f.code, key), []).append(f)
        elif f.entity is None:
            plain.setdefault(f.code, []).append(f)
    units = {key: _occurrence(fs) for key, fs in by_entity.items()}
    for key, fs in by_lost.items():
        worst = min(fs, key=lambda f: (-f.severity.rank, f.code))
        # where the unit's code fired: its rounds, first line and message (usertest23
        # #4: the rounds and line of every fold rule beside one rule's message)
        units[(worst.code, key)] = _occurrence([f for f in fs if f.code == worst.code])
    for code, fs in plain.items():
        fs.sort(key=lambda f: f.round)
        episodes: list[list[Finding]] = []
        last: int | None = None
        for f in fs:
            pos = position.get(f.round)
            if last is None or pos is None or pos - last > 1:
                episodes.append([])
            episodes[-1].append(f)
            last = pos
        for n, episode in enumerate(episodes):
            units[(code, f"episode:{n}")] = _occurrence(episode)
    return units


STALE_CODE = "CA306"
"""stale-summary: its findings are matched across runs by ordinal (``stale:<n>``)."""


def stated_units(f: Finding) -> list[str]:
    """What an entity finding about a summary says the summary states, as units:
    ``flip:<kind>:<text>`` for each rule a fold states reversed (``flipped``, CA304),
    ``claim:<kind>:<text>`` for an unsupported claim (CA305); empty for any other
    finding.  Keyed by the summary alone, a second claim or flip in a summary that
    already had one baselined was hidden from ``--baseline`` and ``diff --fail-on-new``
    (adv27 F1: two invented identifiers, exit 0)."""
    v = f.values
    more = [f"more:{v['more_digest']}"] if isinstance(v.get("more_digest"), str) else []
    flipped = v.get("flipped")
    if isinstance(flipped, list):  # the flips a finding lists, and a digest of the rest
        return list(dict.fromkeys(f"flip:{d.get('kind')}:{d.get('text')}" for d in flipped
                                  if isinstance(d, dict))) + more  # (adv28 F4b)
    if isinstance(v.get("claim"), str) and "text" in v and "kind" in v:
        return [f"claim:{v['kind']}:{v['text']}", *more]  # the claims past the cap (F4)
    return []


def _violation_unit(f: Finding) -> str | None:
    """``violated:<kind>:<text>:<object>`` for a lost rule a later action broke (CA307,
    whose entity names a span, local to its run), else None."""
    v = f.values
    if "violated_span" in v and "text" in v and "object" in v:
        return f"violated:{v.get('kind')}:{v['text']}:{v['object']}"
    return None


class FoldLosses(dict[str, list[str]]):
    """``lost:<kind>:<text>`` of each fact a fold lost, by the fold's id
    (:func:`fold_lost_units`); ``ranked``: the unit of each fact of the session's
    ranked lost list, in its order (a fold finding's dropped facts point into it by
    their ``pos``)."""

    def __init__(self) -> None:
        super().__init__()
        self.ranked: list[str] = []


def fold_lost_units(r: SessionReport) -> FoldLosses:
    """``lost:<kind>:<text>`` of each fact a fold lost, by the fold's id, from the
    session's whole lost list (``extra["lost_discriminators"]``: facts no span or
    summary in context still holds, uncapped; each fact once, at the fold that lost it
    first)."""
    out = FoldLosses()
    for d in r.extra.get("lost_discriminators") or ():
        unit = f"lost:{d.get('kind')}:{d.get('text')}" if isinstance(d, dict) else ""
        out.ranked.append(unit)
        if isinstance(d, dict) and d.get("cause") == "fold" and d.get("fold") is not None:
            out.setdefault(str(d["fold"]), []).append(unit)
    return out


def lost_keys(f: Finding, lost_by_fold: FoldLosses) -> list[str]:
    """``lost:<kind>:<text>`` for each discriminator a fold finding (one with
    ``values["children"]``) lost, without repeats; empty for any other finding.

    Taken from the session's lost list for the finding's fold (``lost_by_fold``, see
    :func:`fold_lost_units`): the finding's own ``children`` are capped at 50 and list
    what each child dropped, facts another span still holds included, so on a real
    Claude Code session the diff's units missed 107 of 210 lost facts (11 of the 12
    labelled ones) and counted held facts as lost (ux5 F1).  To those are added the
    dropped facts of its children that the lost list has from an earlier fold (a span
    read later stated them again: their ``pos``), each as that fact's ``lost:`` unit
    (usertest23 #4: such a fold read as holding facts it had lost; usertest25 #1: a
    fold with losses of its own left them out, and the unit showed the first fold's
    round only).  A fold with neither is keyed by the facts its children dropped that
    another span still holds, as ``held:<kind>:<text>``: a baseline or run where a
    fact was held is not one where it is lost, so a fact that goes from held to lost is
    new (usertest21 #2, adv70 #1:
    as ``lost:`` it matched the earlier held fact, and a failing fold passed against
    the baseline)."""
    children = f.values.get("children")
    if not isinstance(children, list):
        return []
    fold = f.values.get("fold")
    own = lost_by_fold.get(str(fold), []) if fold is not None else []
    ranked = lost_by_fold.ranked
    again, held = [], []
    for c in children:
        for d in (c.get("dropped") or ()) if isinstance(c, dict) else ():
            if not isinstance(d, dict) or "kind" not in d:
                continue
            pos = d.get("pos")
            if type(pos) is int and 0 <= pos < len(ranked) and ranked[pos]:
                again.append(ranked[pos])  # lost (first here, or by an earlier fold)
            else:
                held.append(f"held:{d['kind']}:{d['text']}")
    # a fold that lost facts of its own is keyed by them and by those it dropped again
    # (usertest25 #1: a unit showed the first fold's round only); one that lost none
    # by what it dropped again, else by what another span still holds
    return list(dict.fromkeys([*own, *again] if own or again else held))


def _occurrence(fs: list[Finding]) -> Occurrence:
    fs = sorted(fs, key=lambda f: f.round)
    rounds = sorted({f.round for f in fs})
    worst = max((f.severity for f in fs), key=lambda s: s.rank)
    return Occurrence(rounds[0], rounds[-1], len(rounds), fs[0].line, worst, fs[0].message,
                      fs[0].line_file)


def compare_findings(base: SessionReport, cand: SessionReport) -> list[FindingDelta]:
    """Finding units of both runs classified new (candidate only), resolved (baseline
    only) or persisting (both), ordered by code, then (facts still held, ``held:``,
    after the rest: usertest23 #4) first round, then (units of what folds lost) as the
    audit ranks the facts: tier, then its list's order.

    Units of what folds lost (``lost:<kind>:<text>``) match on that key alone, whichever
    fold rule reported them on each side; such a unit carries the candidate's code
    when it occurs there (a discriminator a topic-only fold lost in the baseline and a
    silent fold in the candidate persists, as CA301, its ``baseline_code`` CA302)."""
    names = {f.code: f.rule for f in (*base.findings, *cand.findings)}

    def by_identity(units: dict[tuple[str, str], Occurrence]
                    ) -> dict[tuple[str, str], tuple[str, Occurrence]]:
        return {("", key) if key.startswith(("lost:", "held:")) else (code, key): (code, occ)
                for (code, key), occ in units.items()}

    b, c = by_identity(finding_units(base)), by_identity(finding_units(cand))
    out = []
    for ident in b.keys() | c.keys():
        status = ("persisting" if ident in b and ident in c
                  else "new" if ident in c else "resolved")
        code = (c.get(ident) or b[ident])[0]
        occ_b, occ_c = b.get(ident), c.get(ident)
        out.append(FindingDelta(code, names[code], ident[1], status,
                                occ_b[1] if occ_b else None, occ_c[1] if occ_c else None,
                                occ_b[0] if occ_b and occ_b[0] != code else None))

    rank = _lost_ranks(cand, base)

    def order(d: FindingDelta) -> tuple[str, bool, int, int, int, str]:
        occ = d.baseline or d.candidate
        assert occ is not None
        return (d.code, d.key.startswith("held:"), occ.first_round,
                *rank.get(d.key, (_NO_TIER, 0)), d.key)

    return sorted(out, key=order)


_NO_TIER = 99
"""Sorts a unit that is no lost fact (or one of no tier) after the ranked lost facts."""


def _lost_ranks(*reports: SessionReport) -> dict[str, tuple[int, int]]:
    """``lost:<kind>:<text>`` -> (tier, position in the report's ranked lost list),
    from the first of ``reports`` that lists it: units of what folds lost are ordered
    as the audit lists the facts, facts that matter first (usertest8: the diff showed
    ``buttonVariants``, ``flex-1``, ``gap-1`` before the assistant's decisions, in
    alphabetical order)."""
    out: dict[str, tuple[int, int]] = {}
    for r in reports:
        for k, d in enumerate(r.extra.get("lost_discriminators") or ()):
            if isinstance(d, dict):
                tier = d.get("tier")
                out.setdefault(f"lost:{d.get('kind')}:{d.get('text')}",
                               (tier if type(tier) is int else _NO_TIER, k))
    return out


def diff_reports(base: SessionReport, cand: SessionReport) -> RunDiff:
    """Compare ``cand`` with ``base`` (both audited with the same settings)."""
    cols = quantities(base, cand)
    run = set(base.rules_run) | set(cand.rules_run) or None  # None: a report without it
    return RunDiff(base, cand, compare_onsets(base.onsets, cand.onsets, run), cols,
                   align_series(base, cand, cols), compare_findings(base, cand))


def gate(diff: RunDiff, fail_if_onset_earlier: int | None,
         fail_on_new: str | None) -> list[str]:
    """The reasons the diff fails its gates; empty when it passes.

    ``fail_if_onset_earlier`` (rounds, >= 0): fail when the candidate's inversion onset
    is earlier than the baseline's by more than that many rounds, or appears where the
    baseline had none.  ``fail_on_new`` (error, warning or info): fail when a new
    finding unit is at or above that severity, or a persisting one reaches it from
    below (a warning in the baseline, an error now), and, at warning or info, when the
    candidate skipped records under ``--lenient`` (a warning, as in ``audit``: its
    findings are incomplete; adv19a F4).  Either gate set also fails when the
    candidate was checked less than the baseline (more compactions that could not be
    checked, or more lines not read: :func:`~compaction_audit.report.gaps.checked_less`):
    what it "resolves" or moves later may only be unread (adv29 F3).
    """
    reasons = []
    o = diff.onset("inversion_onset")
    if fail_if_onset_earlier is not None and o.candidate is not None:
        if o.baseline is None:
            reasons.append(f"inversion onset appeared at round {o.candidate} "
                           "(baseline had none)")
        elif o.baseline - o.candidate > fail_if_onset_earlier:
            reasons.append(f"inversion onset earlier by {o.baseline - o.candidate} round(s) "
                           f"(round {o.baseline} -> {o.candidate}; allowed "
                           f"{fail_if_onset_earlier})")
    if fail_on_new is not None:
        floor = Severity(fail_on_new).rank
        new = [f for f in diff.by_status("new") if f.severity.rank >= floor]
        if new:
            per_rule = Counter(f"{f.code} {f.rule}" for f in new)
            shown = ", ".join(f"{name} x{n}" for name, n in per_rule.items())
            reasons.append(f"{len(new)} new finding unit(s) at or above {fail_on_new}: {shown}")
        worse = [f for f in diff.by_status("persisting") if f.candidate and f.baseline
                 and f.candidate.severity.rank >= floor > f.baseline.severity.rank]
        if worse:  # usertest32 #2: a fact an accounted fold lost (a warning) now lost
            per_rule = Counter(f"{f.code} {f.rule}" for f in worse)  # silently (an error)
            shown = ", ".join(f"{name} x{n}" for name, n in per_rule.items())
            reasons.append(f"{len(worse)} persisting finding unit(s) now at or above "
                           f"{fail_on_new}, below it in the baseline: {shown}")
        cand = diff.candidate
        if (cand.skipped or cand.dependent) and floor <= Severity.WARNING.rank:
            reasons.append(f"the candidate's findings are incomplete: "
                           f"{cand.lenient_phrase()}")
    less = checked_less(diff.baseline, diff.candidate)
    if less and (fail_if_onset_earlier is not None or fail_on_new is not None):
        reasons.append("the candidate could not be checked as fully as the baseline: "
                       + ", ".join(less) + "; what it resolves may be unread, not fixed "
                       "(audit the candidate: its notes say why)")
    return reasons


ONSET_GATE, NEW_GATE = "fail_if_onset_earlier", "fail_on_new"


def failed_heading(reasons: list[str], gates: dict[str, Any]) -> str:
    """``Gates FAILED (--fail-on-new error; passed: --fail-if-onset-earlier 0):``, the
    heading over :func:`gate`'s ``reasons`` in every format: the gates they fail
    (:func:`failed_gates`), then those set that passed (usertest13: the heading named
    every gate set, one of which had passed)."""
    set_ = {k: v for k, v in gates.items() if v is not None}
    failed = failed_gates(reasons, set_)
    passed = [k for k in set_ if k not in failed]
    return (f"Gates FAILED ({gates_named(set_, failed)}"
            f"{'; passed: ' + gates_named(set_, passed) if passed else ''}):")


def gates_named(gates: dict[str, Any], keys: Iterable[str] | None = None) -> str:
    """``--fail-on-new error, --fail-if-onset-earlier 0``: the gates ``keys`` (all of
    ``gates`` when None) as their options and values."""
    return ", ".join(f"--{k.replace('_', '-')} {gates[k]}"
                     for k in (gates if keys is None else keys))


def gated_headline(diff: RunDiff, reasons: list[str], gates: dict[str, Any] | None) -> str:
    """The verdict of the text and HTML reports: :meth:`RunDiff.headline`, after "gate
    FAILED (--fail-on-new error): " and the head of each of :func:`gate`'s ``reasons``
    ("1 new finding unit(s) at or above error; ") when it gave some (usertest32 #3: a
    failed job's first and last lines read "inversion onset later", its reason 160
    lines down).  The JSON report keeps the headline and says the gates apart."""
    if not reasons:
        return diff.headline()
    set_ = {k: v for k, v in (gates or {}).items() if v is not None}
    failed = gates_named(set_, failed_gates(reasons, set_))
    why = "; ".join(r.split(":", 1)[0].split(" (", 1)[0] for r in reasons)  # usertest33 #4
    return f"gate FAILED{f' ({failed})' if failed else ''}: {why}; {diff.headline()}"


def failed_gates(reasons: list[str], gates: dict[str, Any]) -> list[str]:
    """The gates (keys of ``gates`` that are set) that :func:`gate`'s ``reasons`` fail:
    an onset reason fails the onset gate, a new-unit or incomplete-findings reason the
    new-finding gate, and a candidate checked less than the baseline every gate set."""
    set_ = [k for k, v in gates.items() if v is not None]
    failed: set[str] = set()
    for reason in reasons:
        if reason.startswith("inversion onset"):
            failed.add(ONSET_GATE)
        elif reason.startswith("the candidate could not be checked"):
            failed.update(set_)
        else:
            failed.add(NEW_GATE)
    return [k for k in set_ if k in failed]


def split_onsets(diff: RunDiff) -> tuple[list[OnsetDelta], list[str]]:
    """The onset rows to show, and the codes (names where a rule has none) of the rules
    that fired in neither run, which every format says in one line rather than as
    rows of "none none unchanged" (ux6 for the text report, ux7 for HTML)."""
    neither = [o for o in diff.onsets
               if o.kind == "rule" and o.baseline is None and o.candidate is None]
    codes = {cls.name: code for code, cls in RULES.items()}
    return ([o for o in diff.onsets if o not in neither],
            [codes.get(o.name) or o.name for o in neither])


def onset_label(o: OnsetDelta) -> str:
    """An onset row's name: ``inversion onset``, or ``first CA101 salience-inversion``
    (a rule's code where it is registered)."""
    if o.kind == "onset":
        return o.name.replace("_", " ")
    code = next((c for c, cls in RULES.items() if cls.name == o.name), None)
    return f"first {code} {o.name}" if code else f"first {o.name}"
