"""Field-level validation of one ``compaction-audit/1`` record (no session state).

Each function takes the decoded JSON value and returns a plain, typed Python value or
raises :class:`FieldError` naming the offending field path (``spans[2].tokens``).  The
stateful checks (ids defined, working set consistency) live in
:mod:`compaction_audit.io.native`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter, methodcaller, ne
from typing import Any

import orjson

from compaction_audit.invisible import INVISIBLE
from compaction_audit.io.harness import is_person_source

SALIENCE_CLASSES = frozenset({"discriminating", "narrative"})
ROLE_PREFIX = {"user": "user", "assistant": "assistant", "tool": "tool", "system": "harness"}
"""A span's ``role`` (spec, log-format: who wrote it) -> the ``source`` prefix the
auditor reads it by: a person's span is ``user``/``user:...``, injected harness text
``harness:...``, a tool's output ``tool...``, the assistant's ``assistant...``."""

EVICTION_MODES = frozenset({"continuous", "on-overflow"})
LOGGED_FLOATS = ("raw_ratio", "query_cosine_retained")
LOGGED_INTS = ("distinct_source_spans", "summary_depth_max")
LOGGED_KEYS = frozenset(LOGGED_FLOATS + LOGGED_INTS)
"""The names of a round's ``logged`` object the auditor compares (logged-mismatch)."""
_NUMBER_TYPES = frozenset({int, float})
_SALIENCE_TYPES = frozenset({int, float, type(None)})


class FieldError(Exception):
    """A field of a record is malformed: ``message`` and the ``field`` path."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


_CALLS = ("tool_call", "tool_use", "function_call")
"""Sources of a tool call, which is the assistant's (and no tool's output)."""


def with_role(source: str | None, role: str | None) -> str | None:
    """``source`` as ``role`` says to read it (spec, log-format: ``role`` decides who
    wrote a span; without it, the source does): unchanged when it already reads so,
    else prefixed (``msg-3`` with role ``user`` is ``user:msg-3``; ``user`` with role
    ``system`` is ``harness:user``; a call, ``tool_call:Bash``, is the assistant's as
    it is, and with role ``tool`` is ``tool:tool_call:Bash``, an output), the role's
    prefix alone for no source (``harness:system`` for role ``system``).  The person's
    test is :func:`~compaction_audit.io.harness.is_person_source`."""
    if role is None:
        return source
    prefix = ROLE_PREFIX[role]
    if not source:
        return "harness:system" if role == "system" else prefix
    call = source.startswith(_CALLS)
    if role == "user":
        reads = is_person_source(source)
    elif role == "assistant":  # a tool call is the assistant's words (adv50)
        reads = source.startswith(prefix) or call
    elif role == "tool":  # a tool's output is no call
        reads = source.startswith(prefix) and not call
    else:
        reads = source.startswith(prefix + ":")
    return source if reads else f"{prefix}:{source}"


@dataclass(slots=True)
class SpanRec:
    """A raw span as written in a round record; ``tokens`` in tokens."""

    id: str
    tokens: int
    text: str | None
    salience_class: str | None
    source: str | None
    source_line: int | None = None
    """The 1-based log line that stated the span, from an adapter's ``source_line``
    (read only in adapter output: :data:`SPAN_LINE_KEY`); None: the round's line."""


SPAN_LINE_KEY = "source_line"
"""The key under which the adapters (:class:`compaction_audit.io.tokens.RoundAssembler`)
write each span's own line in the foreign log.  Native logs keep it as an unknown field
(spec log-format.md: extra fields are ignored) unless the session record names a
``source_format``, as the adapters' does."""

LINE_FILE_KEY = "line_file"
"""The key under which an adapter that reads several files for one trace (Cline: the
messages file and the compaction file) names, on a round record, the file its line is
a line of (the file's name, escaped: :func:`compaction_audit.io.cline_folder.file_name`).
Read like :data:`SPAN_LINE_KEY`, only in adapter output; ``convert`` drops it, since
the converted log's rounds are lines of the converted file."""


def plain_file_name(name: str) -> bool:
    """True when ``name`` names a file in the trace's own folder: no directory
    separator (``/``, and the platform's other one), not ``.`` or ``..``.  The
    reports join a round's :data:`LINE_FILE_KEY` to the trace's folder
    (:func:`~compaction_audit.report.lines.line_path`): a path there would point the
    github and sarif annotations at any file (``../../.github/workflows/ci.yml``)."""
    seps = ["/", *([os.altsep] if os.altsep else [])]
    return name not in (".", "..") and not any(s in name for s in seps)


def check_file_name(name: object, field: str) -> None:
    """Raise :class:`FieldError` on ``field`` unless ``name`` is a string that
    :func:`plain_file_name` allows (a round's :data:`LINE_FILE_KEY`, the session
    record's ``span_line_file``)."""
    if type(name) is not str or not plain_file_name(name):
        raise FieldError("a file name beside the trace, not a path", field)


@dataclass(slots=True)
class SummaryRec:
    """A summary (fold) as written; ``depth`` is the declared depth, if any."""

    id: str
    tokens: int
    children: list[str]
    text: str | None
    depth: int | None
    accounting: str | None  # JSON text


MAX_INT = 2**53 - 1
"""Largest integer accepted anywhere (round numbers, counts): exact in JSON doubles."""
MAX_TOKENS = 10**12
"""Largest token count of one span, summary or budget: sums over millions of items
still fit the 64-bit columns of the series."""


def as_int(value: Any, field: str, minimum: int, maximum: int = MAX_INT) -> int:
    """An integer between ``minimum`` and ``maximum`` (booleans rejected).  A whole
    number past 64 bits, which orjson reads as a float, is out of the bounds, not "not
    an integer" (adv60: ``18446744073709551616`` was)."""
    if type(value) is float and value.is_integer() and abs(value) >= 2**63:
        bound = f">= {minimum}" if value < minimum else f"<= {maximum}"
        raise FieldError(f"must be {bound}, got {value:.4g}", field)
    if type(value) is not int:
        raise FieldError(f"expected an integer, got {kind_of(value)}", field)
    if value < minimum:
        raise FieldError(f"must be >= {minimum}, got {value}", field)
    if value > maximum:
        raise FieldError(f"must be <= {maximum}, got {value}", field)
    return value


def as_json(value: Any, field: str) -> str:
    """``value`` as JSON text; raises :class:`FieldError` when it is nested too deeply
    to be written back (orjson's limit) or cannot be written as JSON for another reason
    (a string that is not UTF-8: orjson's words; was "nested too deeply" too, adv9 F6)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:
        if "Recursion limit" in str(exc):
            raise FieldError("nested too deeply", field) from None
        raise FieldError(f"cannot be written as JSON: {exc}", field) from None


def as_id(value: Any, field: str) -> str:
    """An item id: a string, or an int read as its decimal string."""
    if type(value) is str:
        if not value:
            raise FieldError("id must not be empty", field)
        return value
    if type(value) is int:
        return str(value)
    if past_64_bits(value):
        raise FieldError(f"id must be a string or an integer, got {PAST_64_BITS}", field)
    raise FieldError(f"id must be a string or an integer, got {kind_of(value)}", field)


PAST_64_BITS = ("a number too large to read exactly (an integer past 64 bits: write it "
                "as a string)")
"""What an id written as an integer past 64 bits is said to be (:func:`past_64_bits`)."""


def past_64_bits(value: Any) -> bool:
    """True for a whole float of at least 2**63: orjson reads an integer past 64 bits as
    a float, its digits gone (adv94 #5: the integer id 18446744073709551616 read "got a
    number"; usertest48 #7: a session_id, "expected a string")."""
    return type(value) is float and value.is_integer() and abs(value) >= 2 ** 63


def opt_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    """An optional string field (its field path ``where.key``, ``key`` when ``where``
    is empty)."""
    value = obj.get(key)
    if value is None or type(value) is str:
        return value
    raise FieldError(f"expected a string, got {kind_of(value)}", f"{where}.{key}" if where else key)


def as_list(value: Any, field: str) -> list[Any]:
    """A JSON array."""
    if type(value) is not list:
        raise FieldError(f"expected a list, got {kind_of(value)}", field)
    return value


def _plain_ids(values: list[Any]) -> bool:
    """True when every element of ``values`` is a non-empty string (the ids as
    written need no conversion): two passes at C speed."""
    return not values or (set(map(type, values)) == _STR_ONLY and "" not in values)


_STR_ONLY = {str}


def id_list(obj: dict[str, Any], key: str) -> list[str]:
    """An optional list of ids (``evicted``, ``offloaded``); duplicates rejected."""
    if key not in obj:
        return []
    return unique_ids(as_list(obj[key], key), key)


def unique_ids(values: list[Any], where: str) -> list[str]:
    """``values`` (a list field at ``where``) as ids, each at most once; raises
    :class:`FieldError` naming the element of a bad id or the second mention of one
    listed twice (``3`` and ``"3"`` are one id)."""
    if _plain_ids(values):
        if len(set(values)) == len(values):
            return values
        ids = values
    else:
        ids = [as_id(v, f"{where}[{i}]") for i, v in enumerate(values)]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for i, item in enumerate(ids):
            if item in seen:
                raise FieldError(f"id {item!r} listed twice", f"{where}[{i}]")
            seen.add(item)
    return ids


def span(value: Any, where: str, lines: bool = False) -> SpanRec:
    """Validate a span object; with ``lines`` (adapter output) also its optional
    :data:`SPAN_LINE_KEY`, a line number >= 1."""
    if type(value) is not dict:
        raise FieldError(f"expected an object, got {kind_of(value)}", where)
    if "id" not in value:
        raise FieldError("missing field", f"{where}.id")
    if "tokens" not in value:
        raise FieldError("missing field", f"{where}.tokens")
    cls = opt_str(value, "salience_class", where)
    if cls is not None and cls not in SALIENCE_CLASSES:
        raise FieldError(
            f"must be 'discriminating' or 'narrative', got {cls!r}", f"{where}.salience_class"
        )
    source = value.get("source")
    if source is not None and type(source) is not str:
        source = as_json(source, f"{where}.source")
    role = value.get("role")
    if role is not None and (type(role) is not str or role not in ROLE_PREFIX):
        shown = repr(role[:40]) if type(role) is str else kind_of(role)
        raise FieldError(f"must be 'user', 'assistant', 'tool' or 'system', got {shown}",
                         f"{where}.role")
    source = with_role(source, role)
    return SpanRec(
        as_id(value["id"], f"{where}.id"),
        as_int(value["tokens"], f"{where}.tokens", 0, MAX_TOKENS),
        opt_str(value, "text", where),
        cls,
        source,
        as_int(value[SPAN_LINE_KEY], f"{where}.{SPAN_LINE_KEY}", 1)
        if lines and value.get(SPAN_LINE_KEY) is not None else None,
    )


@dataclass(slots=True)
class SpanColumns:
    """The spans of one round record as columns (one list per field, in file order)."""

    ids: list[str]
    tokens: list[int]
    texts: list[str | None]
    classes: list[str | None]
    sources: list[str | None]
    source_lines: list[int | None] | None  # None: no span carries its own line


_SPAN_TEXT_TYPES = frozenset({str, type(None)})
_CLASS_VALUES = frozenset({None, *SALIENCE_CLASSES})
_LINE_TYPES = frozenset({int, type(None)})
_get_text = methodcaller("get", "text")
_get_class = methodcaller("get", "salience_class")
_get_source = methodcaller("get", "source")
_get_line = methodcaller("get", SPAN_LINE_KEY)
_get_role = methodcaller("get", "role")
_NO_ROLE = {None}
_ROLE_VALUES = frozenset({None, *ROLE_PREFIX})


def span_columns(value: Any, lines: bool = False) -> SpanColumns:
    """Validate a round's ``spans`` list (as :func:`span` does each element) and return
    it as columns.

    The common case (every span an object with a string id, an integer token count in
    range, string-or-null text, class and source) is checked a field at a time over the
    whole list at C speed, with no Python call per span; anything else goes through
    :func:`span` element by element, which raises :class:`FieldError` for the first bad
    span in file order or converts what it accepts (integer ids, object sources).
    """
    fast = _span_columns_fast(value, lines)
    if fast is not None:
        return fast
    spans = [span(v, f"spans[{i}]", lines) for i, v in enumerate(as_list(value, "spans"))]
    return SpanColumns([s.id for s in spans], [s.tokens for s in spans],
                       [s.text for s in spans], [s.salience_class for s in spans],
                       [s.source for s in spans],
                       [s.source_line for s in spans] if lines else None)


def _span_columns_fast(value: Any, lines: bool) -> SpanColumns | None:
    if type(value) is not list:
        return None
    if not value:
        return SpanColumns([], [], [], [], [], [] if lines else None)
    try:
        if set(map(type, value)) != _DICT_ONLY:
            return None
        ids = list(map(itemgetter("id"), value))
        tokens = list(map(itemgetter("tokens"), value))
        if not _plain_ids(ids) or set(map(type, tokens)) != _INT_ONLY:
            return None
        if min(tokens) < 0 or max(tokens) > MAX_TOKENS:
            return None
        texts = list(map(_get_text, value))
        classes = list(map(_get_class, value))
        sources = list(map(_get_source, value))
        if not (set(map(type, texts)) <= _SPAN_TEXT_TYPES
                and set(classes) <= _CLASS_VALUES
                and set(map(type, sources)) <= _SPAN_TEXT_TYPES):
            return None
        roles = list(map(_get_role, value))
        if set(roles) != _NO_ROLE:  # the spec's role decides who wrote a span
            if not set(roles) <= _ROLE_VALUES:
                return None
            sources = list(map(with_role, sources, roles))
        source_lines: list[int | None] | None = None
        if lines:
            source_lines = list(map(_get_line, value))
            if not set(map(type, source_lines)) <= _LINE_TYPES:
                return None
            known = [v for v in source_lines if v is not None]
            if known and (min(known) < 1 or max(known) > MAX_INT):
                return None
    except (KeyError, TypeError):  # a missing key, an unhashable class
        return None
    return SpanColumns(ids, tokens, texts, classes, sources, source_lines)


_INVISIBLE_RE = re.compile(f"[{INVISIBLE}]")
_DICT_ONLY = {dict}
_INT_ONLY = {int}


def summary(value: Any, where: str) -> SummaryRec:
    """Validate a summary object (children non-empty; depth >= 1 when given)."""
    if type(value) is not dict:
        raise FieldError(f"expected an object, got {kind_of(value)}", where)
    for key in ("id", "tokens", "children"):
        if key not in value:
            raise FieldError("missing field", f"{where}.{key}")
    children = as_list(value["children"], f"{where}.children")
    if not children:
        raise FieldError("a summary needs at least one child", f"{where}.children")
    depth = value.get("depth")
    accounting = value.get("accounting")
    if accounting is not None and type(accounting) not in (str, dict):
        raise FieldError(
            f"expected a string or an object, got {kind_of(accounting)}", f"{where}.accounting"
        )
    fields = (
        as_id(value["id"], f"{where}.id"),
        as_int(value["tokens"], f"{where}.tokens", 0, MAX_TOKENS),
        # a child listed twice is one duplicate id (spec, log-format): each copy
        # counted its lost facts again (adv72 #1: 1,000,000 copies of one child)
        unique_ids(children, f"{where}.children"),
        opt_str(value, "text", where),
        None if depth is None else as_int(depth, f"{where}.depth", 1),
    )
    # checked (depth, types) before it is read for what it says (review: a deeply
    # nested accounting read first was an internal error, not "nested too deeply")
    written = None if accounting is None else as_json(accounting, f"{where}.accounting")
    return SummaryRec(*fields, None if written is None or records_nothing(accounting)
                      else written)


def records_nothing(value: Any) -> bool:
    """True when an ``accounting`` value says nothing: a string of white space and
    characters drawn as nothing only (``""``, ``" "``, a zero-width space, a Hangul
    filler, the braille blank, a lone combining mark: :func:`_drawn_as_nothing`), or an
    object whose every value says nothing, lists within it included (``{}``,
    ``{"dropped_values": []}``).  Such a fold is read as carrying no accounting (spec,
    log-format: accounting records "the precision the fold surrendered"; adv108 #2:
    ``"accounting": ""`` turned a lost pin's errors into one warning); so do a string
    with no letter or digit (``"-"``, ``"."``), a placeholder word (``"none"``,
    ``"n/a"``: :data:`PLACEHOLDERS`), ``false`` and ``0`` (adv138 #7: each turned a
    fold's errors into warnings).  Other numbers and ``true`` say something."""
    todo = [value]  # a stack, not recursion: the reader bounds the depth, not Python
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if len(item) <= _PLACEHOLDER_CHARS and "".join(  # fullwidth N/A too (adv139 #8)
                    ch for ch in unicodedata.normalize("NFKC", item).casefold()
                    if ch.isalnum()) in PLACEHOLDERS:
                continue
            if any(ch.isalnum() for ch in item if not _drawn_as_nothing(ch)):
                return False
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif item is not None and item is not False and item != 0:
            return False
    return True


PLACEHOLDERS = frozenset({"", "0", "none", "na", "nil", "null", "nothing", "empty", "tbd",
                          "todo", "unknown", "undefined", "nan", "false", "no", "n",
                          "notapplicable", "nothingdropped", "nothinglost",
                          "nothingsurrendered", "nochange", "nochanges"})
"""Words that stand for no accounting (letters and digits only, lower case: ``N/A`` is
``na``); :func:`records_nothing` reads a string of one of them as saying nothing."""
_PLACEHOLDER_CHARS = 40
"""Longest string :func:`records_nothing` compares with :data:`PLACEHOLDERS`."""


def _drawn_as_nothing(ch: str) -> bool:
    """A character renderers draw as nothing: one of the report's invisible characters
    (:data:`compaction_audit.invisible.INVISIBLE`: format characters, variation
    selectors, Hangul fillers, the braille blank U+2800 of adv109 #8, every default
    ignorable) or a combining mark (Mn, Me)."""
    return _INVISIBLE_RE.match(ch) is not None or unicodedata.category(ch) in ("Mn", "Me")


def retained(value: Any) -> dict[str, float | None]:
    """The ``retained`` list as ``{id: salience}`` in either form.

    Object form ``{"id", "salience"}`` and pair form ``[id, salience]``; ``salience``
    may be null (or absent in object form).  The common case runs at C speed (``dict``
    over pairs, ``itemgetter`` over objects); the slow path only runs to name the bad
    element.  Raises :class:`FieldError` for bad elements, bad ids or salience, and ids
    listed twice.
    """
    items = as_list(value, "retained")
    if not items:
        return {}
    shapes = set(map(type, items))
    try:
        if shapes == {list}:
            table = dict(items)
        elif shapes == {dict}:
            ids = map(itemgetter("id"), items)
            table = dict(zip(ids, map(methodcaller("get", "salience"), items), strict=True))
        else:
            raise ValueError
    except (ValueError, TypeError, KeyError):
        return _retained_slow(items)
    if len(table) != len(items) or not set(map(type, table)) <= {str}:
        return _retained_slow(items)
    if not set(map(type, table.values())) <= _SALIENCE_TYPES:
        return _retained_slow(items)
    if "" in table:
        return _retained_slow(items)
    return table


def retained_pairs(value: Any, working_set: AbstractSet[str]
                   ) -> tuple[set[str], set[str], float, int, dict[str, Any]] | None:
    """The fast path of :func:`retained` for the pair form, with the working-set delta.

    Returns ``(ids, entering, salience_sum, salience_known, table)``: the retained ids,
    those of them not in ``working_set`` (the ids of the previous round), the sum and
    the number of known saliences, and ``{id: salience}``; or None when
    :func:`retained` must decide (object form, an empty list, anything malformed).

    Why this is exact with three passes over the list: ``dict(value)`` fails unless
    every element is a 2-item iterable with a hashable first item; a 2-item iterable
    that is not a list (a 2-character string, a 2-key object) gives a string value,
    which the value type check rejects; an id already in ``working_set`` equals a
    string there and so is one (no int, float, bool or null equals a string), so only
    ``entering`` needs its id types checked.  The salience sum runs over the values in
    list order, the same additions as :func:`retained` then a plain ``sum``.
    """
    if type(value) is not list or not value:
        return None
    try:
        table = dict(value)
    except (TypeError, ValueError):
        return None
    if len(table) != len(value) or "" in table:
        return None
    values = table.values()
    types = set(map(type, values))
    if types <= _NUMBER_TYPES:
        total, count = float(sum(values)), len(table)
    elif types <= _SALIENCE_TYPES:
        known = [v for v in values if v is not None]
        total, count = float(sum(known)), len(known)
    else:
        return None
    ids = set(table)
    entering = ids - working_set
    for item in entering:
        if type(item) is not str:
            return None
    return ids, entering, total, count, table


_ABSENT = object()


def changed_saliences(table: dict[str, Any], previous: dict[str, Any]
                      ) -> list[tuple[str, Any]]:
    """The ``(id, salience)`` pairs of ``table`` not in ``previous`` with that value
    (entering ids, new values), in ``table``'s order.  Three passes at C speed, no set
    of pairs built (about a third of ``table.items() - previous.items()``)."""
    olds = map(previous.get, table, repeat(_ABSENT))
    return list(compress(table.items(), map(ne, olds, table.values())))


def _retained_slow(items: list[Any]) -> dict[str, float | None]:
    table: dict[str, float | None] = {}
    for i, element in enumerate(items):
        where = f"retained[{i}]"
        if type(element) is list:
            if len(element) != 2:
                raise FieldError("a pair must be [id, salience]", where)
            raw_id, sal = element
        elif type(element) is dict:
            if "id" not in element:
                raise FieldError("missing field", f"{where}.id")
            raw_id, sal = element["id"], element.get("salience")
        else:
            raise FieldError("expected an object or an [id, salience] pair, got "
                             f"{kind_of(element)}", where)
        item = as_id(raw_id, f"{where}.id")
        if type(sal) not in _SALIENCE_TYPES:
            raise FieldError(f"salience must be a number or null, got {kind_of(sal)}",
                             f"{where}.salience")
        if item in table:
            raise FieldError(f"id {item!r} listed twice", f"{where}.id")
        table[item] = sal
    return table


def logged(value: Any) -> dict[str, float | int | None]:
    """The optional ``logged`` aggregates; unknown keys are ignored."""
    if type(value) is not dict:
        raise FieldError(f"expected an object, got {kind_of(value)}", "logged")
    out: dict[str, float | int | None] = {}
    for key in LOGGED_FLOATS:
        v = value.get(key)
        if v is not None and type(v) not in _NUMBER_TYPES:
            raise FieldError(f"expected a number, got {kind_of(v)}", f"logged.{key}")
        out[key] = v
    for key in LOGGED_INTS:
        v = value.get(key)
        out[key] = None if v is None else as_int(v, f"logged.{key}", 0)
    return out


COMPACTION_FLAGS = ("opaque", "inferred", "redacted")
COMPACTION_COUNTS = ("tokens_before", "tokens_after", "summary_tokens", "messages_removed")
COMPACTION_WORDS = ("kind", "trigger", "strategy", "unchecked", "sizes", "tokens_before_from")
"""The keys of a round's ``compaction`` extension that the reports read, by type (the
adapters write them; other keys are kept as they are)."""


def check_compaction(compaction: dict[str, Any]) -> None:
    """Raise :class:`FieldError` (``compaction.KEY``) for a key the reports read that has
    the wrong type: a flag not true, false or null, a count not an integer 0 to
    :data:`MAX_TOKENS` or null, a word not a string or null.  ``"opaque": "false"``
    made the summary uncheckable and changed the verdict, ``"tokens_before": -5``
    printed ``context -5 -> ...`` and ``"kind": {...}`` a Python repr (adv61; the
    adapters reject such values in their products' logs)."""
    for key in COMPACTION_FLAGS:
        value = compaction.get(key)
        if value is not None and type(value) is not bool:
            raise FieldError(f"expected true, false or null, got {kind_of(value)}",
                             f"compaction.{key}")
    for key in COMPACTION_COUNTS:
        value = compaction.get(key)
        if value is not None:
            as_int(value, f"compaction.{key}", 0, MAX_TOKENS)
    for key in COMPACTION_WORDS:
        value = compaction.get(key)
        if value is not None and type(value) is not str:
            raise FieldError(f"expected a string or null, got {kind_of(value)}",
                             f"compaction.{key}")


def kind_of(value: Any) -> str:
    """What a value of the wrong type is, in an error: "a list", "a number", ..."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
