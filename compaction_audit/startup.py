"""Start-up of the command: the cyclic garbage collector stays out of the way while
modules load (issue 14, item 4).

Loading the auditor creates a few hundred thousand objects (modules, classes,
functions, Polars' and typer's tables) that live until the process ends.  The
collector counts them as new allocations and runs while they load: a full collection
in the middle of the imports of ``audit`` took 72 ms and freed nothing (measured on
the 2.8 MB Claude Code transcript of ``benchmarks/startup.py``).  :func:`loading`
pauses it around a block of imports, then moves everything alive into the permanent
generation (``gc.freeze``), so later collections do not scan it again.

Only in the command's own process (:func:`as_command`, called by
:func:`compaction_audit.__main__.run`): a program or test that calls the commands in
its own process keeps its collector as it is (a freeze there would keep its garbage
forever).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_command: list[bool] = []


def as_command() -> None:
    """This process is the ``compaction-audit`` command: :func:`loading` acts."""
    _command.append(True)


@contextmanager
def loading() -> Iterator[None]:
    """Around imports: the collector paused, then what is alive frozen and the collector
    resumed (module docstring).  Does nothing outside the command, or when the collector
    is already off."""
    if not _command or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
