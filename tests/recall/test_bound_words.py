"""A bound marker followed by its number alone takes what it bounds from its left
(adv126 #6): "Retries capped at 5" is ``max retries 5``, which keeps "at most 5
retries".  "up to N", "max N" and spelled numbers are not read (adv129 #3, #4: "We
spun up to 3 replicas" reversed "at least 3 replicas", "twenty two" kept a bound of 2)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import flipped, survives


def _bounds(text: str) -> list[str]:
    return [d.norm for d in extract(text) if d.kind is Kind.CONSTRAINT]


@pytest.mark.parametrize(("text", "norms"), [
    ("Retries capped at 5.", ["max retries 5"]),
    ("The pool is limited to 20.", ["max pool 20"]),
    ("Replicas stay at least 3.", ["min replicas stay 3"]),
    ("Allow at most 5 retries.", ["max 5 retries"]),  # its own words: as before
    ("Allow at most five.", []),  # a word, not its number: too few words, as before
    # not bound markers
    ("Up to 5 retries are allowed.", []),
    ("We spun up to 3 replicas for the load test.", []),
    ("I saw max 3 failures in the logs yesterday.", []),
])
def test_bound_words(text: str, norms: list[str]) -> None:
    assert _bounds(text) == norms


@pytest.mark.parametrize(("summary", "kept"), [
    ("Retries capped at 5.", True),
    ("Retries are limited to 5.", True),
    ("Retries capped at 6.", False),
    ("Workers capped at 5.", False),  # the same number bounds another thing
    ("Keep at most twenty two workers.", False),
])
def test_a_bound_in_other_words_is_kept(summary: str, kept: bool) -> None:
    (bound,) = [d for d in extract("Allow at most 5 retries.") if d.kind is Kind.CONSTRAINT]
    assert survives(bound, summary) is kept


@pytest.mark.parametrize(("summary", "reversed_"), [
    ("Use at least 5 retries.", True),
    ("Retries capped at 5.", False),
    ("We spun up to 3 replicas.", False),
])
def test_a_bound_reversed(summary: str, reversed_: bool) -> None:
    (bound,) = [d for d in extract("Allow at most 5 retries.") if d.kind is Kind.CONSTRAINT]
    assert flipped(bound, summary) is reversed_
