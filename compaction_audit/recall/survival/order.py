"""Which side of a sequence clause comes first in time: an order survives a fold only
in its own direction (usertest53 #2).

A ``sequence`` clause's norm is ``"sequence <left words> > <right words>"``, the marker
left out, so "Apply migration 0047 before the deploy" and "Deploy after migration 0047"
have their sides the other way round though they state one order.  The marker in the
clause's text tells which side is first: ``after`` and ``preceded by`` put the right
side first; ``before``, ``then``, ``followed by``, ``prior to``, ``subsequently``,
``afterwards`` and an arrow the left.  A summary clause holding every identifier-like
word of the child's clause kept the order unless more of those words are on its other
side than on their own ("the deploy of v4.2.1 goes before migration 0047" reverses
"Apply migration 0047 before the deploy of v4.2.1": 0047 first in one, second in the
other, 4.2.1 the other way).  An order of plain words, matched by two shared stems, is
not compared so: too loose to say which side a word is on, and such orders change with
the work (a Cline session reordered two buttons; its summary states the new order).

The summary's clause words carry their side as tagged words (:func:`side_tags`), so
the check is a set look-up in the clause sets the index already has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

FIRST, SECOND = "\x01", "\x02"
"""Tags of a word first and second in time (no word of a text holds either)."""
TAGS = frozenset({FIRST, SECOND})

_MARK_RE = re.compile(r"(?<![\w-])(?:(after(?!wards)|preceded\s+by)|before|then|followed\s+by"
                      r"|prior\s+to|subsequently|afterwards)(?![\w-])|(->|→)")


@lru_cache(maxsize=1 << 14)
def sides(text: str, words: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]] | None:
    """(words first in time, words second) of a sequence clause (``text`` as written,
    ``words`` its norm's words after the family, with the ``">"`` between the sides);
    None when its marker is not found or a side is empty."""
    if ">" not in words:
        return None
    at = words.index(">")
    left, right = frozenset(words[:at]), frozenset(words[at + 1:])
    mark = _MARK_RE.search(text.lower())
    if mark is None or not left or not right:
        return None
    first, second = (right, left) if mark.group(1) else (left, right)
    return first - second, second - first  # a word on both sides tells no order


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
    verb moves between the sides as a sentence is turned ("The action is rendered
    before the button" and "The button is rendered after the action" state one order,
    "rendered" on either side)."""
    first, second = keys
    same = (sum(FIRST + k in clause for k in first)
            + sum(SECOND + k in clause for k in second))
    other = (sum(SECOND + k in clause and FIRST + k not in clause for k in first)
             + sum(FIRST + k in clause and SECOND + k not in clause for k in second))
    return other > same
