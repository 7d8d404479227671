"""Facts in the assistant's own words that name one work item
(:mod:`compaction_audit.recall.finished`).

The assistant plans a task in prose ("read `project.ex`, then implement gqc.5"); once a
call closes that task, the plan is finished work like the task's spec.  A fact counts
here only when its own text names exactly one work item: an item a command of the log
opened or closed, by its id or by the id less a project prefix the assistant left out
(``gqc.5`` for ``spotter-gqc.5``, when no other such item ends so), and no other word
that may be one (a token of the item pattern with a digit, ``gqc.6``, ``PROJ-7``; a
hyphenated word such as ``auto-generated`` names nothing).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from compaction_audit.recall.finished.commands import item_tokens

__all__ = ["named_items"]

_ASSISTANT = r"(?i)^assistant(?::|$)"
"""The assistant's own words (``assistant``, ``assistant:...``), thinking included."""


def _short_forms(known: Iterable[str]) -> dict[str, str]:
    """Each known item by itself, and by its id less a leading project prefix
    (``spotter-gqc.5`` -> ``gqc.5``) where no other known item has that short form."""
    out = {item: item for item in known}
    shorts: dict[str, list[str]] = {}
    for item in out:
        head, sep, rest = item.partition("-")
        if sep and head and rest:
            shorts.setdefault(rest, []).append(item)
    for short, items in shorts.items():
        if len(items) == 1 and short not in out:
            out[short] = items[0]
    return out


def named_items(lost: pl.DataFrame, known: Iterable[str]) -> pl.DataFrame:
    """(``_row``, ``_named``): for each row of ``lost`` (its position, columns
    ``span_source`` and ``text``) in the assistant's own words whose text names
    exactly one item of ``known`` (the items the log's commands open or close) and no
    other possible item, that item's id.  Python reads only the assistant's lost facts
    that hold a token of the item pattern."""
    forms = _short_forms(known)
    out: dict[str, list[object]] = {"_row": [], "_named": []}
    if forms and lost.height:
        rows = (lost.lazy().with_row_index("_row")
                .filter(pl.col("span_source").fill_null("").str.contains(_ASSISTANT)
                        & pl.col("text").fill_null("").str.contains(r"\w[-.]\w"))
                .select("_row", "text").collect())
        for row, text in rows.iter_rows():
            tokens = set(item_tokens(text or ""))
            named = {forms[t] for t in tokens if t in forms}
            unknown = [t for t in tokens if t not in forms and any(c.isdigit() for c in t)]
            if len(named) == 1 and not unknown:
                out["_row"].append(row)
                out["_named"].append(named.pop())
    return pl.DataFrame(out, schema={"_row": pl.UInt32, "_named": pl.String})
