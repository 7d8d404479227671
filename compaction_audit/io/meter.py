"""A process-wide count of the rounds the readers have applied, for progress display.

:class:`~compaction_audit.io.native.SessionBuilder` adds one per round record it applies
(native logs, the parallel reader's main process, and every adapter, whose records go
through the same builder): one integer addition per round, no work per item.  The
progress bar of a single large trace (:mod:`compaction_audit.commands.progress`, issue
13 section 2) samples it from its polling thread and shows the rounds done since it
started.  Standard library only, so that the bar's module can import it cheaply.
"""

from __future__ import annotations

_applied = [0]


def count_round() -> None:
    """Count one applied round (called by the builder)."""
    _applied[0] += 1


def rounds_applied() -> int:
    """Rounds applied by every reader in this process so far (monotonic; read it
    before and after to count a span of reading)."""
    return _applied[0]
