"""Fenced code blocks and inline code spans in a span's text: code in a message is not
what it says.

:mod:`compaction_audit.recall.extract` reads prose clauses outside them, and a raw
span does not restate a lost fact inside one
(:mod:`compaction_audit.recall.wholetoken`; adv55: CSS in a kept reply held a lost
``12px``).  Standard library only.
"""

from __future__ import annotations

import re

__all__ = ["CODE_SPAN_RE", "FENCE_RE", "FENCE_RUST", "blank_code_spans", "blank_fences"]

FENCE_RE = re.compile(r"(?ms)^[ \t]*```.*?(?:^[ \t]*```|\Z)")
"""A fenced code block, from its opening fence to its closing one or the text's end."""

FENCE_RUST = FENCE_RE.pattern.replace("\\Z", "\\z")
""":data:`FENCE_RE` for Polars (Rust's ``regex`` ends the text with ``\\z``)."""


def blank_fences(text: str) -> str:
    """``text`` with fenced code blocks blanked (same length): prose clauses only."""
    if "```" not in text:
        return text
    return FENCE_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


CODE_SPAN_RE = re.compile(r"`[^`\n]*`")
"""An inline code span, on one line."""


def blank_code_spans(text: str) -> str:
    """``text`` with inline code spans blanked (same length): their punctuation ends no
    sentence (Elixir's ``allow_nil?``), their ``~~`` strikes nothing (``~~/bin``)."""
    if "`" not in text:
        return text
    return CODE_SPAN_RE.sub(lambda m: " " * len(m.group()), text)
