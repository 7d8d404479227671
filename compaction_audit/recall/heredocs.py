"""The here-documents of a shell command's text, found in one pass (adv128 #2).

A here-document is a line holding ``<<TAG`` (``<<-TAG``, ``<< 'TAG'``, ``<<"TAG"``),
its body, and the first later line that is ``TAG`` alone (spaces or tabs around it).
One regular expression with a lazy body (``^HEAD\\n(.*?)^TAG$``) read each opener with
no closing line to the end of the text: a command of 24,000 unclosed ``cat <<EOF``
lines (268 KB) took 88-128 s.  :func:`heredocs` indexes the lines that could close one
first (tag -> their offsets), then looks each opener's tag up there: linear in the
text (a bisection per opener).  The opener of a line is its last ``<<TAG``; one that no
later line closes holds the rest of the text, as a shell reads it (the expression found
none there, so a document written and never closed was read as commands: adv129 #6).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator

__all__ = ["heredocs", "replace_heredocs"]

_OPENER_RE = re.compile(r"<<-?[ \t]*(['\"]?)(\w+)\1")
_CLOSER_RE = re.compile(r"(?m)^[ \t]*(\w+)[ \t]*$")


def heredocs(text: str) -> Iterator[tuple[int, int, int, str]]:
    """``(start, head_end, end, tag)`` of each here-document of ``text``, in order and
    not overlapping: its opening line is ``text[start:head_end]`` (no newline), its
    body runs to its closing line's end, ``end``, or to the end of the text when no
    line closes it (as a shell reads it: adv129 #6, a document written by ``cat
    <<EOFX > NOTES.md`` and never closed holds the rest of the call)."""
    at = text.find("<<")
    if at < 0:
        return
    closers: dict[str, tuple[list[int], list[int]]] = {}
    for m in _CLOSER_RE.finditer(text):
        starts, ends = closers.setdefault(m[1], ([], []))
        starts.append(m.start())
        ends.append(m.end())
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        head_end = text.find("\n", at)
        if head_end < 0:  # the opening line needs its newline
            return
        tag = _last_opener(text, start, head_end)
        if tag is None:
            at = text.find("<<", head_end)
            continue
        found = closers.get(tag)
        i = bisect_left(found[0], head_end + 1) if found else 0
        if found is None or i == len(found[0]):
            yield start, head_end, len(text), tag
            return
        yield start, head_end, found[1][i], tag
        at = text.find("<<", found[1][i])


def _last_opener(text: str, start: int, head_end: int) -> str | None:
    """The tag of the last ``<<TAG`` on the line ``text[start:head_end]``; None when no
    ``<<`` there opens one."""
    p = text.rfind("<<", start, head_end)
    while p >= 0:
        m = _OPENER_RE.match(text, p, head_end)
        if m is not None:
            return m[2]
        p = text.rfind("<<", start, p + 1)
    return None


def replace_heredocs(text: str, replace: Callable[[str, str, str], str]) -> str:
    """``text`` with each here-document (:func:`heredocs`) replaced by ``replace(head,
    tag, whole)`` (its opening line, its tag, the whole of it up to its closing line's
    end)."""
    out: list[str] = []
    last = 0
    for start, head_end, end, tag in heredocs(text):
        out += (text[last:start], replace(text[start:head_end], tag, text[start:end]))
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
