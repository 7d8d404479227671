"""Codex's truncated copies of kept user messages (usertest61 A1, adv113 #1, #3, #5).

When the user messages Codex carries into a compaction's replacement history pass its
budget (about 20,000 tokens), it shortens the oldest one it keeps: the start and the end
of the message with ``…N tokens truncated…`` between them.  The message itself is gone
from the context; the copy is what the model reads of it.  Read as a new span of the
compaction's round, the copy held nothing at the fold, and every fact of the message
was listed as lost although the copy still held most of them.  The adapter judges the
fold by the summary and such copies together (:func:`is_copy`): a fact the copy keeps
survives, a fact the cut removed is lost, whichever message the copy was cut from and
whatever the marker's count says.  A copy cut at its end only (a trailing ``…`` or
``...``) is read the same way.  Linear in the text; pure standard library.
"""

from __future__ import annotations

import re

_MIDDLE_RE = re.compile(r"(?:…|\.\.\.)[ \t]*\d[\d,]*[ \t]+(?:tokens?|chars?|characters|bytes)"
                        r"[ \t]+truncated[ \t]*(?:…|\.\.\.)")
"""Codex's marker of a cut: a literal first, so that a search is linear (adv113 #3: a
pattern led by white space took 13 s on a run of 40,000 spaces)."""
_ELLIPSES = ("…", "...")
"""How a copy cut at its end ends."""


def without_marks(text: str) -> str:
    """``text`` with Codex's marks of a cut (and a trailing ellipsis) made paragraph
    breaks: the marker states no quantity of the summary, and the words on either side
    of a cut are no one clause ("did not…N tokens truncated…use --force": adv114 #1,
    #3)."""
    text = _MIDDLE_RE.sub("\n\n", text) if "truncated" in text else text
    body = text.rstrip()
    for tail in _ELLIPSES:
        if body.endswith(tail):
            return body[:-len(tail)] + "\n\n"
    return text


def is_copy(text: str) -> bool:
    """Whether a replacement-history user message is a copy Codex cut short: it holds
    the marker of a cut, or ends with an ellipsis."""
    if "truncated" in text and _MIDDLE_RE.search(text) is not None:
        return True
    return text.rstrip().endswith(_ELLIPSES)
