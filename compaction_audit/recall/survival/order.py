"""Which side of a sequence clause comes first in time: an order survives a fold only in
its own direction (usertest53 #2).

A ``sequence`` clause's norm is ``"sequence <left words> > <right words>"``, the marker
left out, so "Apply migration 0047 before the deploy" and "Deploy after migration 0047"
have their sides the other way round though they state one order.  The marker in the
clause's text tells which side is first: ``after`` and ``preceded by`` put the right
side first; ``before``, ``then``, ``followed by``, ``prior to``, ``subsequently``,
``afterwards``, an ``after`` that points back ("after it", "after which", "after
that,": usertest54 #1) and an arrow the left; "after that" before a word may be either
("and after that deploy" or "after that migration completes": usertest55 #7), and no
side is read.  A marker that opens the clause ("Before migration 0047, deploy v4.2.1")
has the main clause, after the comma, on the left (usertest54 #2).  A summary clause
holding every identifier-like word of the child's clause kept the order unless more of
those words are on its other side than on their own ("the deploy of v4.2.1 goes before
migration 0047" reverses "Apply migration 0047 before the deploy of v4.2.1": 0047 first
in one, second in the other, 4.2.1 the other way).  An order of plain words, matched by
two shared stems, is not compared so: too loose to say which side a word is on, and
such orders change with the work (a Cline session reordered two buttons; its summary
states the new order).

The summary's clause words carry their side as tagged words (:func:`side_tags`), so
the check is a set look-up in the clause sets the index already has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from compaction_audit.recall.kinds import Discriminator

FIRST, SECOND = " <", " >"
"""Tags of a word first and second in time: a clause's words are its norm split at
whitespace, so none starts with a space (adv99 #7: control characters U+0001 and
U+0002, the first tags, were words a log could write, forging a side)."""

_BACK = r"(?:it|which|(?:that|this|these|those)\s*(?:,|$))"
"""What "after" points back to when it is "afterwards": "after it", "after which",
"after that," ("after that migration 0047 completes" is no such: usertest55 #7); "after
all" is no marker at all (usertest55 #9)."""
_DEMONSTRATIVE = r"(?:that|this|these|those)\s+\w"
"""An "after that <word>": "afterwards" before a verb ("and after that deploy v4.2.1"),
"after" before a noun ("after that migration completes"): no side is read."""
_MARK_RE = re.compile(rf"(?<![\w-])(?:(after(?!wards)(?!\s+(?:{_BACK}|{_DEMONSTRATIVE}|all\b))"
                      rf"|preceded\s+by)|(after(?=\s+{_DEMONSTRATIVE}))|before|then"
                      rf"|followed\s+by|prior\s+to|subsequently|afterwards|after(?=\s+{_BACK}))"
                      r"(?![\w-])|(->|→)")


@lru_cache(maxsize=1 << 14)
def sides(text: str, words: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]] | None:
    """(words first in time, words second) of a sequence clause (``text`` as written,
    ``words`` its norm's words after the family, with the ``">"`` between the sides);
    None when its marker is not found or a side is empty."""
    if ">" not in words:
        return None
    at = words.index(">")
    left, right = frozenset(words[:at]), frozenset(words[at + 1:])
    low = text.lower()
    mark = _MARK_RE.search(low)
    if mark is None or mark.group(2):
        return None
    if not left:  # "Before migration 0047, deploy v4.2.1": the main clause is the left
        left, right = _leading(low[mark.end():], right)
    if not left or not right:
        return None
    first, second = (right, left) if mark.group(1) else (left, right)
    return first - second, second - first  # a word on both sides tells no order


def _leading(after: str, words: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(the main clause's words, the subordinate's) of a clause its marker opens
    ("Before migration 0047, deploy v4.2.1", usertest54 #2: every word was on the right
    and no side was read): ``after`` is the text after the marker, cut at its first
    comma; each of ``words`` (the norm's right side) is on the side whose text holds
    it.  Empty sides when there is no comma."""
    sub, comma, main = after.partition(",")
    if not comma:
        return frozenset(), frozenset()
    return (frozenset(w for w in words if w in main),
            frozenset(w for w in words if w in sub))


def is_tag(word: str) -> bool:
    """Whether ``word`` of a clause set is a side tag (:data:`FIRST`, :data:`SECOND`)."""
    return word.startswith(" ")


def last_texts(summary: str) -> dict[str, str]:
    """The text of the last sequence clause of ``summary`` with each norm: extraction
    keeps the first of a norm, and the two directions of one order share a norm, so a
    summary stating it both ways was read by its first (adv99 #5, #6: the last word
    decides, as for a rule)."""
    from compaction_audit.recall.clauses import scan_clauses
    from compaction_audit.recall.fences import blank_fences
    from compaction_audit.recall.spantypes import clean_text

    found: list[Discriminator] = []
    scan_clauses(blank_fences(clean_text(summary)), found)
    return {d.norm: d.text for d in sorted(found, key=lambda d: d.start)
            if d.norm.startswith("sequence ")}


def side_tags(text: str, words: Iterable[str]) -> frozenset[str]:
    """A summary's sequence clause's words tagged with their side (:data:`FIRST`,
    :data:`SECOND`), added to its clause set; empty when :func:`sides` finds none."""
    found = sides(text, tuple(words))
    if found is None:
        return frozenset()
    return frozenset([FIRST + w for w in found[0]] + [SECOND + w for w in found[1]])


def reversed_in(keys: tuple[frozenset[str], frozenset[str]], clause: frozenset[str]) -> bool:
    """Whether a summary ``clause`` (its words and side tags) reverses the order of the
    child's ``keys`` (the words it is matched by, first and second in time): more of
    them on the other side only than on their own side.  A majority, not one word: a
    clause's left side may take in the previous clause's object
    (:func:`~compaction_audit.recall.clauses.scan_clauses`), so one name can be read on
    a side it was not written for."""
    first, second = keys
    same = (sum(FIRST + k in clause for k in first)
            + sum(SECOND + k in clause for k in second))
    other = (sum(SECOND + k in clause and FIRST + k not in clause for k in first)
             + sum(FIRST + k in clause and SECOND + k not in clause for k in second))
    return other > same
