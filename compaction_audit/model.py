"""The typed tables a reader produces, and the :class:`Session` that holds them.

Every reader and adapter ends in the same container, so the series, rules and
reporters never know which product wrote the log.  Tables are Polars frames with the
schemas below; ``ri`` is the 0-based index of a round record in the file (round
numbers may skip, indices do not), and every row keeps the 1-based ``line`` it came
from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from compaction_audit.errors import LogError

SCHEMA_ID = "compaction-audit/1"

ROUND_SCHEMA: dict[str, Any] = {
    "ri": pl.Int64,
    "round": pl.Int64,
    "line": pl.Int64,
    "budget_tokens": pl.Int64,
    "has_retained": pl.Boolean,
    "salience_sum": pl.Float64,
    "salience_known": pl.Int64,
    "new_spans": pl.Int64,
    "folds": pl.Int64,
    "evictions": pl.Int64,
    "offloads": pl.Int64,
    "silent_drops": pl.Int64,
    "logged_raw_ratio": pl.Float64,
    "logged_distinct_source_spans": pl.Int64,
    "logged_query_cosine_retained": pl.Float64,
    "logged_summary_depth_max": pl.Int64,
    "line_file": pl.String,
}
"""One row per round record (``rounds`` table).  ``line_file``: the name of the file
``line`` is a line of, when an adapter read the trace from several files and it is not
one file for every round (a Cline compaction file given: its rounds before the
compaction are lines of the messages file); null for every round otherwise, the line
then a line of the trace itself."""

ITEM_SCHEMA: dict[str, Any] = {
    "id": pl.String,
    "kind": pl.String,  # "span" or "summary"
    "tokens": pl.Int64,
    "depth": pl.Int64,  # derived: 0 for spans, 1 + max(child depth) for summaries
    "ri": pl.Int64,  # round index of creation
    "round": pl.Int64,
    "line": pl.Int64,  # the line of the round that brought the item
    "source_line": pl.Int64,  # the line that stated it: a span's own line (adapters)
    "text": pl.String,
    "salience_class": pl.String,
    "source": pl.String,
    "accounting": pl.String,  # JSON text of the accounting field, null when absent
    "gone_ri": pl.Int64,  # round index at which the item stopped being resolvable
    "gone_reason": pl.String,  # "evicted" or "silent-drop"; null while resolvable
}
"""One row per span or summary (``items`` table)."""

EDGE_SCHEMA: dict[str, Any] = {
    "parent": pl.String,
    "child": pl.String,
    "ri": pl.Int64,
    "line": pl.Int64,
}
"""One row per provenance edge summary -> child (``edges`` table)."""

MEMBERSHIP_SCHEMA: dict[str, Any] = {"id": pl.String, "start": pl.Int64, "end": pl.Int64}
"""Working-set membership as half-open intervals of round indices ``[start, end)``.

An item in the working set from round index 3 to the end of a 10-round log is the
row ``(id, 3, 10)``.  Intervals change only when items enter or leave, so the table
grows with changes, not with rounds times working-set size.
"""

EVENT_SCHEMA: dict[str, Any] = {
    "id": pl.String,
    "ri": pl.Int64,
    "line": pl.Int64,
    "action": pl.String,  # "evicted", "offloaded" or "silent-drop"
}
"""Items leaving the working set or the store (``events`` table)."""

SALIENCE_SCHEMA: dict[str, Any] = {"id": pl.String, "ri": pl.Int64, "salience": pl.Float64}
"""Logged saliences, run-length: a row when an item's salience in ``retained`` differs
from its value in the previous round's ``retained`` (or it was not there).  An item's
salience at round index t is its last row at or before t, for rounds that list
``retained`` (issue 16: CA204 ranks the working set by it)."""


@dataclass
class SessionHeader:
    """The optional ``session`` record (all fields optional; defaults per the spec).

    ``budget_tokens`` is in tokens, ``max_depth`` in tiers, ``recall_floor`` in
    references, ``start_spans`` in leaf spans.  ``extra`` keeps unknown fields.
    """

    present: bool = False
    line: int = 0
    session_id: str | None = None
    budget_tokens: int | None = None
    max_depth: int | None = None
    eviction: str | None = None
    scorer: dict[str, Any] | None = None
    recall_floor: int = 1
    start_spans: int | None = None
    task_query: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Session:
    """A whole log as typed tables (see the ``*_SCHEMA`` constants of this module).

    ``compactions`` holds the ``compaction`` extension objects written by adapters
    (one dict per compaction round, with ``ri`` and ``line`` added); ``skipped`` the
    records skipped in lenient mode, each as the :class:`LogError` that caused it;
    ``dependent`` the references lenient mode dropped because they name an id a
    skipped record defined (:mod:`compaction_audit.io.quarantine`).
    """

    path: str
    header: SessionHeader
    rounds: pl.DataFrame
    items: pl.DataFrame
    edges: pl.DataFrame
    membership: pl.DataFrame
    events: pl.DataFrame
    salience: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=SALIENCE_SCHEMA))
    compactions: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[LogError] = field(default_factory=list)
    dependent: list[LogError] = field(default_factory=list)

    @property
    def n_rounds(self) -> int:
        """Number of round records read."""
        return self.rounds.height
