"""Fenced code blocks in a span's text: code in a message is not what it says.

:mod:`compaction_audit.recall.extract` reads prose clauses outside them, and a raw
span does not restate a lost fact inside one
(:mod:`compaction_audit.recall.wholetoken`; adv55: CSS in a kept reply held a lost
``12px``).  Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["FENCE_RE", "FENCE_RUST", "blank_fences"]

FENCE_RE = re.compile(r"(?ms)^[ \t]*```.*?(?:^[ \t]*```|\Z)")
"""A fenced code block, from its opening fence to its closing one or the text's end."""

FENCE_RUST = FENCE_RE.pattern.replace("\\Z", "\\z")
""":data:`FENCE_RE` for Polars (Rust's ``regex`` ends the text with ``\\z``)."""


def blank_fences(text: str) -> str:
    """``text`` with fenced code blocks blanked (same length): prose clauses only."""
    if "```" not in text:
        return text
    return FENCE_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
