"""The reader's words for a line the JSON decoder rejected, and for a file in an
encoding other than UTF-8 (no session state, standard library and orjson only).

:func:`json_error` is the one wording every reader uses ("bad JSON: ...", "truncated
last line: ...", "UTF-16 is not supported (convert to UTF-8)"), so that the one-line
error a user sees names the cause and not only orjson's message.
"""

from __future__ import annotations

import re

from compaction_audit.runtime import addrspace

ORJSON_OUT_OF_MEMORY = addrspace.ORJSON_OUT_OF_MEMORY


def not_out_of_memory(message: str) -> None:
    """Raise ``MemoryError`` when ``message`` (an ``orjson.JSONDecodeError``'s) is
    :data:`ORJSON_OUT_OF_MEMORY`: a valid line orjson had no memory to parse is out of
    memory, never "bad JSON", and ``--lenient`` must not skip it as a bad record
    (adv22b F2: under ``ulimit -v`` a valid 60 MiB line was skipped and 3 of 6 errors
    vanished)."""
    if message == ORJSON_OUT_OF_MEMORY:
        raise MemoryError(message)


def json_error(raw: bytes, message: str, pos: int | None = None) -> str:
    """The reader's wording for a line ``raw`` that orjson rejected with ``message``
    at ``pos`` (its character offset; None when the caller has not got it).

    "truncated last line" when the line lacks its newline and is JSON cut short
    (:func:`cut_short`), else "bad JSON": a complete last line that is malformed or
    nested too deeply is not called truncated (adv9); a line holding a lone CR
    (classic Mac line endings, which make the whole file one line) says so, since
    orjson's own message ("unexpected content after document") does not point at the
    cause.  Raises ``MemoryError`` for orjson's allocation failure
    (:func:`not_out_of_memory`).
    """
    not_out_of_memory(message)
    unsupported = encoding_error(raw)
    if unsupported is not None:
        return unsupported
    what = "truncated last line" if cut_short(raw, message, pos) else "bad JSON"
    bad = not_utf8(raw, lines=False)
    if what == "bad JSON" and "not valid UTF-8" in message:
        message = message if bad is None else bad
    if bad is not None and what == "bad JSON" and _binary(raw):
        # binary bytes (an executable, a file compressed twice) hold CR bytes too: they
        # are no text, whatever their line endings (adv78 #7: "classic Mac line
        # endings" of an ELF file and of a gzip inside a gzip)
        return f"bad JSON: {bad}: binary data, not text (compressed twice? an executable?)"
    if raw.count(b"\r") > raw.count(b"\r\n"):
        return (f"bad JSON: lines end with a lone CR (classic Mac line endings); "
                f"use LF or CRLF ({message})")
    if (what == "bad JSON" and message.startswith("unexpected control character in string")
            and raw.rstrip(b"\r\n") != raw and pos == len(raw.rstrip(b"\r\n"))):
        # adv56: `{"bad` and its newline: the string runs to the end of the line
        return "bad JSON: unterminated string (a quote is missing before the line ends)"
    if what == "bad JSON" and pos is not None and (named := _not_a_number(raw, pos)):
        return f"bad JSON: {named}"
    if what == "bad JSON" and pos is not None and message.startswith("number is infinity"):
        return f"bad JSON: {_too_large(raw, pos)}"
    return f"{what}: {message}"


_NON_NUMBERS = ("NaN", "Infinity", "-Infinity")
_FIELD_SCAN = 1 << 20
"""Characters of a line read to name the field a NaN stands in (past them: no field)."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+"|[{}\[\]:,]')


def _field_at(text: str, pos: int) -> str | None:
    """The key whose value holds ``text[pos]``: the innermost object's key at that
    point, through the arrays below it (``retained`` for ``[["a", NaN]]``), from the
    strings and brackets before ``pos``; None when it is in no object's value or the
    text before it is longer than :data:`_FIELD_SCAN`."""
    if pos > _FIELD_SCAN:
        return None
    stack: list[list[str | None]] = []  # per open container: [kind, its current key]
    expect_key = False
    for m in _TOKEN.finditer(text, 0, pos):
        tok = m.group()
        if tok == "{":
            stack.append(["{", None])
            expect_key = True
        elif tok == "[":
            stack.append(["[", None])
        elif tok in "}]":
            if stack:
                stack.pop()
        elif tok == ",":
            expect_key = bool(stack) and stack[-1][0] == "{"
        elif tok == ":":
            expect_key = False
        elif expect_key and stack and stack[-1][0] == "{":
            stack[-1][1] = tok[1:-1]
    for kind, key in reversed(stack):
        if kind == "{":
            return key
    return None


def _text_to(raw: bytes, pos: int) -> str:
    """``raw`` decoded at least up to character ``pos`` and 16 past it: its first
    :data:`_FIELD_SCAN` bytes when they hold that many characters, else the whole line
    (``pos`` counts characters, orjson's, and multi-byte text has fewer characters than
    bytes: adv146 F7, a number after 600,000 "é" read as empty, in field 'text')."""
    text = raw[:_FIELD_SCAN + 16].decode("utf-8", "replace")
    return text if len(text) > pos + 16 or len(raw) <= _FIELD_SCAN + 16 else raw.decode(
        "utf-8", "replace")


def _not_a_number(raw: bytes, pos: int) -> str | None:
    """``"NaN is not JSON (write null for no value: Python's json.dumps writes NaN
    unless allow_nan=False), in field 'retained'"`` when the decoder stopped at NaN,
    Infinity or -Infinity (usertest71 #10: what a Python logger writes by default read
    "unexpected character" with no field); the field is the key whose value holds it
    (:func:`_field_at`; adv139 #7: the last key before it named another object's
    field).  None otherwise."""
    text = _text_to(raw, pos)
    word = next((w for w in _NON_NUMBERS if text.startswith(w, pos)), None)
    if word is None:
        return None
    if word == "Infinity" and pos and text[pos - 1] == "-":
        word = "-Infinity"
    key = _field_at(text, pos)
    field = f", in field '{key[:64]}'" if key else ""
    return (f"{word} is not JSON (write null for no value: Python's json.dumps writes "
            f"{word} unless allow_nan=False){field}")


_NUMBER_CHARS = frozenset("0123456789+-.eE")


def _too_large(raw: bytes, pos: int) -> str:
    """``"number 1e400 is past the largest double (about 1.8e308), in field 'tokens'"``
    for orjson's "number is infinity when parsed as double" at ``pos`` (the number's
    start), naming the field as :func:`_not_a_number` does (adv144 F8: the field was not
    named); a number of more than 32 characters is shown cut, with its length, and a
    negative one is below the lowest double.  ``pos`` counts characters (orjson's), so
    the line is decoded up to it (:func:`_text_to`; adv145 F7, adv146 F7: the number
    read as empty past the first MiB)."""
    text = _text_to(raw, pos)
    start = min(pos, len(text))
    while start and text[start - 1] in _NUMBER_CHARS:
        start -= 1
    end = start
    while end < len(text) and text[end] in _NUMBER_CHARS:
        end += 1
    key = _field_at(text, start)
    field = f", in field '{key[:64]}'" if key else ""
    number = text[start:end]
    shown = number if len(number) <= 32 else f"{number[:24]}... ({len(number):,} characters)"
    where = ("below the lowest double (about -1.8e308)" if number.startswith("-") else
             "past the largest double (about 1.8e308)")
    return f"number {shown} is {where}{field}"


_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x0c")


def _binary(raw: bytes) -> bool:
    """``raw`` looks like binary data, not text: a NUL byte, gzip's or zstd's magic
    number at its start, or one byte in twenty a control character other than tab,
    newline, CR and form feed."""
    if b"\x00" in raw or raw.startswith((b"\x1f\x8b", b"\x28\xb5\x2f\xfd")):
        return True
    head = raw[:4096]
    return len(head) - len(head.translate(None, _CONTROL)) >= max(1, len(head) // 20)


def not_utf8(data: bytes, lines: bool = True) -> str | None:
    """``"not UTF-8 (byte 0xff at line 3, byte 7)"`` for the first byte of ``data``
    that is not UTF-8 (``lines`` False, for one line of a trace: ``"not UTF-8 (byte
    0xff at byte 7 of the line)"``), else None.  orjson's words ("str is not valid
    UTF-8: surrogates not allowed") named neither the byte nor where it is."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = f"byte 0x{data[exc.start]:02x}"
        if not lines:
            return f"not UTF-8 ({byte} at byte {exc.start + 1:,} of the line)"
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        return f"not UTF-8 ({byte} at line {line:,}, byte {exc.start - start + 1:,})"
    return None


BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
        (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
"""The byte order marks of UTF-32 and UTF-16 (little and big endian), longest first."""


def encoding_error(data: bytes) -> str | None:
    """``"UTF-16 is not supported (convert to UTF-8)"`` (or UTF-32) when ``data`` starts
    with that encoding's byte order mark, else None.  orjson's own words for such a
    file ("str is not valid UTF-8: surrogates not allowed") did not say what to do
    (adv14 F8); FF and FE never occur in UTF-8."""
    name = next((name for bom, name in BOMS if data.startswith(bom)), None) \
        or _without_bom(data)
    return None if name is None else f"{name} is not supported (convert to UTF-8)"


def _without_bom(data: bytes) -> str | None:
    """"UTF-16" or "UTF-32" when the first bytes are ASCII characters in that
    encoding without a byte order mark (a NUL byte beside each, or three beside each:
    ``{\x00"\x00``), else None: such a file was "bad JSON: unexpected character"
    (adv33).  No UTF-8 JSON starts so: a NUL byte is no JSON text's."""
    head = data[:16]
    n = len(head) - len(head) % 4
    if n < 4 or 0 not in head[:4]:
        return None
    quads = [head[i:i + 4] for i in range(0, n, 4)]
    if all(q[1:] == b"\0\0\0" and q[0] for q in quads) or \
            all(q[:3] == b"\0\0\0" and q[3] for q in quads):
        return "UTF-32"
    pairs = [head[i:i + 2] for i in range(0, n, 2)]
    if all(p[1] == 0 and p[0] for p in pairs) or all(p[0] == 0 and p[1] for p in pairs):
        return "UTF-16"
    return None


def cut_short(raw: bytes, message: str, pos: int | None = None) -> bool:
    """True when ``raw``, a line without its newline, is a prefix of JSON that ended
    early: it ends inside a UTF-8 character, or the decoder stopped at the end of the
    text (``pos`` at or past its last non-blank character; without ``pos``, orjson's
    "unexpected end of data").  False for a line that ends with its newline."""
    if raw.endswith(b"\n"):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data" and exc.end == len(raw)
    if pos is None:
        return message.startswith("unexpected end of data")
    return pos >= len(text.rstrip())
