"""Finished work: lost facts of a work item the log closed before the compaction.

An agent working through a tracker's tasks reads each task's spec (``bd show X``, an
issue, a ticket), implements it, closes it, and moves on.  A compaction after that
drops the finished tasks' specs, and rightly so: a later decision hinges on the spec
of the task in progress, not on the edge cases of one that is done and committed
(the corpus labels' rule, ``labels/README.md``: "spec details of a subtask that was
already finished and committed" do not matter).  Listed with the others, they pushed
the pending task's requirements off the first screen.

What this package reads, all from the log itself (never the summary's account).  A
wrong "finished" hides a fact that matters, so each rule is narrow:

* **Closing commands** (:mod:`.commands`): in a call of a shell tool (``Bash``,
  ``shell``, ``exec_command``, ``execute_command``...), a shell command that closes work items
  (``bd close spotter-gqc.4 spotter-gqc.5``, ``bd update X --status closed``, ``jira
  issue resolve PROJ-7``), read as a shell reads it: quoted strings and
  here-documents are data, and prose that goes on after the item is no command.  A
  later command that opens the item again (``reopen``, ``--status in_progress``)
  undoes the close: an item's state at a loss is the last command naming it before.
* **Sections** (:mod:`.sections`): in a document a tool returned or a file (not a
  person's or the assistant's words, not a tool call), a header line that starts with
  the item heads its section.
* **Epics**: an item with items below it (``spotter-gqc`` over ``spotter-gqc.6``,
  anywhere in the log) is finished only when every one of them is closed at the loss.
* **Commit messages**: a fact on the lines of a ``git commit`` command's message (a
  command of its own, not a mention in a plan or a string).
* **Failed calls** (:func:`failed_calls`): a call whose result says it failed closes
  nothing and commits nothing.

The ranking puts these facts in tier 7, "finished work", after the others and out of
the count of facts that matter (:mod:`compaction_audit.recall.ranking`); a fact a
person typed or asked about again keeps its tier.  A log without such calls costs
one Polars filter.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.recall.finished.commands import (
    ARGV_TOOLS,
    closings,
    commands,
    commit_lines,
    item_tokens,
)
from compaction_audit.recall.finished.named import named_items
from compaction_audit.recall.finished.sections import items_of_lines
from compaction_audit.recall.needles import contains_any
from compaction_audit.recall.ranking import document_source
from compaction_audit.recall.spantypes import clean_text

__all__ = ["SCHEMA", "finished_work"]

SCHEMA = {"finished_item": pl.String, "finished_line": pl.Int64}
"""The columns :func:`finished_work` adds: the closed work item (``"git commit"`` for
a commit message) and the log line of the call that closed it; null when the fact is
not finished work."""

_SHELL = (r"(?i)^(?:tool_call|tool_use|function_call):(?:[\w.-]*(?:bash|shell|exec|command"
          r"|terminal|cmd|zsh|powershell)[\w.-]*|sh)$")
"""A call of a shell tool (Claude Code's ``Bash``, Codex's ``shell`` and
``exec_command``, Cline's ``execute_command``, Gemini's ``run_shell_command``): the
only calls whose text is read as commands; a todo list, a plan or a file a call writes
("Commit and close PROJ-7" as a pending todo) closes nothing."""
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
    Python reads only the calls that hold a closing, state or commit command and the
    lines of lost facts' documents that name a closed item; the rest is Polars."""
    calls = items.filter(
        (pl.col("kind") == "span")
        & pl.col("source").fill_null("").str.contains(_SHELL)
        & pl.col("text").fill_null("").str.contains(
            r"(?i)\b(?:close|resolve|complete|finish|done|re-?open|update|edit|set|move"
            r"|transition|commit)\b")
    ).select("id", "text", "round", "source_line",
             pl.col("source").str.contains(ARGV_TOOLS).alias("argv"))
    if lost.height == 0 or calls.height == 0:
        return lost.with_columns(pl.lit(None, t).alias(c) for c, t in SCHEMA.items())
    events: dict[str, list[Any]] = {"_item": [], "_at": [], "_closes": [], "_line": []}
    commit: dict[str, list[Any]] = {"span": [], "_text_line": [], "_commit": []}
    failed = failed_calls(calls["id"], items)
    for span, text, number, line, argv in calls.iter_rows():
        ok = span not in failed  # a failed call closed nothing and committed nothing
        for item, closes in closings(commands(text, argv)):
            if closes and not ok:  # an opening that failed still leaves the item open
                continue
            events["_item"].append(item)
            events["_at"].append(_order(number, line))
            events["_closes"].append(closes)
            events["_line"].append(line)
        for text_line in commit_lines(clean_text(text)) if ok else ():
            commit["span"].append(span)
            commit["_text_line"].append(text_line)
            commit["_commit"].append(line if line is not None else -1)
    state = pl.LazyFrame(events, schema={"_item": pl.String, "_at": pl.Int64,
                                         "_closes": pl.Boolean, "_line": pl.Int64}
                         ).sort("_at", maintain_order=True)
    closed = sorted({i for i, c in zip(events["_item"], events["_closes"], strict=True)
                     if c})
    at_loss = (pl.col("fold_round").fill_null(pl.col("lost_round")).fill_null(_BIG) * _LINES
               + pl.when(pl.col("fold_round").is_not_null()).then(pl.col("fold_line"))
               .otherwise(pl.col("lost_line")).fill_null(_LINES - 1))
    rows = (
        lost.lazy().with_row_index("_row")
        .with_columns(pl.col("text_line").fill_null(1).alias("_text_line"),
                      at_loss.alias("_loss_at"))
        .join(_sections(lost, items, closed).lazy(), on=["span", "_text_line"], how="left")
        .join(named_items(lost, events["_item"], items).lazy(), on="_row", how="left")
        .with_columns(pl.col("_item").fill_null(pl.col("_named")))
        .sort("_loss_at")
        .join_asof(state, left_on="_loss_at", right_on="_at", by="_item",
                   strategy="backward", allow_exact_matches=False, check_sortedness=False)
    )
    # an epic is finished only when each item below it is closed at the same loss:
    # judged once per (epic, loss), then given to its rows (adv41: per row, the join
    # of 4,000 facts with 4,000 items below took 2.3 GB)
    open_below = (
        rows.filter(pl.col("_closes").fill_null(False)).select("_item", "_loss_at").unique()
        .join(_children(items, closed).lazy(), on="_item")
        .rename({"_item": "_epic", "_child": "_item"}).sort("_loss_at")
        .join_asof(state.select("_item", "_at", pl.col("_closes").alias("_child_closes")),
                   left_on="_loss_at", right_on="_at", by="_item", strategy="backward",
                   allow_exact_matches=False, check_sortedness=False)
        .filter(~pl.col("_child_closes").fill_null(False))
        .select(pl.col("_epic").alias("_item"), "_loss_at").unique()
        .with_columns(pl.lit(True).alias("_open_below"))
    )
    finished = pl.col("_closes").fill_null(False) & pl.col("_open_below").is_null()
    committed = pl.col("_commit").is_not_null()
    return (
        rows.join(open_below, on=["_item", "_loss_at"], how="left")
        .join(pl.LazyFrame(commit, schema={"span": pl.String, "_text_line": pl.Int64,
                                           "_commit": pl.Int64}).unique(),
              on=["span", "_text_line"], how="left")
        .sort("_row")
        .with_columns(
            pl.when(committed).then(pl.lit("git commit"))
            .when(finished).then(pl.col("_item")).alias("finished_item"),
            pl.when(committed).then(pl.col("_commit"))
            .when(finished).then(pl.col("_line")).alias("finished_line"))
        .select(*lost.columns, "finished_item", "finished_line")
        .collect())


def failed_calls(calls: pl.Series, items: pl.DataFrame) -> set[str]:
    """The ids of ``calls`` whose result says they failed (:data:`FAILED`): a result is
    the span an adapter names after its call (``<call>:result``, Claude Code;
    ``<call>:output``, Codex); a call with no such span is taken as it reads."""
    results = (items.lazy()
               .filter(pl.col("id").str.contains(_RESULT_ID))
               .select(pl.col("id").str.replace(_RESULT_ID, "").alias("call"),
                       pl.col("text").str.slice(0, 2000).alias("result"))
               .join(pl.DataFrame({"call": calls}).lazy(), on="call", how="semi")
               .filter(pl.col("result").fill_null("").str.contains(FAILED))
               .collect())
    return set(results["call"].to_list())


_RESULT_ID = r":(?:result|output)$"
"""The end of a call's result span's id (Claude Code ``:result``, Codex ``:output``)."""
FAILED = (r"(?im)^\s*(?:error\b|fatal\b|exit code:?\s*[1-9]|process exited with code [1-9]"
          r"|stderr:\s*error\b)"
          r"|exit_code\W{0,3}[1-9]|\"error\"\s*:|<tool_use_error>"
          r"|\b(?:not closed|cannot close|can't close|could not close|failed to close"
          r"|doesn't want to (?:proceed|take this action)|requested permissions"
          r"|user denied|rejected)\b")
"""A call's result that says it failed, in its first 2,000 characters: a line that
starts with an error or a non-zero exit ("Error: ...", bd's "Error closing B: ..." after
"✓ Closed A", "Exit code 1" from Claude Code, Gemini's "Exit Code: 1" and "Stderr:
Error", "Process exited with code 1" from Codex's ``exec_command``), Codex's
``"exit_code": 1``, a JSON ``"error":`` (a cancelled Gemini call), Claude Code's
``<tool_use_error>``, or a tracker's or the product's refusal anywhere ("not closed",
"cannot close", "The user doesn't want to proceed" or "to take this action", "requested
permissions", Cline's "The user denied this operation").  A call that closed several
items and failed on one closed none here; a success whose text holds one of these
(a close reason "Rejected: ...") is taken for a failure: its items stay open, which
keeps their facts in their tier (adv43, adv44)."""


def _order(number: int | None, line: int | None) -> int:
    """A call's place in the log as one integer: its round, then its line (a missing
    round or line first)."""
    return ((number if number is not None else -1) * _LINES
            + (line if line is not None else -1))


def _children(items: pl.DataFrame, closed: list[str]) -> pl.DataFrame:
    """(``_item``, ``_child``): each closed item and every work item the log names
    anywhere whose id extends it (``spotter-gqc`` -> ``spotter-gqc.6``, ``PROJ`` ->
    ``PROJ-7``): each of a text's items is looked up by its prefixes, not compared
    with every closed item."""
    out: dict[str, list[str]] = {"_item": [], "_child": []}
    if closed:
        parents = set(closed)
        texts = items.select("text").drop_nulls().unique().filter(
            contains_any(pl.col("text"), closed))
        found = {item for text in texts["text"].to_list() for item in item_tokens(text)}
        for child in found:
            for cut, char in enumerate(child):
                if char in ".-" and child[:cut] in parents:
                    out["_item"].append(child[:cut])
                    out["_child"].append(child)
    return pl.DataFrame(out, schema={"_item": pl.String, "_child": pl.String})


def _sections(lost: pl.DataFrame, items: pl.DataFrame, closed: list[str]) -> pl.DataFrame:
    """(``span``, ``_text_line``, ``_item``): for each line of the cleaned text of a
    lost fact's document span that names a closed item, the work item whose section
    holds it (:func:`~compaction_audit.recall.finished.sections.items_of_lines`)."""
    out: dict[str, list[Any]] = {"span": [], "_text_line": [], "_item": []}
    if closed:
        texts = (items.filter(pl.col("id").is_in(lost["span"].unique().implode())
                              & document_source(pl.col("source"))
                              & contains_any(pl.col("text").fill_null(""), closed))
                 .select("id", "text").unique("id"))
        for span, text in texts.iter_rows():  # the few documents that name one
            for number, item in items_of_lines(clean_text(text)).items():
                out["span"].append(span)
                out["_text_line"].append(number)
                out["_item"].append(item)
    return pl.DataFrame(out, schema={"span": pl.String, "_text_line": pl.Int64,
                                     "_item": pl.String})
