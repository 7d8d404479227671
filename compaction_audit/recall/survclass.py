"""Survival classes: discriminators that survive in exactly the same summaries.

On a chain of folds each leaf is compared with every summary above it (issue 11,
class 5): n folds make n x n / 2 (leaf, summary) pairs, and most leaves state the same
kind of fact about their own object ("never deploy table_3_5 without a backup").  A
clause's survival reads its object's word only by looking it up in what the summary
offers, so a word that no summary text of the session holds (:class:`Absent`) decides
nothing: clauses that differ only in such words survive in the same summaries, and
each summary is compared with one of them (:meth:`Classes.ids`).  Token kinds (paths,
versions, numbers) keep one class each: most are ruled out without a comparison
(:func:`compaction_audit.recall.survival.anchors`).

Standard library only (the text helper process imports it: :mod:`.texthelper`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import lru_cache

from compaction_audit.recall import paraphrase
from compaction_audit.recall import survival as surv
from compaction_audit.recall.extract import CLAUSE_KINDS, Discriminator

_RUN_RE = re.compile(r"[a-z0-9_]+")
_RUN_SPLIT_RE = re.compile(r"([a-z0-9_]+)")
_SPLIT_RE = re.compile(r"[-_]")

LONG_RUN = 48
"""Runs of a summary longer than this (in characters) are searched whole for a word
(:meth:`Absent.__call__`): clause extraction cuts a summary into windows of 60
characters or more, so only such a run can leave a piece other than its start or end."""

LONG_TEXT_MAX = 1 << 20
"""Most characters of such long runs searched; past it no word counts as absent (every
clause keeps its own class: slower, same result)."""


def _variants(text: str) -> tuple[str, ...]:
    """The lowercased forms a summary is read in: ``str.lower`` (sentences), the same
    with one character per character (clause extraction keeps a character whose
    lowercase is longer), and without commas ("45,000" is the word 45000)."""
    low = text.lower()
    same = low if len(low) == len(text) else "".join(
        c.lower() if len(c.lower()) == 1 else c for c in text)
    return low, same, low.replace(",", "")


class Absent:
    """Which words no summary text holds.

    A word counts when it is made of ``[a-z0-9_]``, begins and ends with a letter or
    digit (never "v" and a digit: "v1.2" is read as "1.2"), holds a letter and a digit
    or an underscore (an identifier: always a content word, never a stopword, negation,
    modal, antonym or other listed word, and
    :func:`~compaction_audit.recall.survival.stem` leaves it as it is), and is neither
    the start nor the end of a run of those characters in any of the summaries
    (:func:`_variants`), nor inside a run longer than :data:`LONG_RUN`.  Every word a
    summary's index holds is a token of it, or the start or end of one cut by a window:
    such a word is never among them."""

    def __init__(self, summaries: Iterable[str]) -> None:
        runs: set[str] = set()
        for text in summaries:
            for variant in _variants(text):
                runs.update(_RUN_RE.findall(variant))
        self.starts = sorted(runs)
        self.ends = sorted(r[::-1] for r in runs)
        self.long = "\n".join(r for r in runs if len(r) > LONG_RUN)
        self.off = len(self.long) > LONG_TEXT_MAX
        self._seen: dict[str, bool] = {}
        """The answer for each word asked (clauses of a trace name the same objects)."""
        self.found: set[str] = set()
        """The words of :attr:`_seen` found absent."""

    def any_of(self, words: set[str]) -> bool:
        """Whether one of ``words`` is absent: set operations at C speed, and a call
        per word only for the words never asked before."""
        seen = self._seen
        if not words <= seen.keys():
            for word in words:
                if word not in seen:
                    self(word)
        return not words.isdisjoint(self.found)

    @staticmethod
    def _begins(table: list[str], word: str) -> bool:
        at = bisect_left(table, word)
        return at < len(table) and table[at].startswith(word)

    def __call__(self, word: str) -> bool:
        held = self._seen.get(word)
        if held is None:
            held = self._seen[word] = self._absent(word)
            if held:
                self.found.add(word)
        return held

    def _absent(self, word: str) -> bool:
        if (self.off or not word[0].isalnum() or not word[-1].isalnum()
                or (word[0] == "v" and word[1:2].isdigit())  # v1.2 is read as 1.2
                or not any(c.isdigit() or c == "_" for c in word)
                or not any("a" <= c <= "z" for c in word)):
            return False
        return not (self._begins(self.starts, word) or self._begins(self.ends, word[::-1])
                    or word in self.long)


UNASKED: frozenset[str] = frozenset({"\x00unasked"})
"""In :attr:`Classes.nears` for a class whose anchors were not asked yet (told apart by
identity)."""

_RESTRICTING = frozenset(paraphrase._RESTRICTING)
_JOINS = frozenset({"'", "\u2019", ","})
"""Characters that join a word to the next or the previous one when a text is read
(a contraction, a number with thousands separators)."""


class Classes:
    """A class number for each discriminator compared with the summaries ``summaries``:
    equal numbers survive in the same ones of them.

    A clause's class is its kind, norm and lowercased text with each absent word
    (:class:`Absent`) replaced by a mark numbered by first appearance (not next to an
    apostrophe or a comma, which join it to another word); a clause keeps
    its own class (kind, text, norm) when it holds none, when it keeps a set of objects
    as they are (a complement paraphrase reads the letters of its words) or restricts
    objects (a check-name paraphrase reads the parts of its words); any other
    discriminator has its own class.  ``summaries`` None: every discriminator has its
    own class."""

    def __init__(self, summaries: Iterable[str] | None) -> None:
        self.absent = Absent(summaries) if summaries is not None else None
        self.reps: list[Discriminator] = []
        """A discriminator of each class, by number."""
        self.clause: list[bool] = []
        """Whether each class is of a clause."""
        self.nears: list[frozenset[str] | None] = []
        """:meth:`near` of each class by number, :data:`UNASKED` until asked."""
        self._number: dict[tuple[object, ...], int] = {}
        self._own: dict[tuple[object, ...], int] = {}
        """(kind, text, norm) -> class number: :meth:`key` reads nothing else of a
        discriminator, and the texts of a trace repeat the same facts (on the 254 MB
        10,000 x 2,000 full-text grid cell, about 45,000 distinct of 139,000)."""
        self._ids: dict[int, tuple[tuple[Discriminator, ...], tuple[int, ...]]] = {}
        self._clauses: dict[int, tuple[tuple[Discriminator, ...], frozenset[int]]] = {}

    def ids(self, ds: tuple[Discriminator, ...]) -> tuple[int, ...]:
        """The class number of each of ``ds`` (kept per tuple: a text's discriminators
        are one tuple, compared with every summary above it)."""
        held = self._ids.get(id(ds))
        if held is not None and held[0] is ds:
            return held[1]
        out = tuple(self._class(d) for d in ds)
        self._ids[id(ds)] = (ds, out)
        return out

    def clause_ids(self, ds: tuple[Discriminator, ...]) -> frozenset[int]:
        """The distinct class numbers of the clauses of ``ds`` (kept per tuple)."""
        held = self._clauses.get(id(ds))
        if held is not None and held[0] is ds:
            return held[1]
        out = frozenset(c for c in self.ids(ds) if self.clause[c])
        self._clauses[id(ds)] = (ds, out)
        return out

    def _class(self, d: Discriminator) -> int:
        own = (d.kind, d.text, d.norm)
        number = self._own.get(own)
        if number is not None:
            return number
        key = self.key(d)
        number = self._number.get(key)
        if number is None:
            number = self._number[key] = len(self.reps)
            self.reps.append(d)
            self.clause.append(d.kind in CLAUSE_KINDS)
            self.nears.append(UNASKED)
        self._own[own] = number
        return number

    def near(self, number: int) -> frozenset[str] | None:
        """:func:`~compaction_audit.recall.survival.anchors` of class ``number``'s
        discriminator (:attr:`reps`), computed once per class."""
        near = self.nears[number]
        if near is UNASKED:
            near = self.nears[number] = surv.anchors(self.reps[number])
        return near

    def key(self, d: Discriminator) -> tuple[object, ...]:
        """What decides the class of ``d`` (see the class docstring)."""
        own = (d.kind, d.text, d.norm)
        absent = self.absent
        if absent is None or d.kind not in CLAUSE_KINDS:
            return own
        low = d.text.lower()
        words = set(_RUN_RE.findall(low))
        words.update(_RUN_RE.findall(d.norm))
        if not absent.any_of(words):  # no word to mark (most clauses): decided at C speed
            return own
        if paraphrase._PRESERVED_RE.search(low) or self._restricts(d.norm):
            return own
        marks: dict[str, str] = {}
        norm = _marked(d.norm, marks, absent)
        text = _marked(low, marks, absent)
        return (d.kind, norm, text, None) if marks else own

    @staticmethod
    def _restricts(norm: str) -> bool:
        """Whether a clause with this norm names a restriction
        (:func:`~compaction_audit.recall.paraphrase.kept_by_check_name` reads it)."""
        _, *words = norm.split()
        return any(_restricting(w) for w in words)


_STEMMED = frozenset(surv.stem(w) for w in _RESTRICTING)


@lru_cache(maxsize=1 << 16)
def _restricting(word: str) -> bool:
    """Whether a part of ``word`` (split at ``-`` and ``_``) stems to a restricting word."""
    return any(surv.stem(p) in _STEMMED for p in _SPLIT_RE.split(word) if p)


def _marked(text: str, marks: dict[str, str], absent: Absent) -> str:
    """``text`` with each absent word (:class:`Absent`; a run of ``[a-z0-9_]``, not
    next to an apostrophe or a comma, which join it to another word: "don't",
    "45,000") replaced by its mark in ``marks``, numbered by first appearance (``marks``
    gets the new ones).  One split at C speed, then a look at each word: was a
    ``re.sub`` with a Python callback per word (a match object and three calls each)."""
    parts = _RUN_SPLIT_RE.split(text)  # separator, word, separator, ..., separator
    seen = absent._seen
    changed = False
    for i in range(1, len(parts), 2):
        if parts[i - 1][-1:] in _JOINS or parts[i + 1][:1] in _JOINS:
            continue
        word = parts[i]
        mark = marks.get(word)
        if mark is None:
            held = seen.get(word)
            if not (held if held is not None else absent(word)):
                continue
            mark = marks[word] = f"\x00{len(marks)}"
        parts[i] = mark
        changed = True
    return "".join(parts) if changed else text
