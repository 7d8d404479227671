"""List a ``gs://`` prefix past the keys obstore cannot parse (issue 11, class 6).

obstore fails a whole listing page on the first key it cannot parse as a path
(:func:`~compaction_audit.io.object_keys.key_problem`), and for Google Cloud Storage
there is no second lister (botocore speaks S3's protocol and credentials; a raw
listing would need Google's OAuth flows).  But object_store lists GCS through its XML
API, whose ``start-after`` parameter obstore passes as ``offset``, and obstore's error
carries the failing key exactly, in Rust's ``Debug`` form (``path: "runs/c\\u{1}.jsonl"``).
So :func:`list_past_bad_keys` lists again from the first key after the bad one that
obstore can name (:func:`next_nameable`): every string between the two is itself no
name obstore can parse.  What is lost is reported, never skipped silently: the page
that failed had keys before the bad one (up to 1,000 with GCS), which obstore never
yields and cannot be asked for again without meeting that key, and keys between the
bad one and the next nameable string are not seen.  Each bad key is one
:class:`Gap` naming that range; a listing with a gap fails the run (exit 2), whatever
the key's suffix.  The next nameable string itself is excluded by ``start-after``: it
is looked up with one HEAD request.

Azure's list API takes no start key (object_store refuses an offset there), so an
``az://`` listing that fails is done again folder by folder (:func:`list_by_folder`,
obstore's ``list_with_delimiter``): a bad key then fails the listing of its own folder
only, which is reported (:class:`LostFolder`: the folder, the key), and the traces of
every other folder are audited.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compaction_audit.io.object_keys import key_problem

MAX_GAPS = 1000
"""Bad keys skipped in one listing at most (one more list and one HEAD request each);
past them the listing fails (``more than 1000 keys obstore cannot name``)."""

MAX_FOLDERS = 10_000
"""Folders listed one by one at most (a request each, where a flat listing makes one
per 1,000 keys); past them the listing fails (``more than 10000 folders``)."""

_DEBUG_PATH = re.compile(r'\bpath: "((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(u\{([0-9a-fA-F]{1,6})\}|.)")
_SIMPLE = {"t": "\t", "r": "\r", "n": "\n", "0": "\0", "'": "'", '"': '"', "\\": "\\"}
_CONTROL = frozenset(range(0x20)) | {0x7F}


@dataclass(frozen=True)
class Gap:
    """A key obstore cannot parse (``key``) and what its listing could not see: the
    keys after ``after`` (the last one listed before the failing page; None: from the
    start of the prefix) and before ``resume`` (the first string after ``key`` that
    obstore can name, where the listing went on)."""

    after: str | None
    key: str
    resume: str


@dataclass(frozen=True)
class LostFolder:
    """A folder (``folder``, a prefix without its last ``/``; empty: the bucket)
    whose listing obstore failed on the key ``key``: none of its objects, nor its
    subfolders on the failing page, are listed."""

    folder: str
    key: str


def bad_key(exc: BaseException) -> str | None:
    """The key of obstore's ``InvalidPathError`` ``exc``, decoded from the ``path``
    field of its ``Debug source`` (Rust's ``escape_debug``: ``\\u{1}``, ``\\n``,
    ``\\"``, ``\\\\``), or None when the message has no such field."""
    text = str(exc)
    found = _DEBUG_PATH.search(text, text.find("Debug source:") + 1)
    if found is None:
        return None

    def unescape(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            return chr(int(m.group(2), 16))
        return _SIMPLE.get(m.group(1), m.group(0))

    return _ESCAPE.sub(unescape, found.group(1))


def _repairable(prefix: str) -> bool:
    """True when some string starting with ``prefix`` is a key obstore can name: no
    control character, no leading ``/``, no empty segment and no complete ``.`` or
    ``..`` segment in it (a last segment may still grow)."""
    if any(ord(c) in _CONTROL for c in prefix) or prefix.startswith("/"):
        return False
    return all(seg not in ("", ".", "..") for seg in prefix.split("/")[:-1])


def _complete(head: str) -> str:
    """The smallest key obstore can name that starts with the repairable ``head``:
    ``head`` itself, or ``head`` and a space when it ends in ``/`` or in a ``.`` or
    ``..`` segment (a space is the smallest character allowed)."""
    return head if key_problem(head) is None and head else head + " "


def _next_char(c: int) -> int | None:
    """The smallest code point after ``c`` that may stand in a key (no control, no
    surrogate), or None."""
    c += 1
    if c in _CONTROL:
        c = 0x20 if c < 0x20 else 0x80
    if 0xD800 <= c <= 0xDFFF:
        c = 0xE000
    return c if c <= 0x10FFFF else None


def next_nameable(key: str) -> str | None:
    """The smallest string after ``key`` (in code point order, which is the UTF-8 byte
    order the stores list in) that obstore can name, or None: every string strictly
    between the two is a name it cannot parse."""
    depth = len(key)
    while depth and not _repairable(key[:depth]):
        depth -= 1
    for i in range(depth, -1, -1):
        head = key[:i]
        c = _next_char(ord(key[i]) if i < len(key) else -1)
        while c is not None:
            char = chr(c)
            if char != "/" or (head and head.rsplit("/", 1)[-1] not in ("", ".", "..")):
                return _complete(head + char)
            c = _next_char(c)
    return None


def list_past_bad_keys(listing: Callable[[str | None], Any], exists: Callable[[str], int | None],
                       is_bad_listing: Callable[[BaseException], bool]
                       ) -> tuple[list[tuple[str, int]], list[Gap]]:
    """``(key, size)`` of every object ``listing(offset)`` yields (batches of obstore's
    ``ObjectMeta``), listing again past each key it fails on
    (:func:`next_nameable`; ``exists(name)``: the size of that object, or None), and
    the :class:`Gap` of each such key.  An error ``is_bad_listing`` does not accept,
    one whose key cannot be read back, or more than :data:`MAX_GAPS` gaps, propagate
    (the last as :class:`ValueError`)."""
    found: list[tuple[str, int]] = []
    gaps: list[Gap] = []
    offset: str | None = None
    while True:
        last = offset
        try:
            for batch in listing(offset):
                found += [(meta["path"], int(meta["size"])) for meta in batch]
                last = found[-1][0] if found else last
            return found, gaps
        except Exception as exc:
            key = bad_key(exc) if is_bad_listing(exc) else None
            resume = None if key is None else next_nameable(key)
            if key is None or resume is None or not key_problem(key) or (
                    offset is not None and key <= offset):
                raise
        if len(gaps) >= MAX_GAPS:
            raise ValueError(f"more than {MAX_GAPS} keys obstore cannot name")
        gaps.append(Gap(last, key, resume))
        size = exists(resume)
        if size is not None:
            found.append((resume, size))
        offset = resume


def list_by_folder(list_level: Callable[[str | None], Any], prefix: str | None,
                   is_bad_listing: Callable[[BaseException], bool]
                   ) -> tuple[list[tuple[str, int]], list[LostFolder]]:
    """``(key, size)`` of every object under ``prefix``, listed one folder at a time
    (``list_level(folder)``: obstore's ``list_with_delimiter`` result, its
    ``objects`` and ``common_prefixes``), and a :class:`LostFolder` for each folder
    whose listing failed on a key obstore cannot parse.  Any other error, an error
    whose key cannot be read back, or more than :data:`MAX_FOLDERS` folders,
    propagate (the last as :class:`ValueError`)."""
    found: list[tuple[str, int]] = []
    lost: list[LostFolder] = []
    todo = [prefix]
    listed = 0
    while todo:
        folder = todo.pop()
        listed += 1
        if listed > MAX_FOLDERS:
            raise ValueError(f"more than {MAX_FOLDERS} folders to list one by one")
        try:
            level = list_level(folder)
        except Exception as exc:
            key = bad_key(exc) if is_bad_listing(exc) else None
            if key is None or not key_problem(key):
                raise
            lost.append(LostFolder(folder or "", key))
            continue
        found += [(meta["path"], int(meta["size"])) for meta in level["objects"]]
        todo += sorted(level["common_prefixes"], reverse=True)
    return sorted(found), lost
