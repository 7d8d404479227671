"""The rule registry.  Importing this package registers every rule module."""

from compaction_audit.rules import (  # noqa: F401  (registration)
    boundary,
    faithfulness,
    provenance,
    recall,
    salience,
)
from compaction_audit.rules.base import RULES, Context, Finding, Outcome, Rule, Severity

__all__ = ["RULES", "Context", "Finding", "Outcome", "Rule", "Severity"]
