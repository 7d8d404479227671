"""Make untrusted text from logs safe to print: no markup, no terminal escapes.

Log text (ids, summaries, messages from a transcript) is data.  Before it reaches a
terminal every control character (C0, DEL, C1, and the bidi overrides) is replaced by
a visible escape such as ``\\x1b``; renderers also pass it as plain ``rich.text.Text``
so that ``[bold]`` stays literal.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, newlines: bool = False) -> str:
    """``text`` as a string with control characters made visible.

    Tabs are kept; newlines are kept only when ``newlines`` is true (else shown as
    ``\\n``) so a one-line field stays on one line.
    """
    s = str(text)
    s = _CONTROL.sub(_escape, s)
    return s if newlines else s.replace("\n", "\\n").replace("\r", "\\r")


_JSON_INVISIBLE = ("\u2028", "\u2029", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                   "\u2066", "\u2067", "\u2068", "\u2069")


def json_safe(data: bytes) -> bytes:
    """JSON bytes with line separators and bidi controls written as ``\\uXXXX`` escapes.

    orjson already escapes control characters; these are valid raw in JSON but reorder
    or break lines when the file is shown in a terminal or an editor.
    """
    for ch in _JSON_INVISIBLE:
        raw = ch.encode()
        if raw in data:
            data = data.replace(raw, f"\\u{ord(ch):04x}".encode())
    return data
