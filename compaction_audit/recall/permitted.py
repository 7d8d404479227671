"""Acts the person allowed: a later call that does what a lost rule forbade is no
violation when the person granted that act in between (adv123 #2).

A person says "Never use --force on this branch", then "Actually, --force is fine now,
go ahead and push it" (before the compaction, or after it: "You can force push
feature/api now"), and the agent pushes with ``--force``: lost-rule-violated (CA307)
read the rule as in force.  :func:`without_permitted` drops a violation when a span of
the person's (:func:`~compaction_audit.recall.ranking.person_source`) born after the
rule's span and before the call grants the act: a sentence of its that lifts
(:func:`~compaction_audit.recall.analysis.lifted.statements`: a permission or an
imperative, no question, condition, report, hedge or word of prohibition) names the
violation's object as the rule's matching does (a whole word or phrase), a flag's
common verb form counted ("force push", "force-push" name ``--force``).

Only spans holding an object's words are read in Python, once each: a few rows after
the violations are found, none when there is no violation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl

from compaction_audit.recall.analysis.lifted import statements
from compaction_audit.recall.ranking import person_source

__all__ = ["without_permitted"]

_ALIASES = {"--force": re.compile(r"(?i)\bforce[- ]?push(?:es|ed|ing)?\b")}
"""A flag the person names by its verb form ("force push it", "you can force-push")."""


def _names(said: str, obj: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``said`` names ``obj`` as the rule's matching finds it (``pattern``: a
    whole word or phrase), or by its verb form (:data:`_ALIASES`)."""
    if pattern.search(said):
        return True
    alias = _ALIASES.get(obj.split()[-1].lower()) if obj.split() else None
    return alias is not None and alias.search(said) is not None


def without_permitted(found: pl.DataFrame, items: pl.DataFrame,
                      pattern: Callable[[str], str]) -> pl.DataFrame:
    """``found`` (violations: ``span``, ``object``, ``violated_span`` and more) without
    the rows whose act a person granted between the rule's span and the call, in the
    order of :func:`~compaction_audit.recall.violations.violations`' calls: the round,
    the line, then the items table's order.  ``items``: ``id``, ``ri``, ``line``,
    ``source``, ``text``; ``pattern``: an object's regex as the rule's matching reads a
    text for it (a whole word or phrase).  The same frame when no row is dropped."""
    if not found.height:
        return found
    order = (items.select("id", "ri", "line", "source", "text").with_row_index("_p")
             .sort("ri", "line", "_p").with_row_index("_pos"))
    rows = (found.with_row_index("_row")
            .join(order.select(pl.col("id").alias("span"), pl.col("_pos").alias("_rule")),
                  on="span", how="left")
            .join(order.select(pl.col("id").alias("violated_span"),
                               pl.col("_pos").alias("_call")), on="violated_span", how="left"))
    objects = {o: re.compile(pattern(o)) for o in rows["object"].unique().to_list() if o}
    words = sorted({w.lower() for o in objects for w in o.split()}
                   | {"force" for o in objects if o.split()[-1].lower() in _ALIASES})
    first, last = rows["_rule"].min(), rows["_call"].max()
    if first is None or last is None:
        return found
    people = (order
              .filter(person_source(pl.col("source")) & pl.col("text").is_not_null()
                      & (pl.col("_pos") > first) & (pl.col("_pos") < last)
                      & pl.col("text").str.to_lowercase().str.contains_any(words))
              .select("_pos", "text"))
    grants = [(pos, obj) for pos, text in people.iter_rows()
              if (said := statements(text)) for obj, regex in objects.items()
              if _names(said, obj, regex)]
    if not grants:
        return found
    granted = pl.DataFrame(grants, schema={"_pos": pl.UInt32, "object": pl.String},
                           orient="row")
    allowed = (rows.join(granted, on="object")
               .filter((pl.col("_pos") > pl.col("_rule")) & (pl.col("_pos") < pl.col("_call")))
               .select("_row").unique())
    if not allowed.height:
        return found
    return (found.with_row_index("_row").join(allowed, on="_row", how="anti")
            .drop("_row"))
