"""Codex's truncated copies of kept user messages (usertest61 A1).

When the user messages Codex carries into a compaction's replacement history pass its
budget (about 20,000 tokens), it shortens the oldest one it keeps: the start and the end
of the message with ``…N tokens truncated…`` between them.  Such a copy is the message
the person typed, kept; read as a new span, the message itself was folded and every fact
in it listed as lost although the copy still held it.  :func:`original` finds the
working-set message a copy was cut from, so the adapter keeps that message; what the cut
removed is not judged (docs/adapters.md says so).  A copy cut at its end only (a
trailing ``…`` or ``...``) is read the same way.  Pure standard library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

COPIES_MAX: Final = 8
"""Most truncated copies looked up per compaction (each lookup walks the unmatched user
messages of the working set once)."""
HEAD_MIN: Final = 16
"""Fewest characters a copy's start must keep to be matched with a message."""

_MIDDLE_RE = re.compile(r"\s*(?:…|\.\.\.)\s*\d[\d,]*\s+(?:tokens?|chars?|characters|bytes)"
                        r"\s+truncated\s*(?:…|\.\.\.)\s*")
_END_RE = re.compile(r"\s*(?:…|\.\.\.)\s*$")


def parts(text: str) -> tuple[str, str] | None:
    """The start and end a truncated copy kept (the end empty when it was cut at its
    end), or None when ``text`` is no truncated copy or keeps fewer than
    :data:`HEAD_MIN` characters of its start."""
    m = _MIDDLE_RE.search(text) or _END_RE.search(text)
    if m is None:
        return None
    head, tail = text[:m.start()].strip(), text[m.end():].strip()
    return (head, tail) if len(head) >= HEAD_MIN else None


def original(copy: tuple[str, str], bodies: Iterable[str]) -> str | None:
    """The first of ``bodies`` (the working set's unmatched user messages) that starts
    with the copy's start and ends with its end and is longer than both together."""
    head, tail = copy
    for body in bodies:
        b = body.strip()
        if len(b) > len(head) + len(tail) and b.startswith(head) and b.endswith(tail):
            return body
    return None
