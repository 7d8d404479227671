"""The recall modules' text caches, let go once an audit's text work is done (issue 14).

Extraction, span types, survival indexes, stems and the faithfulness rules' bags and
sentences are memoized per text with ``functools.lru_cache`` (up to 65,536 entries
each): within one audit the same texts are read by several rules.  Once the rules have
run, the caches hold that trace's texts and what was computed from them, about 100 MB
on the 254 MB 10,000 x 2,000 text cell of the benchmark grid, until the process ends
or the next trace pushes them out.  :func:`forget` clears them; a later call computes
again what it needs, so results never depend on it.  Standard library only.
"""

from __future__ import annotations

import sys

__all__ = ["forget"]

_PREFIX = "compaction_audit.recall."


def forget() -> int:
    """Clear every ``lru_cache`` defined in a loaded ``compaction_audit.recall``
    module; returns how many entries were dropped."""
    dropped = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(_PREFIX) or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            info = getattr(value, "cache_info", None)
            if (clear is None or info is None
                    or getattr(value, "__module__", None) != name):
                continue
            dropped += info().currsize
            clear()
    return dropped
