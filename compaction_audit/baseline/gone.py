"""Baseline entries of traces that no longer exist (usertest67 #7: a trace deleted
from a fleet, or expired by a store's lifecycle rule, kept its entries forever:
``audit --baseline`` never named them and ``baseline prune`` kept them).

An entry's trace is *gone* when all of these hold:

- it lies under a folder or an object storage prefix the command was given (a
  ``PATH`` that is a directory, a URL ending in ``/``, or a bucket named alone): a
  trace the command was not asked about says nothing, since a baseline of a whole
  fleet is applied to one day's traces; the working directory given as ``.`` is no
  such folder (a baseline made in another directory would have every entry gone);
- this run did not audit it, nor find it unreadable;
- it does not exist: no file at its path (relative to the working directory, as the
  baseline names it; a folder that cannot be read says nothing), or the store answers
  that there is no such object; a name the baseline could not write as it is (past
  1,024 characters, or with an undecodable byte) is never known missing.  A store
  that does not answer, or any other error, leaves the trace as existing: an entry
  is never dropped for a store's hiccup.

An excluded trace (``--exclude``) and a file the folder search does not pick up
(a ``.json`` named alone when the baseline was made) exist, so their entries are
kept.  Cost: one ``lstat`` or one HEAD request per distinct trace of such entries
(:data:`HEAD_THREADS` at once).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence

from compaction_audit.baseline.entry import Entry
from compaction_audit.report.model import Report

GONE_NAMED = 3
"""Traces a line about gone entries names (the rest are counted)."""


def _under(paths: Sequence[str]) -> list[str]:
    """The trace keys of the folders and prefixes among ``paths``, each ending in
    ``/``; not the working directory itself (``.``): every relative key of the
    baseline is under it, looked up where the command runs, and a baseline made in
    another directory had all its entries "gone" (adv132 #3, adv133 #2: from a folder
    below, a trace of the same name there even matched one of the baseline's)."""
    from compaction_audit.baseline import trace_key
    from compaction_audit.io.remote import is_url

    out = []
    for p in paths:
        if is_url(p):
            if p.endswith("/"):
                out.append(p)
            elif p.count("/") == 2:  # a bucket named alone: its root
                out.append(p + "/")
        elif os.path.isdir(p) and (key := trace_key(p)) != ".":
            out.append(key.rstrip("/") + "/")
    return out


HEAD_THREADS = 16
"""Objects asked about at once (a month of a fleet's nightly traces expired: a HEAD
each, about 20-50 ms on S3, would take a minute one after another)."""


_CLIPPED_RE = re.compile(r"\.\.\.\[\d+ chars, sha256 [0-9a-f]{12}\]$")
"""How :func:`~compaction_audit.report.safe.clip` ends a name it shortened."""


def _as_written(trace: str) -> bool:
    """Whether a baseline's trace name can be the path itself: not clipped (a name past
    :data:`~compaction_audit.report.safe.MAX_TEXT` characters keeps a prefix and a
    hash), nor with an escape written for an undecodable byte (``\\xff``; adv132 #2:
    such a trace, audited in the same run, was looked up by its escaped name and called
    deleted)."""
    return not _CLIPPED_RE.search(trace) and "\\" not in trace


def _no_file(path: str) -> bool:
    """True only when nothing is at ``path``: a folder that cannot be read says nothing
    of what is in it (adv132 #5)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):  # no permission, a name the system refuses: unknown
        return False
    return False


def _missing(traces: list[str]) -> list[str]:
    """The ``traces`` known not to exist (see the module docstring), in their order;
    ``-`` (standard input) is no file, and a name not as written (:func:`_as_written`)
    is never known missing."""
    from concurrent.futures import ThreadPoolExecutor

    from compaction_audit.io.remote import is_url, missing_object

    traces = [t for t in traces if t != "-" and _as_written(t)]
    urls = [t for t in traces if is_url(t)]
    gone = {t for t in traces if not is_url(t) and _no_file(t)}
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
    from compaction_audit.baseline import key_forms

    prefixes = tuple(_under(paths))
    if not prefixes:
        return {}
    audited = [s.path for s in report.sessions]
    audited += [p for e in report.errors for p in (e.path, e.trace) if p]
    seen = {k for path in audited for k in key_forms(path)}  # as the baseline writes them
    counts = Counter(e.trace for e in baseline.values()
                     if e.trace not in seen and e.trace.startswith(prefixes))
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
