"""Object storage URLs on the command line: prefixes and glob patterns over keys.

The rules of :mod:`compaction_audit.discover`, with keys for paths and ``/`` for the
directory separator (issue 14, item 5):

- ``s3://bucket/runs/`` (a key ending in ``/``, or no key): a prefix, searched like a
  directory: every object under it ending in a trace suffix, skipping "hidden
  directories" (a segment below the prefix starting with ``.``), which are named on
  standard error when they hold traces, as a directory search names its own.
- ``s3://bucket/runs/**/*.jsonl`` (``*``, ``?`` or ``[`` in the key): a pattern.  The
  store lists the literal prefix before the first wildcard segment once; the keys
  are matched segment by segment as :func:`~compaction_audit.discover.expand_pattern`
  matches paths: ``*`` within a segment, ``**`` zero or more segments, hidden names
  only by a segment starting with ``.``; a key the whole pattern matches is kept
  whatever its suffix, a key under a matched "directory" is kept when it is a trace,
  and so is the object whose key is the pattern itself, as a file named by the
  pattern is (usertest74 F1: ``s3://b/runs/q[1].jsonl``, a key as the listing printed
  it, matched nothing).
- Anything else names one object, kept as given (the reader reports it when missing,
  with a hint when it looks like a prefix).

Keys come sorted, each once, with their sizes (from the listing, for the order in
which a fleet audits them).  A selected key that obstore cannot read as itself (a
control character, a ``.``, ``..`` or empty segment, a leading ``/``:
:func:`~compaction_audit.io.object_keys.key_problem`) is an unreadable trace, named
(escaped when printed) and counted, exit 2, while the others are audited (issue 11,
class 6, adv10 F8); ``.`` and ``..`` segments are no hidden names, so they are
selected and reported, not skipped without a word.  A ``gs://`` listing that had to
skip past such a key (:mod:`compaction_audit.io.key_gaps`) reports the key, and the
range it could not list, as one unreadable trace whatever its suffix.  A prefix or
pattern that yields nothing (and skipped no key) is a
:class:`UsageError`, as for a directory; a store that cannot be listed is one too
(one line, exit 2: unreachable storage, no such bucket, no permission).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from compaction_audit.discover import has_suffix, hidden_phrase, is_other_name, others_phrase
from compaction_audit.discover_cline import manifest_name
from compaction_audit.errors import LogError, UsageError
from compaction_audit.io.key_gaps import Gap, LostFolder
from compaction_audit.io.object_keys import key_problem, unnameable
from compaction_audit.io.remote import is_url, list_objects, split_url

_GLOB_CHARS = frozenset("*?[")


def _has_magic(part: str) -> bool:
    return any(c in _GLOB_CHARS for c in part)


def is_prefix(url: str) -> bool:
    """True when ``url`` names a prefix to search (its key is empty or ends in ``/``)
    rather than one object or a pattern."""
    key = split_url(url)[2]
    return not _has_magic(key) and (key == "" or key.endswith("/"))


def is_url_pattern(url: str) -> bool:
    """True when the key of ``url`` holds a wildcard."""
    return _has_magic(split_url(url)[2])


def names_one_object(url: str) -> bool:
    """True when ``url`` names one object (neither a prefix nor a pattern)."""
    return is_url(url) and not is_prefix(url) and not is_url_pattern(url)


def _hidden(segment: str) -> bool:
    """A hidden name (``.git``): starts with ``.``, but is no ``.`` or ``..`` segment
    (a key may hold those literally; they are selected, then reported as keys obstore
    cannot read, never skipped without a word)."""
    return segment.startswith(".") and segment not in (".", "..")


def _ends(pattern: list[str], segments: list[str]) -> set[int]:
    """Every ``k`` such that ``pattern`` matches ``segments[:k]`` exactly."""
    ends: set[int] = set()
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(pattern):
            ends.add(j)
            continue
        head = pattern[i]
        if head == "**":
            todo.append((i + 1, j))  # zero segments
            if j < len(segments) and not _hidden(segments[j]):
                todo.append((i, j + 1))
        elif j < len(segments) and fnmatch.fnmatchcase(segments[j], head) and not (
                _hidden(segments[j]) and not head.startswith(".")):
            todo.append((i + 1, j + 1))
    return ends


def _is_trace_below(segments: list[str], start: int, suffixes: tuple[str, ...]) -> bool:
    """A trace file under the "directory" ``segments[:start]``, through no hidden
    directory."""
    return has_suffix(segments[-1], suffixes) and not any(
        _hidden(s) for s in segments[start:-1])


def matches(pattern: str, key: str, suffixes: tuple[str, ...]) -> bool:
    """True when the key pattern ``pattern`` selects ``key`` (see the module
    docstring): the whole key matches, or the key is a trace under a matched prefix."""
    segments = key.split("/")
    ends = _ends([p for p in pattern.split("/") if p], segments)
    return len(segments) in ends or any(
        0 < k < len(segments) and _is_trace_below(segments, k, suffixes) for k in ends)


@dataclass
class Objects:
    """What a URL selects: ``found``, ``(url, size)`` of the objects to audit (size -1:
    not known), and ``unreadable``, one :class:`LogError` per selected key that obstore
    cannot read as itself (:func:`~compaction_audit.io.object_keys.key_problem`)."""

    found: list[tuple[str, int]] = field(default_factory=list)
    unreadable: list[LogError] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    """Objects of other trace names (``.json``, ``.db``...) under a prefix: named as not
    searched, as a directory search names such files."""
    hidden: list[str] = field(default_factory=list)
    """The hidden "directories" (``s3://b/runs/.agent``) holding traces the prefix or
    pattern passed over, each once: said as a directory search says them (adv27 F4: a
    failing trace there passed without a word, where a local folder names them)."""


def _hidden_folders(root: str, listed: list[tuple[str, int]], start: int,
                    selected: list[tuple[str, int]], suffixes: tuple[str, ...]) -> list[str]:
    """The first hidden folder (segment ``start`` or later, the last excluded) of each
    listed trace-named key that was not selected, sorted, each once."""
    chosen = {u for u, _ in selected}
    out: set[str] = set()
    for u, _size in listed:
        if u in chosen or not has_suffix(u, suffixes):
            continue
        segments = u[len(root):].split("/")
        j = next((j for j in range(start, len(segments) - 1) if _hidden(segments[j])), None)
        if j is not None:
            out.add(root + "/".join(segments[:j + 1]))
    return sorted(out)


def _others(root: str, listed: list[tuple[str, int]], start: int,
            suffixes: tuple[str, ...]) -> list[str]:
    """The objects under the prefix (through no hidden folder) a directory search
    names as not searched (:func:`~compaction_audit.discover.is_other_name`: an
    opencode export, a Gemini CLI session ``.json``...), a Cline manifest beside its
    messages file left out as a folder search leaves it (usertest67 #5: a prefix named
    none of them, where a local folder names each)."""
    names: dict[str, set[str]] = {}
    for url, _ in listed:
        folder, _, name = url.rpartition("/")
        names.setdefault(folder, set()).add(name)
    out = []
    for url, _ in listed:
        segments = url[len(root):].split("/")
        folder, _, name = url.rpartition("/")
        if (name and not has_suffix(name, suffixes) and is_other_name(name)
                and not manifest_name(name, names[folder])
                and not any(_hidden(s) for s in segments[start:-1])):
            out.append(url)
    return out


def _selected_as(url: str, size: int) -> str | None:
    """The name a listed object is selected by: ``url`` itself, or less its trailing
    ``/`` when it holds data (``runs/m.jsonl/``: an object, which obstore cannot read;
    selected like ``runs/m.jsonl``, then reported under its real key); None for an
    empty folder marker (``runs/``, ``runs/m.jsonl/`` of 0 bytes, as S3 consoles
    create: a "directory", no trace)."""
    if not url.endswith("/"):
        return url
    return url.rstrip("/") if size > 0 else None


TWICE = ("cannot open: listed twice: obstore strips a leading or trailing '/' from "
         "another key, which it names so (that object is not read)")
"""Why a name obstore listed twice is unreadable once (``gs://``, ``az://``)."""


def _sort(url: str, selected: list[tuple[str, int]]) -> Objects:
    """``selected`` sorted by URL, the keys obstore cannot read split off, and a URL
    listed twice (obstore stripped another key into it) audited once and reported
    once as unreadable: the object behind the stripped key cannot be read."""
    root_len = len("{}://{}/".format(*split_url(url)))
    out = Objects()
    seen: set[str] = set()
    for u, size in sorted(selected):
        problem = key_problem(u[root_len:])
        if problem:
            out.unreadable.append(LogError(u, 0, f"cannot open: {unnameable(problem)}"))
        elif u in seen:
            out.unreadable.append(LogError(u, 0, TWICE))
        else:
            seen.add(u)
            out.found.append((u, size))
    return out


_EOL_NOTE = ("; its name is as obstore's XML parser read it, which turns a CR or CR LF "
             "into LF: the stored key may hold \\r or \\r\\n where \\n is shown")
"""Said of a key read back from a failed listing (XML, where end-of-line handling, XML
1.0 section 2.11, makes every CR and CR LF an LF before obstore sees the key) that
shows an LF: it may name no key of the store (adv16b F4)."""


def _with_gaps(url: str, objects: Objects, gaps: list[Gap | LostFolder]) -> Objects:
    """``objects`` with one unreadable trace per key a ``gs://`` or ``az://`` listing
    failed on (:mod:`compaction_audit.io.key_gaps`; each replacing its key's own
    entry), whatever the key's suffix: the keys that listing could not see are
    unknown, and may be traces.  A key with an LF says that it may have been a CR
    (:data:`_EOL_NOTE`)."""
    if not gaps:
        return objects
    root = "{}://{}/".format(*split_url(url))
    shown = {root + gap.key for gap in gaps}
    errors = [e for e in objects.unreadable if e.path not in shown]
    for gap in gaps:
        problem = key_problem(gap.key) or "a name obstore cannot parse"
        if isinstance(gap, LostFolder):
            unseen = (f"listing of the folder {gap.folder + '/'!r} failed on it, so no key "
                      "in that folder was listed")
        else:
            since = f"after {gap.after!r} and " if gap.after is not None else ""
            unseen = f"listing failed on it, so no key {since}before {gap.resume!r} was listed"
        errors.append(LogError(root + gap.key, 0, f"cannot open: {unnameable(problem)}; "
                               f"obstore's {unseen}{_EOL_NOTE if chr(10) in gap.key else ''}"))
    return Objects(objects.found, sorted(errors, key=lambda e: e.path))


def expand_url(url: str, suffixes: tuple[str, ...]) -> Objects:
    """The objects a prefix or pattern URL selects, sorted by URL; a plain object URL
    is returned as is (size -1: not known; the reader checks its key).  A selected key
    obstore cannot read is an unreadable trace, never a reason to audit nothing.
    Raises :class:`UsageError` when the store cannot be listed or nothing is
    selected."""
    scheme, bucket, key = split_url(url)
    root = f"{scheme}://{bucket}/"
    gaps: list[Gap | LostFolder] = []
    if is_prefix(url):
        listed = list(list_objects(url, gaps))
        start = len(key.split("/")) - 1
        selected = [(u, size) for u, size in listed
                    if (name := _selected_as(u, size)) is not None
                    and _is_trace_below(name[len(root):].split("/"), start, suffixes)]
        hidden = _hidden_folders(root, listed, start, selected, suffixes)
        others = _others(root, listed, start, suffixes)
        if not selected and not gaps:
            said = "; ".join([*([hidden_phrase(hidden)] if hidden else []),
                              *([others_phrase(others)] if others else [])])
            raise UsageError(f"no trace files ({', '.join('*' + s for s in suffixes)}) "
                             f"under prefix {url!r}{f' ({said})' if said else ''}")
        out = _with_gaps(url, _sort(url, selected), gaps)
        out.hidden, out.others = hidden, others
        return out
    if not is_url_pattern(url):
        return Objects([(url, -1)])
    parts = key.split("/")
    literal = next(i for i, p in enumerate(parts) if _has_magic(p))
    prefix = "".join(p + "/" for p in parts[:literal])
    listed = list(list_objects(root + prefix, gaps))
    selected = [(u, size) for u, size in listed
                if (name := _selected_as(u, size)) is not None
                and (name[len(root):] == key or matches(key, name[len(root):], suffixes))]
    hidden = _hidden_folders(root, listed, literal, selected, suffixes)
    if not selected and not gaps:
        said = f" ({hidden_phrase(hidden)})" if hidden else ""
        raise UsageError(f"no trace file matches {url!r}{said}")
    out = _with_gaps(url, _sort(url, selected), gaps)
    named = root + key  # the object the pattern names first, as the local rule has it
    out.found.sort(key=lambda found: found[0] != named)
    out.hidden = hidden
    return out
