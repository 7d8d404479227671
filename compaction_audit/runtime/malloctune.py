"""glibc's allocator set for a large audit: one arena, a fixed mmap threshold (issue 14).

The audit of a large trace frees much of what it allocates stage by stage (reading,
the rebuilt cosine, the rules, the recall analysis), from several threads: the
embedding model's loader, the reading helpers' drain thread, the text helper's reader
and writer.  With glibc's defaults each such thread may get its own malloc arena, and
memory freed in one arena serves no allocation of another; and the mmap threshold
rises to the size of each large block freed (up to 32 MB), after which blocks of that
size come from the arenas' heaps, which return little to the system.  On the
benchmark grid's 254 MB 10,000 x 2,000 full-text cell the audit process peaked at
509-514 MiB with the defaults and 471-478 MiB with both set (``run.py --step audit``,
three runs each, alternated; each setting alone gave 474-491 MiB), 2x the file being
485 MiB (docs/performance-log.md).

:func:`tune` therefore asks glibc (``mallopt``) for at most one arena
(``M_ARENA_MAX``) and a fixed mmap threshold of 1 MiB (``M_MMAP_THRESHOLD``: blocks
of 1 MiB and more are mapped and unmapped on their own, and the threshold no longer
moves).  Polars allocates with its own allocator (jemalloc) and is not affected.
The settings are process-wide and stay set (glibc has no call that gives the
defaults back); they change where memory comes from, never a result.  Elsewhere
than on glibc (macOS, musl, Windows) :func:`tune` does nothing.
"""

from __future__ import annotations

import os
import sys

LARGE_BYTES = 32 << 20
"""Traces at least this large are audited with :func:`tune` applied (the size from
which the reader decodes in helper processes, :data:`compaction_audit.io.parallel.
PARALLEL_MIN_BYTES`); a smaller audit's peak is its imports."""

_M_ARENA_MAX = -8
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 20
"""Blocks of this many bytes or more are mapped on their own (glibc's default starts
at 128 KiB and rises with each large block freed)."""

_done: list[bool] = []


def tune() -> bool:
    """Set one arena and the fixed mmap threshold (see the module docstring), once per
    process; True when glibc took both settings (now or before), False elsewhere."""
    if _done:
        return _done[0]
    ok = False
    if sys.platform.startswith("linux"):
        try:
            glibc = os.confstr("CS_GNU_LIBC_VERSION")
        except (ValueError, OSError):
            glibc = None
        if glibc:
            import ctypes

            try:
                mallopt = ctypes.CDLL(None).mallopt  # int mallopt(int, int): ctypes' default
                ok = (mallopt(_M_ARENA_MAX, 1) == 1) & (
                    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1)
            except (OSError, AttributeError):
                ok = False
    _done.append(ok)
    return ok


def tune_for(path: str) -> bool:
    """:func:`tune` when ``path`` is a file of :data:`LARGE_BYTES` or more; False
    otherwise (and for a path that is not a file: standard input, a URL)."""
    try:
        large = os.path.getsize(path) >= LARGE_BYTES
    except (OSError, ValueError, TypeError):
        return False
    return tune() if large else False
