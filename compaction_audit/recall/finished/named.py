"""Facts in the assistant's own words that name one work item
(:mod:`compaction_audit.recall.finished`).

The assistant plans a task in prose ("read `project.ex`, then implement gqc.5"); once a
call closes that task, the plan is finished work like the task's spec.  A fact counts
here only when it is such a plan step: an ordering clause (adv52: a negation, a
condition or a constraint about the item outlives it) with a verb of doing the work
right before the item ("then implement gqc.5", "start on PROJ-7", "move on to the task
gqc.6") and no rule word of its own ("without", "only", "not", "until"), exactly
one work item named (an item a command of the log opened or closed, by its id or by
the id less a project prefix the assistant left out: ``gqc.5`` for ``spotter-gqc.5``,
when no other such item ends so and the rest is no version, ``v1.2``), no other word
that may be one (a token of the item pattern with a digit, ``gqc.6``, ``PROJ-7``; a
hyphenated word such as ``auto-generated`` names nothing), and no mark of a standing
rule anywhere in the message ("from now on", "always", "never", "every", "per the
user": adv51 showed a rule the agent stated while working on an item hidden as that
item's finished work).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

from compaction_audit.recall.finished.commands import item_tokens

__all__ = ["named_items"]

_ASSISTANT = r"(?i)^assistant(?::|$)"
"""The assistant's own words (``assistant``, ``assistant:...``), thinking included."""
_VERSION = re.compile(r"v?\d[\w.]*")
"""A short form that reads as a version (``v1.2`` of ``release-v1.2``): no short form."""
_PLAN = (r"(?i)\b(?:implement(?:ing)?|start(?:ing)?(?: on| with)?|work(?:ing)? on"
         r"|pick(?:ing)? up|begin(?:ning)?(?: with)?|tackl(?:e|ing)|finish(?:ing)?"
         r"|complet(?:e|ing)|mov(?:e|ing) on to|proceed(?:ing)? (?:with|to)"
         r"|continu(?:e|ing) (?:with|on))\s+(?:(?:the|task|issue|ticket|item)\s+)*`?")
"""A verb of doing the work, right before the item it names (:func:`_plans`)."""
_STANDING = re.compile(r"(?i)\b(?:from now on|always|never|every|all (?:later|future|"
                       r"remaining|other)|per the user|the user (?:said|says|asked|wants|"
                       r"wrote)|going forward|in future)\b")
"""A mark of a rule that outlives the item it was stated under, looked for in the whole
message (adv52: "From now on:" on the line before)."""
_RULE = re.compile(r"(?i)\b(?:not|no|never|without|only|unless|until|must|avoid|except"
                   r"|whenever|instead)\b|n't\b")
"""A rule inside the plan step itself ("implement X without touching Y", "only
implement X after Y"): it outlives the item (adv52)."""


def _plans(text: str, token: str) -> bool:
    """Whether ``text`` says to do the work of ``token`` ("implement gqc.5")."""
    return re.search(_PLAN + re.escape(token) + r"`?(?![\w.-])", text) is not None


def _short_forms(known: Iterable[str]) -> dict[str, str]:
    """Each known item by itself, and by its id less a leading project prefix
    (``spotter-gqc.5`` -> ``gqc.5``) where no other known item has that short form."""
    out = {item: item for item in known}
    shorts: dict[str, list[str]] = {}
    for item in out:
        head, sep, rest = item.partition("-")
        if sep and head and rest and not _VERSION.fullmatch(rest):
            shorts.setdefault(rest, []).append(item)
    for short, items in shorts.items():
        if len(items) == 1 and short not in out:
            out[short] = items[0]
    return out


def named_items(lost: pl.DataFrame, known: Iterable[str], items: pl.DataFrame
                ) -> pl.DataFrame:
    """(``_row``, ``_named``): for each row of ``lost`` (its position; columns
    ``kind``, ``span``, ``span_source`` and ``text``; the message is the ``text`` of
    its span in ``items``) in the assistant's own words whose text is a plan
    step (see the module docstring) naming exactly one item of ``known`` (the items
    the log's commands open or close) and no other possible item, that item's id.
    Python reads only the assistant's lost facts that hold a token of the item
    pattern."""
    forms = _short_forms(known)
    out: dict[str, list[object]] = {"_row": [], "_named": []}
    if forms and lost.height:
        rows = (lost.lazy().with_row_index("_row")
                .filter((pl.col("kind") == "ordering")
                        & pl.col("span_source").fill_null("").str.contains(_ASSISTANT)
                        & pl.col("text").fill_null("").str.contains(r"\w[-.]\w"))
                .join(items.lazy().select(pl.col("id").alias("span"),
                                          pl.col("text").alias("_span_text")),
                      on="span", how="left")
                .select("_row", "text", "_span_text").collect())
        for row, text, whole in rows.iter_rows():
            tokens = set(item_tokens(text or ""))
            named = {forms[t] for t in tokens if t in forms}
            unknown = [t for t in tokens if t not in forms and any(c.isdigit() for c in t)]
            if (len(named) == 1 and not unknown and _RULE.search(text) is None
                    and any(_plans(text, t) for t in tokens if t in forms)
                    and not _STANDING.search(whole or text)):
                out["_row"].append(row)
                out["_named"].append(named.pop())
    return pl.DataFrame(out, schema={"_row": pl.UInt32, "_named": pl.String})
