"""Bound values: a value discriminator that a text binds to a name (usertest38 #3).

A version pin (``lib2==1.2.0``, ``lib2 >= 2.0``, ``lib2>=2``), an assignment
(``read_timeout_ms=45000``, ``timeout_ms: 45000``) and "set X to N" (``Pin lib2 to
1.2.0``) bind a value to a name: the fact is the pair, not the value alone.  Extraction
keeps the value's kind and norm and lets its text start at the name (:func:`bind`:
``version 'lib2==1.2.0'``, norm ``1.2.0``), so survival, which reads a discriminator's
kind, text and norm only, can ask the summary for the same pair
(:func:`bound_name`; :mod:`compaction_audit.recall.survival.bindings`).  Code and tool
output already give a keyed value's text from its key (``timeout_ms: 45000``); the same
:func:`bound_name` reads it.

Every look-back is bounded (:data:`NAME_MAX` characters), so the pass stays linear in
the text.  Standard library only (the text helper process imports it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from compaction_audit.recall.kinds import Discriminator, Kind

__all__ = ["BOUND_KINDS", "BOUND_TEXT", "NAME_MAX", "bind", "bound_name", "is_namey"]

BOUND_KINDS = frozenset({Kind.VERSION, Kind.QUANTITY, Kind.SCOPE})
"""The kinds a name can be bound to: a value."""

NAME_MAX = 64
"""Most characters of a name looked back for before a value."""

_OPS = frozenset("=~<>!^")
"""Characters that open a version requirement's operator (``==``, ``>=``, ``^``)."""
_NAME_CHARS = frozenset("_.-")
_NEAR = frozenset("=: \t")
"""The characters right before a value that may bind it (a sign, or a blank before a
sign or "to"): any other is passed at once (:func:`bind`)."""
_SET_VERB_RE = re.compile(r"(?i)(?:set|pin|rais|lower|bump|chang|increas|decreas|reduc|upgrad"
                          r"|downgrad|updat|mov|keep|kept|revert|roll)\w*")
"""A verb that sets a name to a value ("Set read_timeout_ms to 45000", "Pin lib2 to
1.2.0"): "X to N" binds only after one."""
BOUND_TEXT = (r"[\"'`]?([A-Za-z_][\w.-]*?)[\"'`]?"
              r"(?:[ \t]*[=:~<>!^]|(?:[ \t]+from[ \t]+[^ \t]+)?[ \t]+to[ \t])")
"""The name at the start of a bound value's text, before its connector (group 1; the
same pattern for :func:`bound_name` and the analysis's fact keys in Polars,
:func:`compaction_audit.recall.analysis.model.fact_key`)."""
_BOUND_TEXT_RE = re.compile(BOUND_TEXT)


def is_namey(name: str) -> bool:
    """Whether ``name`` reads as a name of code, not a word of prose: it holds ``_``,
    a digit, an inner ``.`` or ``-``, or an inner capital (``read_timeout_ms``,
    ``lib2``, ``app.timeout``, ``readTimeout``); "Note", "timeout" do not."""
    inner = name[1:-1]
    return (any(c.isdigit() or c == "_" for c in name) or "." in inner or "-" in inner
            or any(a.islower() and b.isupper() for a, b in pairwise(name)))


def _name_before(text: str, end: int) -> int | None:
    """The start of a name ending at ``end`` (letters, digits, ``_ . -``, at most
    :data:`NAME_MAX`; a letter or ``_`` first, a letter, digit or ``_`` last; not part
    of a path, an address or a longer token), or None."""
    start = end
    while start > 0 and end - start <= NAME_MAX and (text[start - 1].isalnum()
                                                     or text[start - 1] in _NAME_CHARS):
        start -= 1
    if end - start > NAME_MAX:
        return None
    while start < end and not (text[start].isalpha() or text[start] == "_"):
        start += 1  # "1.5x": no name starts with a digit
    if start == end or not (text[end - 1].isalnum() or text[end - 1] == "_"):
        return None
    if start > 0 and text[start - 1] in "/\\@:":
        return None
    return start


def _skip_blank(text: str, at: int) -> int:
    """``at`` moved back over spaces and tabs (at most :data:`NAME_MAX`)."""
    stop = max(0, at - NAME_MAX)
    while at > stop and text[at - 1] in " \t":
        at -= 1
    return at


def _binding_start(text: str, d: Discriminator) -> int | None:
    """Where the name ``d`` is bound to starts in ``text``, or None: an operator-led
    version right after a name (``lib2==1.2.0``, ``lib2 >= 2.0``, one space at most);
    a value after ``name =`` (not ``==``, ``>=``: a comparison) or after ``name:`` and a
    space with a name of code (:func:`is_namey`; ``arXiv:2301.75952`` is an id); a
    value after "<verb> [the] name to" with a name of code and a verb of setting
    (:data:`_SET_VERB_RE`)."""
    at = d.start
    if d.kind is Kind.VERSION and d.text[:1] in _OPS:
        end = at - 1 if at and text[at - 1] in " \t" else at
        return _name_before(text, end)
    before = _skip_blank(text, at)
    sign = text[before - 1] if before else ""
    if sign == "=" or (sign == ":" and before < at):  # "arXiv:2301.75952" binds nothing
        if sign == "=" and before > 1 and text[before - 2] in _OPS:
            return None
        end = _skip_blank(text, before - 1)
        start = _name_before(text, end)
        return start if start is not None and (sign == "=" or is_namey(text[start:end])) \
            else None
    if not text.endswith("to", 0, before) or before == at:
        return None
    end = _skip_blank(text, before - 2)
    if end == before - 2:  # "onto", "into": no word "to"
        return None
    old_value = _FROM_VALUE_RE.search(text, max(0, end - NAME_MAX), end)
    if old_value:  # "raise read_timeout_ms from 30000 to 45000" (usertest72 #3)
        end = _skip_blank(text, old_value.start())
    start = _name_before(text, end)
    if start is None or not is_namey(text[start:end]):
        return None
    return start if _set_verb_before(text, start) else None


_FROM_VALUE_RE = re.compile(r"[ \t]from[ \t]+[^ \t]*\d[^ \t]*$")
"""The old value of "<name> from <value> to <value>", which ends the look-back."""
_QUALIFIER_RE = re.compile(r"[A-Za-z]+")
"""A plain word that may stand between a verb of setting and its name ("the", "staging"),
unless it is one of :data:`_NOT_QUALIFIERS`."""
_NOT_QUALIFIERS = frozenset({
    "from", "in", "into", "with", "for", "of", "at", "on", "onto", "by", "about", "to",
    "per", "via", "over", "under", "across", "through", "within", "without", "between",
    "among", "after", "before", "during", "and", "or", "but", "it", "them", "this",
    "that", "these", "those"})
"""Words that end the look-back for a verb: a preposition opens another phrase ("Move
traffic from blue_pool to 80%": blue_pool is where it comes from; "Increase revenue in
Q3 from 10 to 20 percent"), a pronoun or conjunction another object (adv141 #2)."""


def _set_verb_before(text: str, start: int) -> bool:
    """Whether a verb of setting (:data:`_SET_VERB_RE`) comes before the name at
    ``start``: right before it, or before at most two plain words ("Raise the staging
    read_timeout_ms to 45000", usertest72 #3; not "Raise concerns about the X to N")."""
    verb_end = _skip_blank(text, start)
    for _ in range(3):
        word = text[max(0, verb_end - 16):verb_end].rsplit(None, 1)[-1:] if verb_end else []
        if not word:
            return False
        if _SET_VERB_RE.fullmatch(word[0]):
            return True
        if (not _QUALIFIER_RE.fullmatch(word[0]) or word[0].lower() in _NOT_QUALIFIERS
                or _skip_blank(text, verb_end - len(word[0])) == verb_end - len(word[0])):
            return False  # not a plain word (adv141 #2), or no blank before it
        verb_end = _skip_blank(text, verb_end - len(word[0]))
    return False


def bind(text: str, found: list[Discriminator]) -> list[Discriminator]:
    """``found`` (the token discriminators of ``text``) with each value that ``text``
    binds to a name taken from the name on (:func:`_binding_start`): its text runs
    from the name (``lib2==1.2.0``), its kind and norm stay.  A requirement on a whole
    number (``>=2``) that binds no name is left out: alone it is a comparison
    (``10>=20``), not a pin."""
    out = []
    for d in found:
        at = d.start
        if d.kind not in BOUND_KINDS or (  # most values: no sign, no "to" right before
                d.text[:1] not in _OPS and (text[at - 1:at] not in _NEAR or (
                    text[at - 1] in " \t" and text[at - 2:at - 1] not in _NEAR
                    and not text.endswith("to", 0, at - 1)))):
            out.append(d)
            continue
        start = _binding_start(text, d)
        if start is None:
            if not (d.kind is Kind.VERSION and d.text[:1] in _OPS and "." not in d.text):
                out.append(d)
            continue
        out.append(Discriminator(d.kind, text[start:d.end], d.norm, start, d.end, d.line))
    return out


@lru_cache(maxsize=1 << 16)
def _bound_text(text: str) -> str | None:
    m = _BOUND_TEXT_RE.match(text)
    return m.group(1).lower() if m else None


def bound_name(d: Discriminator) -> str | None:
    """The name value ``d`` is bound to, lowercased (``lib2`` of ``lib2==1.2.0``,
    ``timeout_ms`` of ``timeout_ms: 45000``, ``port`` of ``"port": 8080``), read from
    its text; None for a value stated alone and for any other kind."""
    return _bound_text(d.text) if d.kind in BOUND_KINDS else None
