"""Pause Python's cyclic garbage collector around allocation-heavy work."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector (while records are decoded and checked, and
    while the engine audits a session).

    Decoding allocates millions of containers (a pair list per retained item per
    round) and keeps many alive, so the collector would run every few hundred
    allocations and re-scan the young generation, then the old ones: about a third of
    the reading time; the recall analysis and the findings build hundreds of thousands
    of small objects over a large heap in the same way.  None of this forms reference
    cycles, so reference counting frees it all the same; the collector is restored
    (if it was on) at the end.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
