"""Cline 3.x sessions -> ``compaction-audit/1`` records.

A Cline session (``~/.cline/data/sessions/<id>/``) keeps ``<id>.messages.json`` (the
messages, ``{id, role, content: [parts], ts, metrics}``) and, after a compaction,
``<id>.compaction.json`` (the history the compaction left).  Give either file: the
adapter pairs it with the other one (same ``<id>`` prefix, else the folder's other
file of the same ``sessionId``) and compares them:

* a message of the compaction file whose ``id`` is in the messages file is *kept*,
  part by part (a part the compaction dropped from a kept message is folded);
* the "basic" strategy marks the first kept message ``metadata.kind: "compaction"``
  (``messagesRemoved``, ``usageBefore``, ``reason``) and appends a ``<SYSTEM_NOTICE>``
  of the actions taken to kept user messages: those notices are the summary;
* the "agentic" strategy writes a new ``Context summary:`` message with
  ``metadata.kind: "compaction_summary"`` (``tokensBefore``, ``details.readFiles`` and
  ``modifiedFiles``): its text is the summary;
* everything else in the working set is folded into that summary and evicted.

A file alone is read in order; a marker message in it opens a compaction round that
folds what came before it.  The mapping is in ``docs/adapters.md`` (Cline section).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io.cline_folder import Undecodable, file_name
from compaction_audit.io.cline_pair import (
    MARKER_KINDS,
    SOURCE_FORMAT,
    companions,
    from_manifest,
    is_manifest,
    pair,
    sniff_document,
)
from compaction_audit.io.documents import (
    Conversion,
    Document,
    Elements,
    as_object,
    read_document,
    version_note,
)
from compaction_audit.io.harness import SUMMARY
from compaction_audit.io.records import LINE_FILE_KEY, SPAN_LINE_KEY
from compaction_audit.io.tokens import (
    IMAGE_TOKENS,
    check_counts,
    check_strings,
    estimate_tokens,
    split_tokens,
    tool_input_text,
    unknown_type_note,
    utf8_len,
)

__all__ = ["SOURCE_FORMAT", "companions", "records", "sniff_document"]
"""What other modules read off the adapter (:mod:`~compaction_audit.io.companions`,
:mod:`~compaction_audit.io.detect`); the pairing itself is
:mod:`~compaction_audit.io.cline_pair`."""

SEEN_VERSIONS = (1,)
"""``version`` values of the session files this adapter was written against."""

NOTICE_PREFIX = "<SYSTEM_NOTICE>"
"""How the basic strategy opens the action summary it appends to kept user messages."""


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None,
            skipped: list[LogError] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The session as ``(source_line, record)`` pairs, session record first.

    ``skipped`` None: the first malformed message raises :class:`LogError` (``FILE:LINE``);
    a list: lenient, each malformed message is skipped and its error appended.
    """
    named = path
    undecodable = Undecodable()  # names beside it skipped: not UTF-8 (escaped)
    given = read_document(path, lines)
    if isinstance(given.value, dict) and is_manifest(given.value):
        path, given = from_manifest(given, path, undecodable)
    messages_doc, compaction_doc, note, unchecked, unread, unread_total = pair(
        given, path, undecodable)
    conv = _Converter(path, skipped)
    conv.unchecked = unchecked
    if note:
        conv.note(note)
    if undecodable:
        conv.note(undecodable.note(named))
    for doc in (messages_doc, compaction_doc) if messages_doc is not None else (given,):
        if doc is not None:
            conv.note_version(doc)
    if messages_doc is not None and compaction_doc is not None:
        conv.read(messages_doc)
        conv.compare(compaction_doc)
    else:
        conv.read(given)
    out = conv.output(SOURCE_FORMAT, 1)
    first_line, record = next(out)
    if unread:
        record["compaction_files_unread"] = list(unread)
        if unread_total > len(unread):
            record["compaction_files_unread_truncated"] = {
                "truncated": True, "shown": len(unread), "total": unread_total}
    yield first_line, {**record, **_line_files(named, conv.span_files)}
    yield from _round_files(named, list(out))


def _round_files(named: str, rounds: list[tuple[int, dict[str, Any]]]
                 ) -> list[tuple[int, dict[str, Any]]]:
    """``rounds`` with each round's ``line_file`` (:data:`~compaction_audit.io.records.
    LINE_FILE_KEY`: the name of the file its line is a line of) when some round's line
    is not a line of the file given (``named``: a compaction file or a manifest given);
    without the key on every round when all are (the messages file given, or a file
    read alone), so such a trace reads as one file."""
    own = file_name(named)
    if all(r.get(LINE_FILE_KEY, own) == own for _, r in rounds):
        for _, r in rounds:
            r.pop(LINE_FILE_KEY, None)
    return rounds


def _line_files(named: str, span_files: dict[str, str]) -> dict[str, Any]:
    """Session-record keys naming the file span lines count in when it is not the file
    the user gave (issue: Cline lines point into two files): ``span_line_file``, the
    companion file most spans were read from (its name; on a tie the file read first,
    the messages file), ``span_line_file_except``, the ids of the spans whose lines are
    in another file, and ``span_line_file_except_in``, that file's name when it is not
    the file given either (a manifest given: spans from both the messages and the
    compaction file).  Empty when every span line is a line of the file given.

    ``span_files`` maps each span id to the file it was read from, in reading order;
    the spans come from at most two files (the messages and the compaction file).
    Names are escaped (:func:`file_name`).  Never by set order: the output was once
    chosen by string hashes, so it changed with ``PYTHONHASHSEED`` (adv9, F2)."""
    counts: dict[str, int] = {}  # in the order the files were read
    for f in span_files.values():
        if f != named:
            counts[f] = counts.get(f, 0) + 1
    if not counts:
        return {}
    companion = max(counts, key=counts.__getitem__)  # max keeps the first of a tie
    out: dict[str, Any] = {"span_line_file": file_name(companion)}
    own = [s for s, f in span_files.items() if f != companion]
    if own:
        out["span_line_file_except"] = own
        other = span_files[own[0]]
        if other != named:
            out["span_line_file_except_in"] = file_name(other)
    return out


@dataclass
class _Message:
    """What the adapter remembers of one message of the messages file."""

    parts: dict[bytes, str] = field(default_factory=dict)  # part JSON -> span id


class _Converter(Conversion):
    """The state machine behind :func:`records`."""

    def __init__(self, path: str, skipped: list[LogError] | None) -> None:
        super().__init__(path)
        self.skipped = skipped
        self.seen: dict[str, _Message] = {}
        self.ids: dict[str, int] = {}  # message id -> its index in the file being read
        self.call_names: dict[str, str] = {}
        self.unchecked: str | None = None  # why a compaction cannot be checked
        self.reading = path  # the file whose lines are being read
        self.span_files: dict[str, str] = {}  # span id -> the file its line counts in

    def note_version(self, doc: Document) -> None:
        """Record the session id and say when the file's ``version`` is new to us."""
        value = doc.value
        if isinstance(value, dict):
            sid = value.get("sessionId")
            self.session_id = self.session_id or (sid if isinstance(sid, str) else None)
            self.note(version_note("Cline", value.get("version"), SEEN_VERSIONS, "version 1"))

    def messages(self, doc: Document) -> list[Any]:
        """The document's ``messages`` list; :class:`LogError` when it has none."""
        value = doc.value
        if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
            raise LogError(doc.path, 1, "expected an object with a 'messages' list",
                           "messages")
        return list(value["messages"])

    def read_from(self, doc: Document) -> None:
        """Lines from now on are lines of ``doc``: its spans and its rounds say so."""
        self.reading = doc.path
        self.asm.line_file = file_name(doc.path)
        self.ids = {}

    def once(self, path: str, line: int, i: int, msg: Any) -> None:
        """Raise :class:`LogError` when ``msg`` repeats the ``id`` of an earlier message
        of the same file that was read (a message read twice: its spans and a fold's
        children were counted twice, note 31); ids are unique within a file, and a
        compaction file repeats those of the messages file it keeps.  :meth:`read_id`
        records it once the message is read: one skipped under ``--lenient`` leaves
        its id to the next (adv87 #8: both were dropped)."""
        mid = _str_id(msg)
        first = self.ids.get(mid) if mid is not None else None
        if mid is not None and first is not None and first != i:
            raise LogError(path, line, f"message id {mid[:40]!r} repeated (first at "
                           f"messages[{first}]): message ids are unique",
                           f"messages[{i}].id")

    def read_id(self, i: int, msg: Any) -> None:
        """Record the ``id`` of message ``i``, read (see :meth:`once`)."""
        mid = _str_id(msg)
        if mid is not None:
            self.ids.setdefault(mid, i)

    # -- one file in order ---------------------------------------------------------
    def read(self, doc: Document) -> None:
        """Every message of ``doc`` in order; a marker message opens a compaction."""
        self.read_from(doc)
        for i, msg in enumerate(self.messages(doc)):
            line = doc.line_of("messages", i)
            Elements(doc.path, self.skipped).run(line, self.first, doc, line, i, msg)

    def first(self, doc: Document, line: int, i: int, msg: Any) -> None:
        """One message of the file read in order (:meth:`once`, then :meth:`message`)."""
        self.once(doc.path, line, i, msg)
        self.message(doc, line, i, msg)
        self.read_id(i, msg)

    def message(self, doc: Document, line: int, i: int, msg: Any) -> None:
        """One message: a compaction when it carries a marker, then its spans."""
        if type(msg) is not dict:
            raise LogError(doc.path, line, "expected an object", f"messages[{i}]")
        mid = msg.get("id")
        if mid is not None and (not isinstance(mid, str) or not mid):  # adv42, adv46
            raise LogError(doc.path, line, "expected a non-empty string" if mid == ""
                           else "expected a string", f"messages[{i}].id")
        if not isinstance(msg.get("role"), str):  # adv46: named no field
            raise LogError(doc.path, line, "expected a string", f"messages[{i}].role")
        check_counts(doc.path, line, msg.get("metrics"), ("inputTokens", "outputTokens"),
                     f"messages[{i}].metrics.")
        meta, kind = _marker(doc.path, line, i, msg)
        parts = _parts(doc.path, line, i, msg)
        # where each part's text is: the line a fact stated in it names (not the line of
        # the message's "{"); a part of no known line (a string content) keeps the message's
        at = {id(p): doc.part_line("messages", i, "content", j) for j, p in enumerate(parts)}
        if kind in MARKER_KINDS:
            notice = [p for p in parts if _is_notice(p)]
            summary = _text(notice) if kind == "compaction" else _text(parts)
            self.compaction(line, meta, summary, fold=list(self.asm.working), kept=[],
                            removed=None)
            if kind == "compaction_summary":
                return
            parts = [p for p in parts if not _is_notice(p)]
        self.add(line, msg, parts, at)

    def add(self, line: int, msg: dict[str, Any], parts: list[dict[str, Any]],
            at: dict[int, int | None]) -> None:
        """The spans of one message; a user message with typed text opens a round.
        ``at``: the line of each part (by ``id``), where its span says it was stated."""
        role = msg.get("role")
        if not isinstance(role, str):
            raise TypeError("a message's 'role' is not a string")
        if role not in ("user", "assistant"):  # counted, not only noted (adv31 N7)
            self.unread(unknown_type_note(role, "a message role"), "message")
            return
        if role == "user" and any(p.get("type") == "text" and not _is_notice(p)
                                  for p in parts):
            self.asm.turn(line)
        mid = msg.get("id")
        base = mid if isinstance(mid, str) else f"line-{line}"
        record = self.seen.setdefault(base, _Message())
        sizes = self.output_shares(msg, parts) if role == "assistant" else [None] * len(parts)
        for part, size in zip(parts, sizes, strict=True):
            span = self.span(line, base, str(role), part, size)
            if span is not None:
                stated = at.get(id(part))
                if stated is not None:
                    span[SPAN_LINE_KEY] = stated
                made = str(span["id"])
                self.span_files[made] = self.reading
                record.parts[orjson.dumps(part, option=orjson.OPT_SORT_KEYS)] = made

    def output_shares(self, msg: dict[str, Any], parts: list[dict[str, Any]]
                      ) -> list[int | None]:
        """Each part's share of ``metrics.outputTokens`` (None: estimate it)."""
        metrics = msg.get("metrics")
        if not isinstance(metrics, dict):
            return [None] * len(parts)
        inp = metrics.get("inputTokens")
        self.measured(inp if type(inp) is int else None)
        out = metrics.get("outputTokens")
        if type(out) is not int or out <= 0:
            return [None] * len(parts)
        return list(split_tokens(out, [utf8_len(_part_text(p)) for p in parts]))

    def span(self, line: int, base: str, role: str, part: dict[str, Any],
             size: int | None) -> dict[str, Any] | None:
        """One part as a raw span (the span object); None for parts that are not spans
        (thinking, empty)."""
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")  # a string or null (_parts): null, or none, is no
            if text is None or not str(text).strip():  # text (adv91 #4: "TypeError: a
                return None  # text part's 'text' is not a string", no field)
            text = str(text)
            source = SUMMARY if _is_notice(part) else role
            return self.asm.span(line, base, source, text, size)
        if kind == "tool_use":
            name = str(part.get("name") or "unknown")
            call = str(part.get("id") or f"line-{line}")
            self.call_names[call] = name
            text = tool_input_text(part.get("input"))
            return self.asm.span(line, call, f"tool_call:{name}", text, size)
        if kind == "tool_result":
            call = str(part.get("tool_use_id") or f"line-{line}")
            name = str(part.get("name") or self.call_names.get(call, "unknown"))
            text = _part_text(part)
            return self.asm.span(line, f"{call}:result", f"tool_result:{name}", text)
        if kind == "file":
            text = _part_text(part)
            return self.asm.span(line, f"{base}:file", "tool_result:file", text)
        if kind in ("image", "document"):
            return self.asm.span(line, f"{base}:{kind}", role, None, IMAGE_TOKENS)
        if kind not in PART_TYPES:  # counted, never dropped without a word (adv46)
            self.unread(unknown_type_note(kind, "a part type"), "part")
        return None  # thinking, redacted thinking, parts not sent back

    # -- the compaction file against the messages file -------------------------------
    def compare(self, doc: Document) -> None:
        """Open the compaction round: keep what the compaction file still holds."""
        msgs = self.messages(doc)
        self.read_from(doc)
        el = Elements(doc.path, self.skipped)
        kept: list[str] = []
        summary: list[dict[str, Any]] = []
        marker: tuple[int, dict[str, Any]] | None = None
        later: list[tuple[int, int, dict[str, Any]]] = []
        last_kept = max((i for i, m in enumerate(msgs) if _str_id(m) in self.seen),
                        default=-1)
        for i, msg in enumerate(msgs):
            line = doc.line_of("messages", i)
            if type(msg) is not dict:
                el.run(line, _bad, doc.path, line, f"messages[{i}]")
                continue
            meta, kind = _marker(doc.path, line, i, msg)
            if kind in MARKER_KINDS and marker is None:
                marker = (line, meta)
            ok = el.run(line, self.match, doc.path, line, i, msg, kept, summary)
            if ok:
                self.read_id(i, msg)
            if ok and _str_id(msg) not in self.seen and kind != "compaction_summary" \
                    and i > last_kept:
                later.append((line, i, msg))
        line, meta = marker if marker is not None else (doc.line_of("messages", 0), {})
        # sets, not a scan per message: linear in both files (issue 11, class 5, F4)
        still = set(kept)
        fold = [s for s in self.asm.working if s not in still]
        ids = {_str_id(x) for x in msgs}
        removed = sum(1 for m in self.seen if m not in ids)
        self.compaction(line, meta, _text(summary), fold=fold, kept=kept, removed=removed)
        for line, i, msg in later:
            Elements(doc.path, self.skipped).run(line, self.message, doc, line, i, msg)

    def match(self, path: str, line: int, i: int, msg: dict[str, Any], kept: list[str],
              summary: list[dict[str, Any]]) -> None:
        """Sort one compaction-file message into kept spans and summary text."""
        self.once(path, line, i, msg)
        parts = _parts(path, line, i, msg)
        meta = msg.get("metadata")
        if isinstance(meta, dict) and meta.get("kind") == "compaction_summary":
            summary.extend(p for p in parts if p.get("type") == "text")
            return
        mid = msg.get("id")
        if mid is not None and not isinstance(mid, str):  # a kept message read as folded
            raise LogError(path, line, "expected a string", f"messages[{i}].id")
        known = self.seen.get(mid) if isinstance(mid, str) else None
        if known is None:
            return
        for part in parts:
            key = orjson.dumps(part, option=orjson.OPT_SORT_KEYS)
            if key in known.parts:
                kept.append(known.parts[key])
            elif part.get("type") == "text":
                summary.append(part)  # a notice the compaction added to a kept message
            elif part.get("type") not in PART_TYPES:  # adv46: a "Text" kept nothing
                self.unread(unknown_type_note(part.get("type"), "a part type"), "part")

    def compaction(self, line: int, meta: dict[str, Any], text: str, *, fold: list[str],
                   kept: list[str], removed: int | None) -> None:
        """Open the compaction round with the strategy's figures."""
        kind = meta.get("kind")
        before = meta.get("tokensBefore")
        counted = type(before) is int  # the strategy's own count (agentic), else the
        if not counted:  # last call's input (basic): said so (usertest64 N4)
            before = self.last_input
        stated = meta.get("messagesRemoved")
        if removed is None:
            removed = stated if type(stated) is int else None
        elif type(stated) is int and stated != removed:
            self.note(f"Cline says {stated} messages removed at line {line}; "
                      f"the two files differ by {removed}")
        details = as_object(meta.get("details"))
        reason = meta.get("reason")
        info: dict[str, Any] = {
            "trigger": ("manual" if isinstance(reason, str) and "manual" in reason
                        else "auto" if isinstance(reason, str) else None),
            "tokens_before": before, "tokens_after": None, "opaque": False,
            "tokens_before_from": None if counted or before is None else "last call",
            "kind": "compact", "strategy": MARKER_KINDS.get(str(kind)),
            "messages_removed": removed}
        if self.unchecked is not None and not fold:
            # a compaction file read alone: what it removed is not in it (issue 2)
            info["unchecked"] = self.unchecked
        if isinstance(meta.get("usageBefore"), dict):  # the keys checked, no other
            # (adv58: a totalTokens of 10^30 beside them went into the report)
            info["usage_before"] = {k: v for k, v in meta["usageBefore"].items()
                                    if k in USAGE_KEYS}
        for key, name in (("readFiles", "files_read"), ("modifiedFiles", "files_modified")):
            if isinstance(details.get(key), list):
                info[name] = [str(f) for f in details[key]]
        self.asm.compaction(line, fold=fold, fallback_children=kept, base_id=f"line-{line}",
                            text=text, tokens=estimate_tokens(text), info=info)
        self.awaiting_after.append(info)


PART_TYPES = frozenset({"text", "tool_use", "tool_result", "file", "image", "document",
                        "thinking", "redacted_thinking"})
"""The content part types of a Cline message; a part of any other type is counted as
not read."""


def _parts(path: str, line: int, i: int, msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as a list of part objects (a string is one text part)."""
    content = msg.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if type(content) is not list:
        raise LogError(path, line, "expected a list or a string", f"messages[{i}].content")
    for j, part in enumerate(content):
        if type(part) is not dict:
            raise LogError(path, line, "expected an object", f"messages[{i}].content[{j}]")
        check_strings(path, line, part, ("type", "text"), f"messages[{i}].content[{j}].")
    return content


def _str_id(msg: Any) -> str | None:
    """A message's ``id`` when it is a string (the only ids the messages file keys its
    spans by); None otherwise, a list or an object id included (never hashed)."""
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


def _marker(path: str, line: int, i: int, msg: dict[str, Any]
            ) -> tuple[dict[str, Any], str | None]:
    """A message's ``metadata`` (``{}`` when null or absent) and its compaction
    marker's kind (:func:`_marker_kind`); :class:`LogError` for a ``metadata`` that is
    no object (a string hid the compaction marker: adv48) or a count of the marker
    (``tokensBefore``, ``messagesRemoved``) that is neither null nor an integer >= 0
    (adv46: a ``tokensBefore`` of -5 was reported as the context before, and one of
    "24000" silently became the estimate), or a ``usageBefore`` that is neither null
    nor an object of such counts (and a ``cost`` >= 0)."""
    meta = msg.get("metadata")
    if meta is not None and type(meta) is not dict:  # adv48: it hid the marker
        raise LogError(path, line, "expected an object", f"messages[{i}].metadata")
    meta = meta or {}
    check_counts(path, line, meta, ("tokensBefore",), f"messages[{i}].metadata.")
    check_counts(path, line, meta, ("messagesRemoved",), f"messages[{i}].metadata.",
                 "messages")  # a count of messages, not tokens (adv68 #5)
    # adv57: the usage before the compaction went into the report unchecked (-7, 1e30)
    usage = meta.get("usageBefore")
    check_counts(path, line, usage, USAGE_KEYS[:-1], f"messages[{i}].metadata.usageBefore.")
    cost = usage.get("cost") if isinstance(usage, dict) else None
    if cost is not None and not (type(cost) in (int, float) and 0 <= cost < float("inf")):
        raise LogError(path, line, "expected a number >= 0",
                       f"messages[{i}].metadata.usageBefore.cost")
    return meta, _marker_kind(path, line, i, meta)


USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "cost")
"""The keys of a compaction's ``usageBefore`` the reader checks and reports (the
token counts, then the cost)."""


def _marker_kind(path: str, line: int, i: int, meta: dict[str, Any]) -> str | None:
    """A message's ``metadata.kind``: a string or None; :class:`LogError` for another
    value (an object or a list was hashed against :data:`MARKER_KINDS`: "internal
    error: TypeError: unhashable type", adv22a F4)."""
    kind = meta.get("kind")
    if kind is None or isinstance(kind, str):
        return kind
    raise LogError(path, line, f"expected a string, got {type(kind).__name__}",
                   f"messages[{i}].metadata.kind")


def _bad(path: str, line: int, where: str) -> None:
    raise LogError(path, line, "expected an object", where)


def _is_notice(part: dict[str, Any]) -> bool:
    text = part.get("text")
    return part.get("type") == "text" and isinstance(text, str) \
        and text.lstrip().startswith(NOTICE_PREFIX)


def _text(parts: list[dict[str, Any]]) -> str:
    return "\n".join(str(p.get("text")) for p in parts if isinstance(p.get("text"), str))


def _part_text(part: dict[str, Any]) -> str:
    """A part's text for tokens and discriminators (tool input as its values; a tool
    result's ``{query, result}`` entries, as Cline's read_files and run_commands write
    them, as the query then the result)."""
    if "query" in part or "result" in part:
        return "\n".join(str(part[k]) for k in ("query", "result")
                         if isinstance(part.get(k), str))
    for key in ("text", "content"):
        value = part.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return "\n".join(_part_text(v) if isinstance(v, dict) else str(v) for v in value)
    if "input" in part:
        return tool_input_text(part["input"])
    return ""
