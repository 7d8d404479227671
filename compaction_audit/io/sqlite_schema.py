"""Count an SQLite file's schema entries from its bytes, before SQLite parses them.

SQLite reads the whole schema (``sqlite_master``: every table, index, view and
trigger) when a connection first runs a statement, in time that grows faster than
the schema: a 10 MB file of 160,000 ``CREATE VIEW`` rows took 72 s to open, before
any query a progress handler could stop (adv86 #2).  :func:`schema_entries` walks the
schema's b-tree (rooted at page 1; the file format is
https://www.sqlite.org/fileformat2.html, sections 1.3 and 1.6) and counts its rows,
reading at most a bounded number of pages; :class:`~compaction_audit.io.sqlite_store.
BoundedStore` refuses a file past :data:`MAX_SCHEMA_ENTRIES`.  Pure standard library.
"""

from __future__ import annotations

from typing import BinaryIO

MAX_SCHEMA_ENTRIES = 10_000
"""Schema rows a store may have: opencode's has about 20 (tables and their indexes);
10,000 views load in about a tenth of a second."""

_LEAF, _INTERIOR = 0x0D, 0x05
"""The page types of a table b-tree's leaf and interior pages."""


def schema_entries(fh: BinaryIO, limit: int = MAX_SCHEMA_ENTRIES) -> int:
    """The rows of the schema b-tree of the SQLite file open as ``fh`` (binary, at
    any offset), counted up to just past ``limit`` (a larger count is ``limit + 1``).
    A page that is not a table b-tree page, out of the file, or seen twice ends the
    walk there: a damaged file is for SQLite to refuse, with its own words.  Reads at
    most ``limit + 1`` pages: every interior page has a child, and every leaf page
    counted holds a row or is the last one read."""
    head = _read(fh, 0, 100)
    if len(head) < 100:
        return 0
    size = int.from_bytes(head[16:18], "big")
    size = 65536 if size == 1 else size
    if size < 512 or size & (size - 1):
        return 0
    count, todo = 0, [1]
    seen: set[int] = set()
    while todo and count <= limit and len(seen) <= limit:
        number = todo.pop()
        if number in seen or number < 1:
            continue
        seen.add(number)
        page = _read(fh, (number - 1) * size, size)
        at = 100 if number == 1 else 0  # page 1 holds the file header first
        if len(page) < at + 12:
            continue
        kind, cells = page[at], int.from_bytes(page[at + 3:at + 5], "big")
        if kind == _LEAF:
            count += cells
        elif kind == _INTERIOR:
            todo.append(int.from_bytes(page[at + 8:at + 12], "big"))  # the right-most
            pointers = page[at + 12:at + 12 + 2 * cells]
            for k in range(0, len(pointers) - 1, 2):
                cell = int.from_bytes(pointers[k:k + 2], "big")
                if cell + 4 <= len(page):
                    todo.append(int.from_bytes(page[cell:cell + 4], "big"))
    return min(count, limit + 1)


def _read(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    return fh.read(size)
