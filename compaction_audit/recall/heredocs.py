"""The here-documents of a shell command's text, found in one pass (adv128 #2).

A here-document is a line holding ``<<TAG`` (``<<-TAG``, ``<< 'TAG'``, ``<<"TAG"``),
its body, and the first later line that is ``TAG`` alone (spaces or tabs around it).
One regular expression with a lazy body (``^HEAD\\n(.*?)^TAG$``) read each opener with
no closing line to the end of the text: a command of 24,000 unclosed ``cat <<EOF``
lines (268 KB) took 88-128 s.  :func:`heredocs` indexes the lines that could close one
first (tag -> their offsets), then looks each opener's tag up there: linear in the
text (a bisection per opener).  Which opener of a line counts is as before: the last
``<<`` of the line whose tag has a closing line.
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
    closing line ends at ``end``.  An opener with no closing line after it is none (the
    next line is tried, as a regular expression search would)."""
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
        end = _closed_at(text, start, head_end, closers)
        if end is None:
            at = text.find("<<", head_end)
            continue
        yield start, head_end, end[0], end[1]
        at = text.find("<<", end[0])


def _closed_at(text: str, start: int, head_end: int,
               closers: dict[str, tuple[list[int], list[int]]]) -> tuple[int, str] | None:
    """(end of the closing line, tag) of the here-document opened on the line
    ``text[start:head_end]``: its last ``<<`` whose tag closes on a later line."""
    p = text.rfind("<<", start, head_end)
    while p >= 0:
        m = _OPENER_RE.match(text, p, head_end)
        if m is not None and (found := closers.get(m[2])) is not None:
            i = bisect_left(found[0], head_end + 1)
            if i < len(found[0]):
                return found[1][i], m[2]
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
