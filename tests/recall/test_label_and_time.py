"""Two forms summaries use for what a child said another way (adv126 #2, #4): a cause
behind a label's colon ("Root cause: X") and a clock time with a leading zero
("09:00" for "9:00")."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import survives

CAUSE = "The 500s happen because max_overflow=0 caps the pool at 5 connections."


@pytest.mark.parametrize(("summary", "kept"), [
    ("Root cause: max_overflow=0 caps the pool at 5 connections.", True),
    ("**Root cause:** max_overflow=0 caps the pool at 5 connections.", True),
    ("The root cause is that max_overflow=0 caps the pool at 5 connections.", True),
    # a label with another cause, or with nothing after it, keeps nothing
    ("Root cause: a stale lock file in /tmp.", False),
    ("Root cause:\n\nmax_overflow was raised to 10.", False),
])
def test_a_cause_behind_a_label_is_stated(summary: str, kept: bool) -> None:
    cause = next(d for d in extract(CAUSE) if d.kind is Kind.CAUSAL)
    assert survives(cause, summary) is kept


def test_a_label_followed_by_a_marked_cause_is_that_cause() -> None:
    """"Root cause: the 500s happen because X" states X; "the 500s happen" is no cause."""
    found = [d.text for d in extract("Root cause: the 500s happen because the pool is "
                                     "capped at 5 connections.") if d.kind is Kind.CAUSAL]
    assert found == ["because the pool is capped at 5 connections"]


@pytest.mark.parametrize(("child", "summary", "kept"), [
    ("Restarts are allowed only 9:00 to 17:00 UTC.", "Restarts: 09:00 to 17:00 UTC.", True),
    ("The job starts at 09:30.", "The job starts at 9:30.", True),
    ("The job starts at 9:30.", "The job starts at 19:30.", False),
    ("The job starts at 0:30.", "The job starts at 00:30.", True),
])
def test_a_clock_time_is_the_same_with_a_leading_zero(child: str, summary: str,
                                                      kept: bool) -> None:
    time = next(d for d in extract(child) if d.kind is Kind.QUANTITY and ":" in d.norm)
    assert survives(time, summary) is kept


@pytest.mark.parametrize("text", [
    "Root cause: still under investigation, not yet identified.",
    "Root cause: see the stack trace above.",
    "Root cause: unknown.",
])
def test_a_label_that_states_no_cause_is_no_cause(text: str) -> None:
    """adv127 #5: each was a lost cause, a CA301 error."""
    assert [d for d in extract(text) if d.kind is Kind.CAUSAL] == []


def test_a_bold_label_states_its_cause() -> None:
    found = [d.norm for d in extract("**Root cause**: max_overflow=0 caps the pool.")
             if d.kind is Kind.CAUSAL]
    assert found == ["because max_overflow 0 caps pool"]


@pytest.mark.parametrize(("child", "summary", "kept"), [
    ("Restart at 09:00 UTC.", "Restart at 9:00 PM UTC.", False),  # adv127 #5
    ("Restart at 21:00 UTC.", "Restart at 9:00 PM UTC.", True),
    ("Restart at 9:00 am.", "Restart at 09:00.", True),
    ("Restart at 12:30 am.", "Restart at 0:30.", True),
])
def test_a_clock_time_reads_am_and_pm(child: str, summary: str, kept: bool) -> None:
    time = next(d for d in extract(child) if d.kind is Kind.QUANTITY and ":" in d.norm)
    assert survives(time, summary) is kept
