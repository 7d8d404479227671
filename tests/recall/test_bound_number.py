"""A bound is kept by a bound of the same thing, not by its number alone: "Keep at
most 5 workers" does not keep "Allow at most 5 retries" (the number was its only
identifier-like word, so any bound of 5 kept it)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import survives


@pytest.mark.parametrize(("child", "summary", "kept"), [
    ("Allow at most 5 retries.", "At most 5 retries.", True),
    ("Allow at most 5 retries.", "Keep at most 5 workers.", False),
    ("Allow at most 5 retries.", "At most 5 timeouts.", False),
    ("Keep at least 3 replicas.", "Keep at least 3 replicas running.", True),
    ("Keep at least 3 replicas.", "Keep at least 3 pods.", False),
])
def test_a_bound_needs_what_it_bounds(child: str, summary: str, kept: bool) -> None:
    [bound] = [d for d in extract(child) if d.kind is Kind.CONSTRAINT]
    assert survives(bound, summary) is kept
