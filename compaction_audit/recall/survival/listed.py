"""Orders a summary keeps as a structure, not a sentence: the steps of a numbered list
and the values of an arrow chain (adv126 #5).

"Apply migration 0047 before deploying v4.2.1" is kept by a summary that lists "1.
Snapshot backup  2. Apply migration 0047  3. Deploy billing 4.2.1", and "5% first,
then 25%, then 100%" by "5% -> 25% -> 100%"; neither has a sequence marker between
prose words, so both orders were listed lost.  :func:`listed_orders` reads such a
chain of steps into the summary's sequence clause sets, one per place the chain can be
cut, with the side tags :mod:`~compaction_audit.recall.survival.order` reads: a child's
order matched there by its identifier-like words is kept when one cut has all of them
on their own side (one listed the other way round, or with a step between them moved,
is not).  They are matched by those words only, never
by shared plain words: a list is often an enumeration, and two plain words in two
items say too little about an order.

A chain is the items of one numbered list ("1." or "1)" at the start of a line, the
same indentation, each number one more than the last; at most :data:`MAX_STEPS`),
the items of an inline list ("(1) fix the bug, (2) add the digest"), or the parts of a
line split by " -> " or " → " that holds no code character.  Each step gives its first
:data:`STEP_WORDS` content words; at most :data:`MAX_CHAINS` chains.  Pure standard
library; a text without a list or an arrow costs two substring tests.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.clauses import content_words
from compaction_audit.recall.survival.order import FIRST, LISTED, SECOND

__all__ = ["MAX_CHAINS", "MAX_STEPS", "STEP_WORDS", "listed_orders"]

MAX_STEPS = 12
"""The steps of one chain read (a longer list is cut here)."""
MAX_CHAINS = 64
"""The chains of one summary read, first first: each gives a clause set per step, and a
summary of thousands of lists would give millions of words (a later list's order is
then lost, never kept)."""
STEP_WORDS = 8
"""Content words read from each step (a clause's side holds at most 8)."""
_ITEM_RE = re.compile(r"^([ \t]*)(\d{1,3})[.)][ \t]+(\S.*)$", re.MULTILINE)
_INLINE_RE = re.compile(r"\((\d{1,2})\)[ \t]*")
_ARROW_RE = re.compile(r"[ \t](?:->|\u2192)[ \t]")
_CODE_RE = re.compile(r"[(){}\[\];=<>\"'|&$#`]|::|\bfn\b|\bdef\b|\bfunction\b")


def _numbered(text: str) -> list[list[str]]:
    """The items of each numbered list of ``text``, in order."""
    chains: list[list[str]] = []
    indent, number = "", -1
    for m in _ITEM_RE.finditer(text):
        if m[1] == indent and int(m[2]) == number + 1 and chains:
            chains[-1].append(m[3])
        else:
            chains.append([m[3]])
        indent, number = m[1], int(m[2])
    return [c for c in chains if len(c) > 1]


def _inline(text: str) -> list[list[str]]:
    """The items of each inline list "(1) X (2) Y" of ``text``, one line at a time."""
    chains = []
    for line in text.splitlines():
        parts = _INLINE_RE.split(line)  # [before, "1", item, "2", item, ...]
        items: list[str] = []
        for k in range(1, len(parts) - 1, 2):
            if items and int(parts[k]) != int(parts[k - 2]) + 1:
                break
            items.append(parts[k + 1])
        if len(items) > 1:
            chains.append(items)
    return chains


def _arrows(text: str) -> list[list[str]]:
    """The parts of each line of ``text`` split by an arrow, lines with code left out."""
    return [parts for line in text.splitlines()
            if len(parts := _ARROW_RE.split(line)) > 1
            and not _CODE_RE.search(_ARROW_RE.sub(" ", line))]


@lru_cache(maxsize=4096)
def listed_orders(summary: str) -> tuple[frozenset[str], ...]:
    """One clause set per cut of each chain of steps ``summary`` lists (module
    docstring): the words of every step read, the steps before the cut tagged
    :data:`~compaction_audit.recall.survival.order.FIRST`, those after it
    :data:`~compaction_audit.recall.survival.order.SECOND` (a word on both sides is
    untagged), and :data:`~compaction_audit.recall.survival.order.LISTED`.  Empty for a
    text with no numbered item, "(1)" or arrow."""
    chains = []
    if "1" in summary:  # read as written (no letter case is read), each step lowercased
        chains += _numbered(summary) + (_inline(summary) if "(1)" in summary else [])
    if "->" in summary or "\u2192" in summary:
        chains += _arrows(summary)
    out = []
    for chain in chains[:MAX_CHAINS]:
        steps = [content_words(step.lower(), STEP_WORDS) for step in chain[:MAX_STEPS]]
        words = frozenset(w for step in steps for w in step)
        for cut in range(1, len(steps)):
            before = {w for step in steps[:cut] for w in step}
            after = {w for step in steps[cut:] for w in step}
            out.append(words | {LISTED} | {FIRST + w for w in before - after}
                       | {SECOND + w for w in after - before})
    return tuple(out)
