"""Paraphrase classes that survival's word-overlap test misses (issue 10, point 3).

A summary keeps a fact "in other words" in ways a majority of shared content words
cannot see.  Three classes, each a narrow rule on a clause discriminator (negation,
constraint, requirement) and one summary sentence or name:

* **Complementary scope** (:func:`kept_by_complement`): a clause that keeps some
  objects as they are ("already-closed annotations must remain unchanged") is kept
  by a summary sentence that applies a changing act only to the complementary set
  ("closes all open annotations"): the act's scope states the constraint.
* **Resolved state** (:func:`kept_as_resolved`): a clause that describes a missing
  thing ("the root layout doesn't render flash messages") is kept by a summary
  sentence that reports the thing added ("added a flash message display"): the fact
  was about a state the summary reports resolved.  Only a description (a subject, then
  "doesn't", "isn't", "has no" ...) counts, never a prohibition ("do not add a flash
  display" against "added a flash display" is a reversed rule).
* **Check name** (:func:`kept_by_check_name`): a rule that restricts some objects
  ("keep only messages belonging to current session") is kept by a summary that names
  a check over the same objects (``validate_session_message_ids``): a name made of a
  checking verb and at least two object words, all of them words of the rule.

Pure standard library; the caller (:mod:`compaction_audit.recall.survival`) passes its
stemmer, so the stems compare as survival's do.  Each rule's word lists are listed
below; docs/discriminators.md ("Paraphrase") gives the examples.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from compaction_audit.recall.clauses import NEGATION_WORDS, content_words

__all__ = ["SummaryNames", "kept_as_resolved", "kept_by_check_name", "kept_by_complement",
           "summary_names"]

Stem = Callable[[str], str]

_COMPLEMENTS: dict[str, tuple[str, ...]] = {}
for _a, _b in (("closed", "open"), ("existing", "new"), ("old", "new"),
               ("active", "inactive"), ("enabled", "disabled"), ("resolved", "unresolved"),
               ("read", "unread"), ("locked", "unlocked"), ("published", "unpublished"),
               ("archived", "unarchived"), ("completed", "pending")):
    _COMPLEMENTS[_a] = (*_COMPLEMENTS.get(_a, ()), _b)
    _COMPLEMENTS[_b] = (*_COMPLEMENTS.get(_b, ()), _a)
"""Qualifier pairs that split a set of objects in two (closed/open, existing/new)."""

_PRESERVED_RE = re.compile(
    r"\b(?:unchanged|untouched|intact|unmodified|unaffected|as[- ]is)\b"
    r"|\b(?:not|never|n't)\s+(?:be\s+)?(?:modified|changed|touched|altered|affected"
    r"|updated|rewritten)\b")
"""A clause that keeps its objects as they are."""
_CHANGING = frozenset({"close", "update", "remove", "delete", "modify", "change", "migrate",
                       "rewrite", "backfill", "archive", "reset", "edit", "overwrite",
                       "touch", "mark", "transition", "process", "open", "reopen",
                       "lock", "unlock", "resolve", "publish", "rename", "move", "convert",
                       "replace"})
"""Acts that change existing objects: restricting one of them to a set keeps the other
set unchanged ("closes all open annotations")."""


@lru_cache(maxsize=64)
def _stems(words: frozenset[str], stem: Stem) -> frozenset[str]:
    """``words`` as ``stem`` compares them (the word lists here are plain words)."""
    return frozenset(stem(w) for w in words)


@lru_cache(maxsize=256)
def _positive_sentences(low: str) -> tuple[tuple[str, ...], ...]:
    """The content words of each sentence of a lowercased summary that holds no
    negation word (split as survival splits)."""
    out = []
    for sent in re.split(r"[.!?;](?=\s)|\n", low):
        words = content_words(sent, 400)
        if words and not any(w in NEGATION_WORDS for w in words):
            out.append(tuple(words))
    return tuple(out)


def kept_by_complement(text: str, summary_low: str, stem: Stem) -> bool:
    """Whether clause ``text`` keeps a qualified set of objects as they are ("closed X
    must remain unchanged", "existing rows must not be modified") and one positive
    sentence of ``summary_low`` applies a changing act (:data:`_CHANGING`, before the
    qualifier) to the complementary set only ("closes all open X", "migrates new
    rows"; not "shows open X").

    The object is the word after the qualifier, compared by stem; the qualifier pairs
    are :data:`_COMPLEMENTS`.  False when the clause has no such qualifier."""
    low = text.lower()
    if not _PRESERVED_RE.search(low):
        return False
    tokens = re.findall(r"[a-z][a-z_]*", low)
    wanted = [(other, stem(tokens[i + 1])) for i, w in enumerate(tokens[:-1])
              if (other := _COMPLEMENTS.get(w)) and len(tokens[i + 1]) > 2]
    if not wanted:
        return False
    acted = _acted_on(summary_low, stem)
    return any(not acted.get(obj, _NONE).isdisjoint(others) for others, obj in wanted)


_NONE: frozenset[str] = frozenset()
_QUALIFIERS = frozenset(w for pair in _COMPLEMENTS.values() for w in pair)


@lru_cache(maxsize=256)
def _acted_on(summary_low: str, stem: Stem) -> dict[str, frozenset[str]]:
    """For a lowercased summary: object stem -> the qualifiers (:data:`_COMPLEMENTS`)
    that stand right before it, not first nor last in a positive sentence, after a
    changing act (:data:`_CHANGING`) of that sentence ("closes all open annotations":
    annotation -> {open}).  One pass over the summary; :func:`kept_by_complement`
    looks its objects up here (it scanned every sentence per clause: issue 11,
    class 5)."""
    changing = _stems(_CHANGING, stem)
    found: dict[str, set[str]] = {}
    for words in _positive_sentences(summary_low):
        stems = [stem(w) for w in words]
        acted = False
        for i, w in enumerate(words[1:-1], 1):
            acted = acted or stems[i - 1] in changing
            if acted and w in _QUALIFIERS:
                found.setdefault(stems[i + 1], set()).add(w)
    return {obj: frozenset(ws) for obj, ws in found.items()}


_STATE_NEG_RE = re.compile(
    r"^(?P<subject>.*?)\b(?:does\s+not|doesn['\u2019]t|do\s+not|don['\u2019]t|is\s+not"
    r"|isn['\u2019]t|are\s+not|aren['\u2019]t|has\s+not|hasn['\u2019]t|have\s+not"
    r"|haven['\u2019]t|has\s+no|have\s+no|lacks?|is\s+missing|are\s+missing)\b")
_NOT_A_SUBJECT = frozenset({"do", "don't", "never", "not", "no", "must", "should", "please",
                            "avoid", "and", "or", "but", "if", "when", "so", "then"})
_RULE_WORDS_RE = re.compile(r"\b(?:must|should|shall|never|only|required?|need\s+to"
                            r"|ha(?:ve|s)\s+to)\b")
_RESOLVING = frozenset({"add", "create", "implement", "write", "build", "configure", "fix",
                        "install", "enable", "register", "introduce", "include", "define",
                        "provide", "support", "set", "wire", "insert"})
"""Acts that supply a missing thing."""
_SAME_ACT = {"display": "render", "show": "render"}
"""Verbs of showing compared as one here ("doesn't render X" / "added an X display")."""


def _state_words(text: str) -> list[str] | None:
    """Content words after the negation of a descriptive clause ("the root layout
    doesn't render flash messages" -> ["render", "flash", "messages"]); None when the
    clause is no description: no subject before the negation, a modal anywhere, or a
    subject that opens like a command."""
    low = text.lower().strip(" -*`")
    m = _STATE_NEG_RE.match(low)
    if m is None or _RULE_WORDS_RE.search(low):
        return None
    subject = content_words(m.group("subject"), 8)
    first = m.group("subject").split()[:1]
    if not subject or (first and first[0] in _NOT_A_SUBJECT):
        return None
    return content_words(low[m.end():], 8)


def kept_as_resolved(text: str, negative: bool, summary_low: str, stem: Stem) -> bool:
    """Whether negative clause ``text`` describes a missing thing and one positive
    sentence of ``summary_low`` reports it supplied: an act of :data:`_RESOLVING` and
    every stem of the words after the negation (at least two; one may be missing when
    there are four or more).  Showing verbs compare as one (:data:`_SAME_ACT`)."""
    if not negative:
        return False
    words = _state_words(text)
    if words is None:
        return False
    need = {_norm(w, stem) for w in words if w not in NEGATION_WORDS}
    if len(need) < 2:
        return False
    allowed = 1 if len(need) >= 4 else 0
    sets, post = _resolved(summary_low, stem)
    # a sentence missing at most ``allowed`` of ``need`` holds one of any
    # ``allowed + 1`` of them: only the sentences that hold one of the rarest are tested
    rarest = sorted(need, key=lambda w: (len(post.get(w, ())), w))[:allowed + 1]
    seen: set[int] = set()
    for w in rarest:
        for i in post.get(w, ()):
            if i not in seen:
                seen.add(i)
                if len(need - sets[i]) <= allowed:
                    return True
    return False


def _norm(word: str, stem: Stem) -> str:
    """``word``'s stem, showing verbs as one (:data:`_SAME_ACT`)."""
    s = stem(word)
    return _SAME_ACT.get(s, s)


@lru_cache(maxsize=256)
def _resolved(summary_low: str, stem: Stem) -> tuple[list[frozenset[str]],
                                                      dict[str, list[int]]]:
    """The positive sentences of a lowercased summary that hold an act of
    :data:`_RESOLVING`, as stem sets (:func:`_norm`), and stem -> the positions of
    the sets that hold it.  Built once per summary: :func:`kept_as_resolved` tested
    every sentence per clause (issue 11, class 5)."""
    resolving = _stems(_RESOLVING, stem)
    sets: list[frozenset[str]] = []
    post: dict[str, list[int]] = {}
    for cand in _positive_sentences(summary_low):
        stems = frozenset(_norm(w, stem) for w in cand)
        if resolving & stems:
            for w in stems:
                post.setdefault(w, []).append(len(sets))
            sets.append(stems)
    return sets, post


_CHECK_VERBS = frozenset({"validate", "verify", "check", "ensure", "filter", "guard",
                          "restrict", "sanitize", "reject", "enforce", "authorize", "scope"})
"""A name's checking verb (``validate_``, ``filter_``, ``ensure_``)."""
_GENERIC_PARTS = frozenset({"id", "ids", "list", "map", "set", "data", "info", "by", "for",
                            "of", "to", "is", "has", "and", "the", "all", "in", "on", "from"})
"""Parts of a name that name no object (a type or a preposition)."""
_NAME_RE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}\b"
                      r"|\b[a-z]+(?:[A-Z][a-z0-9]+){2,}\b")
_CAMEL_SPLIT_RE = re.compile(r"_|(?<=[a-z0-9])(?=[A-Z])")
_RESTRICTING = frozenset({"only", "invalid", "valid", "filter", "ignore", "reject", "belong",
                          "belonging", "restrict", "prevent", "scoped", "allow", "forbid",
                          "deny", "exclude"})
"""Words that make a clause a restriction (a check's subject matter)."""


@dataclass(frozen=True, slots=True)
class SummaryNames:
    """The check names of one summary: the object stems of each (at least two)."""

    checks: tuple[frozenset[str], ...]
    lookup: frozenset[frozenset[str]] = frozenset()  # checks as a set, for look-ups


def summary_names(summary: str, stem: Stem) -> SummaryNames:
    """The check names of ``summary`` (snake_case or camelCase, three parts or more, one
    of them a checking verb of :data:`_CHECK_VERBS`), each as its object stems (parts
    that are neither the verb nor :data:`_GENERIC_PARTS`)."""
    checks: set[frozenset[str]] = set()
    for name in _NAME_RE.findall(summary):
        parts = [p.lower() for p in _CAMEL_SPLIT_RE.split(name) if p]
        if not _CHECK_VERBS & set(parts):
            continue
        objects = frozenset(stem(p) for p in parts if p not in _CHECK_VERBS
                            and p not in _GENERIC_PARTS and not p.isdigit())
        if len(objects) >= 2:
            checks.add(objects)
    return SummaryNames(tuple(sorted(checks, key=sorted)), frozenset(checks))


def kept_by_check_name(words: list[str], names: SummaryNames, stem: Stem) -> bool:
    """Whether a rule with content ``words`` (its norm's words) restricts objects
    (a stem of :data:`_RESTRICTING`) that a check name of the summary covers: every
    object stem of the name is a stem of the rule (hyphenated words split)."""
    if not names.checks:
        return False
    stems = {stem(p) for w in words for p in re.split(r"[-_]", w) if p}
    if not _stems(_RESTRICTING, stem) & stems:
        return False
    if len(stems) > SUBSETS_MAX_STEMS:  # (a clause has at most 6 content words)
        return any(objects <= stems for objects in names.checks)
    # the rule's subsets of two stems or more looked up among the summary's check names,
    # not every check name compared (adv79 #1: 20,000 rules against 20,000 names of one
    # summary, facts x names: 83 s for 1.3 MB)
    ordered = sorted(stems)
    return any(frozenset(c) in names.lookup for n in range(2, len(ordered) + 1)
               for c in itertools.combinations(ordered, n))


SUBSETS_MAX_STEMS = 12
"""Most stems of a rule whose subsets :func:`kept_by_check_name` looks up (4,083
subsets); a rule with more is compared with each check name."""
