"""The Cline session files of a folder by ``sessionId``, listed and read once per run.

The Cline adapter pairs a session file with the folder's other file of the same
``sessionId`` when the names do not share an ``<id>`` prefix
(:func:`~compaction_audit.io.cline.records`).  A folder is listed once and each of its
``*.messages.json`` / ``*.compaction.json`` files read once (for its ``sessionId``) per
process, the first time a file beside them looks for its partner: a folder of n
sessions that all carry one ``sessionId`` made discovery and the audit list the folder,
read every compaction file and resolve every path once per messages file, n x n (n =
1,000: 96 s of CPU before a trace was audited; issue 11, class 5, adv13 F1).  What a
lookup costs then depends on what it returns (a count and at most :data:`NOTE_NAMES`
names), not on the folder's size.

A folder is known by its device and inode and stays valid while its modification and
change times stay the same (a file added, removed or renamed changes them); a file
rewritten in place with another ``sessionId`` is seen by the next run.

A folder that cannot be listed, or a session file in it that cannot be opened, is a
:class:`~compaction_audit.errors.LogError` for the file looking for its partner: that
partner may be the one not seen (issue 11, class 2, adv14 F2).
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, NamedTuple

from compaction_audit.errors import LogError
from compaction_audit.io.documents import read_document
from compaction_audit.report.safe import unsurrogate

NOTE_NAMES = 5
"""The most file names one reader note (or ``compaction_files_unread``) lists; the rest
are counted ("and N more")."""

SUFFIXES = (".messages.json", ".compaction.json")
"""The file names a folder is indexed by."""

FOLDERS_KEPT = 16
"""Folders :data:`_FOLDERS` keeps; the oldest is dropped past it (each costs a few
hundred bytes per session file in it)."""


def file_name(path: str | Path) -> str:
    """The last part of ``path`` as the reports show it: a byte that was not UTF-8
    (a lone surrogate, ``os`` reads names with ``surrogateescape``) written ``\\xNN``,
    so a record holding it encodes as JSON (adv9, F6)."""
    return unsurrogate(Path(path).name)


_UNREAD_BESIDE = " of this session beside "
_ORPHAN_BESIDE = " paired with no messages file (it may be this session's) beside "
_UNREAD_END = "; audit each of them by name (or the folder) to check its compaction"


def unread_note(count: int, here: str, names: list[str], orphan: bool = False) -> str:
    """The reader note of a messages file ``here`` (its escaped name) beside ``count``
    compaction files of its session that it does not read (``names``: the first); with
    ``orphan``, beside the folder's :func:`orphans` (it found none of its session)."""
    files = "compaction file" if count == 1 else "compaction files"
    return (f"{count} {files}{_ORPHAN_BESIDE if orphan else _UNREAD_BESIDE}{here} "
            f"{'is' if count == 1 else 'are'} not read: {names_note(names, count)}"
            f"{_UNREAD_END}")


def unread_of(note: Any) -> str | None:
    """The messages file's name in ``note`` when it is an :func:`unread_note`, else None."""
    if not isinstance(note, str) or not note.endswith(_UNREAD_END):
        return None
    beside = next((b for b in (_UNREAD_BESIDE, _ORPHAN_BESIDE) if b in note), None)
    if beside is None:
        return None
    head = note.split(beside, 1)[1]
    for verb in (" are not read: ", " is not read: "):
        if verb in head:
            return head.split(verb, 1)[0]
    return None


def names_note(names: list[str], total: int) -> str:
    """``a, b, c`` or, past the :data:`NOTE_NAMES` shown, ``a, b, c, d, e and 7 more``
    (``total``: how many there are in all)."""
    shown = ", ".join(names[:NOTE_NAMES])
    more = total - min(len(names), NOTE_NAMES)
    return f"{shown} and {more} more" if more > 0 else shown


@dataclass
class Undecodable:
    """The names of a folder's files left unread as neighbours because they are not
    UTF-8, escaped (:func:`file_name`), by the suffix looked for (a suffix looked for
    twice, by a manifest and then by its messages file, counts once)."""

    by_suffix: dict[str, list[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_suffix)

    def add(self, suffix: str, names: list[str]) -> None:
        if names:
            self.by_suffix.setdefault(suffix, names)

    def note(self, path: str) -> str:
        """The reader note: how many, at most :data:`NOTE_NAMES` of them, then how many
        more."""
        total = sum(map(len, self.by_suffix.values()))
        first = list(islice(chain.from_iterable(self.by_suffix.values()), NOTE_NAMES))
        return (f"{total} file(s) beside {file_name(path)} not read: their names are not "
                f"UTF-8 ({names_note(first, total)}); rename them to pair them with this "
                "session")


@dataclass
class Group:
    """A folder's files of one suffix and one ``sessionId``: their names, sorted as
    :func:`os.listdir` gives them, and (once asked for) their resolved paths."""

    names: list[str] = field(default_factory=list)
    reals: list[str] | None = None
    real_counts: Counter[str] = field(default_factory=Counter)

    def first(self, here: Path) -> Path | None:
        """The first file of the group, beside ``here``."""
        return here.with_name(self.names[0]) if self.names else None

    def resolve(self, here: Path) -> list[str]:
        """The resolved path of each file (resolved once per group)."""
        if self.reals is None:
            self.reals = [os.path.realpath(here.with_name(n)) for n in self.names]
            self.real_counts = Counter(self.reals)
        return self.reals

    def others(self, here: Path, limit: int = NOTE_NAMES) -> tuple[int, list[Path]]:
        """How many files of the group are not ``here`` (compared by resolved path, so
        a link to it is it), and the first ``limit`` of them."""
        if not self.names:
            return 0, []
        mine = os.path.realpath(here)
        reals = self.resolve(here)
        count = len(self.names) - self.real_counts[mine]
        kept = (here.with_name(n) for n, r in zip(self.names, reals, strict=True)
                if r != mine)
        return count, list(islice(kept, limit))


@dataclass
class _Folder:
    """One folder's index: its session files by suffix, each by ``sessionId``."""

    key: tuple[int, ...]
    names: dict[str, list[str]]  # suffix -> decodable names
    undecodable: dict[str, list[str]]  # suffix -> escaped names
    groups: dict[str, dict[str, Group]] = field(default_factory=dict)
    unopened: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """suffix -> (name, why) of each file that could not be opened to read its
    ``sessionId`` (filled with ``groups``)."""
    orphans: Group | None = None
    """The compaction files no messages file pairs with (:func:`orphans`)."""


_FOLDERS: dict[tuple[int, int], _Folder] = {}
"""Each folder indexed in this process, by device and inode (:func:`same_session`)."""


def same_session(here: Path, session_id: Any, suffix: str, undecodable: Undecodable
                 ) -> Group:
    """The files of ``here``'s folder ending in ``suffix`` (``.messages.json``,
    ``.compaction.json``) with the ``sessionId`` ``session_id`` (a string; else none).

    A name that is not UTF-8 (its bytes read with ``surrogateescape``) is not read: it
    is added to ``undecodable``, escaped, for a reader note; such a neighbour made the
    session record unwritable (adv9, F6).

    Raises :class:`LogError` when the folder cannot be listed (mode 711: searchable,
    not listable) or a file of ``suffix`` in it cannot be opened (mode 600 of another
    owner) or read as a JSON document (cut short by a crashed writer, past the input
    limits): the file looked for may be that one, and a session whose compaction is
    not checked must not pass (issue 11, class 2, adv14 F2, adv15 F1).  A JSON
    document without a string ``sessionId`` (not a Cline file) is of no session."""
    if not isinstance(session_id, str):
        return Group()
    return _groups(here, suffix, undecodable).get(session_id, Group())


def _groups(here: Path, suffix: str, undecodable: Undecodable) -> dict[str, Group]:
    """The files of ``here``'s folder ending in ``suffix``, by ``sessionId`` (read once
    per folder); raises as :func:`same_session`."""
    folder = _folder(here)
    undecodable.add(suffix, folder.undecodable[suffix])
    if suffix not in folder.groups:
        groups: dict[str, Group] = {}
        unopened: list[tuple[str, str]] = []
        for name in folder.names[suffix]:
            try:
                sid = _session_id(here.with_name(name))
            except OSError as exc:
                unopened.append((name, f"cannot open: {exc.strerror or exc}"))
                continue
            except _Unreadable as exc:
                unopened.append((name, f"cannot read: {exc}"))
                continue
            if sid is not None:
                groups.setdefault(sid, Group()).names.append(name)
        folder.groups[suffix] = groups
        folder.unopened[suffix] = unopened
    if unopened := folder.unopened[suffix]:
        name, why = unopened[0]
        more = f" (and {len(unopened) - 1} more such files)" if len(unopened) > 1 else ""
        raise LogError(str(here.with_name(name)), 0, (
            f"{why}; a {suffix} file beside {file_name(here)} that may be "
            f"of its session, which is then not checked{more}"))
    return folder.groups[suffix]


def orphans(here: Path, undecodable: Undecodable) -> Group:
    """The ``*.compaction.json`` files of ``here``'s folder that no messages file there
    pairs with: of a ``sessionId`` no ``*.messages.json`` of the folder has (or of
    none), and without a ``<id>.messages.json`` of their own name.  A messages file
    that finds no compaction file of its session names them as compaction files it did
    not read: which session such a file is of cannot be told, and a compaction file
    whose ``sessionId`` was changed left its messages file a plain PASS (adv32 A6).
    Found once per folder (the two suffixes' indexes of :func:`same_session`); raises
    as :func:`same_session`, for either suffix.  Files of another session with their
    own messages file are not named."""
    folder = _folder(here)
    if folder.orphans is None:
        names = folder.names[SUFFIXES[1]]
        if names:
            messages = _groups(here, SUFFIXES[0], undecodable)
            paired = {name for sid, group in _groups(here, SUFFIXES[1], undecodable).items()
                      if sid in messages for name in group.names}
            partners = set(folder.names[SUFFIXES[0]])
            names = [n for n in names if n not in paired
                     and n.removesuffix(SUFFIXES[1]) + SUFFIXES[0] not in partners]
        folder.orphans = Group(list(names))
    return folder.orphans


def unread_group(here: Path, session_id: Any, undecodable: Undecodable) -> tuple[Group, bool]:
    """The compaction files a messages file ``here`` may leave unread: its session's
    (:func:`same_session`) when it has any, else the folder's :func:`orphans`; and
    whether they are the orphans."""
    group = same_session(here, session_id, SUFFIXES[1], undecodable)
    if group.names:
        return group, False
    return orphans(here, undecodable), True


def _folder(here: Path) -> _Folder:
    """The index of the folder holding ``here``, listed now or earlier in this process;
    an empty one when there is no such folder (``here`` is an object storage URL, or
    the folder is gone); :class:`LogError` (naming the folder) when it cannot be
    listed."""
    path = here.parent
    try:
        st = os.stat(path)
        ident = (st.st_dev, st.st_ino)
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        cached = _FOLDERS.get(ident)
        if cached is not None and cached.key == key:
            return cached
        names = sorted(os.listdir(path))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return _Folder((), {s: [] for s in SUFFIXES}, {s: [] for s in SUFFIXES})
    except OSError as exc:
        raise LogError(str(path), 0, (
            f"cannot list directory: {exc.strerror or exc}; the files of "
            f"{file_name(here)}'s session in it cannot be looked for, so its compaction "
            "is not checked")) from None
    by_suffix: dict[str, list[str]] = {s: [] for s in SUFFIXES}
    undecodable: dict[str, list[str]] = {s: [] for s in SUFFIXES}
    for name in names:
        suffix = next((s for s in SUFFIXES if name.endswith(s)), None)
        if suffix is not None:
            (by_suffix if _decodable(name) else undecodable)[suffix].append(name)
    for suffix, raw in undecodable.items():  # escaped, each once
        undecodable[suffix] = list(dict.fromkeys(map(file_name, raw)))
    _FOLDERS.pop(ident, None)
    while len(_FOLDERS) >= FOLDERS_KEPT:
        del _FOLDERS[next(iter(_FOLDERS))]
    _FOLDERS[ident] = _Folder(key, by_suffix, undecodable)
    return _FOLDERS[ident]


def _decodable(name: str) -> bool:
    """True when ``name`` (as ``os.listdir`` gives it) was valid UTF-8 on disk."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Unreadable(Exception):
    """A file beside a trace that opens but cannot be read as a JSON document; the
    message says why."""


def _session_id(path: Path) -> str | None:
    """The string ``sessionId`` of the document at ``path``; None when it is gone, is
    not a regular file (a FIFO or a device is never opened), or has none.  Raises
    :class:`OSError` when it cannot be looked at or opened (``EACCES``, a link loop),
    and :class:`_Unreadable` when it cannot be read through the bounded line reader
    as a JSON document (cut short, not JSON, past the input limits of a trace): what
    it holds is not known."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb"):  # an open that fails is not "no sessionId"
            pass
    except FileNotFoundError:
        return None
    try:
        value = read_document(str(path), None).value
    except LogError as exc:
        raise _Unreadable(f"line {exc.line}: {exc.message}" if exc.line else exc.message) from None
    except (OSError, ValueError, RecursionError) as exc:
        raise _Unreadable(str(exc) or type(exc).__name__) from None
    sid = value.get("sessionId") if isinstance(value, dict) else None
    return sid if isinstance(sid, str) else None


class Settled(NamedTuple):
    """The compaction files of a session beside a messages file that it did not read,
    split by whether this run audits them as traces of their own: how many of each,
    and the names of the first :data:`NOTE_NAMES` of each (escaped)."""

    checked: int
    checked_names: list[str]
    left: int
    left_names: list[str]
    orphan: bool = False
    """They are the folder's :func:`orphans`, not files of the session."""


def settle(path: str, session_id: Any, audited: set[str],
           memo: dict[int, tuple[Group, list[int], list[int]]]) -> Settled | None:
    """:class:`Settled` for the messages file ``path`` (its session's compaction files
    beside it, less itself), ``audited`` holding the resolved path of each trace of
    the run; None when it has no such files.  ``memo`` (empty at first, then kept
    across the run's traces) splits each group once: a folder of n messages files of
    one session costs n, not n x n.  (A folder or file that could not be read, which
    made the trace unreadable, settles nothing.)"""
    here = Path(path)
    try:
        group, orphan = unread_group(here, session_id, Undecodable())
    except LogError:
        return None
    if not group.names:
        return None
    reals = group.resolve(here)
    if id(group) not in memo:
        done = [i for i, r in enumerate(reals) if r in audited]
        memo[id(group)] = group, done, [i for i, r in enumerate(reals) if r not in audited]
    _, done, left = memo[id(group)]
    mine = os.path.realpath(path)
    own = group.real_counts[mine]

    def first(indexes: list[int]) -> list[str]:
        return [file_name(group.names[i]) for i in islice(
            (i for i in indexes if reals[i] != mine), NOTE_NAMES)]

    mine_done = mine in audited
    return Settled(len(done) - (own if mine_done else 0), first(done),
                   len(left) - (0 if mine_done else own), first(left), orphan)
