"""Helpers shared by the foreign-log adapters: token estimates, line decoding, rounds.

The adapters (:mod:`compaction_audit.io.claude_code`, :mod:`compaction_audit.io.codex`)
read logs that were not written for this tool.  Where such a log measures nothing for
an item, its size is *estimated* here, one documented way for every adapter:
``ceil(utf8_bytes / 4)``, plus a flat :data:`IMAGE_TOKENS` per image.

:class:`RoundAssembler` keeps the bookkeeping that turns a stream of "a span entered
the context" / "a user turn began" / "the context was compacted" events into
``compaction-audit/1`` round records in delta mode (no ``retained``): unique ids, the
working set in order, and the rounds with the line that each one stands for.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io.harness import SUMMARY
from compaction_audit.io.jsonerrors import json_error, not_out_of_memory
from compaction_audit.io.lines import iter_lines
from compaction_audit.io.records import LINE_FILE_KEY, MAX_TOKENS, SPAN_LINE_KEY
from compaction_audit.io.surrogates import loads

BYTES_PER_TOKEN = 4
"""The estimate's divisor: about four UTF-8 bytes per token for English text and code."""

IMAGE_TOKENS = 1600
"""Flat estimate for one image or binary document (about a full-size image on Claude)."""


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(len(utf8 bytes) / 4)``; 0 for ``""``."""
    return estimate_bytes(len(text.encode("utf-8", "surrogatepass")))


def estimate_bytes(size: int) -> int:
    """Estimated tokens of ``size`` bytes of text: ``ceil(size / 4)``."""
    return -(-max(size, 0) // BYTES_PER_TOKEN)


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes (the weight used to split a measured total)."""
    return len(text.encode("utf-8", "surrogatepass"))


def split_tokens(total: int, weights: list[int]) -> list[int]:
    """Split ``total`` over ``weights`` proportionally, in integers that sum to ``total``.

    Largest-remainder rounding, ties to the earlier weight.  All-zero weights split
    evenly.  Used to share one API call's measured ``output_tokens`` among the blocks
    the call produced.
    """
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    wsum = sum(weights)
    shares = [total * w // wsum for w in weights]
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % wsum), i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


def decode_object(path: str, number: int, raw: bytes) -> dict[str, Any]:
    """Decode one JSONL line that must hold an object; :class:`LogError` names the line."""
    try:
        obj = loads(raw)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
    except orjson.JSONDecodeError as exc:  # "truncated last line" only when cut short
        raise LogError(path, number, json_error(raw, exc.msg, exc.pos)) from None
    if type(obj) is not dict:
        raise LogError(path, number, "expected a JSON object on every line")
    return obj


_FEW_DELETES = 8
"""At most this many lines leave :class:`RoundAssembler`'s line index by a delete each
(O(len) moves in C each); more are filtered out in one pass."""


class RoundAssembler:
    """Accumulate round records from adapter events, in delta mode.

    * :meth:`span` adds a raw span to the open round (or to a pending list before the
      first round opens: those spans join the first round).
    * :meth:`turn` closes the open round and opens a new one at ``line``.
    * :meth:`compaction` opens a round at ``line`` that folds ``fold`` into one
      summary and evicts them; :meth:`microcompact` opens one that only evicts.
    * :meth:`finish` returns ``[(source_line, record), ...]`` with rounds numbered
      0, 1, 2, ...

    ``line_file``: when set (by an adapter that reads several files for one trace), each
    round opened from then on names it under :data:`~compaction_audit.io.records.LINE_FILE_KEY`:
    the file its line is a line of.

    ``working`` maps each id in the working set to the line that defined it, in the
    order the items entered.  Adapters read it but change it only through these
    methods, which also keep it indexed by line for :meth:`fold_outside`.
    """

    def __init__(self) -> None:
        self.working: dict[str, int] = {}
        self._order: dict[str, int] = {}  # working-set id -> its entry number
        self._entered = 0  # items that entered the working set so far
        self._at_line: dict[int, dict[str, None]] = {}  # line -> working-set ids there
        self._lines: list[int] = []  # the keys of _at_line, sorted
        self.visited = 0  # lines and ids fold_outside looked at (a work counter for tests)
        self._ids: set[str] = set()
        self._next: dict[str, int] = {}
        self._rounds: list[tuple[int, dict[str, Any]]] = []
        self._current: dict[str, Any] | None = None
        self._current_line = 0
        self._pending: list[tuple[int, dict[str, Any]]] = []
        self.line_file: str | None = None

    def new_id(self, base: str) -> str:
        """``base`` if unused, else ``base#2``, ``base#3``, ... (ids are unique per session).

        The search for a base resumes where the last one stopped, so n items with one
        base cost O(n), not O(n²) (issue 11, item 5)."""
        k = self._next.get(base, 1)
        item = base if k == 1 else f"{base}#{k}"
        while item in self._ids:
            k += 1
            item = f"{base}#{k}"
        self._next[base] = k
        self._ids.add(item)
        return item

    def span(self, line: int, base_id: str, source: str, text: str | None,
             tokens: int | None = None) -> dict[str, Any]:
        """Add a raw span defined at ``line``; ``tokens`` defaults to the estimate of ``text``.

        The span keeps ``line`` under :data:`~compaction_audit.io.records.SPAN_LINE_KEY`:
        reports show where a lost fact was stated, not the round's line (issue 10).

        Returns the span object, which the caller may still update (e.g. to set
        ``tokens`` once an API call's usage is complete).
        """
        if tokens is None:
            tokens = estimate_tokens(text or "")
        obj: dict[str, Any] = {"id": self.new_id(base_id), "tokens": tokens, "source": source,
                               SPAN_LINE_KEY: line}
        if text is not None:
            obj["text"] = text
        if self._current is None:
            self._pending.append((line, obj))
        else:
            self._current["spans"].append(obj)
        self._enter(obj["id"], line)
        return obj

    def _enter(self, item: str, line: int) -> None:
        self.working[item] = line
        # a counter, not len(_order): that shrinks on eviction, and a later item got the
        # number of one still in the working set (fold_outside then put it too early)
        self._order[item] = self._entered
        self._entered += 1
        here = self._at_line.get(line)
        if here is None:
            here = self._at_line[line] = {}
            if not self._lines or self._lines[-1] < line:
                self._lines.append(line)
            else:
                bisect.insort(self._lines, line)
        here[item] = None

    def fold_outside(self, keep: tuple[int, int] | None, keep_lines: set[int],
                     cut: int | None) -> list[str]:
        """Working-set ids in entry order whose line is ``<= cut`` (any line when
        ``cut`` is None), outside the inclusive line range ``keep`` and not in
        ``keep_lines``.

        Only the lines outside ``keep`` up to ``cut`` are visited: a compaction that
        keeps most of a large working set (Claude Code's ``preservedSegment``) costs
        what it folds plus ``len(keep_lines)``, not the size of the working set
        (issue 11, class 5)."""
        lo, hi = 0, len(self._lines)
        if cut is not None:
            hi = bisect.bisect_right(self._lines, cut)
        spans = [(lo, hi)]
        if keep is not None and keep[0] <= keep[1]:
            spans = [(lo, min(hi, bisect.bisect_left(self._lines, keep[0]))),
                     (max(lo, bisect.bisect_right(self._lines, keep[1])), hi)]
        fold: list[str] = []
        for a, b in spans:
            for line in self._lines[a:b]:
                self.visited += 1
                if line not in keep_lines:
                    fold.extend(self._at_line[line])
        self.visited += len(fold)
        fold.sort(key=self._order.__getitem__)
        return fold

    def turn(self, line: int) -> dict[str, Any]:
        """Close the open round and open the next one at ``line``; returns it."""
        if self._current is not None:
            self._rounds.append((self._current_line, self._current))
        self._current = {"type": "round", "round": len(self._rounds),
                         "spans": [obj for _, obj in self._pending]}
        if self.line_file is not None:
            self._current[LINE_FILE_KEY] = self.line_file
        self._current_line = line
        self._pending = []
        return self._current

    def compaction(self, line: int, *, fold: list[str], fallback_children: list[str],
                   base_id: str, text: str | None, tokens: int,
                   info: dict[str, Any]) -> str:
        """Open a compaction round at ``line``: one summary folding ``fold``, which are evicted.

        When ``fold`` is empty the summary's children are ``fallback_children``
        (items the compaction kept: they stay in the working set).  When both are
        empty there is nothing to fold and the summary is recorded as a raw span with
        source ``harness:summary`` (a summary is never the user's words).  ``info``
        becomes the round's ``compaction`` extension, completed in place with
        ``summary_id``, ``summary_tokens`` and ``sizes: "estimated"`` (the summary's and
        the folded items' tokens are this module's estimates, where ``tokens_before``
        and ``tokens_after`` are the product's measure: the reports say "about";
        usertest12) (the caller may still fill ``tokens_after`` later).  Returns the
        summary id.
        """
        rnd = self.turn(line)
        children = fold or fallback_children
        if not children:
            summary_id = str(self.span(line, base_id, SUMMARY, text, tokens)["id"])
        else:
            summary_id = self.new_id(base_id)
            summary: dict[str, Any] = {"id": summary_id, "tokens": tokens,
                                       "children": list(children)}
            if text is not None:
                summary["text"] = text
            rnd["summaries"] = [summary]
            self._evict(rnd, fold)
            self._enter(summary_id, line)
        info.update(summary_id=summary_id, summary_tokens=tokens, sizes="estimated")
        rnd["compaction"] = info
        return summary_id

    def microcompact(self, line: int, evict: list[str], info: dict[str, Any]) -> None:
        """Open a round at ``line`` that evicts ``evict`` without a summary."""
        rnd = self.turn(line)
        self._evict(rnd, evict)
        info.update(summary_id=None, summary_tokens=0)
        rnd["compaction"] = info

    def drop(self, line: int, ids: list[str]) -> None:
        """Open a round at ``line`` that evicts ``ids`` with no compaction: items the
        product took out of the context without a summary (a turn the user rolled
        back).  Nothing folds them, so no rule reads them as lost."""
        rnd = self.turn(line)
        self._evict(rnd, ids)

    def drop_from(self, line: int, item: str) -> list[str]:
        """:meth:`drop` ``item`` and every item that entered the working set after it
        (a conversation rewound to before ``item``); returns them, in entry order.
        Nothing, and no round, when ``item`` is not in the working set.  Cost: the
        items dropped, not the working set."""
        if item not in self.working:
            return []
        gone = self.entered_since(self._order[item])
        self.drop(line, gone)
        return gone

    @property
    def entered(self) -> int:
        """How many items have entered the working set so far (evicted ones too): an
        entry number for :meth:`entered_since`."""
        return self._entered

    def entered_since(self, entered: int) -> list[str]:
        """The items still in the working set whose entry number is ``entered`` or
        more, in entry order."""
        gone: list[str] = []
        for later in reversed(self.working):
            if self._order[later] < entered:
                break
            gone.append(later)
        gone.reverse()
        return gone

    def evict_now(self, ids: list[str]) -> None:
        """Evict ``ids`` in the open round (one the caller just opened at a person's
        turn: the turns a rewind took back leave where the new one begins, with no
        round of their own whose raw_ratio would measure nothing)."""
        if self._current is None:
            raise ValueError("no open round")
        self._evict(self._current, ids)

    def _evict(self, rnd: dict[str, Any], ids: list[str]) -> None:
        """Evict ``ids`` (those in the working set) in the round ``rnd``.  Lines left
        without an item leave the line index in one pass over the index from the first
        of them when there are many (a delete each moved the rest of the index: a fold
        of n lines was O(n²); issue 11, class 5, adv9), by a delete each when there are
        few."""
        gone = [item for item in ids if item in self.working]
        if gone:
            rnd["evicted"] = gone
        emptied: list[int] = []
        for item in gone:
            line = self.working.pop(item)
            del self._order[item]
            here = self._at_line[line]
            del here[item]
            if not here:
                del self._at_line[line]
                emptied.append(line)
        if len(emptied) <= _FEW_DELETES:
            for line in emptied:
                del self._lines[bisect.bisect_left(self._lines, line)]
        else:  # from the first line emptied on: a rewind empties the newest lines, and
            # rebuilding the whole index at each made repeated rewinds quadratic (adv135 #2)
            empty = set(emptied)
            first = bisect.bisect_left(self._lines, min(emptied))
            self._lines[first:] = [line for line in self._lines[first:] if line not in empty]

    def finish(self) -> list[tuple[int, dict[str, Any]]]:
        """Close the open round and return every ``(source_line, round_record)``."""
        if self._current is None and self._pending:
            self.turn(self._pending[0][0])
        if self._current is not None:
            self._rounds.append((self._current_line, self._current))
            self._current = None
        return self._rounds


MAX_JSON_DEPTH = 254
"""The deepest nesting of objects and lists orjson writes back (it raises past it)."""

TOO_DEEP = (f"a value is nested more than {MAX_JSON_DEPTH} levels deep (objects and lists), "
            "the JSON nesting depth limit")
"""The message for a value too deeply nested to be written back or walked."""


def shape_error(path: str, number: int, exc: Exception) -> LogError:
    """The :class:`LogError` for an exception an adapter raised on a record shape it did
    not foresee: orjson's "Recursion limit reached" and Python's RecursionError say
    which limit (the nesting depth, :data:`TOO_DEEP`), anything else its type and text."""
    if isinstance(exc, RecursionError) or (isinstance(exc, orjson.JSONEncodeError)
                                           and "Recursion limit" in str(exc)):
        return LogError(path, number, TOO_DEEP)
    return LogError(path, number, f"unexpected record shape: {type(exc).__name__}: {exc}")


def feed(path: str, lines: Iterable[tuple[int, bytes]] | None,
         handle: Callable[[int, dict[str, Any]], None],
         check: Callable[[int, dict[str, Any]], LogError | None] | None = None) -> int:
    """Decode every line (read from ``path`` when ``lines`` is None) and pass it to
    ``handle(line_number, object)``; returns the first line number (0 when empty).
    ``check(line_number, object)`` runs first on each line; the :class:`LogError` it
    returns is raised (a record of another format: ``detect.line_checker``)."""
    first = 0
    for number, raw in iter_lines(path) if lines is None else lines:
        first = first or number
        obj = decode_object(path, number, raw)
        mixed = None if check is None else check(number, obj)
        if mixed is not None:
            raise mixed
        try:
            handle(number, obj)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError,
                RecursionError) as exc:  # a shape the adapter did not foresee
            raise shape_error(path, number, exc) from None
    return first


def lines_phrase(n: int, unit: str = "line") -> str:
    """``"1 line"``, ``"2,345 lines"``: how a reader note counts lines (or the records
    of a document, ``unit`` ``"event"``, ``"part"``)."""
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def unknown_type_note(kind: Any, what: str = "a type") -> str:
    """A reader note's reason for a line (or record) whose ``type`` the reader does not
    know (a Claude Code or Codex line, adv27 F2; a Codex payload, a Gemini CLI record,
    an opencode part, adv29 F4/F5): "of <what> this reader does not know (X): not
    read", the type X named, cut to 40 characters (the report escapes it)."""
    shown = repr(kind[:40]) if isinstance(kind, str) else repr(kind)[:40]
    return f"of {what} this reader does not know ({shown}): not read"


def session_record(source_format: str, session_id: str | None,
                   budget: int | None) -> dict[str, Any]:
    """The ``session`` record an adapter writes: no scorer, event-driven eviction."""
    record: dict[str, Any] = {"type": "session", "schema": "compaction-audit/1",
                              "eviction": "on-overflow", "source_format": source_format}
    if session_id is not None:
        record["session_id"] = session_id
    if budget is not None:
        record["budget_tokens"] = budget
    return record


def tool_input_text(value: Any) -> str:
    """A tool call's arguments as text for the discriminator analysis: the values, one
    per line, without the JSON keys (``file_path``, ``replace_all`` are the tool's
    schema, not facts of the session).  A string that holds a JSON object or list (as
    Codex writes ``arguments``) is decoded first."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                return tool_input_text(orjson.loads(stripped))
            except orjson.JSONDecodeError as exc:
                not_out_of_memory(exc.msg)
                return value
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return "\n".join(t for t in (tool_input_text(v) for v in value) if t)
    return "" if value is None else orjson.dumps(value).decode()


def tool_output_text(content: Any, image_types: tuple[str, ...]) -> tuple[str, int]:
    """A tool result's text and its number of images: ``None`` is ``("", 0)``, a
    string is itself, a list of content blocks is the blocks' texts joined by newlines
    (a block whose ``type`` is in ``image_types`` counts as an image and adds no text,
    a block without a string ``text`` is its JSON), anything else is its JSON.  Shared
    by the Claude Code (``tool_result`` content) and Codex (tool output) adapters."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return orjson.dumps(content).decode(), 0
    texts: list[str] = []
    images = 0
    for block in content:
        if isinstance(block, dict) and block.get("type") in image_types:
            images += 1
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            texts.append(orjson.dumps(block).decode())
    return "\n".join(texts), images


def count_problem(value: Any, unit: str = "tokens") -> str | None:
    """Why ``value``, read from a product's log, is no token count (None: null or an
    integer 0 to :data:`~compaction_audit.io.records.MAX_TOKENS`): "expected an integer
    >= 0", or, for a number past the bound, "must be <= 1,000,000,000,000 tokens"
    (adv56: a ``preTokens`` of 10^19 was printed as the context's size, and an integer
    past 64 bits, which orjson reads as a float, was called no integer >= 0)."""
    if value is None or (type(value) is int and 0 <= value <= MAX_TOKENS):
        return None
    if type(value) in (int, float) and value > MAX_TOKENS and value != float("inf"):
        return f"must be <= {MAX_TOKENS:,} {unit}"
    return "expected an integer >= 0"


def bounded_sum(path: str, line: int, parts: Iterable[int], where: str) -> int:
    """The sum of token counts ``parts`` (each already checked); :class:`LogError` at
    ``where`` when it is past :data:`~compaction_audit.io.records.MAX_TOKENS` (adv58:
    three usage counts of 10^12 each were printed as a context of 3,000,000,000,000
    tokens)."""
    total = sum(parts)
    if total > MAX_TOKENS:
        raise LogError(path, line, f"must be <= {MAX_TOKENS:,} tokens in all", where)
    return total


def check_counts(path: str, line: int, counts: Any, names: Iterable[str], where: str,
                 unit: str = "tokens") -> None:
    """Raise :class:`LogError` at ``where`` + the name for each of ``names`` in
    ``counts`` (an object, or null: nothing to check) whose value is neither null nor
    an integer >= 0, and at ``where`` itself when ``counts`` is neither null nor an
    object: a token count written as a string was dropped as if absent, and the
    compaction's sizes moved with no word (adv44: Cline's ``metrics.inputTokens``,
    Gemini CLI's and opencode's ``tokens``; adv46: ``tokens`` written as "820")."""
    if counts is None:
        return
    if not isinstance(counts, dict):
        raise LogError(path, line, "expected an object", where.rstrip("."))
    for name in names:
        problem = count_problem(counts.get(name), unit)
        if problem is not None:
            raise LogError(path, line, problem, f"{where}{name}")


def check_strings(path: str, line: int, obj: Any, names: Iterable[str], where: str) -> None:
    """Raise :class:`LogError` at ``where`` + the name for each of ``names`` in ``obj``
    (an object; anything else is let be) whose value is neither null nor a string: a
    part's ``text`` of another type was dropped as if empty, and the facts it held left
    the audit with no word (adv46: opencode, Gemini CLI and Cline text parts)."""
    if isinstance(obj, dict):
        _check(path, line, obj, names, where, "expected a string", lambda v: type(v) is str)


def _check(path: str, line: int, obj: dict[str, Any], names: Iterable[str], where: str,
           expected: str, ok: Callable[[Any], bool]) -> None:
    """Raise :class:`LogError` ``expected`` at ``where`` + the first of ``names`` whose
    value in ``obj`` is neither null nor ``ok``."""
    for name in names:
        value = obj.get(name)
        if value is not None and not ok(value):
            raise LogError(path, line, expected, f"{where}{name}")
