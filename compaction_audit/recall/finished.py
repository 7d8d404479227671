"""Finished work: lost facts of a work item the log closed before the compaction.

An agent working through a tracker's tasks reads each task's spec (``bd show X``, an
issue, a ticket), implements it, closes it, and moves on.  A compaction after that
drops the finished tasks' specs, and rightly so: a later decision hinges on the spec
of the task in progress, not on the edge cases of one that is done and committed
(the corpus labels' rule, ``labels/README.md``: "spec details of a subtask that was
already finished and committed" do not matter).  Listed with the others, they pushed
the pending task's requirements off the first screen.

What this module reads, all from the log itself (never the summary's own account).
A wrong "finished" hides a fact that matters, so each rule is narrow:

* **Closing commands**: in a tool call (source ``tool_call``, ``tool_use`` or
  ``function_call``, with or without ``:NAME``), a shell command (a line, or a part of
  one between ``&&``, ``||``, ``;`` and ``|``) made of a program, at most two more
  words, a closing verb (close, resolve, complete, finish, done) and then, after any
  flags, the work items it closes (:data:`WORK_ITEM`: ``spotter-gqc.5``,
  ``PROJ-123``, ``gqc.4``): ``bd close spotter-gqc.4 spotter-gqc.5``, ``jira issue
  resolve PROJ-7``.  An argument list written one argument per line (a Codex rollout's
  ``["bd", "close", "PROJ-7"]``) is read as one command.  A comment, prose or code
  that mentions closing ("don't close PROJ-7 yet", ``// TODO(PROJ-7): close the
  socket``, a shell loop's ``done``) closes nothing.  A later command that reopens the
  item (``reopen``, ``--status open``, ``in_progress``) undoes the close: the item's
  state at a loss is the last command naming it before the loss.
* **Sections**: in a document a tool returned or a file (not a person's or the
  assistant's words, not a tool call), an unindented line that starts with the work
  item (after marks such as ``○``, ``✓``, ``#``; not after a list bullet ``-``,
  ``*``, ``+``, ``>`` or a number) and a title separator (``·``, ``:``, ``|``, a dash,
  ``[``) heads a section, which runs to the next such line or to a Markdown heading
  that names one work item (``## Upload queue (PROJ-8)``), which heads that item's
  section.  A dependency listed inside a section (indented, or as a list item) stays
  inside it.
* **Epics**: an item with items below it (``spotter-gqc`` over ``spotter-gqc.6``)
  is finished only when every one of them seen in the log is closed at the loss.
* **Commit messages**: a fact stated in a tool call that runs ``git commit`` (a
  command of its own, not a mention in a plan) is work done and recorded.

The ranking puts these facts in tier 7, "finished work", after the others and out of
the count of facts that matter (:mod:`compaction_audit.recall.ranking`); a fact a
person typed or asked about again keeps its tier.  A log without such calls costs
one Polars filter.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.recall.ranking import person_source
from compaction_audit.recall.spantypes import clean_text

__all__ = ["SCHEMA", "WORK_ITEM", "finished_work"]

WORK_ITEM = (r"(?<![\w.\-/])[A-Za-z][A-Za-z0-9_]*"
             r"(?:(?:-[A-Za-z0-9_]+)+(?:\.[0-9]+)*|(?:\.[0-9]+)+)(?![\w/]|[.\-]\w)")
"""A work item's id: a word joined to more by hyphens (``spotter-gqc``, ``PROJ-123``)
or dotted numbers (``gqc.5``), not inside a longer token, not followed by more of a
path or file name (``app-main.ts``, ``src/x``)."""

_ITEM_RE = re.compile(WORK_ITEM)
_CLOSING = r"(?:close|resolve|complete|finish|done)"
_COMMAND_RE = re.compile(
    rf"^[A-Za-z][\w.-]*(?:[ \t]+[A-Za-z][\w-]*){{0,2}}?[ \t]+{_CLOSING}"
    rf"((?:[ \t]+-\S+)*(?:[ \t]+{WORK_ITEM})+)(?=[ \t]|$)", re.IGNORECASE)
"""A closing command: program, up to two words, the verb, flags, then the items."""
_REOPEN_RE = re.compile(
    r"^[A-Za-z][\w.-]*(?:[ \t]+[A-Za-z][\w-]*){0,2}?[ \t]+(?:re-?open|update|edit|set)"
    r"\b(?P<rest>.*)$", re.IGNORECASE)
_OPEN_STATE_RE = re.compile(r"(?i)(?:\breopen|--status[= ]+(?:open|in[_-]progress|todo)"
                            r"|\bre-?open)")
_SPLIT_RE = re.compile(r"&&|\|\||[;|\n]")
_COMMIT_RE = re.compile(r"^git(?:[ \t]+-\S+(?:[ \t]+[^-\s]\S*)?)*[ \t]+commit\b")
_HEADER_RE = re.compile(
    rf"(?![ \t\u00a0])(?![-*+>\d])(?:[^\w\s-]+[ \t]+)*({WORK_ITEM})[ \t]*"
    r"(?:[·:|\[\u2014\u2013]|--?[ \t])")
_HEADING_RE = re.compile(r"^#{1,6}[ \t]")
_CALL = r"^(?:tool_call|tool_use|function_call)(?::|$)"
_LINE_CAP = 2_000
"""Characters of a line read for work items: an id is short, and the patterns stay
linear in the text (a line of 128 KB is read in its first 2,000)."""

SCHEMA = {"finished_item": pl.String, "finished_line": pl.Int64}
"""The columns :func:`finished_work` adds: the closed work item (``"git commit"`` for
a commit message) and the log line of the call that closed it; null when the fact is
not finished work."""

_LINES = 1 << 31
_BIG = 1 << 30


def finished_work(lost: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """``lost`` (the lost table: ``span``, ``text_line``, ``fold_round``,
    ``fold_line``, ``lost_round``, ``lost_line``) with :data:`SCHEMA`'s columns added,
    row order kept.

    ``items``: the session's items (``id``, ``kind``, ``source``, ``text``,
    ``round``, ``source_line``).  A fact is judged where it was lost: at its fold, or
    where it became unrecoverable when no fold dropped it; a command counts when it
    comes before that (an earlier round, or the same round and an earlier log line).
    Python reads only the calls that hold a closing or commit command and the lines of
    lost facts' documents that name a closed item; the rest is Polars."""
    calls = items.filter(
        (pl.col("kind") == "span")
        & pl.col("source").fill_null("").str.to_lowercase().str.contains(_CALL)
        & pl.col("text").fill_null("").str.contains(
            rf"(?i)\b(?:{_CLOSING}|re-?open|commit)\b|--status")
    ).select("id", "text", "round", "source_line")
    if lost.height == 0 or calls.height == 0:
        return lost.with_columns(pl.lit(None, t).alias(c) for c, t in SCHEMA.items())
    events: dict[str, list[Any]] = {"_item": [], "_at": [], "_closes": [], "_line": []}
    commits: dict[str, int] = {}  # span id of a commit call -> its line
    for span, text, number, line in calls.iter_rows():
        commands = _commands(text)
        if any(_COMMIT_RE.match(command) for command in commands):
            commits[span] = line if line is not None else -1
        for item, closes in _closings(commands):
            events["_item"].append(item)
            events["_at"].append(_order(number, line))
            events["_closes"].append(closes)
            events["_line"].append(line)
    state = pl.LazyFrame(events, schema={"_item": pl.String, "_at": pl.Int64,
                                         "_closes": pl.Boolean, "_line": pl.Int64}
                         ).sort("_at", maintain_order=True)
    closed = sorted({i for i, c in zip(events["_item"], events["_closes"], strict=True)
                     if c})
    sections = _sections(lost, items, closed)
    known = set(events["_item"]) | set(sections["_item"].to_list())
    children = pl.LazyFrame(
        [(parent, child) for parent in closed for child in known
         if child.startswith(parent + ".") or child.startswith(parent + "-")],
        schema={"_item": pl.String, "_child": pl.String}, orient="row")
    at_loss = (pl.col("fold_round").fill_null(pl.col("lost_round")).fill_null(_BIG) * _LINES
               + pl.when(pl.col("fold_round").is_not_null()).then(pl.col("fold_line"))
               .otherwise(pl.col("lost_line")).fill_null(_LINES - 1))
    rows = (
        lost.lazy().with_row_index("_row")
        .with_columns(pl.col("text_line").fill_null(1).alias("_text_line"),
                      at_loss.alias("_loss_at"))
        .join(sections.lazy(), on=["span", "_text_line"], how="left")
        .sort("_loss_at")
        .join_asof(state, left_on="_loss_at", right_on="_at", by="_item",
                   strategy="backward", allow_exact_matches=False, check_sortedness=False)
    )
    # an epic is finished only when each item below it is closed at the same loss
    open_below = (
        rows.filter(pl.col("_closes").fill_null(False)).select("_row", "_item", "_loss_at")
        .join(children, on="_item").drop("_item").rename({"_child": "_item"})
        .sort("_loss_at")
        .join_asof(state.select("_item", "_at", pl.col("_closes").alias("_child_closes")),
                   left_on="_loss_at", right_on="_at", by="_item", strategy="backward",
                   allow_exact_matches=False, check_sortedness=False)
        .filter(~pl.col("_child_closes").fill_null(False))
        .select("_row").unique().with_columns(pl.lit(True).alias("_open_below"))
    )
    finished = pl.col("_closes").fill_null(False) & pl.col("_open_below").is_null()
    commit = pl.col("_commit").is_not_null()
    return (
        rows.join(open_below, on="_row", how="left")
        .join(pl.LazyFrame({"span": list(commits), "_commit": list(commits.values())},
                           schema={"span": pl.String, "_commit": pl.Int64}),
              on="span", how="left")
        .sort("_row")
        .with_columns(
            pl.when(commit).then(pl.lit("git commit"))
            .when(finished).then(pl.col("_item")).alias("finished_item"),
            pl.when(commit).then(pl.col("_commit"))
            .when(finished).then(pl.col("_line")).alias("finished_line"))
        .select(*lost.columns, "finished_item", "finished_line")
        .collect())


def _order(number: int | None, line: int | None) -> int:
    """A call's place in the log as one integer: its round, then its line (a missing
    round or line first)."""
    return ((number if number is not None else -1) * _LINES
            + (line if line is not None else -1))


def _commands(text: str) -> list[str]:
    """The shell commands of a call's text: each line, or part of one between
    ``&&``, ``||``, ``;`` and ``|``, stripped; and when the first line is one word,
    the lines joined as one argument list (a Codex ``["bd", "close", "PROJ-7"]``,
    ``["git", "commit", "-m", "..."]``; ``["bash", "-lc", "bd close PROJ-7"]`` is
    read by its lines)."""
    rows = [row.strip()[:_LINE_CAP] for row in text.splitlines() if row.strip()]
    if len(rows) > 1 and not any(c in rows[0] for c in " \t"):
        rows.append(" ".join(rows)[:_LINE_CAP])
    return [part.strip() for row in rows for part in _SPLIT_RE.split(row) if part.strip()]


def _closings(commands: list[str]) -> list[tuple[str, bool]]:
    """(item, closes) for each work item a command closes (``True``) or opens again
    (``False``: ``reopen X``, ``update X --status in_progress``)."""
    out: list[tuple[str, bool]] = []
    for command in commands:
        closing = _COMMAND_RE.match(command)
        if closing:
            out += [(item, True) for item in _ITEM_RE.findall(closing.group(1))]
            continue
        reopening = _REOPEN_RE.match(command)
        if reopening and _OPEN_STATE_RE.search(command):
            out += [(item, False) for item in _ITEM_RE.findall(reopening.group("rest"))]
    return out


def _sections(lost: pl.DataFrame, items: pl.DataFrame, closed: list[str]) -> pl.DataFrame:
    """(``span``, ``_text_line``, ``_item``): for each line of the cleaned text of a
    lost fact's document span that names a closed item, the work item whose section
    holds it (lines before the first section are left out)."""
    out: dict[str, list[Any]] = {"span": [], "_text_line": [], "_item": []}
    schema = {"span": pl.String, "_text_line": pl.Int64, "_item": pl.String}
    if not closed:
        return pl.DataFrame(out, schema=schema)
    source = pl.col("source").fill_null("").str.to_lowercase()
    document = (pl.col("source").is_not_null() & ~person_source(source)
                & ~source.str.contains(r"^assistant(?::|$)") & ~source.str.contains(_CALL))
    texts = (items.filter(pl.col("id").is_in(lost["span"].unique().implode()) & document
                          & pl.col("text").fill_null("").str.contains_any(closed))
             .select("id", "text").unique("id"))
    for span, text in texts.iter_rows():  # per line of the few texts that name one
        current: str | None = None
        for number, row in enumerate(clean_text(text).split("\n"), start=1):
            row = row[:_LINE_CAP]
            header = _HEADER_RE.match(row)
            if header:
                current = header.group(1)
            elif _HEADING_RE.match(row):
                named = set(_ITEM_RE.findall(row))
                if len(named) == 1:
                    current = named.pop()
            if current is not None:
                out["span"].append(span)
                out["_text_line"].append(number)
                out["_item"].append(current)
    return pl.DataFrame(out, schema=schema)
