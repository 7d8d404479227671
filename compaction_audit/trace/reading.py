"""How ``trace`` reads its QUERY, and which discriminators of a span it matches.

A query is read as the extractor reads prose (:func:`reading`).  When that finds one
discriminator whose text or norm is the whole query, the query is that discriminator,
and a span's discriminator matches it (:meth:`Asked.matches`) when it is the same fact
as the person wrote it (usertest38 #6):

* the same norm, of a kind the query reads as (the audit keys a fact by kind and norm,
  so the version ``v4.2`` is not held by the quantity "4.2", adv79 #3), or the same
  text;
* a number without a unit (``45000``) matches a quantity of that number with any unit
  (``45000 ms``), and one with a unit (``45s``) a quantity of the same measure
  (``45000 ms``);
* a value bound to a name (``lib2==1.2.0``, ``read_timeout_ms=45000``:
  :mod:`compaction_audit.recall.bindings`) matches that value bound to that name, and
  the value stated alone in a text that binds the name to no other value: as the
  audit counts the pin apart from a 1.2.0 of another name.  What is followed up the
  chain is then the pin (:meth:`Asked.follow`);
* a clause (``do NOT use --force``) matches a clause of the same kind whose norm holds
  its norm's words in that order ("Do NOT use --force when pushing": usertest56 #6).

Else the query is words, matched by the clauses whose words hold it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from compaction_audit.recall import extract as ext
from compaction_audit.recall.bindings import BOUND_KINDS, bound_name
from compaction_audit.recall.versions import measure

__all__ = ["Asked", "reading"]


_PHRASE_RE = re.compile(r"[^\W_]+(?:['\u2019._/-][^\W_]+)*")


@lru_cache(maxsize=4096)
def _phrase(text: str) -> str:
    """``text``'s words, lowercased, joined by one space: punctuation between words
    (commas, brackets, quotes) and case do not part a phrase from its clause.  Once
    per text: the query's is asked of every clause of every span."""
    return " ".join(_PHRASE_RE.findall(text.lower()))


@dataclass(frozen=True)
class Asked:
    """What a query asks for: ``q`` (stripped, lower case), ``norms`` (its own
    discriminators' norms and ``q``), ``kinds`` (the kinds it reads as; None: words),
    ``name`` (the name its value is bound to, if any), ``numbers`` (the number of a
    quantity query without a unit), ``measures`` (the measure of one with a unit) and
    ``bound`` (the text of its bound value)."""

    q: str
    norms: frozenset[str]
    kinds: frozenset[ext.Kind] | None = None
    name: str | None = None
    numbers: frozenset[str] = frozenset()
    measures: frozenset[tuple[str, float]] = frozenset()
    bound: str | None = None
    alone: bool = True

    def without_alone(self) -> Asked:
        """The same bound query, no longer matched by its value stated alone: the
        session binds the value to more names than
        :data:`~compaction_audit.recall.factkeys.MAX_NAMES_PER_VALUE`, so the audit
        counts no such span a holder of any of them (adv88 #1)."""
        return Asked(self.q, self.norms, self.kinds, self.name, self.numbers,
                     self.measures, self.bound, alone=False)

    def with_norms(self, more: set[str]) -> Asked:
        """The same query, also matching ``more`` norms of any kind (the discriminators
        a span states the query as)."""
        return Asked(self.q, self.norms | more)

    def hits(self, found: Sequence[ext.Discriminator], by_kind: bool = True
             ) -> list[ext.Discriminator]:
        """The discriminators of one text (``found``) that are the query (see the module
        docstring; of one of its kinds unless ``by_kind`` is False), or clauses whose
        words hold it.  For a value bound to a name, the same value stated alone
        counts where the text binds that name to no other value of its kind: the
        audit counts such a span a holder of the bound fact
        (:func:`compaction_audit.recall.factkeys.with_unbound_holders`)."""
        other = set() if self.name is None else {
            d.kind for d in found if bound_name(d) == self.name}
        return [d for d in found if self._matches(d, by_kind, other)]

    def _matches(self, d: ext.Discriminator, by_kind: bool, other: set[ext.Kind]) -> bool:
        if (not by_kind or self.kinds is None or d.kind in self.kinds) and self._same(d, other):
            return True
        if not by_kind and d.kind is ext.Kind.IDENTIFIER and self.q in d.norm.split()[1:]:
            return True  # "0051" of "migrations 0051" (usertest60 #13: "no span holds it")
        if d.kind not in ext.CLAUSE_KINDS:
            return False
        if self.q in d.norm.split():
            return True
        if self.kinds is None and " " in self.q and f" {_phrase(self.q)} " in (
                f" {_phrase(d.text)} "):  # a phrase of the clause, copied from the
            return True  # report (usertest62 B2: "Concurrent close operations" read none)
        # a clause typed shorter than a span states it ("do NOT use --force" of "Do NOT
        # use --force when pushing"): its words in order, inside the span's clause of the
        # same kind (usertest56 #6: no span held it, and the span texts were searched)
        return (self.kinds is not None and d.kind in self.kinds and any(
            f" {n} " in f" {d.norm} " for n in self.norms if n != self.q and " " in n))

    def _same(self, d: ext.Discriminator, other: set[ext.Kind]) -> bool:
        if self.name is not None and d.kind in BOUND_KINDS:
            own = bound_name(d)
            if own != self.name and (own is not None or d.kind in other or not self.alone):
                return False
        if d.norm in self.norms or d.text.lower() == self.q:
            return True
        if d.kind is not ext.Kind.QUANTITY or not (self.numbers or self.measures):
            return False
        number, _, unit = d.norm.partition(" ")
        return number in self.numbers or (
            bool(unit) and measure(number, unit) in self.measures)

    def follow(self, d: ext.Discriminator) -> ext.Discriminator:
        """What is followed up the fold chain for hit ``d``: ``d``, or for a value a
        bound query matched as stated alone, that value bound to the query's name (the
        query's text, ``d``'s norm): a summary keeps the pin only where it binds the
        name to it, as the audit judges it."""
        if self.name is None or self.bound is None or d.kind not in BOUND_KINDS \
                or bound_name(d) is not None:
            return d
        return ext.Discriminator(d.kind, self.bound, d.norm, d.start, d.end, d.line)


def reading(query: str) -> tuple[str, Asked, str | None]:
    """How ``query`` is read: (mode, what it asks, note).  ``discriminator`` when the
    extractor reads the whole query as one discriminator (its text or its norm is the
    query), with the kinds it reads it as; else ``reduced`` (to the clauses whose words
    hold it), with a note that says so, and no kinds."""
    q = query.strip().lower()
    found = ext.extract(query)
    whole = [d for d in found if d.text.strip().lower() == q or d.norm == q]
    if whole:
        bound = {(name, d.text) for d in whole if (name := bound_name(d)) is not None}
        name, text = bound.pop() if len(bound) == 1 else (None, None)
        quantities = [d.norm.partition(" ") for d in whole if d.kind is ext.Kind.QUANTITY]
        return "discriminator", Asked(
            q, frozenset({d.norm for d in whole} | {q}), frozenset(d.kind for d in whole),
            name, frozenset(n for n, _, unit in quantities if not unit),
            frozenset(m for n, _, unit in quantities if unit and (m := measure(n, unit))),
            text), None
    inner = ", ".join(f"{d.kind.value} {d.text!r}" for d in found)
    note = f"{query!r} is not a discriminator" + (f" (it holds {inner})" if inner else "")
    return "reduced", Asked(q, frozenset({q})), note
