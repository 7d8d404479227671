"""Claude Code session transcripts -> ``compaction-audit/1`` records.

Reads ``~/.claude/projects/<project>/<session>.jsonl`` transcripts and the Agent
SDK's message stream (same shapes, snake_case metadata).  The mapping is described
in ``docs/adapters.md``; in short: a round per real user turn and per compaction,
a raw span per user message, assistant text block, tool call and tool result, and
at each ``compact_boundary`` one summary folding the working set (the previous
summary included).  A message re-appended with a ``uuid`` seen before (a second
``/compact`` in one process writes the history again) is read once, when it is the
same line: same kind, content and parents, the earlier copy after its parents
(adv29 F1).  The main thread
is the file's non-sidechain lines; a file of sidechain lines only (a subagent's own
file) is read as its own thread.  Lines not read (sidechain lines of a main file,
lines shown only in the transcript) are counted in the session record's
``lines_not_read`` and explained in ``reader_notes``, so a trace never passes silently
with lines left out (issue 11, adv9 F5).  A queued message
(``queue-operation`` ``enqueue``) a person typed is a user turn; text the product
injects in the user role gets a ``harness:*`` source (:mod:`compaction_audit.io.harness`)
and never opens a round.  An ``attachment`` the model reads as a document (an
@-mentioned file, ...) is a span (:mod:`compaction_audit.io.claude_attachments`).
Other bookkeeping lines (``progress``,
``file-history-snapshot``, ``summary`` titles, ...) are ignored; a line of any other
``type`` is counted as not read, by type (adv27 F2).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io import harness
from compaction_audit.io.claude_attachments import document, queued_prompt
from compaction_audit.io.claude_branches import Branches
from compaction_audit.io.claude_parents import MissingParents
from compaction_audit.io.claude_parents import note as missing_note
from compaction_audit.io.documents import SHAPE_ERRORS
from compaction_audit.io.tokens import (
    IMAGE_TOKENS,
    TOO_DEEP,
    RoundAssembler,
    bounded_sum,
    count_problem,
    estimate_tokens,
    feed,
    lines_phrase,
    session_record,
    shape_error,
    split_tokens,
    tool_input_text,
    tool_output_text,
    unknown_type_note,
    utf8_len,
)

SOURCE_FORMAT = "claude-code"

_MESSAGE_TYPES = frozenset({"user", "assistant", "system"})
_META = "compactMetadata"
_STRING_FIELDS = ("uuid", "parentUuid", "logicalParentUuid", "sessionId", "subtype")
"""A message line's identity fields and a system line's ``subtype`` (a 1 made a
``compact_boundary`` no compaction: adv46): a string or null
(:meth:`_Converter.check_fields`)."""
_FLAG_FIELDS = ("isSidechain", "isCompactSummary", "isMeta", "isVisibleInTranscriptOnly")
"""A message line's flags: true, false or null (:meth:`_Converter.check_fields`; an
``isMeta`` "true" was read as false: adv64 #5)."""
_BOOKKEEPING = frozenset({"summary", "file-history-snapshot", "progress", "queue-operation",
                          "attachment", "result", "last-prompt", "custom-title", "ai-title"})
_ID_KEYS = ("uuid", "sessionId", "session_id", "leafUuid", "messageId")


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _text_type(obj: dict[str, Any]) -> str | None:
    """``obj["type"]`` when it is a string, else None (a list is unhashable)."""
    kind = obj.get("type")
    return kind if isinstance(kind, str) else None


def _stating(args: list[str]) -> list[str]:
    """The slash-command arguments of ``args`` that state a rule or another clause
    (:data:`~compaction_audit.recall.extract.CLAUSE_KINDS`): the person's words, a line
    that opens a round ("/deploy staging. Do NOT use --force": adv116 B2); a setting
    (``/model claude-opus-4``, ``/add-dir src/api src/web``, a URL to review) states
    none and stays the command's (adv117 P4, adv118 Q6: it became the person's first
    prompt)."""
    if not args:
        return args
    from compaction_audit.recall.extract import CLAUSE_KINDS, extract

    return [a for a in args if any(d.kind in CLAUSE_KINDS for d in extract(a))]


def _get(obj: dict[str, Any], name: str) -> Any:
    """``obj[name]``, or its snake_case spelling (the SDK stream's), or None."""
    if name in obj:
        return obj[name]
    return obj.get(_CAMEL.sub("_", name).lower())


def _spelled(obj: dict[str, Any], name: str) -> str:
    """``name`` as ``obj`` spells it (:func:`_get`): an error names the key the log
    holds (adv48: ``pre_tokens`` of the SDK stream was reported as ``preTokens``)."""
    return name if name in obj else _CAMEL.sub("_", name).lower()


REPEATED_COMPACTION = ("of a compaction repeating an earlier line's uuid, content and "
                       "parents (history written twice, or a copy put first; the first "
                       "was read): not read")
"""The reason counted for a compaction line read once (:meth:`_Converter.reappended`)."""

UNKNOWN_KEPT = ("of a partial compaction whose {} {}: what it kept is not known, and "
                "everything before it is read as folded")
"""The note for a partial compaction whose kept messages name nothing in the file
(adv68 #2): its losses then count every message before it."""

MICROCOMPACT_UNSEEN = ("of a microcompact naming tool results that are not in the "
                       "context before it (what they held is not checked)")
"""The note for a microcompact some of whose ``compactedToolIds`` name no tool result
in the context (adv67 #3); one that names none could not be checked at all."""

PARENT_NOT_LAST = ("of a compaction whose logicalParentUuid names a message that others "
                   "follow before it: they are read as folded, as everything before it")
"""The note for a boundary whose logical parent is not the last message before it
(adv112 #2): Claude Code names the last one, so the messages after it were in the
conversation the summary replaced; only a partial compaction's own fields keep some."""

_IDENTITY_KEYS = ("message", "content", "compactMetadata", "parentUuid", "logicalParentUuid")


_BOUNDARIES = ("compact_boundary", "microcompact_boundary")
NO_SUMMARY_LINE = "no summary line right after its boundary"
"""The ``unchecked`` reason of a compaction whose boundary no summary line follows
before the next message (a transcript cut there, or still being written): its summary
is ``opaque`` (no text) and its size unknown, not an estimate of anything (usertest74
F2).  "Right after": a summary line after a message that follows the boundary makes
a compaction of its own (adv144 F7: "after its boundary" was untrue of it)."""
EARLY_KEPT = 16
"""The most early parents kept for one compaction line (:meth:`_Converter.note_early`):
its own first, then its compaction ancestors', nearest first.  Each inherited its
parent's whole set, so a chain of n boundaries, each naming a logical parent absent
from the file, kept n^2/2 uuids: 3.3 GB for a 2.4 MB transcript (adv33 B1).  A parent
dropped past the cap can make a copy of a compaction line pass for history written
twice; that line is then counted as not read (:data:`REPEATED_COMPACTION`) all the
same, so the verdict still says it."""
"""The ``system`` subtypes that open a compaction: a copy of one put before its parent
line is no re-append (adv29 F1; the microcompact's, adv30 F5's survey)."""


def _identity(kind: str, obj: dict[str, Any]) -> tuple[Any, Any, bool, int]:
    """What makes two lines with one ``uuid`` the same line written twice.

    The kind (type, subtype, summary or not) and a hash of the content and parent
    fields (:data:`_IDENTITY_KEYS`, either spelling); timestamps and other metadata may
    differ between a line and its re-append.  Raises nothing: an unencodable value
    (a float too large for JSON was read as one) is part of the hash by its repr.
    """
    body = {key: _get(obj, key) for key in _IDENTITY_KEYS}
    try:
        digest = hash(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
    except orjson.JSONEncodeError:
        digest = hash(repr(body))
    return (kind, obj.get("subtype"), _get(obj, "isCompactSummary") is True, digest)


def sniff(first_objects: list[dict[str, Any]]) -> bool:
    """True when these first decoded lines look like a Claude Code transcript."""
    for obj in first_objects:
        kind = obj.get("type")
        if "payload" in obj or not isinstance(kind, str):
            continue
        if kind in _MESSAGE_TYPES and any(k in obj for k in ("uuid", "sessionId", "session_id")):
            return True
        if kind in _BOOKKEEPING and any(k in obj for k in _ID_KEYS):
            return True
    return False


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None
            ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(source_line, record)``: the session record, then the rounds in order.

    ``lines`` are ``(line_number, raw_bytes)`` pairs as from
    :func:`~compaction_audit.io.lines.iter_lines` (read from ``path`` when None).
    Raises :class:`LogError` naming the line for malformed input.
    """
    from compaction_audit.io.detect import line_checker  # detect imports this module

    conv = _Converter(path)
    first = feed(path, lines, conv.handle, line_checker(path, SOURCE_FORMAT))
    rounds = conv.finish()
    record = session_record(SOURCE_FORMAT, conv.session_id, None)
    notes = conv.notes()
    if notes:
        record["reader_notes"] = notes
    if conv.not_read:
        record["lines_not_read"] = sum(conv.not_read.values())
    missing = conv.parents.found(conv.seen_uuids)
    if missing is not None:  # a gap of its own kind (usertest76 F5)
        record["reader_notes"] = [*notes, missing_note(*missing)]
        record["parents_missing"], record["parents_missing_line"] = missing
    yield first or 1, record
    yield from rounds


@dataclass(slots=True)
class _Call:
    """One API response, possibly written over several ``assistant`` lines."""

    output_tokens: int = 0
    parts: list[tuple[dict[str, Any] | None, int]] = field(default_factory=list)


class _Converter:
    """The state machine behind :func:`records`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.asm = RoundAssembler()
        self.session_id: str | None = None
        self.uuid_line: dict[str, int] = {}
        self.tool_names: dict[str, str] = {}
        self.result_ids: dict[str, str] = {}
        # one API response's lines share a message id; a response ends at a person's
        # turn or a compaction (``epoch``): an id met again after one is another
        # response's, never added to spans a compaction already folded (adv64 #2)
        self.calls: dict[tuple[str, int], _Call] = {}
        self.epoch = 0
        self.call_epoch: dict[str, int] = {}
        self.last_context: int | None = None
        self.awaiting_after: list[dict[str, Any]] = []
        self.boundary: tuple[int, dict[str, Any]] | None = None
        self.sidechain_file: bool | None = None
        # sidechain lines met before any main-thread line: held (re-encoded) until the
        # file shows whether it has a main thread (then they are not read) or not (a
        # subagent's file: they are its thread); None when nothing is held
        self.held: list[tuple[int, bytes]] | None = None
        self.uuid_kind: dict[str, tuple[Any, Any, bool, int]] = {}
        self.seen_uuids: set[str] = set()  # every line's uuid so far, bookkeeping too
        self.parents = MissingParents()  # lines naming a parent the file lacks
        # uuid -> the parent uuids not yet seen when it (or an ancestor) was first met
        self.early: dict[str, tuple[str, ...]] = {}  # (adv29 F1), nearest first
        self.not_read: Counter[str] = Counter()  # reason -> lines not read
        self.reused: Counter[str] = Counter()  # reason -> uuids seen before, read or not
        self.queued: deque[str] = deque()  # queued texts, oldest first
        self.waiting: Counter[str] = Counter()  # of those, not yet delivered
        self.by_line: Counter[str] = Counter()  # delivered as a line, still in queued
        self.removed: Counter[str] = Counter()  # delivered by a remove, no attachment yet
        self.deferred: list[tuple[int, str]] = []  # queued between boundary and summary
        # attachments' documents between a boundary and its summary: read after them
        self.deferred_docs: list[tuple[int, str, str, str, int]] = []
        self.branches = Branches()  # where a line goes back to an earlier message
        self.rewind_to: int | None = None  # where the user line being read goes back to
        self.rewind_parent: str | None = None  # and its parent

    def fail(self, line: int, message: str, where: str) -> LogError:
        """A :class:`LogError` for this file."""
        return LogError(self.path, line, message, where)

    # -- dispatch --------------------------------------------------------------------
    def handle(self, line: int, obj: dict[str, Any]) -> None:
        """Apply one decoded transcript line (held while the thread is undecided)."""
        if self.held is None:
            self.apply(line, obj)
        elif _text_type(obj) in _MESSAGE_TYPES and _get(obj, "isSidechain") is False:
            self.sidechain_file = False  # a main thread: the held sidechain lines are not
            self.replay()
            self.apply(line, obj)
        else:
            self.held.append((line, orjson.dumps(obj)))

    def replay(self) -> None:
        """Apply the held lines now that :attr:`sidechain_file` is decided."""
        held, self.held = self.held or [], None
        for line, raw in held:
            try:
                self.apply(line, orjson.loads(raw))
            except SHAPE_ERRORS as exc:
                raise shape_error(self.path, line, exc) from None

    def notes(self) -> list[str]:
        """The reader notes: lines not read, uuids seen before (why, how many), and
        the rewinds placed."""
        notes = [f"{lines_phrase(n)} {why}" for why, n in (*self.not_read.items(),
                                                      *self.reused.items())]
        if self.branches.rewinds:
            notes.append(f"{self.branches.rewinds:,} rewind(s) (a person's message naming "
                         "an earlier one as its parent, as /rewind writes): "
                         f"{self.branches.dropped:,} item(s) after it left the context "
                         "with no summary, not judged as lost")
        return notes

    def apply(self, line: int, obj: dict[str, Any]) -> None:
        """Apply one decoded transcript line."""
        kind = _text_type(obj)  # a list or an object as a type is no type (adv28 F8)
        own = obj.get("uuid")
        self.parents.see(line, _get(obj, "parentUuid"), self.seen_uuids)
        if isinstance(own, str):
            self.seen_uuids.add(own)
        if kind == "queue-operation":
            self.queue_operation(line, obj)
            return
        if kind == "attachment" and type(obj.get("attachment")) is dict:
            self.attachment(line, obj, obj["attachment"])
        if kind not in _MESSAGE_TYPES:
            self.link(obj, line if kind == "attachment" else None)
            if kind is None or kind not in _BOOKKEEPING:  # counted, never dropped
                self.not_read[unknown_type_note(obj.get("type"))] += 1  # silently (adv27 F2)
            elif (isinstance(obj.get("message"), dict) or obj.get("subtype") ==
                  "compact_boundary" or _get(obj, "isCompactSummary") is True):
                self.not_read[f"of the bookkeeping type {kind!r} but carrying a message "
                              "or a compaction: not read"] += 1  # (adv28 F6)
            return
        self.check_fields(line, obj)
        side = _get(obj, "isSidechain")
        if isinstance(side, bool):  # a subagent's own file is sidechain throughout
            if self.sidechain_file is None:
                if side:  # never decides the thread: hold until a main line or the end
                    self.held = [(line, orjson.dumps(obj))]
                    return
                self.sidechain_file = False
            if side != self.sidechain_file:
                self.not_read["of a subagent (isSidechain) in a main transcript: not read"] += 1
                return
        uuid = obj.get("uuid")
        if isinstance(uuid, str) and self.reappended(line, uuid, kind, obj):
            return
        sid = _get(obj, "sessionId")
        if self.session_id is None and isinstance(sid, str):
            self.session_id = sid
        if kind == "system":
            subtype = obj.get("subtype")
            if subtype == "compact_boundary":
                self.flush_boundary(None)
                self.boundary = (line, obj)
                return
            if subtype == "microcompact_boundary":
                self.flush_boundary(None)
                self.microcompact(line, obj)
            self.link(obj)
            return
        if kind == "user" and _get(obj, "isCompactSummary") is True:
            self.compact_summary(line, obj)
            return
        self.flush_boundary(None)
        content = self.content(line, obj)
        parent = _get(obj, "parentUuid")
        has_parent = _spelled(obj, "parentUuid") in obj
        before = self.asm.entered
        message = True  # a conversation message to the branches, else a link
        if kind == "user":
            results = any(b.get("type") == "tool_result" for b in content)
            if not results and parent != uuid and uuid not in self.branches.anchor:
                # (a line naming itself, or a uuid seen before, has no known place)
                self.rewind_to = self.branches.rewound_to(parent, has_parent)
                self.rewind_parent = parent
            message = self.user(line, obj, content) or results
            self.rewind_to = self.rewind_parent = None
        else:
            self.assistant(line, obj, content)
        if isinstance(uuid, str):
            if message:
                self.branches.message(uuid, parent, has_parent, before, self.asm.entered)
            else:  # the product's text, a command: it forks nothing (adv135 #1)
                self.link(obj, line)

    def link(self, obj: dict[str, Any], line: int | None = None) -> None:
        """Pass a line that is no conversation message on to :attr:`branches`: a line
        named as a parent resolves through it to the message it follows (``line``: its
        number, for a line that may hold items)."""
        uuid, parent = obj.get("uuid"), _get(obj, "parentUuid")
        if isinstance(uuid, str):
            self.branches.link(uuid, parent if isinstance(parent, str) else None,
                               _spelled(obj, "parentUuid") in obj, line)

    def check_fields(self, line: int, obj: dict[str, Any]) -> None:
        """Raise :class:`LogError` for a message line whose identity fields
        (:data:`_STRING_FIELDS`, either spelling) are not strings or null, or whose
        flags (:data:`_FLAG_FIELDS`) are not booleans or null: they decide which lines
        are copies, parents and subagents' (docs/security.md), and a ``uuid`` 12 or an
        ``isSidechain`` "false" was read as absent with no word (adv42)."""
        for name in _STRING_FIELDS:
            value = _get(obj, name)
            if value is not None and type(value) is not str:
                raise self.fail(line, "expected a string", _spelled(obj, name))
        if _get(obj, "uuid") == "":  # adv46: reported at another line, as spans[N].id
            raise self.fail(line, "expected a non-empty string", "uuid")
        for name in _FLAG_FIELDS:
            value = _get(obj, name)
            if value is not None and type(value) is not bool:
                raise self.fail(line, "expected true or false", _spelled(obj, name))
        message = obj.get("message")
        if type(message) is dict:
            for name in ("id", "role"):
                value = message.get(name)
                if value is not None and type(value) is not str:
                    raise self.fail(line, "expected a string", f"message.{name}")

    def reappended(self, line: int, uuid: str, kind: str, obj: dict[str, Any]) -> bool:
        """True when this message line is history written again: skip it (noted).

        A line is a re-append only when an earlier line has its ``uuid``, the same kind
        (type, subtype, summary or not) and the same content and parents
        (:func:`_identity`), and no parent the earlier line named before it was in the
        file has come since (:meth:`note_early`).  A copy put *before* its parents (a
        compaction or microcompact boundary copied to the top of the file, adv29 F1,
        adv30)
        or with other content is no re-append: both are read, and a note counts them,
        so a copied harmless compaction cannot make the real one be skipped.  A
        compaction line (boundary, summary, microcompact) read once is counted in
        ``lines_not_read`` (:data:`REPEATED_COMPACTION`), so the verdict says it: with
        its parents absent from the file, an identical copy put first cannot be told
        from the compaction (adv31 N1), and the one read may be the copy.
        """
        what = _identity(kind, obj)
        seen = self.uuid_kind.get(uuid)
        if seen is None:
            self.uuid_line[uuid] = line
            self.uuid_kind[uuid] = what
            if what[1] in _BOUNDARIES or what[2]:
                self.note_early(uuid, obj)
            return False
        early = self.early.get(uuid, ())
        if seen == what and self.seen_uuids.isdisjoint(early):  # read each message once
            if what[1] in _BOUNDARIES or what[2]:  # which copy is the compaction
                self.not_read[REPEATED_COMPACTION] += 1  # cannot be told: said (adv31 N1)
            else:
                self.reused["repeating an earlier line's uuid (history written twice): "
                            "read once"] += 1
            return True
        if seen[:3] != what[:3]:
            why = "reusing the uuid of an earlier line of another kind"
        elif seen != what:
            why = "reusing the uuid of an earlier line with other content or parents"
        else:
            why = "repeating the uuid of an earlier copy that came before its parent line"
        self.reused[f"{why}: read as new lines"] += 1
        return False

    def note_early(self, uuid: str, obj: dict[str, Any]) -> None:
        """Record the parents of the compaction line ``uuid`` (its ``parentUuid`` and
        ``logicalParentUuid``, and a summary's boundary's) that are not in the file
        yet.  A parent missing from the whole file is common (the compaction's logical
        parent, after a resume); one that comes *later* marks a copy put before its
        history.  Kept for compaction lines only, at most :data:`EARLY_KEPT` uuids each
        (its own missing parents first, then its parents' sets, in file order, so the
        result does not depend on hashing): a message line's copy moves no compaction,
        and carrying the sets down every message would cost (lines x compactions)."""
        parents = [p for key in ("parentUuid", "logicalParentUuid")
                   if isinstance(p := _get(obj, key), str)]
        missing = [p for p in parents if p not in self.seen_uuids]
        for parent in parents:
            missing.extend(self.early.get(parent, ()))
        if missing:
            self.early[uuid] = tuple(dict.fromkeys(missing))[:EARLY_KEPT]

    def content(self, line: int, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """``message.content`` as a list of block objects.  Raises :class:`LogError`
        when it is missing, null or neither a string nor a list: a user or assistant
        message always has it, and one read as empty took its facts out of the audit
        with no word (adv45)."""
        message = obj.get("message")
        if type(message) is not dict:
            raise self.fail(line, "expected an object", "message")
        content = message.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if "content" not in message:
            raise self.fail(line, "missing field", "message.content")
        if type(content) is not list:
            raise self.fail(line, "expected a string or a list", "message.content")
        for i, block in enumerate(content):
            if type(block) is not dict:
                raise self.fail(line, "expected an object", f"message.content[{i}]")
        return content

    def text_of(self, line: int, block: dict[str, Any], where: str, key: str = "text") -> str:
        """A block's string field, else a :class:`LogError`."""
        value = block.get(key)
        if not isinstance(value, str):
            raise self.fail(line, "expected a string", f"{where}.{key}")
        return value

    # -- user lines ------------------------------------------------------------------
    def user(self, line: int, obj: dict[str, Any], content: list[dict[str, Any]]) -> bool:
        """A user line: tool results, or text (a turn when a person typed it).

        Each text block gets a source (:func:`~compaction_audit.io.harness.claude_text_source`);
        the line makes one span per source, the person's first (it keeps the ``uuid``).
        The line opens a round when it holds no tool result and a person's text, or
        only images on a line the product did not write; it is then where a rewind
        (:attr:`rewind_to`) takes the turns after it out (:meth:`rewound`).  Returns
        whether it opened one.
        """
        if _get(obj, "isVisibleInTranscriptOnly") is True:
            self.not_read["marked isVisibleInTranscriptOnly (not sent to the model): "
                          "not read"] += 1
            return False
        origin = obj.get("origin")
        if type(origin) is dict and not isinstance(origin.get("kind"), str | None):
            # adv48: a kind 7 made a person's text generated (another shape of origin
            # is not one this reader knows: read as before, a person's)
            raise self.fail(line, "expected a string", "origin.kind")
        flags = {"meta": _get(obj, "isMeta") is True,
                 "skill": isinstance(_get(obj, "sourceToolUseID"), str),
                 "generated": isinstance(origin, dict)
                 and origin.get("kind") not in (None, "human")}
        groups: dict[str, list[str]] = {harness.USER: []}
        images = 0
        results: list[tuple[int, dict[str, Any]]] = []
        for i, block in enumerate(content):
            kind = block.get("type")
            if kind == "text":
                text = self.text_of(line, block, f"message.content[{i}]")
                if text.strip() and not any(flags.values()) and (
                        parts := harness.ide_parts(text)) is not None:
                    for source, part in parts:  # the IDE's notes and the words around
                        groups.setdefault(source, []).append(part)
                elif text.strip():
                    source = harness.claude_text_source(text, **flags)
                    groups.setdefault(source, []).append(text)
                    if source == harness.COMMAND and (args := _stating(
                            harness.command_args(text))):
                        groups.setdefault(harness.USER, []).extend(args)  # typed words
                    elif (source == harness.META and not any(flags.values())
                          and (typed := harness.typed_after_notice(text))):
                        groups.setdefault(harness.USER, []).append(typed)  # (adv116 B3)
            elif kind in ("image", "document"):
                images += 1
            elif kind == "tool_result":
                results.append((i, block))
            else:
                self.unknown_block(kind)
        typed = "\n".join(groups[harness.USER])
        if typed and self.waiting[typed] > 0:  # a queued message delivered as a line
            self.waiting[typed] -= 1
            self.by_line[typed] += 1
            groups[harness.USER] = []
            typed = ""
        image_source = (harness.USER if typed or not any(flags.values())
                        else harness.claude_text_source("", **flags))
        human = not results and (bool(typed) or (
            images > 0 and len(groups) == 1 and image_source == harness.USER))
        if human:
            self.asm.turn(line)
            self.removed.clear()  # a remove's delivery comes in its own turn (adv136 #5)
            self.rewound()
            self.branches.turn(self.asm.entered)
            self.epoch += 1
        for i, block in results:
            self.tool_result(line, block, f"message.content[{i}]")
        uuid = obj.get("uuid")
        base = uuid if isinstance(uuid, str) else f"line-{line}"
        if images:
            groups.setdefault(image_source, [])
        for source, texts in groups.items():
            count = images if source == image_source else 0
            if texts or count:
                text = "\n".join(texts)
                self.asm.span(line, base, source, text,
                              estimate_tokens(text) + count * IMAGE_TOKENS)
        return human

    def attachment(self, line: int, obj: dict[str, Any], body: dict[str, Any]) -> None:
        """An ``attachment`` line (:mod:`compaction_audit.io.claude_attachments`): a
        document the model read (an @-mentioned file, a directory listing, a file
        changed outside the agent) is a span; a message the person queued is one, as a
        ``queue-operation`` ``enqueue`` is (unless that delivered it already); the
        product's reminders are not read.  A subagent's attachment in a main transcript
        is counted as not read, as its other lines are.  Between a ``compact_boundary``
        and its summary line a document waits for the compaction (Claude Code attaches
        the files it read again after one)."""
        if _get(obj, "isSidechain") is True and self.sidechain_file is not True:
            self.not_read["of a subagent (isSidechain) in a main transcript: not read"] += 1
            return
        uuid = obj.get("uuid")
        base = uuid if isinstance(uuid, str) else f"line-{line}"
        found = document(body)
        if isinstance(found, str):
            self.not_read[found] += 1
        elif found is not None:
            source, text, images = found
            tokens = estimate_tokens(text) + images * IMAGE_TOKENS
            if self.boundary is not None:
                self.deferred_docs.append((line, base, source, text, tokens))
            else:
                self.asm.span(line, base, source, text, tokens)
        elif (said := queued_prompt(body)) is not None and (typed := harness.typed_words(said)):
            if self.removed[typed] > 0:  # its enqueue made the turn, its remove took it
                self.removed[typed] -= 1  # (adv135 #5: read twice)
            elif self.waiting[typed] > 0:  # its enqueue line made the turn already
                self.waiting[typed] -= 1
                self.by_line[typed] += 1
            elif self.boundary is not None:
                self.deferred.append((line, typed))
            else:
                self.asm.turn(line)
                self.epoch += 1
                self.asm.span(line, base, harness.USER, typed)

    def rewound(self) -> None:
        """At a person's turn whose line goes back to an earlier message
        (:attr:`rewind_to`, from :meth:`~compaction_audit.io.claude_branches.Branches.rewound_to`:
        a ``/rewind``), evict everything after that message in the round the turn just
        opened, with no summary: no rule reads the turns taken back as lost.  The new
        branch's own lines before the turn (a file attached, a command run after the
        rewind: :meth:`~compaction_audit.io.claude_branches.Branches.path`) stay.  Only a
        person's turn places a rewind: a line of the product's or a command that forks
        may be followed by a prompt that continues the old branch, and a cut made there
        would hide a loss (adv135 #1)."""
        if self.rewind_to is None:
            return
        own = self.branches.path(self.rewind_parent) if self.rewind_parent else []
        if own is None:  # a chain too long to walk: what is the new branch's is not
            return  # known, so nothing is cut (adv136 #8)
        kept = {self.branches.where[u] for u in own if u in self.branches.where}  # its own
        gone = [item for item in self.asm.entered_since(self.rewind_to)
                if self.asm.working[item] not in kept]
        self.branches.cut(self.rewind_to, len(gone))
        if gone:
            self.asm.evict_now(gone)

    def queue_operation(self, line: int, obj: dict[str, Any]) -> None:
        """A ``queue-operation`` line: a message typed while the agent was busy.

        ``enqueue`` with a person's text opens a round and makes a ``user`` span
        (Claude Code delivers it inside the running turn; issue 10, point 7).  Queued
        notices (``<task-notification>``) are skipped: they arrive later as user lines
        of their own.  A message queued between a ``compact_boundary`` and its summary
        line opens its round after the compaction's.  The text waits (:attr:`waiting`)
        until ``remove`` (delivered inside the turn: the oldest one) or ``popAll``
        (taken back into the prompt); a later user line with the same text is that
        delivery, not a second span.
        """
        operation = obj.get("operation")
        if operation is not None and type(operation) is not str:  # adv48: a person's
            raise self.fail(line, "expected a string", "operation")  # queued turn dropped
        if operation == "enqueue":
            content = obj.get("content")
            if content is not None and type(content) not in (str, list):
                raise self.fail(line, "expected a string or a list", "content")
            if isinstance(content, list):
                for i, block in enumerate(content):
                    if type(block) is not dict:
                        raise self.fail(line, "expected an object", f"content[{i}]")
                    if block.get("type", "text") == "text":
                        self.text_of(line, block, f"content[{i}]")
                content = "\n".join(b["text"] for b in content
                                    if isinstance(b.get("text"), str))
            if not isinstance(content, str) or not content.strip():
                return
            content = harness.typed_words(content)
            if not content:
                return
            self.queued.append(content)
            self.waiting[content] += 1
            if self.boundary is not None:  # typed during a compaction: after its summary
                self.deferred.append((line, content))
            else:
                self.asm.turn(line)
                self.asm.span(line, f"line-{line}", harness.USER, content)
        elif operation == "remove":
            while self.queued:  # the oldest still waiting (a line took the others)
                text = self.queued.popleft()
                if self.by_line[text] > 0:
                    self.by_line[text] -= 1
                    continue
                self.waiting[text] -= 1
                self.removed[text] += 1  # delivered: its attachment, if one comes, is it
                break
        elif operation == "popAll":
            self.queued.clear()
            self.waiting.clear()
            self.by_line.clear()
            self.removed.clear()
        elif operation != "dequeue":  # an "Enqueue" dropped a person's turn (adv48)
            self.not_read[unknown_type_note(operation, "a queue operation")] += 1

    def tool_result(self, line: int, block: dict[str, Any], where: str) -> None:
        """One ``tool_result`` block: a span named after the call it answers."""
        call_id = self.text_of(line, block, where, "tool_use_id")
        content = block.get("content")
        if content is not None and type(content) not in (str, list):  # adv46: a 7 was
            raise self.fail(line, "expected a string or a list", f"{where}.content")
        text, images = _result_text(content)
        name = self.tool_names.get(call_id, "unknown")
        span = self.asm.span(line, f"{call_id}:result", f"tool_result:{name}", text,
                             estimate_tokens(text) + images * IMAGE_TOKENS)
        self.result_ids[call_id] = span["id"]

    # -- assistant lines -------------------------------------------------------------
    def assistant(self, line: int, obj: dict[str, Any], content: list[dict[str, Any]]) -> None:
        """An assistant line: part of one API call, identified by message id / requestId."""
        message: dict[str, Any] = obj["message"]
        uuid = obj.get("uuid")
        base = uuid if isinstance(uuid, str) else f"line-{line}"
        key = str(message.get("id") or obj.get("requestId") or base)
        if self.call_epoch.setdefault(key, self.epoch) != self.epoch:
            self.call_epoch[key] = self.epoch
            self.reused["repeating an earlier response's message id after a person's turn "
                        "or a compaction: read as another response"] += 1
        call = self.calls.setdefault((key, self.epoch), _Call())
        self.usage(line, message.get("usage"), call)
        for i, block in enumerate(content):
            kind = block.get("type")
            where = f"message.content[{i}]"
            if kind == "text":
                text = self.text_of(line, block, where)
                span = self.asm.span(line, base, "assistant", text, 0) if text.strip() else None
                call.parts.append((span, utf8_len(text)))
            elif kind == "thinking":
                call.parts.append((None, utf8_len(str(block.get("thinking") or ""))))
            elif kind == "redacted_thinking":
                call.parts.append((None, utf8_len(str(block.get("data", "")))))
            elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                name = self.text_of(line, block, where, "name")
                call_id = self.text_of(line, block, where, "id")
                if not call_id:  # adv48: reported at another line, as spans[N].id
                    raise self.fail(line, "expected a non-empty string", f"{where}.id")
                try:
                    raw = orjson.dumps(block.get("input", {})).decode()
                except orjson.JSONEncodeError:
                    raise self.fail(line, TOO_DEEP, f"{where}.input") from None
                span = self.asm.span(line, call_id, f"tool_call:{name}",
                                     tool_input_text(block.get("input", {})), 0)
                self.tool_names[call_id] = name
                call.parts.append((span, utf8_len(raw)))
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                self.tool_result(line, block, where)
            else:
                self.unknown_block(kind)

    def unknown_block(self, kind: Any) -> None:
        """Count a content block of a type this reader does not read (``Text``, a
        ``container_upload``): never dropped without a word (adv48: a person's text in
        a block typed "Text" left the audit and an error became a warning)."""
        self.not_read[unknown_type_note(kind, "a content block type")] += 1

    def usage(self, line: int, usage: Any, call: _Call) -> None:
        """Record a (repeated) ``usage``: the call's output size and the context size."""
        if usage is None:
            return
        if type(usage) is not dict:
            raise self.fail(line, "expected an object", "message.usage")
        values = {}
        for key in ("output_tokens", "input_tokens", "cache_read_input_tokens",
                    "cache_creation_input_tokens"):
            value = usage.get(key)
            problem = count_problem(value)
            if problem is not None:
                raise self.fail(line, problem, f"message.usage.{key}")
            values[key] = value or 0
        call.output_tokens = max(call.output_tokens, values.pop("output_tokens"))
        context = bounded_sum(self.path, line, values.values(),
                              "message.usage: " + " + ".join(values))
        if context > 0:
            self.last_context = context
            for info in self.awaiting_after:
                info["tokens_after"] = context
            self.awaiting_after.clear()

    # -- compactions -----------------------------------------------------------------
    def compact_summary(self, line: int, obj: dict[str, Any]) -> None:
        """The ``isCompactSummary`` user line: the text of the pending boundary's summary."""
        content = self.content(line, obj)
        text = "\n".join(self.text_of(line, b, f"message.content[{i}]")
                         for i, b in enumerate(content) if b.get("type") == "text")
        if self.boundary is None:  # a summary without its boundary line: still a compaction
            self.boundary = (line, {})
        self.flush_boundary((line, obj, text))

    def flush_boundary(self, summary: tuple[int, dict[str, Any], str] | None) -> None:
        """Turn the pending ``compact_boundary`` (and its summary line, if any) into a round."""
        if self.boundary is None:
            return
        line, obj = self.boundary
        self.boundary = None
        meta = self.metadata(line, obj, "compactMetadata")
        pre, post = self.count(line, meta, "preTokens"), self.count(line, meta, "postTokens")
        if pre == 0:  # no context is compacted from nothing: unknown, as a null is
            pre = None  # (adv128 #3: "context 0 -> 26,604 tokens", a context that grew)
        keep, keep_lines = self.preserved(line, meta)
        fold = self.asm.fold_outside(keep, keep_lines, None)
        parent = _get(obj, "logicalParentUuid")
        cut = self.uuid_line.get(parent) if isinstance(parent, str) else None
        if cut is not None and any(self.asm.working[item] > cut for item in fold):
            self.reused[PARENT_NOT_LAST] += 1  # adv112 #2: they were read as kept
        text = summary[2] if summary is not None else None
        tokens = estimate_tokens(text) if text is not None else post or 0
        source = summary[1] if summary is not None else obj
        uuid = source.get("uuid")
        base = uuid if isinstance(uuid, str) else f"line-{line}"
        info = {"trigger": self.trigger(line, meta), "tokens_before": pre if pre is not None
                else self.last_context, "tokens_after": post, "opaque": text is None,
                "kind": "compact"}
        if pre is None and self.last_context is not None:  # said, as for Cline (usertest68
            info["tokens_before_from"] = "last call"  # #6: read as the product's count)
        if text is None:  # cut at its boundary, or still being written (usertest74 F2:
            info["unchecked"] = NO_SUMMARY_LINE  # read as an encrypted summary's size)
        self.asm.compaction(line, fold=fold, fallback_children=[], base_id=base, text=text,
                            tokens=tokens, info=info)
        if text is None:
            info["summary_tokens"] = None  # unknown: no summary line to measure
        for at, doc_id, kind, body, size in self.deferred_docs:  # the files it attached
            self.asm.span(at, doc_id, kind, body, size)  # again: in its round, before
        self.deferred_docs.clear()  # its anchors (a rewind to its summary keeps them:
        self.branches.compacted(  # adv136 #6)
            [u for u in (obj.get("uuid"), uuid) if isinstance(u, str)], self.asm.entered)
        self.epoch += 1
        self.removed.clear()
        if post is None:
            self.awaiting_after.append(info)
        for at, queued in self.deferred:
            self.asm.turn(at)
            self.asm.span(at, f"line-{at}", harness.USER, queued)
        self.deferred.clear()

    def microcompact(self, line: int, obj: dict[str, Any]) -> None:
        """A ``microcompact_boundary``: old tool results cleared, no summary."""
        meta = self.metadata(line, obj, "microcompactMetadata")
        pre, saved = self.count(line, meta, "preTokens"), self.count(line, meta, "tokensSaved")
        if pre is not None and saved is not None and saved > pre:  # adv48: -910,000 after
            raise self.fail(line, f"tokensSaved {saved} exceeds preTokens {pre}",
                            "microcompactMetadata.tokensSaved")
        ids = _get(meta, "compactedToolIds")
        if ids is not None and (type(ids) is not list  # adv46: a "x" cleared nothing,
                                or not all(isinstance(i, str) for i in ids)):  # adv64: [1]
            raise self.fail(line, "expected a list of strings",
                            "microcompactMetadata.compactedToolIds")
        named = list(dict.fromkeys(ids or ()))  # adv67 #5: an id twice was evicted twice
        evict = [s for s in (self.result_ids.get(i) for i in named)
                 if s is not None and s in self.asm.working]
        after = pre - saved if pre is not None and saved is not None else None
        info: dict[str, Any] = {
            "trigger": self.trigger(line, meta, "microcompactMetadata"),
            "tokens_before": pre if pre is not None
            else self.last_context, "tokens_after": after, "opaque": False,
            "kind": "microcompact"}
        if pre is None and self.last_context is not None:
            info["tokens_before_from"] = "last call"
        if not named:  # adv67 #3: it was a checked compaction that lost nothing
            info["unchecked"] = "the microcompact names no tool result it cleared"
        elif not evict:
            info["unchecked"] = ("the tool results the microcompact cleared are not in the "
                                 "context before it")
        elif len(evict) < len(named):
            self.reused[MICROCOMPACT_UNSEEN] += 1  # a note on a line read, not "not read"
        self.asm.microcompact(line, evict, info)
        if after is None:
            self.awaiting_after.append(info)

    def metadata(self, line: int, obj: dict[str, Any], name: str) -> dict[str, Any]:
        """``compactMetadata`` (or ``compact_metadata``...) as an object, {} when absent."""
        meta = _get(obj, name)
        if meta is None:
            return {}
        if type(meta) is not dict:
            raise self.fail(line, "expected an object", _spelled(obj, name))
        return meta

    def trigger(self, line: int, meta: dict[str, Any],
                where: str = "compactMetadata") -> str | None:
        """The compaction's ``trigger`` (``auto``, ``manual``), None when not given;
        :class:`LogError` at ``where.trigger`` when it is not a string (adv42: a 3 read
        as unknown; adv71 #4: a microcompact's was named compactMetadata.trigger)."""
        value = _get(meta, "trigger")
        if value is not None and type(value) is not str:
            raise self.fail(line, "expected a string", f"{where}.trigger")
        return value

    def count(self, line: int, meta: dict[str, Any], name: str) -> int | None:
        """An optional token count of the metadata (at most ``MAX_TOKENS``)."""
        value = _get(meta, name)
        problem = count_problem(value)
        if problem is not None:
            raise self.fail(line, problem, _spelled(meta, name))
        return value if type(value) is int else None

    def preserved(self, line: int, meta: dict[str, Any]
                  ) -> tuple[tuple[int, int] | None, set[int]]:
        """The lines whose spans a partial compaction kept: the inclusive range of
        ``preservedSegment`` (None without one) and the lines of ``preservedMessages``.
        Raises :class:`LogError` when either, its ``headUuid``/``tailUuid`` or a uuid
        listed is of a wrong type (adv48: a list uuid was "unhashable" at another line;
        a uuid 7 or a segment written as a list was read as "nothing kept" and the
        folded tokens moved).

        A range, not the set of its lines: its size is the log's, not the record's.  A
        segment or list that names no message of the file before it (or a segment that
        ends before it starts) keeps nothing and gets a note (:data:`UNKNOWN_KEPT`)."""
        keep = None
        segment = self.part(line, meta, "preservedSegment")
        if segment is not None:
            ends = [self.uuid_of(line, segment, name, f"{_META}.preservedSegment")
                    for name in ("headUuid", "tailUuid")]
            head, tail = (self.uuid_line.get(u) if u is not None else None for u in ends)
            if head is not None and tail is not None and head <= tail:
                keep = (head, tail)
            elif ends != [None, None]:  # adv68 #2: read as "nothing kept", with no word
                self.reused[UNKNOWN_KEPT.format("preservedSegment", "names a message not "
                                                "in the file before it, or ends before it "
                                                "starts")] += 1
        lines: set[int] = set()
        messages = self.part(line, meta, "preservedMessages")
        uuids = _get(messages, "uuids") if messages is not None else None
        if uuids is not None and type(uuids) is not list:
            raise self.fail(line, "expected a list", f"{_META}.preservedMessages.uuids")
        for i, u in enumerate(uuids or []):
            if type(u) is not str:
                raise self.fail(line, "expected a string",
                                f"{_META}.preservedMessages.uuids[{i}]")
            if u in self.uuid_line:
                lines.add(self.uuid_line[u])
        if uuids and not lines:
            self.reused[UNKNOWN_KEPT.format("preservedMessages", "names no message in the "
                                            "file before it")] += 1
        return keep, lines

    def part(self, line: int, meta: dict[str, Any], name: str) -> dict[str, Any] | None:
        """``meta[name]`` (either spelling): an object or None, else :class:`LogError`."""
        value = _get(meta, name)
        if value is not None and type(value) is not dict:
            raise self.fail(line, "expected an object", f"{_META}.{name}")
        return value

    def uuid_of(self, line: int, obj: dict[str, Any], name: str, where: str) -> str | None:
        """``obj[name]`` (either spelling), a uuid: a string or None, else
        :class:`LogError` at ``where.name``."""
        value = _get(obj, name)
        if value is not None and type(value) is not str:
            raise self.fail(line, "expected a string", f"{where}.{name}")
        return value

    # -- end -------------------------------------------------------------------------
    def finish(self) -> list[tuple[int, dict[str, Any]]]:
        """Settle the assistant spans' tokens and return the round records."""
        if self.held is not None:  # sidechain lines only: a subagent's own file
            self.sidechain_file = True
            self.replay()
        self.flush_boundary(None)
        for call in self.calls.values():
            spans = [span for span, _ in call.parts if span is not None]
            if call.output_tokens > 0:
                shares = split_tokens(call.output_tokens, [w for _, w in call.parts])
                for (span, _), share in zip(call.parts, shares, strict=True):
                    if span is not None:
                        span["tokens"] = share
            else:
                for span in spans:
                    span["tokens"] = estimate_tokens(span.get("text", ""))
        return self.asm.finish()


def _result_text(content: Any) -> tuple[str, int]:
    """A tool result's text (blocks joined by newlines) and its number of images."""
    return tool_output_text(content, ("image", "document"))
