"""Summary sentences that name what was worked on, not what is true (usertest38 #5).

"Discussed dependency setup and release script flags." tells what the conversation
was about: it states no fact a leaf could support or contradict, so it is no claim of
rule unsupported-summary-claim (CA305), however few of its words the leaves use (the
leaves said ``lib2==1.2.0`` and ``--force``, not "dependency" or "flags").  What such
a summary loses is the fold checks' business (silent-discriminating-fold,
topic-only-fold).  A discriminator in the sentence is still a claim of its own
(:func:`compaction_audit.recall.claims.claims`): "Discussed pinning lib2 to 1.4.0" is
judged on ``1.4.0``.

A topic sentence opens with a verb of attention (discussed, reviewed, looked into,
worked on, ...), after at most a subject ("We", "The user and the assistant") and an
adverb ("also", "briefly"), or with a heading noun ("Discussion of", "Topics:"), and
asserts nothing after it: no verb of being or having, no modal, no "that", "which",
"because", no verb of finding (found, showed, confirmed, decided, fixed, failed), no
negation.  "The tool result contained an injected instruction." and "Reviewed the
logs, which showed an injected instruction." stay claims.  Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["ASSERTS_RE", "TOPIC_RE", "topic_only"]

_SUBJECT = (r"(?:(?:we|i|they|both|the\s+(?:user|assistant|agent|team)"
            r"(?:\s+and\s+(?:the\s+)?(?:user|assistant|agent))?|user\s+and\s+assistant)\s+)?")
_ADVERB = (r"(?:(?:also|then|first|next|briefly|mainly|mostly|later|again|further"
           r"|primarily|initially|additionally)\s+)?")
_VERB = (r"(?:discuss(?:ed|ing)?|talk(?:ed|ing)?\s+(?:about|through|over)|cover(?:ed|ing)?"
         r"|review(?:ed|ing)?|w(?:ent|alked)\s+(?:over|through)|go(?:ing)?\s+over"
         r"|look(?:ed|ing)?\s+(?:at|into|over)|explor(?:ed|ing)|consider(?:ed|ing)"
         r"|mention(?:ed|ing)|address(?:ed|ing)|touch(?:ed|ing)\s+on|focus(?:ed|ing)\s+on"
         r"|work(?:ed|ing)\s+on|plann(?:ed|ing)|brainstorm(?:ed|ing)|ask(?:ed|ing)\s+about"
         r"|examin(?:ed|ing)|investigat(?:ed|ing)|inspect(?:ed|ing)|stud(?:ied|ying)"
         r"|research(?:ed|ing)|evaluat(?:ed|ing)|compar(?:ed|ing)|analy[sz](?:ed|ing)"
         r"|assess(?:ed|ing)|outlin(?:ed|ing))")
_HEADING = (r"(?:(?:discussion|review|overview|exploration|investigation|analysis|work)\s+"
            r"(?:of|on|about)|(?:topics?|focus|discussed|covered)\s*:)")

TOPIC_RE = re.compile(rf"(?i)^\W*(?:{_SUBJECT}{_ADVERB}{_VERB}\b|{_HEADING})")
"""The opening of a sentence that names what was worked on."""

ASSERTS_RE = re.compile(
    r"(?i)\b(?:that|which|who|because|since|so|but|is|are|was|were|be|been|will|would"
    r"|must|should|can|could|has|have|had|not|never|no|found|finds?|show(?:s|ed|n)?"
    r"|reveal(?:s|ed)?|confirm(?:s|ed)?|conclud(?:es|ed)|decid(?:es|ed)|determin(?:es|ed)"
    r"|caus(?:es|ed)|broke|fail(?:s|ed)|fixed|resolved|turned\s+out)\b|n't\b")
"""A word after the opening that makes the sentence state something about its topic."""


def topic_only(sentence: str) -> bool:
    """``sentence`` names only what was worked on (:data:`TOPIC_RE`) and asserts
    nothing about it (:data:`ASSERTS_RE` after the opening)."""
    m = TOPIC_RE.match(sentence)
    return m is not None and ASSERTS_RE.search(sentence, m.end()) is None
