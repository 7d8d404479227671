"""The files a reader opens besides the one it is given (issue 11, item 3).

Some adapters read a second file next to the trace: Cline pairs a session file with
its messages or compaction file (and a manifest leads to its messages file), Gemini
CLI takes token counts from ``telemetry.log`` beside the recording, and SQLite reads
an opencode store's ``-wal``, ``-shm`` and ``-journal`` files.  Those are inputs too:
:func:`~compaction_audit.outfile.refuse_same_file` refuses an ``-o`` that is one of
them.  Each adapter with such files has ``companions(path) -> list[str]``; an adapter
that opens another file must add itself to :data:`COMPANIONS`.
"""

from __future__ import annotations

import importlib

from compaction_audit.errors import LogError
from compaction_audit.io.lines import reads_once

COMPANIONS = {"cline": "cline", "gemini-cli": "gemini_cli", "opencode": "opencode"}
"""The module of ``compaction_audit.io`` whose ``companions(path)`` lists the files its
adapter reads besides ``path``, for each format that has such files; imported only for
a trace of that format (issue 14, item 4: the Cline and opencode adapters, with
``sqlite3``, are not loaded for an audit of another format written with ``-o``)."""


def companion_files(path: str, source: str | None = None) -> list[str]:
    """The files other than ``path`` that reading it as ``source`` (None: the detected
    format) opens; ``[]`` for standard input, a pipe, a device, a URL, a file that
    cannot be read or detected, or a format that reads only ``path``.  Detection reads
    the first lines (the whole of a JSON document)."""
    if path == "-" or "://" in path or reads_once(path):
        return []
    if source is None:
        from compaction_audit.io.detect import detect_format

        try:
            source = detect_format(path, checked=True)
        except (LogError, OSError, ValueError):
            return []
    module = COMPANIONS.get(source)
    if module is None:
        return []
    found: list[str] = importlib.import_module(f"compaction_audit.io.{module}").companions(path)
    return found
