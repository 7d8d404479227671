"""Whether a person's question asks about a lost fact (the "asked again" of
:func:`compaction_audit.recall.harm.asked_again`).

A question takes no side: "Should concurrent close operations crash LiveView?" asks
about the lost rule "Concurrent close operations should not crash LiveView" though it
does not state it (usertest75 #5).  Two ways a question asks:

* it names the subject of a value bound to a name (:func:`subject_question`,
  :func:`asks_about`): "What version of requests did we pin?" for ``requests==2.32.3``;
* it shares a phrase and most of the words of a clause (:func:`asks_clause`, on the
  stems :func:`question_stems` reads once per user text).

A question is a sentence that ends with a question mark
(:func:`~compaction_audit.recall.stance.question_bounds`).
"""

from __future__ import annotations

import re
from itertools import pairwise

from compaction_audit.recall.bindings import bound_name
from compaction_audit.recall.clauses import NEGATION_WORDS, content_words
from compaction_audit.recall.kinds import CLAUSE_KINDS, Discriminator, Kind
from compaction_audit.recall.stance import has_question_mark, question_bounds
from compaction_audit.recall.survival.words import content_stems, stem

__all__ = ["Question", "asks_about", "asks_clause", "clause_stems", "question_stems",
           "subject_question"]

_VERSION_CUE_RE = re.compile(r"(?i)\b(?:versions?|pin|pins|pinned|pinning|release|"
                             r"upgrade[sd]?|downgrade[sd]?|bump(?:ed)?)\b")
"""Words that make a question naming a package a question about its version."""

_MAX_WORDS = 400
"""Most content words read of one clause or question (a pasted log is not a question)."""

_NAME_RE = re.compile(r"[\d_./-]")
"""A stem that names something no common word names (``read_timeout_ms``, ``30000``,
``v2.1``, ``--force``): a question holding it needs no phrase of the clause."""

_GENERIC = frozenset({"task", "repo", "repository", "project", "session", "work", "job"})
"""Stems of words a rule uses for the work at hand ("required for this task", "in this
repo"): a question naming that work in its own words ("for closing the review
session") replaces nothing (:func:`_replaced`)."""

Question = tuple[frozenset[str], frozenset[tuple[str, str]]]
"""One question's stems, and its pairs of stems next to each other, in their order."""


def subject_question(d: Discriminator) -> tuple[re.Pattern[str], bool] | None:
    """How a question names the subject of ``d``, a value bound to a name (its
    package: ``requests`` of ``requests==2.32.3``; its setting: ``read_timeout_ms`` of
    ``read_timeout_ms: 45000``): the name as a whole word, any case, and whether the
    question must also name versions (a package, whose name may be a plain word:
    "requests", "rich").  None for a value stated alone, and for a quantity or scope
    whose name is a plain word ("retries: 3", "port 8080"), which questions name for
    other reasons (usertest68 #5: "What version of requests did we pin?", after the
    summary dropped ``requests==2.32.3``, was no asked-again)."""
    name = bound_name(d)
    if name is None or (d.kind is not Kind.VERSION and name.isalpha()):
        return None
    return (re.compile(rf"(?i)(?<![\w.-]){re.escape(name)}(?![\w-])"),
            d.kind is Kind.VERSION)


def asks_about(subject: tuple[re.Pattern[str], bool], body: str) -> bool:
    """Whether a sentence of ``body`` that ends with a question mark names the subject
    :func:`subject_question` gives (with a word of versions where it says so)."""
    if not has_question_mark(body):
        return False
    name, cue = subject
    return any(name.search(body, start, end) and (
        not cue or _VERSION_CUE_RE.search(body, start, end))
        for start, end in question_bounds(body))


def question_stems(body: str) -> list[Question]:
    """Per question of ``body``, in order: its stemmed content words (negation words
    left out) and its pairs of consecutive stems, what :func:`asks_clause` compares;
    read once per user text (the caller keeps it)."""
    if not has_question_mark(body):
        return []
    out = []
    for start, end in question_bounds(body):
        seq = [stem(w) for w in content_words(body[start:end].lower(), _MAX_WORDS)
               if w not in NEGATION_WORDS]
        out.append((frozenset(seq), frozenset(pairwise(seq))))
    return out


def clause_stems(d: Discriminator) -> tuple[str, ...]:
    """The distinct content stems of clause ``d`` in order: its subject (the words of
    its text before those its norm keeps after the marker: "the staging cluster" of
    "The staging cluster must not be restarted"), then the norm's words after the
    marker ("restarted during business hours"); negation words, modals and the
    marker left out.  Empty for a clause whose norm keeps no word after the marker."""
    return _clause_parts(d)[0]


def _clause_parts(d: Discriminator) -> tuple[tuple[str, ...], int]:
    """:func:`clause_stems` of ``d``, and how many of them are the norm's words after
    the marker (the rest, first, are its subject's)."""
    after = content_stems(tuple(d.norm.split()[1:]))
    if not after:
        return (), 0
    marker = stem(d.norm.split()[0])
    subject: list[str] = []
    for s in content_stems(tuple(content_words(d.text.lower(), _MAX_WORDS))):
        if s == after[0]:
            break
        if s != marker:
            subject.append(s)
    else:  # the norm's words are not the text's (a rewritten norm): no subject
        subject = []
    seq = tuple(dict.fromkeys((*subject, *after)))
    return seq, len(dict.fromkeys(after))


def asks_clause(d: Discriminator, questions: list[Question]) -> bool:
    """Whether one of ``questions`` (:func:`question_stems` of a user text) asks about
    clause ``d``, whatever its polarity.  Three tests:

    * it holds as many of the clause's content stems (:func:`clause_stems`) as more
      than half of those after its marker, at least two (survival's sentence share,
      docs/discriminators.md): the subject's stems count toward the share without
      raising it ("Can I restart the staging cluster now?" asks about "The staging
      cluster must not be restarted during business hours"; adv146 F5: 4 of 6 stems
      were needed, it holds 3);
    * two of them next to each other in the clause's order (a phrase of the clause:
      "close operations", "crash LiveView"), or one that is a name (:data:`_NAME_RE`:
      "Was read_timeout_ms ever raised above 30000?" asks about the lost "Reverted
      read_timeout_ms to 30000");
    * no word of its own in place of one of the clause's (:func:`_replaced`: "Can you
      make changes to the README file?" for "Never make changes to the schema file";
      adv146 F4).

    Shared words alone are not enough (adv145 F2): "What changes did you make to the
    README file?" holds "make", "changes" and "file" of the lost rule, but no phrase
    of it; "Did the tests run?" holds both words of "run the tests before the deploy"
    in the other order.  A clause of fewer than two content stems, and any other kind,
    is never asked this way."""
    if d.kind not in CLAUSE_KINDS or not questions:
        return False
    seq, after = _clause_parts(d)
    if len(seq) < 2:
        return False
    stems, pairs = set(seq), set(pairwise(seq))
    need = min(len(seq), max(2, after // 2 + 1))
    names = {s for s in seq if _NAME_RE.search(s)}
    return any(len(stems & asked) >= need
               and (not pairs.isdisjoint(adjacent) or not names.isdisjoint(asked))
               and not _replaced(seq, stems, asked, adjacent)
               for asked, adjacent in questions)


def _replaced(seq: tuple[str, ...], stems: set[str], asked: frozenset[str],
              adjacent: frozenset[tuple[str, str]]) -> bool:
    """Whether the question (``asked``, its ``adjacent`` pairs) holds every stem of the
    clause (``seq``, its set ``stems``) but one, and puts a word of its own where that
    one stands, next to a word both share: "Can you make changes to the README file?"
    for "Never make changes to the schema file", "... debug logging in staging?" for
    "... debug logging in production" (adv146 F4: another object, not the rule's).
    Where more are missing the question says the rest in its own words ("Do we need a
    new service module for closing the review session?" asks about "no new service
    module required for this task")."""
    missing = [i for i, word in enumerate(seq) if word not in asked]
    if len(missing) != 1 or seq[missing[0]] in _GENERIC:
        return False
    i = missing[0]
    before = seq[i - 1] if i else None
    after = seq[i + 1] if i + 1 < len(seq) else None
    return any((a == before and b not in stems) or (b == after and a not in stems)
               for a, b in adjacent)
