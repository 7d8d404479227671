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

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from compaction_audit.errors import UsageError
from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.kinds import KIND_RANK
from compaction_audit.recall.spantypes import span_type
from compaction_audit.recall.survival import check as surv  # where tests patch survives
from compaction_audit.recall.wholetoken import STATING_TYPES, looked_for, states
from compaction_audit.report.model import line_at
from compaction_audit.report.safe import unsurrogate

_CLAUSES = ext.CLAUSE_KINDS

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

OUTCOMES = ("lost", "flipped", "carried in part", "unknown", "carried", "recoverable",
            "in context")
"""Fate of the query for one span, worst first: ``lost`` (the raw span is gone and no
retained summary states it), ``flipped`` (a fold states the rule reversed),
``carried in part`` (only a path's file name is kept), ``unknown`` (a fold has no
text), ``carried`` (a retained or offloaded summary states it), ``recoverable`` (the
raw span is offloaded: resolvable), ``in context`` (the raw span is retained)."""


_TAG_ALONE = re.compile(r"\s*<[^<>]{1,80}>\s*")
"""A line that is one markup tag alone (``<SYSTEM_NOTICE>``)."""


def one_line(text: str, limit: int = ONE_LINE) -> str:
    """The first line of ``text`` that says something (not blank, not a markup tag
    alone: a Cline notice opens with ``<SYSTEM_NOTICE>`` on a line of its own, and the
    one line was that tag, ux5 F11) with runs of white space made one space, cut to
    ``limit`` characters with ``…`` when longer (or when more lines follow)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    while len(lines) > 1 and _TAG_ALONE.fullmatch(lines[0]):
        lines.pop(0)
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
        also ``summaries``, a list of the summaries the shown nodes name).

        ``limit``: at most this many children per node, as the text view shows them,
        the rest counted by one ``{"label": "... N more node(s) not shown (--all)",
        "not_shown": N}`` child (None: every node).  Without it a trace of n spans
        that share one chain of d folds is n x d nodes (issue 11, class 5)."""
        named: set[str] = set()
        out = self._dict(limit, named)
        if self.summaries:
            out["summaries"] = [{"id": k, **v} for k, v in self.summaries.items()
                                if limit is None or k in named]
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
        return {"label": self.label, **self.data, "children": kids}


class _Log:
    """Lookups over a session's tables, built once per trace."""

    def __init__(self, session: Session) -> None:
        items = session.items
        if "source_line" in items.columns:  # the line that stated an item (adapters),
            items = items.with_columns(  # not the line of the round it entered with
                pl.coalesce("source_line", "line").alias("line"))
        files = line_files(session)
        self.files = files is not None  # the trace's lines are in several files
        if files is not None:
            round_files, span_files = files
            items = items.join(round_files, on="ri", how="left", maintain_order="left") \
                .with_columns(pl.when(pl.col("kind") == "span").then(span_files)
                              .otherwise(pl.col("_round_file")).alias("line_file"))
        self.n = session.n_rounds
        self.rows = {r["id"]: r for r in items.iter_rows(named=True)}
        self.round_of = dict(zip(session.rounds["ri"], session.rounds["round"], strict=True))
        self.line_of = dict(zip(session.rounds["ri"], session.rounds["line"], strict=True))
        self.file_of = (dict(zip(session.rounds["ri"], session.rounds["line_file"],
                                 strict=True)) if self.files else {})
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
        self._answers: dict[tuple[Any, ...], tuple[str, str | None]] = {}
        self._kept: dict[tuple[Any, ...], bool] = {}

    def follow_at(self, follow: _Follow, fold: str) -> tuple[str, str | None]:
        """``follow.at`` of ``fold``'s text, computed once per (query, fold): every span
        under a fold asks the same question of the same text, and each answer reads the
        whole text (a word search on a lowered copy), so n spans under one summary of L
        characters cost n x L (issue 11, class 5, adv10 F5: 0.85 MB took 76 s)."""
        d = follow.d
        key = (follow.literal, follow.part, None if d is None else (d.kind, d.text, d.norm),
               fold)
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = follow.at(self.rows[fold]["text"])
        return found

    def survives(self, d: ext.Discriminator, fold: str) -> bool:
        """``surv.survives(d, text of fold)``, computed once per (kind, text, norm, fold)
        (survival reads nothing else of ``d``; see :meth:`follow_at`)."""
        key = (d.kind, d.text, d.norm, fold)
        kept = self._kept.get(key)
        if kept is None:
            kept = self._kept[key] = surv.survives(d, self.rows[fold]["text"])
        return kept

    def where(self, item: str) -> str:
        r = self.rows[item]
        return f"round {r['round']}, {line_at(r['line'], r.get('line_file'))}"

    def at(self, item: str) -> dict[str, Any]:
        """``{"line_file": name}`` of ``item`` for the JSON tree when the trace's lines
        are in several files (:func:`line_files`); ``{}`` otherwise."""
        return {"line_file": self.rows[item].get("line_file")} if self.files else {}

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
        return [Node(f"{action} at round {self.round_of[ri]} "
                     f"({line_at(line, self.file_of.get(ri))})",
                     {"event": action, "round": self.round_of[ri], "line": line,
                      **({"line_file": self.file_of.get(ri)} if self.files else {})})
                for ri, line, action in self.events.get(item, [])]


def line_files(session: Session) -> tuple[pl.DataFrame, pl.Expr] | None:
    """Where each item's line is when the trace's lines are in several files (a Cline
    compaction file or manifest given): ``(ri, _round_file)`` of each round (its
    ``line_file``) for summaries, and an expression over the items giving a span's file
    (the session record's ``span_line_file``, ``span_line_file_except`` and
    ``span_line_file_except_in``: docs/adapters.md, Cline "Lines"), the trace's own name
    where neither names one.  None for a trace read from one file."""
    h = session.header.extra
    rounds = session.rounds.get_column("line_file", default=None)
    named = isinstance(h.get("span_line_file"), str)
    if not named and (rounds is None or rounds.null_count() == len(rounds)):
        return None
    own = unsurrogate(Path(session.path).name)
    round_files = session.rounds.select(
        "ri", (rounds if rounds is not None else pl.lit(None, pl.String)).alias("_round_file")
        .fill_null(own))
    if not named:
        return round_files, pl.lit(own)
    except_ = [str(x) for x in h.get("span_line_file_except") or ()]
    other = h.get("span_line_file_except_in")
    span = (pl.when(pl.col("id").is_in(except_))
            .then(pl.lit(other if isinstance(other, str) else own))
            .otherwise(pl.lit(str(h["span_line_file"]))))
    return round_files, span


def _matches(norms: set[str], q: str, d: ext.Discriminator) -> bool:
    """``d`` is the query (one of ``norms``, or its text is ``q``), or a clause whose
    words hold ``q``."""
    if d.norm in norms or d.text.lower() == q:
        return True
    return d.kind in _CLAUSES and q in d.norm.split()


def _word_in(needle: str, text: str) -> bool:
    """``needle`` occurs in ``text`` (both lower case) with no word character on
    either side."""
    return re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", text) is not None


@dataclass(frozen=True)
class _Follow:
    """What is followed up a fold chain: a discriminator, or (plain search) a literal
    string that a summary must hold whole."""

    d: ext.Discriminator | None = None
    literal: str | None = None
    part: bool = False  # the literal may be part of a word (a token cut short)

    def at(self, text: str) -> tuple[str, str | None]:
        """(result, detail) for a summary ``text``: ``carried``; ``carried in part``
        with the file name kept (a path whose file name alone is stated: never
        reported as carried); ``flipped`` with the sentence; ``lost``."""
        low = text.lower()
        if self.literal is not None:
            held = self.literal in low if self.part else _word_in(self.literal, low)
            return ("carried" if held else "lost"), None
        assert self.d is not None
        d = self.d
        if surv.survives(d, text):
            if d.kind not in _CLAUSES and ("/" in d.norm or "\\" in d.norm) \
                    and not _word_in(d.norm.rstrip("/\\"), low):
                return "carried in part", re.split(r"[/\\]", d.norm.rstrip("/\\"))[-1]
            return "carried", None
        if (sentence := surv.flip_sentence(d, text)) is not None:
            return "flipped", sentence  # the words survive, the rule is reversed (issue 12)
        return "lost", None


def _folds_above(log: _Log, item: str, seen: set[str], level: int, budget: _Budget,
                 nodes: list[Node]) -> Iterator[str]:
    """The folds that took ``item`` in and are not in ``seen`` yet, each added to
    ``seen`` as it is yielded.  Past :data:`MAX_LEVELS`, or when ``budget`` runs out,
    it yields no more and appends a cut node to ``nodes`` (which it mutates) saying
    how many folds were left."""
    folds = [f for f in log.parents.get(item, []) if f not in seen]
    if folds and level > MAX_LEVELS:
        nodes.append(_cut("more fold(s) above", len(folds)))
        return
    for k, fold in enumerate(folds):
        if not budget.take():
            nodes.append(_cut("more fold(s)", len(folds) - k))
            return
        seen.add(fold)
        yield fold


def _carry(log: _Log, item: str, follow: _Follow | None,
           companions: list[ext.Discriminator], seen: set[str], level: int = 1,
           budget: _Budget | None = None) -> list[Node]:
    """Nodes for the folds that took ``item`` in, following ``follow`` up the chain.

    ``companions`` are the origin span's other discriminators still stated by ``item``;
    each fold reports the ones it drops, and the chain goes on after the query is lost
    while any companion survives (the seed 002 tier chain: the leaf drops the number,
    the mid tier the environment qualifier).  The span itself (``level`` 1) shows no
    event nodes: its label states its end state.
    """
    budget = budget or _Budget()
    nodes = log.event_nodes(item) if level > 1 else []
    for fold in _folds_above(log, item, seen, level, budget, nodes):
        row = log.rows[fold]
        where = f"(depth {row['depth']}, {log.where(fold)})"
        base = {"fold": fold, "round": row["round"], "line": row["line"], **log.at(fold),
                "depth": row["depth"]}
        if row["text"] is None:
            nodes.append(Node(f"fold {fold} {where}: no text, cannot check",
                              {**base, "result": "unknown"}))
            continue
        # one pass: `c not in kept` compared dataclasses pairwise, companions squared
        kept: list[ext.Discriminator] = []
        lost_here: list[ext.Discriminator] = []
        for c in companions:
            (kept if log.survives(c, fold) else lost_here).append(c)
        data = {**base, "also_dropped": [c.text for c in lost_here]}
        accounted = " (accounted)" if row["accounting"] is not None else ""
        head = ""
        if follow is None:
            label, result = f"then folded into {fold}{accounted} {where}", "after"
        else:
            result, detail = log.follow_at(follow, fold)
            if result == "carried":
                label = f"carried by fold {fold}{accounted} {where}"
            elif result == "carried in part":
                label = (f"carried only as its file name by fold {fold}{accounted} {where}"
                         f", not whole: {detail!r}")
                head = label[:label.rindex(": ") + 2]
                data["kept_only"] = detail
            elif result == "flipped":
                label = f"flipped at fold {fold}{accounted} {where}: {detail!r}"
                head = label[:len(label) - len(repr(detail))]
            else:
                label = f"LOST at fold {fold}{accounted} {where}"
        also = ("; also dropped: " + ", ".join(f"{c.kind.value} {c.text!r}"
                                               for c in lost_here)) if lost_here else ""
        cut = len(head or label) + (len("; also dropped: ") if also and not head else 0)
        up_follow = follow if result == "carried" else None
        up = (_carry(log, fold, up_follow, kept, seen, level + 1, budget)
              if up_follow is not None or kept else [])
        nodes.append(Node(label + also, {**data, "result": result}, up,
                          cut=cut if (also or head) else None))
    return nodes


_PREFER = ("carried", "carried in part", "unknown", "flipped", "lost")


def _fold_fate(log: _Log, node: Node) -> str:
    """Where the query ends on the chain from one fold node (see :data:`OUTCOMES`)."""
    result = node.data["result"]
    if result != "carried":
        return str(result)
    ups = [c for c in node.children if c.data.get("result") not in (None, "after")]
    if ups:
        return min((_fold_fate(log, c) for c in ups), key=_PREFER.index)
    ends = log.state(node.data["fold"])
    return "carried" if ends in ("retained", "offloaded (resolvable)") else "lost"


def _span_fate(log: _Log, span: str, children: list[Node]) -> str:
    """The query's fate for one span (see :data:`OUTCOMES`)."""
    state = log.state(span)
    if state == "retained":
        return "in context"
    if state.startswith("offloaded"):
        return "recoverable"
    folds = [c for c in children if c.data.get("result") not in (None, "after")]
    if not folds:
        return "lost"
    return min((_fold_fate(log, c) for c in folds), key=_PREFER.index)


def _reading(query: str) -> tuple[str, set[str], str | None]:
    """How ``query`` is read: (mode, norms, note).  ``discriminator`` when the
    extractor reads the whole query as one discriminator; else ``reduced`` (to the
    clauses whose words hold it), with a note that says so."""
    q = query.strip().lower()
    found = ext.extract(query)
    whole = {d.norm for d in found if d.text.strip().lower() == q or d.norm == q}
    if whole:
        return "discriminator", whole | {q}, None
    inner = ", ".join(f"{d.kind.value} {d.text!r}" for d in found)
    note = f"{query!r} is not a discriminator" + (f" (it holds {inner})" if inner else "")
    return "reduced", {q}, note


def trace_discriminator(session: Session, query: str) -> Node:
    """One node per raw span that holds ``query``, with where it went, under a root
    whose label counts the spans by fate (:data:`OUTCOMES`).

    A query that is not itself a discriminator is reduced to the clauses whose words
    hold it, and when none does, span texts are searched for it literally (word
    bounded, ``plain``; then as part of a word, ``substring``: a path a product cut
    short); ``data["reading"]`` and ``data["note"]`` say which.  Then summaries
    stating it with no raw span holding it.  Raises :class:`UsageError` when nothing
    matches.
    """
    log = _Log(session)
    mode, norms, note = _reading(query)
    asked_for = mode
    q = query.strip().lower()
    spans: list[tuple[str, list[ext.Discriminator], list[ext.Discriminator]]] = []
    for item, row in log.rows.items():
        if row["kind"] != "span" or row["text"] is None:
            continue
        found = ext.extract(row["text"], span_type(row["source"], row["text"]))
        # the query itself first (followed up the chain), then the clauses holding it
        hits = sorted((d for d in found if _matches(norms, q, d)),
                      key=lambda d: d.norm not in norms and d.text.lower() != q)
        if hits:  # companions: the other hits first, then by kind, so that a cut list
            # shows them and the facts before the values (usertest9: ids led it)
            rest = sorted((c for c in found if c not in hits), key=lambda c: -KIND_RANK[c.kind])
            spans.append((item, hits, hits[1:] + rest))
    if not spans and q:
        if mode == "discriminator":
            note = f"no span holds {query!r} as a discriminator"
        mode = "plain"
        spans = [(item, [], []) for item, row in log.rows.items()
                 if row["kind"] == "span" and row["text"] is not None
                 and _word_in(q, row["text"].lower())]
        if not spans:
            # a token cut short (a path a product truncated) is a part of a word:
            # search it as a plain substring before saying no raw span holds it
            spans = [(item, [], []) for item, row in log.rows.items()
                     if row["kind"] == "span" and row["text"] is not None
                     and q in row["text"].lower()]
            mode = "substring" if spans else mode
    # the root names what was followed: a word the extractor does not read as a
    # discriminator is not called one (its note says what it was reduced to), a query
    # of several words is no word (ux5 F9), and a discriminator no span holds as one
    # was followed as text (usertest7: "discriminator" over "no span holds it as one")
    what = ("discriminator" if mode == "discriminator" else "text"
            if asked_for == "discriminator" or len(query.split()) > 1 else "word")
    if mode == "reduced" and any(d.text.strip().lower() == q
                                 for _, hits, _ in spans for d in hits):
        # `12px` in backticks is an identifier where "12px" alone is not (usertest10)
        note = (f"{query!r} alone is not read as a discriminator; spans hold it as one "
                "in their own wording")
    elif mode == "reduced":
        note = f"{note}; reduced to the clause(s) whose words hold it"
    elif mode == "plain":
        note = f"{note}; span texts searched for it literally"
    elif mode == "substring":
        note = f"{note}; span texts searched for it literally, as part of a word"
    children = _span_nodes(log, spans, mode, q)
    if any(n.data["fate"] == "lost" for n in children):
        children += _span_nodes(log, _stating(log, spans), mode, q)
    children.sort(key=lambda n: (OUTCOMES.index(n.data["fate"]), n.data["round"],
                                 n.data["line"]))
    data: dict[str, Any] = {"query": query, "kind": "discriminator", "reading": mode}
    if note:
        data["note"] = note
    if not children:
        children = _summaries_stating(log, norms, q)
        counts = f"no span states it; {len(children)} summar{'y' if len(children) == 1 else 'ies'}"
    else:
        fates = [n.data["fate"] for n in children]
        data["counts"] = {o: fates.count(o) for o in OUTCOMES if o in fates}
        counts = counts_label(fates) + _still_held(children)
    if not children:
        raise UsageError(f"{query!r} is neither an item id nor a discriminator or words of any "
                         f"span or summary text in {session.path}")
    return Node(f"{what} {query!r}: {counts}", data, children)


def _stating(log: _Log, spans: list[tuple[str, list[ext.Discriminator],
                                          list[ext.Discriminator]]]
             ) -> list[tuple[str, list[ext.Discriminator], list[ext.Discriminator]]]:
    """The other spans that state the first hit of ``spans`` in another form (`12px`
    held, "(12px)" not extracted): the audit counts them as holding it
    (:mod:`compaction_audit.recall.wholetoken`), so the tree shows them beside a span
    that lost it (usertest10); none when no span holds the query as a discriminator."""
    fact = next((d for _, hits, _ in spans for d in hits[:1]), None)
    if fact is None or not looked_for(fact.kind.value, fact.text):
        return []
    named = {item for item, _, _ in spans}
    return [(item, [], []) for item, row in log.rows.items()
            if row["kind"] == "span" and row["text"] is not None and item not in named
            and states(row["text"], fact.text)
            and span_type(row["source"], row["text"]) in STATING_TYPES]


def _span_nodes(log: _Log, spans: list[tuple[str, list[ext.Discriminator],
                                              list[ext.Discriminator]]],
                mode: str, q: str) -> list[Node]:
    """One node per ``(span, hits, others)``: the span's fate for the query (each hit
    under its own fate), the chain of folds above it as children."""
    children: list[Node] = []
    for item, hits, others in spans:
        row = log.rows[item]
        follow = _Follow(d=hits[0]) if hits else _Follow(literal=q, part=mode == "substring")
        up = _carry(log, item, follow, others, set())
        fate = _span_fate(log, item, up)
        head = f"span {item} ({log.where(item)}; now {log.state(item)}): {fate}"
        # each hit under its own fate (usertest8: a constraint holding the query read
        # "carried" beside a fold that dropped it; adv50: one that a second fold still
        # carried read "dropped")
        fates = [fate, *(_span_fate(log, item, _carry(log, item, _Follow(d=h), [], set()))
                         for h in hits[1:])] if hits else []
        stated = "; ".join(
            (f"{f}: " if f != fate else "") + ", ".join(
                f"{d.kind.value} {d.text!r}" for d, g in zip(hits, fates, strict=True)
                if g == f)
            for f in dict.fromkeys(fates))
        children.append(Node(
            head + (f"; {stated}" if stated else ""),
            {"span": item, "source": row["source"], "round": row["round"],
             "line": row["line"], **log.at(item), "state": log.state(item), "fate": fate,
             "matched": [{"kind": d.kind.value, "text": d.text, "norm": d.norm, "fate": g}
                         for d, g in zip(hits, fates, strict=True)]},
            up, cut=len(head) + 2 if stated else None))
    return children


HELD = ("carried", "recoverable", "in context")
"""Span fates under which the value can still be read (:data:`OUTCOMES`)."""


def _still_held(spans: list[Node]) -> str:
    """``; still held by span X`` (``and N more``) when some spans lost the value and
    another still holds it: each lost span's "LOST at fold" is true of that span
    alone, and a reader of the tree took the value for lost (ux4 F11).  The first
    holding span in the tree's order is named (its fate is on its own line), with its
    source when the log gives one: "line-19 (user)" is the person's own later message,
    which a reader took for the fact kept (usertest5).  When every holder is a message
    of the person (source ``user``) written at or after the first fold that lost the
    value, the label says only the person states it again (the audit's "asked again");
    otherwise a span that kept it is named before such messages.  Empty otherwise."""
    held = [n for n in spans if n.data["fate"] in HELD]
    if not held or len(held) == len(spans):
        return ""
    lost_at = min((r for n in spans if n.data["fate"] == "lost"
                   for r in _loss_rounds(n)), default=None)
    asked = [n for n in held if n.data.get("source") == "user"
             and lost_at is not None and n.data["round"] >= lost_at]
    if len(asked) == len(held):  # usertest11: the person's question read as the fact kept
        first = asked[0].data
        more = f" and {len(asked) - 1} more" if len(asked) > 1 else ""
        return (f"; after the loss only the person states it again: span {first['span']} "
                f"(user, round {first['round']}){more}")
    held = [n for n in held if n not in asked] + asked  # a span that kept it first
    more = f" and {len(held) - 1} more" if len(held) > 1 else ""
    source = held[0].data.get("source")
    who = f" ({source})" if source else ""
    return f"; still held by span {held[0].data['span']}{who}{more}"


def _loss_rounds(node: Node) -> list[int]:
    """The rounds of the folds below ``node`` (at any depth) that lost the query."""
    return [r for c in node.children
            for r in ([c.data["round"]] if c.data.get("result") == "lost" else [])
            + _loss_rounds(c)]


def _summaries_stating(log: _Log, norms: set[str], q: str) -> list[Node]:
    """Summaries whose text states the query when no raw span does: a claim with no
    raw source (rule unsupported-summary-claim, issue 12), oldest first.  A summary
    that holds no discriminator matching it but has the query as words of its text
    (word bounded, as span texts are searched) states it as ``text`` (usertest11:
    words copied from a summary were "neither an item id nor a discriminator")."""
    found = []
    for item, row in log.rows.items():
        if row["kind"] != "summary" or row["text"] is None:
            continue
        where = f"(depth {row['depth']}, {log.where(item)}) with no raw span holding it"
        base = {"summary": item, "round": row["round"], "line": row["line"], **log.at(item),
                "result": "no raw source"}
        d = next((d for d in ext.extract(row["text"]) if _matches(norms, q, d)), None)
        if d is not None:
            found.append(Node(f"{d.kind.value} {d.text!r} stated by summary {item} {where}",
                              {**base, "kind": d.kind.value, "text": d.text, "norm": d.norm}))
        elif q and _word_in(q, row["text"].lower()):
            found.append(Node(f"text stated by summary {item} {where}",
                              {**base, "kind": "text", "text": q, "norm": q}))
        if len(found) >= MAX_NODES:
            break
    return sorted(found, key=lambda n: (n.data["round"], n.data["line"]))


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
            what = ("no text to compare" if lost is None else
                    f"dropped {len(lost)}: " if lost else "kept every discriminator")
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
    return Node(f"span {item} ({log.where(item)}; now {log.state(item)}): folded into "
                f"{n} summar{'y' if n == 1 else 'ies'}",
                {"span": item, "round": row["round"], "line": row["line"], **log.at(item),
                 "state": log.state(item), "text": row["text"]}, folds)


def trace_summary(session: Session, item: str) -> Node:
    """A summary's provenance tree down to its leaves, each with its final state; an
    item reached again (a shared sub-DAG) is one ``shown above`` node, and the root's
    label counts the distinct spans below by fate (:data:`OUTCOMES`)."""
    log = _Log(session)
    budget = _Budget()

    shown: set[str] = set()

    def down(node_id: str, level: int = 0) -> Node:
        row = log.rows[node_id]
        kind = "summary" if row["kind"] == "summary" else "span"
        if node_id in shown:  # one node per item: a shared sub-DAG is drawn once
            return Node(f"{kind} {node_id}: shown above",
                        {"id": node_id, "kind": kind, "shown_above": True})
        shown.add(node_id)
        node = Node(f"{kind} {node_id} (depth {row['depth']}, {log.where(node_id)}): "
                    f"{log.state(node_id)}",
                    {"id": node_id, "kind": kind, "depth": row["depth"],
                     "round": row["round"], "line": row["line"], **log.at(node_id),
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

    root = down(item)
    fates = [_LEAF_FATE[log.state(s).split(" ")[0]] for s in _leaves(log, item)]
    root.label += f"; {counts_label(fates)} below"
    root.data["counts"] = {o: fates.count(o) for o in OUTCOMES if o in fates}
    return root


_LEAF_FATE = {"retained": "in context", "offloaded": "recoverable", "evicted": "lost",
              "dropped": "lost"}


def _leaves(log: _Log, item: str) -> list[str]:
    """The distinct raw spans under ``item`` (each once, however many paths reach it;
    iterative, so a deep chain does not recurse)."""
    seen, stack, out = {item}, [item], []
    while stack:
        node = stack.pop()
        kids = log.children.get(node, [])
        if not kids and log.rows[node]["kind"] == "span":
            out.append(node)
        for child in kids:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return out


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

    Raises :class:`UsageError` when nothing matches.
    """
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
