"""Cline session files: which files of a session are read together.

A Cline session keeps ``<id>.messages.json`` and, after a compaction,
``<id>.compaction.json``; a manifest ``<id>.json`` names the messages file.  Given one
file, :func:`pair` finds the other (same ``<id>`` prefix, else the folder's file of the
same ``sessionId``) or says why none is read, :func:`companions` lists the files an
audit of it reads (``-o`` may not name them), and :func:`unpaired_compactions` finds
the compaction files a folder search must audit on their own.  The conversion of the
pair is :mod:`compaction_audit.io.cline`; the pairing rules are in docs/adapters.md
(Cline section).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from compaction_audit.errors import LogError
from compaction_audit.io.cline_folder import (
    Undecodable,
    file_name,
    orphans,
    same_session,
    unread_group,
    unread_note,
)
from compaction_audit.io.documents import Document, read_document
from compaction_audit.io.lines import reads_once, regular_file
from compaction_audit.report.safe import unsurrogate
from compaction_audit.runtime import addrspace
from compaction_audit.smallfile import odd_file

SOURCE_FORMAT = "cline"

MARKER_KINDS = {"compaction": "basic", "compaction_summary": "agentic"}
"""``metadata.kind`` of the message a compaction writes -> the strategy's name."""


def sniff_document(value: Any) -> bool:
    """True for a Cline messages or compaction file: ``{"messages": [{"role", "content"}],
    "sessionId" | "agent" | "system_prompt"}``."""
    if isinstance(value, dict) and is_manifest(value):
        return True
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    if not any(k in value for k in ("sessionId", "agent", "system_prompt")):
        return False
    first = next((m for m in value["messages"] if isinstance(m, dict)), None)
    return first is None or ("role" in first and "content" in first and "info" not in first)


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
        if isinstance(given.value, dict) and is_manifest(given.value):
            path, given = from_manifest(given, path, Undecodable(), check=False)
            out.append(path)
        pairing = pair(given, path, Undecodable(), check=False)
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


class Pairing(NamedTuple):
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


def pair(given: Document, path: str, undecodable: Undecodable, *, check: bool = True
          ) -> Pairing:
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
                 check: bool = True) -> Pairing:
    """The messages and compaction documents of the session ``given`` belongs to (see
    :class:`Pairing`); names of the folder left unread because they are not UTF-8 are
    added to ``undecodable`` (:func:`~compaction_audit.io.cline_folder.same_session`:
    the folder is listed and read once per process, so pairing costs the same beside
    one file or thousands; issue 11, class 5, adv13 F1).  Raises :class:`LogError`
    when the folder must be searched and cannot be listed, or holds a file of the
    suffix looked for that cannot be opened (adv14 F2), and (``check``) when the
    address-space limit is too low for the pair (:func:`compaction_audit.runtime.addrspace.check`;
    :func:`companions` lists the files whatever the limit: ``-o`` may not name them).
    ``here``: ``path``, or the file it names, whose folder is searched."""
    if not isinstance(given.value, dict):
        return Pairing(None, None)
    sid = given.value.get("sessionId")
    is_compaction = here.name.endswith(".compaction.json") or has_marker(given.value)
    if path == "-":
        if not is_compaction:  # a session's compactions live in files beside this
            # one (adv103 #6: from standard input it read "no compaction in this log",
            # where by name 2 compaction files beside it were said not checked)
            return Pairing(None, None, (
                "a Cline messages file read from standard input: the compaction files "
                "Cline keeps beside it cannot be looked for; audit the file by name, or "
                "its folder, to check its compactions"))
        return Pairing(None, None, ("a Cline compaction file read from standard input: "
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
            return Pairing(None, None, (
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
                return Pairing(None, None, unread_note(count, file_name(here), names, orphan),
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
                return Pairing(None, None, (
                    f"{file_name(here)}: the session's messages file {name} {why}, so its "
                    "compaction is not checked"), "messages file not read")
            return Pairing(None, None, (
                f"{name} beside {file_name(here)} {why}: its compaction is not read, so "
                "not checked"), unread=(name,), unread_total=1)
        theirs = doc.value.get("sessionId")
        if "sessionId" in given.value and "sessionId" in doc.value and sid != theirs:
            # another session's file, paired by its name alone (adv84 #2: its numbers
            # were reported as this session's; adv85 #3: a sessionId of another type)
            name = file_name(other)
            said = (f"has sessionId {_quoted(theirs)}, not {file_name(here)}'s "
                    f"{_quoted(sid)}")
            if is_compaction:
                return Pairing(None, None, (
                    f"{file_name(here)}: the messages file {name} {said}, so its "
                    "compaction is not checked"), "messages file of another session")
            return Pairing(None, None, (  # not a compaction of this session: none unread
                f"{name} beside {file_name(here)} {said}: another session's compaction, "
                "not read"))
        if not is_compaction and _not_read(given.value, True) is not None:
            name = file_name(other)
            return Pairing(None, None, (
                f"{file_name(here)} holds no message: the compaction in {name} is not "
                "read, so not checked"), unread=(name,), unread_total=1)
    if doc is None:
        if not is_compaction:
            return Pairing(None, None)
        return Pairing(None, None, (
            f"{file_name(here)}: the session's messages file was not found (looked for "
            f"{unsurrogate(stem)}.messages.json and a *.messages.json with sessionId "
            f"{str(sid)[:80]!r} beside it), so its compaction is not checked"),
            "no messages file")
    return Pairing(doc, given) if is_compaction else Pairing(given, doc)


def _quoted(value: Any, limit: int = 80) -> str:
    """A ``sessionId`` as a note quotes it: a string quoted, another value as JSON
    writes it (``12345``, ``null``), cut at ``limit`` characters with an ellipsis
    (adv85 #4: two ids alike in their first 80 read as the same)."""
    text = repr(value) if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "…"


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


def is_manifest(value: dict[str, Any]) -> bool:
    """True for the session manifest ``<id>.json`` (``session_id``, ``messages_path``)."""
    return "messages" not in value and "session_id" in value and "messages_path" in value


def from_manifest(doc: Document, path: str, undecodable: Undecodable, *,
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


def manifest_target(path: str) -> str | None:
    """The messages file the reader takes for the manifest at ``path``
    (:func:`from_manifest`'s choice, without reading it: the file it names beside it,
    else the folder's first messages file of its ``session_id``), or None: no manifest,
    no such file, or a file or folder that cannot be read (the reader then says why).
    Discovery leaves a manifest out of a pattern only where this is the messages file
    the pattern also matched (adv90 #1: a ``sessionId`` nested in a message led it to
    the wrong file, and a failing manifest went unaudited)."""
    try:
        value = read_document(path, None).value
        if not isinstance(value, dict) or not is_manifest(value):
            return None
        here = Path(path)
        found = next((c for c in _manifest_names(value, here) if regular_file(c)), None) \
            or same_session(here, value.get("session_id"), ".messages.json",
                            Undecodable()).first(here)
    except (LogError, OSError):
        return None
    return None if found is None else str(found)


def manifest_names(path: str) -> list[str]:
    """The files the manifest at ``path`` names as its messages file (see
    :func:`_manifest_names`); ``[]`` when ``path`` is no manifest or cannot be read."""
    try:
        value = read_document(path, None).value
    except (LogError, OSError):
        return []
    if not isinstance(value, dict) or not is_manifest(value):
        return []
    return [str(p) for p in _manifest_names(value, Path(path))]


def has_marker(value: dict[str, Any]) -> bool:
    messages = value.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("metadata"), dict)
        and m["metadata"].get("kind") in MARKER_KINDS for m in messages)
