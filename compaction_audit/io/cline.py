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

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from compaction_audit import addrspace
from compaction_audit.errors import LogError
from compaction_audit.io.cline_folder import (
    Undecodable,
    file_name,
    orphans,
    same_session,
    unread_group,
    unread_note,
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
from compaction_audit.io.lines import reads_once, regular_file
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
from compaction_audit.report.safe import unsurrogate
from compaction_audit.smallfile import odd_file

SOURCE_FORMAT = "cline"

SEEN_VERSIONS = (1,)
"""``version`` values of the session files this adapter was written against."""

MARKER_KINDS = {"compaction": "basic", "compaction_summary": "agentic"}
"""``metadata.kind`` of the message a compaction writes -> the strategy's name."""

NOTICE_PREFIX = "<SYSTEM_NOTICE>"
"""How the basic strategy opens the action summary it appends to kept user messages."""


def sniff_document(value: Any) -> bool:
    """True for a Cline messages or compaction file: ``{"messages": [{"role", "content"}],
    "sessionId" | "agent" | "system_prompt"}``."""
    if isinstance(value, dict) and _is_manifest(value):
        return True
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    if not any(k in value for k in ("sessionId", "agent", "system_prompt")):
        return False
    first = next((m for m in value["messages"] if isinstance(m, dict)), None)
    return first is None or ("role" in first and "content" in first and "info" not in first)


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None,
            skipped: list[LogError] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The session as ``(source_line, record)`` pairs, session record first.

    ``skipped`` None: the first malformed message raises :class:`LogError` (``FILE:LINE``);
    a list: lenient, each malformed message is skipped and its error appended.
    """
    named = path
    undecodable = Undecodable()  # names beside it skipped: not UTF-8 (escaped)
    given = read_document(path, lines)
    if isinstance(given.value, dict) and _is_manifest(given.value):
        path, given = _from_manifest(given, path, undecodable)
    messages_doc, compaction_doc, note, unchecked, unread, unread_total = _pair(
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


def companions(path: str) -> list[str]:
    """The files other than ``path`` that :func:`records` reads for it: the messages
    file a manifest leads to, the file paired with the session file, and, when several
    compaction files of the session lie beside a messages file (none is paired, each
    is named as unread, yet each is opened for its ``sessionId``), all of them
    (``[]`` for standard input, or when ``path`` cannot be read).  ``-o`` may not name
    them (:func:`~compaction_audit.outfile.refuse_same_file`; adv16 F1); nor the
    session's manifest ``<id>.json`` beside a ``<id>.messages.json``, which a folder
    search counts as read with it (adv32 A5: ``-o`` replaced it)."""
    out = _companions(path, unread=True)
    for messages in [path, *out]:
        if messages.endswith(".messages.json"):
            manifest = messages.removesuffix(".messages.json") + ".json"
            if os.path.isfile(manifest) and manifest not in out and manifest != path:
                out.append(manifest)
    return out


def _companions(path: str, *, unread: bool) -> list[str]:
    """:func:`companions`; with ``unread`` False, without the unread compaction files
    (:func:`unpaired_compactions` audits them on their own)."""
    if path == "-":
        return []
    out: list[str] = []
    try:
        given = read_document(path, None)
        if isinstance(given.value, dict) and _is_manifest(given.value):
            path, given = _from_manifest(given, path, Undecodable(), check=False)
            out.append(path)
        pairing = _pair(given, path, Undecodable(), check=False)
        if unread and pairing.unread_total:
            real = os.path.realpath(path)
            for here in [Path(path)] + ([Path(real)] if real != os.path.abspath(path)
                                        else []):
                group = unread_group(here, given.value.get("sessionId"), Undecodable())[0]
                out.extend(str(p) for p in group.others(here, len(group.names))[1])
    except (LogError, OSError):
        return out
    paired = (pairing.messages, pairing.compaction)
    return [*out, *(d.path for d in paired if d is not None and d is not given)]


def unpaired_compactions(messages: Iterable[str], compactions: Iterable[str]) -> list[str]:
    """The ``compactions`` (paths of ``*.compaction.json`` files a folder search found)
    that none of the ``messages`` files found with them reads (:func:`companions`), in
    the order given.  A folder search audits each of them as its own trace (paired with
    its messages file there, else read alone), so its findings reach the gate; a
    compaction file a messages file reads is audited once, with it (issue 11, class 2:
    a folder whose compaction files fail must not pass).  Files are compared by
    resolved path; only messages files in a folder holding a compaction file are read."""
    pending = list(compactions)
    folders = {os.path.dirname(os.path.realpath(c)) for c in pending}
    claimed: set[str] = set()
    for path in messages:
        if folders and os.path.dirname(os.path.realpath(path)) in folders:
            try:
                claimed.update(os.path.realpath(c) for c in _companions(path, unread=False))
            except RecursionError:  # too deep to read: it pairs with nothing
                continue
    return [c for c in pending if os.path.realpath(c) not in claimed]


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


class _Pairing(NamedTuple):
    """What :func:`_pair` found: either document may be None.  ``note`` says what was
    looked for and not found, or which compaction files of the session were left
    unread; ``unchecked`` is set when ``given`` is a compaction file whose messages file
    was not found (its compaction cannot be checked); ``unread`` names the compaction
    files of the session beside a messages file that were not read (several of them:
    which one goes with it is not known), each a compaction this audit did not check:
    the first :data:`~compaction_audit.io.cline_folder.NOTE_NAMES` of them, escaped;
    ``unread_total`` says how many there are (the note counts the rest)."""

    messages: Document | None
    compaction: Document | None
    note: str | None = None
    unchecked: str | None = None
    unread: tuple[str, ...] = ()
    unread_total: int = 0


def _pair(given: Document, path: str, undecodable: Undecodable, *, check: bool = True
          ) -> _Pairing:
    """:func:`_pair_beside` the name given, else, when that name is a symbolic link
    (or in a linked folder) and nothing was found beside it, beside the file it names,
    where Cline wrote its pair: a linked messages file lost its compaction file, and a
    failing session passed (adv20 F2)."""
    first = _pair_beside(given, path, Path(path), undecodable, check=check)
    if path == "-" or first.messages is not None or first.unread_total:
        return first
    real = os.path.realpath(path)
    if real == os.path.abspath(path):
        return first
    second = _pair_beside(given, path, Path(real), undecodable, check=check)
    return second if second.messages is not None or second.unread_total else first


def _pair_beside(given: Document, path: str, here: Path, undecodable: Undecodable, *,
                 check: bool = True) -> _Pairing:
    """The messages and compaction documents of the session ``given`` belongs to (see
    :class:`_Pairing`); names of the folder left unread because they are not UTF-8 are
    added to ``undecodable`` (:func:`~compaction_audit.io.cline_folder.same_session`:
    the folder is listed and read once per process, so pairing costs the same beside
    one file or thousands; issue 11, class 5, adv13 F1).  Raises :class:`LogError`
    when the folder must be searched and cannot be listed, or holds a file of the
    suffix looked for that cannot be opened (adv14 F2), and (``check``) when the
    address-space limit is too low for the pair (:func:`compaction_audit.addrspace.check`;
    :func:`companions` lists the files whatever the limit: ``-o`` may not name them).
    ``here``: ``path``, or the file it names, whose folder is searched."""
    if not isinstance(given.value, dict):
        return _Pairing(None, None)
    sid = given.value.get("sessionId")
    is_compaction = here.name.endswith(".compaction.json") or _has_marker(given.value)
    if path == "-":
        if not is_compaction:
            return _Pairing(None, None)
        return _Pairing(None, None, ("a Cline compaction file read from standard input: "
                                     "its messages file cannot be looked for, so its "
                                     "compaction is not checked"), "no messages file")
    stem = here.name.removesuffix(".compaction.json").removesuffix(".messages.json")
    if is_compaction:
        other = here.with_name(f"{stem}.messages.json")
        if not regular_file(other):
            other = same_session(here, sid, ".messages.json", undecodable).first(here) \
                or other
    else:
        other = here.with_name(f"{stem}.compaction.json")
        odd = odd_file(other)
        if odd is not None:  # there, but not to be read: its compaction is not checked
            name = file_name(other)
            return _Pairing(None, None, (
                f"{name} beside {file_name(here)} is {odd}, not a regular file: its "
                "compaction is not read, so not checked"), unread=(name,), unread_total=1)
        if not regular_file(other):
            count, found = same_session(here, sid, ".compaction.json", undecodable
                                        ).others(here)
            orphan = False
            if not count:  # none of its session: the folder's unpaired ones (adv32 A6)
                count, found = orphans(here, undecodable).others(here)
                orphan = True
            if count > 1 or (orphan and count):
                names = [file_name(f) for f in found]
                return _Pairing(None, None, unread_note(count, file_name(here), names, orphan),
                                unread=tuple(names), unread_total=count)
            other = found[0] if found else other
    doc = None
    if regular_file(other) and other.resolve() != here.resolve():
        if check:  # the pair is what is read
            addrspace.check(path, SOURCE_FORMAT, (str(other),))
        doc = read_document(str(other), None)
        why = _not_read(doc.value, is_compaction)
        if why is not None:  # there, but no partner this version reads (adv64 #1, #4)
            name = file_name(other)
            if is_compaction:
                return _Pairing(None, None, (
                    f"{file_name(here)}: the session's messages file {name} {why}, so its "
                    "compaction is not checked"), "messages file not read")
            return _Pairing(None, None, (
                f"{name} beside {file_name(here)} {why}: its compaction is not read, so "
                "not checked"), unread=(name,), unread_total=1)
        if not is_compaction and _not_read(given.value, True) is not None:
            name = file_name(other)
            return _Pairing(None, None, (
                f"{file_name(here)} holds no message: the compaction in {name} is not "
                "read, so not checked"), unread=(name,), unread_total=1)
    if doc is None:
        if not is_compaction:
            return _Pairing(None, None)
        return _Pairing(None, None, (
            f"{file_name(here)}: the session's messages file was not found (looked for "
            f"{unsurrogate(stem)}.messages.json and a *.messages.json with sessionId "
            f"{str(sid)[:80]!r} beside it), so its compaction is not checked"),
            "no messages file")
    return _Pairing(doc, given) if is_compaction else _Pairing(given, doc)


def _not_read(value: Any, messages: bool) -> str | None:
    """Why the partner document ``value`` (the messages file when ``messages``, else
    the compaction file) is not one this version reads, in words for a note; None when
    it is.  A messages file with no message cannot show what a compaction removed (it
    made up a second compaction: adv64 #4)."""
    if not isinstance(value, dict):
        return "is not a JSON object"
    if not isinstance(value.get("messages"), list):
        return "has no list of messages (messages)"
    if not sniff_document(value):
        return ("is not a Cline file this version reads (no sessionId, agent or "
                "system_prompt, or its first message is not {role, content})")
    if messages and not value["messages"]:
        return "holds no message"
    return None


def _is_manifest(value: dict[str, Any]) -> bool:
    """True for the session manifest ``<id>.json`` (``session_id``, ``messages_path``)."""
    return "messages" not in value and "session_id" in value and "messages_path" in value


def _from_manifest(doc: Document, path: str, undecodable: Undecodable, *,
                   check: bool = True) -> tuple[str, Document]:
    """The messages file a manifest names: the file of ``messages_path``'s name beside
    the manifest, else ``<session_id>.messages.json`` beside it, else the folder's
    messages file of the same session.  A manifest read once (a FIFO: ``-o`` cannot
    look at it first) is followed only to a ``*.messages.json``, the names
    :func:`~compaction_audit.io.companions.named_companions` protects (adv30 F1).
    Raises :class:`LogError` when none is found, and (``check``) when the
    address-space limit is too low for it."""
    sid = doc.value.get("session_id")
    here = Path(path)
    names = _manifest_names(doc.value, here)
    if reads_once(path):
        names = [n for n in names if n.name.endswith(".messages.json")]
    found = next((c for c in names if regular_file(c)), None) \
        or same_session(here, sid, ".messages.json", undecodable).first(here)
    if found is None or path == "-":
        raise LogError(path, 1, "the session's messages file is not found beside its "
                       "manifest", "messages_path")
    if check:
        addrspace.check(str(found), SOURCE_FORMAT)
    return str(found), read_document(str(found), None)


def _manifest_names(value: dict[str, Any], here: Path) -> list[Path]:
    """The files a manifest (``value``, read from ``here``) names as its messages file,
    first found first: ``messages_path``'s name beside it, then
    ``<session_id>.messages.json``."""
    # only a file beside the manifest: a path written in a log is not followed elsewhere
    named = Path(str(value.get("messages_path"))).name
    # a name from the log may be empty ('/', '.') or hold a '/' (the session id):
    # with_name refuses both, and neither names a file beside the manifest
    return [here.with_name(n) for n in (named, f"{value.get('session_id')}.messages.json")
            if n and "/" not in n and n not in (".", "..")]


def manifest_names(path: str) -> list[str]:
    """The files the manifest at ``path`` names as its messages file (see
    :func:`_manifest_names`); ``[]`` when ``path`` is no manifest or cannot be read."""
    try:
        value = read_document(path, None).value
    except (LogError, OSError):
        return []
    if not isinstance(value, dict) or not _is_manifest(value):
        return []
    return [str(p) for p in _manifest_names(value, Path(path))]


def _has_marker(value: dict[str, Any]) -> bool:
    messages = value.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("metadata"), dict)
        and m["metadata"].get("kind") in MARKER_KINDS for m in messages)


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

    # -- one file in order ---------------------------------------------------------
    def read(self, doc: Document) -> None:
        """Every message of ``doc`` in order; a marker message opens a compaction."""
        self.read_from(doc)
        for i, msg in enumerate(self.messages(doc)):
            line = doc.line_of("messages", i)
            Elements(doc.path, self.skipped).run(line, self.message, doc, line, i, msg)

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
            text = part.get("text")
            if not isinstance(text, str):
                raise TypeError("a text part's 'text' is not a string")
            if not text.strip():
                return None
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
        if type(before) is not int:
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
    check_counts(path, line, meta, ("tokensBefore", "messagesRemoved"),
                 f"messages[{i}].metadata.")
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
