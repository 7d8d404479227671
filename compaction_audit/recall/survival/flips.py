"""Survival's flip evidence: a summary rule that states a child's clause reversed.

The antonyms and opposite bounds a flip is judged on (issue 12, point 1), the rule parts
of a summary that reverse a clause (:func:`_flip_tags`), and the per-sentence lookup
:func:`~compaction_audit.recall.survival.check.flip_sentence` quotes from.  Pure standard
library.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from compaction_audit.recall.extract import Discriminator, Kind
from compaction_audit.recall.survival.index import _Index, _index
from compaction_audit.recall.survival.postings import _Postings
from compaction_audit.recall.survival.withheld import without_withheld
from compaction_audit.recall.survival.words import (
    _MARKER_IS_CONTENT,
    _flip_stems,
    _is_key,
    _polarity,
)

_ANTONYMS: dict[str, tuple[str, ...]] = {}
for _a, _b in (("enabl", "disabl"), ("allow", "deny"), ("allow", "forbid"),
               ("allow", "block"), ("allow", "prohibit"), ("includ", "exclud"),
               ("add", "remov"), ("accept", "reject"), ("start", "stop"),
               ("increas", "decreas"), ("rais", "lower"), ("lock", "unlock"),
               ("requir", "optional"), ("publ", "privat"), ("safe", "unsafe")):
    _ANTONYMS[_a] = (*_ANTONYMS.get(_a, ()), _b)
    _ANTONYMS[_b] = (*_ANTONYMS.get(_b, ()), _a)
_FLIP_FAMILIES = {"max": "min", "min": "max"}
_FLIP_KINDS = frozenset({Kind.NEGATION, Kind.CONSTRAINT, Kind.CONDITION, Kind.REQUIREMENT})


def _flip_evidence(d: Discriminator, idx: _Index) -> bool:
    """A rule sentence (or bound) of ``idx`` that states clause ``d`` reversed (see
    :func:`~compaction_audit.recall.survival.check.flipped`)."""
    return next(_flip_tags(d, idx.lookup.rules, idx.lookup.clause_words), None) is not None


def _flip_tags(d: Discriminator, rules: dict[bool, _Postings],
               clauses: dict[tuple[Kind, str], _Postings]) -> Iterator[int]:
    """The tags of the rule parts (or bounds) in ``rules`` (``clauses``) that state
    clause ``d`` reversed: a bound needs the opposite bound on all its identifier-like
    words; a rule needs a rule part of the opposite polarity holding all its stems, or
    one of the same polarity holding them with one swapped for its antonym."""
    if d.kind not in _FLIP_KINDS:
        return
    family, *words = d.norm.split()
    neg = _polarity(d)
    other = _FLIP_FAMILIES.get(family)
    if other is not None:
        keys = [w for w in words if _is_key(w)]
        bounds = clauses.get((d.kind, other))
        if keys and bounds is not None:
            yield from (tag for tag, cand in bounds.tagged(keys, 1)
                        if all(k in cand for k in keys))
        return
    if family in _MARKER_IS_CONTENT:
        return
    stems = _flip_stems(words)
    if not stems:
        return
    yield from (tag for tag, cand in rules[not neg].tagged(stems, 1) if stems <= cand)
    for swapped in _swapped(stems):
        yield from (tag for tag, cand in rules[neg].tagged(swapped, 1) if swapped <= cand)


def _swapped(stems: frozenset[str]) -> Iterator[frozenset[str]]:
    """``stems`` with one stem swapped for one of its antonyms (:data:`_ANTONYMS`), each
    way: the same polarity with such a swap states a clause reversed."""
    return (stems - {w} | {a} for w in stems for a in _ANTONYMS.get(w, ()))


def may_reverse(d: Discriminator, low: str) -> bool:
    """False when lowercased text ``low`` cannot state clause ``d`` reversed: an
    identifier-like word of ``d`` (a number, a flag, a path, a name with ``-_./#``:
    no synonym or antonym stands for one) is no substring of it.  A cheap test before
    :func:`states_opposite` over many texts (a fold's person children,
    :func:`compaction_audit.recall.analysis.lifted.without_lifted`)."""
    _, *words = d.norm.split()
    return all(w in low for w in words if _is_key(w))


def states_opposite(d: Discriminator, text: str) -> bool:
    """Whether ``text`` has a sentence of the opposite polarity holding every stem of
    clause ``d`` (or one of the same polarity holding them with one swapped for its
    antonym): a person's "you can now delete the backups" lifting "Do not delete the
    backups", which need not be worded as a rule (usertest54 #3)."""
    _, *words = d.norm.split()
    stems, neg = _flip_stems(words), _polarity(d)
    if not stems:
        return False
    # "always mask the token in logs" keeps "never log the token" (adv126 #1)
    sentences = _index(without_withheld(d, text)).lookup.sentences
    if any(stems <= cand for cand in sentences[not neg].holding(stems, 1)):
        return True
    return any(swapped <= cand for swapped in _swapped(stems)
               for cand in sentences[neg].holding(swapped, 1))


def _restated(d: Discriminator, idx: _Index) -> bool:
    """One sentence of the same polarity holds every stem of clause ``d``."""
    _, *words = d.norm.split()
    stems, neg = _flip_stems(words), _polarity(d)
    lookup = idx.lookup
    return bool(stems) and any(stems <= cand for table in (lookup.sentences, lookup.rules)
                               for cand in table[neg].holding(stems, 1))


def _restated_last(d: Discriminator, idx: _Index) -> bool:
    """:func:`_restated`, and no sentence from the last one restating clause ``d`` on
    states it reversed: the summary's last word on the rule keeps it (adv98 #2: "Do not
    delete the prod-db-7 backups. Update from the user: delete the prod-db-7 backups."
    kept the rule, no CA304, though its last sentence revokes it).  A sentence that
    both restates and reverses it ("Do not delete X, then delete X.") does not keep it
    (adv99 #1).  Each sentence of a summary is indexed once, whatever the rules asked
    of it (:func:`_sentence_lookup`; adv99 #3: once per rule was quadratic)."""
    if not _restated(d, idx):
        return False
    _, rules, clauses, stated = _sentence_lookup(idx.summary, True)  # tags: -position
    flips = [-tag for tag in _flip_tags(d, rules, clauses)]
    if not flips:  # the whole summary reverses it, no sentence alone does: not kept
        return False
    _, *words = d.norm.split()
    stems = _flip_stems(words)
    kept = [-tag for tag, cand in stated[_polarity(d)].tagged(stems, 1) if stems <= cand]
    return bool(kept) and max(kept) > max(flips)


_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n")


_Tagged = tuple[list[frozenset[str]], list[int]]


@lru_cache(maxsize=256)
def _sentence_lookup(summary_text: str, last: bool = False) -> tuple[
        tuple[str, ...], dict[bool, _Postings], dict[tuple[Kind, str], _Postings],
        dict[bool, _Postings]]:
    """The sentences of ``summary_text`` and the rule parts, clauses and statements (its
    sentences and rule parts, by polarity) of each (as its own
    :func:`~compaction_audit.recall.survival.index._index` has them), tagged with the
    sentence's position (with ``last``, its negative, the sentences read from the end:
    a set several sentences hold keeps the first tag given, so the last of them): one
    lookup finds the first (or last)
    sentence that reverses or states a clause, where indexing the sentences one by one
    per clause was quadratic (issue 11, item 5; adv99 #3)."""
    sentences = tuple(s for s in _SPLIT_RE.split(summary_text) if s.strip())
    rules: dict[bool, _Tagged] = {False: ([], []), True: ([], [])}
    stated: dict[bool, _Tagged] = {False: ([], []), True: ([], [])}
    clauses: dict[tuple[Kind, str], _Tagged] = {}
    order = list(enumerate(sentences))  # a set several hold keeps the first tag given
    for at, sentence in reversed(order) if last else order:
        lookup = _index.__wrapped__(sentence).lookup  # not cached: once per sentence
        tag = -at if last else at
        for table, parts in ((rules, lookup.rules), (stated, lookup.rules),
                             (stated, lookup.sentences)):
            for neg, part in parts.items():
                table[neg][0].extend(part.sets)
                table[neg][1].extend([tag] * len(part.sets))
        for key, part in lookup.clause_words.items():
            sets, tags = clauses.setdefault(key, ([], []))
            sets.extend(part.sets)
            tags.extend([tag] * len(part.sets))
    return (sentences, {neg: _Postings(*pair) for neg, pair in rules.items()},
            {key: _Postings(*pair) for key, pair in clauses.items()},
            {neg: _Postings(*pair) for neg, pair in stated.items()})
