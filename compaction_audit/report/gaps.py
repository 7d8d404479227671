"""What the audit of a trace could not cover, said the same way in every format a CI
gate reads (issue 11, class 2: a failing trace never passes silently; adv29 F2).

Three kinds, each a :class:`Gap` per entry:

- compactions that could not be checked (:meth:`SessionReport.unchecked
  <compaction_audit.report.model.SessionReport.unchecked>`: an opaque or redacted
  summary at its compaction's line, compaction files left unread beside the trace);
- lines an adapter did not read (``lines_not_read`` of the session record, e.g. a
  Claude Code line of a type the reader does not know, or one marked
  ``isVisibleInTranscriptOnly``): one entry at the trace, no line, explained by the
  reader notes that end in ``not read``;
- lines that may be missing (``parents_missing`` of the session record: Claude Code
  lines naming a parent line the file does not hold, as a deleted compaction leaves,
  usertest76 F5): one entry at the first such line.

The ``github`` format writes each as a ``::notice`` (its :attr:`Gap.title`), SARIF as
a ``note`` notification, JUnit as a skipped case per kind (:func:`gap_cases`; both a
failure, and a ``warning``, when ``--fail-on`` reaches a warning, as the gate counts
them); the gate
line (:func:`gate_phrases`), the summary table's verdict (:func:`row_note`) and
``diff`` (:func:`coverage_phrases`, :func:`checked_less`) count them.  Text here is
log text (the reader notes name types as written): every format makes it printable
and escapes it as its other messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from compaction_audit.report.model import SessionReport, fails, reader_notes
from compaction_audit.rules.base import Severity
from compaction_audit.rules.boundary import BARE_COMPACTION, WINDOW_REASON, SalienceInversion
from compaction_audit.rules.faithfulness import NegationFlipped
from compaction_audit.rules.recall import SilentDiscriminatingFold, TopicOnlyFold
from compaction_audit.rules.textless import TEXT_REASONS

INVERSION_CODE = SalienceInversion.code
"""The rule whose rounds judged the inversion onset rests on (``diff``'s onset gate)."""

FOLD_RULES = tuple((r.code, r.name) for r in (SilentDiscriminatingFold, TopicOnlyFold,
                                               NegationFlipped))
"""The fold rules whose rounds not judged for want of text ``diff`` compares
(:func:`folds_judged_less`), in order: the first that ran and judged less is named
(adv143 F2: with silent-discriminating-fold deselected, topic-only-fold's gap passed)."""

COMPACTIONS = ("compaction not checked", "compactions checked")
"""The ``github`` title and the JUnit case of a compaction that could not be checked."""
LINES = ("lines not read", "lines read")
"""The ``github`` title and the JUnit case of lines an adapter did not read."""
MISSING = ("lines may be missing", "lines present")
"""The ``github`` title and the JUnit case of lines naming a parent not in the file."""
LIMITS = "checks completed"
"""The JUnit case of the checks that stopped at their cap (the other formats name each
:class:`~compaction_audit.limits.Limit` in their own way: a ``::warning``, a SARIF
warning notification, a Markdown "Limit:" line)."""
NOTES_SHOWN = 5
"""Reader notes a lines-not-read message names; it counts the rest."""
_NOT_READ = ": not read"
"""How the Claude Code and Codex readers end a note about lines they did not read
(:mod:`compaction_audit.io.claude_code`, :mod:`compaction_audit.io.codex`)."""


@dataclass(frozen=True)
class Gap:
    """One thing the audit could not cover: ``title`` (the ``github`` title), ``case``
    (the JUnit case), ``message`` (log text), and where: ``line_file`` (None: the
    trace) and ``line`` (0: no line)."""

    title: str
    case: str
    message: str
    line_file: str | None = None
    line: int = 0


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def not_read_message(s: SessionReport) -> str:
    """The lines ``s``'s adapter did not read, in words ("" for none), e.g. ``2 lines
    not read, so not checked: 1 line of a type this reader does not know ('system2');
    1 line of a type this reader does not know ('user2')``: the count, then the first
    :data:`NOTES_SHOWN` reader notes about them (their ``: not read`` left off)."""
    n = s.lines_not_read()
    if not n:
        return ""
    notes = [note.removesuffix(_NOT_READ) for note in reader_notes(s)
             if note.endswith(_NOT_READ)]
    said = "; ".join(notes[:NOTES_SHOWN])
    if len(notes) > NOTES_SHOWN:
        said += f"; and {_n(len(notes) - NOTES_SHOWN, 'more reason')} (see the notes)"
    return f"{_n(n, 'line')} not read, so not checked" + (
        f": {said}" if said else " (see the notes of the text or JSON report)")


def gaps_fail(fail_on: str) -> bool:
    """Whether ``fail_on`` counts a gap against the gate: a trace not fully checked
    counts as a warning (:meth:`~compaction_audit.report.model.SessionReport.fails`),
    so ``warning`` and ``info`` fail it.  The formats a gate reads mark a gap as a
    failure then (JUnit), a warning (``github``, SARIF), else as a note."""
    return fails(Severity.WARNING, fail_on)


def gaps(s: SessionReport) -> list[Gap]:
    """Every :class:`Gap` of ``s``: its compactions that could not be checked, in the
    order :meth:`~compaction_audit.report.model.SessionReport.unchecked` gives them,
    then its lines not read (one entry), then its lines that may be missing (one
    entry, at the first line naming a parent not in the file)."""
    out = [Gap(*COMPACTIONS, message, line_file, line)
           for message, line_file, line in s.unchecked()]
    said = not_read_message(s)
    if said:
        out.append(Gap(*LINES, said))
    missing = s.missing_phrase()
    if missing:
        first = s.header.extra.get("parents_missing_line")
        out.append(Gap(*MISSING, f"{missing}, a compaction's perhaps, and were not "
                       "checked (see the notes)", None,
                       first if type(first) is int and first > 0 else 0))
    return out


def gap_cases(s: SessionReport) -> list[tuple[str, str, list[Gap]]]:
    """The JUnit cases of ``s``'s gaps, as ``(case name, skipped message, gaps)``: one
    per kind present, e.g. ``("lines read", "2 lines not read", [...])``; the checks
    that stopped at their cap as a third, ``checks completed`` (they count for the
    gate as the others do: adv103 #1)."""
    found = gaps(s)
    counted = ((COMPACTIONS[1], _n(s.compactions_not_checked(), "compaction")
                + " could not be checked"),
               (LINES[1], _n(s.lines_not_read(), "line") + " not read"),
               (MISSING[1], _n(s.parents_missing(), "line") + " naming a parent not "
                "in the file"))
    out = [(case, said, mine) for case, said in counted
           if (mine := [g for g in found if g.case == case])]
    if s.limits:
        out.append((LIMITS, _n(len(s.limits), "check") + " stopped at a limit",
                    [Gap("check stopped at its limit", LIMITS, x.message(), None,
                         x.line or 0) for x in s.limits]))
    return out


def coverage_phrases(s: SessionReport) -> list[str]:
    """What ``s``'s audit could not cover, counted: ``["1 compaction could not be
    checked", "2 lines not read", "1 line naming a parent not in the file"]``, a
    phrase only for a count above zero."""
    return total_phrases([s])


def _totals(sessions: Iterable[SessionReport]) -> tuple[int, int, int]:
    """Compactions that could not be checked, lines not read and lines naming a
    parent not in the file, over ``sessions``."""
    unchecked = not_read = missing = 0
    for s in sessions:
        unchecked += s.compactions_not_checked()
        not_read += s.lines_not_read()
        missing += s.parents_missing()
    return unchecked, not_read, missing


def total_phrases(sessions: Iterable[SessionReport]) -> list[str]:
    """:func:`coverage_phrases` summed over ``sessions`` (the Markdown heading)."""
    unchecked, not_read, missing = _totals(sessions)
    return ([f"{_n(unchecked, 'compaction')} could not be checked"] if unchecked else []) + (
        [f"{_n(not_read, 'line')} not read"] if not_read else []) + (
        [f"{_n(missing, 'line')} naming a parent not in the file"] if missing else [])


def row_note(s: SessionReport) -> str:
    """What the summary table adds to a trace's verdict, e.g. ``(1 compaction could
    not be checked; 2 lines not read)`` (:func:`coverage_phrases`); "" when it covered
    everything (issue 10, point 8; adv29 F2)."""
    said = coverage_phrases(s)
    return f"({'; '.join(said)})" if said else ""


def gate_phrases(sessions: Iterable[SessionReport]) -> list[str]:
    """The gate line's counts of what could not be covered across ``sessions``:
    ``["1 compaction(s) could not be checked", "2 line(s) not read", "1 line(s)
    naming a parent not in the file"]``, a phrase only for a count above zero."""
    unchecked, not_read, missing = _totals(sessions)
    return ([f"{unchecked} compaction(s) could not be checked"] if unchecked else []) + (
        [f"{not_read} line(s) not read"] if not_read else []) + (
        [f"{missing} line(s) naming a parent not in the file"] if missing else [])


def checked_less(baseline: SessionReport, candidate: SessionReport) -> list[str]:
    """How ``candidate`` was checked less than ``baseline``, for ``diff``'s gates: e.g.
    ``["4 lines not read (the baseline: 0)"]`` when it has more compactions that could
    not be checked, more lines not read or more checks stopped at their cap
    (:class:`~compaction_audit.limits.Limit`); empty when it was checked as fully (adv29
    F3: a candidate that stopped reading its compaction "resolved" 210 findings and
    passed ``--fail-on-new error``)."""
    out = []
    for what, verb, count in (
            ("compaction", "could not be checked", SessionReport.compactions_not_checked),
            ("line", "not read", SessionReport.lines_not_read),
            ("line", "naming a parent not in the file", SessionReport.parents_missing)):
        base, cand = count(baseline), count(candidate)
        if cand > base:
            out.append(f"{_n(cand, what)} {verb} (the baseline: {base:,})")
    less = inversion_judged_less(candidate, baseline)
    if less:  # a larger share (usertest38 #1: an onset gone)
        base, base_n = _inversion_unjudged(baseline)
        out.append(f"{less} (the baseline: {base:,} of {base_n:,})")
    code = _fold_rule_less(candidate, baseline)
    if code:  # no summary text to compare with
        base, base_n = _fold_text_unjudged(baseline, code)
        out.append(f"{_fold_less_phrase(candidate, baseline, code)} (the baseline: "
                   + (f"{base:,} of {base_n:,})" if base else "none)"))
    base_stops, cand_stops = len(baseline.limits), len(candidate.limits)
    if cand_stops > base_stops:  # a check stopped at its cap judged less (usertest28 #1)
        out.append(f"{_n(cand_stops, 'check')} stopped at a limit (the baseline: "
                   f"{base_stops:,})")
    if not out:  # as many lines not read, but for another reason (adv31 N8)
        new = sorted(_reasons(candidate) - _reasons(baseline))
        if new:
            out.append(f"lines not read for a reason the baseline has not: {new[0]}"
                       + (f" and {_n(len(new) - 1, 'more')}" if len(new) > 1 else ""))
    return out


def inversion_judged_less(s: SessionReport, other: SessionReport) -> str:
    """``"CA101 salience-inversion not judged at 12 of 13 rounds"`` when salience-inversion
    could not judge a larger share of ``s``'s rounds than of ``other``'s (the rounds
    before its first comparison aside: :func:`_inversion_unjudged`), else "": an onset
    that "disappeared" from a run that records no salience was never looked for there
    (usertest38 #1, usertest49 #4)."""
    return _judged_less(_inversion_unjudged(s), _inversion_unjudged(other),
                        f"{INVERSION_CODE} salience-inversion")


def folds_judged_less(s: SessionReport, other: SessionReport) -> str:
    """``"CA301 silent-discriminating-fold not judged at 40 of 40 rounds with a fold"``
    when a fold rule (:data:`FOLD_RULES`, the first that judged less) could not compare
    the folds of a larger share of ``s``'s rounds with a fold than of ``other``'s for
    want of text (:mod:`compaction_audit.rules.textless`), else "": the losses of a run
    whose logger stopped writing summary texts "resolved" (usertest73, the developer's
    check of its #2).  A share of the rounds with a fold, not of every round: a run that
    folds more often is not checked less for it (adv143 F3), and one whose only fold
    has no text is (F4)."""
    code = _fold_rule_less(s, other)
    return "" if code is None else _fold_less_phrase(s, other, code)


def _fold_less_phrase(s: SessionReport, other: SessionReport, code: str) -> str:
    """:func:`folds_judged_less`'s words for fold rule ``code``, found to judge less."""
    return _judged_less(_fold_text_unjudged(s, code), _fold_text_unjudged(other, code),
                        f"{code} {dict(FOLD_RULES)[code]}", " with a fold")


def _fold_rule_less(s: SessionReport, other: SessionReport) -> str | None:
    """The code of the first of :data:`FOLD_RULES` both runs ran that could not judge a
    larger share of ``s``'s rounds with a fold than of ``other``'s, else None."""
    for code, _ in FOLD_RULES:
        if code in s.rules_run and code in other.rules_run and _judged_less(
                _fold_text_unjudged(s, code), _fold_text_unjudged(other, code), code):
            return code
    return None


def _judged_less(mine: tuple[int, int], theirs: tuple[int, int], rule: str,
                 which: str = "") -> str:
    """``"<rule> not judged at 12 of 13 rounds<which>"`` when ``mine`` (rounds not
    judged, of how many) is a larger share than ``theirs``, else ""."""
    (mine_k, mine_n), (theirs_k, theirs_n) = mine, theirs
    if mine_k * max(theirs_n, 1) <= theirs_k * max(mine_n, 1):
        return ""
    return f"{rule} not judged at {mine_k:,} of {_n(mine_n, 'round')}{which}"


def _fold_text_unjudged(s: SessionReport, code: str) -> tuple[int, int]:
    """(rounds, of how many rounds with a fold): the rounds of ``s`` whose folds the fold
    rule ``code`` could not compare for want of text (the rounds with a fold are known
    where it noted some: ``NotEvaluated.of``; (0, every round) where it noted none)."""
    notes = [n for n in s.not_evaluated if n.code == code and n.reason in TEXT_REASONS]
    of = max((n.of for n in notes if n.of is not None), default=s.n_rounds)
    return min(sum(n.rounds for n in notes), of), of


def _inversion_unjudged(s: SessionReport) -> tuple[int, int]:
    """(rounds, of how many): the rounds of ``s`` the inversion rule could not judge for
    want of what it reads (salience, tokens), the rounds it leaves out by construction
    aside: those before its first comparison (every trace has them) and a product's
    compaction rounds with no work after the compaction
    (:data:`~compaction_audit.rules.boundary.BARE_COMPACTION`: usertest73 #1, a Claude
    Code trace that ended at its compaction was "checked less" than the whole run, and
    failed ``diff --fail-on-new``)."""
    return _unjudged(s, INVERSION_CODE, lambda reason: not reason.startswith(WINDOW_REASON)
                     and reason != BARE_COMPACTION)


def _unjudged(s: SessionReport, code: str, counted: Callable[[str], bool]
              ) -> tuple[int, int]:
    """(rounds, of how many): the rounds of ``s`` rule ``code`` did not evaluate for a
    reason ``counted`` takes, at most every round."""
    rounds = sum(n.rounds for n in s.not_evaluated if n.code == code and counted(n.reason))
    return min(rounds, s.n_rounds), s.n_rounds


def _reasons(s: SessionReport) -> set[str]:
    """Why ``s``'s adapter did not read lines, each reader note about them without its
    count (``of a type this reader does not know ('system2')``)."""
    return {note.removesuffix(_NOT_READ).split(" ", 2)[-1] for note in reader_notes(s)
            if note.endswith(_NOT_READ) and note[:1].isdigit()}
