"""The diff's gates (``--fail-if-onset-earlier``, ``--fail-on-new``) and the headings
that name them in every format."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from compaction_audit.diff.run import RunDiff
from compaction_audit.report.gaps import checked_less
from compaction_audit.rules import Severity


def gate(diff: RunDiff, fail_if_onset_earlier: int | None,
         fail_on_new: str | None) -> list[str]:
    """The reasons the diff fails its gates; empty when it passes.

    ``fail_if_onset_earlier`` (rounds, >= 0): fail when the candidate's inversion onset
    is earlier than the baseline's by more than that many rounds, or appears where the
    baseline had none (the onsets as recorded, as spec rules.md, "Onsets", has diff
    compare them, whether or not a condition of inversion fails: the verdict says which
    run's rounds read as drift; runs that number their rounds apart are compared so
    too, and the verdict says so: :meth:`~compaction_audit.diff.run.RunDiff.
    rounds_apart`).  ``fail_on_new`` (error,
    warning or info): fail when a new finding unit is at or above that severity, or a
    persisting one reaches it from below (a warning in the baseline, an error now),
    and, at warning or info, when the
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
        new, worse = diff.worse_units(Severity(fail_on_new))
        if new:
            per_rule = Counter(f"{f.code} {f.rule}" for f in new)
            shown = ", ".join(f"{name} x{n}" for name, n in per_rule.items())
            reasons.append(f"{len(new)} new finding unit(s) at or above {fail_on_new}: {shown}")
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
