"""Which work item's section holds each line of a document
(:mod:`compaction_audit.recall.finished`).

A tracker prints a task as a header line, then its spec: ``○ spotter-gqc.5 · Add
project-level review page   [● P2 · OPEN]``; ``bd show A; echo ===; bd show B`` prints
several.  A header here is a line that

* is the document's first line, or follows a blank line or a separator line
  (``===``, ``---``), so a reference inside a spec ("acme-ui.1: the cache (closed)")
  starts nothing;
* starts, unindented, with a status mark (``○ ● ◐ ✓ ✗ ☐ ■ ◆ ★``) or a Markdown
  heading's ``#``, then the item: a bare ``PROJ-7: ...`` line (a plan's entry, a
  paragraph that names a task) is no header, nor is a list item (``-``, ``*``,
  ``•``, ``→``, a number) or a table row (``|``);
* goes on with a title separator (``·``, ``:``, ``|``, a dash, ``[``).

A section runs from its header to the next header, or to a Markdown heading that no
item leads (``## Constraints for all remaining work`` belongs to no task).
"""

from __future__ import annotations

import re

from compaction_audit.recall.finished.commands import LINE_CAP, WORK_ITEM

__all__ = ["items_of_lines"]

_MARKS = "\u25cb\u25cf\u25d0\u25d1\u25d2\u25d3\u25d4\u25d5\u2713\u2714\u2717\u2718" \
         "\u2610\u2611\u2612\u25a0\u25a1\u25c6\u25c7\u2605\u2606#"
_HEADER_RE = re.compile(
    rf"(?:[{_MARKS}]+[ \t]+)+({WORK_ITEM})[ \t]*(?:[·:|\[\u2014\u2013]|--?[ \t])")
_HEADING_RE = re.compile(r"#{1,6}[ \t]")
_SEPARATOR_RE = re.compile(r"[ \t]*(?:[=\-_~*\u2500\u2550]{3,}[ \t]*)?$")


def items_of_lines(text: str) -> dict[int, str]:
    """{1-based line of ``text``: the work item whose section holds it}; lines before
    the first header, or after a heading of no item, are left out."""
    out: dict[int, str] = {}
    current: str | None = None
    after_break = True  # the first line may be a header
    for number, row in enumerate(text.split("\n"), start=1):
        row = row[:LINE_CAP].rstrip("\r")
        header = _HEADER_RE.match(row) if after_break else None
        if header:
            current = header.group(1)
        elif _HEADING_RE.match(row):
            current = None
        if current is not None:
            out[number] = current
        after_break = _SEPARATOR_RE.match(row) is not None
    return out
