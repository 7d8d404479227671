"""Time limits read from the environment (issue 11, class 7): the Ray connect
(``COMPACTION_AUDIT_RAY_CONNECT_TIMEOUT``) and the object store's retry budget
(``COMPACTION_AUDIT_STORE_TIMEOUT``), both documented in docs/security.md."""

from __future__ import annotations

import os

from compaction_audit.errors import UsageError

__all__ = ["env_seconds"]


def env_seconds(name: str, default: float) -> float:
    """The environment variable ``name`` as seconds (a positive number below 1e9), or
    ``default`` when it is unset or blank.  Raises :class:`UsageError` (exit 2) when it
    is set to anything else, naming the variable and its value."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 1e9:
        raise UsageError(f"{name}={text}: expected a positive number of seconds")
    return value
