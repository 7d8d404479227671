"""Texts that cannot hold a discriminator, told apart in one vectorized pass (issue 14).

Extraction (:mod:`compaction_audit.recall.extract`) costs tens of microseconds of
Python regex per distinct text.  :data:`MAY_HOLD` is a pattern that every text with a
discriminator matches, whatever its span type: the analysis runs it over the whole text
column with Polars (``str.contains``, the Rust regex engine) and extracts only the texts
that match.  It is a necessary condition, not a sufficient one: a match may hold
nothing, a text without a match holds nothing.

Why it is necessary.  A text is *plain* when every character is an ASCII letter, a
space, a line end or one of ``, . ! ? ' ( )``.  On a plain text cleaning
(:func:`~compaction_audit.recall.spantypes.clean_text`) changes nothing (it acts on
backslashes, tabs, ``→``, ``:``, ``<``, ``[`` and escape characters), and:

* every token pattern needs a digit, one of ``_ - / = ` [ # ~ \\ :``, a ``.`` followed
  by a letter (``a.b``), a letter followed by a capital (``camelCase``), or a scope
  word (``prod``, ``staging``, ``dev``, ...) standing as a word;
* every clause needs a marker (:data:`compaction_audit.recall.clauses._MARKERS`)
  starting at a word boundary: the pattern holds each marker's literal beginning
  (:func:`_literal`), an imperative (``keep``, ``avoid``...) anywhere, or ``n't``;
* a ruled-out finding needs ``rul`` ("ruled out"), a negation (above) or a form of
  *be* followed by fine, ok, okay, healthy or unrelated;
* a requirement unit needs a bullet (``-``, ``*``, ``+``, ``•`` or a digit).

So a text that is plain and has none of these holds no discriminator.  The pattern is
written for both engines (Python ``re`` and Rust ``regex``: no look-around).
``tests/recall/test_prefilter.py`` checks it against extraction.  Standard library only.
"""

from __future__ import annotations

import re

from compaction_audit.recall.clauses import _IMPERATIVE, _MARKERS
from compaction_audit.recall.ruledout import _BE

__all__ = ["MAY_HOLD", "may_hold"]

_PLAIN = r"[^A-Za-z ,.!?'()\n]"
"""A character outside the plain alphabet (see the module docstring)."""
_SCOPE_WORDS = r"production|prod|prd|staging|stg|preprod|dev|qa|uat"
"""The scope words of :mod:`compaction_audit.recall.extract` written with letters only
(``pre-prod`` and ``test-env`` have a ``-``)."""


def _literal(pattern: str) -> str:
    """The literal beginning of a marker pattern as a regex every match of it starts
    with: its letters and ``\\s+`` up to the first other construct; negative
    look-aheads are skipped (they only narrow the match).  Ends with ``\\b`` when the
    whole pattern is literal or a look-ahead for a space follows (the marker then ends
    a word); empty when the pattern starts with something else (``->``, ``→``: outside
    the plain alphabet)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i].isalpha():
            out.append(pattern[i])
            i += 1
        elif pattern.startswith(r"\s+", i):
            out.append(r"\s+")
            i += 3
        elif pattern.startswith("(?!", i):  # skip the balanced group
            depth = 0
            while i < len(pattern):
                depth += {"(": 1, ")": -1}.get(pattern[i], 0)
                i += 1
                if depth == 0:
                    break
        elif pattern.startswith(r"(?=\s", i):
            return "".join(out) + r"\b"
        else:
            return "".join(out)
    return "".join(out) + r"\b"


def _marker_literals() -> list[str]:
    """:func:`_literal` of every marker; a marker that starts with a plain character
    but no literal (none does) gives the empty alternative, which any word matches."""
    out = []
    for _, _, pattern in _MARKERS:
        lit = _literal(pattern)
        if lit or re.fullmatch(_PLAIN, pattern[0]) is None:  # "->", "→": never plain
            out.append(lit)
    return out


MAY_HOLD = (
    rf"{_PLAIN}|\.[A-Za-z]|[A-Za-z][A-Z]"
    rf"|(?i:\b(?:{'|'.join(_marker_literals())}))"
    rf"|(?i:\b(?:{_SCOPE_WORDS})\b)"
    rf"|(?i:{'|'.join(_IMPERATIVE)}|n't|rul)"
    rf"|(?i:{_BE}\s+(?:fine|ok|okay|healthy|unrelated))"
)
"""The pattern every text holding a discriminator matches (module docstring)."""
_MAY_HOLD_RE = re.compile(MAY_HOLD)


def may_hold(text: str) -> bool:
    """False when ``text`` holds no discriminator for any span type (the Python form
    of the Polars pass; the analysis uses :data:`MAY_HOLD` on the column)."""
    return _MAY_HOLD_RE.search(text) is not None
