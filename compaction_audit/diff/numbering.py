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
    number their rounds alike (not :func:`rounds_apart`) from the same start (the
    candidate's first round at or before the baseline's), else None.  None too when
    the candidate has lines its reader did not read or records ``--lenient`` skipped:
    rounds it lacks may be those (a Claude Code transcript whose compaction lines were
    retyped has two rounds fewer), and what the baseline found there stays resolved,
    which the verdict says may be unread
    (:meth:`~compaction_audit.diff.run.RunDiff.coverage_note`).  What the baseline
    found first after that round the candidate never reached: not resolved there
    (usertest74 F4: a run cut at round 12 of 40 showed 358 units "resolved" and read
    as an improvement)."""
    rounds_b, rounds_c = (r.series["round"].to_list() for r in (base, cand))
    if not rounds_b or not rounds_c or cand.lines_not_read() or cand.skipped \
            or rounds_apart(base, cand):
        return None  # rounds it may lack for lines or records not read: "may be unread"
    last_c: int = max(rounds_c)
    return last_c if min(rounds_c) <= min(rounds_b) and last_c < max(rounds_b) else None
