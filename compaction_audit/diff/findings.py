"""Finding units of two runs classified new, resolved, unreached or persisting."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace

from compaction_audit.diff.numbering import reached, starts_later
from compaction_audit.diff.units import Occurrence, dropped_units, finding_units
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import Severity

STATUSES = ("new", "resolved", "unreached", "persisting")
"""A finding unit's statuses across two runs, in the order the reports list them."""


def status_heading(status: str) -> str:
    """A status as a heading: ``"Resolved"``; ``"Not reached"`` for the units one run
    found first after the candidate's last round it reached whole
    (:func:`~compaction_audit.diff.numbering.reached`) or the baseline found before its
    first (:func:`~compaction_audit.diff.numbering.starts_later`)."""
    return "Not reached" if status == "unreached" else status.capitalize()


@dataclass(frozen=True)
class FindingDelta:
    """One finding unit compared across runs.

    ``identity`` is ``(code, key)`` with ``key`` ``"lost:<kind>:<text>"``,
    ``"entity:<id>"`` or ``"episode:<n>"`` (see :func:`finding_units`); ``status`` is
    ``new``, ``resolved``, ``unreached`` or ``persisting``; ``baseline``/``candidate``
    are None on the
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


def compare_findings(base: SessionReport, cand: SessionReport) -> list[FindingDelta]:
    """Finding units of both runs classified new (candidate only), resolved (baseline
    only, at a round the candidate reached), unreached (one run's only, first at a round
    after the candidate's last whole round, :func:`~compaction_audit.diff.numbering.
    reached`: the baseline's past the candidate's end, or either's at a last round the
    candidate may not have finished; or the baseline's at or before the first round of a
    candidate that starts later, which lacks what came before it:
    :func:`~compaction_audit.diff.numbering.starts_later`), or the candidate's at or
    before the first round of a baseline that starts later) or persisting (both),
    ordered by
    code, then (facts still held, ``held:``,
    after the rest: usertest23 #4) severity, worst first (a fold's facts weigh by
    their own tier: usertest66 F4), first round, then (units of what folds lost) as the
    audit ranks the facts: tier, then its list's order.

    Units of what folds lost (``lost:<kind>:<text>``) match on that key alone, whichever
    fold rule reported them on each side; such a unit carries the candidate's code
    when it occurs there (a discriminator a topic-only fold lost in the baseline and a
    silent fold in the candidate persists, as CA301, its ``baseline_code`` CA302).  A
    fact the baseline lost that the candidate's fold dropped while another span still
    holds it (``held:`` there) is that ``lost:`` unit, persisting at the candidate's
    (lower) severity: the candidate did no worse (usertest43 #2: the first 12 rounds of
    a log, diffed with the whole log, failed ``--fail-on-new warning`` on 22 "new"
    units, each a fact the whole log lost later); so is a candidate's ``held:`` unit
    whose fact a baseline fold dropped too, in a fold keyed by the other facts it lost
    (:func:`~compaction_audit.diff.units.dropped_units`), and a fact the baseline lost
    that the candidate's fold dropped while another span holds it, in a fold keyed by
    the other facts it lost (usertest44 #2: such facts read "resolved", 104 of the 464
    of the example above).  The other way, a fact the baseline held and the candidate
    lost, stays new (usertest21 #2)."""
    names = {f.code: f.rule for f in (*base.findings, *cand.findings)}

    def by_identity(units: dict[tuple[str, str], Occurrence]
                    ) -> dict[tuple[str, str], tuple[str, Occurrence]]:
        return {("", key) if key.startswith(("lost:", "held:")) else (code, key): (code, occ)
                for (code, key), occ in units.items()}

    b, c = by_identity(finding_units(base)), by_identity(finding_units(cand))
    for ident in [i for i in c if i[1].startswith("held:")]:
        was = ("", "lost:" + ident[1].removeprefix("held:"))
        if was in b and was not in c and ident not in b:
            # the baseline lost it, the candidate still holds it: no heavier than the
            # baseline's unit, weighed by its own tier (usertest66 F4)
            c[was] = _at_most(c.pop(ident), b[was][1].severity)
    held = [i for i in c if i[1].startswith("held:") and i not in b]
    dropped = dropped_units(base) if held else {}
    for ident in held:
        if ident[1] in dropped:  # the baseline dropped it too, in a fold keyed otherwise
            b[ident] = _at_most(dropped[ident[1]], c[ident][1].severity)
    lost = [i for i in b if i[1].startswith("lost:") and i not in c]
    kept = dropped_units(cand) if lost else {}
    for ident in lost:  # the candidate dropped it too, still held, in a fold keyed
        also = kept.get("held:" + ident[1].removeprefix("lost:"))  # by the others it lost
        if also is not None:
            c[ident] = _at_most(also, b[ident][1].severity)
    end, start = reached(base, cand), starts_later(base, cand)
    base_start = starts_later(cand, base)  # a baseline that starts later (adv146 F6)

    def alone(first: int, in_candidate: bool) -> str:
        """The status of a unit one run has, first at round ``first``."""
        # the candidate's alone, at a last round it may not have finished (a product's
        # log cut after its summary: adv145 F5, adv144 F4), or at or before the first
        # round of a baseline that starts later
        if (end is not None and first > end) or (
                in_candidate and base_start is not None and first <= base_start):
            return "unreached"
        if in_candidate:
            return "new"
        return "unreached" if start is not None and first <= start else "resolved"

    out = []
    for ident in b.keys() | c.keys():
        if ident[1].startswith("episode:"):
            continue  # matched by their rounds first (_episodes)
        first = (b.get(ident) or c[ident])[1].first_round
        status = ("persisting" if ident in b and ident in c
                  else alone(first, ident in c))
        code = (c.get(ident) or b[ident])[0]
        occ_b, occ_c = b.get(ident), c.get(ident)
        out.append(FindingDelta(code, names[code], ident[1], status,
                                occ_b[1] if occ_b else None, occ_c[1] if occ_c else None,
                                occ_b[0] if occ_b and occ_b[0] != code else None))
    out += _episodes(b, c, names, alone)

    rank = _lost_ranks(cand, base)

    def order(d: FindingDelta) -> tuple[str, bool, int, int, int, int, str]:
        occ = d.baseline or d.candidate
        assert occ is not None
        return (d.code, d.key.startswith("held:"), -d.severity.rank, occ.first_round,
                *rank.get(d.key, (_NO_TIER, 0)), d.key)

    return sorted(out, key=order)


def _episodes(b: dict[tuple[str, str], tuple[str, Occurrence]],
              c: dict[tuple[str, str], tuple[str, Occurrence]], names: dict[str, str],
              alone: Callable[[int, bool], str]) -> list[FindingDelta]:
    """The episode units (``episode:<n>``) of both runs compared, per rule: an episode
    of one run that shares a round with one of the other persists with it (several
    with one where one run's gap closed or split a run: usertest77 F3, by ordinal an
    episode the candidate still had read "resolved" and a worse candidate got a green
    verdict); the rest are paired in round order, so an episode that moved (the same
    inversion a few rounds later) persists; what is left is one run's alone
    (``alone(first round, in the candidate)`` gives its status).  A persisting unit
    keeps the baseline's key, but a candidate's episode that met one the baseline's
    already met (a run split) and one of the candidate alone keep their own."""
    def by_code(units: dict[tuple[str, str], tuple[str, Occurrence]]
                ) -> dict[str, list[tuple[str, Occurrence]]]:
        out: dict[str, list[tuple[str, Occurrence]]] = {}
        for (code, key), (_, occ) in units.items():
            if key.startswith("episode:"):
                out.setdefault(code, []).append((key, occ))
        return {k: sorted(v, key=lambda e: e[1].first_round) for k, v in out.items()}

    def first_met(x: Occurrence, others: list[tuple[str, Occurrence]],
                  lasts: list[int]) -> int | None:
        """The first of ``others`` (one rule's episodes of one run, in round order:
        they do not overlap, so their last rounds ``lasts`` are in order too) that
        shares a round with ``x``: a bisection, not a scan (thousands of episodes)."""
        k = bisect_left(lasts, x.first_round)
        return k if k < len(others) and others[k][1].first_round <= x.last_round else None

    base_eps, cand_eps = by_code(b), by_code(c)
    out = []
    for code in sorted(base_eps.keys() | cand_eps.keys()):
        bs, cs = base_eps.get(code, []), cand_eps.get(code, [])
        b_lasts, c_lasts = [o.last_round for _, o in bs], [o.last_round for _, o in cs]
        pairs = [(i, first_met(x, cs, c_lasts)) for i, (_, x) in enumerate(bs)]
        met = {j for _, j in pairs if j is not None}
        split = {j: i for j, (_, y) in enumerate(cs) if j not in met
                 and (i := first_met(y, bs, b_lasts)) is not None}
        rest_b = [i for i, j in pairs if j is None]
        rest_c = [j for j in range(len(cs)) if j not in met and j not in split]
        matched = [(i, j, bs[i][0]) for i, j in pairs if j is not None] + [
            (i, j, cs[j][0]) for j, i in split.items()] + [
            (i, j, bs[i][0]) for i, j in zip(rest_b, rest_c, strict=False)]
        for i, j, key in matched:
            out.append(FindingDelta(code, names[code], key, "persisting", bs[i][1],
                                    cs[j][1]))
        for i in rest_b[len(rest_c):]:
            out.append(FindingDelta(code, names[code], bs[i][0],
                                    alone(bs[i][1].first_round, False), bs[i][1], None))
        for j in rest_c[len(rest_b):]:
            out.append(FindingDelta(code, names[code], cs[j][0],
                                    alone(cs[j][1].first_round, True), None, cs[j][1]))
    return out


def _at_most(unit: tuple[str, Occurrence], severity: Severity) -> tuple[str, Occurrence]:
    """``unit`` (code, occurrence) with its severity lowered to ``severity`` where it is
    above: a fact matched through a fold that dropped it while another span held it
    (:func:`~compaction_audit.diff.units.dropped_units`) weighs no more than the other
    run's unit of it, since the fold's severity is the other facts' (a fold of no-decay
    vs decay made 3 units "persisting now at or above error"; with a configured
    severity, a fixed cap at warning made one of a prefix run's: adv93 #5)."""
    code, occ = unit
    return (code, replace(occ, severity=severity)) if occ.severity.rank > severity.rank \
        else unit


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
