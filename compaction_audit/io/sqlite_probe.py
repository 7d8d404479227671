"""Load an untrusted SQLite file's schema in a bounded helper process first.

SQLite parses the whole schema (every table, index, view and trigger, with the
``-wal`` file's newer pages) when a connection first reads it, before any statement a
progress handler could stop, in time and memory that grow faster than the schema:
160,000 views took 72 s in the main file (adv86 #2) and 50 s from the ``-wal`` file,
which the byte count of :mod:`~compaction_audit.io.sqlite_schema` does not read
(adv87 #1); ten triggers of long bodies took 2 GB (adv87 #5).  :func:`schema_cost`
opens the file as the reader will (the same URI) in a helper that may use at most
:data:`PROBE_CPU_SECONDS` of CPU and :data:`PROBE_MEMORY` of address space, and
reads the schema's row count and SQL bytes; :class:`~compaction_audit.io.
sqlite_store.BoundedStore` refuses a file whose helper ran out, or whose schema is
past its bounds.  About 30 ms for a real store.
"""

from __future__ import annotations

import os
import subprocess

from compaction_audit.runtime.childproc import prelude, python_command

PROBE_CPU_SECONDS = 5
"""CPU seconds the helper may spend opening the file and reading its schema (a real
opencode store: a few milliseconds)."""

PROBE_MEMORY = 512 << 20
"""Address space (bytes) the helper may use (a real store's schema: under a megabyte
on top of the interpreter's 30 MB)."""

MAX_SCHEMA_SQL = 4 << 20
"""Bytes of SQL a store's schema may hold (a real opencode store: about 10 KB)."""

PROBE_WALL_SECONDS = 60
"""Wall seconds after which the helper is stopped (a loaded machine; CPU is the bound)."""

_PROBE = (
    "import resource, sqlite3, sys\n"
    "for which, value in ((resource.RLIMIT_CPU, {cpu}), (resource.RLIMIT_AS, {memory})):\n"
    "    hard = resource.getrlimit(which)[1]\n"
    "    value = value if hard == resource.RLIM_INFINITY else min(value, hard)\n"
    "    resource.setrlimit(which, (value, hard))\n"
    "try:\n"
    "    db = sqlite3.connect(sys.argv[1], uri=True)\n"
    "    n, size = db.execute('SELECT count(*), coalesce(sum(length(sql)), 0) '\n"
    "                         'FROM sqlite_master').fetchone()\n"
    "except sqlite3.Error:\n"
    "    print('error')\n"
    "else:\n"
    "    print(n, size)\n"
)
"""The helper: SQLite's own errors are left to the reader's connection, which words
them (``error``); anything else (a signal for the CPU limit, a failed allocation) ends
it without a line."""


def schema_cost(uri: str) -> tuple[int, int] | None:
    """(schema rows, bytes of their SQL) of the SQLite file at ``uri`` (the URI the
    reader connects with), read by a bounded helper; ``(0, 0)`` when SQLite refuses
    the file (the reader's connection then says why) or no helper could start (the
    reader's own bounds stay); None when the helper ran out of CPU, memory or time."""
    program = prelude(os.getpid()) + _PROBE.format(cpu=PROBE_CPU_SECONDS,
                                                   memory=PROBE_MEMORY)
    try:
        done = subprocess.run([*python_command("-S"), "-c", program, uri],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=PROBE_WALL_SECONDS,
                              check=False)
    except subprocess.TimeoutExpired:
        return None
    except OSError:
        return 0, 0
    words = done.stdout.split()
    if done.returncode == 0 and words == [b"error"]:
        return 0, 0
    if done.returncode != 0 or len(words) != 2 or not all(w.isdigit() for w in words):
        return None
    return int(words[0]), int(words[1])

