"""The tree a trace answers with: :class:`Node`, its bounds (levels, nodes, one-line
quotes) and the counts its root label gives."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from compaction_audit.io.harness import SUMMARY_PREAMBLES

MAX_LEVELS = 16
"""Deepest tree level shown; below it one node says how much was left out.  A chain of
thousands of folds is valid input: the tree stays readable, and printing it never
recurses past Python's limit (issue 11, item 5)."""
MAX_NODES = 2000
"""Most nodes in one tree (a summary over a shared sub-DAG expands exponentially)."""


ONE_LINE = 120
"""Most characters of a summary shown without ``--full`` (its first line, cut)."""
FULL_LIMIT = 65_536
"""Most characters of one summary shown with ``--full`` (a bound on untrusted text)."""

OUTCOMES = ("lost", "flipped", "carried in part", "unknown", "carried", "lifted",
            "recoverable", "in context")
"""Fate of the query for one span, worst first: ``lost`` (the raw span is gone and no
retained summary states it), ``flipped`` (a fold states the rule reversed),
``carried in part`` (only a path's file name is kept), ``unknown`` (a fold has no
text), ``carried`` (a retained or offloaded summary states it), ``lifted`` (a rule the
person reversed in a later span of the same fold: the fold lost nothing, as the audit
reads it, :mod:`compaction_audit.recall.analysis.lifted`), ``recoverable`` (the raw
span is offloaded: resolvable), ``in context`` (the raw span is retained)."""


_TAG_ALONE = re.compile(r"\s*<[^<>]{1,80}>\s*")
"""A line that is one markup tag alone (``<SYSTEM_NOTICE>``)."""


_HEADING_ALONE = re.compile(r"\s*(?:#{1,6}\s*[^\W\d][\w ]{0,38}|[^\W\d][\w ]{0,38}:)\s*")
"""A line that is a short heading alone (``Analysis:``, ``## Context summary``): the one
line reads it with the line after it."""


def one_line(text: str, limit: int = ONE_LINE) -> str:
    """The first line of ``text`` that says something (not blank, not a markup tag
    alone: a Cline notice opens with ``<SYSTEM_NOTICE>`` on a line of its own, and the
    one line was that tag, ux5 F11; not a product's preamble to its summary,
    :data:`~compaction_audit.io.harness.SUMMARY_PREAMBLES`, when more lines follow:
    usertest29 #8; a short heading alone is joined with the line after it, usertest62 D1)
    with runs of white space made one space, cut to ``limit``
    characters with ``…`` when longer (or when more lines follow)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    while len(lines) > 1 and (_TAG_ALONE.fullmatch(lines[0])
                              or lines[0].lstrip().startswith(SUMMARY_PREAMBLES)):
        lines.pop(0)
    if len(lines) > 1 and _HEADING_ALONE.fullmatch(lines[0]):  # "Analysis:" alone said
        lines[:2] = [f"{lines[0].strip()} {lines[1].strip()}"]  # nothing (usertest62 D1)
    first = " ".join(lines[0].split()) if lines else ""
    if len(first) > limit:
        return first[:limit - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


def counts_label(outcomes: list[str], what: str = "span") -> str:
    """``N spans: a lost, b carried`` over ``outcomes`` (one per span), the parts in the
    order of :data:`OUTCOMES`, zero parts left out."""
    n = len(outcomes)
    parts = [f"{outcomes.count(o)} {o}" for o in OUTCOMES if o in outcomes]
    return f"{n} {what}{'' if n == 1 else 's'}" + (f": {', '.join(parts)}" if parts else "")


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
    cut: int | None = None
    """Where the label's untrusted quote starts: the text view may cut the label from
    there to fit the width (ids and our words before it are always shown whole)."""
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    """On the root only: each summary named in the tree, once (id -> depth, round,
    line, chars and text: one line, or whole with ``full``)."""

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """The subtree as nested dicts (``label``, ``data``, ``children``; the root
        also ``summaries``, a list of the summaries the shown nodes name, and
        ``summaries_not_shown``, how many others the tree names, when there are).

        ``limit``: at most this many children per node, as the text view shows them,
        the rest counted by one ``{"label": "... N more node(s) not shown (--all)",
        "not_shown": N}`` child (None: every node), and a fold's ``also_dropped`` list
        at most this many, the rest counted by ``also_dropped_not_shown``.  Without it
        a trace of n spans that share one chain of d folds is n x d nodes (issue 11,
        class 5), and a fold that drops n companions lists n."""
        named: set[str] = set()
        out = self._dict(limit, named)
        if self.summaries:
            out["summaries"] = [{"id": k, **v} for k, v in self.summaries.items()
                                if limit is None or k in named]
            if len(out["summaries"]) < len(self.summaries):  # usertest35: said, as text does
                out["summaries_not_shown"] = len(self.summaries) - len(out["summaries"])
        return out

    def _dict(self, limit: int | None, named: set[str]) -> dict[str, Any]:
        named.update(v for key in ("fold", "summary", "id")
                     if isinstance(v := self.data.get(key), str))
        shown = self.children if limit is None else self.children[:limit]
        kids = [c._dict(limit, named) for c in shown]
        if len(shown) < len(self.children):
            hidden = len(self.children) - len(shown)
            kids.append({"label": f"... {hidden:,} more node(s) not shown (--all)",
                         "not_shown": hidden})
        data = self.data
        dropped = data.get("also_dropped")
        if limit is not None and dropped is not None and len(dropped) > limit:
            # adv81: a fold that dropped 30,000 companions listed each in JSON
            data = {**data, "also_dropped": dropped[:limit],
                    "also_dropped_not_shown": len(dropped) - limit}
        return {"label": self.label, **data, "children": kids}
