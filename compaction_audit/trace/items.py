"""The trace of a span (the folds that took it in) or of a summary (its provenance
tree down to its leaves, and what it dropped of each)."""

from __future__ import annotations

from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.kinds import CLAUSE_KINDS
from compaction_audit.recall.spantypes import span_type
from compaction_audit.recall.survival import check as surv  # where tests patch survives
from compaction_audit.trace.log import _Log, reach
from compaction_audit.trace.query import _folds_above
from compaction_audit.trace.tree import MAX_LEVELS, Node, _Budget, _cut


def trace_span(session: Session, item: str) -> Node:
    """The folds that took a span in (up the chain), with what each dropped."""
    log = _Log(session)

    budget = _Budget()

    def up(node_id: str, seen: set[str], level: int = 1) -> list[Node]:
        nodes = log.event_nodes(node_id)
        for fold in _folds_above(log, node_id, seen, level, budget, nodes):
            row, child = log.rows[fold], log.rows[node_id]
            ctype = (span_type(child["source"], child["text"]) if child["kind"] == "span"
                     else "prose")
            lost = ([d.text for d in surv.dropped(child["text"], row["text"], ctype)]
                    if row["text"] is not None and child["text"] is not None else None)
            head = f"folded into {fold} (depth {row['depth']}, {log.where(fold)}): "
            # above the span, what the fold kept or dropped is its child's, a summary
            # that may hold nothing of the span's (usertest65 #2: "kept every
            # discriminator" right after the fold that lost all of them)
            of = f" of {node_id}" if level > 1 else ""
            what = ("no text to compare" if lost is None else
                    f"dropped {len(lost)}{of}: " if lost else f"kept every discriminator{of}")
            quote = ", ".join(map(repr, lost)) if lost else ""
            nodes.append(Node(head + what + quote, {"fold": fold, "round": row["round"],
                                                    "line": row["line"], **log.at(fold),
                                                    "dropped": lost},
                              up(fold, seen, level + 1),
                              cut=len(head + what) if quote else None))
        return nodes

    row = log.rows[item]
    folds = up(item, set())
    n = sum(1 for f in folds if "fold" in f.data)
    # every fold of the chain, not only the first (usertest65 #2: "folded into 1
    # summary" of a span folded into s7, then s7 into s8)
    total = _folds_in(folds)
    more = f" ({n} directly)" if total != n else ""
    return Node(f"span {item} ({log.where(item)}; now {log.state(item)}): folded into "
                f"{total} summar{'y' if total == 1 else 'ies'}{more}",
                {"span": item, "round": row["round"], "line": row["line"], **log.at(item),
                 "state": log.state(item), "text": row["text"]}, folds)


def _folds_in(nodes: list[Node]) -> int:
    """The distinct folds drawn in ``nodes`` and below them."""
    seen: set[str] = set()
    todo = list(nodes)
    while todo:
        node = todo.pop()
        if "fold" in node.data:
            seen.add(node.data["fold"])
        todo.extend(node.children)
    return len(seen)


def trace_summary(session: Session, item: str) -> Node:
    """A summary's provenance tree down to its leaves, each with its final state; an
    item reached again (a shared sub-DAG) is one ``shown above`` node, and the root's
    label counts the distinct spans below by state (evicted, dropped silently,
    offloaded, retained: the spans' own texts, not what the summary says of them).

    When the summary has text and at most :data:`FACT_LEAVES` spans are below it,
    each span says how many of its discriminators
    (:func:`~compaction_audit.recall.extract.extract`) the summary does not state,
    clauses (rules, requirements, reasons) apart from values, and the children of each
    node are ordered by those clauses, then values, most first (usertest11: the span
    at line 660 that held the lost spec was 1 of 294 left off the screen in line
    order)."""
    log = _Log(session)
    budget = _Budget()
    leaves = _leaves(log, item)
    dropped = (_dropped_facts(log, item, leaves)
               if log.rows[item]["text"] is not None and len(leaves) <= FACT_LEAVES else {})
    # every node weighed before the node budget cuts any (adv57: the one span that lost
    # its facts, the last of 3,000, was past the budget), and the children drawn in
    # that order, so a shared sub-DAG is whole where it is first met
    weight = _weights(log, item, dropped) if dropped else {}

    shown: set[str] = set()

    def down(node_id: str, level: int = 0) -> Node:
        row = log.rows[node_id]
        kind = "summary" if row["kind"] == "summary" else "span"
        if node_id in shown:  # one node per item: a shared sub-DAG is drawn once
            return Node(f"{kind} {node_id}: shown above",
                        {"id": node_id, "kind": kind, "shown_above": True})
        shown.add(node_id)
        facts = dropped.get(node_id)
        said = (f"; not in the summary: {facts[0]:,} of {facts[1]:,} clause(s), "
                f"{facts[2]:,} of {facts[3]:,} value(s)" if facts and (facts[1] or facts[3])
                else "")
        node = Node(f"{kind} {node_id} (depth {row['depth']}, {log.where(node_id)}): "
                    f"{log.state(node_id)}{said}",
                    {"id": node_id, "kind": kind, "depth": row["depth"],
                     "round": row["round"], "line": row["line"], **log.at(node_id),
                     "state": log.state(node_id),
                     **({"clauses": facts[1], "clauses_not_in_summary": facts[0],
                         "values": facts[3], "values_not_in_summary": facts[2]}
                        if facts else {})})
        kids = log.children.get(node_id, [])
        if kids and level >= MAX_LEVELS:
            if budget.take():
                node.children = [_cut(f"child(ren) and the {row['depth'] - 1:,} level(s) "
                                      "below", len(kids))]
            return node
        if weight:
            kids = sorted(kids, key=lambda k: (-weight[k][0], -weight[k][1]))
        for k, child in enumerate(kids):
            if not budget.take():
                node.children.append(_cut("more child(ren)", len(kids) - k))
                break
            node.children.append(down(child, level + 1))
        return node

    root = down(item)
    if log.rows[item]["text"] is not None and len(leaves) > FACT_LEAVES:  # adv58: unsaid
        root.data["note"] = (f"what the summary dropped of each span is not checked past "
                             f"{FACT_LEAVES:,} spans ({len(leaves):,} below it): in log order")
    states = [_LEAF_STATE[log.state(s).split(" ")[0]] for s in leaves]
    root.label += f"; {len(leaves):,} span(s) below: " + ", ".join(
        f"{states.count(o):,} {o}" for o in dict.fromkeys(_LEAF_STATE.values()) if o in states)
    root.data["counts"] = {o: states.count(o) for o in dict.fromkeys(_LEAF_STATE.values())
                           if o in states}
    return root


FACT_LEAVES = 5_000
"""Most spans below a traced summary whose facts are checked against it (each span's
text is read once and each fact compared once; past this the tree is in log order)."""

_LEAF_STATE = {"evicted": "evicted", "dropped": "dropped silently",
               "offloaded": "offloaded (resolvable)", "retained": "retained"}


def _weights(log: _Log, item: str, dropped: dict[str, tuple[int, int, int, int]]
             ) -> dict[str, tuple[int, int]]:
    """(clauses, values) not in the summary, of each node below ``item`` and the nodes
    below it (a shared sub-DAG counted under each parent: an order, not a total);
    iterative, so a deep chain does not recurse."""
    out: dict[str, tuple[int, int]] = {}
    stack = [(item, False)]
    while stack:
        node, ready = stack.pop()
        if node in out:
            continue
        kids = log.children.get(node, [])
        if not ready:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if k not in out)
            continue
        own = dropped.get(node, (0, 0, 0, 0))
        below = [out.get(k, (0, 0)) for k in kids]
        out[node] = (own[0] + sum(b[0] for b in below), own[2] + sum(b[1] for b in below))
    return out


def _dropped_facts(log: _Log, summary: str, spans: list[str]
                   ) -> dict[str, tuple[int, int, int, int]]:
    """For each of ``spans`` with text: its distinct clauses the text of ``summary``
    does not state, its clauses, then the same of its values (the other kinds), by the
    survival rules (:meth:`_Log.survives`)."""
    out = {}
    for item in spans:
        row = log.rows[item]
        if row["text"] is None:
            continue
        found = {(d.kind, d.norm): d for d in
                 ext.extract(row["text"], span_type(row["source"], row["text"]))}
        clauses = [d for d in found.values() if d.kind in CLAUSE_KINDS]
        values = [d for d in found.values() if d.kind not in CLAUSE_KINDS]
        out[item] = (sum(not log.survives(d, summary) for d in clauses), len(clauses),
                     sum(not log.survives(d, summary) for d in values), len(values))
    return out


def _leaves(log: _Log, item: str) -> list[str]:
    """The distinct raw spans under ``item`` (each once, however many paths reach it)."""
    return [n for n in reach(log.children, item)
            if not log.children.get(n) and log.rows[n]["kind"] == "span"]
