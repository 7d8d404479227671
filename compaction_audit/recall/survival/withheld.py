"""A prohibition a summary keeps by keeping its object out of its act (adv126 #1).

"Never log the Authorization header" is kept by "The Authorization header must always be
redacted from logs", "Never commit the .env file" by "The .env file stays out of
commits", "Never log the refresh_token field" by "Always mask the refresh_token field in
logs".  Read as bags of words these sentences hold every word of the rule with no
negation: the rule "stated reversed", a CA304 error.  The test here reads the sentence's
shape, not its words: the rule's object (its last word) then, with only a verb of being,
a modal or "always" between, a withholding verb, a preposition and the rule's act as a
noun ("header must always be redacted from logs"); or a withholding verb, the object and
the act ("mask the refresh_token field in logs"); or "keep", the object, "out of" and
the act ("keep the .env file out of commits").  A sentence where the withholding verb
has another object ("We log the Authorization header and strip whitespace from logs")
is no such sentence: a bag of words could not tell them apart (adv113 #2 found that of
"forbidden" read anywhere in a sentence, reverted in 5bcf52c).  Pure standard library.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.extract import Discriminator, Kind

__all__ = ["withheld_sentences", "without_withheld"]

_WITHHOLD = (r"(?:redact|strip|mask|exclud|omit|scrub|filter|hid|censor|saniti[sz]"
             r"|anonymi[sz]|obfuscat|withh[eo]ld|suppress)\w*(?:\s+out)?"
             r"|(?:kept|keep|keeps|left|leave|stays?|remains?)\s+out")
"""A verb that keeps a thing out, in any form ("redacted", "masks", "kept out")."""
_BEING = (r"(?:(?:must|should|shall|will|is|are|was|were|has|have|had|be|being|been|get|gets"
          r"|got|always|now|also|to)\s+)*")
_PREP = r"(?:from|of|in|within|before)\s+(?:\S+\s+){0,2}?"
_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n")
_ANY_RE = re.compile(rf"\b(?:{_WITHHOLD}|out\s+of)\b")
_UNDONE_RE = re.compile(
    r"\b(?:not|never|no|nothing|none|without|cannot|longer|\w+n't|stop|stops|stopped"
    r"|stopping|disabl\w*|remov\w*|drop|drops|dropped|dropping|off|lift\w*|revert\w*"
    r"|undo\w*|undid|skip\w*|bypass\w*|except|excepting|but|unless|however|although"
    r"|though|whereas|while|only|instead|rather|until|if|whether)\b"
    r"|\?\s*$")
"""A sentence that undoes, narrows, questions or conditions its withholding ("asked to
stop redacting the header from logs", "masking in logs is disabled", "redacted from
logs, except that we log it on 401s", "in production but logged in staging",
"should the header be redacted from logs?": adv127 #1) keeps nothing: the rule may be
reversed there, and a flip is looked for in it as in any sentence."""
_WORD_RE = re.compile(r"\w+")


@lru_cache(maxsize=4096)
def _shapes(verb: str, last: str) -> re.Pattern[str]:
    """The three shapes of a sentence that keeps object ``last`` out of act ``verb``."""
    # the object with a plural ending, the act as its noun or participle ("logs",
    # "logging", "commits"), not a longer word ("login", "user": adv127 #1)
    obj = rf"{re.escape(last)}(?:s|es)?\b"
    act = rf"{re.escape(verb)}(?:s|es|ing|ging|ged|ed|d)?\b"
    return re.compile(
        rf"(?<![\w.-]){obj}\s+{_BEING}(?:{_WITHHOLD})\s+{_PREP}{act}"
        rf"|\b(?:{_WITHHOLD})\s+(?:\S+\s+){{0,5}}?{obj}\s+{_PREP}{act}"
        rf"|\b(?:keep|keeps|kept|leave|leaves|left)\s+(?:\S+\s+){{0,5}}?{obj}\s+out\s+"
        rf"of\s+(?:\S+\s+){{0,2}}?{act}")


@lru_cache(maxsize=256)
def _candidates(low: str) -> tuple[tuple[str, ...], dict[str, list[int]]]:
    """The sentences of lowercased ``low`` (cut after ``.!?;`` before a space and at line
    ends) that hold a withholding verb and nothing that undoes it (:data:`_UNDONE_RE`),
    and word -> the positions of those holding it:
    built once per summary, so each clause reads only the sentences holding its object
    (reading every sentence per clause was quadratic: issue 11, class 5)."""
    sentences = tuple(s for s in _SPLIT_RE.split(low)
                      if _ANY_RE.search(s) and not _UNDONE_RE.search(s))
    post: dict[str, list[int]] = {}
    for i, sentence in enumerate(sentences):
        for word in set(_WORD_RE.findall(sentence)):
            post.setdefault(word, []).append(i)
    return sentences, post


def withheld_sentences(d: Discriminator, summary: str) -> tuple[str, ...]:
    """The sentences of ``summary`` (lowercased) that keep negation ``d`` ("not VERB ...
    OBJECT") by keeping its object out of its act, each holding every word of the
    clause; () for any other clause (most)."""
    if d.kind is not Kind.NEGATION:
        return ()
    family, *words = d.norm.split()
    if family != "not" or len(words) < 2 or not words[0].isalpha():
        return ()
    sentences, post = _candidates(summary.lower())
    last = _WORD_RE.findall(words[-1])
    at = post.get(last[-1], ()) if last else ()
    if not at:
        return ()
    shape = _shapes(words[0], words[-1])
    return tuple(sentences[i] for i in at
                 if shape.search(sentences[i]) and all(w in sentences[i] for w in words[1:]))


def without_withheld(d: Discriminator, text: str) -> str:
    """``text`` lowercased with the sentences that keep negation ``d``
    (:func:`withheld_sentences`) blanked: the same text when there is none.  A flip is
    looked for in what remains ("The header is always redacted from logs. Log the header
    on errors." still states the rule reversed)."""
    held = withheld_sentences(d, text)
    if not held:
        return text
    low = text.lower()
    for sentence in held:
        low = low.replace(sentence, " ")
    return low
