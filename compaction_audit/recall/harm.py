"""Harm shown by action: a later span that reused a value the compaction lost.

Issue 10, point 4: a lost discriminator matters most when the agent acts on it after the
fold, e.g. ``order delete ORD-5501 --cascade`` run in the round that lost "Test order
ORD-5501 verified".  A person stating it again ("asked again") is the other evidence;
:mod:`compaction_audit.recall.analysis` finds that one from user spans.

Reuse: a span born at or after the round the key was lost (the compaction's own round
included: the new spans of that round come after the fold), other than the span the
key was first seen in, that holds the same discriminator key and is an *action*: a tool
call (source ``tool_call:*``) or a span whose text reads as a destructive command
(:data:`DESTRUCTIVE_RE`).  A destructive one is reported first, then the earliest.
"""

from __future__ import annotations

import polars as pl

__all__ = ["DESTRUCTIVE_RE", "reuse"]

DESTRUCTIVE_RE = (
    r"(?i)(?:^|[\s;&|(`'\"])(?:rm|rmdir|delete|del|drop|truncate|destroy|purge|wipe|erase"
    r"|kill|pkill|terminate|revoke|uninstall|deprovision|reset\s+--hard|push\s+(?:-f|--force)"
    r"|--force|-rf|--cascade|--hard|--prune|overwrite)(?:$|[\s;&|)`'\"])"
)
"""A destructive command word or flag (rm, delete, drop, truncate, destroy, --force,
--cascade, reset --hard...), as a Polars regex over the span text."""


def reuse(lost: pl.DataFrame, occurrences: pl.DataFrame, items: pl.DataFrame,
          rounds: pl.DataFrame) -> pl.DataFrame:
    """For each lost key, the first later action that reused it.

    ``lost``: ``key``, ``start`` (round index of the loss), ``span`` (where the key was
    first seen).  ``occurrences``: ``key``, ``id`` for every span that holds a key
    (tool-output identifiers included).  ``items``: the session items (``id``, ``ri``,
    ``source``, ``text``).  ``rounds``: ``ri``, ``round``.  Returns ``key``,
    ``reused_round`` (round number), ``reused_span`` (item id); keys never reused are
    absent.
    """
    actions = items.filter(pl.col("kind") == "span").select(
        "id", "ri",
        pl.col("text").fill_null("").str.contains(DESTRUCTIVE_RE).alias("destructive"),
        pl.col("source").fill_null("").str.starts_with("tool_call:").alias("call"))
    return (
        lost.join(occurrences.unique(), on="key")
        .filter(pl.col("id") != pl.col("span"))
        .join(actions, on="id")
        .filter((pl.col("ri") >= pl.col("start")) & (pl.col("call") | pl.col("destructive")))
        .join(rounds.select("ri", "round"), on="ri")
        .sort(["key", "destructive", "ri", "id"], descending=[False, True, False, False])
        .group_by("key", maintain_order=True)
        .agg(pl.col("round").first().alias("reused_round"),
             pl.col("id").first().alias("reused_span"))
    )
