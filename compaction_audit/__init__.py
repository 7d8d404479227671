"""compaction-audit: audit the compaction logs of long-running LLM agents.

The data flows one way: bytes -> typed tables (:mod:`compaction_audit.io`) ->
per-round series (:mod:`compaction_audit.series`) -> findings
(:mod:`compaction_audit.engine`) -> one report model (:mod:`compaction_audit.report`)
-> renderers.  The core never prints.

The log writer (``LogWriter``, ``Span``, ``Summary``, ``write_log``) is imported on
first use, so that importing the package (every command does) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
