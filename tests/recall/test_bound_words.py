"""A bound in other words (adv126 #6): "up to N" and "max N" are the ``max`` family
when they bound a number, and a bound marker followed by its number alone takes what
it bounds from its left ("Retries capped at 5").  "up to" after a verb whose particle
it is ("bring pool_size up to 20") is a motion, no bound.  A number spelled as a word
is compared as its digits."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import flipped, survives


def _bounds(text: str) -> list[str]:
    return [d.norm for d in extract(text) if d.kind is Kind.CONSTRAINT]


@pytest.mark.parametrize(("text", "norms"), [
    ("Up to 5 retries are allowed.", ["max 5 retries allowed"]),
    ("Keep up to 5 backups.", ["max 5 backups"]),
    ("Process up to 1,000 rows per batch.", ["max 1000 rows per batch"]),
    ("max 5 retries", ["max 5 retries"]),
    ("Retries capped at 5.", ["max retries 5"]),
    ("The pool is limited to 20.", ["max pool 20"]),
    # no number after it: no bound
    ("It is up to you.", []),
    ("The fetcher retries up to three times.", []),  # a number in digits only
    ("The max is 5.", []),
    ("Set max_tokens to 4096.", []),
    # a verb's particle: a motion to a value, no bound
    ("Bring pool_size up to 20.", []),
    ("We scaled the deployment up to 5 replicas.", []),
    ("Ramp traffic up to 25% then wait.", []),
    ("Set up to 3 workers.", []),
    ("Count up to 10.", []),
])
def test_bound_words(text: str, norms: list[str]) -> None:
    assert _bounds(text) == norms


@pytest.mark.parametrize(("summary", "kept"), [
    ("Up to 5 retries are allowed.", True),
    ("Retries capped at 5.", True),
    ("Retries are limited to 5.", True),
    ("At most five retries.", True),  # a spelled number is compared as its digits
    ("At most six retries.", False),
    ("Up to 6 retries are allowed.", False),
    ("Workers capped at 5.", False),  # the same number bounds another thing
    ("Bring retries up to 5.", False),  # a motion, no bound
])
def test_a_bound_in_other_words_is_kept(summary: str, kept: bool) -> None:
    (bound,) = [d for d in extract("Allow at most 5 retries.") if d.kind is Kind.CONSTRAINT]
    assert survives(bound, summary) is kept


@pytest.mark.parametrize(("child", "summary", "reversed_"), [
    ("Use at least 3 replicas.", "Up to 3 replicas.", True),
    ("Allow at most 5 retries.", "Use at least 5 retries.", True),
    ("Allow at most 5 retries.", "Retries capped at 5.", False),
])
def test_up_to_reverses_at_least(child: str, summary: str, reversed_: bool) -> None:
    (bound,) = [d for d in extract(child) if d.kind is Kind.CONSTRAINT]
    assert flipped(bound, summary) is reversed_
