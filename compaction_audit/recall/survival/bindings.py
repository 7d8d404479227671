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
1.3.0", "45000 and 30000") or going on from it ("raised to 45000 then reverted to
30000") shares its names.  A word of any other kind ("past",
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
from compaction_audit.recall.versions import REQUIREMENT_RE, admits, measure, suffixed, vtuple

__all__ = ["CONNECTORS", "GAP", "SENTENCE_MAX", "MergedBindings", "bound_elsewhere", "bound_kept",
           "changed_sentence", "merged_bindings", "summary_bindings"]

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
_CHAIN_WORDS = frozenset({",", "and", "then", "later", "finally", "afterwards", "again"})
"""Words that go on to the same name's next value: "raised to 45000 then reverted to
30000", "set to 5, later back to 3" (usertest58 #2: the 30000 was bound to "then")."""
_GOING_ON = frozenset({"then", "later", "finally", "afterwards", "again"})
"""One of which the gap must hold: a contrast (", but 30000 is the connect timeout") or
a plain comma goes on to another name's value (adv104 #2)."""
_CHAIN_RE = re.compile(r",|[^\s,]+")
_CHAIN_LINKS = CONNECTORS | {"it", "them", "rolled", "rolls", "went", "goes"}
"""Words that link a value to the one going on from it, past :data:`CONNECTORS`: the
name's pronoun and the verbs of a change ("then reverted it to", "later rolled it back
to"; usertest59 #2)."""


_ENDS_RE = re.compile(r"\s*(?:[.,;:!?)]|$|(?:and|then|but)\b)")
"""What follows a value that goes on from the one before with no link word (", later
1.3.0."): the clause ends there."""


def _chained(gap: str, after: str) -> bool:
    """Whether ``gap``, the text between two values, goes on to the first one's name's
    next value: words of :data:`_CHAIN_WORDS`, one of :data:`_GOING_ON` among them, the
    rest (at most :data:`CONNECTORS_MAX`) words of :data:`_CHAIN_LINKS` ending in "to"
    or "at" ("then reverted to", ", then reverted it to", "and later rolled it back
    to"), or none where the value ends its clause (``after``, the text after it:
    "pinned at 1.2.0, later 1.3.0.", adv106 #6; not ", then again 30000 is the
    connect timeout": adv105 #2)."""
    words = _CHAIN_RE.findall(gap.lower())
    links = [w for w in words if w not in _CHAIN_WORDS]
    if _GOING_ON.isdisjoint(words) or len(links) > CONNECTORS_MAX:
        return False
    if not links:
        return _ENDS_RE.match(after) is not None
    return links[-1] in ("to", "at") and all(w in _CHAIN_LINKS for w in links)

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
            if own is None and prev and (_JOIN_RE.fullmatch(body, prev_end, d.start)
                                         or _chained(body[prev_end:d.start],
                                                     body[d.end:d.end + 8])):
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
    if d.kind is Kind.VERSION and d.norm[:1].isdigit() and not suffixed(d.norm):
        m = REQUIREMENT_RE.search(t.text)
        return m is not None and admits(m.group(1), vtuple(m.group(2)), vtuple(d.norm))
    return False


class _Values:
    """An index of values of one kind (a summary's or its sources' values bound to one
    name): :meth:`has` answers ``any(_same_value(d, t) for t in values)`` by sets (the
    numbers, (number, unit) pairs and measures of quantities; the norms) and a scan of
    the distinct requirements (``>=1.2``) only, so that a fold's K children asking of K
    values cost K, not K x K (adv88 #2)."""

    __slots__ = ("measures", "norms", "numbers", "pairs", "requirements")

    def __init__(self, values: Iterable[Discriminator]) -> None:
        self.norms: set[str] = set()
        self.numbers: set[str] = set()
        self.pairs: set[tuple[str, str]] = set()
        self.measures: set[tuple[str, float]] = set()
        reqs: set[tuple[str, str]] = set()
        for t in values:
            self.norms.add(t.norm)
            number, _, unit = t.norm.partition(" ")
            self.numbers.add(number)
            self.pairs.add((number, unit))
            if unit and (base := measure(number, unit)) is not None:
                self.measures.add(base)
            if (m := REQUIREMENT_RE.search(t.text)) is not None:
                reqs.add((m.group(1), m.group(2)))
        self.requirements = [(op, vtuple(v)) for op, v in sorted(reqs)]

    def has(self, d: Discriminator) -> bool:
        """Whether a value indexed states ``d`` (:func:`_same_value`, same kind)."""
        if d.kind is Kind.QUANTITY:
            number, _, unit = d.norm.partition(" ")
            if not unit:
                return number in self.numbers
            if (number, unit) in self.pairs:
                return True
            base = measure(number, unit)
            return base is not None and base in self.measures
        if d.norm in self.norms:
            return True
        if d.kind is Kind.VERSION and d.norm[:1].isdigit() and self.requirements \
                and not suffixed(d.norm):  # as _same_value: no requirement admits 1.2.0rc1
            ver = vtuple(d.norm)
            return any(admits(op, req, ver) for op, req in self.requirements)
        return False


def bound_kept(d: Discriminator, name: str, bindings: Bindings) -> bool | None:
    """Whether the summary whose :func:`summary_bindings` are ``bindings`` keeps ``d``,
    a value the child binds to ``name``: True when it binds ``name`` to the same value,
    False when it binds ``name`` only to other values of ``d``'s kind, None when it
    binds ``name`` to none (the rule for a value alone decides).  The old value of a
    change ("read_timeout_ms from 30000 to 45000") is none of those others: a summary
    that says "read_timeout_ms was 30000; raised to 45000" states the change (adv141
    #1)."""
    old = _old_values(d)
    held = [t for t in bindings.get(name, ()) if t.kind is d.kind
            and not any(_same_value(o, t) for o in old)]
    if not held:
        return None
    return any(_same_value(d, t) for t in held)


_FROM_RE = re.compile(r"(?i)[ \t]from[ \t]+(\S+)[ \t]+to[ \t]")
"""The old value (group 1) in a bound change's text, as the binder writes it
(:data:`compaction_audit.recall.bindings.BOUND_TEXT`: ``NAME from OLD to NEW``)."""


def _old_values(d: Discriminator) -> list[Discriminator]:
    """The old value a bound change states, of ``d``'s kind (``30000`` of
    ``read_timeout_ms from 30000 to 45000``); none for any other binding."""
    m = _FROM_RE.search(d.text)
    if m is None:
        return []
    return [t for t in value_tokens(m[1])[1] if t.kind is d.kind]


def bound_elsewhere(d: Discriminator, name: str, summary: str) -> bool:
    """Whether ``summary`` states ``d``'s value (a value the child binds to ``name``)
    only in tokens that bind it to another name: "Pin libbar==4.2.1" does not keep
    ``libfoo==4.2.1`` (adv108 #1: the value alone kept it, and the pin moved to another
    package passed the gate).  The token's own name counts (``NAME==VALUE``,
    ``key=value``, ``key: value``: :func:`~compaction_audit.recall.bindings.bound_name`),
    as for the spans that hold a fact (docs/discriminators.md, the lost table:
    "lib3==1.2.0" does not hold ``lib2==1.2.0``); a word before the value does not
    ("Deploy pinned to 4.2.1" may name the same thing in other words), and a name is the
    same written another way (:func:`same_name`)."""
    same = [t for t in value_tokens(summary)[1] if t.kind is d.kind and _same_value(d, t)]
    return bool(same) and all((own := bound_name(t)) is not None and not same_name(own, name)
                              for t in same)


def same_name(a: str, b: str) -> bool:
    """Whether names ``a`` and ``b`` are one name written two ways: equal in lower-case
    letters and digits (``ruamel.yaml``, ``ruamel-yaml``; ``readTimeoutMs``,
    ``read_timeout_ms``), or one ends or begins with the other, of three or more
    (``config.READ_TIMEOUT_MS``, ``ORDERS_READ_TIMEOUT_MS`` and ``read_timeout_ms``;
    ``python-dateutil`` and ``dateutil``; ``opencv-python`` and ``opencv``: adv109 #6).
    ``orders.replicas`` and ``payments.replicas`` are two names; an import name and
    its package name spelled apart (``sklearn``, ``scikit-learn``) are too."""
    x, y = _NOT_ALNUM_RE.sub("", a.lower()), _NOT_ALNUM_RE.sub("", b.lower())
    short, long = sorted((x, y), key=len)
    return short == long or (len(short) >= 3 and (long.startswith(short)
                                                  or long.endswith(short)))


_NOT_ALNUM_RE = re.compile(r"[^a-z0-9]")


_END_RE = re.compile(r"[.!?;](?=\s)|\n")
"""Where a sentence ends (as the summary's index splits it)."""
SENTENCE_MAX = 300
"""Most characters of the sentence :func:`changed_sentence` quotes."""


class MergedBindings(dict[str, tuple[Discriminator, ...]]):
    """:data:`Bindings` of the texts a summary folded (:func:`merged_bindings`), with
    what :func:`changed_sentence` found for each (summary, name, kind) against them,
    kept for the fold's other children (adv88 #2)."""

    __slots__ = ("changed",)

    def __init__(self, items: Iterable[tuple[str, tuple[Discriminator, ...]]] = ()) -> None:
        super().__init__(items)
        self.changed: dict[tuple[str, str, Kind], str | None] = {}


def merged_bindings(texts: Iterable[str]) -> MergedBindings:
    """The :func:`summary_bindings` of ``texts`` in one table (what the texts a summary
    folded bind each name to), built once per summary for all its values."""
    out: dict[str, list[Discriminator]] = {}
    for text in texts:
        for name, ds in summary_bindings(text).items():
            out.setdefault(name, []).extend(ds)
    return MergedBindings((name, tuple(ds)) for name, ds in out.items())


@lru_cache(maxsize=4096)
def _held(summary: str, name: str, kind: Kind) -> tuple[tuple[Discriminator, ...], _Values]:
    """The values of ``kind`` ``summary`` binds ``name`` to, in order, and their index:
    read once per (summary, name, kind), not per child value (adv88 #2)."""
    held = tuple(t for t in summary_bindings(summary).get(name, ()) if t.kind is kind)
    return held, _Values(held)


@lru_cache(maxsize=16)
def _body(summary: str) -> str:
    """The cleaned ``summary`` (the positions of its values are its), scanned once per
    summary, not per child value (adv88 #2); a few kept (a copy of each text: a
    fold's rows come together)."""
    return value_tokens(summary)[0]


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
    newer one.

    Past the test of ``d`` against the summary's values (a set lookup), the answer
    depends on (summary, name, kind) and the sources only: it is made once per
    :class:`MergedBindings` (a fold's), with the sources' values bound to the name
    indexed once (adv88 #2: a fold of K children pinning one name cost K x K value
    comparisons, 97 s for K = 4,000)."""
    name = bound_name(d)
    if name is None:
        return None
    held, index = _held(summary, name, d.kind)
    if not held or index.has(d):
        return None
    if sources is None:
        return _changed(summary, name, d.kind, ())
    said = sources()
    if not isinstance(said, MergedBindings):
        return _changed(summary, name, d.kind, said.get(name, ()))
    key = (summary, name, d.kind)
    if key not in said.changed:
        said.changed[key] = _changed(summary, name, d.kind, said.get(name, ()))
    return said.changed[key]


def _changed(summary: str, name: str, kind: Kind, said: Iterable[Discriminator]
             ) -> str | None:
    """:func:`changed_sentence` past its test of the child's value: the first value of
    ``kind`` the summary binds ``name`` to as its own that none of ``said`` (the
    sources' values bound to the name) states, and its sentence."""
    held, _ = _held(summary, name, kind)
    index = _Values(s for s in said if s.kind is kind)
    own = next((t for t in held if bound_name(t) == name and not index.has(t)), None)
    if own is None:
        return None
    body = _body(summary)  # the positions are the cleaned text's
    start = max(0, own.start - SENTENCE_MAX)
    for m in _END_RE.finditer(body, start, own.start):
        start = m.end()
    end = _END_RE.search(body, own.end, own.end + SENTENCE_MAX)
    return body[start:end.end() if end else own.end + SENTENCE_MAX].strip()[:SENTENCE_MAX]
