"""The trace of a discriminator or of words (``compaction-audit trace LOG 45000``): each
raw span that holds it, up the fold chain (seed 002: "tier-subsumption failure")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from compaction_audit.errors import UsageError
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.analysis.occurrences import NAME_KINDS, VALUE_TYPES
from compaction_audit.recall.bindings import BOUND_KINDS, bound_name
from compaction_audit.recall.factkeys import MAX_NAMES_PER_VALUE
from compaction_audit.recall.kinds import KIND_RANK
from compaction_audit.recall.spantypes import span_type
from compaction_audit.recall.survival import check as surv  # where tests patch survives
from compaction_audit.recall.survival.bindings import Bindings, changed_sentence
from compaction_audit.recall.wholetoken import STATING_TYPES, looked_for, states
from compaction_audit.trace.held import mark_unheld, stance_of, still_held
from compaction_audit.trace.log import _Log, reach
from compaction_audit.trace.reading import Asked, reading
from compaction_audit.trace.tree import (
    MAX_LEVELS,
    MAX_NODES,
    OUTCOMES,
    Node,
    _Budget,
    _cut,
    counts_label,
)

_CLAUSES = ext.CLAUSE_KINDS


MAX_QUERY = 1_000
"""Most characters of a QUERY that is not an item id: a discriminator, a clause or a
few words (a long URL or path fits).  The search for words costs the log's text times
the query's length at worst; a 16 KB query of 8,000 words took 75 s on a 2 MB log
(adv62)."""


def _is_word(char: str) -> bool:
    """A letter, digit or ``_`` (what ``\\w`` matches), or a combining mark: "zork"
    is no word of "zork\u0301" (adv63)."""
    return char.isalnum() or char == "_" or unicodedata.category(char).startswith("M")


@lru_cache(maxsize=8)
def _flat(text: str) -> str:
    """``text`` composed (NFC), case-folded and single-spaced: "café" written with a
    combining accent is "café", "Straße" is "strasse" (adv63: one spelling of a fact
    was lost and the other carried).  Cached: a summary's text is searched once per
    span the trace follows up to it."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def _word_in(needle: str, text: str) -> bool:
    """``needle`` occurs in ``text`` (both lower case) with no word character on
    either side; a space of ``needle`` is any run of white space in ``text`` (adv58:
    "migration\nguidance" of a wrapped line was not "migration guidance").  Both are
    made single-spaced once and searched with ``str.find`` (a regular expression of
    the words joined by ``\\s+`` backtracked: text x query, adv62)."""
    target = _flat(needle)
    if not target:
        return False
    flat = _flat(text)
    word_start = _is_word(target[0])
    at = flat.find(target)
    while at >= 0:
        end = at + len(target)
        if ((at == 0 or not _is_word(flat[at - 1]))
                and (end == len(flat) or not _is_word(flat[end]))):
            return True
        if word_start:  # no match starts inside this word: search after it (adv119:
            # a query of 999 "a" in a span of 2 MB of "a" took 14 s, a find per place)
            run = _WORD_RUN_RE.match(flat, at)  # (matches always: "*")
            past = run.end() if run else at
            at = flat.find(target, past + 1)
        else:
            at = flat.find(target, at + 1)
    return False


_WORD_RUN_RE = re.compile(r"[\w\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff"
                          r"\ufe20-\ufe2f]*")
"""A run of word characters (:func:`_is_word`; of the combining marks, those of the
combining blocks): every place inside it follows a word character, so no word starts
there.  Where it stops at a mark outside those blocks, the search goes on from there."""


@dataclass(frozen=True)
class _Follow:
    """What is followed up a fold chain: a discriminator, or (plain search) a literal
    string that a summary must hold whole."""

    d: ext.Discriminator | None = None
    literal: str | None = None
    part: bool = False  # the literal may be part of a word (a token cut short)
    rule: ext.Discriminator | None = None  # the prohibition whose object it is

    def at(self, text: str, sources: Callable[[], Bindings] | None = None
           ) -> tuple[str, str | None]:
        """(result, detail) for a summary ``text``: ``carried``; ``carried in part``
        with the file name kept (a path whose file name alone is stated: never
        reported as carried); ``flipped`` with the sentence (a rule reversed, a value bound
        to its name stated with another value that ``sources()``, what the texts the
        fold folded bind, do not bind it to); ``lost``.  The object of a prohibition
        (``rule``) is ``flipped`` where the summary states the rule reversed, whether it
        keeps the object's words or not: "Use --force when pushing to main" flips
        ``--force`` of "Never use --force when pushing to main" (usertest38 #4: it read
        "carried", and the query "Never use --force" "LOST", where negation-flipped
        reports the fold)."""
        result, detail = self._at(text, sources)
        if self.rule is not None and result != "flipped":
            sentence = surv.flip_sentence(self.rule, text)
            if sentence is not None:
                return "flipped", sentence
        return result, detail

    def _at(self, text: str, sources: Callable[[], Bindings] | None
            ) -> tuple[str, str | None]:
        """:meth:`at` of the query alone."""
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
        sentence = surv.flip_sentence(d, text)
        if sentence is None and bound_name(d) is not None:
            sentence = changed_sentence(d, text, sources)
        if sentence is not None:
            return "flipped", sentence  # the rule reversed (issue 12), a pin changed (ut38 #3)
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
           budget: _Budget | None = None, named: Sequence[ext.Discriminator] = ()
           ) -> list[Node]:
    """Nodes for the folds that took ``item`` in, following ``follow`` up the chain.

    ``companions`` are the origin span's other discriminators still stated by ``item``;
    each fold reports the ones it drops ("also dropped"), and the chain goes on after
    the query is lost while any companion survives (the seed 002 tier chain: the leaf
    drops the number, the mid tier the environment qualifier); ``named``: companions
    the span's own line names with their fate, left out of "also dropped" at a fold
    where the followed one is lost too (usertest24 #5: it spent its width on the
    clause named just above; where the followed one is carried, it says where the
    other was lost).  The span
    itself (``level`` 1) shows no event nodes: its label states its end state.
    """
    budget = budget or _Budget()
    nodes = log.event_nodes(item) if level > 1 else []
    shown = len(nodes)
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
            if log.survives(c, fold):
                kept.append(c)
            elif log.lifted_by(_Follow(d=c), fold, item) is None:  # a lifted rule: no loss
                lost_here.append(c)
        data: dict[str, Any] = {**base}
        accounted = " (accounted)" if row["accounting"] is not None else ""
        head = ""
        if follow is None:
            label, result = f"then folded into {fold}{accounted} {where}", "after"
        else:
            result, detail = log.follow_at(follow, fold)
            lifter = (log.lifted_by(follow, fold, item) if result in ("lost", "flipped")
                      else None)
            if lifter is not None:
                result = "lifted"
                label = (f"lifted at fold {fold}{accounted} {where}: the person lifted "
                         f"the rule in span {lifter} ({log.where(lifter)})")
                data["lifted_by"] = lifter
            elif result == "carried":
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
        # a hit the span's line names is lost (or flipped) where the followed one
        # is: said there
        told = [c for c in lost_here if not (result in ("lost", "flipped") and c in named)]
        data["also_dropped"] = [c.text for c in told]
        also = ("; also dropped: " + ", ".join(f"{c.kind.value} {c.text!r}"
                                               for c in told)) if told else ""
        cut = len(head or label) + (len("; also dropped: ") if also and not head else 0)
        up_follow = follow if result == "carried" else None
        up = (_carry(log, fold, up_follow, kept, seen, level + 1, budget)
              if up_follow is not None or kept else [])
        nodes.append(Node(label + also, {**data, "result": result}, up,
                          cut=cut if (also or head) else None))
    if follow is not None and len(nodes) > shown and "not_shown" in nodes[-1].data \
            and level > MAX_LEVELS:
        # adv57: past the levels drawn the chain still decides the query's fate (17
        # folds that each kept it, the last retained, read "lost" at the cut)
        fate, at = _fate_above(log, item, follow)
        edge = nodes[-1]
        edge.data["beyond"] = fate
        if at is not None:  # adv58: 3,000 folds, the last dropped it: no line said where,
            row = log.rows[at]  # and "1 more fold(s) above" counted the next level only
            how = {"lost": "LOST at", "flipped": "flipped at", "lifted": "lifted at",
                   "carried": "carried to",
                   "carried in part": "carried in part to", "unknown": "unknown at"}[fate]
            above = len(reach(log.parents, item))
            edge.data.update(beyond_fold=at, not_shown=above)
            edge.label = (f"... {above:,} more fold(s) above not shown; {how} fold {at} "
                         f"(depth {row['depth']}, {log.where(at)})")
    return nodes


def _fate_above(log: _Log, item: str, follow: _Follow) -> tuple[str, str | None]:
    """Where the query ends on the folds above ``item`` (each path followed while a
    fold carries it; a carrying fold nothing folds ends it by its state), worst of the
    paths by :data:`_PREFER`, with the fold where that path ends (None when no fold is
    above); the trees are not drawn (iterative: a deep chain)."""
    fates: dict[str, str] = {}
    seen: set[str] = set()
    stack = [item]
    while stack:
        node = stack.pop()
        for fold in log.parents.get(node, []):
            if fold in seen:
                continue
            seen.add(fold)
            result = ("unknown" if log.rows[fold]["text"] is None
                      else log.follow_at(follow, fold)[0])
            if result in ("lost", "flipped") and log.lifted_by(follow, fold, node):
                result = "lifted"
            if result != "carried":
                fates.setdefault(result, fold)
            elif log.parents.get(fold):
                stack.append(fold)
            else:
                fates.setdefault("carried" if log.state(fold) in (
                    "retained", "offloaded (resolvable)") else "lost", fold)
    if not fates:
        return "unknown", None
    worst = min(fates, key=_PREFER.index)
    return worst, fates[worst]


_PREFER = ("carried", "lifted", "carried in part", "unknown", "flipped", "lost")


def _fold_fate(log: _Log, node: Node) -> str:
    """Where the query ends on the chain from one fold node (see :data:`OUTCOMES`)."""
    result = node.data["result"]
    if result != "carried":
        return str(result)
    beyond = [str(c.data["beyond"]) for c in node.children if "beyond" in c.data]
    ups = [c for c in node.children if c.data.get("result") not in (None, "after")]
    if ups or beyond:
        return min([*(_fold_fate(log, c) for c in ups), *beyond], key=_PREFER.index)
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
    if len(query.strip()) > MAX_QUERY:
        raise UsageError(f"QUERY is {len(query.strip()):,} characters long; at most {MAX_QUERY:,} "
                         "(a discriminator, a span or summary id, or a few words)")
    log = _Log(session)
    mode, asked, note = reading(query)
    asked_for = mode
    q = query.strip().lower()
    harness = 0  # spans of text the product adds: never a discriminator's holder
    found_in: dict[str, tuple[str, list[ext.Discriminator]]] = {}
    for item, row in log.rows.items():
        if row["kind"] != "span" or row["text"] is None:
            continue
        stype = span_type(row["source"], row["text"])
        if stype == "harness":
            harness += bool(q) and _word_in(q, row["text"].lower())
            continue
        found_in[item] = (stype, ext.extract(row["text"], stype))
    if asked.name is not None and _names_bound(found_in, asked) > MAX_NAMES_PER_VALUE:
        asked = asked.without_alone()  # as the audit counts holders (adv88 #1)
    spans = _holding(found_in, asked)
    if mode == "discriminator" and not spans:
        # read alone the query is one kind, in its span's context another (a bullet of
        # a spec is a requirement there, a negation or a constraint alone): the audit
        # lists it under the span's kind, so the same text or norm of any kind holds it
        # (usertest40 #1: 7 of the audit's 15 lost facts traced as "text ... no span
        # holds it as a discriminator")
        spans = _holding(found_in, asked, by_kind=False)
    same = {d.norm for _, hits, _ in spans for d in hits
            if d.kind not in _CLAUSES and d.text.strip().lower() == q} - asked.norms
    if mode == "reduced" and same:
        # a span states the query as a discriminator ("read_timeout_ms = 30000", a
        # quantity of norm 30000): the audit counts every span stating that norm as
        # holding it, so the trace follows them too (usertest29 #1: the trace said
        # "1 lost" of a value the audit said another span still held)
        asked = asked.with_norms(same)
        spans = _holding(found_in, asked, by_kind=False)
    unsaid = _names_unsaid(log, found_in, spans)
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
        # `12px` in backticks is an identifier where "12px" alone is not (usertest10);
        # a spec's requirement is one in its spec, not alone (usertest24 #4: the audit's
        # own lost fact, copied, read "text ...", "in their own wording" though verbatim)
        what = "discriminator" if len(query.split()) > 1 else what  # a word stays one
        note = (f"{query!r} alone is not read as a discriminator; the spans' text states "
                "it as one")
    elif mode == "reduced":
        note = f"{note}; reduced to the clause(s) whose words hold it"
    elif mode == "plain":
        note = f"{note}; span texts searched for it literally"
    elif mode == "substring":
        note = f"{note}; span texts searched for it literally, as part of a word"
    if harness and mode != "plain" and mode != "substring":  # adv59: left out unsaid
        note = (f"{note}; " if note else "") + (
            f"{harness:,} span(s) of text the product adds (harness: reminders, notices) "
            "also hold it, not counted: harness text yields no discriminator")
    children = _span_nodes(log, spans, mode, asked, unsaid=unsaid, found_in=found_in)
    if any(n.data["fate"] == "lost" for n in children):
        children += _span_nodes(log, _stating(log, spans), mode, asked, found_in=found_in)
    if mode in ("reduced", "discriminator") and children:
        words = _mentions(log, {n.data["span"] for n in children}, q)
        children += _span_nodes(log, words, "plain", asked, " (as words of its text)",
                                found_in=found_in)
        if words:
            note = (f"{note}; " if note else "") + (
                f"of these, {len(words):,} span(s) hold it only as words of their text "
                "(searched literally)")
    mark_unheld(log, children)  # a question, a rule's object outside it (usertest38 #4)
    children.sort(key=lambda n: (OUTCOMES.index(n.data["fate"]), n.data["round"],
                                 n.data["line"]))
    # "kind" says what the trace followed, as the label does (adv57: words read
    # "discriminator" in JSON); "held" is the label's "still held by" (or "after the
    # loss only the person states it again") as data
    data: dict[str, Any] = {"query": query, "kind": what, "reading": mode}
    if note:
        data["note"] = note
    if not children:
        children = _summaries_stating(log, asked)
        counts = f"no span states it; {len(children)} summar{'y' if len(children) == 1 else 'ies'}"
        data["counts"] = {"summaries": len(children)}
        if children and mode in ("plain", "substring"):
            data["note"] = f"{data.get('note', '')}; then summary texts".lstrip("; ")
    else:
        fates = [n.data["fate"] for n in children]
        data["counts"] = {o: fates.count(o) for o in OUTCOMES if o in fates}
        held, data["held"], unheld = still_held(log, children)
        if unheld is not None:
            data["not_held"] = unheld
        counts = counts_label(fates) + held + _unsaid_label(children)
    if not children:
        raise UsageError(f"{query!r} is neither an item id nor a discriminator, nor found as "
                         f"written (its words in that order) in any span or summary text in "
                         f"{session.path}")  # adv74 #2: "words of" read as any order
    return Node(f"{what} {query!r}: {counts}", data, children)


def _names_bound(found_in: dict[str, tuple[str, list[ext.Discriminator]]],
                 asked: Asked) -> int:
    """How many names the spans of ``found_in`` bind the bound query's value to (a
    kind the query reads as, one of its norms)."""
    names = {bound_name(d) for _, found in found_in.values() for d in found
             if d.kind in BOUND_KINDS and d.norm in asked.norms
             and (asked.kinds is None or d.kind in asked.kinds)}
    return len({name.lower() for name in names if name is not None})


def _holding(found_in: dict[str, tuple[str, list[ext.Discriminator]]], asked: Asked,
             by_kind: bool = True
             ) -> list[tuple[str, list[ext.Discriminator], list[ext.Discriminator]]]:
    """``(span, hits, companions)`` for each span of ``found_in`` (its span type and
    discriminators) holding the query: the query itself first (followed up the chain),
    then the clauses holding it; companions: the other hits, then the clauses before
    the values (usertest9: ids led a cut list), each nearest the hit first (usertest11:
    the first requirements of a long spec, far from the hit, led it)."""
    spans = []
    for item, (_, found) in found_in.items():
        hits = sorted(asked.hits(found, by_kind),
                      key=lambda d: d.norm not in asked.norms and d.text.lower() != asked.q)
        if hits:
            at = hits[0].start
            rest = sorted((c for c in found if c not in hits),
                          key=lambda c: (c.kind not in _CLAUSES, abs(c.start - at),
                                         -KIND_RANK[c.kind]))
            spans.append((item, hits, hits[1:] + rest))
    return spans


def _names_unsaid(log: _Log, found_in: dict[str, tuple[str, list[ext.Discriminator]]],
                  spans: list[tuple[str, list[ext.Discriminator], list[ext.Discriminator]]]
                  ) -> set[str]:
    """The spans of ``spans`` whose first hit is a name of code or tool output that no
    prose or spec span states by the round the span stops being resolvable: the audit
    counts no such name as a fact (:data:`~compaction_audit.recall.analysis.occurrences.
    NAME_KINDS`; usertest29 #1: ``trace LOG -- -n`` said "LOST" of a grep flag the audit
    never lists)."""
    named = {item: hits[0] for item, hits, _ in spans
             if found_in[item][0] in VALUE_TYPES and hits[0].kind.value in NAME_KINDS}
    if not named:
        return set()
    keys = {(d.kind, d.norm) for d in named.values()}
    said: dict[tuple[ext.Kind, str], int] = {}
    for item, (stype, found) in found_in.items():
        if stype in STATING_TYPES:
            born = log.rows[item]["ri"]
            for d in found:
                if (d.kind, d.norm) in keys and born < said.get((d.kind, d.norm), born + 1):
                    said[(d.kind, d.norm)] = born
    out = set()
    for item, d in named.items():
        gone = log.rows[item]["gone_ri"]
        first = said.get((d.kind, d.norm))
        if first is None or first > (log.n if gone is None else gone):
            out.add(item)
    return out


def _unsaid_label(spans: list[Node]) -> str:
    """``; the audit counts no lost fact in N of them: ...`` when lost spans hold the
    query only as a name no prose states (:func:`_names_unsaid`), or were evicted in
    the round they came (never in the context at a round's end: ``fleeting``); empty
    otherwise."""
    uncounted = [s for s in spans if s.data.get("counted") is False
                 and s.data["fate"] == "lost"]
    parts = []
    for why, group in (("evicted in the round it came, never in the context at a "
                        "round's end", [s for s in uncounted if s.data.get("fleeting")]),
                       ("a name of code or tool output that no prose states",
                        [s for s in uncounted if not s.data.get("fleeting")])):
        if group:
            which = "it" if len(group) == len(spans) == 1 else f"{len(group):,} of them"
            parts.append(f"; the audit counts no lost fact in {which}: {why}")
    return "".join(parts)


def _mentions(log: _Log, named: set[str], q: str
              ) -> list[tuple[str, list[ext.Discriminator], list[ext.Discriminator]]]:
    """The spans not in ``named`` whose text holds ``q`` as words (word bounded, as
    :func:`_word_in`) where no discriminator or clause does: the trace of a word
    showed only the spans where the extractor read it (usertest14: "staging" in the
    person's lost instruction "Raise the staging read_timeout_ms" was left out, and
    the word looked first said after the compaction).  Harness text is left out, as
    it is from the rest of the trace."""
    return [(item, [], []) for item, row in log.rows.items()
            if row["kind"] == "span" and row["text"] is not None and item not in named
            and _word_in(q, row["text"].lower())
            and span_type(row["source"], row["text"]) != "harness"]


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
                mode: str, asked: Asked, mark: str = "",
                unsaid: frozenset[str] | set[str] = frozenset(),
                found_in: dict[str, tuple[str, list[ext.Discriminator]]] | None = None
                ) -> list[Node]:
    """One node per ``(span, hits, others)``: the span's fate for the query (each hit
    under its own fate), the chain of folds above it as children; ``mark`` ends the
    head of a span without hits (how it holds the query).  A span of ``unsaid``
    (:func:`_names_unsaid`) has ``counted`` false, its folds read "dropped at fold".
    ``found_in``: each span's type and discriminators, for the prohibition whose object
    the query is there (followed with it) and whether the span asks for it
    (:func:`~compaction_audit.trace.held.stance_of`; ``data``: ``ruled``, ``asked``).
    The first hit is followed up the chain as ``asked`` follows it (:meth:`Asked.follow`:
    a value stated alone, for a query bound to a name, as bound to it)."""
    children: list[Node] = []
    for item, hits, others in spans:
        row = log.rows[item]
        stype, found = (found_in or {}).get(item, ("", []))
        rule, negated, asks = stance_of(log, item, stype, found,
                                        hits[0] if hits else None, asked.q)
        follow = (_Follow(d=asked.follow(hits[0]), rule=rule) if hits
                  else _Follow(literal=asked.q, part=mode == "substring", rule=rule))
        up = _carry(log, item, follow, others, set(), named=hits[1:])
        fate = _span_fate(log, item, up)
        if fate in ("recoverable", "in context") or item in unsaid:
            _dropped_not_lost(up)
        # evicted in the round it came, no fold above it: never in the context at a
        # round's end, where the audit judges a loss (usertest66 F3: trace said "lost"
        # of 88 spans the audit does not count)
        fleeting = (fate == "lost" and not up and row["gone_ri"] == row["ri"]
                    and row["gone_reason"] == "evicted")
        head = f"span {item} ({log.where(item)}; now {log.state(item)}): {fate}" + (
            " (evicted in the round it came: not counted)" if fleeting else "") + (
            "" if hits else mark)
        # each hit under its own fate (usertest8: a constraint holding the query read
        # "carried" beside a fold that dropped it; adv50: one that a second fold still
        # carried read "dropped")
        fates = [fate, *(_span_fate(log, item, _carry(log, item, _Follow(d=h, rule=rule),
                                                      [], set()))
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
                         for d, g in zip(hits, fates, strict=True)],
             **({"counted": False} if item in unsaid or fleeting else {}),
             **({"fleeting": True} if fleeting else {}),
             **({"prose": True} if stype in STATING_TYPES else {}),
             **({"negated": True} if negated else {}),
             **({"asked": True} if asks else {})},
            up, cut=len(head) + 2 if stated else None))
    return children


def _dropped_not_lost(nodes: list[Node]) -> None:
    """Under a span that still holds the query (offloaded, or in context), a fold that
    dropped it reads "dropped at fold", not "LOST at fold": the span's own line says
    "recoverable" (usertest26 #3: both in one tree)."""
    for node in nodes:
        if node.data.get("result") == "lost" and node.label.startswith(_LOST):
            node.label = _DROPPED + node.label[len(_LOST):]
            if node.cut is not None:
                node.cut += len(_DROPPED) - len(_LOST)
        _dropped_not_lost(node.children)


_LOST, _DROPPED = "LOST at fold", "dropped at fold"


def _summaries_stating(log: _Log, asked: Asked) -> list[Node]:
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
        d = next(iter(asked.hits(ext.extract(row["text"]), False)), None)
        if d is not None:
            found.append(Node(f"{d.kind.value} {d.text!r} stated by summary {item} {where}",
                              {**base, "kind": d.kind.value, "text": d.text, "norm": d.norm}))
        elif asked.q and _word_in(asked.q, row["text"].lower()):
            found.append(Node(f"text stated by summary {item} {where}",
                              {**base, "kind": "text", "text": asked.q, "norm": asked.q}))
        if len(found) >= MAX_NODES:
            break
    return sorted(found, key=lambda n: (n.data["round"], n.data["line"]))
