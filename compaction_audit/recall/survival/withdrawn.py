"""Survival's withdrawn rules: a summary that restates a child's rule and marks it
withdrawn does not keep it (adv108 #4).

"The user said 'Do NOT use --force when pushing' but later retracted it", 'The rule "Do
NOT use --force when pushing" was lifted.', "Do NOT use --force when pushing (rule
lifted later; ...)", "Obsolete: Do NOT use --force when pushing.", and the rule struck
through (``~~Do NOT use --force when pushing.~~``) hold every word of the rule, so the
rule was "kept", and a later ``git push --force`` passed the gate.  A rule the person
did lift is set aside before survival is asked
(:func:`compaction_audit.recall.analysis.lifted.without_lifted`); a summary that says
so of a rule the person never lifted has lost it.

A restatement of the rule (a clause of the summary of the same kind and polarity
holding every stem a flip needs, :func:`~compaction_audit.recall.survival.words.
_flip_stems`) is withdrawn when right after it (:data:`_AFTER_RE`, within
:data:`WINDOW` characters: closing quotes and a bracket allowed) the summary says it
was retracted, lifted, revoked, rescinded, withdrawn, superseded, overridden or is
obsolete or no longer applies, or when a label ending in a colon right before it says
so (:data:`_LABEL_RE`); the rule is withdrawn when every restatement is.  A rule that
survives only in text struck through (:func:`without_struck`) is not kept either.  A
marker elsewhere in the sentence does not count ("Freeze lifted, but do NOT deploy
with --force", "Do NOT deploy with --force, even though the freeze was lifted"), nor
one negated ("was not lifted"): those keep the rule.  Pure standard library; linear in
the summary (each window is bounded).
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.extract import Discriminator, extract_cached
from compaction_audit.recall.survival.words import _flip_stems, _polarity

WINDOW = 80
"""Most characters after (or before) a restated rule read for its withdrawal."""

_GONE = (r"(?:retracted|lifted|revoked|rescinded|withdrawn|superseded|overridden|overruled"
         r"|obsolete|no\s+longer\s+(?:applies|holds|stands|valid|in\s+(?:force|effect)))")
_DID = r"(?:retracted|lifted|revoked|rescinded|withdrew|overrode|overruled)"
_AFTER_RE = re.compile(
    r"""["'`\u2019\u201d)\]]*\s*\(?\s*,?\s*(?:but\s+|and\s+)?(?:"""
    # "... was (later) lifted", "(rule lifted later", "- obsolete"
    r"""(?:(?:the|this|that)\s+)?(?:(?:rule|restriction|ban|instruction|constraint)\s+)?"""
    r"""(?:(?:was|is|has\s+been|had\s+been|got|were|are)\s+)?"""
    r"""(?:(?:later|since|now|then|subsequently|eventually)\s+)?[-\u2013\u2014:]?\s*"""
    rf"""{_GONE}"""
    # "... but (the user) later retracted it"
    r"""|(?:(?:the\s+user|the\s+person|they|he|she|we|it)\s+)?"""
    r"""(?:(?:later|since|then|subsequently|eventually)\s+)?"""
    rf"""{_DID}\s+(?:it|this|that|the\s+rule|the\s+restriction|the\s+ban))\b""",
    re.IGNORECASE)
_LABEL_RE = re.compile(rf"\b{_GONE}\b[^.;:\n]{{0,24}}:\s*[\"'`\u2018\u201c(]*\s*$",
                       re.IGNORECASE)


def withdrawn(d: Discriminator, summary: str) -> bool:
    """Whether ``summary`` restates clause ``d`` only as withdrawn (module docstring);
    False when it does not restate it at all (the other survival rules decide)."""
    stems = _flip_stems(d.norm.split()[1:])
    if not stems:
        return False
    neg = _polarity(d)
    found = [t for t in extract_cached(summary) if t.kind is d.kind and _polarity(t) is neg
             and stems <= _flip_stems(t.norm.split()[1:])]
    return bool(found) and all(_marked(summary, t.start, t.end) for t in found)


def _marked(summary: str, start: int, end: int) -> bool:
    """The restatement at ``summary[start:end]`` is marked withdrawn."""
    return (_AFTER_RE.match(summary, end, min(len(summary), end + WINDOW)) is not None
            or _LABEL_RE.search(summary, max(0, start - WINDOW), start) is not None)


def without_struck(summary: str) -> str:
    """``summary`` with what it strikes through (each ``~~`` paired with the next, in
    order) blanked: the text a rule must survive in once struck rules are withdrawn
    (the caller asks survival again of it when it differs)."""
    spans = _struck(summary)
    if not spans:
        return summary
    parts, at = [], 0
    for s, e in spans:
        parts += [summary[at:s], " " * (e - s)]
        at = e
    return "".join([*parts, summary[at:]])


@lru_cache(maxsize=256)
def _struck(summary: str) -> tuple[tuple[int, int], ...]:
    """The spans of ``summary`` struck through: each ``~~`` paired with the next, in
    order (one pass: a run of unpaired marks costs nothing more)."""
    marks: list[int] = []
    at = summary.find("~~")
    while at >= 0:
        marks.append(at)
        at = summary.find("~~", at + 2)
    return tuple((marks[k], marks[k + 1] + 2) for k in range(0, len(marks) - 1, 2))
