"""Deterministic work counts for the linear-work tests (issue 11, class 5): Python
line events in one module's file while a piece of work runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any


def lines_run(module: ModuleType, work: Callable[[], Any]) -> tuple[Any, int]:
    """``work()`` and the number of line events (sys.settrace) in ``module``'s file
    while it ran: a count of the adapter's own Python work, comprehensions included
    (each pass of a loop is a line event)."""
    return lines_run_in((module,), work)


def lines_run_in(modules: tuple[ModuleType, ...], work: Callable[[], Any]
                 ) -> tuple[Any, int]:
    """:func:`lines_run` counting the line events in the files of all ``modules``."""
    targets = {module.__file__ for module in modules}
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in targets else None

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        out = work()
    finally:
        sys.settrace(before)
    return out, count
