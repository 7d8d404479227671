"""Tell which log format a file is in: ``native``, ``claude-code`` or ``codex``.

Only the first :data:`SNIFF_LINES` non-blank lines are read.  ``native`` wins when any
of them is a ``compaction-audit/1`` session record or a ``round`` record; then Codex
(lines ``{"timestamp", "type", "payload"}``), then Claude Code.  For standard input,
which can be read only once, use :func:`peek_format`: it hands back the lines it read
followed by the rest, ready for the adapter's ``records(path, lines)``.  The line
adapters then check every line with :func:`line_checker`: a file of two formats is an
error, not one format read with the other's records skipped.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any, Literal

import orjson

from compaction_audit.errors import NOT_A_LOG, LogError, MixedFormats
from compaction_audit.io import claude_code, codex, documents, gemini_cli, openhands
from compaction_audit.io.jsonerrors import json_error
from compaction_audit.io.lines import DEFAULT_LIMITS, Limits, iter_lines
from compaction_audit.io.surrogates import NOT_SURROGATES, loads_lone_surrogates

Format = Literal["native", "claude-code", "codex", "cline", "gemini-cli", "opencode",
                 "openhands"]
Lines = Iterable[tuple[int, bytes]]
Adapter = Callable[[str, Lines | None], Iterator[tuple[int, dict[str, Any]]]]

SNIFF_LINES = 50
SCHEMA_ID = "compaction-audit/1"

ADAPTER_MODULES = {"claude-code": "claude_code", "codex": "codex", "cline": "cline",
                   "gemini-cli": "gemini_cli", "opencode": "opencode",
                   "openhands": "openhands"}
"""The module of ``compaction_audit.io`` that reads each foreign format (its
``SOURCE_FORMAT`` is the key)."""


class _Adapters(Mapping[str, Adapter]):
    """:data:`ADAPTERS`: the adapter of a format is imported when it is first asked for.
    The Cline and opencode adapters (with ``sqlite3``) are needed only for a file of
    theirs, not to tell a line format (about 12 ms of CPU at the start of every audit;
    issue 14, item 4: the adapters lazily)."""

    def __getitem__(self, fmt: str) -> Adapter:
        module = importlib.import_module(f"compaction_audit.io.{ADAPTER_MODULES[fmt]}")
        return module.records  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(ADAPTER_MODULES)

    def __len__(self) -> int:
        return len(ADAPTER_MODULES)


ADAPTERS: Mapping[str, Adapter] = _Adapters()
"""The ``records(path, lines)`` function of each foreign format, by format name.  The
adapters of issue 15 also take ``skipped`` (a list: lenient, see ``io/documents.py``)."""

TOLERANT = frozenset({"cline", "gemini-cli", "opencode", "openhands"})
"""Formats whose adapter skips a malformed element when given ``skipped``."""


def document_sniffers() -> dict[str, Callable[[Any], bool]]:
    """Formats stored as one JSON document, each with its test of the decoded document
    (their adapters imported here: only a file that is no JSON Lines needs them)."""
    from compaction_audit.io import cline_pair, opencode

    return {
        cline_pair.SOURCE_FORMAT: cline_pair.sniff_document,
        gemini_cli.SOURCE_FORMAT: gemini_cli.sniff_document,
        opencode.SOURCE_FORMAT: opencode.sniff_document,
        openhands.SOURCE_FORMAT: openhands.sniff_document,
    }


def _native(obj: dict[str, Any]) -> bool:
    """A record of ours: a round, or the session header of our schema."""
    kind = obj.get("type")
    return kind == "round" or (kind == "session" and obj.get("schema") == SCHEMA_ID)


LINE_TESTS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "native": _native,
    codex.SOURCE_FORMAT: lambda obj: codex.sniff([obj]),
    gemini_cli.SOURCE_FORMAT: lambda obj: gemini_cli.sniff([obj]),
    openhands.SOURCE_FORMAT: lambda obj: openhands.sniff([obj]),
    claude_code.SOURCE_FORMAT: lambda obj: claude_code.sniff([obj]),
}
"""The formats stored one record a line, each with the test that one decoded line is
unmistakably one of its records (the test :func:`sniff_objects` applies to the first
lines)."""


def other_format(obj: dict[str, Any], fmt: str) -> str | None:
    """The first format of :data:`LINE_TESTS` other than ``fmt`` whose test ``obj``
    passes, or None."""
    return next((name for name, test in LINE_TESTS.items() if name != fmt and test(obj)),
                None)


def two_formats(path: str, line: int, other: str, fmt: str) -> MixedFormats:
    """The error for a record of format ``other`` at ``line`` of a file read as ``fmt``."""
    article = "an" if other[:1] in tuple("aeiou") else "a"  # an openhands record
    return MixedFormats(path, line, f"{article} {other} record in a file read as {fmt}: "
                        "one file holds two log formats", "type")


def line_checker(path: str, fmt: str) -> Callable[[int, dict[str, Any]], LogError | None]:
    """A check for every decoded line of ``path`` read as ``fmt``: once the file has
    shown both a record of ``fmt`` and a line that is not one but passes another
    format's :data:`LINE_TESTS` test, it returns the :class:`LogError` to raise, naming
    the first such line (``FILE:LINE``, field ``type``) and both formats; else None.
    The caller raises it even in lenient mode: the file is not one log to skip in.

    An adapter skips the lines it does not know, so a file of two formats was read as
    the one its first lines showed, the other's records (a failing transcript's
    compactions) dropped without a word: a PASS (issue 11, item 2; adv9 F10).  A file
    with no record of ``fmt`` at all (``convert --from`` the wrong format) is left to
    the caller's "no round found" message.  The adapters of the line formats call it
    on each line (``feed``, Gemini CLI, OpenHands).
    """
    own = LINE_TESTS[fmt]
    first: tuple[int, str] | None = None  # the first line of another format
    seen_own = False

    def check(number: int, obj: dict[str, Any]) -> LogError | None:
        nonlocal first, seen_own
        if own(obj):
            seen_own = True
        elif first is None:
            other = other_format(obj, fmt)
            if other is not None:
                first = (number, other)
        if seen_own and first is not None:
            return two_formats(path, first[0], first[1], fmt)
        return None

    return check


def sniff_objects(first_objects: list[dict[str, Any]]) -> Format | None:
    """The format these first decoded lines look like, or None when none matches."""
    if any(_native(obj) for obj in first_objects):
        return "native"
    if codex.sniff(first_objects):
        return "codex"
    if gemini_cli.sniff(first_objects):
        return "gemini-cli"
    if openhands.sniff(first_objects):
        return "openhands"
    if claude_code.sniff(first_objects):
        return "claude-code"
    return None


def _check_head(path: str, head: list[tuple[int, bytes]]) -> None:
    """Under an address-space limit, :class:`LogError` when the lines detection is about
    to decode are over it by the least figure of any format: the first line may be
    the whole of a one-line JSON document, and a 63 MB one decoded in the command's own
    process made orjson fault (adv23 F5).  Lines of the usual size pass, and the trace
    is checked with its format's own figure once that is known (ux5 F2)."""
    from compaction_audit.runtime import addrspace

    addrspace.check_bytes(path, sum(len(raw) for _, raw in head), addrspace.ANY_FORMAT)


def _decide(path: str, head: list[tuple[int, bytes]],
            rest: Iterator[tuple[int, bytes]] | None = None, checked: bool = False) -> Format:
    if checked:
        _check_head(path, head)
    objects: list[dict[str, Any]] = []
    first_error: LogError | None = None
    bad = 0  # the lines not JSON on their own (of the first two, see _sniff_document)
    for i, (number, raw) in enumerate(head):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            obj = loads_lone_surrogates(raw, exc)  # adv67 #6 (orjson called here, not
            # through surrogates.loads: test_detect counts the lines detection decodes)
            if obj is NOT_SURROGATES:
                first_error = first_error or LogError(path, number,
                                                      json_error(raw, exc.msg, exc.pos))
                bad += i < 2
                continue
        if type(obj) is dict:
            if _native(obj):  # what sniff_objects says of any list holding it: the
                # lines after it are not decoded (issue 14: 50 rounds of 20,000 items
                # took 0.9 s, a fifth of the audit of a 254 MB trace)
                return "native"
            objects.append(obj)
    found = sniff_objects(objects)
    if found is None and head:
        found = _sniff_document(path, head, rest, bad == 2,  # type: ignore[assignment]
                                checked)
    if found is not None:
        return found
    if not head:
        return "native"  # empty input: the native reader says what it makes of it
    if first_error is not None:
        raise first_error
    if any("type" in obj for obj in objects):
        return "native"  # records of ours gone wrong: the native reader names the field
    raise LogError(path, head[0][0], f"{NOT_A_LOG}: not compaction-audit/1, Claude "
                   "Code, Codex, Cline, Gemini CLI, opencode or OpenHands "
                   f"(first {SNIFF_LINES} lines)",
                   "type")


def detect_format(path: str, limits: Limits = DEFAULT_LIMITS, checked: bool = False) -> Format:
    """The format of ``path`` from its first ~50 non-blank lines.

    ``checked``: under an address-space limit, check what detection decodes first
    (:func:`_check_head`, and a whole JSON document before it is decoded), as the
    audit's reading and the output check do; ``convert``, which builds no tables, does
    not.

    Raises :class:`LogError` when no line matches any format (naming the first bad
    JSON line, if any, else the first line) or when the file cannot be read.  An
    empty file is ``native``.
    """
    lines = iter_lines(path, limits)
    try:
        head = list(islice(lines, SNIFF_LINES))
        return _decide(path, head, lines, checked=checked)
    finally:
        _close(lines)


def peek_format(path: str, limits: Limits = DEFAULT_LIMITS, errors: list[LogError] | None = None,
                checked: bool = False) -> tuple[Format, Iterator[tuple[int, bytes]]]:
    """Like :func:`detect_format`, and also return every line of ``path``, read once.

    The iterator yields the sniffed lines again, then the rest of the input: pass it
    to ``ADAPTERS[fmt](path, lines)``.  Works for ``-`` (standard input).  ``limits``
    and ``errors`` as for :func:`~compaction_audit.io.lines.iter_lines`.
    """
    lines = iter_lines(path, limits, errors)
    try:
        head = list(islice(lines, SNIFF_LINES))
        fmt = _decide(path, head, lines, checked=checked)
    except BaseException:
        _close(lines)
        raise
    return fmt, chain(head, lines)


def _sniff_document(path: str, head: list[tuple[int, bytes]],
                    rest: Iterator[tuple[int, bytes]] | None, multiline: bool,
                    checked: bool = False) -> str | None:
    """An SQLite store (opencode) by its header, or a whole JSON document that one of
    :func:`document_sniffers` accepts; the rest of the input is read into ``head``.

    When neither of the first two lines is JSON on its own (``multiline``: ``[`` then
    ``  {`` of an indented document, not JSON Lines) and the whole is no JSON document
    either, the document's own error is raised, at its line: the first line's
    ("unexpected end of data", line 1) named the wrong place and called a whole file
    cut (adv14 F8)."""
    if head[0][1].startswith(documents.SQLITE_MAGIC):
        return "opencode"
    if head[0][1].lstrip()[:1] not in (b"{", b"["):
        return None
    if checked:  # under a limit, before decoding it whole
        from compaction_audit.runtime import addrspace

        addrspace.check(path, addrspace.DOCUMENT)
    if rest is not None:
        head.extend(rest)
    try:
        value = documents.read_document(path, head).value
    except LogError as exc:
        if multiline or exc.message == documents.LONE_CR:  # a document whose lines end
            raise  # with a lone CR is one line: it is no JSON Lines either (adv86 #5)
        return None
    found = next((fmt for fmt, test in document_sniffers().items() if test(value)), None)
    if found is None and len(head) > 1:
        raise LogError(path, head[0][0], f"{NOT_A_LOG}: a JSON document, but "
                       "not a Cline or Gemini CLI session, an opencode export or an "
                       "OpenHands trajectory")
    return found


def _close(lines: Iterator[tuple[int, bytes]]) -> None:
    """Close a line generator early so that its file is closed now."""
    close = getattr(lines, "close", None)
    if close is not None:
        close()
