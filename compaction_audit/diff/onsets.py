"""Onset rows of a diff: the inversion onset, boundary, summary majority and every
rule's first round, side by side (spec rules.md, "Onsets")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compaction_audit.rules import RULES

if TYPE_CHECKING:
    from compaction_audit.diff.run import RunDiff

ONSET_KEYS = ("inversion_onset", "inversion_boundary", "summary_majority")
"""The session-level onsets, compared before the per-rule first rounds."""

VERDICTS = ("earlier", "later", "unchanged", "appeared", "disappeared")
"""Verdict words of one onset row (candidate compared with baseline)."""


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
