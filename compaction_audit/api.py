"""The public Python API: audit a trace (or several) and get the report model."""

from __future__ import annotations

from collections.abc import Sequence

from compaction_audit.engine import audit_session
from compaction_audit.errors import LogError
from compaction_audit.io.native import read_native
from compaction_audit.model import Session
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.rules.base import Rule, Severity
from compaction_audit.settings import Settings


def load(path: str, lenient: bool = False) -> tuple[Session, str]:
    """Read one trace into a :class:`Session`; returns it with its format name.

    Raises :class:`LogError` for unreadable or (in strict mode) malformed input.
    """
    return read_native(path, lenient=lenient), "native"


def audit(path: str, settings: Settings | None = None, lenient: bool = False,
          rules: list[Rule] | None = None,
          severity: dict[str, Severity] | None = None) -> SessionReport:
    """Audit one trace: read it, rebuild the series, run the rules.

    Raises :class:`LogError` for bad input (strict mode).
    """
    session, fmt = load(path, lenient)
    return audit_session(session, settings, rules, severity, source_format=fmt)


def audit_paths(paths: Sequence[str], settings: Settings | None = None,
                lenient: bool = False, rules: list[Rule] | None = None,
                severity: dict[str, Severity] | None = None) -> Report:
    """Audit several traces; an unreadable trace is recorded in ``Report.errors`` and
    does not hide the others."""
    sessions: list[SessionReport] = []
    errors: list[LogError] = []
    for path in paths:
        try:
            sessions.append(audit(path, settings, lenient, rules, severity))
        except LogError as exc:
            errors.append(exc)
    return Report(sessions, errors)
