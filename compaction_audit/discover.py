"""Turn the command line's paths, directories and glob patterns into trace files.

- ``-`` is standard input, kept as is.
- A directory is searched recursively for :data:`TRACE_SUFFIXES`, skipping hidden
  directories (``.git``, ``.venv``); its traces come sorted by path.
- A pattern with ``*``, ``?`` or ``[`` is expanded with :func:`glob.glob` (``**``
  recursive); directories it matches are searched as above, files are kept whatever
  their suffix (the user chose them).
- Anything else is kept as a file path, even when it does not exist: the reader then
  reports it as an unreadable trace, counted with the others.

Paths are returned as given (joined with what was found under them, normalized with
``/``) in argument order, each once.  A directory or pattern that yields no trace is a
:class:`UsageError`: a CI gate that audits nothing must not pass silently.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from compaction_audit.errors import UsageError

TRACE_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")
"""File name endings that directory search picks up."""

_GLOB_CHARS = frozenset("*?[")


def is_pattern(arg: str) -> bool:
    """True when ``arg`` is a glob pattern rather than a plain path."""
    return any(c in _GLOB_CHARS for c in arg) and not Path(arg).exists()


def is_trace_name(name: str) -> bool:
    """True when a file name ends with one of :data:`TRACE_SUFFIXES`."""
    return name.endswith(TRACE_SUFFIXES)


def _normal(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def search_dir(directory: str) -> list[str]:
    """Every trace file under ``directory`` (recursively, hidden directories skipped),
    sorted by path; paths start with ``directory`` as given."""
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(root, f) for f in files if is_trace_name(f)]
    return sorted(_normal(p) for p in found)


def _expand(arg: str) -> list[str]:
    if arg == "-":
        return ["-"]
    if os.path.isdir(arg):
        traces = search_dir(arg)
        if not traces:
            raise UsageError(f"no trace files ({', '.join('*' + s for s in TRACE_SUFFIXES)}) "
                             f"under directory {arg!r}")
        return traces
    if is_pattern(arg):
        traces = []
        for match in sorted(glob.glob(arg, recursive=True)):
            traces += search_dir(match) if os.path.isdir(match) else [_normal(match)]
        if not traces:
            raise UsageError(f"no trace file matches {arg!r}")
        return traces
    return [_normal(arg)]


def discover(args: Sequence[str]) -> list[str]:
    """The trace files named by ``args`` (files, directories, glob patterns), in
    argument order without repeats.  Raises :class:`UsageError` when ``args`` is empty
    or a directory or pattern yields nothing."""
    if not args:
        raise UsageError("no trace given: name files, directories or glob patterns")
    return list(_unique(t for arg in args for t in _expand(arg)))


def _unique(items: Iterable[str]) -> Iterable[str]:
    seen: set[str] = set()
    for item in items:
        if item not in seen:
            seen.add(item)
            yield item


def names_one_file(args: Sequence[str]) -> bool:
    """True when ``args`` is exactly one file path (not a directory or a pattern): the
    report shape for one named trace (the JSON session object) depends on how the trace
    was named, not on how many a directory happens to hold."""
    return len(args) == 1 and not os.path.isdir(args[0]) and not is_pattern(args[0])
