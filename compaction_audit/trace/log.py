"""Lookups over a session's tables for a trace, built once per trace (:class:`_Log`),
and the files its lines are in (:func:`line_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from compaction_audit.io.harness import is_person_source
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.analysis.lifted import RULE_KINDS, Speakers, statements
from compaction_audit.recall.survival import check as surv  # where tests patch survives
from compaction_audit.recall.survival.bindings import Bindings, merged_bindings
from compaction_audit.report.lines import line_at
from compaction_audit.report.safe import unsurrogate
from compaction_audit.trace.tree import Node

if TYPE_CHECKING:
    from compaction_audit.trace.query import _Follow


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
        self.order = {item: k for k, item in enumerate(self.rows)}  # the log's order
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
        # an item back in the working set after it left: read back (usertest65 #8:
        # a rehydrated span said "offloaded at round 2" and nothing of round 6)
        back = (session.membership.sort("id", "start")
                .filter(pl.col("start") > pl.col("start").min().over("id"))
                .select("id", "start").rows())
        for item, ri in back:
            self.events.setdefault(item, []).append((ri, self.line_of[ri], "read back"))
            self.events[item].sort()
        last = session.membership.filter(pl.col("end") == self.n)["id"].to_list()
        self.retained = set(last)
        self._answers: dict[tuple[Any, ...], tuple[str, str | None]] = {}
        self._kept: dict[tuple[Any, ...], bool] = {}
        self._folded: dict[str, Bindings] = {}
        self._speakers: dict[str, Speakers] = {}

    def follow_at(self, follow: _Follow, fold: str) -> tuple[str, str | None]:
        """``follow.at`` of ``fold``'s text, computed once per (query, fold): every span
        under a fold asks the same question of the same text, and each answer reads the
        whole text (a word search on a lowered copy), so n spans under one summary of L
        characters cost n x L (issue 11, class 5, adv10 F5: 0.85 MB took 76 s)."""
        d, rule = follow.d, follow.rule
        key = (follow.literal, follow.part, None if d is None else (d.kind, d.text, d.norm),
               None if rule is None else (rule.kind, rule.text, rule.norm), fold)
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = follow.at(self.rows[fold]["text"],
                                                   lambda: self.folded(fold))
        return found

    def lifted_by(self, follow: _Follow, fold: str, item: str) -> str | None:
        """The person's span among ``fold``'s children, born after its child ``item``
        (by round, then by place in the log: :meth:`_born`), that states the followed rule
        reversed (:func:`~compaction_audit.recall.analysis.lifted.lifts`): the person
        lifted the rule, and the fold lost nothing, as the audit reads it
        (:func:`~compaction_audit.recall.analysis.lifted.without_lifted`).  None when
        the query is no rule (nor the object of one) or no later person span lifts it.
        Each fold's person children are read once, through the analysis's own
        :class:`~compaction_audit.recall.analysis.lifted.Speakers`."""
        rule = follow.rule or follow.d
        if rule is None or rule.kind.value not in RULE_KINDS:
            return None
        speakers = self._speakers.get(fold)
        if speakers is None:
            speakers = self._speakers[fold] = Speakers()
            for c in dict.fromkeys(self.children.get(fold, [])):
                text = self.rows[c]["text"]
                if text is not None and is_person_source(self.rows[c]["source"] or ""):
                    speakers.add(self._born(c), c, statements(text))
        return speakers.lifter(rule, self._born(item))

    def _born(self, item: str) -> tuple[int, int]:
        """(round index, place in the log) of ``item``: which of two children of one
        fold came later (as the audit reads it: not their order in ``children``)."""
        ri = self.rows[item]["ri"]
        return (ri if ri is not None else -1, self.order[item])

    def folded(self, fold: str) -> Bindings:
        """What the texts ``fold`` folded bind each name to (built once per fold):
        a value one of them binds is no change of the fold's
        (:func:`~compaction_audit.recall.survival.bindings.changed_sentence`)."""
        found = self._folded.get(fold)
        if found is None:
            found = self._folded[fold] = merged_bindings(
                text for c in self.children.get(fold, ())
                if (text := self.rows[c]["text"]) is not None)
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


def reach(links: dict[str, list[str]], item: str) -> list[str]:
    """The distinct items reached from ``item`` through ``links`` (``_Log.children``:
    below it, ``_Log.parents``: above it), ``item`` left out, each once however many
    paths reach it; iterative, so a deep chain does not recurse."""
    seen, stack, out = {item}, [item], []
    while stack:
        for nxt in links.get(stack.pop(), []):
            if nxt not in seen:
                seen.add(nxt)
                out.append(nxt)
                stack.append(nxt)
    return out
