"""Finding units: one run's findings grouped by an identity that holds across runs
(what a fold lost, what a summary states, an entity, an episode by ordinal)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from compaction_audit.recall.kinds import KIND_RANK, Kind
from compaction_audit.recall.ranking import LOW_TIERS
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import Finding, Severity
from compaction_audit.rules.recall import is_person_fact, loss_severity


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

    Episodes are keyed by ordinal; :func:`~compaction_audit.diff.findings.
    compare_findings` matches them by their rounds first, then in round order, so an
    episode that moved (the same inversion, a few rounds later) persists rather than
    counting as one new and one resolved; the move shows in the onset rows.  A run
    diffed with itself gives only persisting units.
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
    tiers = lost_by_fold.tiers
    lowers = not any(x.check == "asked-again" for x in getattr(r, "limits", None) or ())
    declared = {lost_by_fold.ranked[i] for i in r.extra.get("declared_lost") or ()
                if type(i) is int and 0 <= i < len(lost_by_fold.ranked)}
    for key, fs in by_lost.items():
        worst = min(fs, key=lambda f: (-f.severity.rank, f.code))
        # where the unit's code fired: its rounds, first line and message (usertest23
        # #4: the rounds and line of every fold rule beside one rule's message)
        occ = _occurrence([f for f in fs if f.code == worst.code])
        units[(worst.code, key)] = (_own_weight(occ, worst, tiers.get(key), key)
                                    if lowers and key not in declared else occ)
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


def _own_weight(occ: Occurrence, worst: Finding, fact: tuple[str, Any] | None,
                key: str = "") -> Occurrence:
    """``occ``, a fact's unit, at no more than the severity the fold rules give a fold
    that lost that fact alone (:func:`compaction_audit.rules.recall.loss_severity`): an
    error from a version pin up or for a person's fact (:func:`~compaction_audit.rules.
    recall.is_person_fact`), else a warning; for
    a fact of a low tier (:data:`~compaction_audit.recall.ranking.LOW_TIERS`: other
    prose, tool output, finished work) at most a warning, and info below a version pin.
    A fold's severity is its worst fact's, and each of its units carried it, so a diff
    of two Claude Code sessions counted every lost grep result as a new error and
    ``--fail-on-new error`` failed on them (usertest66 F4), where the audit lists them
    under "not listed". As unchanged as the audit leaves a fold: where its rule's
    severity is configured (the finding has no ``low_tier``), or a low tier did not
    lower it (a fold that declared its losses; the asked-again check capped; a fact the
    agent tagged "discriminating", ``declared_lost``: the caller weighs it as the fold,
    adv127 #2)."""
    if fact is None:
        return occ
    kind, tier = fact
    v = worst.values
    if "low_tier" not in v or (v.get("best_tier") in LOW_TIERS and not v.get("low_tier")):
        return occ
    try:
        rank = KIND_RANK[Kind(kind)]
    except ValueError:
        return occ
    return replace(occ, severity=Severity(loss_severity(rank, tier in LOW_TIERS,
                                                        occ.severity,
                                                        is_person_fact(
                                                            tier, kind,
                                                            key.split(":", 2)[-1]))))


class FoldLosses(dict[str, list[str]]):
    """``lost:<kind>:<text>`` of each fact a fold lost, by the fold's id
    (:func:`fold_lost_units`); ``ranked``: the unit of each fact of the session's
    ranked lost list, in its order (a fold finding's dropped facts point into it by
    their ``pos``); ``tiers``: unit -> (kind, tier) of each fact of that list."""

    def __init__(self) -> None:
        super().__init__()
        self.ranked: list[str] = []
        self.tiers: dict[str, tuple[str, Any]] = {}


def fold_lost_units(r: SessionReport) -> FoldLosses:
    """``lost:<kind>:<text>`` of each fact a fold lost, by the fold's id, from the
    session's whole lost list (``extra["lost_discriminators"]``: facts no span or
    summary in context still holds, uncapped; each fact once, at the fold that lost it
    first)."""
    out = FoldLosses()
    for d in r.extra.get("lost_discriminators") or ():
        unit = f"lost:{d.get('kind')}:{d.get('text')}" if isinstance(d, dict) else ""
        out.ranked.append(unit)
        if isinstance(d, dict):
            out.tiers.setdefault(unit, (str(d.get("kind")), d.get("tier")))
        if isinstance(d, dict) and d.get("cause") == "fold" and d.get("fold") is not None:
            out.setdefault(str(d["fold"]), []).append(unit)
    return out


def _dropped(f: Finding) -> Iterator[dict[str, Any]]:
    """Each fact (an object with a ``kind``) a fold finding lists as dropped by one of
    its ``values["children"]``, held or lost, in order; none for any other finding."""
    children = f.values.get("children")
    for c in children if isinstance(children, list) else ():
        for d in (c.get("dropped") or ()) if isinstance(c, dict) else ():
            if isinstance(d, dict) and "kind" in d:
                yield d


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
    for d in _dropped(f):
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


def dropped_units(r: SessionReport) -> dict[str, tuple[str, Occurrence]]:
    """``held:<kind>:<text>`` of every fact a fold finding of ``r`` lists as dropped by
    a child (``values["children"][].dropped``, held or lost), with the code of the most
    severe finding that dropped it and that code's occurrence: what
    :func:`~compaction_audit.diff.findings.compare_findings` matches a candidate's
    ``held:`` unit with when the baseline dropped the same fact in a fold keyed by
    other facts (one that lost some: usertest43 #2, ``held:identifier:faiss-cpu``).  The
    occurrence's severity is the fold's, which is its other facts': the caller weighs
    it against the other run's unit.  A finding's children are capped in its values
    (50), so a fact dropped past the cap is not found here."""
    by_key: dict[str, list[Finding]] = {}
    for f in r.findings:
        for d in _dropped(f):
            by_key.setdefault(f"held:{d['kind']}:{d.get('text')}", []).append(f)
    out = {}
    for key, fs in by_key.items():
        worst = min(fs, key=lambda f: (-f.severity.rank, f.code))
        out[key] = (worst.code, _occurrence([f for f in fs if f.code == worst.code]))
    return out

