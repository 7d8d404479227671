"""JSON text holding a lone surrogate escape (``"\\ud83d"`` with no low half after it).

JavaScript strings are UTF-16, and ``JSON.stringify`` writes a lone half of a surrogate
pair as an escape (ECMAScript 2019, "well-formed JSON.stringify"): a tool output cut
in the middle of an emoji by a Node product (Claude Code, Cline, Gemini CLI, opencode)
is written that way.  RFC 8259 section 8.2 leaves such a string's meaning open; orjson
refuses it ("no low surrogate in string"), which stopped a whole trace over one
character (adv67 #6).  :func:`loads_lone_surrogates` decodes such a text with the
standard library instead and puts U+FFFD (the replacement character) where each lone
half was, so every string read is valid Unicode (orjson writes it back, the reports
print it).  Only a text orjson rejected for a surrogate takes this path: the others
cost nothing more.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

NOT_SURROGATES: Any = object()
"""What :func:`loads_lone_surrogates` returns when the text's error is another one (or
the standard library rejects it too): the caller reports orjson's error as before."""

_LONE = re.compile("[\ud800-\udfff]")
"""A surrogate left in a string the standard library decoded: it pairs the halves that
form a character, so any half left is a lone one."""


def loads_lone_surrogates(raw: bytes | str, exc: orjson.JSONDecodeError) -> Any:
    """The value of the JSON text ``raw`` that orjson rejected with ``exc``, when the
    reason was a lone surrogate escape, with U+FFFD in place of each lone half; else
    :data:`NOT_SURROGATES`.  Never raises (a value nested past the interpreter's
    recursion limit, or a ``NaN`` the standard library would read, is
    :data:`NOT_SURROGATES` too)."""
    if "surrogate" not in exc.msg:
        return NOT_SURROGATES
    try:  # UTF-8 only: the standard library would read UTF-16 and UTF-32 bytes too
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return _replaced(json.loads(text, parse_constant=_no_constant))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return NOT_SURROGATES


def loads(raw: bytes | str) -> Any:
    """``orjson.loads(raw)``, with a lone surrogate escape read as U+FFFD
    (:func:`loads_lone_surrogates`); raises :class:`orjson.JSONDecodeError` as orjson
    does for any other text that is no JSON.  The readers' one way to decode a line
    or a document; the per-line loops of the native reader and its helpers call
    orjson themselves and this module only on its error (no call more per line)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        value = loads_lone_surrogates(raw, exc)
        if value is NOT_SURROGATES:
            raise
        return value


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity``, ``-Infinity``: no JSON (orjson rejects them; so does this)."""
    raise ValueError(f"{name} is not JSON")


def _replaced(value: Any) -> Any:
    """``value`` (decoded JSON) with every lone surrogate, in keys and strings, replaced
    by U+FFFD."""
    if type(value) is str:
        return _LONE.sub("\ufffd", value)
    if type(value) is list:
        return [_replaced(v) for v in value]
    if type(value) is dict:
        return {_LONE.sub("\ufffd", k): _replaced(v) for k, v in value.items()}
    return value
