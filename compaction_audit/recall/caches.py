"""The recall modules' text caches, let go once an audit's text work is done (issue 14).

Extraction, span types, survival indexes, stems and the faithfulness rules' bags and
sentences are memoized per text with ``functools.lru_cache`` (up to 65,536 entries
each): within one audit the same texts are read by several rules.  Once the rules have
run, the caches hold that trace's texts and what was computed from them, about 100 MB
on the 254 MB 10,000 x 2,000 text cell of the benchmark grid, until the process ends
or the next trace pushes them out.  :func:`forget` clears them; a later call computes
again what it needs, so results never depend on it.  Standard library only.

The engine clears them after each rule on a session with more than
:data:`KEEP_CACHES_CHARS` characters of item text, and once after the last rule on a
smaller one (:func:`keeps`): there the caches hold a few MB, and clearing them between
rules made the next rules extract and index the same texts again (about 60 ms of the
80 ms that clearing cost on the 2.8 MB Claude Code transcript of
``benchmarks/startup.py``, 0.47 M characters; issue 14, item 4).
"""

from __future__ import annotations

import sys

__all__ = ["KEEP_CACHES_CHARS", "forget", "keeps"]

_PREFIX = "compaction_audit.recall."

KEEP_CACHES_CHARS = 2_000_000
"""Characters of item text (the session's ``items.text``, summed) up to which the
caches are kept from one rule to the next (:func:`keeps`)."""


def keeps(text_chars: int) -> bool:
    """True when a session with ``text_chars`` characters of item text keeps the caches
    from one rule to the next (at most :data:`KEEP_CACHES_CHARS`)."""
    return text_chars <= KEEP_CACHES_CHARS


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
