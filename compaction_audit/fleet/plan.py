"""What each trace of a fleet asks of the cluster, and in which order they go.

One trace is one task, whole: the auditor needs a trace's full series in one process
(folds refer to any earlier round), so a trace is never split across workers.  The
memory a worker asks for is estimated from the trace's size in bytes
(:func:`memory_needed`); the traces go largest first (:func:`largest_first`), so the
longest task starts first and the small ones fill the gaps at the end.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

START_MEMORY = 256 << 20
"""Bytes a worker needs before reading anything: the interpreter, Polars and the
auditor (about 95 MB measured at start-up, issue 14) and the Ray worker itself."""

BASE_MEMORY = 512 << 20
"""The least a worker asks for: room for :data:`START_MEMORY` and a trace of 32 MB."""

MEMORY_PER_BYTE = 8
"""Peak memory per byte of (decompressed) trace.  docs/performance.md measures 1.13x
the file at 1 GB and 2.5x at 100 MB on the benchmark's shape; issue 14 measured up to
24x on delta-mode logs.  8x covers the common shapes; a worker that runs out anyway
is reported as an unreadable trace (its cause named), not a crash of the run."""

COMPRESSION_GUESS = 10
"""Expansion assumed for a ``.gz``/``.zst`` trace, whose decompressed size is not
known before reading (real logs compress 5-50x; docs/security.md)."""


def memory_needed(path: str, size: int) -> int:
    """Bytes of memory to ask for auditing ``path`` of ``size`` bytes (as stored):
    :data:`START_MEMORY` plus :data:`MEMORY_PER_BYTE` per byte, times
    :data:`COMPRESSION_GUESS` for a compressed trace, at least :data:`BASE_MEMORY`.
    ``size`` < 0 (unknown) counts 0."""
    expanded = max(size, 0) * (COMPRESSION_GUESS if path.lower().endswith((".gz", ".zst")) else 1)
    return max(BASE_MEMORY, START_MEMORY + MEMORY_PER_BYTE * expanded)


def local_size(path: str) -> int:
    """Bytes of a local file (-1 when it cannot be stat'ed: the reader reports it)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return -1


def largest_first(paths: Sequence[str], sizes: Mapping[str, int]) -> list[int]:
    """Indexes of ``paths`` by decreasing size (``sizes[path]``, missing: -1), ties in
    the order given."""
    return sorted(range(len(paths)), key=lambda i: -sizes.get(paths[i], -1))
