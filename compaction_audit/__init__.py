"""compaction-audit: audit the compaction logs of long-running LLM agents.

The data flows one way: bytes -> typed tables (:mod:`compaction_audit.io`) ->
per-round series (:mod:`compaction_audit.series`) -> findings
(:mod:`compaction_audit.engine`) -> one report model (:mod:`compaction_audit.report`)
-> renderers.  The core never prints.
"""

__version__ = "0.1.0"

from compaction_audit.io.writer import LogWriter, Span, Summary, write_log

__all__ = ["LogWriter", "Span", "Summary", "__version__", "write_log"]
