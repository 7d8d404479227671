"""Who still holds a traced fact: the head's "still held by" (:func:`still_held`), and
the spans that name the fact without holding it (usertest38 #4).

A span holding the query is one of the trace's nodes.  Two of them name it without
holding it, as the audit reads them (:mod:`compaction_audit.recall.stance`,
:mod:`compaction_audit.recall.analysis.stances`):

* a span that **asks** for it ("Which version of lib2 did we pin again?");
* a span that names a **rule's object** outside the rule (``./release.sh --force``)
  once the span stating the rule ("Do NOT run release.sh with --force") has left the
  context: it does not restate the rule, it may break it.

Their nodes say so (:func:`mark_unheld`) and the head names none of them as holding
the fact.  :func:`stance_of` finds, for each span, the rule its hit is the object of:
the trace follows that rule too, and a fold that states it reversed "flipped" the
query (:class:`~compaction_audit.trace.query._Follow`), as negation-flipped (CA304)
reports it, whatever form the query takes.
"""

from __future__ import annotations

from typing import Any

from compaction_audit.io.harness import is_person_source
from compaction_audit.recall import extract as ext
from compaction_audit.recall import stance
from compaction_audit.recall.spantypes import clean_text
from compaction_audit.recall.wholetoken import STATING_TYPES
from compaction_audit.report.lines import line_at
from compaction_audit.trace.log import _Log
from compaction_audit.trace.tree import Node

__all__ = ["HELD", "mark_unheld", "stance_of", "still_held"]

HELD = ("carried", "recoverable", "in context")
"""Span fates under which the value can still be read (:data:`OUTCOMES`)."""

_RAW = ("recoverable", "in context")
"""Fates of a span that holds the query itself (not through a summary)."""

_IN_REACH = ("retained", "offloaded (resolvable)")
"""States (:meth:`~compaction_audit.trace.log._Log.state`) of a span still in reach."""


def stance_of(log: _Log, item: str, stype: str, found: list[ext.Discriminator],
              hit: ext.Discriminator | None, q: str
              ) -> tuple[ext.Discriminator | None, bool, bool]:
    """(the prohibition whose object the span's ``hit`` is, or the query ``q`` as
    words of the span's text when there is no hit, None when none; whether the span
    states it negatively, :func:`~compaction_audit.recall.stance.negated`; whether it
    names it in a question, :func:`~compaction_audit.recall.stance.asked`).  Only
    prose and spec text states a rule or asks (``stype``: the span's type; ``found``:
    its discriminators)."""
    text = log.rows[item]["text"]
    if stype not in STATING_TYPES or text is None:
        return None, False, False
    cleaned = clean_text(text)
    if hit is not None:
        return (*stance.stance_of_token(cleaned, found, hit), stance.asked(cleaned, [hit])[0])
    at = cleaned.lower().find(q) if q else -1
    if at < 0:
        return None, False, False
    probe = ext.Discriminator(ext.Kind.IDENTIFIER, q, q, at, at + len(q))
    return (*stance.stance_of_token(cleaned, found, probe), stance.in_question(cleaned, at))


def mark_unheld(log: _Log, nodes: list[Node]) -> None:
    """On each span node (``data``: ``span``, ``fate``, ``negated``, ``asked``,
    ``prose``) in reach that names the query without holding it, set
    ``data["holds"]`` false and ``data["why"]``: "asks for it" (the span asks), or
    "outside the rule it belongs to", as the audit reads a rule's object
    (:func:`~compaction_audit.recall.analysis.stances.holding`): a span stating it
    negatively has left reach (having been in it), every prose or spec span stating it
    before then (the questions left out) states it negatively, and this span does not."""
    rows = log.rows
    left = [rows[n.data["span"]]["gone_ri"] for n in nodes if n.data.get("negated")
            and log.state(n.data["span"]) not in _IN_REACH
            and rows[n.data["span"]]["gone_ri"] not in (None, rows[n.data["span"]]["ri"])]
    until = min(left, default=None)
    rule_gone = until is not None and all(
        n.data.get("negated") for n in nodes if n.data.get("prose") and not n.data.get("asked")
        and rows[n.data["span"]]["ri"] < until)
    for node in nodes:
        if node.data["fate"] not in _RAW:
            continue
        why = ("asks for it" if node.data.get("asked") else
               "outside the rule it belongs to" if rule_gone and not node.data.get("negated")
               else None)
        if why is None:
            continue
        node.data.update(holds=False, why=why)
        said = f": {node.data['fate']}"
        at = node.label.index(said) + len(said)
        node.label = f"{node.label[:at]} ({why}){node.label[at:]}"
        if node.cut is not None:
            node.cut += len(why) + 3


def still_held(log: _Log, spans: list[Node]
               ) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """``; still held by span X`` (``and N more``) when some spans lost the value and
    another still holds it: each lost span's "LOST at fold" is true of that span
    alone, and a reader of the tree took the value for lost (ux4 F11).  The first
    holding span in the tree's order is named (its fate is on its own line), with its
    source when the log gives one: "line-19 (user)" is the person's own later message,
    which a reader took for the fact kept (usertest5).  When every holder is a message
    of the person (:func:`~compaction_audit.io.harness.is_person_source`) written at
    or after the first fold that lost the value, the label says only the person
    states it again (the audit's "asked again");
    otherwise a span that kept it is named before such messages.  A span that names the
    value without holding it (:func:`mark_unheld`) holds nothing: when only such spans
    are left, the label says ``; not held by span X (...), which asks for it``, or
    "which names it only outside the rule it belongs to" (usertest38 #4: "after the
    loss it is stated again" named the call that broke the rule).  Empty otherwise.
    Returns (the label's words, the same as data: ``span``, ``source``, ``spans``
    (how many hold it), ``only_the_person``, ``read_again``; and, for the spans that
    name it only, ``span``, ``source``, ``spans``, ``why``; None when not said)."""
    unheld = [n for n in spans if n.data.get("holds") is False]
    held = [n for n in spans if n.data["fate"] in HELD and n not in unheld]
    if len(held) + len(unheld) == len(spans):  # nothing lost: nothing to say
        return "", None, None
    if not held:
        if not unheld:
            return "", None, None
        first = unheld[0].data
        more = f" and {len(unheld) - 1} more" if len(unheld) > 1 else ""
        who = f"{first['source']}, " if first.get("source") else ""
        why = "asks for it" if first["why"] == "asks for it" else f"names it only {first['why']}"
        return (f"; not held by span {first['span']} ({who}{_where(first)}){more}, "
                f"which {why}"), None, {"span": first["span"], "source": first.get("source"),
                                         "spans": len(unheld), "why": first["why"]}
    lost_at = min((r for n in spans if n.data["fate"] == "lost"
                   for r in _loss_rounds(log, n)), default=None)
    after = [n for n in held if lost_at is not None and n.data["round"] >= lost_at]
    asked = [n for n in after if isinstance(source := n.data.get("source"), str)
             and is_person_source(source)]
    only = len(asked) == len(held)
    # spans born at the loss or after hold it again, they did not keep it (usertest30
    # #1: a tool result re-read after the compaction read "still held by", where the
    # audit says "read again at line N")
    again = not only and len(after) == len(held)
    held = [n for n in held if n not in after] + [n for n in after if n not in asked] + asked
    first = held[0].data
    info = {"span": first["span"], "source": first.get("source"), "spans": len(held),
            "only_the_person": only, "read_again": again}
    more = f" and {len(held) - 1} more" if len(held) > 1 else ""
    if only:  # usertest11: the person's question read as the fact kept
        return (f"; after the loss only the person states it again: span {first['span']} "
                f"({first['source']}, {_where(first)}){more}"), info, None
    who = f"{first['source']}, " if first.get("source") else ""
    if again:
        return (f"; after the loss it is stated again: span {first['span']} "
                f"({who}{_where(first)}){more}"), info, None
    who = f"{first['source']}, " if first.get("source") else ""
    carrier = _carrier(held[0])
    if carrier is not None:  # usertest65 #3: "still held by span u0", evicted long ago
        info["summary"] = carrier["fold"]
        return (f"; still held by summary {carrier['fold']} ({_where(carrier)}), which "
                f"carries span {first['span']} ({who}{_where(first)}){more}"), info, None
    return f"; still held by span {first['span']} ({who}{_where(first)}){more}", info, None


def _carrier(span: Node) -> dict[str, Any] | None:
    """The data of the last fold of the chain that carries a carried span's value
    (the summary that holds it now), None when the span holds it itself (retained or
    offloaded: its own line says so) or no fold carries it."""
    if span.data["fate"] != "carried" or not str(span.data.get("state", "")).startswith(
            "evicted"):
        return None
    last = None
    nodes = span.children
    while True:
        step = next((n for n in nodes if n.data.get("result") == "carried"), None)
        if step is None:
            return last
        last, nodes = step.data, step.children


def _where(span: dict[str, Any]) -> str:
    """``round 3, line 1396`` of a span node's data (``line 29 of FILE`` where its line
    is another file's): the header's span is found without reading the tree
    (usertest62 D6: the round alone, the line only on the node below)."""
    if span.get("line") is None:
        return f"round {span['round']}"
    return f"round {span['round']}, {line_at(span['line'], span.get('line_file'))}"


def _loss_rounds(log: _Log, node: Node) -> list[int]:
    """The rounds at which the query was lost on the chain below ``node`` (a span or
    fold node): a fold that dropped it, else the eviction of the last item that held
    it (the span itself when nothing folded it, a carrying fold nothing above carried
    on: adv57, both read "still held" beside the person's later question)."""
    out: list[int] = []
    folds = [c for c in node.children if "fold" in c.data
             and c.data.get("result") not in (None, "after")]
    for c in folds:
        if c.data["result"] == "lost":
            out.append(c.data["round"])
        elif c.data["result"] == "carried":
            out += _loss_rounds(log, c) or _gone_round(log, c.data["fold"])
    if not folds and "span" in node.data:
        out += _gone_round(log, node.data["span"])
    return out


def _gone_round(log: _Log, item: str) -> list[int]:
    """``[round]`` at which ``item`` was evicted or dropped; ``[]`` when it was not."""
    gone = log.rows[item]["gone_ri"]
    return [] if gone is None else [log.round_of[gone]]
