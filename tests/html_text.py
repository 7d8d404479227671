"""Helpers for tests that read an HTML report as text."""

from __future__ import annotations

import re


def unlabelled(page: str) -> str:
    """``page`` without the ``data-label`` of its table cells (the heading each cell
    shows under on a narrow screen: ``report.html.sections.html_table``), so that a
    test can match a cell as ``<td class="num">12</td>``."""
    return re.sub(r' data-label="[^"]*"', "", page)


def unbroken(page: str) -> str:
    """``page`` without the line-break aids :func:`compaction_audit.report.html.page.
    breakable` adds around log text: ``<wbr>`` and the ``<span class="nb">`` that keeps
    a flag such as ``--fail-on`` on one line."""
    return re.sub(r'<wbr>|<span class="nb">([^<]*)</span>', r"\1", page)
