"""Errors raised by the core; the CLI turns them into one line and exit code 2."""

from __future__ import annotations


class AuditError(Exception):
    """Base class of every error the CLI reports as a one-line message (exit 2)."""


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
        super().__init__(str(self))

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        """Pickle by the constructor's arguments (parallel audits send errors back)."""
        return (LogError, (self.path, self.line, self.message, self.field))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        suffix = f" ({self.field})" if self.field else ""
        return f"{where}: {self.message}{suffix}"


class MixedFormats(LogError):
    """A line of another log format in a file read as one format: the file is not one
    log, so this is an error even under ``--lenient`` (which skips bad records of the
    file's own format; :func:`compaction_audit.io.detect.line_checker`)."""

    def __reduce__(self) -> tuple[type[LogError], tuple[str, int, str, str]]:
        return (MixedFormats, (self.path, self.line, self.message, self.field))


class UsageError(AuditError):
    """A bad option value or combination given by the user."""
