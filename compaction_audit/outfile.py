"""Write an output file (``-o``) without destroying anything (issue 11, item 3).

Every command that writes ``-o`` goes through :func:`output_target`:

- an output that is the same regular file as an input (same device and inode, after
  symlinks, so a hard link or a symlink to the trace counts; ``-`` is standard input,
  compared by :func:`os.fstat` when it is a regular file, as with ``- < trace``), or
  as a file an adapter reads along with an input (its companions:
  :mod:`compaction_audit.io.companions`), is refused with a :class:`UsageError`
  before anything is written;
- a regular file, or a path that does not exist yet, is written atomically: to a new
  temporary file in the directory of the *resolved* path (a symlink's target), which
  then replaces it with :func:`os.replace`; the symlink itself is never replaced, an
  existing file keeps its permission bits, and a failed run leaves the old file as it
  was.  A file with more than one hard link is not replaced (that would split the
  link, the other names keeping the old content): once the temporary file is complete
  its bytes are copied into the file in place;
- anything else (a character or block device such as ``/dev/null``, a FIFO, a socket,
  and paths under ``/dev`` or ``/proc`` such as ``/dev/stdout``) is written through, by
  opening it for writing: the node is never replaced by a regular file; a stream's
  name (``/dev/stdout``, ``/proc/self/fd/1``, or a symbolic link to one) is written
  through the descriptor it names (:func:`open_output`), so a report goes where the
  shell sent the stream, as ``-o -`` does (adv140 #1: opened again, ``-o /dev/stdout
  >> "$GITHUB_STEP_SUMMARY"`` truncated what earlier steps wrote);
- a directory is a usage error.

An existing regular file the user may not write (:func:`os.access`) is refused before
anything is written, as a plain ``open`` would refuse it, even where a rename could
replace it (a folder the user may write).  If no temporary file can be created next
to a file that may be written (a directory the user may not write), or the rename is
refused (a sticky folder such as ``/tmp`` lets only a file's owner replace it), the
file is written in place, as a plain ``open`` would (issue 11, F6).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO

from compaction_audit.errors import UsageError
from compaction_audit.runtime.streams import fd_stat, stderr_to_stdout
from compaction_audit.runtime.streams import path_stat as _stat

_PSEUDO = ("/dev/", "/proc/")
"""Paths under these are written through even when they resolve to a regular file
(``/dev/stdout`` redirected to a file is the shell's file, opened by the shell)."""


def _stdin_stat() -> os.stat_result | None:
    """The status of the file standard input reads (``-``), when it is a regular file
    (``- < trace``); None for a pipe, a terminal, a closed or a replaced stdin."""
    try:
        st = os.fstat(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # None, closed, or not a real file
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def refuse_missing_folder(output: str) -> None:
    """Raise :class:`UsageError` when ``output`` does not exist and the folder it would
    be created in does not exist or is not a folder (the report is never written into
    a folder this tool made up: the user names an existing one)."""
    if _stat(output) is not None or os.path.islink(output):
        return
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        # adv56: "no folder a.jsonl (create it first)" for a.jsonl/x.json, a.jsonl a file
        above = next((p for p in _parents(folder) if os.path.lexists(p)), None)
        if above is not None and not os.path.isdir(above):
            what = ("a symbolic link to nothing, not a folder" if not os.path.exists(above)
                    else "a file, not a folder" if os.path.isfile(above) else "not a folder")
            raise UsageError(f"{output}: cannot open for writing: {above} is {what}")
        raise UsageError(f"{output}: cannot open for writing: no folder {folder} "
                         "(create it first)")


def _parents(folder: str) -> Iterable[str]:
    """``folder`` and the folders above it, nearest first."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def refuse_same_file(output: str, inputs: Iterable[str], source: str | None = None) -> None:
    """Raise :class:`UsageError` when ``output`` is an existing regular file that is
    also one of ``inputs`` (compared by device and inode; ``-`` by the file standard
    input reads, see :func:`_stdin_stat`; unreadable inputs are ignored), or one of
    the files an adapter reads with an input (a Cline messages or compaction file,
    Gemini CLI's ``telemetry.log``, an SQLite store's ``-wal``:
    :func:`~compaction_audit.io.companions.companion_files`, looked up only when
    ``output`` exists; for an input read once, such as a FIFO, every file of those
    names beside it: adv30 F1).  Devices and FIFOs may be read and written (``/dev/null``).
    Also raises, so that a run that could not write its report stops before the work,
    when ``output`` is new and its folder does not exist (:func:`refuse_missing_folder`),
    when it is a symbolic link that loops (:func:`_refuse_loop`) and when it is a
    regular file the user may not write (``FILE: cannot write: Permission denied``:
    :func:`os.access`, so root may).  ``source``: the format the
    inputs are read as (``convert --from``), else each one's detected format: a forced
    reader opens its companions even where detection fails (adv33 B2)."""
    refuse_missing_folder(output)
    _refuse_loop(output)
    out = _stat(output)
    if out is None:  # an existing one is a companion (below), said as such
        _refuse_sqlite_side(output, inputs)
    if out is None or not stat.S_ISREG(out.st_mode):
        return
    _refuse_input(out, output, "choose another output", inputs, source)
    if not os.access(output, os.W_OK):
        raise UsageError(f"{output}: cannot write: Permission denied")


SQLITE_SIDES = ("-journal", "-wal", "-shm")
"""The files SQLite reads beside a store (``STORE-journal`` ...)."""


def _refuse_sqlite_side(output: str, inputs: Iterable[str]) -> None:
    """:class:`UsageError` when ``output``, which does not exist yet, is the name of a
    file SQLite reads beside an input that is an SQLite file (``convert opencode.db -o
    opencode.db-journal`` wrote a "hot journal" that made the store unreadable: adv81
    #5; the companion check sees only files that exist)."""
    spots = {os.path.abspath(output), os.path.realpath(output)}
    side = next((x for x in SQLITE_SIDES for spot in spots if spot.endswith(x)), None)
    if side is None:  # the usual output: no input is looked at
        return
    for name in inputs:  # by name first: only an input it names is opened
        if name != "-" and {f"{os.path.abspath(name)}{side}",
                            f"{os.path.realpath(name)}{side}"} & spots and _is_sqlite(name):
            raise UsageError(f"{output}: is where SQLite looks for the {side[1:]} of the "
                             f"input {name}; refusing to write it (choose another output)")


def _is_sqlite(name: str) -> bool:
    """True when ``name`` is a readable regular file that starts as an SQLite file
    (a FIFO or a device is never opened here: its bytes are the run's input)."""
    st = _stat(name)
    if st is None or not stat.S_ISREG(st.st_mode):
        return False
    try:
        with open(name, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _refuse_input(out: os.stat_result, shown_as: str, instead: str,
                  inputs: Iterable[str], source: str | None = None) -> None:
    """:class:`UsageError` when the regular file ``out`` is one of ``inputs`` or a file
    an adapter reads with one (see :func:`refuse_same_file`)."""
    inputs = list(inputs)
    same = (out.st_dev, out.st_ino)
    for name in inputs:
        st = _stdin_stat() if name == "-" else _stat(name)
        if st is not None and (st.st_dev, st.st_ino) == same:
            shown = "- (standard input)" if name == "-" else name
            raise UsageError(f"{shown_as}: is the input {shown}; refusing to overwrite it "
                             f"({instead})")
    from compaction_audit.runtime.streams import config_candidates

    for name in config_candidates():  # read by every command (adv33 B5: -o replaced a
        st = _stat(name)               # pyproject.toml without our table)
        if st is not None and (st.st_dev, st.st_ino) == same:
            raise UsageError(f"{shown_as}: is {name}, which the configuration search "
                             f"reads; refusing to overwrite it ({instead})")
    from compaction_audit.io.companions import companion_lookup

    for name in inputs:
        found, known = companion_lookup(name, source)
        for other in found:
            st = _stat(other)
            if st is None or (st.st_dev, st.st_ino) != same:
                continue
            if known:
                raise UsageError(f"{shown_as}: is {other}, read along with the input "
                                 f"{name}; refusing to overwrite it ({instead})")
            from compaction_audit.io.lines import reads_once

            if reads_once(name):
                why = "it is read once, so what it holds is not looked at first"
            else:
                from compaction_audit.runtime.addrspace import limit_phrase

                why = f"its files could not be looked up within {limit_phrase()}"
            raise UsageError(f"{shown_as}: is {other}, which may be read along with the "
                             f"input {name} ({why}); refusing to overwrite it ({instead})")


def refuse_same_stdout(inputs: Iterable[str], source: str | None = None) -> None:
    """:class:`UsageError` when standard output is a regular file that is one of
    ``inputs`` or read with one: ``audit t.jsonl -f json >> t.jsonl`` appended the
    report to the trace it audits (adv22a observation 2); :func:`refuse_same_stderr`
    first, so that the refusal is never written onto an input.  Nothing when standard
    output is a terminal, pipe or device, or cannot be looked at.  ``source`` as for
    :func:`refuse_same_file`."""
    inputs = list(inputs)
    refuse_same_stderr(inputs, source)  # first: the refusal must not be written onto an input
    out = fd_stat(1)
    if out is not None:
        _refuse_input(out, "standard output", "redirect it elsewhere", inputs, source)


def refuse_same_stderr(inputs: Iterable[str], source: str | None = None) -> None:
    """:class:`UsageError` when standard error is a regular file that is one of
    ``inputs`` or read with one (``audit t.jsonl 2>> t.jsonl`` appended an error line
    or a note to the trace; adv23, left open).  Standard error is then first pointed
    at ``/dev/null`` and ``sys.stderr`` at standard output, so that the refusal
    reaches the user and nothing is written onto the input; when standard output is an
    input too, both go to ``/dev/null`` (:func:`~compaction_audit.runtime.streams.
    stderr_to_stdout`).  ``source`` as for :func:`refuse_same_file`."""
    inputs = list(inputs)
    err = fd_stat(2)
    if err is None:
        return
    try:
        _refuse_input(err, "standard error", "redirect it elsewhere", inputs, source)
    except UsageError:
        out = fd_stat(1)
        try:  # standard output an input too ('&>> t.jsonl'): silenced as well
            if out is not None:
                _refuse_input(out, "standard output", "", inputs, source)
        except UsageError:
            stderr_to_stdout(stdout_safe=False)
            raise
        stderr_to_stdout()
        raise


def writes_through(output: str) -> bool:
    """True when ``output`` is written in place rather than replaced: it exists and is
    not a regular file (device, FIFO, socket), it lies under ``/dev`` or ``/proc``, or
    it is a symbolic link to a stream's name (:func:`stream_descriptor`)."""
    absolute = os.path.abspath(output)
    if absolute.startswith(_PSEUDO) or os.path.realpath(output).startswith(_PSEUDO):
        return True
    if stream_descriptor(output) is not None:
        return True
    st = _stat(output)
    return st is not None and not stat.S_ISREG(st.st_mode)


_STREAM_RE = re.compile(r"/dev/(?:(?P<std>stdin|stdout|stderr)|fd/(?P<fd>\d+))"
                        r"|/proc/(?P<pid>self|thread-self|\d+)(?:/task/\d+)?/fd/(?P<pfd>\d+)")
"""A name of one of this process's open descriptors."""
_STD = {"stdin": 0, "stdout": 1, "stderr": 2}
_LINK_HOPS = 40
"""Symbolic links followed at most to find a stream's name (the kernel's own limit)."""


def stream_descriptor(output: str) -> int | None:
    """The descriptor of this process that ``output`` names (``/dev/stdout``: 1,
    ``/dev/fd/3``, ``/proc/self/fd/3``: 3), directly or through symbolic links; None for
    any other path.  Written through that descriptor, a report goes where the shell
    sent the stream, as ``-o -`` does: after what ``>>`` holds, at the offset of
    ``1<>``, into the file ``>`` emptied (adv140 #1, adv141 #5, #7)."""
    path = os.path.abspath(output)
    for _ in range(_LINK_HOPS):
        m = _STREAM_RE.fullmatch(path)
        if m is not None:
            if m["std"]:
                return _STD[m["std"]]
            if m["fd"]:
                return int(m["fd"])
            if m["pid"] in ("self", "thread-self") or int(m["pid"]) == os.getpid():
                return int(m["pfd"])
            return None  # another process's descriptor: a path like any other
        try:
            target = os.readlink(path)
        except OSError:  # not a link (or gone): no stream's name
            return None
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return None


def open_output(path: str) -> IO[bytes]:
    """``path`` (what :func:`output_target` yields) opened for writing bytes: a
    stream's name (:func:`stream_descriptor`) as a duplicate of that descriptor, which
    writes where and as the shell opened it (``-o /dev/stdout >> log`` appends, as
    ``-o -`` does; opening the name again truncated ``log``: adv140 #1); any other
    path from its start.  Raises :class:`OSError` as :func:`open` does (a closed
    descriptor: ``EBADF``)."""
    fd = stream_descriptor(path)
    if fd is None:
        return open(path, "wb")
    return os.fdopen(os.dup(fd), "wb")


def _refuse_loop(output: str) -> None:
    """Raise :class:`UsageError` when ``output`` is a symbolic link that resolves to no
    end (a loop, a link to itself): the report replaced the link with a regular file
    (adv78 #6), where a link is always written through.  A link to a file not there yet
    is written through, creating it."""
    if not os.path.islink(output):
        return
    try:
        os.stat(output)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{output}: cannot open for writing: a symbolic link that "
                             f"loops ({os.strerror(errno.ELOOP)})") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def output_target(output: str, inputs: Iterable[str] = (), source: str | None = None
                  ) -> Iterator[str]:
    """The path to write ``output`` through (see the module docstring).

    Use as ``with output_target(out, inputs) as path: write(path)``; when the block
    ends without an exception the temporary file (if one was used) replaces the
    resolved output (or, when that has several hard links, is copied into it in
    place), else it is removed.  The temporary file keeps ``output``'s
    compression suffix (``.gz``, ``.zst``), so a writer choosing by name still does.
    Raises :class:`UsageError` for an output that is an input or a directory, or that
    cannot be written (the OS's reason); lets ``BrokenPipeError`` through for an output
    written in place (a pipe or FIFO whose reader left: the command exits 141).
    ``source`` as for :func:`refuse_same_file`.
    """
    refuse_same_file(output, inputs, source)
    if os.path.isdir(output):
        raise UsageError(f"{output}: is a directory, not a file to write")
    tmp = None if writes_through(output) else _temporary(output)
    try:
        yield output if tmp is None else tmp
        if tmp is not None:
            _commit(tmp, os.path.realpath(output))
    except BrokenPipeError:
        if tmp is None:  # a pipe named as the output (-o /dev/stdout): its reader left,
            raise  # which exits 141 quietly, as standard output does (adv63)
        raise UsageError(f"{output}: cannot write: Broken pipe") from None
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)


def _commit(tmp: str, real: str) -> None:
    """Put the complete temporary file ``tmp`` in place of ``real``: rename it over
    ``real``, or copy its bytes into ``real`` (same inode: every name sees the new
    content) when ``real`` is a regular file with more than one hard link, or one the
    rename may not replace (EPERM, EACCES: another user's file in a sticky folder)
    but the user may write."""
    st = _stat(real)
    regular = st is not None and stat.S_ISREG(st.st_mode)
    if not regular or st is None or st.st_nlink < 2:
        try:
            os.replace(tmp, real)
            return
        except PermissionError:
            if not regular or not os.access(real, os.W_OK):
                raise
    with _signals_held(), open(tmp, "rb") as src, open(real, "r+b") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        dst.truncate()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, then raised again on
    leaving it, in the main thread: an interrupt during the copy into a hard-linked
    output left the new report's head over the old file's tail, neither file (adv15
    F2).  A Python-level handler records them (a signal mask would not do: the kernel
    may deliver the signal to another thread, and Python still raises in the main
    one).  The copy is as long as the report is; a rename needs no such care."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    held = {s: old for s in (signal.SIGINT, signal.SIGTERM)
            if (old := signal.getsignal(s)) is not None}
    for sig in held:
        signal.signal(sig, lambda signum, _frame: got.append(signum))
    try:
        yield
    finally:
        for sig, old in held.items():
            signal.signal(sig, old)
        for signum in dict.fromkeys(got):
            signal.raise_signal(signum)


def _temporary(output: str) -> str | None:
    """A new empty file next to ``output``'s resolved path with its permission bits
    (a new output's follow the umask); None to write ``output`` in place (no file can
    be created there but ``output`` exists).  Raises :class:`UsageError` otherwise."""
    real = os.path.realpath(output)
    old = _stat(real)
    ext = next((s for s in (".gz", ".zst") if real.lower().endswith(s)), "")  # adv68 #4
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.",
                                   suffix=f".partial{ext}", dir=os.path.dirname(real))
    except OSError as exc:
        if old is not None:
            return None
        raise UsageError(f"{output}: cannot open for writing: {exc.strerror or exc}"
                         ) from None
    os.close(fd)
    os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_umask())
    return tmp
