"""Errors raised by the core; the CLI turns them into one line and exit code 2."""

from __future__ import annotations

from collections.abc import Iterable


class AuditError(Exception):
    """Base class of every error the CLI reports as a one-line message (exit 2)."""


NOT_A_LOG = "unrecognized log format"
"""How a :class:`LogError` for a file that is no log of a known format begins (the
readers' detection); ``audit`` reads it to suggest ``--exclude`` (the message survives
the pickling that parallel audits send errors back by)."""


class LogError(AuditError):
    """Malformed input in a log file.

    Formats as ``FILE:LINE: what is wrong (field)``; ``line`` is 1-based (0 when the
    problem is not tied to a line, e.g. an unreadable file) and ``field`` names the
    offending JSON field path such as ``retained[3].salience`` (empty when none).
    """

    def __init__(self, path: str, line: int, message: str, field: str = "") -> None:
        self.path = path
        self.line = line
        self.message = message
        self.field = field
        self.trace: str | None = None
        """The trace being audited when the error is in another file (a companion file
        beside it: :func:`of_trace`), else None."""
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        """Pickle by the constructor's arguments (parallel audits send errors back)."""
        return (LogError, (self.path, self.line, self.message, self.field))

    def named(self) -> str:
        """The one-line error, after the trace it kept from being audited when that is
        another file (:attr:`trace`): ``session.messages.json: agentic.compaction.json:1:
        ...`` (adv52: ``-q`` named the companion file twice, the trace never)."""
        return f"{self.trace}: {self}" if self.trace else str(self)

    def __str__(self) -> str:
        path = self.path
        if len(path) > MAX_PATH_SHOWN:  # the line is cut at 1,024 characters: keep the
            from compaction_audit.report.safe import clip  # reason, not a path's middle

            path = clip(path, MAX_PATH_SHOWN)
        where = f"{path}:{self.line}" if self.line else path
        suffix = f" ({self.field})" if self.field else ""
        return f"{where}: {self.message}{suffix}"


def of_trace(error: LogError, trace: str) -> LogError:
    """``error`` with :attr:`LogError.trace` set to ``trace`` when the error is in
    another file (a Cline compaction file beside a messages file): the summary names
    the trace that could not be audited, not twice the file that broke it (adv51)."""
    if error.path != trace:
        error.trace = trace
    return error


MAX_PATH_SHOWN = 512
"""Characters of a file name an error line shows (then ``...[N chars, sha256 H]``):
error lines are cut at 1,024 characters, and behind a 3,000-character path the reason
("cannot open: ...") was lost (adv22a, observation 3)."""


class MixedFormats(LogError):
    """A line of another log format in a file read as one format: the file is not one
    log, so this is an error even under ``--lenient`` (which skips bad records of the
    file's own format; :func:`compaction_audit.io.detect.line_checker`)."""

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        return (MixedFormats, (self.path, self.line, self.message, self.field))


class InputLimit(LogError):
    """Input beyond a limit of :class:`~compaction_audit.io.lines.Limits`: a line longer
    than ``max_line_bytes``, a stream longer than ``max_input_bytes``, a compressed
    stream expanding more than ``max_decompression_ratio``.  The trace is unreadable
    even under ``--lenient`` (like :class:`MixedFormats`): no reader may take it as
    "nothing recognizable" and try another (adv32 A3: an over-long line among the
    first lines was reported as "one file holds two log formats")."""

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        return (InputLimit, (self.path, self.line, self.message, self.field))


MAX_SKIPPED = 100_000
"""Most records ``--lenient`` skips in one trace (bad JSON lines and records bad in
themselves) before the trace counts as unreadable, exit 2: each kept error costs about
600 bytes, and a line of bad JSON can be 2 bytes (``x`` and its newline), so 8 MB of
them took 2.5 GB and 39 s (issue 11, adv11 F1).  100,000 errors are about 60 MB."""


class TooDamaged(LogError):
    """More than :data:`MAX_SKIPPED` records skipped in one trace under ``--lenient``:
    the trace is unreadable (raised even in lenient mode, like :class:`MixedFormats`)."""

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        return (TooDamaged, (self.path, self.line, self.message, self.field))


class SkipList(list[LogError]):
    """The records a lenient reader skipped (``what``: "bad records"), or the
    dependent rejects it dropped ("dependent rejects"), at most :data:`MAX_SKIPPED`
    of either: one more raises :class:`TooDamaged` at its line, so what lenient
    reading keeps is bounded by a constant, not by the number of lines (a dependent
    reject kept about 1 KB for a 60-byte line, adv12 F4)."""

    what = "bad records"

    def __init__(self, what: str = "bad records") -> None:
        super().__init__()
        self.what = what

    def append(self, err: LogError) -> None:
        if len(self) >= MAX_SKIPPED:
            raise TooDamaged(err.path, err.line, f"more than {MAX_SKIPPED:,} {self.what} "
                             "(--lenient): too damaged to audit")
        super().append(err)

    def extend(self, errs: Iterable[LogError]) -> None:
        for err in errs:
            self.append(err)


class UsageError(AuditError):
    """A bad option value or combination given by the user."""
