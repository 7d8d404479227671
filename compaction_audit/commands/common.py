"""Helpers shared by the commands: one-line errors, consoles, option types, and the
sinks every line of output goes through (stdout, stderr, ``-o`` files): each line is
:func:`~compaction_audit.report.safe.neutralize` d for CI runners, and files are
written by :func:`~compaction_audit.outfile.output_target`."""

from __future__ import annotations

import functools
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import IO, NoReturn, ParamSpec, TypeVar, cast

import typer
from rich.console import Console

from compaction_audit.errors import AuditError
from compaction_audit.outfile import open_output, output_target
from compaction_audit.report.safe import TEXT, Escapes, neutralize, neutralize_bytes, printable


class TextOrJson(StrEnum):
    """``--format`` of the commands that print a text view or JSON (``trace``,
    ``config show``): spelled as ``audit --format`` and ``diff --format``."""

    text = "text"
    json = "json"


FORMAT_HELP = "Output format (--json is the same as --format json)."


class FailOn(StrEnum):
    """Lowest severity that makes the exit code 1."""

    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def say(message: str) -> None:
    """Write ``compaction-audit: MESSAGE`` as one line to stderr: ``message`` made
    :func:`printable` (one line, bounded) and the line :func:`neutralize` d.  A closed
    or broken stderr is ignored: the exit code is the same either way."""
    try:  # an unwritable stderr changes no exit code
        sys.stderr.write(neutralize(f"compaction-audit: {printable(message)}\n"))
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


SAY_LINES = 20
"""Most stderr lines one kind of note prints in a run; the rest are counted in one
more line (a folder of 100,000 FIFOs, or 60,000 suppress entries that matched
nothing, is one screen, not a line each; issue 14, point 3)."""


def say_some(lines: Sequence[str], more: str) -> None:
    """:func:`say` the first :data:`SAY_LINES` of ``lines``, then "... and N more
    ``more``" for the rest."""
    for line in lines[:SAY_LINES]:
        say(line)
    if (rest := len(lines) - SAY_LINES) > 0:
        say(f"... and {rest:,} more {more}")


def fail(message: str) -> NoReturn:
    """Print a one-line error to stderr (:func:`say`) and exit 2."""
    say(message)
    raise typer.Exit(2)


UNWRITTEN_COMPRESSIONS = frozenset({".bz2", ".bz", ".xz", ".lzma", ".lz", ".lz4", ".zip",
                                    ".7z", ".br", ".z", ".tgz", ".gzip", ".zstd", ".tbz",
                                    ".tbz2", ".txz", ".tzst", ".tlz", ".lzo", ".rar", ".zz",
                                    ".tz", ".taz", ".tar", ".lzma2", ".sz", ".snappy"})
"""Endings of compressions and archives :func:`compressed` does not write (nor the
readers read): an ``-o`` name with one is a usage error, not an uncompressed file
under a compressed name."""

TAR_ENDINGS = (".tar.gz", ".tar.zst")
"""Two-part endings of an archive: :func:`compressed` writes a compressed report, no
tar (usertest22 #5: refused as ``.tgz`` is)."""


def output_path(value: str) -> Path:
    """The value of an ``-o``/``--output`` option as a path (typer's ``parser``).  An
    empty value is a usage error, one line, exit 2: typer made ``-o ''`` (``-o "$OUT"``
    with the variable unset) ``Path('')``, that is ``.``, and the command then wrote to
    or refused the working directory under a name nobody typed (issue 11).  A file
    named ``-`` given as ``./-`` is that file, made absolute: ``Path('./-')`` is
    ``Path('-')``, which ``convert`` took for standard output (adv30 F4).  A name
    ending in a compression not written (:data:`UNWRITTEN_COMPRESSIONS`) is a usage
    error too."""
    if not value:
        fail("-o/--output: the path is empty; name a file to write")
    _not_a_url("-o/--output", value, "writes a local file or standard output")
    if value.endswith(("/", os.sep)) or os.path.basename(value) in (".", ".."):
        # Path() drops a trailing / or /.: a file was written where a folder was meant
        fail(f"-o/--output: '{value}' names a folder; name a file to write")
    lower = value.lower()  # (adv69 #2: where a folder was meant)
    ending = next((e for e in TAR_ENDINGS if lower.endswith(e)), Path(lower).suffix)
    if ending in UNWRITTEN_COMPRESSIONS or ending in TAR_ENDINGS:  # adv67 #7
        fail(f"-o/--output: a {ending} name says a compression this tool does not write "
             "(it writes .gz and .zst); name the file without it")
    if value != "-" and Path(value) == Path("-"):
        return Path.cwd() / "-"
    return Path(value)


def stdout_or(output: Path | None) -> Path | None:
    """None (standard output) for ``-o -``, as ``convert``, ``simulate`` and ``baseline
    create`` read it; else ``output`` (adv61: ``audit -o -`` wrote a file named ``-``)."""
    return None if output is not None and str(output) == "-" else output


def local_file(value: str) -> Path:
    """The value of ``--config`` or ``--baseline`` as a path (typer's ``parser``); an
    object storage URL is a usage error (:func:`_not_a_url`)."""
    _not_a_url("--config/--baseline", value, "reads a local file")
    return Path(value)


def _not_a_url(option: str, value: str, does: str) -> None:
    """Exit 2 with one line when ``value`` is an object storage URL: the option ``does``
    something else, and as a path the URL was echoed in the error, user information
    and password included (adv54: ``-o 's3://KEY:SECRET@bucket/k'`` said "cannot open
    for writing: no folder .../s3:/KEY:SECRET@bucket")."""
    from compaction_audit.io.remote import shown_url, url_like

    if url_like(value):
        fail(f"{option}: {shown_url(value)}: an object storage URL; this option {does}")


def _width() -> int | None:
    """Columns for a console: ``COLUMNS`` when set, else rich's detection on a
    terminal, else 120 (a pipe or a file has no width of its own)."""
    columns = os.environ.get("COLUMNS", "")
    # ASCII digits only: str.isdigit() takes "¹²", which int() refuses (adv94 #4: every
    # text command stopped with an internal error); at most 5 digits
    if columns.isascii() and columns.isdigit() and len(columns) <= 5 and int(columns) > 0:
        return int(columns)
    return None if sys.stdout.isatty() else 120


class NeutralWriter(io.TextIOBase):
    """A text stream that passes every complete line through :func:`neutralize`
    before writing it to ``raw``; a partial line waits for its end, or for
    :meth:`flush` (then it is checked as a line start, which can only over-escape).
    Terminal detection (``isatty``, ``fileno``) is the raw stream's."""

    def __init__(self, raw: IO[str], escapes: Escapes = TEXT) -> None:
        super().__init__()
        self._raw, self._escapes, self._pending = raw, escapes, ""

    def write(self, s: str) -> int:
        text = self._pending + s
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        self._pending = text[cut:]
        if cut:
            with stdout_errors(self._raw):
                self._raw.write(neutralize(text[:cut], self._escapes))
        return len(s)

    def flush(self) -> None:
        with stdout_errors(self._raw):
            if self._pending:
                self._raw.write(neutralize(self._pending, self._escapes))
                self._pending = ""
            self._raw.flush()

    def isatty(self) -> bool:
        return self._raw.isatty()

    def fileno(self) -> int:
        return self._raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._raw, "encoding", None) or "utf-8"


def console_for() -> Console:
    """A rich console writing to stdout through a :class:`NeutralWriter`.

    A pipe gets no colour (rich's own detection, which also honours ``NO_COLOR``).
    Width: see :func:`_width`.  Files: :func:`output_console`.  No emoji codes: a
    ``:name:`` in a plain string stays as written (rich replaced it from a table of
    3,600 names that it loaded for that, 3 ms of every text report; issue 14, item 4).
    """
    return Console(file=cast(IO[str], NeutralWriter(sys.stdout)), highlight=False,
                   soft_wrap=False, width=_width(), emoji=False)


@contextmanager
def output_console(output: Path | None, inputs: Iterable[str] = ()) -> Iterator[Console]:
    """A console for stdout (``output`` None, :func:`console_for`) or for the file
    ``output``, written through :func:`~compaction_audit.outfile.output_target`
    (never an input, atomic for regular files) without colour."""
    if output is None:
        console = console_for()
        yield console
        console.file.flush()
        return
    try:
        with output_target(str(output), inputs) as path:
            text = io.StringIO()
            console = Console(file=cast(IO[str], NeutralWriter(text)), highlight=False,
                              no_color=True, width=_width() or 120, force_terminal=False,
                              emoji=False)
            yield console
            console.file.flush()
            with open_output(path) as fh:
                fh.write(compressed(str(output), text.getvalue().encode("utf-8")))
    except AuditError as exc:
        fail(str(exc))


@contextmanager
def stdout_errors(stream: object) -> Iterator[None]:
    """A failed write to standard output (a full disk: ``> /dev/full``) ends the command
    with one line, exit 2, as a failed ``-o`` file does; it was an "internal error".
    What is left in the stream's buffer goes nowhere (no second error at exit).  A
    broken pipe passes on (``| head``: exit 1, quietly)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        if stream is not sys.stdout and stream is not getattr(sys.stdout, "buffer", None):
            raise
        discard_stdout()
        fail(f"standard output: cannot write: {exc.strerror or exc}")


def discard_stdout() -> None:
    """Point standard output's descriptor at ``/dev/null``: what is left in its buffers
    goes nowhere when the interpreter flushes them at exit, where a second failure
    printed "Exception ignored ... BrokenPipeError" and made the exit code 120."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def compressed(name: str, data: bytes) -> bytes:
    """``data`` gzip-compressed for a ``name`` ending in ``.gz`` (no time stamp: the
    same report, the same bytes), zstd for ``.zst``, else as it is: a report written
    to ``report.json.gz`` was plain JSON under a compressed name (adv56; ``convert``
    and the readers go by the same suffixes; in any case: ``R.TXT.GZ`` too, adv59)."""
    name = name.lower()
    if name.endswith(".gz"):
        import gzip

        return gzip.compress(data, mtime=0)
    if name.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data


def write_bytes(data: bytes, output: Path | None, escapes: Escapes = TEXT,
                inputs: Iterable[str] = ()) -> None:
    """Write ``data`` (:func:`neutralize_bytes` with the format's ``escapes``) to stdout
    or ``output`` (through :func:`~compaction_audit.outfile.output_target`: never an
    input, atomic for regular files, through to devices and FIFOs).  An output that
    cannot be written exits 2."""
    data = neutralize_bytes(data, escapes)
    if output is None:
        with stdout_errors(sys.stdout):
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        return
    try:
        with output_target(str(output), inputs) as path, open_output(path) as fh:
            fh.write(compressed(str(output), data))
    except AuditError as exc:
        fail(str(exc))
    except BrokenPipeError:  # a pipe named as the output lost its reader: exit 141
        raise
    except OSError as exc:
        fail(f"{output}: cannot open for writing: {exc.strerror or exc}")


P = ParamSpec("P")
R = TypeVar("R")


def interruptible(command: Callable[P, R]) -> Callable[P, R]:
    """``command`` ending on Ctrl-C (or SIGTERM during a pool) with one stderr line and
    exit 130 (128 + the signal), wherever it arrives: typer would turn a
    ``KeyboardInterrupt`` into a silent exit 130, with a report cut short and no word
    of why (issue 11, item 7)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        from compaction_audit.runtime.stopline import stop_status

        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            # procs (multiprocessing, ctypes) loads only when a command stops
            from compaction_audit.runtime.procs import exit_process

            exit_process(stop_status(exc))

    return run
