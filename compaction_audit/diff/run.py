"""The comparison of two runs (:class:`RunDiff`) and how it is built (:func:`diff_reports`)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from compaction_audit.conditions import can_invert
from compaction_audit.diff.findings import FindingDelta, compare_findings
from compaction_audit.diff.numbering import (
    candidate_end,
    debt_round,
    may_be_cut,
    reached,
    rounds_apart,
    starts_later,
)
from compaction_audit.diff.onsets import OnsetDelta, compare_onsets, describe
from compaction_audit.diff.series import align_series, quantities
from compaction_audit.report.gaps import (
    INVERSION_CODE,
    coverage_phrases,
    folds_judged_less,
    inversion_judged_less,
)
from compaction_audit.report.model import SessionReport
from compaction_audit.rules.base import Severity
from compaction_audit.rules.textless import TEXT_REASONS


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
        """Finding units with ``status`` (new, resolved, unreached or persisting)."""
        return [f for f in self.findings if f.status == status]

    @property
    def diverging_rounds(self) -> list[int]:
        """Round numbers at which a compared quantity differs or one run lacks the round."""
        return [int(r) for r in self.series.filter("diverges")["round"]]

    @property
    def changed(self) -> bool:
        """False when onsets, findings, series and the conditions of inversion are all
        the same: "no change"."""
        return (any(o.verdict != "unchanged" for o in self.onsets)
                or any(f.status != "persisting" for f in self.findings)
                or bool(self.diverging_rounds) or bool(self.conditions_changed()))

    def conditions_changed(self) -> list[tuple[str, str, str]]:
        """(condition, baseline status, candidate status) of each condition of inversion
        (:mod:`compaction_audit.conditions`) whose status differs between the runs, in
        the candidate's order; a condition one run lacks reads "unknown" there."""
        base = {c.name: c.status for c in self.baseline.conditions}
        cand = {c.name: c.status for c in self.candidate.conditions}
        names = [*cand, *(n for n in base if n not in cand)]
        return [(n, base.get(n, "unknown"), cand.get(n, "unknown")) for n in names
                if base.get(n, "unknown") != cand.get(n, "unknown")]

    def conditions_note(self) -> str:
        """``"; conditions of inversion differ: scorer does not penalize depth holds ->
        fails"``, "" when they do not: a candidate whose scorer now penalizes depth (it
        can drift, not invert) read "no change" (usertest43 #3)."""
        changed = self.conditions_changed()
        if not changed:
            return ""
        return "; conditions of inversion differ: " + ", ".join(
            f"{name} {b} -> {c}" for name, b, c in changed)

    def last_debt(self) -> tuple[int | None, int | None] | None:
        """``recall_debt`` at each run's last round (baseline, candidate), in
        discriminators nothing in the context can recover (seed 002); the baseline's at
        the candidate's last round where the candidate ends first
        (:func:`~compaction_audit.diff.numbering.debt_round`); a run's value is None
        when that round's debt is unknown (a compaction whose loss could not be checked:
        :func:`compaction_audit.recall.sections.debt_checked`); None when a run has no
        such column or no round, and when the candidate ends first but the runs' first
        rounds differ (:func:`~compaction_audit.diff.numbering.same_start`)."""
        ends: list[int | None] = []
        end = debt_round(self.baseline, self.candidate)
        if end is False:
            return None  # a round number is not the same point of both runs (adv144 F5)
        for r in (self.baseline, self.candidate):
            col = r.series.get_column("recall_debt", default=None)
            if col is None or col.len() == 0:
                return None
            if end is not None:  # the candidate's last (whole) round, in both runs
                col = col.filter(r.series["round"] == end)
                if col.len() == 0:  # a run has no such round: nothing to compare
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
        return (self._changes() + self.conditions_note() + self.judged_note()
                + (f"; {note}" if note else "") + self.coverage_note()
                + self.sessions_note() + self.signature_note() + self.numbering_note())

    def moved(self) -> str:
        """How the candidate's inversion moved, for the verdict's colour: ``"earlier"``
        when its onset or boundary came earlier or appeared; ``"later"`` when one moved
        later, or vanished from rounds the candidate has, neither came earlier, no
        finding is a new error or rose to one and the candidate judged salience-inversion
        at as many rounds (usertest53 #5: green over a new CA301 error; usertest54 #9: a
        candidate that ended before the baseline's boundary); where neither run has an
        onset or boundary, ``"later"`` when the candidate lost less
        (:meth:`_fewer_losses`); else ``"unchanged"``."""
        rows = [self.onset(k) for k in ("inversion_onset", "inversion_boundary")]
        if {o.verdict for o in rows} & {"earlier", "appeared"}:
            return "earlier"
        if self.rounds_apart() is not None:  # round numbers of neither run: no move
            return "unchanged"
        if all(o.baseline is None and o.candidate is None for o in rows):
            return "later" if self._fewer_losses() else "unchanged"
        better = any(o.verdict == "later" or (  # gone from rounds the candidate has
            o.verdict == "disappeared" and self.ends_before(o) is None) for o in rows)
        worse = any(self.worse_counts())  # new, or risen to error (usertest54 #10)
        unjudged = sum(n.rounds for n in self.candidate.not_evaluated
                       if n.code == INVERSION_CODE)  # every round: no onset looked for
        return "later" if better and not worse and unjudged < self.candidate.n_rounds \
            and not inversion_judged_less(self.candidate, self.baseline) else "unchanged"

    def _fewer_losses(self) -> bool:
        """Where neither run has an onset or boundary (two runs of an agent product,
        whose loops cannot invert), whether the candidate did better by its findings:
        none new, none risen to error, some resolved or the recall debt at the last
        round lower, and the candidate fully checked (usertest66 F5: a summary that
        kept the 20 facts its baseline lost read amber, and no such diff could be
        green)."""
        c = self.candidate
        if self.by_status("new") or any(self.worse_counts()) or (
                c.compactions_not_checked() or c.lines_not_read() or c.limits
                or c.parents_missing()):
            return False
        debt = self.last_debt()
        before, after = debt if debt is not None else (None, None)
        fell = before is not None and after is not None and after < before
        return bool(self.by_status("resolved")) or fell

    def ends_before(self, o: OnsetDelta) -> int | None:
        """The candidate's last round when onset ``o`` disappeared from it only because
        it ends before the baseline's round could be seen there: that round plus the
        rounds its condition must hold, less one (``sustain_onset`` for the inversion
        onset, ``sustain`` for the boundary and the rules); else None (usertest54 #9,
        usertest55 #10: a candidate that is the baseline's first rounds)."""
        if o.verdict != "disappeared" or o.baseline is None:
            return None
        last = self.candidate.series["round"].max()
        hold = (self.candidate.settings.sustain_onset if o.name == "inversion_onset"
                else self.candidate.settings.sustain)
        if isinstance(last, int) and last >= o.baseline + hold - 1:
            return None
        return last if isinstance(last, int) else -1

    def verdict_shown(self, o: OnsetDelta) -> str:
        """The verdict of onset row ``o`` as the reports' tables show it: "not reached
        (the candidate ends at round 1)" where it disappeared only because the candidate
        ends first (:meth:`ends_before`; usertest76 F8: "disappeared", in green, for a
        CA301 at a round the candidate never had); "not reached (the candidate starts
        at round 2)" where one run's round is at or before the first of a run that
        starts later (adv146 F6: "later +2" for every rule); "appeared (at the
        candidate's last round, which may be cut short)" where it appeared only there
        (a product's log cut after its summary: adv145 F5); else ``o.verdict``."""
        ends = self._ends(o)
        if ends:
            return f"not reached{ends}"
        for run, first, onset in (  # a round the other run never ran (adv146 F6)
                ("the candidate", starts_later(self.baseline, self.candidate), o.baseline),
                ("the baseline", starts_later(self.candidate, self.baseline), o.candidate)):
            if first is not None and onset is not None and onset <= first:
                return f"not reached ({run} starts at round {first})"
        done = reached(self.baseline, self.candidate)
        if (o.verdict == "appeared" and done is not None and o.candidate is not None
                and o.candidate > done):
            return "appeared (at the candidate's last round, which may be cut short)"
        return o.verdict

    def _ends(self, o: OnsetDelta) -> str:
        """``" (the candidate ends at round 12)"`` where :meth:`ends_before` says so."""
        last = self.ends_before(o)
        if last is None:
            return ""
        return " (the candidate has no rounds)" if last < 0 else \
            f" (the candidate ends at round {last})"

    def rounds_apart(self) -> str | None:
        """:func:`~compaction_audit.diff.numbering.rounds_apart` of the two runs."""
        return rounds_apart(self.baseline, self.candidate)

    def numbering_note(self) -> str:
        """``"; the runs number their rounds apart (...): onsets compared by round
        number"`` where :meth:`rounds_apart` says so, else ""."""
        apart = self.rounds_apart()
        return "" if apart is None else (f"; the runs number their rounds apart ({apart}): "
                                         "onsets compared by round number")

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
        finding(s) may be unread, not fixed"``, and a run whose salience-inversion could not
        judge a larger share of its rounds than the other's
        (:func:`~compaction_audit.report.gaps.inversion_judged_less`), or that it judged
        neither (both "not applicable": no salience); "" when both were fully checked.  A
        candidate that stopped reading its compaction showed as 210 findings resolved,
        with no word (adv29 F3).  When the candidate's only gaps are rounds rules could
        not judge (salience-inversion's; the fold rules' for want of a summary text,
        :func:`~compaction_audit.report.gaps.folds_judged_less`), the count is of the
        resolved units of the rules that judged less alone (:func:`_judged_less_rules`)."""
        parts = []
        resolved = self.by_status("resolved")
        for label, r, other in (("baseline", self.baseline, self.candidate),
                                ("candidate", self.candidate, self.baseline)):
            inverted = inversion_judged_less(r, other)  # usertest49 #4: said with gates
            folded = folds_judged_less(r, other)  # only
            covered = _covered(r)
            said = [*covered, *(x for x in (inverted, folded) if x)]
            if said:
                parts.append(f"{label} not fully checked: {', '.join(said)}")
            if label == "candidate" and said and not covered:  # only rounds a rule could
                # not judge: the units of the rules that judged less (usertest73 #2:
                # CA301's facts "may be unread" for one round CA101 did not judge)
                resolved = [f for f in resolved
                            if f.code in _judged_less_rules(r, other, bool(inverted),
                                                            bool(folded))]
        if resolved and parts and parts[-1].startswith("candidate"):
            parts[-1] += (f", so its {len(resolved)} resolved finding(s) may be unread, "
                          "not fixed")
        elif resolved and self.candidate.skipped:  # what docs/diff.md promises (adv144 F2)
            parts.append(f"candidate: its {len(resolved)} resolved finding(s) may be in "
                         "the records it skipped, not fixed")
        neither = [r.unjudged_rules().get(INVERSION_CODE) for r in (self.baseline,
                                                                       self.candidate)]
        if all(neither):  # usertest50 #3: two runs without salience said "no change"
            parts.append(f"{INVERSION_CODE} salience-inversion judged neither run "
                         f"({neither[1]})")
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
        # two loops neither of which can invert (an agent product's compactions, seed
        # 000's conditions): what they lost leads, the onset closes (usertest62 B4:
        # "inversion onset unchanged: none -> none" led the diff of two Codex runs)
        neither = not any(can_invert(r.conditions) for r in (self.baseline, self.candidate))
        quiet = o.baseline is None and o.candidate is None and neither
        parts = [] if quiet else [f"inversion onset {o.verdict}: {describe(o)}{self._ends(o)}"]
        b = self.onset("inversion_boundary")
        if b.verdict != "unchanged":  # where CA101 fires (usertest53 #5: "onset
            parts.append(f"inversion boundary {b.verdict}: {describe(b)}"  # unchanged" led
                         f"{self._ends(b)}")  # a verdict whose boundary came 2 earlier)
        said_drift = bool(parts) and neither
        if said_drift:  # read as drift, as each run's audit says (adv120 #7)
            parts[0] = ("neither loop can invert (a condition of inversion fails), its "
                        "rounds read as drift: " + parts[0])
        elif parts and (one := self._drift_side()):  # one run's rounds (adv121 #5)
            parts[0] = (f"the {one} cannot invert (a condition of inversion fails), its "
                        "rounds read as drift: " + parts[0])
        counts = {s: len(self.by_status(s)) for s in ("new", "resolved", "unreached",
                                                      "persisting")}
        end = candidate_end(self.baseline, self.candidate)
        start = starts_later(self.baseline, self.candidate)
        said = any("(the candidate ends at round" in p for p in parts)  # by an onset
        cut = end is not None and may_be_cut(self.candidate)  # adv144 F4
        firsts = [f.baseline.first_round for f in self.by_status("unreached") if f.baseline]
        early = start is not None and any(r <= start for r in firsts)
        bounds = [f"starts at round {start}"] if early else []  # the bounds that apply
        if end is not None and (early or not said) and any(
                start is None or r > start for r in firsts):
            bounds.append(f"ends at round {end}")
        said_bounds = [f"the candidate {' and '.join(bounds)}"] if bounds else []
        base_start = starts_later(self.candidate, self.baseline)
        if base_start is not None and any(
                f.baseline is None and f.candidate is not None
                and f.candidate.first_round <= base_start
                for f in self.by_status("unreached")):  # (adv146 F6)
            said_bounds.append(f"the baseline starts at round {base_start}")
        words = {"unreached": "not reached" + (
            f" ({'; '.join(said_bounds)})" if said_bounds else "")}
        # units, not findings: a fold finding is one unit per fact it lost (docs/diff.md)
        parts.append(", ".join(f"{n} {words.get(s, s)}" for s, n in counts.items()
                               if n or s != "unreached")
                     + " finding unit(s)" + self._worse())
        if cut:  # a product's round runs to the person's next turn: what the candidate
            # found at its last round alone may be the cut's (adv144 F4); what follows
            # from it said only where it holds (adv145 F8)
            whose = (["the baseline's units first found from it on"] if end is not None
                     and any(r >= end for r in firsts) else []) + (
                ["the units only the candidate found there"] if any(
                    f.baseline is None for f in self.by_status("unreached")) else [])
            said_whose = ", and ".join(whose) + ("," if len(whose) > 1 else "")
            parts.append(f"the candidate's last round, {end}, may be cut short (a "
                         "product's round runs to the person's next turn)"
                         + (f": {said_whose} count as not reached" if whose else ""))
        debt, debt_at = self.last_debt(), debt_round(self.baseline, self.candidate)
        at = ("the last round" if debt_at is None or debt_at is False
              else f"round {debt_at} (the candidate's last"
              + (" whole round)" if cut else ")"))
        if debt is not None and debt[0] != debt[1]:
            # what a loop that cannot invert still loses (a product's compactions); what
            # it counts said, since the audit's "lost N facts" counts facts read again
            # too (usertest46 #5: "recall debt 0 -> 143" beside "lost 215 fact(s)")
            if debt[0] is None or debt[1] is None:
                parts.append(f"{_DEBT} at {at} "
                             + " -> ".join("unknown" if d is None else f"{d:,}" for d in debt)
                             + " (a compaction whose loss could not be checked)")
            else:
                parts.append(f"{_DEBT} at {at} {debt[0]:,} -> {debt[1]:,} "
                             f"({debt[1] - debt[0]:+,})")
        if self.diverging_rounds:
            parts.append(f"series differ at {len(self.diverging_rounds)} round(s)")
        if quiet:
            parts.append("no inversion onset in either run" + (
                "" if said_drift else " (neither loop can invert: a condition of inversion "
                "fails)"))
        return "; ".join(parts)

    def _drift_side(self) -> str | None:
        """``"baseline"`` or ``"candidate"``: the one run that cannot invert while the
        other can, when it reached an inversion onset or boundary (its audit reads them
        as drift); None otherwise."""
        for name, run, other in (("baseline", self.baseline, self.candidate),
                                 ("candidate", self.candidate, self.baseline)):
            if run.drift_only() and can_invert(other.conditions):
                return name
        return None

    def worse_units(self, floor: Severity) -> tuple[list[FindingDelta], list[FindingDelta]]:
        """(new units at ``floor`` or above, persisting units below it in the baseline
        and at it or above now): what ``--fail-on-new`` fails on and the verdict counts
        at error."""
        top = floor.rank
        new = [f for f in self.by_status("new") if f.severity.rank >= top]
        rose = [f for f in self.by_status("persisting") if f.candidate and f.baseline
                and f.candidate.severity.rank >= top > f.baseline.severity.rank]
        return new, rose

    def worse_counts(self) -> tuple[int, int]:
        """(new units at error, persisting units below error in the baseline and at
        error now: :meth:`worse_units`): what makes a diff worse whatever its onsets
        did."""
        new, rose = self.worse_units(Severity.ERROR)
        return len(new), len(rose)

    def _worse(self) -> str:
        """`` (1 new error(s), 20 rose to error)`` (:meth:`worse_counts`), said with or
        without a gate ("" when none): the colour of an ungated diff said it got worse
        and no word did (usertest63 #3: 20 warnings now errors sat under "Persisting")."""
        new, rose = self.worse_counts()
        said = [*([f"{new} new error(s)"] if new else []),
                *([f"{rose} rose to error"] if rose else [])]
        return f" ({', '.join(said)})" if said else ""


_DEBT = "recall debt (facts seen that no resolvable span or retained summary holds)"
"""How the headline names ``recall_debt`` (docs/discriminators.md, "The recall debt
series is a state")."""


def _judged_less_rules(r: SessionReport, other: SessionReport, inverted: bool,
                       folded: bool) -> set[str]:
    """The codes of the rules that judged ``r`` less than ``other``: salience-inversion
    when ``inverted``, the rules that skipped folds for want of text when ``folded``
    (:mod:`compaction_audit.rules.textless`), and those that judged ``other`` and not
    ``r`` (:meth:`~compaction_audit.report.model.SessionReport.unjudged_rules`)."""
    return ({INVERSION_CODE} if inverted else set()) | (
        {n.code for n in r.not_evaluated if n.reason in TEXT_REASONS}
        if folded else set()) | (set(r.unjudged_rules()) - set(other.unjudged_rules()))


def _covered(r: SessionReport) -> list[str]:
    """:func:`~compaction_audit.report.gaps.coverage_phrases` of ``r`` and its checks
    that stopped at their cap ("1 check stopped at its limit": usertest28 #1, a
    candidate whose carried-claim walk stopped read as fully compared)."""
    stopped = len(r.limits)
    said = ("1 check stopped at its limit" if stopped == 1
            else f"{stopped} checks stopped at their limits")
    return [*coverage_phrases(r), *([said] if stopped else [])]


def diff_reports(base: SessionReport, cand: SessionReport) -> RunDiff:
    """Compare ``cand`` with ``base`` (both audited with the same settings)."""
    cols = quantities(base, cand)
    run = set(base.rules_run) | set(cand.rules_run) or None  # None: a report without it
    return RunDiff(base, cand, compare_onsets(base.onsets, cand.onsets, run), cols,
                   align_series(base, cand, cols), compare_findings(base, cand))
