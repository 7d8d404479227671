"""The files a reader opens besides the one it is given (issue 11, item 3).

Some adapters read a second file next to the trace: Cline pairs a session file with
its messages or compaction file (and a manifest leads to its messages file), Gemini
CLI takes token counts from ``telemetry.log`` beside the recording, and SQLite reads
an opencode store's ``-wal``, ``-shm`` and ``-journal`` files.  Those are inputs too:
:func:`~compaction_audit.outfile.refuse_same_file` refuses an ``-o`` that is one of
them.  Each adapter with such files has ``companions(path) -> list[str]``; an adapter
that opens another file must add itself to :data:`COMPANIONS` (and, when its files
are found by what the input holds, to :func:`possible_companions`).
"""

from __future__ import annotations

import importlib
import os

from compaction_audit.errors import LogError
from compaction_audit.io.lines import reads_once

COMPANIONS = {"cline": "cline_pair", "gemini-cli": "gemini_cli", "opencode": "opencode"}
"""The module of ``compaction_audit.io`` whose ``companions(path)`` lists the files its
adapter reads besides ``path``, for each format that has such files; imported only for
a trace of that format (issue 14, item 4: the Cline and opencode adapters, with
``sqlite3``, are not loaded for an audit of another format written with ``-o``)."""


IN_PROCESS_BYTES = 1 << 20
"""Largest file (bytes on disk, not compressed) whose format is detected in the
command's own process under an address-space limit; a larger one is looked up in a
child (:func:`companion_lookup`).  Decoding it takes at most some 40 bytes per byte
(a Python dict of 184 bytes for each ``{"":`` of five; ``[{},{},...]`` measured 33)."""

CLINE_SUFFIXES = (".messages.json", ".compaction.json")
"""The names of the files a Cline session file is paired with (:mod:`compaction_audit.io.cline`)."""


def companion_files(path: str, source: str | None = None) -> list[str]:
    """The files other than ``path`` that reading it as ``source`` (None: the detected
    format) opens; ``[]`` for standard input, a pipe, a device, a URL, a file that
    cannot be read or detected, or a format that reads only ``path``.  Detection reads
    the first lines (the whole of a JSON document).  Under an address-space limit, or
    for an input read once, what :func:`companion_lookup` gives (the files that may be
    companions when they could not be looked up)."""
    return companion_lookup(path, source)[0]


def companion_lookup(path: str, source: str | None = None) -> tuple[list[str], bool]:
    """:func:`companion_files` of ``path`` and whether they are known.

    Without an address-space limit they are looked up here.  Under one, decoding a
    whole JSON document in the command's own process faulted (orjson, SIGSEGV, no
    line) or ended the command for want of memory before any trace was reported
    (adv23 F5, adv24 F2: ``[{},{},...]`` takes 33 bytes per byte, over any per-byte
    check made before it).  So a file over :data:`IN_PROCESS_BYTES` or compressed,
    and any Cline file (whose pair, found by its content, may be of any size), is
    looked up in a spawned child that has the whole limit
    (:func:`compaction_audit.runtime.isolated.call_in_child`).  When that child dies (out of
    memory: the trace is then its audit's out of memory line too), the companions are
    not known: ``(possible_companions(path), False)``.

    An input read once (a FIFO, ``/dev/fd/N``, a path under ``/proc``:
    :func:`~compaction_audit.io.lines.reads_once`) cannot be looked at before it is
    audited, yet the readers still open files beside it (a FIFO recording's
    ``telemetry.log``, the messages file of a FIFO compaction file): ``-o`` replaced
    them (adv30 F1).  For it: ``(named_companions(path), False)``, found without
    opening it."""
    if path == "-" or "://" in path or os.path.isdir(path):  # a folder: no companions
        return [], True  # (a --baseline '.' raised ValueError in the Cline look-up)
    if reads_once(path):
        return named_companions(path), False
    from compaction_audit.runtime import addrspace

    if addrspace.address_space_limit() is None:
        return _lookup(path, source), True
    if source is None and _small(path):
        try:
            source = _detect(path)
        except (LogError, OSError, ValueError):
            return [], True
        except MemoryError:
            raise
        except Exception:  # a bug in detecting this trace: the audit names it for this
            return possible_companions(path), True  # trace; the others run (adv30 F2)
    if source is not None and source != "cline":  # by name or header: nothing to decode
        return _lookup(path, source), True
    key = _identity(path, source)
    if key is not None and key in _LOOKED_UP:
        return _LOOKED_UP[key]
    from compaction_audit.runtime import isolated

    try:
        got = isolated.call_in_child(_lookup, path, source), True
    except isolated.ChildDied:
        got = possible_companions(path), False
    if key is not None:
        _LOOKED_UP[key] = got
    return got


_LOOKED_UP: dict[tuple[object, ...], tuple[list[str], bool]] = {}
"""What a child looked up, by :func:`_identity`: the output, standard output and
standard error are each checked against the same inputs, a child each time."""


def _identity(path: str, source: str | None) -> tuple[object, ...] | None:
    """``path`` (absolute), ``source`` and the file's device, inode, size and time of
    change; None when it cannot be looked at."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return os.path.abspath(path), source, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _detect(path: str) -> str:
    from compaction_audit.io.detect import detect_format

    return detect_format(path)


def _lookup(path: str, source: str | None) -> list[str]:
    """:func:`companion_files` of ``path``, looked up in this process."""
    if source is None:
        try:
            source = _detect(path)
        except (LogError, OSError, ValueError):
            return []
        except MemoryError:
            raise
        except Exception:  # a bug in detecting this trace: the audit names it for this
            return possible_companions(path)  # trace; the others still run (adv30 F2)
    module = COMPANIONS.get(source)
    if module is None:
        return []
    found: list[str] = importlib.import_module(f"compaction_audit.io.{module}").companions(path)
    return found


def _small(path: str) -> bool:
    """True for a regular file of at most :data:`IN_PROCESS_BYTES`, not compressed (by
    its name or its first bytes: the gzip and zstd magic), or one that cannot be
    opened (nothing to decode)."""
    if path.lower().endswith((".gz", ".zst")):
        return False
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > IN_PROCESS_BYTES:
                return False
            head = fh.read(4)
    except OSError:
        return True
    return not (head[:2] == b"\x1f\x8b" or head == b"\x28\xb5\x2f\xfd"
                or (len(head) == 4 and head[1:] == b"\x2a\x4d\x18"))


def possible_companions(path: str) -> list[str]:
    """The files that may be companions of ``path`` whatever it holds, found without
    decoding it (its companions could not be looked up under the limit): Gemini CLI's
    ``telemetry.log`` and an SQLite store's ``-wal``, ``-shm`` and ``-journal`` files
    beside it (their names), every ``*.messages.json`` and ``*.compaction.json`` in
    its folder and in the folder of the file it names (a symbolic link), where the
    Cline adapter looks for a pair, and, for a manifest of at most
    :data:`IN_PROCESS_BYTES`, the messages file it names.  A larger manifest that
    names a file of another name is not followed: it is read first, so under this
    limit the adapter reads nothing past it."""
    from compaction_audit.io import cline_pair, opencode

    out = [*named_companions(path), *opencode.companions(path)]
    if _small(path):
        out += cline_pair.manifest_names(path)
    return list(dict.fromkeys(out))


def named_companions(path: str) -> list[str]:
    """The files that may be companions of ``path`` by their names alone, found
    without opening ``path`` (a FIFO would block, and what it holds is read once, by
    the audit): Gemini CLI's ``telemetry.log`` beside it, and every ``*.messages.json``
    and ``*.compaction.json`` in its folder and in the folder of the file it names (a
    symbolic link, ``/dev/fd/N`` of a file), where the Cline adapter looks for a pair
    and, for a manifest read once, for its messages file
    (:func:`compaction_audit.io.cline.records` follows such a manifest only to a
    ``*.messages.json``).  An SQLite store cannot be read once: no ``-wal``."""
    from compaction_audit.io import gemini_cli

    out = list(gemini_cli.companions(path))
    for folder in dict.fromkeys(os.path.dirname(p) for p in (path, os.path.realpath(path))):
        try:
            with os.scandir(folder or ".") as entries:
                out += [os.path.join(folder, entry.name) for entry in entries
                        if entry.name.endswith(CLINE_SUFFIXES)]
        except OSError:
            continue
    return list(dict.fromkeys(out))
