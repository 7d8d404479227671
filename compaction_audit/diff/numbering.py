"""How two runs number their rounds: apart, or the candidate ending first."""

from __future__ import annotations

from compaction_audit.report.model import SessionReport


def rounds_apart(base: SessionReport, cand: SessionReport) -> str | None:
    """``"baseline rounds 0-79, candidate rounds 100-179"`` when the two runs number
    their rounds unlike each other: their round ranges share less than half of the
    shorter one, or their mean steps (last less first over the rounds less one)
    differ by more than half; else None.  Onsets are compared by round number (spec
    rules.md, "Onsets"), so the verdict says so and calls no move later (adv138 #3:
    a candidate numbered from 100 read as an onset 89 rounds later, in green).  No
    gate fails on it: a run may start at round 1 or resume at another number
    (adv139 #1), and no numbering rule tells a renumbered run from another run."""
    spans = []
    for r in (base, cand):
        rounds = r.series["round"]
        if len(rounds) == 0:
            return None
        first, last = int(rounds[0]), int(rounds[-1])
        spans.append((first, last, (last - first) / max(1, len(rounds) - 1)))
    (f1, l1, s1), (f2, l2, s2) = spans
    steps_apart = min(s1, s2) > 0 and max(s1, s2) / min(s1, s2) > 1.5
    shared = min(l1, l2) - max(f1, f2) + 1
    if shared * 2 >= min(l1 - f1, l2 - f2) + 1 and not steps_apart:
        return None
    return f"baseline rounds {f1}-{l1}, candidate rounds {f2}-{l2}"


def candidate_end(base: SessionReport, cand: SessionReport) -> int | None:
    """The candidate's last round when it ends before the baseline's last and the two
    number their rounds alike (not :func:`rounds_apart`), wherever each starts (adv144
    F1: a cut run numbered from one round later read as 358 units "resolved"), else
    None.  None too when rounds after that one may be in what the candidate's reader
    left out (:func:`unread_after`): what the baseline found there stays resolved, and
    the verdict says it may be unread (:meth:`~compaction_audit.diff.run.RunDiff.
    coverage_note`).  What the baseline found first after that round the candidate
    never reached: not resolved there (usertest74 F4: a run cut at round 12 of 40 showed
    358 units "resolved" and read as an improvement)."""
    return None if unread_after(cand) else ends_first(base, cand)


def ends_first(base: SessionReport, cand: SessionReport) -> int | None:
    """The candidate's last round when it ends before the baseline's last and the two
    number their rounds alike (not :func:`rounds_apart`), else None; what the candidate's
    reader left out aside (:func:`candidate_end` minds that)."""
    rounds_b, rounds_c = (r.series["round"].to_list() for r in (base, cand))
    if not rounds_b or not rounds_c or rounds_apart(base, cand):
        return None
    last_c: int = max(rounds_c)
    return last_c if last_c < max(rounds_b) else None


def may_be_cut(cand: SessionReport) -> bool:
    """Whether the candidate's last round may be cut short where it ends first: a
    product's log (its session record names a ``source_format``), whose round runs
    from one turn of the person to the next, so a transcript cut after its summary line
    (or still being written) ends partway through its last round (adv144 F4: "1 new"
    and a debt "+3" at that round).  A native log writes each round whole."""
    return _product_log(cand)


def _product_log(r: SessionReport) -> bool:
    """Whether ``r``'s session record names a product's ``source_format`` (an adapter's
    log, or one converted from it)."""
    return r.header.extra.get("source_format") not in (None, "native")


def finished_round(cand: SessionReport, end: int) -> int:
    """The last round of ``cand`` it surely finished, ``end`` being its last: the
    round before it for a log whose last round :func:`may_be_cut` (one less than its
    first when it has one round), else ``end``."""
    if not may_be_cut(cand):
        return end
    earlier = [r for r in cand.series["round"].to_list() if r < end]
    return max(earlier) if earlier else end - 1


def reached(base: SessionReport, cand: SessionReport) -> int | None:
    """The last round the candidate surely reached whole where it ends first
    (:func:`candidate_end` and :func:`finished_round`): what the baseline found first
    after it is "not reached"; None where the candidate does not end first."""
    end = candidate_end(base, cand)
    return None if end is None else finished_round(cand, end)


def starts_later(base: SessionReport, cand: SessionReport) -> int | None:
    """The candidate's first round when it starts after the baseline's first and the
    two number their rounds alike (not :func:`rounds_apart`: a resumed or rotated log
    of the same run), else None.  What the baseline found first before it the
    candidate never ran, nor at it (the candidate's first round lacks what came
    before): not resolved there (adv145 F4: the folds of rounds 1 and 2 of
    a baseline read "2 resolved" against a candidate that starts at round 2)."""
    rounds_b, rounds_c = (r.series["round"] for r in (base, cand))
    if len(rounds_b) == 0 or len(rounds_c) == 0 or rounds_apart(base, cand):
        return None
    first = int(rounds_c.min())  # type: ignore[arg-type]
    return first if first > int(rounds_b.min()) else None  # type: ignore[arg-type]


def debt_round(base: SessionReport, cand: SessionReport) -> int | bool | None:
    """Where the recall debt of the two runs is compared: the candidate's last round
    when it ends first (:func:`ends_first`: a run cut short had "665 -> 219 (-446)",
    usertest74 F4; lines or records it left out do not move its end), the round before
    it where that round may be cut short (:func:`finished_round`), when both start at
    the same round (:func:`same_start`); False when it ends first from another start
    (no round is the same point of both runs: no comparison) or has no round it
    surely finished; None for each run's own last round.  False too when the runs
    number their rounds alike but start at different rounds, whichever ends first
    (adv145 F4: a candidate resumed two rounds later had "9 -> 7 (-2)" at the last
    round, two rounds fewer seen); None when they number them apart
    (:func:`rounds_apart`: two runs, each whole, compared at their own ends)."""
    if rounds_apart(base, cand):
        return None
    if not same_start(base, cand):
        return False
    end = ends_first(base, cand)
    if end is None:
        return None
    done = finished_round(cand, end)
    return done if done in cand.series["round"] else False


def same_start(base: SessionReport, cand: SessionReport) -> bool:
    """Whether both runs' first rounds have the same number: only then is a round
    number the same point of both runs, and the recall debt at the candidate's last
    round comparable (adv144 F5: a baseline numbered from 6 against a candidate from
    1 compared their 7th and 12th rounds, "96 -> 219 (+123)", for one run)."""
    firsts = [r.series["round"].min() for r in (base, cand)]
    return None not in firsts and firsts[0] == firsts[1]


def unread_after(cand: SessionReport) -> bool:
    """Whether rounds after the candidate's last may be in what its reader left out:
    lines it did not read (:meth:`~compaction_audit.report.model.SessionReport.
    lines_not_read`), or records ``--lenient`` skipped, unless the log is native (its
    rounds are numbered in order: no product's adapter groups its lines) and every
    skipped record comes before the line of its last round (adv144 F2: one bad record
    at line 6 of a run cut at round 12 kept 358 units "resolved")."""
    if cand.lines_not_read():
        return True
    if not cand.skipped:
        return False
    lines = cand.series["line"]
    last = lines[-1] if len(lines) else None
    return _product_log(cand) or last is None or any(
        e.path != cand.path or not 0 < e.line < last for e in cand.skipped)
