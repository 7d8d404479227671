"""Where a finding or a lost fact is in the log, in words: ``line 7``, ``line 7 of
session.messages.json``, ``lines 7-12``, ``FILE:660`` (file names are log-derived and
written through the format's escaping)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction_audit.report.safe import printable, unsurrogate

if TYPE_CHECKING:
    from compaction_audit.report.model import SessionReport


def line_at(line: object, line_file: object = None,
            esc: Callable[[object], str] = printable) -> str:
    """``line 7``, or ``line 7 of session.messages.json`` when the line is one of
    another file than the trace (``line_file``, log-derived: written through ``esc``,
    the format's escaping)."""
    return f"line {line}" if not line_file else f"line {line} of {esc(line_file)}"


def asked_where(d: dict[str, Any], r: SessionReport | None = None,
                esc: Callable[[object], str] = printable) -> str:
    """``" (line 19)"`` or ``" (FILE:19)"``: where the person asked a lost fact again
    (``asked_again_line`` of the span that asked, ``asked_again_file``); without one,
    the line of its round record in ``r`` (:meth:`SessionReport.line_of_round`), else
    "".  A converted log's round lines are its own, its spans' the product's (usertest26b
    #5: "round 3 (line 5)" beside "synthetic-local-compaction.jsonl:22")."""
    line = d.get("asked_again_line")
    if line is not None:
        return f" ({fact_line(line, d.get('asked_again_file'), esc)})"
    return r.line_of_round(d.get("asked_again_round"), esc) if r is not None else ""


def fact_line(line: object, line_file: object = None,
              esc: Callable[[object], str] = printable) -> str:
    """Where a lost fact was stated or read again: ``line 660``, or ``FILE:660`` when
    the line is one of another file than the trace (``span_file``/``reread_file``: a
    Cline messages file beside the compaction file given, the log a converted trace
    came from; log-derived, written through ``esc``); "" when the line is unknown."""
    if line is None:
        return ""
    return f"{esc(line_file)}:{line}" if line_file else f"line {line}"


def lines_span(first: object, first_file: object, last: object, last_file: object,
               esc: Callable[[object], str] = printable) -> str:
    """The lines of a run of rounds: ``lines 7-12``, ``lines 7-12 of X`` (one file),
    ``line 712 of A to line 7 of B`` (two files; names through ``esc``)."""
    if first_file == last_file:
        return f"lines {first}-{last}" + (f" of {esc(first_file)}" if first_file else "")
    return f"{line_at(first, first_file, esc)} to {line_at(last, last_file, esc)}"


def line_path(trace: str, line_file: str | None) -> str:
    """The path of the file a line is in: ``trace`` when ``line_file`` is None or names
    the trace itself, else the file of that name beside the trace (Cline's companion
    files are found in the same folder: docs/adapters.md)."""
    if not line_file or trace == "-":
        return trace
    if unsurrogate(Path(trace).name) == line_file:
        return trace
    return os.path.join(os.path.dirname(trace), line_file)
