"""Baselined findings under another key: an episode whose number moved, a fold an
adapter names by a line that moved, a claim another summary now states (the rules are
in :mod:`compaction_audit.baseline`'s docstring; :func:`~compaction_audit.baseline.apply`
calls them)."""

from __future__ import annotations

import re

from compaction_audit.baseline.entry import Entry
from compaction_audit.rules.base import Finding


def shifted_episodes(pairs: list[tuple[Finding, Entry]], kept: list[Finding],
                      mine: list[tuple[str, Entry]], held: set[str]) -> list[Finding]:
    """``kept`` without the findings of an episode whose number moved: an
    ``episode:K`` entry not matched by its fingerprint holds the episode of its rule
    and session whose rounds overlap its own (a new episode before it made it
    ``episode:K+1``), when that episode matched no entry.  Its fingerprint is added to
    ``held``: it still occurs, so it is not stale (usertest32 #4: "no longer occurs"
    was said of an episode still there, and ``prune`` dropped its entry)."""
    loose: dict[str, list[tuple[Finding, Entry]]] = {}
    for f, e in pairs:  # the findings of episodes that matched no entry, by rule
        if e.key.startswith("episode:") and e.fingerprint not in held:
            loose.setdefault(e.code, []).append((f, e))
    gone: set[int] = set()
    taken: set[str] = set()
    for fp, b in mine:
        if fp in held or not b.key.startswith("episode:") or b.rounds is None:
            continue
        for _, e in loose.get(b.code, ()):
            if e.key not in taken and b.holds(e.facts, e.session, e.rounds):
                taken.add(e.key)  # one entry per episode, its findings all
                held.add(fp)
                gone.update(id(g) for g, ge in loose[b.code] if ge.key == e.key)
                break
    return [f for f in kept if id(f) not in gone] if gone else kept


LINE_NAMED = re.compile(r"entity:line-[0-9]+")
"""The key of a finding about an item an adapter named by its line (``line-16``: the
product's log gave it no id), the only keys :func:`moved_folds` matches across, and
only in a trace an adapter read (a native log's ``line-5`` is an id it chose)."""


class _Free:
    """The free entries of one trace (no finding of this run has their fingerprint),
    each of one rule (code and name) at most once: in key order, and by each fact
    digest they hold, so that a finding looks only at the entries that hold one of its
    facts (adv138 #5: each finding read every free entry, 2,000 findings x 16,000
    entries of a 3.8 MB baseline took an audit from 1.3 s to 34 s).  ``budget``: the
    entries still to be looked at in all; past it nothing more is matched, and a
    finding left unmatched is reported as new (as with no baseline: nothing is
    hidden)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.order = {b.fingerprint: i for i, b in enumerate(entries)}
        self.entries = {b.fingerprint: b for b in entries}
        self.by_fact: dict[tuple[str, str, str], list[str]] = {}
        for b in entries:
            for d in set(b.facts or ()):
                self.by_fact.setdefault((b.code, b.rule, d), []).append(b.fingerprint)
        self.budget = MOVE_CHECKS

    def holding(self, code: str, rule: str, facts: set[str]) -> list[Entry]:
        """The free entries of the rule that hold any of ``facts``, in key order; none
        once the budget is spent."""
        seen: set[str] = set()
        for d in facts:
            for fp in self.by_fact.get((code, rule, d), ()):
                if fp in self.entries and fp not in seen:
                    seen.add(fp)
                    self.budget -= 1
                    if self.budget < 0:
                        return []
        return [self.entries[fp] for fp in sorted(seen, key=self.order.__getitem__)]

    def take(self, b: Entry) -> Entry:
        del self.entries[b.fingerprint]
        return b


MOVE_CHECKS = 1_000_000
"""Most (finding, free entry) pairs :func:`moved_folds` and :func:`moved_claims` look
at in one trace (each a set comparison of a few digests: about a second)."""


def moved_folds(pairs: list[tuple[Finding, Entry]], mine: list[tuple[str, Entry]],
                 baseline: dict[str, Entry]) -> dict[int, Entry]:
    """``id(finding)`` -> the entry of this trace that a fold finding with no entry of
    its own fingerprint is: one of the same rule and session, keyed by another line-named
    item (:data:`LINE_NAMED`, on both sides), that lost every fact this finding loses
    and that no finding of this run has by its fingerprint (the first such, by key),
    else one whose every fact this finding loses, and more (the entry, grown).
    Items named by the log itself are never matched so (usertest48 #1: a fixed fold's
    entry hid another fold of a native log that lost the same rule later).  A product's
    adapter names a compaction's summary by its line ("line-16"), so a line added above
    it gave the same fold a new key: its finding was new and its entry stale
    (usertest47 #1: Codex and Cline baselines failed after one more line of a
    re-recorded trace).  Entries are looked up by the facts they hold
    (:class:`_Free`, at most :data:`MOVE_CHECKS` looked at)."""
    taken = {e.fingerprint for _, e in pairs}
    free = _Free(sorted((b for fp, b in mine if fp not in taken and b.facts
                         and LINE_NAMED.fullmatch(b.key)), key=lambda b: b.key))
    out: dict[int, Entry] = {}
    moving = [(f, e) for f, e in pairs if e.fingerprint not in baseline and e.facts
              and LINE_NAMED.fullmatch(e.key)]
    # first the folds that lose nothing new, then those that lose every fact of an
    # entry and more (usertest53 #3: a line added above a fold that also lost one more
    # fact read as a fixed entry and a new finding; it is the entry, grown)
    for grown in (False, True):
        for f, e in moving:
            if id(f) in out:
                continue
            facts = set(e.facts or ())
            for b in free.holding(e.code, e.rule, facts):
                if (b.holds(None, e.session) and set(b.facts or ()) <= facts
                        if grown else b.holds(e.facts, e.session)):
                    out[id(f)] = free.take(b)
                    break
    return out


def moved_claims(pairs: list[tuple[Finding, Entry]], mine: list[tuple[str, Entry]],
                  baseline: dict[str, Entry]) -> dict[int, Entry]:
    """``id(finding)`` -> the entry of this trace that the findings about what one
    summary states (unsupported claims, flipped rules: their facts are the claims',
    :func:`~compaction_audit.diff.stated_units`) with no entry of their own fingerprint
    are: one of the same rule and session, of another summary, that holds the most of
    the claims they state (the first such, by key) and that no finding of this run has
    by its fingerprint.  A claim it does not hold stays new, as in a summary of the
    baseline that states one more (:meth:`Entry.holds`, ``grown``).  Keyed by the
    summary alone, a claim the baseline accepted became new when another summary stated
    it first (a re-recorded trace without its last summary: usertest63 #1, where
    ``diff``, which keys a claim by what it states, called it persisting).  Entries are
    looked up by the claims they hold (:class:`_Free`, at most :data:`MOVE_CHECKS`
    looked at)."""
    from compaction_audit.diff import stated_units

    taken = {e.fingerprint for _, e in pairs}
    free = _Free(sorted((b for fp, b in mine if fp not in taken and b.facts
                         and b.key.startswith("entity:")), key=lambda b: b.key))
    groups: dict[str, list[tuple[Finding, Entry]]] = {}  # one summary's findings
    for f, e in pairs:
        if e.fingerprint not in baseline and e.facts and stated_units(f):
            groups.setdefault(e.fingerprint, []).append((f, e))
    out: dict[int, Entry] = {}
    for group in sorted(groups.values(), key=lambda g: g[0][1].key):
        code, rule, session = group[0][1].code, group[0][1].rule, group[0][1].session
        claims = {d for _, e in group for d in e.facts or ()}
        best = max((b for b in free.holding(code, rule, claims) if b.holds(None, session)),
                   key=lambda b: len(claims.intersection(b.facts or ())), default=None)
        if best is not None:  # it holds one of the claims at least
            out.update((id(f), best) for f, _ in group)
            free.take(best)
    return out
