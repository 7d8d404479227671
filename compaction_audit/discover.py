"""Turn the command line's paths, directories and glob patterns into trace files.

- ``-`` is standard input, kept as is.
- A directory is searched recursively for :data:`TRACE_SUFFIXES`, skipping hidden
  directories (``.git``, ``.venv``) and not following symlinks to directories; its
  traces come sorted by path; the files of :data:`OTHER_SUFFIXES` it meets are named,
  not audited (:attr:`Discovery.not_searched`).  A Cline ``*.compaction.json`` found
  there is a trace of its own when no ``*.messages.json`` found with it reads it
  (:data:`COMPACTION_SUFFIX`).
- A pattern with ``*``, ``?`` or ``[`` is expanded like :func:`glob.glob` (``**``
  recursive, hidden names matched only by a pattern starting with ``.``), except that
  ``**`` never descends into a symlink to a directory (a link loop cannot make it run
  forever or audit one file many times); directories it matches are searched as above,
  files are kept whatever their suffix (the user chose them).
- ``s3://``, ``gs://`` and ``az://`` URLs name objects, prefixes (ending in ``/``)
  and patterns over keys in object storage: :mod:`compaction_audit.discover_urls`.
- Anything else is kept as a file path, even when it does not exist: the reader then
  reports it as an unreadable trace, counted with the others.  A FIFO or device named
  this way is read (``<(zcat log.gz)`` is a FIFO).

What a directory or pattern yields must be a regular file (a symlink to one is): a
FIFO, socket or device found there is skipped and reported (:attr:`Discovery.skipped`),
never opened (a FIFO would block forever).  A directory that cannot be listed is an
unreadable trace (:attr:`Discovery.unreadable`, exit 2), never skipped silently; so is
one a pattern looks a name up in that cannot be searched (``d/*/x.jsonl`` with ``d/b``
mode 700 of another owner: ``d/b: cannot search directory``), and a name whose lookup
fails for another reason than its absence (:func:`_look_up`).

``--exclude PATTERN`` leaves out what a directory or pattern yields when PATTERN
matches one component of its path (a file or directory name: ``labels``,
``*.items.jsonl``; below the directory searched, for a directory) or, when PATTERN
holds a ``/``, the whole path as found
(``corpus/labels/*``; ``*`` crosses ``/`` there, as in :func:`fnmatch.fnmatch`).  A
file named on the command line is audited whatever the patterns say.

Paths are returned as given (joined with what was found under them, normalized with
``/``) in argument order, each file once: two paths of the same file (a symlink, a hard
link, ``./a`` and ``a``) count once, by device and inode.  A directory or pattern that
yields nothing is a :class:`UsageError`: a CI gate that audits nothing must not pass
silently.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from compaction_audit.discover_cline import leads_to, manifest_name, unpaired
from compaction_audit.errors import LogError, UsageError

TRACE_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".messages.json")
"""File name endings that directory search picks up (``.messages.json``: a Cline
session folder, read with its ``.compaction.json``; issue 15)."""

COMPACTION_SUFFIX = ".compaction.json"
"""A Cline compaction file: a directory search audits it as its own trace when no
``.messages.json`` found with it reads it (:func:`~compaction_audit.io.cline_pair.
unpaired_compactions`; issue 11, class 2), so a folder whose compaction files fail
cannot pass."""

OTHER_SUFFIXES = (".json", ".db", ".ndjson")
"""Endings of traces the tool reads that a directory search does not take (an opencode
export or an OpenHands trajectory or a Gemini CLI session ``.json``, an opencode store
``.db``, JSON Lines named ``.ndjson``): each file so named is named on stderr instead
(:func:`others_phrase`), never opened, as a folder of JSON is mostly not traces
(``package.json``); adv31 N9.  So is a ``.jsonl`` or ``.ndjson`` under another
compression or suffix (``t.jsonl.xz``, ``t.jsonl.bz2``): a failing one beside a
passing trace was a plain exit 0 (adv33), and a ``.json`` or ``.db`` one
(``trajectory.json.gz``, ``session.messages.json.gz``, ``store.db.zst``: adv65 #1)."""
OTHER_INFIXES = (".jsonl.", ".ndjson.", ".json.", ".db.")

_GLOB_CHARS = frozenset("*?[")


@dataclass
class Discovery:
    """What :func:`find_traces` found: ``traces`` to audit (paths), ``skipped`` (one
    line per non-regular file left out, naming it and its kind) and ``unreadable``
    (a :class:`LogError` per directory that could not be listed, and per object key
    selected in storage that obstore cannot read)."""

    traces: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unreadable: list[LogError] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    """Bytes of each object found by listing object storage (URL -> size)."""
    links: list[str] = field(default_factory=list)
    """One line per symbolic link to a directory that a directory search met and did
    not follow (a failing trace behind one was never read, and the run passed without
    a word: adv22a, observation 4)."""
    hidden: list[str] = field(default_factory=list)
    """Hidden directories (a name starting with ``.``) a directory search or ``**``
    passed over, each once: ``.git``, but also ``.claude`` and ``.codex``, where agents
    keep their sessions (adv24 F4: a failing session there passed without a word)."""
    hidden_files: list[str] = field(default_factory=list)
    """Hidden trace files (a name starting with ``.``) a pattern would have matched but
    for the leading dot (``*.jsonl`` and ``.failing.jsonl``), each once: a directory
    search audits them, so ``audit '**/*.jsonl'`` passed where ``audit .`` failed,
    without a word (adv26 E2)."""
    not_searched: list[str] = field(default_factory=list)
    """Files a directory search met whose names end with one of :data:`OTHER_SUFFIXES`
    (not a Cline ``.messages.json`` or ``.compaction.json``), each once: traces of a
    format the tool reads that it did not audit (adv31 N9: a failing opencode export
    beside a passing ``.jsonl`` made ``audit DIR`` pass without a word)."""
    exclude: tuple[str, ...] = ()
    """``--exclude`` patterns (see the module docstring)."""
    excluded: int = 0
    """Traces a directory or pattern yielded that :attr:`exclude` left out."""
    excluded_by: dict[int, set[str]] = field(default_factory=dict)
    """For each :attr:`exclude` pattern (by index), the paths it left out."""
    exclude_used: set[int] = field(default_factory=set)
    """Indices of the :attr:`exclude` patterns that matched a path found (the others
    left nothing out: a mistyped pattern, said by the command: adv62)."""
    _skipped_set: set[str] = field(default_factory=set, repr=False)
    _hidden_set: set[str] = field(default_factory=set, repr=False)
    _other_set: set[str] = field(default_factory=set, repr=False)
    _unreadable_paths: set[str] = field(default_factory=set, repr=False)
    """``skipped`` and the paths of ``unreadable`` as sets: each is added once, in
    constant time (a list search per addition made a folder of k FIFOs or k
    unreadable directories cost k^2; issue 11, class 5)."""

    def skip(self, note: str) -> None:
        """Add ``note`` to ``skipped`` unless it is there ('dir/**' meets a file of dir
        twice)."""
        if note not in self._skipped_set:
            self._skipped_set.add(note)
            self.skipped.append(note)

    def pass_hidden(self, path: str) -> None:
        """Record the hidden directory ``path`` (or "directory" of object storage) as
        not searched (once)."""
        path = path if _is_url(path) else _normal(path)
        if path not in self._hidden_set:
            self._hidden_set.add(path)
            self.hidden.append(path)

    def pass_hidden_file(self, path: str) -> None:
        """Record the hidden file ``path`` as not matched (once), when its name is a
        trace's (``.gitignore`` is no news)."""
        name = os.path.basename(path)
        if not (is_trace_name(name) or name.endswith(COMPACTION_SUFFIX)):
            return
        path = _normal(path)
        if path not in self._hidden_set:
            self._hidden_set.add(path)
            self.hidden_files.append(path)

    def pass_other(self, path: str) -> None:
        """Record ``path`` (a name of :data:`OTHER_SUFFIXES`; a file or an object's URL)
        as not searched (once)."""
        path = path if _is_url(path) else _normal(path)
        if path not in self._other_set:
            self._other_set.add(path)
            self.not_searched.append(path)

    def add_unreadable(self, err: LogError) -> None:
        """Add ``err`` to ``unreadable`` unless an error for its path is there."""
        if err.path not in self._unreadable_paths:
            self._unreadable_paths.add(err.path)
            self.unreadable.append(err)

    def _listing_failed(self, exc: OSError) -> None:
        name = _normal(exc.filename if isinstance(exc.filename, str) else "?")
        self.add_unreadable(LogError(name, 0, f"cannot list directory: {exc.strerror or exc}"))


def excludes(pattern: str, path: str, under: str = "") -> bool:
    """Whether the ``--exclude`` ``pattern`` matches ``path`` (found under the directory
    ``under``, whose own names are not matched): with a ``/`` the whole path, else one
    of its names (see the module docstring)."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(path, pattern)
    below = (path[len(under):] if under.endswith("/") and path.startswith(under)  # a URL
             else os.path.relpath(path, under) if under else path)
    return any(fnmatch.fnmatchcase(n, pattern) for n in below.replace(os.sep, "/").split("/"))


def _url_under(url: str) -> str | None:
    """What an object storage ``url`` searches under, as a directory is: a prefix URL
    itself (ending in "/"; a bucket named alone, ``s3://b``, is ``s3://b/``), a
    pattern's part before the "/" ahead of its first glob character; None for one
    object named."""
    magic = [at for c in _GLOB_CHARS if (at := url.find(c)) >= 0]
    if not magic:  # a bucket named alone is its root (adv130 #5)
        return url if url.endswith("/") else url + "/" if url.count("/") == 2 else None
    return url[:url.rfind("/", 0, min(magic)) + 1]


def _kept(paths: list[str], found: Discovery, under: str = "") -> list[str]:
    """``paths`` without those :attr:`Discovery.exclude` matches (counted in
    :attr:`Discovery.excluded`); ``under``: the directory searched, whose own path's
    names are not matched (``--exclude tmp`` leaves the traces of ``/tmp/run/`` in)."""
    if not found.exclude:
        return paths
    def out(path: str) -> bool:
        hits = {i for i, p in enumerate(found.exclude) if excludes(p, path, under)}
        found.exclude_used |= hits
        for i in hits:
            found.excluded_by.setdefault(i, set()).add(_normal(path))
        return bool(hits)

    kept = [p for p in paths if not out(p)]
    found.excluded += len(paths) - len(kept)
    return kept


def _excluded(found: Discovery, since: int) -> str:
    n = found.excluded - since
    return f" ({n} left out by --exclude)" if n else ""


def is_pattern(arg: str) -> bool:
    """True when ``arg`` is a glob pattern rather than a plain path.  A path that cannot
    be stat'ed (a component over 255 bytes, a link loop) counts as not existing: the
    pattern then matches nothing, a clean usage error (``os.path.exists`` returns False
    where Python 3.11's ``Path.exists`` raises ``ENAMETOOLONG``)."""
    return any(c in _GLOB_CHARS for c in arg) and not os.path.exists(arg)


def has_suffix(name: str, suffixes: tuple[str, ...]) -> bool:
    """True when ``name`` ends with one of ``suffixes``; the JSON Lines ones
    (``.jsonl``, ``.jsonl.gz``, ``.jsonl.zst``) in any letter case.  A failing
    ``B.JSONL`` beside a passing trace was never audited and never named (adv29 F9);
    Cline's fixed names (``.messages.json``) are matched as written."""
    return name.endswith(suffixes) or name.lower().endswith(
        tuple(s for s in suffixes if s.startswith(".jsonl")))


def is_trace_name(name: str) -> bool:
    """True when a file name ends with one of :data:`TRACE_SUFFIXES` (the JSON Lines
    ones in any letter case: the rule of :func:`has_suffix`)."""
    return has_suffix(name, TRACE_SUFFIXES)


def _normal(path: str) -> str:
    """``path`` without ``.`` components and repeated slashes.  ``..`` is kept:
    ``link/..`` is the parent of the folder ``link`` names, which ``os.path.normpath``
    made the current folder, so another file than the one opened was audited and
    named (adv19a F5), and ``-o`` onto the trace was not refused (F6).  A file named
    ``-`` (``./-``, or a pattern's match) stays ``./-``: the bare ``-`` is standard
    input, which was read in its place, and ``-o ./-`` wrote over it (adv30 F4)."""
    path = path.replace(os.sep, "/")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    out = ("/" if path.startswith("/") else "") + "/".join(parts) or "."
    return "./-" if out == "-" else out  # a file named '-', never standard input


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(path: str) -> str | None:
    """None for a regular file (or a path that cannot be stat'ed: the reader reports
    it), else what it is (``a FIFO``)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _keep_regular(paths: Iterable[str], found: Discovery) -> list[str]:
    kept = []
    for path in paths:
        kind = _kind(path)
        if kind is None:
            kept.append(path)
        else:
            found.skip(f"{path}: skipped, {kind} (only regular files are searched; name "
                       "it explicitly to read it)")
    return kept


def _search(directory: str, found: Discovery, searched: set[str] | None = None) -> list[str]:
    """The regular trace files under ``directory``, sorted.  Iterative (a stack of
    directories, not :func:`os.walk`, which recurses once per level on Python 3.11:
    1,500 nested directories raised RecursionError; fresh pass F10), with os.walk's
    rules: hidden directories skipped, a symlink to a directory neither followed nor
    taken as a file, a directory that cannot be listed (or whose path grew past the
    OS's limit, ``ENAMETOOLONG``) reported in ``found.unreadable``.  Each directory
    listed is added to ``searched`` (normalized), when given."""
    files: list[str] = []
    compactions: list[str] = []
    stack = [directory]
    while stack:
        root = stack.pop()
        if searched is not None:
            searched.add(_normal(root))
        try:
            with os.scandir(root) as it:
                entries = list(it)
        except OSError as exc:
            found._listing_failed(exc)
            continue
        names = {e.name for e in entries}
        for e in entries:
            if _is_dir(e):
                if e.name.startswith("."):
                    found.pass_hidden(os.path.join(root, e.name))
                    continue
                if not e.is_symlink():
                    stack.append(os.path.join(root, e.name))
                else:
                    _not_followed(os.path.join(root, e.name), found)
            elif is_trace_name(e.name):
                files.append(os.path.join(root, e.name))
            elif e.name.endswith(COMPACTION_SUFFIX):
                compactions.append(os.path.join(root, e.name))
            elif is_other_name(e.name) and not manifest_name(e.name, names):
                found.pass_other(os.path.join(root, e.name))
    traces = _keep_regular(sorted(_normal(p) for p in files), found)
    if compactions:
        alone = _keep_regular(sorted(_normal(p) for p in compactions), found)
        messages = [t for t in traces if t.endswith(".messages.json")]
        traces = sorted([*traces, *unpaired(messages, alone)])
    return traces


def _not_followed(path: str, found: Discovery) -> None:
    """Say that the symbolic link to a directory ``path`` is not followed."""
    found.links.append(f"{_normal(path)}: a symbolic link to a directory, not followed "
                       "(name it to audit what it holds)")


def is_other_name(name: str) -> bool:
    """True for a name of :data:`OTHER_SUFFIXES` (or :data:`OTHER_INFIXES`) that a
    folder search names as not searched."""
    low = name.lower()
    return low.endswith(OTHER_SUFFIXES) or any(i in low for i in OTHER_INFIXES)


def _is_dir(entry: os.DirEntry[str], follow_symlinks: bool = True) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow_symlinks)
    except OSError:
        return False


def search_dir(directory: str) -> list[str]:
    """Every regular trace file under ``directory`` (recursively, hidden directories
    skipped, symlinked directories not followed), sorted by path; paths start with
    ``directory`` as given.  (:func:`find_traces` also reports what was left out.)"""
    return _search(directory, Discovery())


def _has_magic(part: str) -> bool:
    return any(c in _GLOB_CHARS for c in part)


def _entries(base: str, found: Discovery) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(base) as it:
            return sorted(it, key=lambda e: e.name)
    except NotADirectoryError:
        return []
    except OSError as exc:
        found._listing_failed(exc)
        return []


def _match(base: str, parts: list[str], found: Discovery, out: list[str]) -> None:
    """Append to ``out`` the paths under ``base`` matching the pattern ``parts``.
    Iterative (a work stack of ``(base, parts)``): ``**`` over a deep tree must not
    recurse once per level (fresh pass F10); the caller sorts ``out``."""
    work = [(base, parts)]
    while work:
        base, parts = work.pop()
        if not parts:
            out.append(base)
            continue
        head, rest = parts[0], parts[1:]
        join = (lambda name, b=base: name) if base == "" else \
            (lambda name, b=base: os.path.join(b, name))
        if head == "**":
            work.append((base, rest))  # zero directories
            for e in _entries(base or ".", found):
                if e.name.startswith("."):
                    if _is_dir(e, follow_symlinks=False):
                        found.pass_hidden(join(e.name))
                    elif not rest and not _is_dir(e):  # '**' would have matched it
                        found.pass_hidden_file(join(e.name))
                    continue
                if _is_dir(e, follow_symlinks=False):
                    work.append((join(e.name), parts))
                elif _is_dir(e):  # a link to a directory: said, as a folder search says it
                    _not_followed(join(e.name), found)
                elif not rest:
                    out.append(join(e.name))
            continue
        if not _has_magic(head):
            path = join(head) if head else "/"
            st = _look_up(base, path, found, follow=bool(rest))
            if st is not None and (not rest or stat.S_ISDIR(st.st_mode)):
                work.append((path, rest))
            continue
        for e in _entries(base or ".", found):
            if e.name.startswith(".") and not head.startswith("."):
                if fnmatch.fnmatchcase(e.name, head):  # matched but for the dot: said
                    if _is_dir(e):  # ('runs/*/t.jsonl' and runs/.agent: adv28 F5)
                        found.pass_hidden(join(e.name))
                    elif not rest:
                        found.pass_hidden_file(join(e.name))
                continue
            if not fnmatch.fnmatchcase(e.name, head):
                continue
            if _is_link_to_dir(base, join(e.name), e, found):  # only a name typed out is
                _not_followed(join(e.name), found)  # followed: 'traces/*' over a link to
            elif not rest or _is_dir(e):           # '/' searched the machine (adv33 B6)
                work.append((join(e.name), rest))


_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)
"""Lookup errors that mean "no such name" below a directory (``ELOOP``: a link loop,
which is no directory and holds no trace; glob and directory search pass over it too);
any other one (``EACCES``: the directory cannot be searched) is reported, never taken
as no match."""

NAME_MAX = 255
"""Bytes in one file name on Linux, macOS and Windows: a longer name names no file."""


def _look_up(base: str, path: str, found: Discovery, *, follow: bool
             ) -> os.stat_result | None:
    """The status of ``path``, a name in the directory ``base`` (``follow``: through a
    symlink); None when there is no such name (:data:`_ABSENT`, or a name of more than
    :data:`NAME_MAX` bytes).  Any other failure goes to ``found.unreadable``: ``base``
    when the name cannot be reached at all (``EACCES``: ``base`` cannot be searched,
    mode 700 of another owner), else ``path`` (a symlink whose target cannot be
    reached, a path grown past the OS's limit).  ``os.path.isdir`` and
    ``lexists`` return False for all of these, so ``d/*/x.jsonl`` audited
    ``d/a/x.jsonl``, passed, and never named ``d/b`` (issue 11, class 2, adv14 F1)."""
    try:
        return os.stat(path) if follow else os.lstat(path)
    except ValueError:  # a NUL byte: no file has that name
        return None
    except OSError as exc:
        if exc.errno in _ABSENT or (exc.errno == errno.ENAMETOOLONG and len(
                os.fsencode(os.path.basename(path))) > NAME_MAX):
            return None
        _lookup_failed(base, path, exc, found)
        return None


def _is_link_to_dir(base: str, path: str, entry: os.DirEntry[str], found: Discovery) -> bool:
    """False for an entry that :func:`_is_dir` found no directory; a symlink whose
    target cannot be looked up for another reason than its absence is reported as
    :func:`_look_up` does (``d/*/x.jsonl`` through ``d/link``, a link into a directory
    that cannot be searched)."""
    if not entry.is_symlink():
        return False
    st = _look_up(base, path, found, follow=True)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _lookup_failed(base: str, path: str, exc: OSError, found: Discovery) -> None:
    """Report a lookup of ``path`` (in ``base``) that failed with ``exc``: ``base``
    cannot be searched when ``path`` itself cannot be reached either, else ``path``."""
    reason = exc.strerror or str(exc)
    try:
        os.lstat(path)
    except OSError as again:
        if again.errno == exc.errno == errno.EACCES:
            found.add_unreadable(LogError(_normal(base or "."), 0,
                                          f"cannot search directory: {reason}"))
            return
    found.add_unreadable(LogError(_normal(path), 0, f"cannot look up: {reason}"))


def expand_pattern(pattern: str, found: Discovery | None = None) -> list[str]:
    """The paths matching ``pattern`` (sorted, each once), as :func:`glob.glob` with
    ``recursive=True`` except that ``**`` does not descend into symlinked directories;
    directories that cannot be listed or searched go to ``found.unreadable`` (glob
    takes them as empty)."""
    found = found if found is not None else Discovery()
    parts = pattern.replace(os.sep, "/").split("/")
    out: list[str] = []
    if parts[0] == "":  # an absolute pattern
        _match("/", [p for p in parts[1:] if p], found, out)
    else:
        _match("", [p for p in parts if p and p != "."], found, out)
    return sorted({_normal(p) for p in out if p})


def _skipped(found: Discovery, since: int, links: int | None = None,
             hidden: int | None = None) -> str:
    """``" (N skipped: not regular files)"`` for what the argument skipped, the links
    to directories it did not follow since ``links`` and the hidden directories it
    passed over since ``hidden``, else ""."""
    n = len(found.skipped) - since
    out = f" ({n} skipped: not regular files)" if n else ""
    m = len(found.links) - links if links is not None else 0
    out += f" ({m} link(s) to directories not followed)" if m else ""
    h = found.hidden[hidden:] if hidden is not None else []
    return out + (f" ({hidden_phrase(h)})" if h else "")


HIDDEN_NAMED = 5
"""Hidden directories a line names; the rest are counted."""


def hidden_phrase(paths: list[str]) -> str:
    """``"2 hidden directories not searched: a/.claude, a/.git; name one to audit
    what it holds"`` for the hidden directories ``paths`` (sorted; the first
    :data:`HIDDEN_NAMED` named, the rest counted)."""
    return _named(paths, ("directory", "directories"), "not searched",
                  "name one to audit what it holds")


def hidden_files_phrase(paths: list[str]) -> str:
    """``"2 hidden files not matched: .a.jsonl, d/.b.jsonl; name one to audit it"`` for
    the hidden files ``paths`` a pattern passed over (sorted; the first
    :data:`HIDDEN_NAMED` named, the rest counted)."""
    return _named(paths, ("file", "files"), "not matched (a pattern's * leaves out a "
                  "leading dot)", "name one to audit it")


def others_phrase(paths: list[str]) -> str:
    """``"2 files not searched (.json, .db, .ndjson and other .jsonl names: a folder
    search takes .jsonl, .jsonl.gz, .jsonl.zst and Cline's .messages.json):
    d/export.json, d/opencode.db; name one to
    audit it (an opencode export or store, an OpenHands trajectory, a Gemini CLI
    session)"`` for the files ``paths`` of :data:`OTHER_SUFFIXES` a directory search
    left out (sorted; the first :data:`HIDDEN_NAMED` named, the rest counted)."""
    return _named(paths, ("file", "files"), "not searched (.json, .db, .ndjson and other "
                  ".jsonl names: a folder search takes .jsonl, .jsonl.gz, .jsonl.zst and "
                  "Cline's .messages.json)",
                  "name one to audit it (an opencode export or store, an OpenHands "
                  "trajectory, a Gemini CLI session)", adjective="")


def _named(paths: list[str], nouns: tuple[str, str], what: str, hint: str,
           adjective: str = "hidden ") -> str:
    """``"N hidden NOUN WHAT: a, b and 3 more; HINT"`` (``adjective`` for "hidden "):
    ``paths`` sorted (a listing's order is the file system's), the first
    :data:`HIDDEN_NAMED` named, the rest counted."""
    paths = sorted(paths)
    named = ", ".join(paths[:HIDDEN_NAMED])
    more = f" and {len(paths) - HIDDEN_NAMED:,} more" if len(paths) > HIDDEN_NAMED else ""
    noun = nouns[0] if len(paths) == 1 else nouns[1]
    return f"{len(paths):,} {adjective}{noun} {what}: {named}{more}; {hint}"


def _expand(arg: str, found: Discovery) -> list[str]:
    """The traces ``arg`` names (:func:`_expand_one`); a path that exists and is a
    pattern too (``traces/**/*.jsonl``, a file or directory of that name in the
    checkout) is both: the path, and what the pattern matches (adv98 #1: a file named
    like the pattern hid every other trace, a gate passed on one).  As a shell does,
    whose ``*`` matches that file too.  Such a path that is no regular file (a FIFO, a
    link to ``/dev/stdin``) is only a match of the pattern, skipped as the others are."""
    named = (arg != "-" and not _is_url(arg) and any(c in _GLOB_CHARS for c in arg)
             and os.path.lexists(arg))
    if named and not os.path.isdir(arg) and _kind(arg) is not None:
        # a FIFO, device or link to one named like its pattern is one of the pattern's
        # matches, skipped as they are (adv100 #7: a link to /dev/stdin hung the gate)
        return _pattern_traces(arg, found, required=True)
    out = _expand_one(arg, found)
    if named:
        out += _pattern_traces(arg, found, required=False)
    return out


def _expand_one(arg: str, found: Discovery) -> list[str]:
    if arg == "-":
        return ["-"]
    if not _is_url(arg) and _url_like(arg) and not os.path.lexists(arg):
        from compaction_audit.io.remote import shown_url

        raise UsageError(f"{shown_url(arg)}: an object storage URL has two slashes after "
                         "its scheme (s3://BUCKET/KEY)")  # never echoed whole (adv55)
    if _is_url(arg):
        from compaction_audit.discover_urls import expand_url
        from compaction_audit.io.remote import split_url

        split_url(arg)  # a URL that names no bucket stops the run before it is echoed
        objects = expand_url(arg, TRACE_SUFFIXES)
        found.sizes.update((url, size) for url, size in objects.found if size >= 0)
        for err in objects.unreadable:  # a key listed twice: once
            found.add_unreadable(err)
        for folder in objects.hidden:  # said as a directory search says them (adv27 F4)
            found.pass_hidden(folder)
        for unsearched in objects.others:  # and what it does not search (usertest67 #5)
            found.pass_other(unsearched)
        urls = [url for url, _ in objects.found]
        under = _url_under(arg)
        if under is None:  # one object, named: as a file named, never left out
            return urls
        excluded = found.excluded
        kept = _kept(urls, found, under)  # as a directory or a pattern (usertest67 #1)
        if urls and not kept and not objects.unreadable:
            from compaction_audit.io.remote import shown_url

            raise UsageError(f"no trace files under {shown_url(arg)!r}"
                             f"{_excluded(found, excluded)}")
        return kept
    if os.path.isdir(arg):
        before, skipped, excluded = len(found.unreadable), len(found.skipped), found.excluded
        links, hidden, other = len(found.links), len(found.hidden), len(found.not_searched)
        traces = _kept(_search(arg, found), found, arg)
        # skipped non-regular files are no trace: a gate must not pass on nothing
        if not traces and len(found.unreadable) == before:
            others = found.not_searched[other:]
            raise UsageError(f"no trace files ({', '.join('*' + s for s in TRACE_SUFFIXES)}) "
                             f"under directory {arg!r}{_skipped(found, skipped, links, hidden)}"
                             f"{_excluded(found, excluded)}"
                             f"{f' ({others_phrase(others)})' if others else ''}")
        return traces
    if is_pattern(arg):
        return _pattern_traces(arg, found, required=True)
    return [_normal(arg)]


def _pattern_traces(arg: str, found: Discovery, required: bool) -> list[str]:
    """The traces pattern ``arg`` yields (files, and the traces of the directories it
    matches); raises :class:`UsageError` when it yields none and ``required``."""
    before, skipped, excluded = len(found.unreadable), len(found.skipped), found.excluded
    hidden, links = len(found.hidden), len(found.links)
    matched: list[str] = []
    searched: set[str] = set()
    for match in expand_pattern(arg, found):  # sorted: a directory before its own
        if _normal(match) in found._unreadable_paths:  # said already: a directory
            continue  # that could not be listed is no file too (adv26 E3)
        if not os.path.isdir(match):
            matched += _keep_regular([match], found)
        elif match not in searched:  # 'd/**' matches every directory under d: each
            matched += _search(match, found, searched)  # is searched once, not per level
    matched = _kept(matched, found)
    both = set(matched)  # a Cline manifest leads to its messages file: a pattern
    # matching both audits the session once, as a folder search does (usertest40 #4);
    # by its content, not its name (adv89 #3: a failing run.json beside
    # run.messages.json went unaudited, exit 0)
    matched = [m for m in matched if not (manifest_name(m, both) and leads_to(m))]
    if required and not matched and len(found.unreadable) == before:
        dots = _kept(list(found.hidden_files), found)  # usertest32 #8: said when
        raise UsageError(f"no trace file matches {arg!r}"  # another file matched,
                         f"{_skipped(found, skipped, links, hidden)}"  # not here
                         f"{_excluded(found, excluded)}"
                         f"{f'; {hidden_files_phrase(dots)}' if dots else ''}")
    return matched


def find_traces(args: Sequence[str], exclude: Sequence[str] = ()) -> Discovery:
    """The trace files named by ``args`` (files, directories, glob patterns), in
    argument order, each file once, with what was skipped and what could not be listed,
    leaving out what ``exclude`` matches among what directories and patterns yield (see
    the module docstring).  Raises :class:`UsageError` when ``args`` is empty or a
    directory or pattern yields nothing at all (or nothing ``exclude`` keeps)."""
    if not args:
        raise UsageError("no trace given: name files, directories or glob patterns")
    if any(not p.strip() for p in exclude):  # adv62: --exclude '' matched nothing
        raise UsageError("--exclude needs a pattern (a name such as 'labels' or "
                         "'*.items.jsonl', or a path pattern with '/')")
    found = Discovery(exclude=tuple(exclude))
    named = _named_files(args)  # reported under the name given, not under a link to it
    found.traces = list(_unique((t for arg in args for t in _expand(arg, found)),  # that
                                named))  # a folder listed first (adv77 #4)
    if found.excluded:  # a file also named on the command line is audited: not left
        left = {p for paths in found.excluded_by.values() for p in paths  # out
                if _same_key(p) not in named}  # (usertest26b #4; usertest27 #2: named
        found.excluded = len(left)  # by another path to the same file)
        found.exclude_used = {i for i, paths in found.excluded_by.items() if paths & left}
    if found.hidden_files:  # those audited after all ('**' matched their directory)
        audited = {_normal(t) for t in found.traces}  # or left out by choice are no news
        count = found.excluded
        found.hidden_files = _kept([p for p in found.hidden_files if p not in audited],
                                   found)
        found.excluded = count
    if found.not_searched:  # those named (or matched) after all, or left out by choice
        audited = {_normal(t) for t in found.traces}
        count = found.excluded
        found.not_searched = _kept([p for p in found.not_searched if p not in audited],
                                   found)
        found.excluded = count
    return found


def discover(args: Sequence[str]) -> list[str]:
    """The traces of :func:`find_traces`; a directory that could not be listed is
    kept as a path (the reader then reports it unreadable), so nothing is dropped
    silently."""
    found = find_traces(args)
    return [*found.traces, *(e.path for e in found.unreadable)]


def _named_files(args: Sequence[str]) -> dict[object, str]:
    """The plain files among ``args`` (not URLs, directories or patterns), by
    :func:`_same_key`: the path each was first named by, normalized."""
    out: dict[object, str] = {}
    for arg in args:
        if arg == "-" or _is_url(arg) or is_pattern(arg) or not os.path.isfile(arg):
            continue
        out.setdefault(_same_key(arg), _normal(arg))
    return out


def _same_key(path: str) -> object:
    """The file ``path`` names: its device and inode when it exists (``-``: standard
    input's), else the path itself (two spellings of one file are one key)."""
    try:
        st = os.stat(path) if path != "-" else os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # no stdin, or not a descriptor
        return path
    return (st.st_dev, st.st_ino)


def _unique(items: Iterable[str], named: dict[object, str]) -> Iterable[str]:
    """Items once each, by :func:`_same_key` (``- /dev/stdin`` is one trace), each as
    ``named`` names its file when it does (a file given on the command line keeps the
    name given wherever a folder listed it first)."""
    seen: set[object] = set()
    for item in items:
        key = _same_key(item)
        if key not in seen:
            seen.add(key)
            yield named.get(key, item)


def names_one_file(args: Sequence[str]) -> bool:
    """True when ``args`` is exactly one file path or object URL (not a directory,
    prefix or pattern): the report shape for one named trace (the JSON session object)
    depends on how the trace was named, not on how many a directory happens to hold."""
    if len(args) == 1 and _is_url(args[0]):
        from compaction_audit.discover_urls import names_one_object

        return names_one_object(args[0])
    return (len(args) == 1 and not os.path.isdir(args[0]) and not is_pattern(args[0])
            and not (any(c in _GLOB_CHARS for c in args[0])  # a file named like a
                     and set(expand_pattern(args[0])) - {_normal(args[0])}))  # pattern


def _url_like(arg: str) -> bool:
    """A scheme of object storage and one slash or more (:func:`~compaction_audit.io.
    remote.url_like`)."""
    from compaction_audit.io.remote import url_like

    return ":/" in arg and url_like(arg)


def _is_url(arg: str) -> bool:
    """An object storage URL (:mod:`compaction_audit.discover_urls`)."""
    from compaction_audit.io.remote import is_url

    return "://" in arg and is_url(arg)
