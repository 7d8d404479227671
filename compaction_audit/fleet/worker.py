"""The long-lived worker of a fleet run: one per CPU of the cluster, created once per
run as a Ray actor (:mod:`~compaction_audit.fleet.ray_engine`), holding the run's
settings and rules, auditing one trace per call.

Plain Python (no Ray import): the engine wraps the class with ``ray.remote``; a Ray
worker process imports this module, hence the auditor, once, when the actor starts.
"""

from __future__ import annotations

import os

from compaction_audit import __version__
from compaction_audit.errors import LogError
from compaction_audit.io.remote import is_url
from compaction_audit.report.model import SessionReport
from compaction_audit.rules.base import Rule, Severity
from compaction_audit.settings import Settings

STORE_PREFIXES = ("AWS_", "GOOGLE_", "AZURE_")
"""Environment variables the object stores are configured by (:mod:`compaction_audit.
io.remote`: obstore reads them where the trace is read, on the Ray worker)."""
NAMES_SHOWN = 3
"""Variables a worker's read error names (it counts the rest)."""


def store_names() -> tuple[str, ...]:
    """The names (never the values) of this process's :data:`STORE_PREFIXES` variables,
    sorted: a worker whose environment lacks some says so when it cannot read an object
    (usertest74 F11: a cluster started without ``AWS_ENDPOINT_URL`` read every object
    from the default endpoint, and the error was instance metadata's, no word of where
    it ran)."""
    return tuple(sorted(n for n in os.environ if n.startswith(STORE_PREFIXES)))


def _lacking_note(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN]) + (
        f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")
    return (f" (read on a Ray worker whose environment lacks {shown}, which this "
            "command's has: set the object store's variables where the cluster runs)")


class TraceAuditor:
    """Audit traces with fixed options; results are what
    :func:`compaction_audit.api.audit_paths` collects (a :class:`SessionReport`, or
    the :class:`LogError` of an unreadable trace), so the reporters see no
    difference."""

    def __init__(self, settings: Settings | None, lenient: bool, rules: list[Rule] | None,
                 severity: dict[str, Severity] | None, cwd: str | None = None,
                 store: tuple[str, ...] = ()) -> None:
        """``cwd``: the driver's working directory, made this worker's when it exists
        here, so that relative trace paths mean what they mean to the driver (the
        engine starts Ray from a private empty folder: :func:`~compaction_audit.fleet.
        ray_engine.connect`); ``store``: the driver's :func:`store_names`."""
        if cwd is not None and os.path.isdir(cwd):
            os.chdir(cwd)
        self._lacking = tuple(name for name in store if name not in os.environ)
        from compaction_audit import api  # the import a worker pays once

        self._audit = api.audit_or_error
        self._options = (settings, lenient, rules, severity)

    def ready(self) -> tuple[str, int]:
        """``(version of compaction-audit, pid)``: the worker started; the engine
        refuses workers that run another version than the driver's."""
        return __version__, os.getpid()

    def audit(self, index: int, path: str) -> tuple[int, SessionReport | LogError]:
        """Audit ``path`` (a local path or an object storage URL, read here); returns
        ``index`` with the result: as a local pool worker does
        (:func:`~compaction_audit.api.audit_or_error`), a bug met on this trace is its
        one ``internal error`` line and the run's other traces are still audited (adv66
        #2: the whole run ended with that line and no report)."""
        settings, lenient, rules, severity = self._options
        result = self._audit(path, settings, lenient, rules, severity)
        if isinstance(result, LogError) and self._lacking and is_url(path) \
                and not result.line:  # an object this worker could not read
            result = LogError(result.path, result.line, result.message + _lacking_note(
                self._lacking), result.field)
        return index, result
