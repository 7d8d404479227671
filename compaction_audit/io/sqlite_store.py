"""Read an untrusted SQLite file with work bounded by its size (issue 11, item 4).

An SQLite "log" is a program as much as data: a table name may be a view over an
endless recursive query, a virtual table, or a table whose generated columns compute
a value at every read.  :class:`BoundedStore` reads only plain tables, the way the
file stores them, and stops any query that goes beyond budgets proportional to the
bytes on disk (the database plus its ``-wal`` file):

- the file is opened read-only (``mode=ro``; ``immutable`` without a ``-wal``,
  ``readonly_shm`` with one: nothing is written or created beside it; a ``-wal``
  without its ``-shm`` is read from a private copy),
  with ``trusted_schema`` off and ``cell_size_check`` on;
- each table a reader names must be a real ``CREATE TABLE`` (``type = 'table'`` in
  ``sqlite_master``, not ``CREATE VIRTUAL TABLE``) with no generated column: a view,
  a virtual table or a generated column is a one-line :class:`LogError`;
- :data:`STEPS_PER_BYTE` SQLite VM instructions per byte of input (at least
  :data:`MIN_STEPS`), counted with a progress handler: beyond, the query is
  interrupted and the reader fails with a :class:`LogError` naming the limit;
- the text and blob bytes read, over all queries, at most :data:`TEXT_PER_BYTE` times
  the input's bytes (a plain table returns what the file stores, uncompressed; the
  factor leaves room for UTF-16 databases), and no single value longer than the input
  (``SQLITE_LIMIT_LENGTH``).

The figures are in docs/security.md ("Input limits").
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compaction_audit.errors import LogError
from compaction_audit.io import sqlite_probe
from compaction_audit.io.lines import regular_file
from compaction_audit.io.sqlite_probe import MAX_SCHEMA_SQL, schema_cost
from compaction_audit.io.sqlite_schema import MAX_SCHEMA_ENTRIES, schema_entries

STEPS_PER_BYTE = 50
"""VM instructions allowed per byte of the database and its ``-wal`` file.  Reading a
4.7 MB opencode store of 3 sessions, 9,000 messages and 27,000 parts (``SELECT *``,
a scan and a sort per table) took 0.05 per byte; the factor 1,000 is margin, and the
work stays linear in the file."""

MIN_STEPS = 1 << 24
"""The step budget of a small file (about 0.1 s of SQLite work)."""

TEXT_PER_BYTE = 2
"""Text and blob bytes read per byte of input (see the module docstring)."""

_PROGRESS_EVERY = 1000
"""VM instructions between two calls of the progress handler."""


def input_bytes(path: str) -> int:
    """The bytes of ``path`` plus those of its ``-wal`` file (0 when absent), each
    counted as the smaller of its size and the disk it takes: a sparse file (a hole of
    40 GB that takes no disk) buys no budget (issue 11, class 4)."""
    total = 0
    for name in (path, f"{path}-wal"):
        with contextlib.suppress(OSError):
            st = os.stat(name)
            blocks = getattr(st, "st_blocks", None)
            total += st.st_size if blocks is None else min(st.st_size, blocks * 512)
    return total


def _open_untouched(path: str, private: bool = False) -> sqlite3.Connection:
    """A read-only connection to ``path`` that writes nothing beside it, checked by
    reading the schema.  ``mode=ro`` alone still opens the ``-shm`` file read-write
    (SQLite's wal-index: rewritten, and every hard link to it), and creates ``-shm``
    and ``-wal`` beside a WAL-mode store closed cleanly (adv17 F3).  So: without a
    ``-wal`` file the store is read as ``immutable`` (nothing else to read, no file
    created); with one, ``readonly_shm`` maps the existing ``-shm`` read-only (a
    stale one is not trusted: SQLite keeps the index in memory).  Beside a
    ``-journal`` the store is opened plainly: ``immutable`` skips the hot-journal
    check and read what a writer that died mid-transaction left, so a failing store
    passed (adv18 F4); SQLite then refuses it, read-only.  ``private``: the
    store is our own copy (:func:`_private_copy`), read as SQLite likes.  Raises
    :class:`sqlite3.Error` when the store cannot be read (a ``-wal`` without its
    ``-shm`` cannot be read in place)."""
    db = sqlite3.connect(_uri(path, private), uri=True)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        db.close()
        raise
    return db


def _uri(path: str, private: bool = False) -> str:
    """The URI :func:`_open_untouched` connects to ``path`` with (see there)."""
    if private or os.path.lexists(f"{path}-journal"):
        query = "?mode=ro"  # a hot journal: SQLite's own check refuses to read past it
    elif os.path.lexists(f"{path}-wal"):
        query = "?mode=ro&readonly_shm=1"
    else:
        query = "?mode=ro&immutable=1"
    return Path(path).resolve().as_uri() + query


def _private_copy(path: str, shown: str) -> Any:
    """A temporary folder holding ``store.db`` and ``store.db-wal``, copies of
    ``path`` and its ``-wal`` file, for a store SQLite cannot read without creating
    its ``-shm`` (the copy's is created there).  Raises :class:`LogError` when they
    cannot be copied, or when either is sparse: a 68 KB store with a -wal extended
    to 200 MB of holes wrote 200 MB into TMPDIR (adv18 F5); the copy is then at most
    the bytes on disk that the work budget counts (:func:`input_bytes`).  ``shown``:
    the name the user gave, for messages (``path`` is the file it names)."""
    import shutil
    import tempfile

    for name in (path, f"{path}-wal"):  # holes would be written out as zeros
        st = os.stat(name)
        blocks = getattr(st, "st_blocks", None)
        if blocks is not None and st.st_size > blocks * 512 + (1 << 16):
            raise LogError(shown, 0, f"cannot read the store: {os.path.basename(name)} is "
                           "a sparse file (its size is not on disk); a -wal without its "
                           "-shm is read from a copy, which would write the holes out")
    folder = tempfile.TemporaryDirectory(prefix="compaction-audit-store-")
    try:
        shutil.copyfile(path, os.path.join(folder.name, "store.db"))
        shutil.copyfile(f"{path}-wal", os.path.join(folder.name, "store.db-wal"))
    except OSError as exc:
        folder.cleanup()
        raise LogError(shown, 0, f"cannot read the store: {exc.strerror or exc}") from None
    return folder


MAX_LENGTH = (1 << 31) - 1
"""SQLite's largest string or blob limit (a C int): :class:`BoundedStore` never asks
for more."""


def _said(exc: sqlite3.Error, path: str) -> str:
    """SQLite's words for ``exc``; when it could not write (a read-only open) and a
    journal is beside ``path``, that the journal is why (adv81 #5: "attempt to write a
    readonly database" named nothing)."""
    journal = f"{os.path.realpath(path)}-journal"
    if "readonly" not in str(exc) or not regular_file(journal) \
            or not os.path.getsize(journal):
        return str(exc)
    return (f"{exc} (a hot journal beside it, {os.path.basename(journal)}, must be "
            "rolled back, which a read-only reader cannot do: open the store once with its "
            "program, or move the journal away if it is not the store's)")


class BoundedStore:
    """A read-only connection to the SQLite file ``path`` with the bounds of the
    module docstring.  Use as a context manager; :meth:`rows` yields dicts.

    Raises :class:`LogError` (``FILE: ...``, line 0) when the file cannot be opened,
    a table is not plain, or a budget is exceeded; ``what`` names the file's kind in
    messages ("SQLite store").  A name that is a symbolic link is read as the file it
    names, with the ``-wal``, ``-shm`` and ``-journal`` beside that file, where SQLite
    looks for them (those beside the link's name were checked, so a link read its
    target's hot journal as ``immutable``: adv19a F1)."""

    def __init__(self, path: str, what: str = "SQLite store") -> None:
        self.path = path
        self.what = what
        shown, path = path, os.path.realpath(path)
        size = input_bytes(path)
        self.max_steps = max(MIN_STEPS, STEPS_PER_BYTE * size)
        self.max_text = TEXT_PER_BYTE * size + (1 << 16)
        self.steps = 0
        self.text = 0
        for side in ("-journal", "-wal", "-shm"):  # SQLite opens them before any check:
            other = f"{path}{side}"  # a FIFO there blocks the open past any signal
            if os.path.lexists(other) and not regular_file(other):
                raise LogError(shown, 0, f"cannot open the {what}: its {side} file is not "
                               "a regular file")
        self._schema_bounded(shown, path)
        self._copy: Any = None
        try:
            self._probed(shown, _uri(path))
            self.db = _open_untouched(path)
        except sqlite3.Error as exc:
            if not (os.path.lexists(f"{path}-wal") and not os.path.lexists(f"{path}-shm")):
                raise LogError(shown, 0, f"cannot open the {what}: {_said(exc, path)}"
                               ) from None
            self._copy = _private_copy(path, shown)  # a -wal without its -shm: a copy
            try:
                copy = os.path.join(self._copy.name, "store.db")
                self._probed(shown, _uri(copy, private=True))
                self.db = _open_untouched(copy, private=True)
            except sqlite3.Error as exc:
                self._copy.cleanup()
                raise LogError(shown, 0, f"cannot open the {what}: {exc}") from None
        self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(max(size, 1 << 16), MAX_LENGTH))
        self.db.set_progress_handler(self._tick, _PROGRESS_EVERY)
        self.db.row_factory = sqlite3.Row
        try:
            self.db.execute("PRAGMA trusted_schema = OFF")
            self.db.execute("PRAGMA cell_size_check = ON")
        except sqlite3.Error as exc:
            self.close()
            raise self._error(exc) from None

    def _schema_bounded(self, shown: str, path: str) -> None:
        """Raise :class:`LogError` when the file's schema holds more than
        :data:`~compaction_audit.io.sqlite_schema.MAX_SCHEMA_ENTRIES` rows, counted
        from its bytes: SQLite parses the whole schema before any query its progress
        handler could stop (adv86 #2).  A file that cannot be opened here is left to
        the connection, which says why."""
        try:
            with open(path, "rb") as fh:
                entries = schema_entries(fh, MAX_SCHEMA_ENTRIES)
        except OSError:
            return
        if entries > MAX_SCHEMA_ENTRIES:
            raise LogError(shown, 0, f"the {self.what}'s schema holds more than "
                           f"{MAX_SCHEMA_ENTRIES:,} tables, indexes, views and triggers: "
                           "not a plain store")

    def _probed(self, shown: str, uri: str) -> None:
        """Raise :class:`LogError` when loading the schema of the file at ``uri`` costs
        a bounded helper more than it may, or the schema is past its bounds
        (:func:`~compaction_audit.io.sqlite_probe.schema_cost`: the ``-wal`` file's
        pages and trigger bodies included, which the byte count does not see)."""
        cost = schema_cost(uri)
        if cost is None:
            raise LogError(shown, 0, f"loading the {self.what}'s schema took more than "
                           f"{sqlite_probe.PROBE_CPU_SECONDS} s of CPU or "
                           f"{sqlite_probe.PROBE_MEMORY >> 20} MiB of memory: not a plain "
                           "store")
        rows, sql = cost
        if rows > MAX_SCHEMA_ENTRIES or sql > MAX_SCHEMA_SQL:
            raise LogError(shown, 0, f"the {self.what}'s schema holds more than "
                           + (f"{MAX_SCHEMA_ENTRIES:,} tables, indexes, views and triggers"
                              if rows > MAX_SCHEMA_ENTRIES else
                              f"{MAX_SCHEMA_SQL >> 20} MiB of SQL") + ": not a plain store")

    def __enter__(self) -> BoundedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (and remove the private copy, if one was made)."""
        self.db.close()
        if self._copy is not None:
            self._copy.cleanup()

    def _tick(self) -> int:
        self.steps += _PROGRESS_EVERY
        return 1 if self.steps > self.max_steps else 0  # non-zero interrupts the query

    def _error(self, exc: sqlite3.Error) -> LogError:
        if self.steps > self.max_steps:
            return LogError(self.path, 0, f"reading the {self.what} took more than "
                            f"{self.max_steps} SQLite steps ({STEPS_PER_BYTE} per byte of "
                            "the file): not a plain store")
        return LogError(self.path, 0, f"cannot read the {self.what}: "
                        f"{_said(exc, self.path)}")

    def require_tables(self, *names: str) -> None:
        """Raise :class:`LogError` unless each of ``names`` is a plain table: a real
        ``CREATE TABLE`` without generated columns (no view, no virtual table)."""
        try:
            found = {r["name"]: (r["type"], r["sql"] or "") for r in self.db.execute(
                "SELECT name, type, sql FROM sqlite_master WHERE name IN "
                f"({', '.join('?' * len(names))})", names)}
            for name in names:
                kind, sql = found.get(name, (None, ""))
                if kind is None:
                    raise LogError(self.path, 0, f"cannot read the {self.what}: no such "
                                   f"table: {name}")
                if kind != "table" or sql.lstrip().upper().startswith("CREATE VIRTUAL"):
                    shown = "a virtual table" if kind == "table" else f"a {kind}"
                    raise LogError(self.path, 0, f"the {self.what}'s {name} is {shown}, "
                                   "not a plain table: refusing to run it")
                hidden = [r["name"] for r in self.db.execute(
                    "SELECT name, hidden FROM pragma_table_xinfo(?)", (name,))
                    if r["hidden"]]
                if hidden:
                    raise LogError(self.path, 0, f"the {self.what}'s table {name} has "
                                   f"generated columns ({str(hidden[0])[:60]}): refusing "
                                   "to compute them")
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[dict[str, Any]]:
        """The rows of ``sql`` as dicts, counted against the budgets."""
        try:
            for row in self.db.execute(sql, params):
                out = dict(row)
                self.text += sum(len(v) for v in out.values() if isinstance(v, (str, bytes)))
                if self.text > self.max_text:
                    raise LogError(self.path, 0, f"reading the {self.what} returned more "
                                   f"than {self.max_text} bytes of text ({TEXT_PER_BYTE} per "
                                   "byte of the file): not a plain store")
                yield out
        except sqlite3.Error as exc:
            raise self._error(exc) from None
