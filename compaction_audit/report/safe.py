"""Make untrusted text from logs safe to print: no markup, no terminal escapes, no CI
commands, bounded size.  docs/security.md states what is neutralized where.

Log text (ids, summaries, messages from a transcript) and file names are data.  Three
layers, all here so that every format and stream shares them:

- :func:`printable` (per field): control characters (C0, DEL, C1), every format
  character (bidi controls and marks, zero-width characters, joiners, tags, BOM),
  U+2028/2029, lone surrogates (undecodable bytes of a file name), private use,
  non-characters and variation selectors (:data:`_INVISIBLE`) become visible escapes
  such as ``\\x1b``; newlines become ``\\n`` unless asked for; text longer
  than :data:`MAX_TEXT` is cut to a prefix plus a hash (:func:`clip`).
  Renderers also pass it as plain ``rich.text.Text`` so that ``[bold]`` stays literal.
- :func:`clip_tree` does the same bounding (and surrogate escaping) for the JSON
  reports, and :func:`json_safe` writes the same invisible characters as ``\\uXXXX``
  string escapes there, so the decoded text stays exact.
- :func:`neutralize` (per stream, at the sink in ``commands/common.py``): the two rules
  by which the GitHub Actions runner executes a workflow command in a log line, a line
  that starts with ``::`` after leading whitespace and the legacy ``##[`` anywhere
  (also Azure Pipelines' ``##vso[`` and TeamCity's ``##teamcity[``), are broken by
  writing one character as an escape of the format (:class:`Escapes`).  GitLab's
  section markers and other CI log controls need ESC or CR, which never pass
  :func:`printable`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from compaction_audit.invisible import INVISIBLE
from compaction_audit.report.marks import MARKS

MAX_TEXT = 1024
"""Longest untrusted string (characters) any output shows; longer ones become a prefix
plus their length and a hash (:func:`clip`)."""

_INVISIBLE = INVISIBLE
"""The class of :data:`compaction_audit.invisible.INVISIBLE`, as this module's escapes
use it."""

_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f{_INVISIBLE}]")
"""Escaped by :func:`printable`: C0 but tab and newline, and :data:`_INVISIBLE`."""


STACKED_MARKS = 4
"""Combining marks (categories Mn and Me: :data:`~compaction_audit.report.marks.MARKS`)
kept in a row; more of them are escaped (adv94 #9: an id of "a" and 640 marks drew bars
through the HTML report's neighbouring rows and the terminal's lines; adv96 #5: 300
enclosing marks U+0489 pushed its columns off the screen).  Writing stacks two or three
deep (Vietnamese, Hebrew points, Indic vowel signs), Tibetan now and then four."""
_STACKED = re.compile(f"[{MARKS}]{{{STACKED_MARKS + 1},}}")


def _unstack(match: re.Match[str]) -> str:
    run = match.group()
    return run[:STACKED_MARKS] + "".join(
        f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
        for c in run[STACKED_MARKS:])


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` unchanged when it has at most ``limit`` characters, else its first
    characters, ``...[N chars, sha256 HHHHHHHHHHHH]`` (N the full length, H the first
    12 hex digits of the SHA-256 of its UTF-8 bytes) in at most ``limit`` characters,
    so two long values that differ only past the prefix stay distinguishable."""
    if len(text) <= limit:
        return text
    import hashlib  # here: OpenSSL's module, about 8 ms to load, for long values only

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    tail = f"...[{len(text)} chars, sha256 {digest}]"
    return text[:max(limit - len(tail), 0)] + tail


def printable(text: object, newlines: bool = False, limit: int = MAX_TEXT) -> str:
    """``text`` as a string, clipped to ``limit`` characters (:func:`clip`), with
    control and invisible characters made visible (see :data:`_CONTROL`), and combining
    marks past :data:`STACKED_MARKS` in a row escaped.

    Tabs are kept; newlines are kept only when ``newlines`` is true (else shown as
    ``\\n``) so a one-line field stays on one line; CR is always escaped (a CI runner
    reads it as a line end).
    """
    s = _CONTROL.sub(_escape, clip(str(text), limit))
    s = _STACKED.sub(_unstack, s)  # at most STACKED_MARKS combining marks in a row
    return s if newlines else s.replace("\n", "\\n")


def unsurrogate(text: str) -> str:
    """``text`` with lone surrogates (the undecodable bytes of a file name) written as
    ``\\xNN`` / ``\\uXXXX``, so that it encodes as UTF-8; nothing else changes."""
    return re.sub("[\ud800-\udfff]", _escape, text)


def clip_tree(value: Any, limit: int = MAX_TEXT) -> Any:
    """``value`` (JSON-able: dicts, lists, scalars) with every string, keys included,
    clipped to ``limit`` (:func:`clip`) and made encodable (:func:`unsurrogate`).
    Returns the same object when nothing changes.  Cost: one visit per element, so
    callers leave out the numeric series."""
    if isinstance(value, str):
        return unsurrogate(clip(value, limit)) if len(value) > limit or not value.isascii() \
            else value
    if isinstance(value, dict):
        # short ASCII strings and plain scalars, the bulk of a report, are kept here
        # without a call each (a 254 MB trace's report: 0.23 s -> 0.08 s, issue 14)
        return {(k if type(k) is str and len(k) <= limit and k.isascii()
                 else clip_tree(k, limit)):
                (v if (type(v) is str and len(v) <= limit and v.isascii())
                 or type(v) in _PLAIN else clip_tree(v, limit))
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [v if (type(v) is str and len(v) <= limit and v.isascii())
                or type(v) in _PLAIN else clip_tree(v, limit) for v in value]
    return value


_PLAIN = frozenset({int, float, bool, type(None)})
"""Types :func:`clip_tree` returns as they are (exact types: a subclass is visited)."""


_JSON_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a JSON escape of a character past the BMP is its surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_safe(data: bytes) -> bytes:
    """JSON bytes with the invisible characters of :data:`_INVISIBLE` (DEL, C1, format
    characters, separators, private use, non-characters, variation selectors) written
    as ``\\uXXXX`` escapes (a surrogate pair past the BMP), so the bytes show them
    while the decoded data stays exact.

    orjson already escapes C0 controls; these are valid raw in JSON but act on a
    terminal (C1) or reorder, hide or break lines in a terminal or an editor.
    ASCII data (one C pass to tell) is returned as is, and so is data with nothing to
    escape (one decode and one regex search).
    """
    if data.isascii():
        return data
    text = data.decode("utf-8", "surrogatepass")
    if _JSON_INVISIBLE_RE.search(text) is None:
        return data
    return _JSON_INVISIBLE_RE.sub(_json_escape, text).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Escapes:
    """How a format writes ``:`` and ``#`` when :func:`neutralize` breaks a command.

    ``line_commands``: the format's own lines are workflow commands (``github``), whose
    untrusted parts are %-escaped and cannot start a line; only ``##[`` is broken there.
    """

    colon: str
    hash: str
    line_commands: bool = False


TEXT = Escapes("\\x3a", "\\x23")
"""Terminal text, stderr lines: the same visible escapes as :func:`printable`."""
JSON = Escapes("\\u003a", "\\u0023")
"""JSON and SARIF: a string escape, so the decoded text is unchanged."""
XML = Escapes("&#58;", "&#35;")
"""JUnit XML and Markdown: a character reference, unchanged once parsed or rendered."""
GITHUB = Escapes("\\x3a", "\\x23", line_commands=True)
"""The ``github`` format: its own ``::error`` lines pass, ``##[`` is broken."""

_LEAD = (rb"(?:[ \t\x0b\x0c\x1c-\x1f]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
         rb"|\xe2\x81\x9f|\xe3\x80\x80|\x1b\[[0-9;?]*[ -/]*[@-~])*")
"""What may precede ``::`` on a line the runner runs, as UTF-8: white space (ASCII and
Unicode, as .NET's ``TrimStart`` trims, a little more), and ANSI CSI sequences (a
colour code must not hide a command from this check)."""
_LEAD_ONLY = re.compile(_LEAD)
_LINE_START = re.compile(rb"(\A" + _LEAD + rb"):(?=:)")
_AFTER_BREAK = re.compile(rb"([\r\n]" + _LEAD + rb"):(?=:)")
"""``::`` at the start of the text or after a line end (LF, CR: the runner splits at
both); group 1 is everything before the first colon."""
_LEGACY = re.compile(rb"#(?=#[A-Za-z]*\[)")
"""The first ``#`` of ``##[`` (GitHub legacy, Azure ``##[group]``), ``##vso[`` (Azure
logging commands) and ``##teamcity[`` (TeamCity service messages), in any case."""


def neutralize_bytes(data: bytes, escapes: Escapes = TEXT) -> bytes:
    """UTF-8 ``data`` with no line a CI runner would execute: no line (split at CR, LF
    or CRLF, as the runner reads them) starting with ``::`` after white space or ANSI
    codes, and no ``##[``, ``##vso[``, ``##teamcity[`` anywhere.  The first ``:`` of
    such a line start, and the first ``#`` of such a prefix, are written as
    ``escapes``.  Works on the bytes (no decoding: a large JSON report costs a few
    scans); data without ``::`` or ``##`` is returned as is."""
    if b"##" in data:
        hash_ = escapes.hash.encode()
        data = _LEGACY.sub(lambda _: hash_, data)
    if escapes.line_commands or b"::" not in data:
        return data
    colon = escapes.colon.encode()
    if b"\r" in data:  # rare in output: every CR of log text is escaped

        def escape(match: re.Match[bytes]) -> bytes:
            return match.group(1) + colon

        return _AFTER_BREAK.sub(escape, _LINE_START.sub(escape, data, count=1))
    return _line_starts_lf(data, colon)


def _line_starts_lf(data: bytes, colon: bytes) -> bytes:
    """The line-start rule for data whose lines end at LF only: visit the first ``::``
    of each line that has one (``bytes.find``, linear), escape it when only
    :data:`_LEAD` precedes it on its line."""
    parts: list[bytes] = []
    last, pos = 0, data.find(b"::")
    while pos != -1:
        start = data.rfind(b"\n", last, pos) + 1 or last
        if _LEAD_ONLY.fullmatch(data, start, pos):
            parts += [data[last:pos], colon]
            last = pos + 1
        end = data.find(b"\n", pos)
        pos = -1 if end == -1 else data.find(b"::", end)
    return b"".join([*parts, data[last:]]) if parts else data


def neutralize(text: str, escapes: Escapes = TEXT) -> str:
    """:func:`neutralize_bytes` for text (lone surrogates pass through unchanged)."""
    if "::" not in text and "##" not in text:
        return text
    return neutralize_bytes(text.encode("utf-8", "surrogatepass"), escapes).decode(
        "utf-8", "surrogatepass")


def safe_json(data: bytes) -> bytes:
    """JSON bytes (a document or JSON Lines) safe to write to any stream or file:
    :func:`json_safe` (invisible characters as ``\\uXXXX``), then
    :func:`neutralize_bytes` with :data:`JSON` escapes (``##[`` as ``\\u0023#[``).
    Only string escapes are added, so the data decodes to the same values.  Used by
    :class:`~compaction_audit.io.writer.LogWriter` for every record it writes."""
    return neutralize_bytes(json_safe(data), JSON)
