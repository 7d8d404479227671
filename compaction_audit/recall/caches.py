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
from collections.abc import Callable
from types import ModuleType
from typing import Any

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
    module; returns how many entries were dropped.

    The engine calls it after each rule, or once per trace (:func:`keeps`): the recall
    modules and their caches are listed once (a module's functions are fixed at
    import) and only non-empty caches are cleared, so a call costs a look at each
    cache.  Walking ``sys.modules`` and every module's namespace each time cost about
    1.5 ms a call, 25 ms of CPU per trace in the command line (issue 14, fleet audits).
    """
    dropped = 0
    for name, module in _recall_modules():
        for info, clear in _caches_of(name, module):
            size = info().currsize
            if size:
                dropped += size
                clear()
    return dropped


_SEEN: list[Any] = [-1, []]
"""``[len(sys.modules), [(name, module), ...]]`` when the recall modules were last
listed."""


def _recall_modules() -> list[tuple[str, ModuleType]]:
    """The loaded ``compaction_audit.recall`` modules, listed again only when the
    number of loaded modules changed (the command line has about 2,000 to walk).  A
    module swapped for another under the same count is missed until the next import:
    its caches then stay full a little longer, no result changes."""
    if _SEEN[0] != len(sys.modules):
        _SEEN[1] = [(name, module) for name, module in list(sys.modules.items())
                    if name.startswith(_PREFIX) and module is not None]
        _SEEN[0] = len(sys.modules)
    return list(_SEEN[1])


_FOUND: dict[str, tuple[object, list[tuple[Callable[[], Any], Callable[[], None]]]]] = {}
"""Per module name: the module object searched and its caches' ``(cache_info,
cache_clear)`` pairs."""


def _caches_of(name: str, module: ModuleType
               ) -> list[tuple[Callable[[], Any], Callable[[], None]]]:
    """The ``(cache_info, cache_clear)`` of each ``lru_cache`` that ``module``
    (imported as ``name``) defines, found on the first call for that module object."""
    known = _FOUND.get(name)
    if known is not None and known[0] is module:
        return known[1]
    found = []
    for value in list(vars(module).values()):
        clear = getattr(value, "cache_clear", None)
        info = getattr(value, "cache_info", None)
        if (clear is None or info is None
                or getattr(value, "__module__", None) != name):
            continue
        found.append((info, clear))
    _FOUND[name] = (module, found)
    return found
