"""A fact stated as a whole token: the test of the raw spans that hold a lost fact in
another form (:mod:`compaction_audit.recall.analysis.restated`, in Polars) and of
``trace``, which names them, and of the text report's values "stated in the clauses
above" (:mod:`compaction_audit.report.terminal_lost`).  Standard library only, so that
the report and ``trace`` do not load the recall analysis for it.

What counts is kept narrow, since a span wrongly said to hold a fact hides a loss
(adv54, adv55): the fact's own text, case kept (``PATH`` is not "the path"); a name
only when its form says it is one (a digit, a joiner such as ``-`` or ``.``, or mixed
capitals: ``main``, ``WARN`` and ``Config`` are words); a token no joiner continues
on either side (not inside a path, a URL, ``JIRA-5000``, ``3.45000`` or
``settings.yaml.bak``); outside fenced code.
"""

from __future__ import annotations

import re

from compaction_audit.recall.fences import blank_fences

__all__ = ["HITS", "JOINERS", "MAX_CHARS", "STATING_TYPES", "looked_for", "states"]

_TOKEN_KINDS = ("identifier", "link", "quantity", "version")
"""Kinds looked for; a clause in other words is not the same clause, and a scope
(``prod``, ``staging``) is a plain word that prose uses for other things."""

STATING_TYPES = ("prose", "spec")
"""Span types whose words can restate a fact (not code, not tool output)."""

_MIN_CHARS = 3
"""Characters a fact needs to be looked for: ``0``, ``ok`` or ``x1`` stand for many things."""

MAX_CHARS = 256
"""Characters a fact may have to be looked for: Polars' Aho-Corasick search builds
its automaton in time that grows with the square of one long needle (a camelCase
token of 30,000 characters: 2 s per search; 160 KB of them, 235 s: adv82).  A longer
fact is not looked for: a span restating it does not hold it, so it can only count
as lost, never as kept."""

_MIN_NUMBER = 4
"""Characters a number without a unit needs: ``70`` in another span is rarely the same
70 (a sample log's lost "70" was held by a step count), ``45000`` mostly is."""

HITS = 1024
"""Occurrences of the facts read per span at most, the first ones (a span that names
the facts more often and never as a whole token in the first 1,024 does not hold
them; :func:`states` reads as many of one fact)."""

JOINERS = "/\\.-:@#+~$%"
"""Characters that continue a token when a letter or digit follows them (after the
fact) or that join it to what comes before: ``docs/README.md``, ``JIRA-5000``."""

_NAME = re.compile(r"[0-9_./:@#\\-]|[a-z].*[A-Z]|.[A-Z].*[a-z]")
"""A name's mark: a digit or joiner, or capitals mixed with small letters after the
first character (``sidebarItem``; not ``PATH``, ``WARN`` or ``Config``: words)."""


def looked_for(kind: str, text: str) -> bool:
    """Whether a span stating the fact ``(kind, text)`` as a whole token holds it: a
    token kind (:data:`_TOKEN_KINDS`) of :data:`_MIN_CHARS` to :data:`MAX_CHARS`
    characters; a number without a unit of :data:`_MIN_NUMBER`; a name (identifier,
    link) only with the mark of one (:data:`_NAME`: ``12px``, ``px-3``, ``sidebarItem``, not
    ``main``, ``PATH``, ``WARN`` or ``Config``)."""
    if kind not in _TOKEN_KINDS or not _MIN_CHARS <= len(text) <= MAX_CHARS:
        return False
    if kind == "quantity":
        return " " in text or len(text) >= _MIN_NUMBER
    return kind == "version" or _NAME.search(text) is not None


def _is_word(char: str) -> bool:
    """A character of a word: a letter or digit of any script, or ``_`` (a dash, a
    quote, an arrow or a space of any script is a boundary: adv55)."""
    return char.isalnum() or char == "_"


def states(text: str, fact: str, hits: int = HITS) -> bool:
    """Whether ``text`` (its fenced code blanked) holds ``fact`` as a whole token (case
    kept) in its first ``hits`` occurrences: no letter, digit or joiner before it, and
    after it no letter or digit, nor a joiner followed by one.  The test of
    :func:`restated`, for ``trace``."""
    text = blank_fences(text)
    start = text.find(fact)
    while start >= 0 and hits > 0:
        hits -= 1
        end = start + len(fact)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        then = text[end + 1] if end + 1 < len(text) else " "
        if not (_is_word(before) or before in JOINERS or _is_word(after)
                or (after in JOINERS and _is_word(then))):
            return True
        start = text.find(fact, start + 1)
    return False
