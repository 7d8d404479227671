"""The HTML report (issue 13, section 1): one self-contained page per run of ``audit``
or ``diff``, readable offline from ``file://``.

Charts are Vega-Lite specs built with Altair; Vega, Vega-Lite and vega-embed are
inlined from ``vl-convert-python`` (both in the ``[html]`` extra).  Nothing is fetched:
the page's Content-Security-Policy allows no source but its own two scripts (by
hash).  The same input gives the same bytes.  Modules: :mod:`.data` (bounded chart and
table data from the report model), :mod:`.charts` (the specs), :mod:`.sections` (HTML
fragments), :mod:`.page` (escaping, scripts, policy), :mod:`.audit_page`,
:mod:`.diff_page`.
"""

from __future__ import annotations

from compaction_audit.errors import UsageError

EXTRA_HINT = "pip install 'compaction-audit[html]' (in a clone: pip install '.[html]')"
"""How to install the extra: from the package index, or from a clone of the repository,
where the README installs it (ux5 F7: the first alone failed there)."""


def require_extra() -> None:
    """Raise :class:`~compaction_audit.errors.UsageError` (exit 2, one line) when the
    ``[html]`` extra (altair, vl-convert-python) is not installed."""
    try:
        import altair  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"--format html needs the [html] extra ({exc.name} is missing): "
                         f"{EXTRA_HINT}") from None
