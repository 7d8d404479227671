"""How a span names each fact it holds: in a question, negatively (as a rule's
object), or plainly (usertest38 #4).

A fact is held where a span in reach states it.  Two ways of naming a fact do not
state it:

* **A question** asks for a fact, it does not give it: "Which version of lib2 did we
  pin again?" names ``lib2`` and asks for the pin.  A name, a scope, a link or a
  clause in a sentence that ends with a question mark is *asked* (:func:`asked`); a
  value the question writes (a quantity, a version: "Was it port 8443?") is stated,
  whatever the answer.
* **A rule's object** is part of the rule: ``--force`` and ``release.sh`` in "Do NOT
  run release.sh with --force" are what the rule forbids.  A token inside a
  prohibition of its span (:func:`prohibits`: a negation or a requirement with a word
  that forbids; a double negation such as "never release without --confirm" forbids
  nothing) or right after a negation word ("release.sh will run without --force") is
  *negated* (:func:`negated`); once the span stating it so has left the context,
  naming it otherwise (``./release.sh --force``, the call that breaks the rule; a dry
  run's output naming the script) does not restate the rule.  The analysis
  (:mod:`compaction_audit.recall.analysis.stances`) and ``trace``
  (:mod:`compaction_audit.trace.held`) read both the same way.

Pure standard library over one text's discriminators (sorted by ``start``, as
:func:`~compaction_audit.recall.extract.extract` gives them) and its cleaned text
(:func:`~compaction_audit.recall.spantypes.clean_text`, where the offsets are): a sort
and a binary search per discriminator, a search of the few characters before each
token, and one search of a text for the distinct texts its questions name.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate

from compaction_audit.recall.fences import blank_code_spans, blank_fences
from compaction_audit.recall.kinds import CLAUSE_KINDS, Discriminator, Kind
from compaction_audit.recall.literals import Literals
from compaction_audit.recall.survival.words import _polarity_of

__all__ = ["NEGATED_BY_RE", "PROHIBITION_RE", "RULE_KINDS", "VALUE_KINDS", "asked",
           "in_question", "negated", "prohibits", "question_bounds", "ruled", "rules_over",
           "stance_of_token"]

RULE_KINDS = frozenset({Kind.NEGATION, Kind.REQUIREMENT})
"""Clause kinds that can forbid something (:data:`PROHIBITION_RE`): its tokens are
its objects."""

PROHIBITION_RE = re.compile(r"(?i)\b(?:never|do\s+not|don['\u2019]?t|must\s+not|mustn['\u2019]?t"
                            r"|should\s+not|shouldn['\u2019]?t|shall\s+not|may\s+not|avoid)\b")
"""The words of a prohibition ("do NOT run", "never use", "must not", "avoid"): a
negative clause without one describes ("No raise above 30000 occurred", "the layout
doesn't render flash messages"), and its tokens are facts of their own."""

VALUE_KINDS = frozenset({Kind.QUANTITY, Kind.VERSION})
"""Kinds a question states when it writes them ("Was it port 8443?")."""

_END_RE = re.compile(r"[.!?;](?=[\s\"'\u2019\u201d)\]]|$)|\n")
"""The end of a sentence: ``.``, ``!``, ``?`` or ``;`` before white space, a closing
quote or bracket, or the end; or a line end (not the dot of ``release.sh``, the
question mark of a URL's query)."""


def prohibits(c: Discriminator) -> bool:
    """``c`` is a prohibition: a negative clause of :data:`RULE_KINDS` (a double
    negation is none) with a word of :data:`PROHIBITION_RE`."""
    return (c.kind in RULE_KINDS and _polarity_of(c.norm, c.text)
            and PROHIBITION_RE.search(c.text) is not None)


def rules_over(found: Sequence[Discriminator]) -> list[Discriminator | None]:
    """Per discriminator of ``found``, the prohibition (:func:`prohibits`) of the same
    text whose extent holds it, for a token; None for a clause and for a token no
    such rule holds.  When several rules hold a token, the one reaching furthest."""
    return _clauses_over(found, filter(prohibits, found))


def _clauses_over(found: Sequence[Discriminator], clauses: Iterable[Discriminator]
                  ) -> list[Discriminator | None]:
    """Per discriminator of ``found``, the one of ``clauses`` whose extent holds it
    (the one reaching furthest), for a token; None otherwise."""
    rules = sorted(clauses, key=lambda c: c.start)
    if not rules:
        return [None] * len(found)
    starts = [c.start for c in rules]
    # the rule reaching furthest among those starting at or before each start
    furthest: list[Discriminator] = list(accumulate(rules, _further))
    out: list[Discriminator | None] = []
    for d in found:
        at = bisect_right(starts, d.start) - 1
        rule = furthest[at] if at >= 0 and d.kind not in CLAUSE_KINDS else None
        out.append(rule if rule is not None and d.end <= rule.end else None)
    return out


def _further(best: Discriminator, c: Discriminator) -> Discriminator:
    """The one of ``best`` and ``c`` that ends later (``best`` on a tie)."""
    return c if c.end > best.end else best


def stance_of_token(cleaned: str, found: Sequence[Discriminator], d: Discriminator
                    ) -> tuple[Discriminator | None, bool]:
    """(the prohibition holding token ``d``, or None; whether ``d`` is negated) for one
    token of the text ``cleaned`` whose discriminators are ``found``: what
    :func:`rules_over` and :func:`negated` say of it, in one pass over the clauses
    (``trace`` asks it of one token per span)."""
    inside = [c for c in found if c.kind in RULE_KINDS and c.start <= d.start
              and d.end <= c.end]
    rule = max(filter(prohibits, inside), key=lambda c: c.end, default=None)
    if d.kind in CLAUSE_KINDS:
        return None, False
    if rule is not None:
        return rule, True
    double = any(c.kind is Kind.NEGATION and not _polarity_of(c.norm, c.text) for c in inside)
    return None, not double and NEGATED_BY_RE.search(
        cleaned, max(0, d.start - _BEFORE), d.start) is not None


def ruled(found: Sequence[Discriminator]) -> list[bool]:
    """Per discriminator of ``found``: a token inside a prohibition of the same text
    (:func:`rules_over`)."""
    return [rule is not None for rule in rules_over(found)]


NEGATED_BY_RE = re.compile(r"(?i)\b(?:without|no|not|never|nor)(?:[\s`'\"(]+[\w./-]+){0,2}"
                           r"[\s`'\"(]+$")
"""A negation word right before a token, at most two words between and no sentence
punctuation ("release.sh will run without --force", "no `--force` flag"): a fragment
too short to be a clause that still states the token negatively."""

_BEFORE = 48
"""Characters before a token in which :data:`NEGATED_BY_RE` is looked for."""


def negated(cleaned: str, found: Sequence[Discriminator]) -> list[bool]:
    """Per discriminator of ``found`` (of the text ``cleaned``): a token stated
    negatively, the object of a prohibition (:func:`ruled`) or right after a negation
    word (:data:`NEGATED_BY_RE`), but not inside a double negation ("never release
    without --confirm" requires ``--confirm``)."""
    doubles = _clauses_over(found, (c for c in found if c.kind is Kind.NEGATION
                                    and not _polarity_of(c.norm, c.text)))
    return [d.kind not in CLAUSE_KINDS and (rule is not None or (
        double is None and NEGATED_BY_RE.search(cleaned, max(0, d.start - _BEFORE), d.start)
        is not None)) for d, rule, double in zip(found, rules_over(found), doubles, strict=True)]


_QUESTION_END_RE = re.compile(
    r"(?<![?!\uff1f\uff01])[?!\uff1f\uff01]++|[.;](?=[\s\"'\u2019\u201d)\]]|$)|\n")
""":data:`_END_RE`, where a run of marks ("?!", "??", "!") is one match, whole and
once (possessive, from the run's start: adv146 F2, a run of 40,000 "?" then a letter
took 70 s where each mark tried every shorter run); :func:`_run_ends` says whether it
ends a sentence."""

_AFTER_END_RE = re.compile(r"[\s\"'\u2019\u201d)\]]")
"""What may follow a mark that ends a sentence (or the end of the text)."""
_SYMBOL_RE = re.compile(r"[^\x00-\x7f\w\s]")
"""A symbol that is not ASCII ("🙂"), after which a "?" ends a question."""


def _run_ends(run: str, after: str) -> bool:
    """Whether a run of marks ``run`` (:data:`_QUESTION_END_RE`), followed by the
    character ``after`` ("" at the end), ends a sentence: a full-width question mark
    (U+FF1F) always; a run holding "?" before what may follow an end, a symbol that is
    not ASCII ("?🙂"; adv145 F3) or a full-width exclamation mark (U+FF01) in the
    run; a run of "!" before what may follow an end."""
    if "\uff1f" in run:
        return True
    ok = not after or _AFTER_END_RE.match(after) is not None
    if "?" in run:
        return ok or "?\uff01" in run or _SYMBOL_RE.match(after) is not None
    return ok and run[-1] == "!"


def has_question_mark(text: str) -> bool:
    """Whether ``text`` holds a question mark, plain or full-width: none, no question
    (:func:`question_bounds` need not scan it)."""
    return "?" in text or "\uff1f" in text


def question_bounds(cleaned: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``cleaned`` that ends with a question mark
    (the mark's offset is ``end``; :data:`_QUESTION_END_RE`), in order; a mark in code
    (a fenced block, an inline code span: Elixir's ``allow_nil?``) ends nothing."""
    if "`" in cleaned:
        cleaned = blank_code_spans(blank_fences(cleaned))
    out, start = [], 0
    for m in _QUESTION_END_RE.finditer(cleaned):
        run = m.group()
        if run[0] in "?!\uff1f\uff01":
            if not _run_ends(run, cleaned[m.end():m.end() + 1]):
                continue  # marks inside a sentence ("??x"): it goes on
            if has_question_mark(run):
                out.append((start, m.start()))
        start = m.end()
    return out


def asked(cleaned: str, found: Sequence[Discriminator]) -> list[bool]:
    """Per discriminator of ``found`` (of the text ``cleaned``): it starts in a
    question (:func:`question_bounds`), is no value (:data:`VALUE_KINDS`), and its
    text is nowhere in the rest of ``cleaned`` (extraction keeps a fact's first
    place only: "Which lib2 did we pin? lib2 stays at 1.2.0." states ``lib2``).

    The rest is searched once for all the distinct texts asked (:func:`_held_by`), not
    once per discriminator (adv88 #3: 16,000 names in one question over 1.3 MB of
    text took 10 s, 32,000 over 2.6 MB 37 s)."""
    if "?" not in cleaned:
        return [False] * len(found)
    bounds = question_bounds(cleaned)
    starts = [s for s, _ in bounds]
    inside = []
    for d in found:
        at = bisect_right(starts, d.start) - 1
        inside.append(d.kind not in VALUE_KINDS and at >= 0 and d.start < bounds[at][1])
    if not any(inside):
        return inside
    # the text less its questions, made once
    cuts = [0, *(x for s, e in bounds for x in (s, e + 1)), len(cleaned)]
    rest = " ".join(cleaned[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True))
    held = _held_by(list(dict.fromkeys(d.text for d, q in zip(found, inside, strict=True)
                                       if q)), rest)
    return [q and d.text not in held for d, q in zip(found, inside, strict=True)]


_DIRECT_TEXTS = 128
"""Up to this many distinct texts, :func:`_held_by` tests each with Python's ``in``
(about 1 ns a character of the text each, against about 120 for a step of the
automaton: the two cost the same near 150 texts)."""


def _held_by(texts: list[str], rest: str) -> set[str]:
    """The texts of ``texts`` (distinct) that ``rest`` holds, as ``in`` says: each
    searched with ``in`` for a few, in one pass over ``rest`` (:class:`~compaction_audit.
    recall.literals.Literals`) for more (adv88 #3: one search of ``rest`` per text was
    texts x characters)."""
    if len(texts) <= _DIRECT_TEXTS:
        return {t for t in texts if t in rest}
    return Literals(texts).found_in(rest)


def in_question(cleaned: str, start: int) -> bool:
    """Offset ``start`` of ``cleaned`` is in a question (:func:`question_bounds`)."""
    bounds = question_bounds(cleaned) if has_question_mark(cleaned) else []
    at = bisect_right([s for s, _ in bounds], start) - 1
    return at >= 0 and start < bounds[at][1]
