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
kept.  Cost: one ``lstat`` or one HEAD request per distinct trace of such entries
(:data:`HEAD_THREADS` at once).
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


HEAD_THREADS = 16
"""Objects asked about at once (a month of a fleet's nightly traces expired: a HEAD
each, about 20-50 ms on S3, would take a minute one after another)."""


def _missing(traces: list[str]) -> list[str]:
    """The ``traces`` known not to exist (see the module docstring), in their order;
    ``-`` (standard input) is no file."""
    from concurrent.futures import ThreadPoolExecutor

    from compaction_audit.io.remote import is_url, missing_object

    urls = [t for t in traces if is_url(t)]
    gone = {t for t in traces if t != "-" and not is_url(t) and not os.path.lexists(t)}
    if urls:
        with ThreadPoolExecutor(min(HEAD_THREADS, len(urls))) as pool:
            gone.update(t for t, m in zip(urls, pool.map(missing_object, urls), strict=True)
                        if m)
    return [t for t in traces if t in gone]


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
    return {t: counts[t] for t in _missing(sorted(counts))}


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
