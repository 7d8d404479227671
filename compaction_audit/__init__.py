"""compaction-audit: audit the compaction logs of long-running LLM agents.

The data flows one way: bytes -> typed tables (:mod:`compaction_audit.io`) ->
per-round series (:mod:`compaction_audit.series`) -> findings
(:mod:`compaction_audit.engine`) -> one report model (:mod:`compaction_audit.report`)
-> renderers.  The core never prints.

The log writer (``LogWriter``, ``Span``, ``Summary``, ``write_log``) is imported on
first use, so that importing the package (every command does) costs nothing.

When this import is the start of the command itself (``python -m compaction_audit``, or
the ``compaction-audit`` console script), a Ctrl-C from here on writes the one stop
line and exits 130 (:func:`compaction_audit.runtime.stopline.stop_at_start`): nothing else of
ours could catch it before the command's ``run`` starts, and ``runpy`` would print a
traceback (issue 11).  The handler is in place before anything else is imported.  A
program that imports the package keeps its own SIGINT handling.
"""

from __future__ import annotations

import os
import sys


def _started_as_the_command() -> bool:
    """True when this import is the first step of ``python -m compaction_audit`` (runpy
    imports the package while ``sys.argv[0]`` is still ``-m``; the interpreter's own
    arguments end with the module's name) or of the console script (``argv[0]``)."""
    argv = sys.argv
    if not argv:
        return False
    if argv[0] != "-m":
        return os.path.basename(argv[0]).startswith("compaction-audit")
    head = sys.orig_argv[:len(sys.orig_argv) - len(argv) + 1]
    module = head[-1] if head else ""
    if module.startswith("-"):  # -mcompaction_audit, -Bmcompaction_audit
        module = module[module.index("m") + 1:]
    return module in ("compaction_audit", "compaction_audit.__main__")


def _stop_at_start(signum: int, frame: Any) -> None:
    from compaction_audit.runtime import stopline

    stopline.stop_at_start(signum, frame)


if _started_as_the_command():
    import _signal  # built in: the handler is in place before any import can be cut short

    _signal.signal(_signal.SIGINT, _stop_at_start)

from typing import TYPE_CHECKING, Any  # noqa: E402 - after the handler, see above

__version__ = "0.1.0"

if TYPE_CHECKING:
    from compaction_audit.io.writer import LogWriter, Span, Summary, write_log

__all__ = ["LogWriter", "Span", "Summary", "__version__", "write_log"]

_WRITER_NAMES = frozenset({"LogWriter", "Span", "Summary", "write_log"})


def __getattr__(name: str) -> Any:
    """The log writer's names, imported from :mod:`compaction_audit.io.writer` on
    first use."""
    if name in _WRITER_NAMES:
        from compaction_audit.io import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'compaction_audit' has no attribute {name!r}")
