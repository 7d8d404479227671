"""Gemini CLI chat recordings -> ``compaction-audit/1`` records.

Reads ``~/.gemini/tmp/<project>/chats/session-*.jsonl``: a metadata line
``{sessionId, projectHash, startTime, ...}`` (written again on each resume), message
records ``{id, timestamp, type: "user"|"gemini"|"info"|..., content, toolCalls?,
tokens?}`` (a record appended again with the same ``id`` updates it) and ``{"$set":
{...}}`` metadata updates.

Gemini CLI writes no compression marker.  A compression rewrites the history with a
``$set.messages`` line whose user message holds the ``<state_snapshot>`` summary;
``$set.messages`` is written for other rewrites too (session start, resume), so a
compression is *inferred* (``inferred: true`` on the round) from a snapshot not seen
before, or from one seen before in a rewrite that drops a message of the working set
(a copy of the compression record put early must not make the real one a resume:
adv30 F5).  The rewritten history is matched against the working set by content (the
kept messages get new ids): what it kept stays, the rest is folded into the snapshot.

Tokens: a ``gemini`` record's ``tokens.output`` is split over its text and tool calls;
``tokens.input`` (the prompt it answered) is the last measured context size, so it is
the compression's ``tokens_before``; ``tokens_after`` is the next measured prompt.  A
Gemini CLI telemetry log (``gemini_cli.chat_compression`` events, ``tokens_before`` /
``tokens_after``) named ``telemetry.log`` next to the session file overrides both.

Not read, and counted (``lines_not_read``, a reader note: adv29 F4): an object line
that is none of Gemini CLI's four records (``chatRecordingService.ts`` knows a
``$rewindTo`` string, a ``$set`` object, a metadata line with ``sessionId`` and
``projectHash``, a message with an ``id``), a ``$set`` key not in :data:`SET_KEYS`,
a message of a ``type`` not in :data:`MESSAGE_TYPES` (once per message id), and a
``$set.messages`` without a snapshot that drops messages of the working set (but the
session-context reset of a start or resume that the next rewrite undoes; adv30 F5).
"""

from __future__ import annotations

import bisect
import json
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io.documents import (
    Conversion,
    Document,
    Elements,
    chain_head,
    read_document,
    version_note,
)
from compaction_audit.io.harness import META
from compaction_audit.io.jsonerrors import not_out_of_memory
from compaction_audit.io.lines import iter_lines, regular_file
from compaction_audit.io.records import MAX_TOKENS, FieldError, as_int
from compaction_audit.io.surrogates import loads
from compaction_audit.io.tokens import (
    check_counts,
    check_strings,
    decode_object,
    estimate_tokens,
    split_tokens,
    tool_input_text,
    unknown_type_note,
    utf8_len,
)

SOURCE_FORMAT = "gemini-cli"

SNAPSHOT_TAG = "<state_snapshot>"
"""How Gemini CLI's compression summary opens (chatCompressionService.ts)."""

HARNESS_PREFIXES = ("<session_context>", SNAPSHOT_TAG)
"""User-role text Gemini CLI writes itself: spans, never a person's turn."""

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
"""The message ``type`` values of Gemini CLI's chat recording (``chatRecordingTypes.ts``,
``ConversationRecordExtra``)."""
SET_KEYS = frozenset({"sessionId", "projectHash", "startTime", "lastUpdated", "messages",
                      "summary", "memoryScratchpad", "directories", "kind"})
"""The keys a ``$set`` line may update: the fields of Gemini CLI's ``ConversationRecord``
(``chatRecordingTypes.ts``).  Another key is counted as not read."""
SEEN_KINDS = ("main", "subagent")
"""``kind`` values of the metadata line this adapter was written against (0.61)."""

REWIND_NOTE = ("of a $rewindTo whose message is not in the context (not seen, or "
               "compressed already): not applied")
"""The reader note of a rewind this reader cannot place."""
DROPPED_NOTE = ("of a $set.messages rewrite without a snapshot that leaves out messages "
                "of the working set: not read as a compaction")
"""Why a rewrite that cut the history with no snapshot is counted as not read."""

TELEMETRY_NAME = "telemetry.log"
TELEMETRY_EVENT = "gemini_cli.chat_compression"


def sniff(first_objects: list[dict[str, Any]]) -> bool:
    """True for a chat recording: a metadata line with ``projectHash`` or a
    ``gemini`` message record."""
    return any(("projectHash" in obj and "sessionId" in obj)
               or (obj.get("type") == "gemini" and "id" in obj and "content" in obj)
               for obj in first_objects)


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None,
            skipped: list[LogError] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The recording as ``(source_line, record)`` pairs, session record first.

    ``skipped`` None: a malformed line raises :class:`LogError` (``FILE:LINE``); a list:
    lenient, each malformed line is skipped and its error appended.
    """
    conv = _Converter(path)
    el = Elements(path, skipped)
    source = iter_lines(path) if lines is None else lines
    head = next(iter(source), None)
    if head is not None and _opens_document(head[1]):
        conv.legacy(read_document(path, chain_head(head, source)), el)
    else:
        from compaction_audit.io.detect import line_checker  # detect imports this module

        conv.check = line_checker(path, SOURCE_FORMAT)
        for number, raw in chain_head(head, source):
            el.run(number, conv.handle, number, raw)
            if conv.mixed is not None:  # raised even in lenient mode: two formats
                raise conv.mixed
    conv.settle(restored=False)
    conv.apply_telemetry(path)
    if conv.rewound:
        conv.note(f"{conv.rewound:,} $rewindTo line(s) applied: the messages rewound "
                  "left the context with no summary, not judged as lost")
    yield from conv.output(SOURCE_FORMAT, head[0] if head else 1)


def companions(path: str) -> list[str]:
    """The files other than ``path`` that :func:`records` may read for it: the
    telemetry log beside it, and beside the file it names when it is a symbolic link
    (:func:`telemetry_path`; ``[]`` for standard input).  ``-o`` may not name them."""
    if path == "-":
        return []
    real = os.path.realpath(path)
    names = [path] if real == os.path.abspath(path) else [path, real]
    return [str(Path(name).with_name(TELEMETRY_NAME)) for name in names]


def telemetry_path(path: str) -> str:
    """The ``telemetry.log`` read with the recording ``path``: beside the name given,
    else beside the file a symbolic link names, where Gemini CLI wrote both (a linked
    recording read no telemetry: adv20 F2)."""
    beside = str(Path(path).with_name(TELEMETRY_NAME))
    if os.path.lexists(beside):
        return beside
    return str(Path(os.path.realpath(path)).with_name(TELEMETRY_NAME))


def sniff_document(value: Any) -> bool:
    """True for a session of Gemini CLI before JSON Lines: one JSON object with
    ``sessionId``, ``projectHash`` and a ``messages`` list."""
    return isinstance(value, dict) and "sessionId" in value and "projectHash" in value \
        and isinstance(value.get("messages"), list)


def _opens_document(raw: bytes) -> bool:
    """True when the first line starts a multi-line JSON document, or is a whole
    single-JSON session on one line (a ``messages`` list beside ``sessionId`` and
    ``projectHash``: no JSON Lines metadata line holds one; a minified session was read
    as a metadata line and its messages dropped, adv65 #4), not a JSONL object."""
    if raw.lstrip()[:1] != b"{":
        return False
    try:
        value = loads(raw)  # a lone "\ud83d" read as U+FFFD (adv67 #6)
    except orjson.JSONDecodeError as exc:
        not_out_of_memory(exc.msg)
        return True
    return sniff_document(value)


class _Converter(Conversion):
    """The state machine behind :func:`records`."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.check: Callable[[int, dict[str, Any]], LogError | None] | None = None
        self.mixed: LogError | None = None  # what check found (detect.line_checker)
        self.made: dict[str, set[str]] = {}  # message id -> span keys made for it
        self.keys: dict[str, tuple[str, ...]] = {}  # span id -> content key
        self.live: dict[str, str] = {}  # content key -> the last span made for it
        self.owner: dict[str, str] = {}  # span id -> id of the message it came from
        self.snapshots: set[str] = set()
        self.compactions: list[dict[str, Any]] = []
        self.unread_ids: set[str] = set()  # messages counted as not read (their ids)
        # the content keys of the working set's spans; None: rebuild (a compression
        # changed the working set), else kept up to date as spans are added
        self.working_keys: set[str] | None = None
        self.dropped_at: int | None = None  # a reset awaiting its history (:meth:`cut`)
        self.first_span: dict[str, str] = {}  # message id -> the first span made for it
        self.rewound = 0  # $rewindTo lines applied

    def handle(self, line: int, raw: bytes) -> None:
        """Apply one line of the recording; a line of a shape the reader does not know
        is counted as not read (adv29 F4: the compression's ``$set`` key renamed
        ``$Set`` made a failing session a plain PASS)."""
        obj = decode_object(self.path, line, raw)
        if self.check is not None:
            self.mixed = self.check(line, obj)
            if self.mixed is not None:
                return
        if "$set" in obj:
            update = obj["$set"]
            if type(update) is not dict:
                raise LogError(self.path, line, "expected an object", "$set")
            for key in sorted(update.keys() - SET_KEYS):  # a renamed "messages": not read
                self.unread(unknown_type_note(key, "a $set key"))
            if "messages" in update:
                self.rewrite(line, update["messages"])
        elif "$rewindTo" in obj:
            self.rewind(line, obj["$rewindTo"])
        elif "projectHash" in obj and "sessionId" in obj:
            sid = obj["sessionId"]
            self.session_id = self.session_id or (sid if isinstance(sid, str) else None)
            self.note(version_note("Gemini CLI", obj.get("kind"), SEEN_KINDS, "kind main"))
        elif "id" in obj and "type" in obj:
            self.message(line, obj, "")
        else:
            keys = ",".join(sorted(obj))
            self.unread(unknown_type_note(keys, "a record shape (its keys)"))

    def rewind(self, line: int, target: Any) -> None:
        """A ``$rewindTo`` line: the person went back to before message ``target``,
        which Gemini CLI's recording drops with every message after it
        (``chatRecordingService.ts``).  Its spans and every item that entered the
        working set after them leave it with no summary (usertest68 #4: a rewound
        message was folded by the next compression and read as a person's lost
        fact).  A target whose first span is not in the working set (not seen, or
        folded already) is counted as a line not read: what it would cut is not known.
        Raises :class:`LogError` when ``target`` is not a string."""
        if not isinstance(target, str):
            raise LogError(self.path, line, "expected a string", "$rewindTo")
        first = self.first_span.get(target)
        gone = self.asm.drop_from(line, first) if first is not None else []
        if not gone:
            self.unread(REWIND_NOTE)
            return
        self.rewound += 1
        for mid in {self.owner[s] for s in gone if s in self.owner}:
            self.made.pop(mid, None)  # an id written again later is a new message
            self.first_span.pop(mid, None)
        self.working_keys = None  # rebuilt from the working set when next asked

    def legacy(self, doc: Document, el: Elements) -> None:
        """A whole-JSON session (before JSON Lines): its messages in order.  The file is
        rewritten whole on each save, so a compression shows only as a history that
        opens with a snapshot: a compaction with nothing before it to fold."""
        value = doc.value
        if not sniff_document(value):
            raise LogError(self.path, 1, "expected a Gemini CLI session: an object with "
                           "sessionId, projectHash and a messages list", "messages")
        self.session_id = value["sessionId"] if isinstance(value["sessionId"], str) else None
        self.note("Gemini CLI single-JSON session (before JSON Lines) not seen before; "
                  "read as its messages in order")
        for i, msg in enumerate(value["messages"]):
            line = doc.line_of("messages", i)
            el.run(line, self.legacy_message, line, msg, f"messages[{i}].")

    def legacy_message(self, line: int, msg: Any, where: str) -> None:
        if type(msg) is not dict:
            raise LogError(self.path, line, "expected an object", where.rstrip("."))
        snapshot = next((t for t in _texts(msg) if SNAPSHOT_TAG in t), None)
        if snapshot is not None and (snapshot not in self.snapshots  # or drops (adv30 F5)
                                     or self.match([msg], None, line)[2]):
            self.compress(line, [msg], snapshot)
        else:
            self.message(line, msg, where)

    # -- messages --------------------------------------------------------------------
    def message(self, line: int, msg: dict[str, Any], where: str) -> None:
        """One message record (or an element of ``$set.messages``): its new spans."""
        kind = msg.get("type")
        if not isinstance(kind, str):
            raise LogError(self.path, line, "expected a string", f"{where}type")
        if kind not in MESSAGE_TYPES:  # counted, never dropped without a word (adv29 F4)
            mid = msg.get("id")
            if not isinstance(mid, str) or mid not in self.unread_ids:  # once a message
                self.unread_ids.add(str(mid))
                self.unread(unknown_type_note(kind, "a message type"), "message")
            return
        if kind not in ("user", "gemini"):
            return  # info, error and warning lines are shown to the person, not sent
        mid = msg.get("id")
        if not isinstance(mid, str) or not mid:
            raise LogError(self.path, line, "expected a non-empty string", f"{where}id")
        made = self.made.setdefault(mid, set())
        items = list(self.items(line, msg, where))
        tokens = msg.get("tokens")
        check_counts(self.path, line, tokens, ("input", "output"), f"{where}tokens.")
        shares: list[int | None] = [None] * len(items)
        if kind == "gemini" and isinstance(tokens, dict):
            inp, out = tokens.get("input"), tokens.get("output")
            if type(inp) is int and "tokens" not in made:
                made.add("tokens")
                self.measured(inp)
            own = [i for i, it in enumerate(items) if not it[1].startswith("tool_result")]
            if type(out) is int and out > 0 and own:
                split = split_tokens(out, [utf8_len(items[i][3]) for i in own])
                for i, share in zip(own, split, strict=True):
                    shares[i] = share
        if kind == "user" and any(it[1] == "user" and it[0] not in made for it in items) \
                and (not made or not any(self.live.get(k) in self.asm.working for k in made)):
            # a person's text opens a round, also under an id whose earlier version is
            # gone from the context (folded, evicted): it is no edit of what the model
            # sees (adv73: the new request went into the compaction's round)
            self.asm.turn(line)
        for (key, source, base, text), size in zip(items, shares, strict=True):
            if key in made or self.live.get(key) in self.asm.working:
                continue  # written again by an update, or a result already in context
            made.add(key)
            span = self.asm.span(line, base, source, text, size)
            self.remember(str(span["id"]), source.split(":")[0], key)
            self.live[key] = str(span["id"])
            self.owner[str(span["id"])] = mid
            self.first_span.setdefault(mid, str(span["id"]))

    def items(self, line: int, msg: dict[str, Any], where: str
              ) -> Iterator[tuple[str, str, str, str]]:
        """``(key, source, base_id, text)`` of each span a message holds (``base_id``
        from its ``id``, which :meth:`message` and :meth:`rewrite` check where it counts:
        a message of another type is read for its content only)."""
        base = str(msg.get("id"))
        role = "user" if msg.get("type") == "user" else "assistant"
        content = msg.get("content")
        # PartListUnion: a list of parts, one part (adv47) or a string (a text part)
        parts = ([{"text": content}] if isinstance(content, str)
                 else [content] if type(content) is dict else content)
        if type(parts) is not list:
            raise LogError(self.path, line, "expected a string or a list", f"{where}content")
        for j, part in enumerate(parts):
            if type(part) is not dict:
                raise LogError(self.path, line, "expected an object", f"{where}content[{j}]")
            check_strings(self.path, line, part, ("text",), f"{where}content[{j}].")
            text = part.get("text")
            if isinstance(text, str) and text.strip():
                source = role
                if role == "user" and text.lstrip().startswith(HARNESS_PREFIXES):
                    source = META
                yield f"text:{text}", source, base, text
            elif isinstance(part.get("functionCall"), dict):
                yield self.call(part["functionCall"], f"{base}.{j}")
            elif isinstance(part.get("functionResponse"), dict):
                yield self.result(part["functionResponse"], f"{base}.{j}")
        calls = msg.get("toolCalls")
        if calls is not None and type(calls) is not list:
            raise LogError(self.path, line, "expected a list", f"{where}toolCalls")
        for j, call in enumerate(calls or []):
            if type(call) is not dict:
                raise LogError(self.path, line, "expected an object", f"{where}toolCalls[{j}]")
            yield self.call(call, f"{base}.call{j}")
            for res in self.results(line, call.get("result"), f"{where}toolCalls[{j}]"):
                if isinstance(res, dict) and isinstance(res.get("functionResponse"), dict):
                    yield self.result({"id": call.get("id"), "name": call.get("name"),
                                       **res["functionResponse"]}, f"{base}.res{j}")

    def call(self, call: dict[str, Any], fallback: str) -> tuple[str, str, str, str]:
        """A function call: keyed by its call id (the rewrite keeps it)."""
        cid = str(call.get("id") or fallback)
        name = str(call.get("name") or "unknown")
        return f"call:{cid}", f"tool_call:{name}", cid, tool_input_text(call.get("args"))

    def results(self, line: int, value: Any, where: str) -> list[Any]:
        """A tool call's ``result`` as a list of parts: Gemini CLI types it
        ``PartListUnion`` (a list of parts, one part, or a string: a text part), and
        wrote one ``{functionResponse}`` object for a plain output in 2025 (adv47; a
        single object was dropped, adv46's "not iterable" for a number).  Raises
        :class:`LogError` for any other value but null."""
        if value is None or type(value) is list:
            return value or []
        if type(value) is dict:
            return [value]
        if type(value) is str:  # the output itself, as a function response carries it
            return [{"functionResponse": {"response": {"output": value}}}]
        raise LogError(self.path, line, "expected a list, an object or a string",
                       f"{where}.result")

    def result(self, res: dict[str, Any], fallback: str) -> tuple[str, str, str, str]:
        """A function response: keyed by its call id."""
        cid = str(res.get("id") or fallback)
        name = str(res.get("name") or "unknown")
        body = res.get("response")
        text = body.get("output") if isinstance(body, dict) else None
        if not isinstance(text, str):
            text = body if isinstance(body, str) else orjson.dumps(body).decode()
        return f"result:{cid}", f"tool_result:{name}", f"{cid}:result", text

    # -- rewrites --------------------------------------------------------------------
    def rewrite(self, line: int, messages: Any) -> None:
        """``$set.messages``: a compression when it holds a snapshot not seen before, or
        a snapshot seen before and drops a message of the working set; else a sync.

        Gemini CLI writes ``$set.messages`` (``updateMessagesFromHistory``) whenever its
        history changes: on start and resume (the same messages again) and on a
        compression.  A snapshot seen before is a sync only when nothing live is
        dropped (a resume after a compression writes the snapshot again): a copy of
        the compression record put early in the file had made the real one a sync, so
        what it dropped was never folded, a plain PASS (adv30 F5)."""
        if type(messages) is not list:
            raise LogError(self.path, line, "expected a list", "$set.messages")
        snapshot: str | None = None
        seen: str | None = None
        for i, msg in enumerate(messages):
            if type(msg) is not dict:
                raise LogError(self.path, line, "expected an object", f"$set.messages[{i}]")
            mid = msg.get("id")  # read before a message is (adv91 #4: "KeyError: 'id'")
            if msg.get("type") in ("user", "gemini") and (not isinstance(mid, str) or not mid):
                raise LogError(self.path, line, "expected a non-empty string",
                               f"$set.messages[{i}].id")
            for text in _texts(msg):
                if SNAPSHOT_TAG in text:
                    if text not in self.snapshots:
                        snapshot = snapshot or text
                    else:
                        seen = seen or text
        dropping = snapshot is None and self.drops(line, messages)
        if dropping and seen is not None:
            snapshot = seen  # drops live messages: a compaction, the text notwithstanding
        if snapshot is None:
            self.cut(line, messages, dropping)
            for i, msg in enumerate(messages):
                if not self.known(msg):
                    self.message(line, msg, f"$set.messages[{i}].")
            return
        self.settle(restored=False)
        self.compress(line, messages, snapshot)

    def drops(self, line: int, messages: list[dict[str, Any]]) -> bool:
        """True when the rewrite leaves out a span of the working set (matched by
        content, :meth:`match`).  Linear in the rewrite: a working set of more spans
        than the rewrite has items drops one, so it is not matched item by item (one
        small rewrite after another over a large working set would be quadratic)."""
        items = sum(len(self.content_keys(msg, line, f"$set.messages[{i}]."))
                    for i, msg in enumerate(messages))
        return len(self.asm.working) > items or bool(self.match(messages, None, line)[2])

    def cut(self, line: int, messages: list[dict[str, Any]], dropping: bool) -> None:
        """Account for a rewrite without a snapshot that leaves out messages of the
        working set (``dropping``).  Gemini CLI does so on start and resume only: the
        session context alone (a *reset*, its messages all harness text), then the whole
        history, which drops nothing.  A reset waits for that next rewrite
        (:attr:`dropped_at`); any other cut, and a reset the next rewrite does not undo,
        is counted once as not read: a history cut with no snapshot is a loss this
        reader cannot judge, never a silent sync (adv30 F5)."""
        if self.dropped_at is not None:
            self.settle(restored=not dropping)
        elif dropping and all(src == META for i, msg in enumerate(messages)
                              for src, *_ in self.content_keys(msg, line,
                                                               f"$set.messages[{i}].")):
            self.dropped_at = line
        elif dropping:
            self.unread(DROPPED_NOTE)

    def settle(self, *, restored: bool) -> None:
        """Close a reset (:meth:`cut`): counted as not read unless ``restored`` (the
        next rewrite drops nothing)."""
        if self.dropped_at is not None and not restored:
            self.unread(DROPPED_NOTE)
        self.dropped_at = None

    def known(self, msg: dict[str, Any]) -> bool:
        """True when a rewritten message is already in the working set (id or content).

        The working set's content keys are kept, not gathered from every span for each
        message: a 16,000-message rewrite took 11 s (issue 11, class 5, fresh pass, F5)."""
        mid = msg.get("id")
        if isinstance(mid, str) and mid in self.made:  # a list id was hashed (adv46)
            return True
        keys = {k for _, _, _, k in self.content_keys(msg)}
        if self.working_keys is None:  # once per compression, not once per message
            self.working_keys = {self.keys[s][1] for s in self.asm.working if s in self.keys}
        return bool(keys) and keys <= self.working_keys

    def remember(self, span_id: str, source: str, key: str) -> None:
        """Key a span just added to the working set by its content."""
        self.keys[span_id] = (source, key)
        if self.working_keys is not None:
            self.working_keys.add(key)

    def content_keys(self, msg: dict[str, Any], line: int = 0, where: str = ""
                     ) -> list[tuple[str, str, str, str]]:
        """``(source, base, text, key)`` of each span ``msg`` holds; ``line`` and
        ``where`` name it in a :class:`LogError`."""
        items = list(self.items(line, msg, where))
        return [(src, base, text, key) for key, src, base, text in items]

    def compress(self, line: int, messages: list[dict[str, Any]], snapshot: str) -> None:
        """Open an inferred compaction round: keep the matched items, fold the rest."""
        self.snapshots.add(snapshot)
        kept, extra, fold = self.match(messages, snapshot, line)
        info: dict[str, Any] = {"trigger": None, "tokens_before": self.last_input,
                                "tokens_after": None, "opaque": False, "kind": "compact",
                                "strategy": "state_snapshot", "inferred": True,
                                "messages_removed": len(self.owners(fold)
                                                        - self.owners(kept))}
        sid = self.asm.compaction(line, fold=fold, fallback_children=kept,
                                  base_id=f"line-{line}", text=snapshot,
                                  tokens=estimate_tokens(snapshot), info=info)
        self.keys[sid] = ("summary", f"text:{snapshot}")
        self.owner[sid] = sid  # the snapshot message: a later compression removes it
        for src, base, text, key in extra:  # the harness's "Got it." reply, new items
            source = META if src == "assistant" and not key.startswith("call") \
                else src
            span = self.asm.span(line, base, source, text)
            self.keys[str(span["id"])] = (source, key)
            self.live[key] = str(span["id"])
            self.owner[str(span["id"])] = base
        self.working_keys = None  # folded spans left the working set
        self.compactions.append(info)
        self.awaiting_after.append(info)

    def match(self, messages: list[dict[str, Any]], snapshot: str | None, line: int
              ) -> tuple[list[str], list[tuple[str, str, str, str]], list[str]]:
        """Match a rewrite against the working set by content: ``(kept, extra, fold)``,
        the span ids it keeps, the ``(source, base, text, key)`` of its items the
        working set does not hold, and the span ids it drops, in working-set order.
        The message holding ``snapshot`` (the new summary) is not matched."""
        by_key: dict[str, deque[str]] = {}
        for span_id in self.asm.working:
            if span_id in self.keys:
                by_key.setdefault(self.keys[span_id][1], deque()).append(span_id)
        kept: list[str] = []
        extra: list[tuple[str, str, str, str]] = []
        for i, msg in enumerate(messages):
            if snapshot is not None and snapshot in _texts(msg):
                continue
            for src, base, text, key in self.content_keys(msg, line, f"$set.messages[{i}]."):
                if by_key.get(key):
                    kept.append(by_key[key].popleft())
                else:
                    extra.append((src, base, text, key))
        still = set(kept)
        return kept, extra, [s for s in self.asm.working if s not in still]

    def owners(self, spans: list[str]) -> set[str]:
        """The messages ``spans`` came from."""
        return {self.owner[s] for s in spans if s in self.owner}

    # -- telemetry -------------------------------------------------------------------
    def apply_telemetry(self, path: str) -> None:
        """Take tokens before/after from ``telemetry.log`` next to the recording."""
        if path == "-" or not self.compactions:
            return
        beside = telemetry_path(path)
        problem = telemetry_problem(beside)
        if problem:  # a telemetry.log there is never passed over silently (adv49)
            self.note(f"{TELEMETRY_NAME} beside the recording {problem}: the compactions' "
                      "sizes are the recording's")
            return
        events, torn = read_telemetry(beside, self.session_id)
        if os.path.lexists(beside) and not events:  # none of this session's (adv50)
            self.note(f"{TELEMETRY_NAME} beside the recording holds no compression event of "
                      "this session: the compactions' sizes are the recording's")
        elif events and len(events) != len(self.compactions):  # matched in order (adv48)
            self.note(f"{TELEMETRY_NAME} holds {len(events)} compression event(s) of this "
                      f"session for {len(self.compactions)} compaction(s): their sizes are "
                      "matched in order")
        if torn is not None:
            self.note(f"{TELEMETRY_NAME}: no JSON object could be read from line {torn} on; "
                      "its later events, if any, are not read")
        for info, (before, after) in zip(self.compactions, events, strict=False):
            given = {k: v for k, v in (("tokens_before", before), ("tokens_after", after))
                     if v is not None}  # a null leaves the recording's (adv48)
            if given:
                info.update(given, tokens_from="telemetry")


def telemetry_problem(path: str) -> str | None:
    """Why a ``telemetry.log`` that is there cannot be read ("is not a regular file":
    a directory, a FIFO, a device, a dangling or looping link; "cannot be opened: ..."),
    None when it is absent or readable."""
    if not os.path.lexists(path):
        return None
    if not regular_file(path):
        return "is not a regular file"
    try:
        with open(path, "rb"):
            return None
    except OSError as exc:
        return f"cannot be opened: {exc.strerror or type(exc).__name__}"


def read_telemetry(path: str, session_id: str | None
                   ) -> tuple[list[tuple[int | None, int | None]], int | None]:
    """``(tokens_before, tokens_after)`` of each ``gemini_cli.chat_compression`` event
    of ``session_id`` in a Gemini CLI local telemetry file (concatenated, pretty-printed
    JSON objects), and the line where an object that cannot be decoded stopped the
    reading (a write cut short; None when none did); ``([], None)`` when the file is
    absent, unreadable or not a regular file (a FIFO or a device is never opened).
    Read through the bounded line reader, so the input limits of a trace apply
    (docs/security.md).  Raises :class:`LogError` for input beyond those limits and for
    a value nested too deeply to decode."""
    if not regular_file(path):
        return [], None
    numbers: list[int] = []  # the file's line number of each non-blank line read
    starts: list[int] = []  # where that line starts in ``text``
    pieces: list[str] = []
    at = 0
    try:
        for number, raw in iter_lines(path):
            piece = raw.decode("utf-8", "replace").rstrip("\n") + "\n"
            numbers.append(number)
            starts.append(at)
            pieces.append(piece)
            at += len(piece)
    except OSError:
        return [], None
    text = "".join(pieces)

    def line_at(pos: int) -> int:  # blank lines are not read: each line keeps its number
        return numbers[bisect.bisect_right(starts, pos) - 1]

    decoder = json.JSONDecoder()
    out: list[tuple[int | None, int | None]] = []
    pos = 0
    while (pos := text.find("{", pos)) != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except RecursionError:
            raise LogError(path, line_at(pos), "a value is nested too deeply to decode"
                           ) from None
        except ValueError:
            return out, line_at(pos)
        pos = end
        attrs = obj.get("attributes") if isinstance(obj, dict) else None
        if not isinstance(attrs, dict) or attrs.get("event.name") != TELEMETRY_EVENT:
            continue
        if session_id is not None and attrs.get("session.id") not in (None, session_id):
            continue
        line = line_at(end - 1)  # its closing brace's: not counted from the start (adv19b F2)
        out.append((_telemetry_tokens(path, line, attrs, "tokens_before"),
                    _telemetry_tokens(path, line, attrs, "tokens_after")))
    return out, None


def _telemetry_tokens(path: str, line: int, attrs: dict[str, Any], key: str) -> int | None:
    """``attrs[key]``: None when absent or null, else a whole number of tokens from 0
    to :data:`~compaction_audit.io.records.MAX_TOKENS`.  Anything else is a
    :class:`LogError` naming ``telemetry.log`` and the line its event ends on: a
    negative count was shown as "120,000 -> -257 tokens", 2**64 was blamed on the
    recording, and a float was dropped without a word (adv18 F3)."""
    value = attrs.get(key)
    if value is None:
        return None
    try:
        return as_int(value, f"attributes.{key}", 0, MAX_TOKENS)
    except FieldError as exc:
        raise LogError(path, line, exc.message, exc.field) from None


def _texts(msg: dict[str, Any]) -> list[str]:
    content = msg.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content
                if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []
