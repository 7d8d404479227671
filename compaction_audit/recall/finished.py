"""Finished work: lost facts of a work item the log closed before the compaction.

An agent working through a tracker's tasks reads each task's spec (``bd show X``, an
issue, a ticket), implements it, closes it, and moves on.  A compaction after that
drops the finished tasks' specs, and rightly so: a later decision hinges on the spec
of the task in progress, not on the edge cases of one that is done and committed
(the corpus labels' rule, ``labels/README.md``: "spec details of a subtask that was
already finished and committed" do not matter).  Listed with the others, they pushed
the pending task's requirements off the first screen.

What this module reads, all from the log itself (never the summary's own account):

* **Closing calls**: a tool call (source ``tool_call``, ``tool_use`` or
  ``function_call``, with or without ``:NAME``) with a line that says close, done,
  complete, resolve, finish or merge and names work items (:data:`WORK_ITEM`: ids
  such as ``spotter-gqc.5``, ``PROJ-123``, ``gqc.4``).  ``bd close spotter-gqc.4``,
  ``jira issue move PROJ-7 Done`` (an argument list one argument per line, as a Codex
  rollout writes it, counts the words on the lines around the item).  The item is
  closed at that call's line; "not done", "don't close" close nothing, and a later
  call that reopens it (``reopen``, ``--status open``) undoes the close: the item's
  state at a fold is the last call naming it before the fold.
* **Sections**: in a span's text, an unindented line that starts (after bullets and
  marks) with a work item followed by a title separator (``·``, ``:``, ``|``, a
  dash, ``[``) heads a section, which runs to the next such line (an indented one
  lists a dependency inside the section: ``  → ○ spotter-gqc.4: ...``).  A lost
  fact on a line of a section whose item a closing call closed before the fold that
  lost it is finished work.
* **Commit messages**: a fact stated in a tool call that runs ``git commit`` is work
  done and recorded.

The ranking puts these facts in tier 7, "finished work", after the others and out of
the count of facts that matter (:mod:`compaction_audit.recall.ranking`); a fact a
person typed or asked about again keeps its tier.  A log without closing calls or
commits costs one Polars filter.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.recall.spantypes import clean_text

__all__ = ["WORK_ITEM", "finished_work"]

WORK_ITEM = (r"[A-Za-z][A-Za-z0-9_]*(?:(?:-[A-Za-z0-9_]+)+(?:\.[0-9]+)*|(?:\.[0-9]+)+)"
             r"(?![\w/]|[.\-]\w)")
"""A work item's id: a word joined to more by hyphens (``spotter-gqc``, ``PROJ-123``)
or dotted numbers (``gqc.5``), not followed by more of a path or file name
(``app-main.ts``, ``src/x``)."""

_CLOSE_WORDS = (r"(?:close[sd]?|closing|done|complete[sd]?|resolve[sd]?|finish(?:e[sd])?"
                r"|merge[sd]?)")
_CLOSE = rf"(?i)\b{_CLOSE_WORDS}\b"
_CLOSE_RE = re.compile(_CLOSE)
_NOT_CLOSE_RE = re.compile(rf"(?i)\b(?:not|never|no|\w+n't)\W+(?:\w+\W+){{0,2}}"
                           rf"{_CLOSE_WORDS}\b")
"""A closing word negated within three words: "don't close PROJ-7 yet", "PROJ-7 is
not done"."""
_REOPEN_RE = re.compile(r"(?i)\bre-?open(?:s|ed|ing)?\b|--status[= ]+(?:open|in_progress"
                        r"|in-progress|todo)\b")
"""A call that opens an item again (after it closed it, the task is not finished)."""
_ITEM_RE = re.compile(WORK_ITEM)
_HEADER_RE = re.compile(rf"(?![ \t])[^\w\n]*({WORK_ITEM})[ \t]*(?:[·:|\[\u2014\u2013]|--?\s)")
_COMMIT = r"\bgit\s+(?:-\S+\s+)*commit\b"
_COMMIT_RE = re.compile(_COMMIT)
_CALL = r"^(?:tool_call|tool_use|function_call)(?::|$)"

SCHEMA = {"finished_item": pl.String, "finished_line": pl.Int64}
"""The columns :func:`finished_work` adds: the closed work item (``"git commit"`` for
a commit message) and the log line of the call that closed it; null when the fact is
not finished work."""


def finished_work(lost: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """``lost`` (the lost table: ``span``, ``text_line``, ``fold_round``,
    ``fold_line``) with :data:`SCHEMA`'s columns added, row order kept.

    ``items``: the session's items (``id``, ``kind``, ``source``, ``text``,
    ``round``, ``source_line``).  A call closes an item for a fold when it comes
    before it: an earlier round, or the same round and an earlier log line.  Python
    reads only the closing calls and the texts of lost facts' spans that name a
    closed item (a row per line of those); the rest is Polars."""
    calls = items.filter(
        (pl.col("kind") == "span")
        & pl.col("source").fill_null("").str.to_lowercase().str.contains(_CALL)
        & pl.col("text").fill_null("").str.contains(f"{_CLOSE}|{_COMMIT}|(?i)re-?open|--status")
    ).select("id", "text", "round", "source_line")
    if lost.height == 0 or calls.height == 0:
        return lost.with_columns(pl.lit(None, t).alias(c) for c, t in SCHEMA.items())
    events: dict[str, list[Any]] = {"_item": [], "_at": [], "_closes": [], "_line": []}
    commits: dict[str, int] = {}  # span id of a commit call -> its line
    for span, text, number, line in calls.iter_rows():  # the closing calls only
        if _COMMIT_RE.search(text):
            commits[span] = line if line is not None else -1
        for item, closes in _closed_in(text.splitlines()):
            events["_item"].append(item)
            events["_at"].append(_order(number, line))
            events["_closes"].append(closes)
            events["_line"].append(line)
    # each fact's item as the fold found it: the last call naming it before the fold
    state = pl.LazyFrame(events, schema={"_item": pl.String, "_at": pl.Int64,
                                         "_closes": pl.Boolean, "_line": pl.Int64})
    return (
        lost.lazy().with_row_index("_row")
        .with_columns(pl.col("text_line").fill_null(1).alias("_text_line"),
                      (pl.col("fold_round").fill_null(_BIG) * _LINES
                       + pl.col("fold_line").fill_null(_LINES - 1)).alias("_fold_at"))
        .join(_sections(lost, items, sorted(set(events["_item"]))).lazy(),
              on=["span", "_text_line"], how="left")
        .sort("_fold_at")
        .join_asof(state.sort("_at", maintain_order=True), left_on="_fold_at",
                   right_on="_at", by="_item", strategy="backward",
                   allow_exact_matches=False, check_sortedness=False)
        .join(pl.LazyFrame({"span": list(commits), "_commit": list(commits.values())},
                           schema={"span": pl.String, "_commit": pl.Int64}),
              on="span", how="left")
        .sort("_row")
        .with_columns(
            pl.when(pl.col("_commit").is_not_null()).then(pl.lit("git commit"))
            .when(pl.col("_closes")).then(pl.col("_item")).alias("finished_item"),
            pl.when(pl.col("_commit").is_not_null()).then(pl.col("_commit"))
            .when(pl.col("_closes")).then(pl.col("_line")).alias("finished_line"))
        .drop("_row", "_text_line", "_fold_at", "_item", "_at", "_closes", "_line",
              "_commit")
        .collect())


_LINES = 1 << 31
_BIG = 1 << 30


def _order(number: int | None, line: int | None) -> int:
    """A call's place in the log as one integer: its round, then its line (a missing
    round or line first)."""
    return (number if number is not None else -1) * _LINES + (line if line is not None
                                                              else -1)


def _closed_in(rows: list[str]) -> list[tuple[str, bool]]:
    """The work items a call's text closes (``True``) or opens again (``False``): those
    named on a line that says close (or done, ...) and not "not done", "don't close";
    those named on a line that says reopen or ``--status open`` (or in progress).  In
    an argument list written one argument per line (a Codex ``["bd", "close",
    "PROJ-7"]``) an item alone on its line reads the two lines before it and the line
    after it."""
    out: list[tuple[str, bool]] = []
    for at, row in enumerate(rows):
        items = _ITEM_RE.findall(row)
        if not items:
            continue
        alone = row.strip() == items[0] and len(items) == 1
        near = "\n".join(rows[max(0, at - 2):at + 2] if alone else [row])
        if _REOPEN_RE.search(near) or _NOT_CLOSE_RE.search(near):
            out += [(item, False) for item in items]
        elif _CLOSE_RE.search(near):
            out += [(item, True) for item in items]
    return out


def _sections(lost: pl.DataFrame, items: pl.DataFrame, closed: list[str]) -> pl.DataFrame:
    """(``span``, ``_text_line``, ``_item``): for each line of the cleaned text of a
    lost fact's span that names a closed item, the work item whose section holds it
    (lines before the first section are left out)."""
    out: dict[str, list[Any]] = {"span": [], "_text_line": [], "_item": []}
    schema = {"span": pl.String, "_text_line": pl.Int64, "_item": pl.String}
    if not closed:
        return pl.DataFrame(out, schema=schema)
    texts = (items.filter(pl.col("id").is_in(lost["span"].unique().implode())
                          & pl.col("text").fill_null("").str.contains_any(closed))
             .select("id", "text").unique("id"))
    for span, text in texts.iter_rows():  # per line of the few texts that name one
        current: str | None = None
        for number, row in enumerate(clean_text(text).split("\n"), start=1):
            header = _HEADER_RE.match(row)
            if header:
                current = header.group(1)
            if current is not None:
                out["span"].append(span)
                out["_text_line"].append(number)
                out["_item"].append(current)
    return pl.DataFrame(out, schema=schema)
