"""What the adapters of issue 15 share: whole-JSON documents, element lines, leniency.

Cline, ``opencode export`` and OpenHands trajectories are one JSON document each (often
pretty-printed over many lines), not JSON Lines.  :func:`read_document` decodes such a
document from the ``(line_number, raw_line)`` pairs every reader gets, and finds the
line where each object element of a top-level array (``[{...}, ...]``) or of an array
under a top-level key (``{"messages": [{...}, ...]}``) starts, so that an error names
``FILE:LINE`` of the element, and the line of each object in an array directly inside
such an element (a message's content parts: :meth:`Document.part_line`), so that a fact
stated in a part names the line that holds it.

:class:`Elements` runs an adapter's handler over elements with one policy: an unforeseen
shape (a ``TypeError``, ``KeyError``, ... or a :class:`LogError` of the handler) is a
one-line :class:`LogError` naming the element's line, or, when lenient, a skipped
element appended to ``skipped`` (counted and listed in the report, issue 15 "Reader
robustness").

:func:`version_note` is the sentence the report shows for a product version an adapter
has not seen ("format version X not seen before; read as Y").
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from compaction_audit.errors import LogError, TooDamaged
from compaction_audit.io.jsonerrors import encoding_error, not_out_of_memory
from compaction_audit.io.lines import iter_lines
from compaction_audit.io.surrogates import loads
from compaction_audit.io.tokens import (
    RoundAssembler,
    lines_phrase,
    session_record,
    shape_error,
)

SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError)
"""What a handler raises on a shape it did not foresee (as :func:`tokens.feed` catches)."""

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite 3 database file (opencode's store)."""

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_KEY = re.compile(rb"\s*:")
"""What follows a string that is an object's key."""

PartsAt = tuple[str | None, int, str]
"""An array inside an element: (the key of the element's array, the element's index,
the array's key in the element), e.g. ``("messages", 12, "content")``."""

PART_TEXT_KEYS = frozenset({b'"text"', b'"content"', b'"input"'})
"""Keys of a part whose value holds what the part says (its text, a tool's result or
input): a part's line is the line of the first of these, else of its ``{``.  A
pretty-printed document writes a string on one line (its newlines escaped), so the line
of ``"text"`` is the line of every fact of that text."""


@dataclass
class Document:
    """A decoded JSON document: ``value``, and ``starts[key]`` the line of each object
    element of the top-level array (key None) or of the array under top-level ``key``;
    non-object elements get the line of the array's first object (or line 1)."""

    path: str
    value: Any
    starts: dict[str | None, list[int]] = field(default_factory=dict)
    parts: dict[PartsAt, list[int]] = field(default_factory=dict)

    def line_of(self, key: str | None, index: int) -> int:
        """Line where element ``index`` of the array at ``key`` starts (1 when unknown)."""
        lines = self.starts.get(key) or []
        return lines[index] if 0 <= index < len(lines) else (lines[-1] if lines else 1)

    def part_line(self, key: str | None, index: int, inner: str, part: int) -> int | None:
        """Line of object ``part`` of the array at key ``inner`` of element ``index`` of
        the array at ``key`` (``("messages", i, "content", j)``: a message's content
        part): the line of its first key of :data:`PART_TEXT_KEYS`, else of its ``{``;
        None when unknown (a one-line document, a part that is no object)."""
        lines = self.parts.get((key, index, inner)) or []
        return lines[part] if 0 <= part < len(lines) else None


LONE_CR = "lines end with a lone CR (classic Mac line endings); use LF or CRLF"
"""The error of a JSON document whose lines end with a lone CR."""


def read_document(path: str, lines: Iterable[tuple[int, bytes]] | None) -> Document:
    """Decode the whole of ``path`` (or ``lines``) as one JSON document.

    Raises :class:`LogError` naming the first line when the text is not JSON, or when
    its lines end with a lone CR (:data:`LONE_CR`).
    """
    numbers: list[int] = []
    offsets: list[int] = []
    chunks: list[bytes] = []
    size = 0
    for number, raw in iter_lines(path) if lines is None else lines:
        numbers.append(number)
        offsets.append(size)
        chunks.append(raw)
        size += len(raw)
    data = b"".join(chunks)
    try:
        value = loads(data)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
    except orjson.JSONDecodeError as exc:
        not_out_of_memory(exc.msg)
        unsupported = encoding_error(data)
        if unsupported is not None:
            raise LogError(path, numbers[0] if numbers else 1, unsupported) from None
        at = _byte_offset(data, exc.pos)
        line = numbers[bisect.bisect_right(offsets, at) - 1] if numbers else 1
        raise LogError(path, line, f"not a JSON document: {exc.msg}") from None
    cr = _cr_lines(chunks) if b"\r" in data else None
    if cr is not None:  # a raw CR is whitespace in JSON: a line break here, which the
        # line numbers would not count (adv86 #5: every address of a lone-CR OpenHands
        # file read "line 1"), as JSON Lines refuses it; named at the line that holds
        # it (usertest42 C: one lone CR on line 7 was said at line 1)
        raise LogError(path, numbers[cr], LONE_CR)
    doc = Document(path, value)
    if isinstance(value, (dict, list)) and len(numbers) > 1:
        starts, parts = _element_starts(data)

        def line_numbers(positions: list[int]) -> list[int]:
            return [numbers[bisect.bisect_right(offsets, p) - 1] for p in positions]

        doc.starts = {key: line_numbers(positions) for key, positions in starts.items()}
        doc.parts = {at: line_numbers(positions) for at, positions in parts.items()}
    return doc


def _cr_lines(lines: list[bytes]) -> int | None:
    """The index in ``lines`` (the document's lines as split at LF) of the first that
    holds a lone CR with more text after it, or None.  A raw CR in a JSON document can
    only be whitespace between its tokens, and an editor starts a line there where
    ``grep -n`` and these line numbers do not, so every address after it would point
    elsewhere: classic Mac line endings, or LF and lone-CR lines mixed (adv88 #5: as
    many lone CRs as LFs moved every finding from line 7 to line 4).  A CR with only
    blanks after it on its line (CR blank LF, CR CR LF endings, a final CR) leaves the
    lines of the text true (adv87 #6: they were refused).  One pass of C-level searches
    per line (adv89 #1: a regular expression restarted at every CR of a run, 80,000 CRs
    took 52 s)."""
    for k, line in enumerate(lines):
        if b"\r" in line and b"\r" in line.rstrip():
            return k
    return None


def _byte_offset(data: bytes, pos: int) -> int:
    """The byte offset in ``data`` of character ``pos``: orjson's error position counts
    characters, so a line found by bytes was early after non-ASCII text (adv14 F8)."""
    head = data[:4 * pos + 4].decode("utf-8", "surrogateescape")  # <= 4 bytes a char
    return len(head[:pos].encode("utf-8", "surrogateescape"))


def _string(token: bytes) -> Any:
    """A JSON string token of a document already decoded whole, as that decoding read
    it: a lone surrogate escape is U+FFFD there too (adv71 #1: a key holding one was
    an internal error here, after the document itself was read)."""
    try:
        return loads(token)
    except orjson.JSONDecodeError:
        return ""


def _element_starts(data: bytes) -> tuple[dict[str | None, list[int]], dict[PartsAt, list[int]]]:
    """Byte offsets of the object elements of depth-1 and depth-2 arrays (see module),
    and per array directly inside such an element (``(array key, element index, key in
    the element)``) those of its objects (:meth:`Document.part_line`)."""
    starts: dict[str | None, list[int]] = {}
    parts: dict[PartsAt, list[int]] = {}
    stack: list[bytes] = []
    key: str | None = None
    array_key: list[str | None] = []
    element = 0  # the stack's depth inside an element (0: outside every element)
    inner = b""  # the last string at the element's own depth: the key of its next array
    at: PartsAt = (None, 0, "")
    index = 0
    found = False  # the current part's offset is that of a key of PART_TEXT_KEYS
    for match in _TOKEN.finditer(data):
        tok = match.group()
        if tok[:1] == b'"':
            depth = len(stack)
            if depth == 1 and stack[0] == b"{":
                key = _string(tok)
            elif element and depth == element:
                inner = tok
            elif (element and depth == element + 2 and not found
                  and stack[element] == b"[" and stack[element + 1] == b"{"
                  and tok in PART_TEXT_KEYS and _KEY.match(data, match.end())):
                # a part's key: inside an object of an array of the element, never an
                # object two levels down in the element (adv30 F2: KeyError)
                parts[at][-1] = match.start()
                found = True
            continue
        if tok in (b"{", b"["):
            if tok == b"{" and stack in ([b"["], [b"{", b"["]):
                starts.setdefault(array_key[-1], []).append(match.start())
                element = len(stack) + 1
                index = len(starts[array_key[-1]]) - 1
            elif tok == b"[" and element and len(stack) == element:
                at = (array_key[-1], index, _string(inner) if inner else "")
            elif (tok == b"{" and element and len(stack) == element + 1
                  and stack[-1] == b"["):
                parts.setdefault(at, []).append(match.start())
                found = False
            if tok == b"[":
                array_key.append(key if stack == [b"{"] else None)
            stack.append(tok)
        else:
            if stack and stack.pop() == b"[":
                array_key.pop()
            if len(stack) < element:
                element, inner = 0, b""
    return starts, parts


class Conversion:
    """What every converter of these adapters keeps: the input ``path``, the
    :class:`RoundAssembler`, the session's id, budget and reader ``notes``, the records
    not read (``not_read``: :meth:`unread`), the last measured context size
    (``last_input``, tokens) and the compaction infos that wait for the first
    measurement after them (their ``tokens_after``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.asm = RoundAssembler()
        self.session_id: str | None = None
        self.budget: int | None = None
        self.notes: dict[str, None] = {}  # in the order first said (a dict: linear dedupe)
        self.not_read: Counter[tuple[str, str]] = Counter()  # (unit, why) -> records
        self.last_input: int | None = None
        self.awaiting_after: list[dict[str, Any]] = []

    def note(self, text: str | None) -> None:
        """Add a reader note once (None: nothing to say).  A dict lookup, not a list
        scan: an adapter says one note per distinct unknown value, so a log can ask for
        one per message (issue 11, class 5; adv9 F9)."""
        if text:
            self.notes.setdefault(text)

    def unread(self, why: str, unit: str = "line") -> None:
        """Count one record not read (a line, or a document's ``unit``: ``"event"``,
        ``"part"``), for ``why`` (e.g. :func:`~compaction_audit.io.tokens.unknown_type_note`).
        The session record counts them all in ``lines_not_read`` and a reader note
        says how many of each and why, so the verdict says "N lines not read": a
        record of a type or shape the reader does not know is never dropped without a
        word (issue 11 class 2; adv29 F4)."""
        self.not_read[unit, why] += 1

    def measured(self, size: int | None) -> None:
        """A measured context size: the next compaction's ``tokens_before`` and the
        ``tokens_after`` of the compactions waiting for one."""
        if size is None or size <= 0:
            return
        self.last_input = size
        for info in self.awaiting_after:
            info["tokens_after"] = size
        self.awaiting_after.clear()

    def output(self, source_format: str, first_line: int
               ) -> Iterator[tuple[int, dict[str, Any]]]:
        """The session record (at ``first_line``, with the notes and the count of
        records not read) and every round."""
        rounds = self.asm.finish()
        record = session_record(source_format, self.session_id, self.budget)
        notes = [*self.notes, *(f"{lines_phrase(n, unit)} {why}"
                                for (unit, why), n in self.not_read.items())]
        if notes:
            record["reader_notes"] = notes
        if self.not_read:
            record["lines_not_read"] = sum(self.not_read.values())
        yield first_line, record
        yield from rounds


def chain_head(head: tuple[int, bytes] | None, rest: Iterable[tuple[int, bytes]]
               ) -> Iterator[tuple[int, bytes]]:
    """``head`` (a line already taken to look at) followed by the ``rest``."""
    if head is not None:
        yield head
    yield from rest


@dataclass
class Elements:
    """Run a handler over elements with the adapters' error policy (see module).

    ``skipped`` is None in strict mode (raise) or the list lenient mode appends to.
    """

    path: str
    skipped: list[LogError] | None = None

    def run(self, line: int, handle: Callable[..., None], *args: Any) -> bool:
        """``handle(*args)``; True when it ran, False when it was skipped (lenient)."""
        try:
            handle(*args)
        except TooDamaged:  # the skips of an element inside this one: the file is done
            raise
        except LogError as exc:
            self._fail(exc)
            return False
        except SHAPE_ERRORS as exc:
            self._fail(shape_error(self.path, line, exc))
            return False
        return True

    def _fail(self, exc: LogError) -> None:
        if self.skipped is None:
            raise exc from None
        self.skipped.append(exc)


def version_note(product: str, version: object, seen: Iterable[object], read_as: str,
                 what: str = "format version", then: str = "read as") -> str | None:
    """``"<product> <what> X not seen before; <then> Y"`` (by default "format version
    ... read as ..."), or None when ``version`` is missing or one of ``seen``.  X is
    cut to 40 characters: it comes from the log.  A value that is no string, number or
    boolean (an object, a list) is not one of ``seen``: it was hashed, and "internal
    error: TypeError: unhashable type" ended the whole run (adv22a F4)."""
    if version is None or (isinstance(version, (str, int, float, bool))
                           and version in set(seen)):
        return None
    shown = str(version)[:40]
    return f"{product} {what} {shown} not seen before; {then} {read_as}"


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}`` (for optional nested fields)."""
    return value if isinstance(value, dict) else {}


def text_of(value: Any) -> str:
    """Text of a content value: a string, a list of parts with ``text``, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (text_of(v.get("text") if isinstance(v, dict) and
                                                 isinstance(v.get("text"), str) else v)
                                     for v in value) if t)
    return orjson.dumps(value).decode()
