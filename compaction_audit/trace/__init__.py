"""Lineage of a discriminator, a span or a summary, as a tree (``compaction-audit trace``).

- A discriminator (``45000``, ``--force``): each raw span that introduced it (else
  each summary that states it with no raw span holding it), then up the fold chain:
  which folds carried it, which fold dropped it, which fold flipped it (stated a rule
  reversed, issue 12) or which eviction lost it, with rounds and lines (seed 002:
  "tier-subsumption failure").
- A span id: the folds that took it in, up the chain, with what each dropped.
- A summary id: its provenance tree down to the leaves, each leaf's state at the end
  of the log (retained, offloaded, evicted or dropped at round N).

Every tree stays short (issue 13, section 3): the root's label counts the spans first
(``5 spans: 2 lost, 3 in context``), a discriminator trace has one node per span (the
span's matching discriminators on one line, the first one followed up the chain, each
other under its own fate when it differs: ``carried; X; lost: Y``), and
fold nodes name the summary without quoting it; each summary's text is listed once in
``Node.summaries``, cut to one line (:func:`one_line`) unless ``full``.  A query that is
not itself a discriminator is never answered for a sub-token silently: the root says
what it was reduced to (the clauses holding it) or that span texts were searched for it
literally, and a fold that keeps only a path's file name is "carried only as" it.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.model import Session
from compaction_audit.trace.items import trace_span, trace_summary
from compaction_audit.trace.log import line_files
from compaction_audit.trace.query import trace_discriminator
from compaction_audit.trace.tree import (
    FULL_LIMIT,
    MAX_LEVELS,
    MAX_NODES,
    ONE_LINE,
    OUTCOMES,
    Node,
    counts_label,
    one_line,
)

__all__ = ["FULL_LIMIT", "MAX_LEVELS", "MAX_NODES", "ONE_LINE", "OUTCOMES", "Node",
           "counts_label", "line_files", "one_line", "trace", "trace_discriminator",
           "trace_span", "trace_summary"]


def _named_summaries(session: Session, root: Node, full: bool) -> dict[str, dict[str, Any]]:
    """Each summary the tree names (a fold, a stating summary, a summary node), once,
    in the order met: depth, round, line, chars and its text cut to one line
    (:func:`one_line`), or whole with ``full``; ``line_file`` after ``line`` when the
    trace's lines are in several files (:func:`line_files`)."""
    summaries = session.items.filter(pl.col("kind") == "summary")
    files = line_files(session)
    where = ["line_file"] if files is not None else []
    if files is not None:
        summaries = summaries.join(files[0], on="ri", how="left", maintain_order="left") \
            .rename({"_round_file": "line_file"})
    rows = {r["id"]: r for r in summaries.select("id", "depth", "round", "line", *where,
                                                 "text").iter_rows(named=True)}
    out: dict[str, dict[str, Any]] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for key in ("fold", "summary", "id"):
            sid = node.data.get(key)
            if isinstance(sid, str) and sid in rows and sid not in out:
                r = rows[sid]
                text = r["text"]
                out[sid] = {"depth": r["depth"], "round": r["round"], "line": r["line"],
                            **{k: r[k] for k in where},
                            "chars": None if text is None else len(text),
                            "text": None if text is None else
                            (text if full else one_line(text))}
        stack.extend(reversed(node.children))
    return out


def trace(session: Session, query: str, full: bool = False) -> Node:
    """Dispatch on ``query``: a span id, a summary id, else a discriminator; the
    root's ``summaries`` lists each summary the tree names once (whole with ``full``,
    else cut to one line).

    Raises :class:`UsageError` when nothing matches, and :class:`LogError` where the
    audit does for a provenance too large (:func:`compaction_audit.closure.closure`,
    :data:`~compaction_audit.closure.MAX_CLOSURE_PAIRS`): the trace walks the folds
    above each span it reads, so its work grows with the same (item, leaf) pairs (adv91
    #3: a chain of 8,000 folds, which the audit refuses in about a second, took the
    trace 59 s; within the bound the walks total at most that many steps).
    """
    from compaction_audit.closure import closure

    closure(session)  # the audit's check, its result not kept
    kinds = dict(zip(session.items["id"], session.items["kind"], strict=True))
    # a tree of n spans x 16 levels is many small objects and no cycles: the collector
    # re-scanning them cost 2.5x the tracing (12,800 spans under a 20-fold chain)
    with paused_gc():
        if kinds.get(query) == "summary":
            root = trace_summary(session, query)
        elif kinds.get(query) == "span":
            root = trace_span(session, query)
        else:
            root = trace_discriminator(session, query)
        root.summaries = _named_summaries(session, root, full)
    return root
