"""Survival's anchors: what a summary must hold for a token discriminator to survive.

:func:`anchors` gives the strings of which a summary's vocabulary (built by
:func:`_vocabulary`) holds at least one whenever a token discriminator survives in it,
so a summary that holds none is not compared (issue 11, adv10 F6).  Pure standard
library.
"""

from __future__ import annotations

from functools import lru_cache

from compaction_audit.recall.extract import CLAUSE_KINDS, Discriminator, Kind
from compaction_audit.recall.survival.formats import month_day
from compaction_audit.recall.survival.words import _HEX_RE, _WORD_RE, _basename, _module_key
from compaction_audit.recall.versions import RequirementTable, measure, vtuple

_RANGE = "\x00range"
"""In a summary's vocabulary when it states a version requirement other than ``==``
(``>=4.2``, ``~>1.4``): any version may then be admitted, whatever its text."""


def _pinned(n: int, version: tuple[int, ...]) -> str:
    """The vocabulary string of an ``==`` requirement on ``n`` version parts."""
    return f"\x00== {n} {version!r}"


def _measure_token(base: tuple[str, float]) -> str:
    """A quantity's (dimension, value in the base unit) as one vocabulary string."""
    return f"\x00measure {base[0]} {base[1]!r}"


def _vocabulary(keys: set[str], scopes: set[str], modules: set[str], tails: dict[str, list[str]],
                measures: frozenset[tuple[str, float]], table: RequirementTable
                ) -> frozenset[str]:
    """What a summary offers a token discriminator (:func:`_anchors`): its keys (words,
    names, discriminator norms, path file names), scope terms, module keys, the last
    parts of its paths, its quantities in base units, its ``==`` requirements
    (:func:`_pinned`) and :data:`_RANGE` when it states another requirement."""
    out = set(keys)
    out.update(scopes)
    out.update(modules)
    out.update(tails)
    out.update(_measure_token(m) for m in measures)
    for (cls, n), entry in table.items():
        if cls == "==":
            out.update(_pinned(n, v) for v in entry)
        else:
            out.add(_RANGE)
    return frozenset(out)


@lru_cache(maxsize=65536)
def _anchors(kind: Kind, text: str, norm: str) -> frozenset[str] | None:
    """Strings of which a summary's :func:`_vocabulary` holds at least one whenever the
    token discriminator ``(kind, text, norm)`` survives in it, one per way
    :func:`~compaction_audit.recall.survival.check.survives` can find it: the norm, the
    longest word :func:`~compaction_audit.recall.survival.check._raw_in` needs, the
    module key, the path's file name and last part, the quantity's number and value
    in base units, the version padded as each ``==`` requirement length compares it
    (:func:`_pinned`) and :data:`_RANGE`.  None for a clause, a hash (found by a prefix)
    and a token found by a substring search (a phrase, a norm without a word): those are
    always compared.

    A summary that holds none of them is not compared at all
    (:func:`~compaction_audit.recall.survival.check.survives`): on a chain of folds each
    leaf is compared with every summary above it, and most of its
    tokens are in none (issue 11, class 5)."""
    if kind in CLAUSE_KINDS:
        return None
    if kind is Kind.QUANTITY:  # (number, unit) in the quantities: number in the keys
        number, _, unit = norm.partition(" ")
        base = measure(number, unit) if unit else None
        return frozenset((number,) if base is None else (number, _measure_token(base)))
    if kind is Kind.VERSION and norm[:1].isdigit():  # admitted(): versions.admitted
        ver = vtuple(norm)
        return frozenset((norm, _RANGE, *(_pinned(n, (ver + (0,) * n)[:n])
                                           for n in range(5))))
    if kind is Kind.SCOPE:  # a date also by its month and day ("March 15": adv126 #7)
        return frozenset((norm,) if (day := month_day(norm)) is None else (norm, day))
    words = _WORD_RE.findall(norm)
    if " " in norm or not words or _HEX_RE.fullmatch(norm):
        return None
    out = {norm, max(words, key=len)}  # _raw_in needs every word of the norm
    if kind is Kind.IDENTIFIER and (key := _module_key(text)):
        out.add(key)
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        out.update((_basename(path), path.rsplit("/", 1)[-1]))
    return frozenset(out)


def anchors(d: Discriminator) -> frozenset[str] | None:
    """:func:`_anchors` of ``d``: a summary whose
    :func:`~compaction_audit.recall.survival.index.vocabulary` holds none of them does
    not keep ``d``; None when that cannot be told without comparing."""
    return _anchors(d.kind, d.text, d.norm)
