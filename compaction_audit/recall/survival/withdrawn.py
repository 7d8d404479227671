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

A restatement of the rule (a clause of the summary of the same kind and polarity holding
every stem a flip needs, :func:`~compaction_audit.recall.survival.words._flip_stems`)
is withdrawn when right after it (:data:`_AFTER_RE`, within :data:`WINDOW` characters:
closing quotes and a bracket allowed) the summary says it was retracted, lifted,
revoked, rescinded, withdrawn, superseded, overridden or is obsolete or no longer
applies (or the next sentence says so of "that rule" or "this restriction", never of
"it", which may be the thing forbidden: :data:`_NEXT_RE`), or when a label ending in a
colon right before it says so (:data:`_LABEL_RE`); the rule is withdrawn when every
restatement is. A rule that survives only in text struck through
(:func:`without_struck`) is not kept either. A marker elsewhere in the sentence does not
count ("Freeze lifted, but do NOT deploy with --force", "Do NOT deploy with --force,
even though the freeze was lifted"), nor one negated ("was not lifted"), nor one the
same line takes back ("reinstated", "restored", "still applies": :data:`_BACK_RE`):
those keep the rule. Pure standard library; linear in the summary (each window is bounded).
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.extract import Discriminator, extract_cached
from compaction_audit.recall.fences import blank_code_spans
from compaction_audit.recall.survival.words import _flip_stems, _polarity

WINDOW = 80
"""Most characters after (or before) a restated rule read for its withdrawal."""

_GONE = (r"(?:retracted|lifted|revoked|rescinded|withdrawn|superseded|overridden|overruled"
         r"|obsolete)")
_DID = r"(?:retracted|lifted|revoked|rescinded|withdrew|overrode|overruled)"
_NO_LONGER = r"no[ \t]+longer[ \t]+(?:applies|holds|stands|valid|in[ \t]+(?:force|effect))"
_AUX = r"(?:was|is|has[ \t]+been|had[ \t]+been|got|were|are)[ \t]+"
_WHEN = r"(?:(?:later|since|now|then|subsequently|eventually)[ \t]+)?"
_ENDS = (
    # and there the clause ends (a full stop, a semicolon, a closing bracket, the line),
    # at most after "later", "since", "too", "as well" or "by the user": no "only for the
    # release branch", "the rate limit on CI", ", then reinstated", "? No - still in
    # force", "later for the tags branch only" (adv109 #4, adv110 #1, #2, #5)
    r"""(?=[ \t]*(?:(?:later|since|too|as[ \t]+well|by[ \t]+the[ \t]+user)[ \t]*)?"""
    r"""(?:[.;!)\]\n]|$))""")
_AFTER_RE = re.compile(
    # on the rule's own line: closing quotes or brackets, an opening one, ", but"
    r"""["'`\u2019\u201d)\]]*[ \t]*\(?[ \t]*[,:\-\u2013\u2014]?[ \t]*(?:(?:but|and)[ \t]+)?(?:"""
    # "... was (later) lifted", "(rule lifted later", "the rule was since revoked"
    r"""(?:(?:the|this|that)[ \t]+)?(?:(?:rule|restriction|ban|instruction|constraint)"""
    rf"""[ \t]+(?:{_AUX})?|{_AUX}){_WHEN}{_GONE}"""
    # "no longer applies", "this rule no longer holds"
    r"""|(?:(?:it|this|that|(?:the|this)[ \t]+rule)[ \t]+)?""" + _NO_LONGER
    # "... but (the user) later retracted it"
    + r"""|(?:(?:the[ \t]+user|the[ \t]+person|they|he|she|we)[ \t]+)?""" + _WHEN
    + rf"""{_DID}[ \t]+(?:it|this|that|the[ \t]+rule|the[ \t]+restriction|the[ \t]+ban))"""
    + _ENDS, re.IGNORECASE)
_NEXT_RE = re.compile(
    # the next sentence, naming the rule: "... pushing. That rule was later lifted."
    r"""["'`\u2019\u201d)\]]*[.;!?]["'`\u2019\u201d)\]]*[ \t]+"""
    r"""(?:that|this|the)[ \t]+(?:rule|restriction|ban|instruction|constraint)"""
    rf"""[ \t]+(?:{_AUX}{_WHEN}{_GONE}|{_NO_LONGER})""" + _ENDS, re.IGNORECASE)
_LABEL_RE = re.compile(
    # a label of its own at the start of a line or sentence: "Obsolete:", "Obsolete,
    # ignore:", "(Retracted):"; not "Superseded decisions:", not negated, not a noun's
    # bracket ("- Git (obsolete):", "Legacy flow [superseded]:": adv110 #4)
    r"""(?:^|\n|[.;!?][ \t])[ \t#*>\-]*[(\[]?[ \t]*(?P<neg>(?:not|never)[ \t]+)?"""
    rf"""(?:{_GONE}|{_NO_LONGER})(?:[ \t]*,[ \t]*[A-Za-z]+)?[ \t]*[)\]]?[ \t]*:"""
    r"""[ \t]*["'`\u2018\u201c(]*[ \t]*$""",
    re.IGNORECASE)


_BACK_RE = re.compile(
    r"\b(?:re-?instated?|re-?stored?|re-?applied|re-?imposed|reaffirmed"
    r"|back[ \t]+in[ \t]+(?:force|effect|place)|in[ \t]+force[ \t]+again"
    r"|still[ \t]+(?:applies|holds|stands|in[ \t]+(?:force|effect)))\b", re.IGNORECASE)
"""A rule put back after its withdrawal: the summary keeps it."""
_ACROSS_RE = re.compile(r"\n|[.;!?][ \t]")
"""A clause read across a line or sentence end: the label before it is another's."""


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
    """The restatement at ``summary[start:end]`` is marked withdrawn: right after it,
    or by a label of its own line right before it (a clause read across a line break
    has no such label)."""
    window = min(len(summary), end + WINDOW)
    after = (_AFTER_RE.match(summary, end, window)
             or _NEXT_RE.match(summary, end, window))
    if after is not None:
        return not _put_back(summary, after.end())
    if _ACROSS_RE.search(summary, start, end):  # "Retracted: none. Do NOT ..." (adv110 #3)
        return False
    label = _LABEL_RE.search(summary, max(0, start - WINDOW), start)
    return (label is not None and label.group("neg") is None
            and _BACK_RE.search(label.group()) is None)  # "Revoked, reinstated:"


def _put_back(summary: str, at: int) -> bool:
    """The rest of the line from ``at`` (within :data:`WINDOW` characters) says the rule
    was put back: "(was lifted; reinstated by the user", "(rule revoked) - reinstated
    after the incident", "That rule was lifted later; the user reinstated it"
    (adv111 #1-#4)."""
    stop = summary.find("\n", at, at + WINDOW)
    return _BACK_RE.search(summary, at, stop if stop >= 0 else at + WINDOW) is not None


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
    """The spans of ``summary`` struck through, as GitHub's Markdown reads ``~~``: an
    opening one before a character that is no white space, closed by the next one after
    such a character ("takes ~~30s ... takes ~~2 min" strikes nothing: adv109 #5).  One
    pass over the marks."""
    if "~~" not in summary:
        return ()
    masked = blank_code_spans(summary)  # same places; no "~~" in code (adv110 #6)
    marks: list[int] = []
    at = masked.find("~~")
    while at >= 0:
        marks.append(at)
        at = masked.find("~~", at + 2)
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    for at in marks:
        if opened is not None and not masked[at - 1].isspace():
            spans.append((opened, at + 2))
            opened = None
        elif opened is None and at + 2 < len(masked) and not masked[at + 2].isspace():
            opened = at
    return tuple(spans)
