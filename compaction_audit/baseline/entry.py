"""A baseline's entries: one baselined finding each (:class:`Entry`), merged by
fingerprint (:func:`merged`); the file and the matching are in
:mod:`compaction_audit.baseline`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

BASELINE_FORMAT = 1
FACT_DIGITS = 16
"""Hex digits of a lost fact's digest in an entry's ``facts`` (64 bits: two facts of
one fold share a digest with odds of about one in 10^19 per pair)."""


@dataclass(frozen=True, order=True)
class Entry:
    """One baselined finding (episode or entity) of one trace; ``facts``: the digests
    of what a fold finding lost (sorted: :mod:`compaction_audit.baseline`), None for any other
    finding or an entry that did not record them; ``session``: the trace's session id;
    ``rounds``: an episode's first and last round numbers.  Equality and order ignore
    those three."""

    trace: str
    code: str
    key: str
    rule: str
    fingerprint: str
    facts: tuple[str, ...] | None = field(default=None, compare=False)
    session: str | None = field(default=None, compare=False)
    rounds: tuple[int, int] | None = field(default=None, compare=False)

    def holds(self, facts: tuple[str, ...] | None, session: str | None = None,
              rounds: tuple[int, int] | None = None) -> bool:
        """Whether a finding of this fingerprint, in a trace of ``session``, that lost
        ``facts``, in an episode over ``rounds`` (first, last), is this entry: the same
        session (when both are known), each fact among :attr:`facts` and the rounds
        overlapping :attr:`rounds` (each always when either side is None)."""
        if self.session is not None and session is not None and self.session != session:
            return False
        if self.rounds is not None and rounds is not None and (
                rounds[1] < self.rounds[0] or rounds[0] > self.rounds[1]):
            return False
        return self.facts is None or facts is None or set(facts) <= set(self.facts)


def merged(items: list[Entry]) -> list[Entry]:
    """``items`` with one entry per fingerprint (the first), sorted: the facts of
    entries that share it are joined, and their rounds spanned (None when one of them
    has none).  One pass with a set per fingerprint: merging pairwise made 20,000
    entries of one fingerprint in a hostile baseline cost 77 s (adv23 F1)."""
    first: dict[str, Entry] = {}
    facts: dict[str, set[str] | None] = {}
    rounds: dict[str, tuple[int, int] | None] = {}
    for e in items:
        fp = e.fingerprint
        if fp not in first:
            first[fp] = e
            facts[fp] = None if e.facts is None else set(e.facts)
            rounds[fp] = e.rounds
            continue
        have = facts[fp]
        if have is None or e.facts is None:
            facts[fp] = None
        else:
            have.update(e.facts)
        span = rounds[fp]
        rounds[fp] = (None if span is None or e.rounds is None else
                      (min(span[0], e.rounds[0]), max(span[1], e.rounds[1])))
    return sorted(replace(e, facts=None if (f := facts[fp]) is None else tuple(sorted(f)),
                          rounds=rounds[fp])
                  for fp, e in first.items())
