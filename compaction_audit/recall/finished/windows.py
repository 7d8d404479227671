"""Work windows: the assistant's own words while a work item was in progress.

An agent that works through a tracker's tasks starts one (``bd update X --status
in_progress``), reasons about it in its messages ("the column is NOT NULL without
default, so the migration needs a backfill"), closes it (``bd close X``) and moves
on.  A compaction after the close drops those notes with the task's spec, and rightly
so: they are the finished task's working, as its spec is (a fresh user test on the
corpus: five of the six "assistant decisions" of the spotter session were notes of
subtasks closed before the compaction; the one of the task in progress stays).

A window opens at a command that starts work on an item (a state of
:data:`~compaction_audit.recall.finished.commands.WORK_STATES`) and ends at the item's
next command; it is finished for a loss when that command closes the item before the
loss and no later command opens it again before the loss.  A lost fact of the
assistant's own words is finished work when at least one window holds the line that
stated it and every window that holds it is finished: a fact said while another task
was still in progress, or with no task started, keeps its tier.

Windows come from commands, which are few; a log with more than :data:`WINDOWS_MAX`
of them gets no window (an adversarial log of nested windows would make the join of
facts and windows quadratic), and the facts keep their tiers.
"""

from __future__ import annotations

import polars as pl

WINDOWS_MAX = 500
"""Most work windows read; past it no window demotes anything."""

_ASSISTANT = r"(?i)^assistant(?::|$)"
"""The assistant's own words (``assistant``, ``assistant:thinking``); a person's, a
tool's and a document's are not working notes."""

_SCHEMA = {"span": pl.String, "_loss_at": pl.Int64, "_witem": pl.String,
           "_wline": pl.Int64, "_wstart": pl.Int64}


def windows(events: pl.LazyFrame) -> pl.LazyFrame:
    """``_item``, ``_start``, ``_start_line``, ``_end`` (the item's next command after
    the start, as an order; null: none), ``_end_line``, ``_closed`` (that command closes
    it) and ``_reopen`` (the item's first command after ``_end`` that does not close it;
    null: none), one row per command that starts work on an item.

    ``events``: ``_item``, ``_at`` (round and line as one order), ``_closes``,
    ``_starts``, ``_line`` (the log line), one row per item a command names."""
    opens = pl.when(~pl.col("_closes")).then(pl.col("_at"))
    after = (events.sort("_at", maintain_order=True)
             .with_columns(opens.shift(-1).over("_item").alias("_open_after"))
             .with_columns(pl.col("_open_after").backward_fill().over("_item")))
    return (after.with_columns(
        pl.col("_at").shift(-1).over("_item").alias("_end"),
        pl.col("_line").shift(-1).over("_item").alias("_end_line"),
        pl.col("_closes").shift(-1).over("_item").fill_null(False).alias("_closed"),
        pl.col("_open_after").shift(-1).over("_item").alias("_reopen"))
        .filter(pl.col("_starts"))
        .select("_item", pl.col("_at").alias("_start"), pl.col("_line").alias("_start_line"),
                "_end", "_end_line", "_closed", "_reopen"))


def in_finished_windows(rows: pl.LazyFrame, events: pl.LazyFrame, big: int) -> pl.DataFrame:
    """``span``, ``_loss_at``, ``_witem`` (the item of the latest window that holds the
    span), ``_wline`` (the line of the command that closed it) and ``_wstart`` (the
    line of the command that started it), for each distinct (span, loss) of ``rows``
    whose span is the assistant's own words and every window holding it is finished
    at the loss (see the module's doc).

    ``rows``: ``span``, ``span_source``, ``_p`` (where the span was stated, as an
    order), ``_loss_at``; ``big``: an order past every line, for a window with no end."""
    spans = (rows.filter(pl.col("span_source").fill_null("").str.contains(_ASSISTANT)
                         & pl.col("_p").is_not_null())
             .select("span", "_p", "_loss_at").unique())
    found = windows(events).collect()
    if found.height == 0 or found.height > WINDOWS_MAX:
        return pl.DataFrame(schema=_SCHEMA)
    held = spans.join_where(
        found.lazy().with_columns(pl.col("_end").fill_null(big).alias("_until")),
        pl.col("_start") < pl.col("_p"), pl.col("_until") > pl.col("_p"))
    done = (pl.col("_closed") & (pl.col("_end") < pl.col("_loss_at"))
            & (pl.col("_reopen").is_null() | (pl.col("_reopen") >= pl.col("_loss_at"))))
    return (held.with_columns(done.alias("_done"))
            .sort("_start", maintain_order=True)
            .group_by("span", "_loss_at")
            .agg(pl.col("_done").all().alias("_all"),
                 pl.col("_item").last().alias("_witem"),
                 pl.col("_end_line").last().alias("_wline"),
                 pl.col("_start_line").last().alias("_wstart"))
            .filter(pl.col("_all")).drop("_all")
            .collect().cast(_SCHEMA))  # type: ignore[arg-type]
