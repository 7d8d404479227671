"""Tell which log format a file is in: ``native``, ``claude-code`` or ``codex``.

Only the first :data:`SNIFF_LINES` non-blank lines are read.  ``native`` wins when any
of them is a ``compaction-audit/1`` session record or a ``round`` record; then Codex
(lines ``{"timestamp", "type", "payload"}``), then Claude Code.  For standard input,
which can be read only once, use :func:`peek_format`: it hands back the lines it read
followed by the rest, ready for the adapter's ``records(path, lines)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any, Literal

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io import claude_code, codex
from compaction_audit.io.lines import DEFAULT_LIMITS, Limits, iter_lines
from compaction_audit.io.records import json_error

Format = Literal["native", "claude-code", "codex"]
Lines = Iterable[tuple[int, bytes]]
Adapter = Callable[[str, Lines | None], Iterator[tuple[int, dict[str, Any]]]]

SNIFF_LINES = 50
SCHEMA_ID = "compaction-audit/1"

ADAPTERS: dict[str, Adapter] = {
    claude_code.SOURCE_FORMAT: claude_code.records,
    codex.SOURCE_FORMAT: codex.records,
}
"""The ``records(path, lines)`` function of each foreign format, by format name."""


def sniff_objects(first_objects: list[dict[str, Any]]) -> Format | None:
    """The format these first decoded lines look like, or None when none matches."""
    for obj in first_objects:
        kind = obj.get("type")
        if kind == "round" or (kind == "session" and obj.get("schema") == SCHEMA_ID):
            return "native"
    if codex.sniff(first_objects):
        return "codex"
    if claude_code.sniff(first_objects):
        return "claude-code"
    return None


def _decide(path: str, head: list[tuple[int, bytes]]) -> Format:
    objects: list[dict[str, Any]] = []
    first_error: LogError | None = None
    for number, raw in head:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            first_error = first_error or LogError(path, number, json_error(raw, exc.msg))
            continue
        if type(obj) is dict:
            objects.append(obj)
    found = sniff_objects(objects)
    if found is not None:
        return found
    if not head:
        return "native"  # empty input: the native reader says what it makes of it
    if first_error is not None:
        raise first_error
    if any("type" in obj for obj in objects):
        return "native"  # records of ours gone wrong: the native reader names the field
    raise LogError(path, head[0][0], "unrecognized log format: not compaction-audit/1, "
                   f"a Claude Code transcript or a Codex rollout (first {SNIFF_LINES} lines)",
                   "type")


def detect_format(path: str, limits: Limits = DEFAULT_LIMITS) -> Format:
    """The format of ``path`` from its first ~50 non-blank lines.

    Raises :class:`LogError` when no line matches any format (naming the first bad
    JSON line, if any, else the first line) or when the file cannot be read.  An
    empty file is ``native``.
    """
    lines = iter_lines(path, limits)
    try:
        head = list(islice(lines, SNIFF_LINES))
    finally:
        _close(lines)
    return _decide(path, head)


def peek_format(path: str, limits: Limits = DEFAULT_LIMITS, errors: list[LogError] | None = None
                ) -> tuple[Format, Iterator[tuple[int, bytes]]]:
    """Like :func:`detect_format`, and also return every line of ``path``, read once.

    The iterator yields the sniffed lines again, then the rest of the input: pass it
    to ``ADAPTERS[fmt](path, lines)``.  Works for ``-`` (standard input).  ``limits``
    and ``errors`` as for :func:`~compaction_audit.io.lines.iter_lines`.
    """
    lines = iter_lines(path, limits, errors)
    try:
        head = list(islice(lines, SNIFF_LINES))
        fmt = _decide(path, head)
    except BaseException:
        _close(lines)
        raise
    return fmt, chain(head, lines)


def _close(lines: Iterator[tuple[int, bytes]]) -> None:
    """Close a line generator early so that its file is closed now."""
    close = getattr(lines, "close", None)
    if close is not None:
        close()
