"""The one line a stopped run writes (issue 11, item 7), and the SIGINT handler that
writes it as the signal arrives.

Standard library only and nothing else: the console script installs the handler
before the command line loads (:mod:`compaction_audit.__main__`), so this import must
cost nothing at start-up.  :mod:`compaction_audit.procs` re-exports these names.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from types import FrameType

_said: list[str] = []
"""The stop line already written (:func:`say_stopped` writes it once)."""


def say_stopped(signum: int = signal.SIGINT) -> None:
    """Write ``compaction-audit: interrupted`` (SIGINT) or ``... terminated by signal
    N`` to stderr, once per process, whichever handler sees the signal first."""
    if _said:
        return
    what = "interrupted" if signum == signal.SIGINT else f"terminated by signal {signum}"
    _said.append(what)
    with contextlib.suppress(Exception):
        sys.stderr.write(f"compaction-audit: {what}\n")
        sys.stderr.flush()


def _on_sigint(_signum: int, _frame: FrameType | None) -> None:
    say_stopped()
    raise KeyboardInterrupt


def announce_interrupts() -> None:
    """From now on a Ctrl-C writes its one line as it arrives, then unwinds as usual:
    typer turns a ``KeyboardInterrupt`` raised while it parses the arguments into a
    silent exit 130, before any handler of ours runs (issue 11, item 7)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
