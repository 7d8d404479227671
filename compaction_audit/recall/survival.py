"""Survival: whether a discriminator found in a child span is still stated by a summary.

The comparison rules (normalized tokens, clause families, path file names, hash
prefixes) are documented in ``docs/discriminators.md``; extraction is
:mod:`compaction_audit.recall.extract`.  Pure standard library, so the analysis can run
it in a helper process without importing Polars.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from compaction_audit.recall.extract import (
    CLAUSE_KINDS,
    SCOPE_CANON,
    Discriminator,
    Kind,
    extract_cached,
)

__all__ = ["dropped", "survives"]

_SCOPE_WORDS = frozenset({"prod", "staging", "dev", "qa", "uat", "preprod", "test-env"})
_HEX_RE = re.compile(r"[0-9a-f]{7,64}")


def _basename(path: str) -> str:
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1]


@dataclass(frozen=True, slots=True)
class _Index:
    """What a summary offers for comparison (built once per summary text, cached)."""

    keys: frozenset[str]  # token norms, plain words, bare numbers, path file names
    paths: tuple[str, ...]
    quantities: frozenset[tuple[str, str]]  # (number, canonical unit or "")
    scopes: frozenset[str]  # scope norms and every scope term inside words
    clauses: dict[tuple[Kind, str], list[frozenset[str]]]  # (kind, family) -> words


_NAME_RE = re.compile(r"\w+(?:[.-]\w+)+")


@lru_cache(maxsize=4096)
def _index(summary: str) -> _Index:
    low = summary.lower()
    keys, paths, quantities = set(re.findall(r"\w+", low)), [], set()
    keys.update(_NAME_RE.findall(low))  # hyphenated and dotted names: spotter-gqc, a.ex
    scopes = {SCOPE_CANON.get(w, w) for w in re.findall(r"[a-z]+(?:-(?:prod|env))?", low)}
    clauses: dict[tuple[Kind, str], list[frozenset[str]]] = {}
    for d in extract_cached(summary):
        if d.kind in CLAUSE_KINDS:
            family, *words = d.norm.split()
            clauses.setdefault((d.kind, family), []).append(frozenset(words) - {">"})
            continue
        keys.add(d.norm)
        if d.kind is Kind.QUANTITY:
            number, _, unit = d.norm.partition(" ")
            quantities.add((number, unit))
            keys.add(number)
        elif d.kind is Kind.SCOPE:
            scopes.add(d.norm)
        elif "/" in d.norm or "\\" in d.norm:
            paths.append(d.norm.rstrip("/\\"))
            keys.add(_basename(d.norm))
    return _Index(frozenset(keys), tuple(paths), frozenset(quantities), frozenset(scopes),
                  clauses)


def _stem(w: str) -> str:
    """Crude suffix stripping so "migrations"/"migration", "enabled"/"enable" compare."""
    if len(w) > 3 and w.isalpha() and not w.endswith("ss"):
        for suffix in ("ing", "ed", "es", "s", "e"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                return w[: -len(suffix)]
    return w


def _is_key(w: str) -> bool:
    """Identifier-like object words (numbers, flags, paths, names) and scope terms."""
    return (w in _SCOPE_WORDS or w.startswith("-")
            or any(c.isdigit() or c in "_./#\\" for c in w))


def _clause_survives(d: Discriminator, idx: _Index) -> bool:
    family, *words = d.norm.split()
    keys = [w for w in words if _is_key(w)]
    stems = {_stem(w) for w in words if w != ">"}
    for cand in idx.clauses.get((d.kind, family), ()):
        if keys:  # every identifier-like word, a path also by its file name
            if all(k in cand or ("/" in k and _basename(k) in cand) for k in keys):
                return True
        elif len(stems & {_stem(w) for w in cand}) >= min(2, len(stems)):
            return True
    return False


def survives(d: Discriminator, summary_text: str) -> bool:
    """Whether ``d`` (found in a child span) is still stated by ``summary_text``.

    Token kinds compare normalized forms: a quantity needs the same number (and the same
    unit when ``d`` has one: "45000" survives as "45,000" or "45000 ms", "412 ms" does not
    survive as "412"); a version the same version (``v4.2.1`` == ``4.2.1``); a scope the
    same term; an identifier or link the same token (a path also by its file name or a
    relative form, a hash also by a prefix of 7+ digits).  Clause kinds need a marker of
    the same family in the summary whose words hold every identifier-like word of ``d``
    (or, when ``d`` has none, share two content words): a summary that drops or flips
    the negation loses it.
    """
    idx = _index(summary_text)
    norm = d.norm
    if d.kind in CLAUSE_KINDS:
        return _clause_survives(d, idx)
    if d.kind is Kind.QUANTITY:
        number, _, unit = norm.partition(" ")
        return (number, unit) in idx.quantities if unit else number in idx.keys
    if d.kind is Kind.SCOPE:
        return norm in idx.scopes or norm in idx.keys
    if norm in idx.keys:
        return True
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        return _basename(path) in idx.keys or any(
            path.endswith("/" + p.lstrip("/")) or p.endswith("/" + path) for p in idx.paths)
    if norm.startswith("migration "):
        return norm.removeprefix("migration ") in idx.keys
    if _HEX_RE.fullmatch(norm):
        return any(k.startswith(norm) or norm.startswith(k)
                   for k in idx.keys if _HEX_RE.fullmatch(k))
    return " " in norm and norm in summary_text.lower()


def dropped(child_text: str, summary_text: str) -> list[Discriminator]:
    """The discriminators of ``child_text`` that do not survive in ``summary_text``."""
    return [d for d in extract_cached(child_text) if not survives(d, summary_text)]
