"""Baseline entries of traces that no longer exist (usertest67 #7: a trace deleted
from a fleet, or expired by a store's lifecycle rule, kept its entries forever:
``audit --baseline`` never named them and ``baseline prune`` kept them).

An entry's trace is *gone* when all of these hold:

- it lies under a folder or an object storage prefix the command was given (a
  ``PATH`` that is a directory, a URL ending in ``/``, or a bucket named alone): a
  trace the command was not asked about says nothing, since a baseline of a whole
  fleet is applied to one day's traces;
- this run did not audit it, nor find it unreadable;
- it does not exist: no file at its path (relative to the working directory, as the
  baseline names it), or the store answers that there is no such object.  A store
  that does not answer, or any other error, leaves the trace as existing: an entry
  is never dropped for a store's hiccup.

An excluded trace (``--exclude``) and a file the folder search does not pick up
(a ``.json`` named alone when the baseline was made) exist, so their entries are
kept.  Cost: one ``lstat`` or one HEAD request per distinct trace of such entries.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence

from compaction_audit.baseline.entry import Entry
from compaction_audit.report.model import Report

GONE_NAMED = 3
"""Traces a line about gone entries names (the rest are counted)."""


def _under(paths: Sequence[str]) -> list[str]:
    """The trace keys of the folders and prefixes among ``paths``, each ending in
    ``/`` (the working directory: ``""``, every relative key under it)."""
    from compaction_audit.baseline import trace_key
    from compaction_audit.io.remote import is_url

    out = []
    for p in paths:
        if is_url(p):
            if p.endswith("/"):
                out.append(p)
            elif p.count("/") == 2:  # a bucket named alone: its root
                out.append(p + "/")
        elif os.path.isdir(p):
            key = trace_key(p)
            out.append("" if key == "." else key.rstrip("/") + "/")
    return out


def _is_under(trace: str, prefixes: Iterable[str]) -> bool:
    for pre in prefixes:
        if pre == "":
            if not (trace.startswith(("/", "../")) or "://" in trace):
                return True
        elif trace.startswith(pre):
            return True
    return False


def _missing(trace: str) -> bool:
    """True when ``trace`` is known not to exist (see the module docstring)."""
    from compaction_audit.io.remote import is_url, missing_object

    return missing_object(trace) if is_url(trace) else not os.path.lexists(trace)


def gone_traces(baseline: dict[str, Entry], report: Report,
                paths: Sequence[str]) -> dict[str, int]:
    """``{trace key: entries}`` of the ``baseline`` entries whose trace is gone (the
    module docstring), for the run ``report`` of ``paths`` (the command's ``PATH``
    arguments); empty when no path is a folder or prefix."""
    from compaction_audit.baseline import trace_key

    prefixes = _under(paths)
    if not prefixes:
        return {}
    seen = {trace_key(s.path) for s in report.sessions}
    seen.update(trace_key(p) for e in report.errors for p in (e.path, e.trace) if p)
    counts = Counter(e.trace for e in baseline.values()
                     if e.trace not in seen and _is_under(e.trace, prefixes))
    return {t: n for t, n in sorted(counts.items()) if _missing(t)}


def gone_line(gone: dict[str, int], source: str) -> str | None:
    """The line ``audit --baseline`` says about ``gone`` (:func:`gone_traces`), None
    when there is none: how many entries, of how many traces, the first
    :data:`GONE_NAMED` of them by name."""
    if not gone:
        return None
    from compaction_audit.report.safe import printable

    names = ", ".join(printable(t) for t in list(gone)[:GONE_NAMED])
    more = len(gone) - GONE_NAMED
    named = names + (f" and {more:,} more" if more > 0 else "")
    return (f"baseline {printable(source)}: {sum(gone.values()):,} entries of "
            f"{len(gone):,} trace(s) that no longer exist ({named}): 'baseline prune' "
            "drops them")
