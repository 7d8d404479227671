"""Lineage of a discriminator, a span or a summary, as a tree (``compaction-audit trace``).

- A discriminator (``45000``, ``--force``): each raw span that introduced it (else
  each summary that states it with no raw span holding it), then up the fold chain:
  which folds carried it, which fold dropped it, which fold flipped it (stated a rule
  reversed, issue 12) or which eviction lost it, with rounds and lines (seed 002:
  "tier-subsumption failure").
- A span id: the folds that took it in, up the chain, with what each dropped.
- A summary id: its provenance tree down to the leaves, each leaf's state at the end
  of the log (retained, offloaded, evicted or dropped at round N).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from compaction_audit.errors import UsageError
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall import survival as surv
from compaction_audit.recall.spantypes import span_type

_CLAUSES = ext.CLAUSE_KINDS

MAX_LEVELS = 16
"""Deepest tree level shown; below it one node says how much was left out.  A chain of
thousands of folds is valid input: the tree stays readable, and printing it never
recurses past Python's limit (issue 11, item 5)."""
MAX_NODES = 2000
"""Most nodes in one tree (a summary over a shared sub-DAG expands exponentially)."""


class _Budget:
    """Nodes left to build in one tree."""

    def __init__(self) -> None:
        self.left = MAX_NODES

    def take(self) -> bool:
        """True while a node may still be added."""
        self.left -= 1
        return self.left >= 0


def _cut(what: str, count: int) -> Node:
    """A node standing for ``count`` nodes left out (``what`` names them)."""
    return Node(f"... {count:,} {what} not shown", {"not_shown": count})


@dataclass
class Node:
    """One tree node: a one-line ``label`` plus structured ``data`` for JSON."""

    label: str
    data: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The subtree as nested dicts (``label``, ``data``, ``children``)."""
        return {"label": self.label, **self.data,
                "children": [c.to_dict() for c in self.children]}


class _Log:
    """Lookups over a session's tables, built once per trace."""

    def __init__(self, session: Session) -> None:
        items = session.items
        self.n = session.n_rounds
        self.rows = {r["id"]: r for r in items.iter_rows(named=True)}
        self.round_of = dict(zip(session.rounds["ri"], session.rounds["round"], strict=True))
        self.line_of = dict(zip(session.rounds["ri"], session.rounds["line"], strict=True))
        self.parents: dict[str, list[str]] = {}
        self.children: dict[str, list[str]] = {}
        for parent, child in session.edges.select("parent", "child").iter_rows():
            self.parents.setdefault(child, []).append(parent)
            self.children.setdefault(parent, []).append(child)
        self.events: dict[str, list[tuple[int, int, str]]] = {}
        for item, ri, line, action in session.events.iter_rows():
            self.events.setdefault(item, []).append((ri, line, action))
        last = session.membership.filter(pl.col("end") == self.n)["id"].to_list()
        self.retained = set(last)

    def where(self, item: str) -> str:
        r = self.rows[item]
        return f"round {r['round']}, line {r['line']}"

    def state(self, item: str) -> str:
        """State at the end of the log."""
        r = self.rows[item]
        if r["gone_ri"] is not None:
            how = "evicted" if r["gone_reason"] == "evicted" else "dropped silently"
            return f"{how} at round {self.round_of[r['gone_ri']]}"
        if item in self.retained:
            return "retained"
        return "offloaded (resolvable)"

    def event_nodes(self, item: str) -> list[Node]:
        return [Node(f"{action} at round {self.round_of[ri]} (line {line})",
                     {"event": action, "round": self.round_of[ri], "line": line})
                for ri, line, action in self.events.get(item, [])]


def _matches(query: str, d: ext.Discriminator) -> bool:
    q = query.strip().lower()
    norms = {x.norm for x in ext.extract(query)} | {q}
    if d.norm in norms or d.text.lower() == q:
        return True
    return d.kind in _CLAUSES and q in d.norm.split()


def _carry(log: _Log, item: str, d: ext.Discriminator | None,
           companions: list[ext.Discriminator], seen: set[str], level: int = 1,
           budget: _Budget | None = None) -> list[Node]:
    """Nodes for the folds that took ``item`` in, following ``d`` up the chain.

    ``companions`` are the origin span's other discriminators still stated by ``item``;
    each fold reports the ones it drops, and the chain goes on after ``d`` is lost
    while any companion survives (the seed 002 tier chain: the leaf drops the number,
    the mid tier the environment qualifier).
    """
    budget = budget or _Budget()
    nodes = log.event_nodes(item)
    folds = [f for f in log.parents.get(item, []) if f not in seen]
    if folds and level > MAX_LEVELS:
        return [*nodes, _cut("more fold(s) above", len(folds))]
    for k, fold in enumerate(folds):
        if not budget.take():
            nodes.append(_cut("more fold(s)", len(folds) - k))
            break
        seen.add(fold)
        row = log.rows[fold]
        where = f"(depth {row['depth']}, {log.where(fold)})"
        base = {"fold": fold, "round": row["round"], "line": row["line"],
                "depth": row["depth"]}
        if row["text"] is None:
            nodes.append(Node(f"fold {fold} {where}: no text, cannot check",
                              {**base, "result": "unknown"}))
            continue
        kept = [c for c in companions if surv.survives(c, row["text"])]
        lost_here = [c for c in companions if c not in kept]
        also = ("; also dropped: " + ", ".join(f"{c.kind.value} {c.text!r}"
                                               for c in lost_here)) if lost_here else ""
        data = {**base, "also_dropped": [c.text for c in lost_here]}
        accounted = " (accounted)" if row["accounting"] is not None else ""
        if d is None:
            label, result, follow = f"then folded into {fold}{accounted} {where}", "after", None
        elif surv.survives(d, row["text"]):
            label, result, follow = f"carried by fold {fold}{accounted} {where}", "carried", d
        elif (sentence := surv.flip_sentence(d, row["text"])) is not None:
            # the words survive but the rule is reversed (issue 12, point 1)
            label = f"flipped at fold {fold}{accounted} {where}: {sentence!r}"
            result, follow = "flipped", None
        else:
            label = f"LOST at fold {fold}{accounted} {where}: {row['text']!r}"
            result, follow = "lost", None
        up = (_carry(log, fold, follow, kept, seen, level + 1, budget)
              if follow is not None or kept else [])
        nodes.append(Node(label + also, {**data, "result": result,
                                         "summary_text": row["text"]}, up))
    return nodes


def trace_discriminator(session: Session, query: str) -> Node:
    """Every raw span whose discriminators match ``query``, and where each went."""
    log = _Log(session)
    root = Node(f"discriminator {query!r}", {"query": query, "kind": "discriminator"})
    for item, row in log.rows.items():
        if row["kind"] != "span" or row["text"] is None:
            continue
        found = ext.extract(row["text"], span_type(row["source"], row["text"]))
        for d in found:
            if _matches(query, d):
                others = [c for c in found if c is not d]
                intro = Node(f"{d.kind.value} {d.text!r} introduced by span {item} "
                             f"({log.where(item)}; now {log.state(item)})",
                             {"span": item, "kind": d.kind.value, "text": d.text,
                              "norm": d.norm, "round": row["round"], "line": row["line"],
                              "state": log.state(item)},
                             _carry(log, item, d, others, set()))
                root.children.append(intro)
    if not root.children:
        root.children = _summaries_stating(log, query)
    if not root.children:
        raise UsageError(f"{query!r} is neither an item id nor a discriminator of any span "
                         f"text in {session.path}")
    return root


def _summaries_stating(log: _Log, query: str) -> list[Node]:
    """Summaries whose text states ``query`` when no raw span does: a claim with no
    raw source (rule unsupported-summary-claim, issue 12), oldest first."""
    found = []
    for item, row in log.rows.items():
        if row["kind"] != "summary" or row["text"] is None:
            continue
        for d in ext.extract(row["text"]):
            if _matches(query, d):
                found.append(Node(
                    f"{d.kind.value} {d.text!r} stated by summary {item} (depth "
                    f"{row['depth']}, {log.where(item)}) with no raw span holding it",
                    {"summary": item, "kind": d.kind.value, "text": d.text, "norm": d.norm,
                     "round": row["round"], "line": row["line"], "result": "no raw source"}))
                break
        if len(found) >= MAX_NODES:
            break
    return sorted(found, key=lambda n: (n.data["round"], n.data["line"]))


def trace_span(session: Session, item: str) -> Node:
    """The folds that took a span in (up the chain), with what each dropped."""
    log = _Log(session)

    budget = _Budget()

    def up(node_id: str, seen: set[str], level: int = 1) -> list[Node]:
        nodes = log.event_nodes(node_id)
        folds = [f for f in log.parents.get(node_id, []) if f not in seen]
        if folds and level > MAX_LEVELS:
            return [*nodes, _cut("more fold(s) above", len(folds))]
        for k, fold in enumerate(folds):
            if not budget.take():
                nodes.append(_cut("more fold(s)", len(folds) - k))
                break
            seen.add(fold)
            row, child = log.rows[fold], log.rows[node_id]
            ctype = (span_type(child["source"], child["text"]) if child["kind"] == "span"
                     else "prose")
            lost = ([d.text for d in surv.dropped(child["text"], row["text"], ctype)]
                    if row["text"] is not None and child["text"] is not None else None)
            what = ("no text to compare" if lost is None else
                    f"dropped {', '.join(map(repr, lost))}" if lost else "kept every "
                    "discriminator")
            nodes.append(Node(f"folded into {fold} (depth {row['depth']}, {log.where(fold)})"
                              f": {what}", {"fold": fold, "round": row["round"],
                                            "line": row["line"], "dropped": lost},
                              up(fold, seen, level + 1)))
        return nodes

    row = log.rows[item]
    return Node(f"span {item} ({log.where(item)}; now {log.state(item)})",
                {"span": item, "round": row["round"], "line": row["line"],
                 "state": log.state(item), "text": row["text"]}, up(item, set()))


def trace_summary(session: Session, item: str) -> Node:
    """A summary's provenance tree down to its leaves, each with its final state."""
    log = _Log(session)
    budget = _Budget()

    def down(node_id: str, level: int = 0) -> Node:
        row = log.rows[node_id]
        kind = "summary" if row["kind"] == "summary" else "span"
        node = Node(f"{kind} {node_id} (depth {row['depth']}, {log.where(node_id)}): "
                    f"{log.state(node_id)}",
                    {"id": node_id, "kind": kind, "depth": row["depth"],
                     "round": row["round"], "line": row["line"],
                     "state": log.state(node_id)})
        kids = log.children.get(node_id, [])
        if kids and level >= MAX_LEVELS:
            if budget.take():
                node.children = [_cut(f"child(ren) and the {row['depth'] - 1:,} level(s) "
                                      "below", len(kids))]
            return node
        for k, child in enumerate(kids):
            if not budget.take():
                node.children.append(_cut("more child(ren)", len(kids) - k))
                break
            node.children.append(down(child, level + 1))
        return node

    return down(item)


def trace(session: Session, query: str) -> Node:
    """Dispatch on ``query``: a span id, a summary id, else a discriminator.

    Raises :class:`UsageError` when nothing matches.
    """
    kinds = dict(zip(session.items["id"], session.items["kind"], strict=True))
    if kinds.get(query) == "summary":
        return trace_summary(session, query)
    if kinds.get(query) == "span":
        return trace_span(session, query)
    return trace_discriminator(session, query)
