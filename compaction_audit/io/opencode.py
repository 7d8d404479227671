"""opencode sessions -> ``compaction-audit/1`` records.

Reads the JSON that ``opencode export <session>`` prints (``{info, messages: [{info,
parts}]}``) or opencode's SQLite store (tables ``session``, ``message``, ``part``, each
row's fields in a ``data`` JSON column; read with the standard library, read-only; the
most recently updated top-level session is read, and the report says so; the
other sessions are counted as not read, :func:`_from_store`).

* A user message opens a round when it has a text part a person typed (``synthetic``
  text parts are ``harness:meta``).
* A compaction is a user message with a ``{type: "compaction", auto, overflow?,
  tail_start_id?}`` part; the next assistant message with ``summary: true`` holds the
  summary.  opencode then sends nothing from before the compaction message but the
  tail from ``tail_start_id`` (newer versions), so the summary folds the rest of the
  working set.  ``auto`` gives the trigger; ``overflow`` is kept when present.
  A marker whose summary message does not come next is a compaction that could not be
  checked (:meth:`_Converter.unsummarized`).
* Pruned tool results carry ``state.time.compacted``: their output is replaced by a
  placeholder.  Each prune time becomes a ``microcompact`` round (before the first
  message created after it) that evicts those results.
* Tokens: an assistant message's ``tokens.output`` is split over its text and tool
  calls; ``tokens.input + tokens.cache.read`` is the measured context size.

The part grew fields across versions: unknown fields are ignored.  A part of a type
not in :data:`PART_TYPES` and a message of a role other than ``user`` and
``assistant`` are counted as not read (``lines_not_read``, a reader note: adv29 F4, the
``compaction`` part retyped ``Compaction`` made a failing session a plain PASS).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io.documents import (
    SQLITE_MAGIC,
    Conversion,
    Elements,
    as_object,
    chain_head,
    read_document,
    version_note,
)
from compaction_audit.io.harness import META
from compaction_audit.io.jsonerrors import not_out_of_memory
from compaction_audit.io.lines import iter_lines, reads_once
from compaction_audit.io.sqlite_store import BoundedStore
from compaction_audit.io.surrogates import loads
from compaction_audit.io.tokens import (
    bounded_sum,
    check_counts,
    check_strings,
    estimate_tokens,
    split_tokens,
    tool_input_text,
    unknown_type_note,
    utf8_len,
)

SOURCE_FORMAT = "opencode"

PART_TYPES = frozenset({"text", "subtask", "reasoning", "file", "tool", "step-start",
                        "step-finish", "snapshot", "patch", "agent", "retry", "compaction"})
"""The part types of opencode's message schema (``Part`` in
``packages/opencode/src/session/message-v2.ts``).  ``text``, ``file``, ``tool`` and
``compaction`` are read; the others hold no span (reasoning, step and snapshot
bookkeeping, retries, an agent or subtask mention); any other type is counted as not
read."""

SEEN_MAJOR = ("0", "1")
"""Major ``info.version`` values whose message and part schema this adapter follows."""


def sniff_document(value: Any) -> bool:
    """True for ``opencode export`` output: ``{info: {id}, messages: [{info, parts}]}``."""
    if not isinstance(value, dict) or not isinstance(value.get("info"), dict):
        return False
    messages = value.get("messages")
    if not isinstance(messages, list):
        return False
    first = next((m for m in messages if isinstance(m, dict)), None)
    return first is None or ("info" in first and "parts" in first)


def companions(path: str) -> list[str]:
    """The files other than ``path`` that SQLite reads with a store: its ``-wal``,
    ``-shm`` and ``-journal`` files (``[]`` for an export, or standard input), beside
    the name given and, for a symbolic link, beside the file it names, where SQLite
    reads them (adv19a F2).  ``-o`` may not name them."""
    if path == "-" or not _sqlite_file(path):
        return []
    names = dict.fromkeys([path, os.path.realpath(path)])
    return [f"{name}-{end}" for name in names for end in ("wal", "shm", "journal")]


def _sqlite_file(path: str) -> bool:
    """True when the file ``path`` itself (not decompressed) opens with SQLite's header."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


@dataclass
class _Entry:
    """One message to convert: its line (or position), ``info`` and ``parts``."""

    line: int
    where: str
    info: Any
    parts: Any


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None,
            skipped: list[LogError] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The session as ``(source_line, record)`` pairs, session record first.

    For the SQLite store a "line" is the message's position in the session.
    ``skipped`` None: a malformed message raises :class:`LogError`; a list: lenient,
    each malformed message is skipped and its error appended.
    """
    source = iter_lines(path) if lines is None else lines
    first = next(iter(source), None)
    notes: list[str] = []
    unread: list[tuple[str, str]] = []  # (unit, why) of each record not read
    if first is not None and first[1].startswith(SQLITE_MAGIC):
        _close(source)
        session, entries = _from_store(path, notes, unread)
    else:
        doc = read_document(path, chain_head(first, source))
        if not sniff_document(doc.value):
            raise LogError(path, 1, "expected opencode export JSON {info, messages}",
                           "messages")
        session = doc.value["info"]
        entries = [_Entry(doc.line_of("messages", i), f"messages[{i}]",
                          m.get("info") if isinstance(m, dict) else None,
                          m.get("parts") if isinstance(m, dict) else None)
                   for i, m in enumerate(doc.value["messages"])]
    version = session.get("version") if isinstance(session, dict) else None
    known = [version] if str(version).split(".")[0] in SEEN_MAJOR else []
    note = version_note("opencode", version, known, "1.x")
    conv = _Converter(path)
    for text in [*notes, note]:
        conv.note(text)
    for unit, why in unread:
        conv.unread(why, unit)
    sid = as_object(session).get("id")
    conv.session_id = sid if isinstance(sid, str) else None
    el = Elements(path, skipped)
    for entry in entries:
        el.run(entry.line, conv.message, entry)
    conv.unsummarized()
    conv.prune_until(None, entries[-1].line if entries else 1)
    yield from conv.output(SOURCE_FORMAT, 1)


def _close(lines: Iterable[tuple[int, bytes]]) -> None:
    close = getattr(lines, "close", None)
    if close is not None:
        close()


def _from_store(path: str, notes: list[str], unread: list[tuple[str, str]]
                ) -> tuple[dict[str, Any], list[_Entry]]:
    """The latest top-level session of an SQLite store and its messages, read through
    :class:`~compaction_audit.io.sqlite_store.BoundedStore`: ``session``, ``message``
    and ``part`` must be plain tables, and the work is bounded by the file's size.

    What is not read is appended to ``unread`` as ``(unit, why)`` (adv31 N3: a failing
    session beside a later one, or marked a subagent, passed with no word in the CI
    formats): each other session that holds a message, top-level or subagent, or
    that has no row of its own (adv81 #1: deleting a failing session's row left a
    PASS), as one ``session``; each part of the session whose message is not one of
    its rows as one ``part``.  A part whose ``message_id`` names a message of the session is read
    whatever its ``session_id`` column says."""
    if reads_once(path):
        raise LogError(path, 0, "an opencode SQLite store cannot be read from standard "
                       "input or a pipe")
    if not _sqlite_file(path):  # the store decompressed, the file itself is not (adv65)
        raise LogError(path, 0, "a compressed opencode SQLite store is not read: SQLite "
                       "reads the file itself, so decompress it first")
    with BoundedStore(path) as db:
        db.require_tables("session", "message", "part")
        sessions = [_row(r) for r in db.rows("SELECT * FROM session")]
        top = [s for s in sessions if not _parent(s)]
        if not top:  # adv56: a session its own parent was "no session"
            raise LogError(path, 0, "the store holds no top-level session" + (
                f" ({len(sessions)} marked a subagent session by parent_id)"
                if sessions else ""), "session")
        top.sort(key=lambda s: (_sort_time(s.get("time_updated")), str(s.get("id"))))
        session = top[-1]
        _bad_data(path, 0, session, "session")
        sid = session.get("id")
        if len(top) > 1:
            notes.append(f"opencode store: read session {str(sid)[:60]}, the "
                         f"latest of {len(top)} (use `opencode export` for another)")
        others = [r["session_id"] for r in db.rows(
            "SELECT DISTINCT session_id FROM message WHERE session_id IS NOT ?", (sid,))]
        held = {str(h) for h in others if h is not None}
        for other in sessions:
            if other is not session and str(other.get("id")) in held:
                unread.append(("session", _OTHER_SUBAGENT if _parent(other) else _OTHER_TOP))
        known = {str(s.get("id")) for s in sessions}  # adv81 #1: a failing session's row
        unread.extend(("session", _NO_ROW) for h in others  # deleted passed with no word
                      if h is None or str(h) not in known)
        rows = [_row(r) for r in db.rows(
            "SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,))]
        by_message = any(r["name"] == "message_id" for r in db.rows(
            "SELECT name FROM pragma_table_info('part')"))
        query = ("SELECT * FROM part WHERE session_id = ? OR message_id IN (SELECT id FROM "
                 "message WHERE session_id = ?) ORDER BY id" if by_message
                 else "SELECT * FROM part WHERE session_id = ? ORDER BY id")
        parts: dict[str, list[dict[str, Any]]] = {}
        for r in db.rows(query, (sid, sid) if by_message else (sid,)):
            part = _row(r)
            parts.setdefault(str(part.get("message_id") or part.get("messageID")), []
                             ).append(part)
    for i, m in enumerate(rows):  # the order of the messages: a -5 or 1.5 moved one
        when = m.get("time_created")  # first and changed what a compaction folded (adv46)
        if when is not None and (type(when) is not int or when < 0):
            raise LogError(path, i + 1, "expected an integer >= 0",
                           f"message {i + 1}.time_created")
    entries = [_Entry(i + 1, f"message {i + 1}", m, parts.pop(str(m.get("id")), []))
               for i, m in enumerate(rows)]
    for orphans in parts.values():
        unread.extend([("part", _ORPHAN_PART)] * len(orphans))
    return session, entries


_OTHER_TOP = ("of the store other than the one read, not audited (audit one with "
              "`opencode export <id>`)")
_OTHER_SUBAGENT = ("of the store marked a subagent session (parent_id), not audited "
                   "(audit one with `opencode export <id>`)")
_ORPHAN_PART = "of the session whose message is not in the store: not read"
_NO_ROW = ("holding messages but no row of the store's session table (or no session "
           "id), not audited")

COMPACTION_ELSEWHERE = ("a compaction part in a message that is not the user's (opencode "
                        "writes it in a user message): not read")
"""The unread reason of a ``compaction`` part outside a user message (adv73: it was
dropped without a word, and its summary message read as a plain reply)."""

SUMMARY_WITHOUT_MARKER = ("an assistant message with summary: true and no compaction part "
                          "before it: read as a compaction of everything before it, "
                          "trigger unknown")
"""The note of a summary message that no compaction part announced (adv73)."""


def _parent(session: dict[str, Any]) -> Any:
    """A session's parent id (``parent_id`` column or ``parentID`` in its data)."""
    return session.get("parent_id") or session.get("parentID")


def _sort_time(value: Any) -> float:
    """A session's ``time_updated`` as a number to sort by (0 when not a number)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


_BAD_DATA = "\x00bad data"
"""The key under which :func:`_row` keeps why a row's ``data`` could not be read."""


def _row(out: dict[str, Any]) -> dict[str, Any]:
    """A row (a dict, consumed), its ``data`` JSON merged in (columns win: ids, times).
    A ``data`` that is not JSON, or not a JSON object, is kept as why under
    :data:`_BAD_DATA`: the row's message is then a bad record (:func:`_bad_data`), not a
    row read without its content (adv14 F9: a user's part dropped that way let a
    failing session pass)."""
    data = out.pop("data", None)
    if isinstance(data, (str, bytes)):
        try:
            decoded = loads(data)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
        except orjson.JSONDecodeError as exc:
            not_out_of_memory(exc.msg)
            return {**out, _BAD_DATA: f"bad JSON: {exc}"}
        if not isinstance(decoded, dict):
            return {**out, _BAD_DATA: "expected a JSON object"}
        out = {**decoded, **{k: v for k, v in out.items() if v is not None}}
    return out


def _bad_data(path: str, line: int, row: dict[str, Any], where: str) -> None:
    """Raise :class:`LogError` naming ``where`` when :func:`_row` could not read the
    row's ``data``."""
    if _BAD_DATA in row:
        raise LogError(path, line, str(row[_BAD_DATA]), f"{where}.data")


class _Converter(Conversion):
    """The state machine behind :func:`records`."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.pending: dict[str, Any] | None = None  # compaction info awaiting its summary
        self.pruned: dict[float, list[str]] = {}  # prune time -> result span ids
        self.prune_times: list[float] = []  # the keys of ``pruned``, a heap (heapq)
        self.since: list[tuple[str, list[str]]] = []  # messages since the last compaction

    def message(self, entry: _Entry) -> None:
        """One message and its parts; a message of a role, or a part of a type, the
        reader does not know is counted as not read."""
        info, parts, line = entry.info, entry.parts, entry.line
        if type(info) is not dict:
            raise LogError(self.path, line, "expected an object", f"{entry.where}.info")
        if type(parts) is not list:
            raise LogError(self.path, line, "expected a list", f"{entry.where}.parts")
        _bad_data(self.path, line, info, f"{entry.where}.info")
        _check_time(self.path, line, info.get("time"), "created", f"{entry.where}.info.time")
        for j, part in enumerate(parts):
            if type(part) is not dict:
                raise LogError(self.path, line, "expected an object",
                               f"{entry.where}.parts[{j}]")
            _bad_data(self.path, line, part, f"{entry.where}.parts[{j}]")
            check_strings(self.path, line, part, ("type", "text", "tail_start_id"),
                          f"{entry.where}.parts[{j}].")  # a tail of 3 or [..] (adv68 #3)
            state = part.get("state")
            if part.get("type") == "tool":  # a state null or 5, a status 5: the result
                at = f"{entry.where}.parts[{j}].state"  # and its prune went with no
                if type(state) is not dict:  # word (adv65 #5)
                    raise LogError(self.path, line, "expected an object", at)
                check_strings(self.path, line, state, ("status",), f"{at}.")
                _check_time(self.path, line, state.get("time"), "compacted", f"{at}.time")
        tokens = info.get("tokens")
        check_counts(self.path, line, tokens, ("input", "output"), f"{entry.where}.info.tokens.")
        check_counts(self.path, line, tokens.get("cache") if isinstance(tokens, dict) else None,
                     ("read",), f"{entry.where}.info.tokens.cache.")
        if isinstance(tokens, dict):  # the context size the reader measures
            bounded_sum(self.path, line, [_context_size(tokens) or 0],
                        f"{entry.where}.info.tokens: input + cache.read")
        role = info.get("role")
        flag = info.get("summary")
        if flag is not None and type(flag) is not bool and role == "assistant":
            # adv74: "true", 1 or an object read as a plain reply, and with the
            # compaction part gone a failing session passed with no word
            raise LogError(self.path, line, "expected true or false",
                           f"{entry.where}.info.summary")
        if not (role == "assistant" and flag is True):
            self.unsummarized()
        self.prune_until(_time(info, "created"), line)
        if role not in ("user", "assistant"):
            if not isinstance(role, str):
                raise LogError(self.path, line, "expected a string",
                               f"{entry.where}.info.role")
            self.unread(unknown_type_note(role, "a message role"), "message")
            return
        for part in parts:  # counted, never dropped without a word (adv29 F4)
            kind = part.get("type")
            if not isinstance(kind, str) or kind not in PART_TYPES:
                self.unread(unknown_type_note(kind, "a part type"), "part")
            elif kind == "compaction" and role != "user":  # adv73: dropped, and the
                self.unread(COMPACTION_ELSEWHERE, "part")  # session passed
        last = next(reversed(self.asm.working), None)  # new spans come after it
        if role == "user":
            self.user(line, info, parts)
        else:
            self.assistant(line, info, parts)
        added = list(takewhile(lambda item: item != last, reversed(self.asm.working)))
        self.since.append((str(info.get("id")), added[::-1]))

    def user(self, line: int, info: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        base = str(info.get("id") or f"line-{line}")
        marker = next((p for p in parts if p.get("type") == "compaction"), None)
        if marker is not None:
            auto = marker.get("auto")
            pending = self.announce(line, "auto" if auto is True else "manual"
                                    if auto is False else None)
            if isinstance(marker.get("overflow"), bool):
                pending["overflow"] = marker["overflow"]
            tail = marker.get("tail_start_id")
            ids = [mid for mid, _ in self.since]
            if isinstance(tail, str) and tail in ids:  # newer: a tail of messages is kept
                # from the *last* message with that id: a copy of the tail's first
                # message put early had kept everything since it, a plain PASS (adv30)
                kept = self.since[len(ids) - 1 - ids[::-1].index(tail):]
                pending["kept"] = [s for _, spans in kept for s in spans]
                pending["messages_removed"] = len(self.since) - len(kept)
                pending["tail_start_id"] = tail
            elif tail is not None:  # adv68 #3: read as no tail, with no word
                self.note("a compaction's tail_start_id names no message since the one "
                          "before it: what it kept is not known, and every message since "
                          "is read as folded")
            self.since = []  # the next compaction drops everything from this message on
            return  # opencode sends it as "What did we do so far?": not a person's turn
        typed = [p for p in parts if p.get("type") == "text" and not p.get("synthetic")
                 and isinstance(p.get("text"), str) and p["text"].strip()]
        if typed:
            self.asm.turn(line)
        for part in parts:
            kind = part.get("type")
            text = part.get("text")
            if kind == "text" and isinstance(text, str) and text.strip():
                source = META if part.get("synthetic") else "user"
                self.asm.span(line, base, source, text)
            elif kind == "file":
                body = _file_text(part)
                self.asm.span(line, f"{base}:file", "tool_result:file", body)

    def announce(self, line: int, trigger: str | None) -> dict[str, Any]:
        """A compaction at ``line`` awaiting its summary message (:attr:`pending`,
        returned), folding the messages since the last one."""
        self.pending = {"trigger": trigger, "tokens_before": self.last_input,
                        "tokens_after": None, "opaque": False, "kind": "compact",
                        "strategy": "summary", "messages_removed": len(self.since),
                        "line": line}
        return self.pending

    def assistant(self, line: int, info: dict[str, Any], parts: list[dict[str, Any]]
                  ) -> None:
        base = str(info.get("id") or f"line-{line}")
        tokens = as_object(info.get("tokens"))
        self.measured(_context_size(tokens))
        if info.get("summary") is True:
            if self.pending is None:  # adv73: read as a plain reply, it folded nothing
                self.note(SUMMARY_WITHOUT_MARKER)
                self.announce(line, None)
                self.since = []
            self.summary(line, base, parts)
            return
        own = [p for p in parts if p.get("type") in ("text", "tool")]
        out = tokens.get("output")
        shares: list[int | None] = [None] * len(own)
        if type(out) is int and out > 0 and own:
            shares = list(split_tokens(out, [utf8_len(_own_text(p)) for p in own]))
        for part, share in zip(own, shares, strict=True):
            if part.get("type") == "text":
                if str(part.get("text") or "").strip():
                    self.asm.span(line, base, "assistant", str(part["text"]), share)
                continue
            self.tool(line, part, share)

    def tool(self, line: int, part: dict[str, Any], share: int | None) -> None:
        """A tool part: its call and, once done, its result (pruned ones noted)."""
        name = str(part.get("tool") or "unknown")
        call = str(part.get("callID") or part.get("id") or f"line-{line}")
        state = as_object(part.get("state"))
        self.asm.span(line, call, f"tool_call:{name}", tool_input_text(state.get("input")),
                      share)
        status = state.get("status")
        if status not in ("completed", "error"):
            if status not in TOOL_STATUSES:  # "Completed": its result is not read, said
                self.note(f"a tool part of a status this reader does not know "
                          f"({str(status)[:40]!r}): its result is not read")
            return
        body = state.get("output") if status == "completed" else state.get("error")
        text = body if isinstance(body, str) else orjson.dumps(body).decode()
        span = self.asm.span(line, f"{call}:result", f"tool_result:{name}", text)
        when = as_object(state.get("time")).get("compacted")
        if isinstance(when, (int, float)) and not isinstance(when, bool):
            at = float(when)
            if at not in self.pruned:
                heapq.heappush(self.prune_times, at)
            self.pruned.setdefault(at, []).append(str(span["id"]))

    def summary(self, line: int, base: str, parts: list[dict[str, Any]]) -> None:
        """The assistant summary message: fold everything before the compaction."""
        info, self.pending = self.pending or {}, None
        text = "\n".join(str(p.get("text")) for p in parts
                         if p.get("type") == "text" and isinstance(p.get("text"), str))
        start = info.pop("line", line)
        kept = set(info.pop("kept", []))
        fold = [s for s in self.asm.working if s not in kept]
        self.asm.compaction(start, fold=fold, fallback_children=[], base_id=base,
                            text=text, tokens=estimate_tokens(text), info=info)
        self.awaiting_after.append(info)

    def unsummarized(self) -> None:
        """The pending compaction, when its summary message did not come next (a
        message other than an assistant one with ``summary: true``, or the end of the
        session): a compaction at its marker's line that could not be checked (its
        ``unchecked`` reason), which folds nothing.  adv31 N4: the summary message's
        ``summary`` flag renamed dropped the compaction without a word and a failing
        session passed; Codex's event without its ``compacted`` line is recorded so too.
        """
        info, self.pending = self.pending, None
        if info is None:
            return
        line = info.pop("line")
        info.pop("kept", None)
        info["unchecked"] = ("the compaction part is not followed by its summary message "
                             "(an assistant message with summary: true)")
        self.asm.compaction(line, fold=[], fallback_children=[], base_id=f"line-{line}",
                            text=None, tokens=0, info=info)
        self.awaiting_after.append(info)

    def prune_until(self, when: float | None, line: int) -> None:
        """Open a microcompact round at ``line`` for each prune time up to ``when``
        (None: all that are left), earliest first.

        The pending times are a heap: a message costs the times it reaches (log n
        each), not a sort of every time still pending (was n messages x n times when
        the prunes lie after every message; issue 11, class 5, adv9 F4)."""
        times = self.prune_times
        while times and (when is None or times[0] <= when):
            gone = [s for s in self.pruned.pop(heapq.heappop(times))
                    if s in self.asm.working]
            if gone:
                self.asm.microcompact(line, gone, {
                    "trigger": "auto", "tokens_before": self.last_input, "tokens_after": None,
                    "opaque": False, "kind": "microcompact", "strategy": "prune",
                    "messages_removed": None})


def _check_time(path: str, line: int, times: Any, key: str, where: str) -> None:
    """Raise :class:`LogError` when ``times`` (a message's or a tool state's ``time``)
    is neither null nor an object, or its ``key`` is neither null nor a number >= 0
    (milliseconds): the reader orders compactions and prunes by them, and a "5000" or
    -5 dropped a compaction or moved what it folded with no word (adv46)."""
    if times is None:
        return
    if type(times) is not dict:
        raise LogError(path, line, "expected an object", where)
    value = times.get(key)
    if value is not None and (type(value) not in (int, float) or value < 0):
        raise LogError(path, line, "expected a number >= 0", f"{where}.{key}")


def _time(info: dict[str, Any], key: str) -> float | None:
    times = info.get("time")
    value = times.get(key) if isinstance(times, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _context_size(tokens: dict[str, Any]) -> int | None:
    """``input + cache.read`` of an assistant message's usage (None when zero or absent)."""
    inp = tokens.get("input")
    cache = as_object(tokens.get("cache"))
    read = cache.get("read")
    total = (inp if type(inp) is int else 0) + (read if type(read) is int else 0)
    return total or None


TOOL_STATUSES = frozenset({"pending", "running", "completed", "error"})
"""The states of an opencode tool part; only a completed or failed one has a result."""


def _own_text(part: dict[str, Any]) -> str:
    if part.get("type") == "text":
        return str(part.get("text") or "")
    state = as_object(part.get("state"))
    return tool_input_text(state.get("input"))


def _file_text(part: dict[str, Any]) -> str:
    """A file part's inlined text when the export has it, else its name."""
    src = part.get("source")
    if isinstance(src, dict) and isinstance(src.get("text"), dict):
        value = src["text"].get("value")
        if isinstance(value, str):
            return value
    return str(part.get("filename") or part.get("url") or "")
