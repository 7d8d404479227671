"""The discriminator taxonomy: kinds, their severity rank, one discriminator.

Seed 002, "Decision Boundary" and "Core Distinction" (see
:mod:`compaction_audit.recall.extract` for the extraction); issue 10 adds the
``condition`` and ``requirement`` kinds, issue 12 (point 6) the ``ruled-out`` kind.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["CLAUSE_KINDS", "KIND_RANK", "SCOPE_CANON", "Discriminator", "Kind"]

SCOPE_CANON = {"production": "prod", "prd": "prod", "stg": "staging", "pre-prod": "preprod"}


class Kind(StrEnum):
    """What a discriminator is; the values are the names used in reports."""

    NEGATION = "negation"
    CONSTRAINT = "constraint"
    CAUSAL = "causal"
    ORDERING = "ordering"
    CONDITION = "condition"
    REQUIREMENT = "requirement"
    RULED_OUT = "ruled-out"
    QUANTITY = "quantity"
    VERSION = "version"
    IDENTIFIER = "identifier"
    SCOPE = "scope"
    LINK = "link"


CLAUSE_KINDS = frozenset({Kind.NEGATION, Kind.CONSTRAINT, Kind.CAUSAL, Kind.ORDERING,
                          Kind.CONDITION, Kind.REQUIREMENT, Kind.RULED_OUT})
"""Kinds made of a marker and the words it governs (the rest are single tokens)."""

#: Severity of losing a kind (higher = worse).  Negations and constraints flip or bound
#: a decision and carry no topical mass, so summarizers drop them first (seed 002);
#: a lost cause hides *why* and invites repeating the failure; a lost scope applies a
#: fact to the wrong environment; quantities and version pins are exact values that
#: prose cannot reconstruct; ordering is partly recoverable from the narrative; an
#: identifier is usually still named by topic; a provenance link only costs a lookup.
#: A ruled-out finding ("ruled out DNS and TLS", "the cache is not the cause") is a
#: negative fact: losing it sends the agent back down a path already closed, so it
#: ranks with negations (issue 12, point 6).
KIND_RANK: dict[Kind, int] = {
    Kind.REQUIREMENT: 9, Kind.NEGATION: 9, Kind.CONSTRAINT: 9, Kind.RULED_OUT: 9,
    Kind.CONDITION: 8,
    Kind.CAUSAL: 7, Kind.SCOPE: 6,
    Kind.QUANTITY: 5, Kind.VERSION: 4, Kind.ORDERING: 3, Kind.IDENTIFIER: 2, Kind.LINK: 1,
}


@dataclass(frozen=True, slots=True)
class Discriminator:
    """One discriminator: ``text[start:end]`` of the source and its normalized form."""

    kind: Kind
    text: str
    norm: str
    start: int
    end: int
    line: int = 1  # 1-based line of ``start`` in the cleaned span text
