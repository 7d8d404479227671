"""Standard output and standard error as files: what the console script checks
before any command runs (kept small: it loads at every start, ``--version`` too).

:func:`stderr_named` finds a standard error that is a file the command reads, so
that nothing is appended onto it (issue 11, class 3; adv23, left open: ``audit
t.jsonl 2>> t.jsonl`` appended an error line onto the trace).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Iterator

CONFIG_NAMES = ("compaction-audit.toml", "pyproject.toml")
"""The configuration files the search looks at in each folder
(:func:`compaction_audit.config.search_config`)."""


def stderr_named(args: Iterable[str]) -> str | None:
    """The first of the command-line ``args`` (``--opt=FILE`` read as ``FILE``; not
    the file ``-o`` writes: :func:`read_args`), or
    of the configuration files the search looks at (``compaction-audit.toml`` and
    ``pyproject.toml`` in the working directory and above:
    :func:`compaction_audit.config.search_config`), that is the regular file standard
    error is; None when there is none.  When there is one, standard error is first
    pointed at standard output (:func:`stderr_to_stdout`).  The console script
    checks it before any command runs: a usage error, or a configuration error, was
    appended onto the trace or the config named with ``2>>`` (adv23, left open)."""
    err = fd_stat(2)
    if err is None:
        return None
    same = (err.st_dev, err.st_ino)
    names = [arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
             for arg in read_args(args)]
    names += config_candidates()
    found = {(st.st_dev, st.st_ino): name for name in reversed(names)
             if name and name != "-" and (st := path_stat(name)) is not None}
    stdin = fd_stat(0)  # '- < t.jsonl 2>> t.jsonl'
    if stdin is not None:
        found.setdefault((stdin.st_dev, stdin.st_ino), "- (standard input)")
    searched = None if same in found else (_under_searched(2, names)
                                           or _companion_of(same, names))
    if same not in found and searched is None:
        return None
    out = fd_stat(1)  # '&>> t.jsonl': standard output is the same file, or another input
    stderr_to_stdout(out is None or ((out.st_dev, out.st_ino) not in found
                                     and (out.st_dev, out.st_ino) != same
                                     and _under_searched(1, names) is None))
    return found.get(same) or searched


OUTPUT_OPTIONS = ("-o", "--output")
"""The options that name a file the command writes (``-o``): not read."""


def read_args(args: Iterable[str]) -> list[str]:
    """``args`` without the value of an output option (``-o FILE``, ``-oFILE``,
    ``--output FILE``, ``--output=FILE``): the report is written there, nothing is
    read from it (adv84: ``audit -o /dev/stdout LOG > out.txt 2>&1`` was refused as a
    standard error the command reads, and the refusal went nowhere: exit 2, no word)."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in OUTPUT_OPTIONS:
            skip = True
        elif not (arg.startswith("--output=")
                  or (arg.startswith("-o") and not arg.startswith("--"))):
            out.append(arg)
    return out


def _companion_of(same: tuple[int, int], names: list[str]) -> str | None:
    """The file (device, inode ``same``) when it may be read along with a file the
    command line names: a Cline compaction or messages file beside it, Gemini CLI's
    ``telemetry.log``, an SQLite store's ``-wal``
    (:func:`compaction_audit.io.companions.possible_companions`, by names only); None
    otherwise.  Looked up only when standard error is a regular file nothing else
    matched (adv78 #5: ``--fail-on bogus 2>> s.compaction.json`` appended the usage
    line onto the compaction file, and every later audit of the session failed)."""
    from compaction_audit.io.companions import named_companions, possible_companions

    for name in [*names, *_beside_searched(names)]:
        if not name or name == "-" or name.startswith("-") or os.path.isdir(name) \
                or not os.path.exists(name):
            continue
        try:  # a FIFO is read once, by the audit: its companions by their names only
            others = (possible_companions(name) if os.path.isfile(name)
                      else named_companions(name))
        except (OSError, ValueError):  # a name it cannot look beside: nothing to find
            continue
        for other in others:
            st = path_stat(other)
            if st is not None and (st.st_dev, st.st_ino) == same:
                return other
    return None


BESIDE_MAX = 512
"""Most files of standard error's folder looked beside when that folder is searched."""


def _beside_searched(names: list[str]) -> list[str]:
    """The files in standard error's folder (at most :data:`BESIDE_MAX`) when that
    folder lies under a folder the command line names or a pattern's folder: the
    search may audit any of them, and a file read along with one sits beside it
    (adv79: ``audit 'cl/*.json' 2>> cl/msgs.log``, the messages file a manifest names,
    and ``audit g 2>> g/telemetry.log`` appended the usage line).  Empty elsewhere."""
    try:
        target = os.readlink("/proc/self/fd/2")
    except OSError:
        return []
    here = os.path.dirname(target)
    if not os.path.isabs(target) or not any(
            (here + os.sep).startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep)
            for folder in _searched_folders(names)):
        return []
    try:
        with os.scandir(here) as entries:
            return [e.path for _, e in zip(range(BESIDE_MAX), entries, strict=False)]
    except OSError:
        return []


def _searched_folders(names: list[str]) -> list[str]:
    """The folders the command line names, and each pattern's folder (``d/**/*.jsonl``:
    ``d``)."""
    out = []
    for name in names:
        folder = _pattern_folder(name)
        if folder is not None:
            out.append(folder)
        elif name and not name.startswith("-") and os.path.isdir(name):
            out.append(name)
    return out


def _pattern_folder(name: str) -> str | None:
    """The folder before a pattern's first wildcard (``d/**/*.jsonl``: ``d``); None
    for a name that is no pattern: one without a wildcard, or a file that exists
    (``a[1].jsonl`` is audited as named, as :func:`compaction_audit.discover.is_pattern`
    says: adv86 #6, ``2> err.json`` beside it was refused as a file the command reads)."""
    magic = min((i for i in (name.find(c) for c in "*?[") if i >= 0), default=-1)
    if magic >= 0 and os.path.exists(name):
        return None
    return (os.path.dirname(name[:magic]) or ".") if magic >= 0 else None


TRACE_LIKE = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json")
"""Names a folder search or pattern may audit (``discover.TRACE_SUFFIXES``, and a
Cline ``.json``), for :func:`_under_searched`."""


def _under_searched(fd: int, names: list[str]) -> str | None:
    """The path of the file descriptor ``fd`` writes to, when it has a trace's name
    and lies under a folder the command line names, or under a pattern's folder
    (``d/**/*.jsonl``: ``d``): a trace the search will find (adv25 N1: a note of the
    search, or a usage error, was appended onto ``d/t.jsonl`` by ``audit d 2>>
    d/t.jsonl`` before the command looked at its traces).  None elsewhere, or where
    ``/proc/self/fd`` cannot say."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    if not os.path.isabs(target) or not target.lower().endswith(TRACE_LIKE):
        return None
    for name in names:
        folder = _pattern_folder(name)
        if folder is None and name and os.path.isdir(name) and _searched_name(target):
            folder = name
        if folder is None:
            continue
        if target.startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep):
            return target
    return None


def _searched_name(path: str) -> bool:
    """True when a folder search reads the file ``path`` (a name of
    ``discover.TRACE_SUFFIXES``, a Cline compaction file, a manifest beside its messages
    file); False for another ``.json``, which the search names as not searched (adv33
    B7: ``audit . 2> err.json`` was refused as writing onto a file the command reads,
    and ``> report.json 2> errors.json`` exited 2 without a word)."""
    from compaction_audit.discover import COMPACTION_SUFFIX, TRACE_SUFFIXES

    low = path.lower()
    return low.endswith((*TRACE_SUFFIXES, COMPACTION_SUFFIX)) or (
        low.endswith(".json") and os.path.exists(path[:-5] + ".messages.json"))


def config_candidates() -> list[str]:
    """Every path the configuration search looks at (:data:`CONFIG_NAMES` in the
    working directory and each folder above it, nearest first), whether it exists or
    not: each is read when it does, a ``pyproject.toml`` without our table too."""
    try:
        here = os.getcwd()
    except OSError:  # a working directory removed: no configuration is found there
        return []
    return [os.path.join(folder, n) for folder in (here, *_parents(here))
            for n in CONFIG_NAMES]


def _parents(path: str) -> Iterator[str]:
    """The folders above ``path``, nearest first, up to the root."""
    while (parent := os.path.dirname(path)) != path:
        yield parent
        path = parent


def fd_stat(fd: int) -> os.stat_result | None:
    """The status of file descriptor ``fd`` when it is a regular file, else None
    (a terminal, pipe or device, closed, or not to be looked at)."""
    try:
        st = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def stderr_to_stdout(stdout_safe: bool = True) -> None:
    """Point file descriptor 2 at ``/dev/null`` and ``sys.stderr`` at standard
    output: the refusal (and nothing else) reaches the user, nothing the input.  When
    standard output is an input too (``&>> t.jsonl``, ``>> t.jsonl 2>&1``: not
    ``stdout_safe``), it goes to ``/dev/null`` as well, and the refusal nowhere: the
    exit status (2) is all that is left to say it (adv24 F8: the refusal was appended
    onto the trace, and onto a ``pyproject.toml``, which then broke every command)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        if not stdout_safe:
            os.dup2(null, 1)
    finally:
        os.close(null)
    sys.stderr = sys.stdout


def path_stat(path: str) -> os.stat_result | None:
    """``os.stat(path)`` (links followed), None when it cannot be looked at."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def reads_stdin(path: str) -> bool:
    """True when ``path`` reads the standard input stream: ``-``, or a name of it
    (``/dev/stdin``, ``/dev/fd/0``) while it is a pipe or a terminal, which can be read
    once (a file redirected to it can be opened again by its other names: adv86 #7)."""
    if path == "-":
        return True
    try:
        st, named = os.fstat(sys.stdin.fileno()), os.stat(path)
    except (OSError, ValueError, AttributeError):  # no stdin, not a descriptor, no file
        return False
    return (not stat.S_ISREG(st.st_mode)
            and (named.st_dev, named.st_ino) == (st.st_dev, st.st_ino))


def same_stream(first: str, second: str) -> bool:
    """True when ``first`` and ``second`` name one file that is not a regular file or a
    folder (a FIFO, a ``/dev/fd/N`` pipe): it can be read once, so reading it for both
    would hang on a FIFO, or find it empty (adv87 #4: ``diff ff ff`` waited for ever)."""
    try:
        a, b = os.stat(first), os.stat(second)
    except (OSError, ValueError):
        return False
    return ((a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
            and not stat.S_ISREG(a.st_mode) and not stat.S_ISDIR(a.st_mode))
