"""Survival's bindings: which names a summary binds each of its values to (usertest38 #3).

A child's value bound to a name (``lib2==1.2.0``: :mod:`compaction_audit.recall.bindings`)
survives only where the summary binds that name to that value, when the summary binds
the name to a value of the same kind at all (:func:`bound_kept`): "Pin lib2==1.3.0
because 1.2.0 breaks the serializer" names lib2 and 1.2.0 but binds lib2 to 1.3.0.  A
summary that binds the name to nothing keeps the rule for a value alone.

A summary's value is bound (:func:`summary_bindings`) to the name its own text starts
from (``lib2==1.3.0``, ``timeout_ms: 45000``) and to the word before it, after the
value before it, once the words that only link a name to its value are passed
(:data:`CONNECTORS`: "pinned lib2 to 1.2.0", "lib2 stays at 1.2.0", "lib2 == 1.2.0",
"lib2 1.2.0", "lib2 (1.2.0)"); a value listed right after another ("from 1.2.0 to
1.3.0", "45000 and 30000") shares its names.  A word of any other kind ("past",
"because") or a clause's end (``, . ;``, a line end) cuts the link: "Upgrade lib2 past
1.2.0" binds 1.2.0 to "past", not to lib2.  Each value looks back at most
:data:`GAP` characters: linear in the summary.  Pure standard library.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from compaction_audit.recall.bindings import bound_name
from compaction_audit.recall.extract import Discriminator, Kind, value_tokens
from compaction_audit.recall.versions import REQUIREMENT_RE, admits, measure, vtuple

__all__ = ["CONNECTORS", "GAP", "SENTENCE_MAX", "bound_kept", "changed_sentence",
           "merged_bindings", "summary_bindings"]

CONNECTORS = frozenset({
    "to", "at", "is", "are", "was", "were", "be", "been", "now", "still", "back", "as",
    "of", "on", "from", "version", "exactly", "stays", "stay", "stayed", "remains",
    "remain", "remained", "kept", "keep", "keeps", "pinned", "pin", "pins", "set",
    "fixed", "locked", "held", "raised", "lowered", "increased", "decreased", "reduced",
    "bumped", "upgraded", "downgraded", "changed", "updated", "moved", "reverted",
    "=", "==", ":", "->", "\u2192", "("})
"""Words that only link a name to the value after it."""
CONNECTORS_MAX = 4
"""Most such words between a name and its value."""
GAP = 96
"""Most characters a value looks back for its name."""
_NAME_RE = re.compile(r"[A-Za-z_](?:[\w.-]*\w)?")
_JOIN_RE = re.compile(r"\s*(?:(?:,|and|or|to|->|\u2192|/|&|then)\s*)+")
"""What lists a value right after another: it shares that one's names."""

Bindings = dict[str, tuple[Discriminator, ...]]
"""Name (lowercased) -> the values a summary binds to it, in order."""


def _gap_name(gap: str) -> str | None:
    """The name right before a value, in ``gap`` (the text between the value before it,
    or :data:`GAP` characters back, and the value): the last word once up to
    :data:`CONNECTORS_MAX` connectors are passed, when it is a name; None at a line
    end or a clause's end."""
    gap = gap[gap.rfind("\n") + 1:]
    skipped = 0
    for word in reversed(gap.split()):
        core = word.rstrip("=:")
        low = core.lower()
        if not core or (core == word and low in CONNECTORS and skipped < CONNECTORS_MAX):
            skipped += 1
            continue
        name = core.strip("\"'`")
        return name.lower() if _NAME_RE.fullmatch(name) else None
    return None


@lru_cache(maxsize=4096)
def summary_bindings(summary: str) -> Bindings:
    """Each name ``summary`` binds a value to (see the module docstring), lowercased,
    with the values (versions, quantities, scopes) bound to it."""
    body, values = value_tokens(summary)
    out: dict[str, list[Discriminator]] = {}
    prev_end = 0
    prev: frozenset[str] = frozenset()
    for d in values:
        own = bound_name(d)
        names = {own} if own is not None else set()
        if d.start >= prev_end:
            name = _gap_name(body[max(prev_end, d.start - GAP):d.start])
            if name is not None:
                names.add(name)
            if own is None and prev and _JOIN_RE.fullmatch(body, prev_end, d.start):
                names |= prev
        for name in names:
            out.setdefault(name, []).append(d)
        prev_end, prev = d.end, frozenset(names)
    return {name: tuple(ds) for name, ds in out.items()}


def _same_value(d: Discriminator, t: Discriminator) -> bool:
    """Whether the summary's value ``t`` states the child's value ``d`` (same kind):
    a quantity by its number (and unit, or the same measure, when ``d`` has one); a
    version by its norm, or by a requirement that admits it; a scope by its norm."""
    if d.kind is Kind.QUANTITY:
        number, _, unit = d.norm.partition(" ")
        t_number, _, t_unit = t.norm.partition(" ")
        if not unit or (t_number, t_unit) == (number, unit):
            return t_number == number and (not unit or t_unit == unit)
        base = measure(number, unit)
        return base is not None and bool(t_unit) and base == measure(t_number, t_unit)
    if t.norm == d.norm:
        return True
    if d.kind is Kind.VERSION and d.norm[:1].isdigit():
        m = REQUIREMENT_RE.search(t.text)
        return m is not None and admits(m.group(1), vtuple(m.group(2)), vtuple(d.norm))
    return False


def bound_kept(d: Discriminator, name: str, bindings: Bindings) -> bool | None:
    """Whether the summary whose :func:`summary_bindings` are ``bindings`` keeps ``d``,
    a value the child binds to ``name``: True when it binds ``name`` to the same value,
    False when it binds ``name`` only to other values of ``d``'s kind, None when it
    binds ``name`` to none (the rule for a value alone decides)."""
    held = [t for t in bindings.get(name, ()) if t.kind is d.kind]
    if not held:
        return None
    return any(_same_value(d, t) for t in held)


_END_RE = re.compile(r"[.!?;](?=\s)|\n")
"""Where a sentence ends (as the summary's index splits it)."""
SENTENCE_MAX = 300
"""Most characters of the sentence :func:`changed_sentence` quotes."""


def merged_bindings(texts: Iterable[str]) -> Bindings:
    """The :func:`summary_bindings` of ``texts`` in one table (what the texts a summary
    folded bind each name to), built once per summary for all its values."""
    out: dict[str, list[Discriminator]] = {}
    for text in texts:
        for name, ds in summary_bindings(text).items():
            out.setdefault(name, []).extend(ds)
    return {name: tuple(ds) for name, ds in out.items()}


def changed_sentence(d: Discriminator, summary: str,
                     sources: Callable[[], Bindings] | None = None) -> str | None:
    """The sentence of ``summary`` that states the name a child binds ``d`` to with
    another value, when the summary keeps ``d`` nowhere (:func:`bound_kept` False) and
    states that other value as the name's own (its text runs from the name:
    ``lib2==1.3.0``, ``read_timeout_ms=30000``, "set read_timeout_ms to 30000") and
    ``sources`` (a call giving :func:`merged_bindings` of the texts the summary folded,
    made only when the summary binds the name to another value) do not bind
    the name to it: the first
    such sentence, at most :data:`SENTENCE_MAX` characters; None otherwise.  A name the
    summary only mentions before a value ("lib2 1.3.0 was tried") changes nothing
    here: the value is lost, not restated; nor does a value a source set later
    ("max_batch_tokens=61440" after "max_batch_tokens=46080"): the summary kept the
    newer one."""
    name = bound_name(d)
    if name is None:
        return None
    held = [t for t in summary_bindings(summary).get(name, ()) if t.kind is d.kind]
    if not held or any(_same_value(d, t) for t in held):
        return None
    said = () if sources is None else sources().get(name, ())
    own = next((t for t in held if bound_name(t) == name
                and not any(s.kind is t.kind and _same_value(t, s) for s in said)), None)
    if own is None:
        return None
    body = value_tokens(summary)[0]  # the positions are the cleaned text's
    start = max(0, own.start - SENTENCE_MAX)
    for m in _END_RE.finditer(body, start, own.start):
        start = m.end()
    end = _END_RE.search(body, own.end, own.end + SENTENCE_MAX)
    return body[start:end.end() if end else own.end + SENTENCE_MAX].strip()[:SENTENCE_MAX]
