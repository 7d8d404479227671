"""Harm shown by action: a later tool call does what a rule lost at a fold forbade
(issue 12, point 4; rule ``lost-rule-violated``).

Built on the lost table (:func:`compaction_audit.recall.analysis.analyse`) and its
reuse columns (:func:`compaction_audit.recall.harm.reuse`):

* a lost negation or constraint that forbids an act on an object ("Do not run
  `lint-tool analyze` in this repo", "never add a `Co-Authored-By:` trailer") is
  *violated* when a tool call born at or after the round of the loss (the compaction's
  own round included: its new spans come after the fold) holds the object: for "run",
  "execute", "call", "invoke", "use", "enable", "pass", "push" a command, for "add",
  "include", "put", "write", "insert", "append", "commit" a write; a flag an act is
  done with is a command's ("commit with --no-verify"), "force-push" and "push -f" are
  "push --force", and "avoid" names a command with no verb ("avoid git reset --hard");
* an identifier lost at a fold whose first later reuse
  (``reused_span``) is a destructive command (:data:`~compaction_audit.recall.harm.DESTRUCTIVE_RE`)
  is harm as well ("order delete ORD-5501 --cascade").

What a rule forbids, its act and object, is read by
:mod:`compaction_audit.recall.forbids`.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.recall.callwords import refusals, runs
from compaction_audit.recall.flagalias import with_long_flags
from compaction_audit.recall.forbids import forbidden_all
from compaction_audit.recall.harm import DESTRUCTIVE_RE, PROHIBITION
from compaction_audit.recall.objmatch import matches
from compaction_audit.recall.permitted import without_permitted
from compaction_audit.recall.ranking import person_source
from compaction_audit.recall.unpinned import unpinned

__all__ = ["actor", "violations"]



_CALLS = ("tool_call:", "tool_use:", "function_call:")
_AUTHORS = {"user": "user message", "assistant": "assistant message",
            "tool": "tool output", "harness": "harness text"}
"""The source prefix a span's role gives it (``io.records.ROLE_PREFIX``) -> what
:func:`actor` calls the span."""
_SEPARATORS = " :#/-_."


def actor(source: str | None, span: str) -> str:
    """The span that acted (``violated_source``, ``violated_span``), as a finding's
    message names it: ``Bash call t8`` for a call (``tool_call:Bash``), ``Bash output
    t9`` for a tool's output (``tool_result:Bash``, or ``tool:tool_call:Bash``, a call
    source with role tool), ``tool output t10`` (role tool, ``tool:t10``), ``user
    message u3 (msg-3)`` (role user, ``user:msg-3``), ``message t10`` (a free-form
    source that ends with the id), ``span m3 (msg-3)`` (one that does not), ``span t8``
    without a source.  The id is named once (usertest38 #10: "tool:t10 t10",
    "tool:tool_call:Bash t10")."""
    src = source or ""
    head, colon, inner = src.partition(":")
    if src.startswith(_CALLS):
        return f"{inner or 'tool'} call {span}"
    if head == "tool_result" or (head == "tool" and inner.startswith(_CALLS)):
        name = inner.partition(":")[2] if inner.startswith(_CALLS) else inner
        return f"{name or 'tool'} output {span}"
    if head in _AUTHORS:
        rest = f" ({inner})" if colon and inner not in ("", span) else ""
        return f"{_AUTHORS[head]} {span}{rest}"
    if src and src != span and src.endswith(span) and src[-len(span) - 1] in _SEPARATORS:
        return f"{src[:-len(span)].rstrip(_SEPARATORS)} {span}"
    return f"span {span}" + (f" ({src})" if src and src != span else "")


def _escape(text: str) -> str:
    """``text`` as a literal in a Polars (Rust) regex."""
    return re.sub(r"([\\.^$|?*+()\[\]{}#&~-])", r"\\\1", text)


def _pattern(obj: str, at_start: bool) -> str:
    """A case-insensitive Polars regex finding ``obj`` as a whole word or phrase."""
    body = r"\s+".join(_escape(w) for w in obj.split())
    if at_start:
        return rf"(?i)(?:^|[;&|(]\s*|\$\(\s*|\n\s*){body}(?:$|\s)"
    return rf"(?i)(?:^|[^\w-]){body}(?:$|[^\w-])"


def _said(obj: str) -> str:
    """:func:`_pattern` of ``obj`` anywhere in a text, as a grant or refusal names it
    (:func:`~compaction_audit.recall.permitted.without_permitted`)."""
    return _pattern(obj, False)


def _rules(lost: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """The lost negations and constraints that forbid an act on an object, one row
    each: ``key``, ``kind``, ``text``, ``span``, ``fold``, ``lost_round``, ``start``
    (the ``ri`` of the loss's round: the last row of ``rounds`` with that round),
    ``object``, ``how``, ``at_start``, ``scope`` (a list of words, one of which a call
    must hold too: :class:`~compaction_audit.recall.forbids.Rule`), ``alt`` (0 for the
    rule's first object, then 1, 2, ... for those listed after it:
    :func:`forbidden_all`), one row per object.
    :func:`forbidden_all` runs once per distinct text."""
    rules = lost.filter((pl.col("cause") == "fold")
                        & pl.col("kind").is_in(["negation", "constraint"])).select(
        "key", "kind", "text", "span", "fold", "lost_round")
    texts = rules["text"].unique(maintain_order=True).to_list()
    parsed = [(t, i, p) for t in texts for i, p in enumerate(forbidden_all(t))]
    table = pl.DataFrame(
        {"text": [t for t, _, _ in parsed], "object": [p[0] for _, _, p in parsed],
         "how": [p[1] for _, _, p in parsed], "at_start": [p[2] for _, _, p in parsed],
         "scope": [list(p[3]) for _, _, p in parsed], "alt": [i for _, i, _ in parsed]},
        schema={"text": pl.String, "object": pl.String, "how": pl.String,
                "at_start": pl.Boolean, "scope": pl.List(pl.String), "alt": pl.Int64})
    starts = rounds.select(pl.col("round").alias("lost_round"), pl.col("ri").alias("start")
                           ).unique("lost_round", keep="last", maintain_order=True)
    return (rules.join(table, on="text", how="inner", maintain_order="left")
            .join(starts, on="lost_round", how="inner", maintain_order="left"))


def _first_calls(rules: pl.DataFrame, calls: pl.DataFrame, items: pl.DataFrame,
                 gone: pl.Series | None) -> pl.DataFrame:
    """For each rule, the first call at or after its ``start`` that is not its own
    span, holds its object and no person permitted (:func:`_unpermitted`): the rule's
    columns plus the call's ``id``, ``ri``,
    ``round``, ``source``, ``refused`` (null for a call that ran).  A call that ran is
    named before one the product refused (``calls``' ``refused``: adv124 #7, a refused
    push then retried read "tried to run").

    "First" is the total order (``ri``, ``line``, position in the items table): the
    round, then the file line, then the order within the record (two tool calls of one
    assistant message share a line).  One object match over all calls
    (:func:`~compaction_audit.recall.objmatch.matches`), then two as-of joins: the
    first match at or after the rule's start, and the next one when that is the rule's
    own span (item ids are unique, so at most one match is skipped).
    """
    calls = calls.with_row_index("_pos").sort("ri", "line", "_pos").with_row_index("ord")
    distinct = rules.select("object", "at_start", "how", "scope").unique(
        maintain_order=True)
    objects = distinct.with_row_index("pid").with_columns(
        pl.Series([" ".join(o.split()) for o in distinct["object"]], dtype=pl.String
                  ).alias("body"),
        pl.Series([_pattern(o, a) for o, a, _, _ in distinct.iter_rows()],
                  dtype=pl.String).alias("pattern"))
    found = matches(calls.select(pl.col("ord").alias("tid"), "text"),
                    objects.select("pid", "body", "at_start", "pattern"))
    # a run object counts where the call runs it: not in a quoted argument nor in a
    # file-editing tool's text (adv123 #1: a grep for --force "ran" it)
    run = {pid: re.compile(pattern) for pid, how, pattern
           in objects.select("pid", "how", "pattern").iter_rows() if how == "command"}
    hits = (_in_scope(runs(found.rename({"tid": "ord"})
                           .join(calls.select("ord", "id", "text", "source"), on="ord"),
                           run), objects)
            .join(calls.select("ord", "refused"), on="ord")
            .select("ord", "pid", "id", "refused").sort("ord"))
    todo = rules.with_row_index("_t").with_columns(
        calls["ri"].search_sorted(rules["start"], side="left").cast(pl.UInt32)
        .alias("_from")).join(objects.select("pid", "object", "at_start", "how", "scope"),
                              on=["object", "at_start", "how", "scope"])

    def first(frame: pl.DataFrame, among: pl.DataFrame) -> pl.DataFrame:
        def after(part: pl.DataFrame) -> pl.DataFrame:
            return part.sort("_from").join_asof(
                among.drop("refused"), left_on="_from", right_on="ord", by="pid",
                strategy="forward", check_sortedness=False)
        once = after(frame)
        own = once.filter(pl.col("id") == pl.col("span"))
        again = after(own.with_columns((pl.col("ord") + 1).alias("_from")).drop("ord", "id"))
        return pl.concat([once.filter(pl.col("id") != pl.col("span")), again]
                         ).drop_nulls("ord")

    ran = first(todo, hits.filter(pl.col("refused").is_null()))
    refused = first(todo.join(ran.select("_t"), on="_t", how="anti"),
                    hits.filter(pl.col("refused").is_not_null()))
    best = _unpermitted(pl.concat([ran, refused]), hits, items, gone)
    return best.drop("_t", "id").join(
        calls.select("ord", "id", "ri", "round", "source", "refused"), on="ord")


def _in_scope(hits: pl.DataFrame, objects: pl.DataFrame) -> pl.DataFrame:
    """``hits`` (``ord``, ``pid``, ``text``, ...) less those of an object with a
    ``scope`` whose call holds none of its words (any case): a flag forbidden on one
    command is not broken by another's (adv146 F3)."""
    scoped = objects.filter(pl.col("scope").list.len() > 0).select("pid", "scope")
    if not scoped.height:
        return hits
    named = (hits.select("ord", "pid", "text").join(scoped, on="pid").explode("scope")
             .filter(pl.col("text").str.to_lowercase().str.contains(pl.col("scope"),
                                                                    literal=True))
             .select("ord", "pid").unique())
    return pl.concat([hits.join(scoped, on="pid", how="anti"),
                      hits.join(named, on=["ord", "pid"], how="semi")])


def _unpermitted(best: pl.DataFrame, hits: pl.DataFrame, items: pl.DataFrame,
                 gone: pl.Series | None) -> pl.DataFrame:
    """``best`` (one call per rule, ``_t``; the call's ``ord`` and ``id``) with each call a
    person permitted (:func:`~compaction_audit.recall.permitted.without_permitted`)
    replaced by the rule's first later call holding its object that no one permitted,
    a call that ran before one the product refused; the rule's row is dropped when there
    is none.  A grant hides only the calls it covers: "you can force push feature/x",
    then a push of main (adv125: the first call, permitted, hid the second).  Only the
    rules whose first call was permitted are looked at again (most traces: none)."""
    def allowed(rows: pl.DataFrame) -> pl.DataFrame:
        return without_permitted(rows.rename({"id": "violated_span"}), items, _said,
                                 gone).rename({"violated_span": "id"})

    kept = allowed(best)
    if kept.height == best.height:
        return best
    again = best.join(kept.select("_t"), on="_t", how="anti")
    later = (again.drop("id").rename({"ord": "_after"})
             .join(hits.select("ord", "pid", "id", "refused"), on="pid")
             .filter((pl.col("ord") > pl.col("_after")) & (pl.col("id") != pl.col("span"))))
    if not later.height:
        return kept
    then = (allowed(later).sort(pl.col("refused").is_not_null(), "ord")
            .group_by("_t", maintain_order=True).first())
    return pl.concat([kept, then.select(kept.columns)])


def violations(lost: pl.DataFrame, items: pl.DataFrame, rounds: pl.DataFrame,
               gone: pl.Series | None = None) -> pl.DataFrame:
    """Later tool calls that did what a rule lost at a fold forbade, lost identifiers
    reused by a destructive command, and packages installed without a lost pin.

    ``lost``: the lost table (``kind``, ``text``, ``span``, ``cause``, ``fold``,
    ``lost_round``, ``reused_span``, ``reused_round``, ``key``).  ``items``: the session
    items.  ``rounds``: ``ri``, ``round``.  ``gone``: the ids the person took back
    (:func:`~compaction_audit.takeback.taken_back`), whose grants permit nothing.
    Returns one row per violated item and
    object: ``ri`` (of the violating span), ``key``, ``kind``, ``text``, ``span``,
    ``fold``, ``lost_round``, ``how`` ("command", "write", "destructive" or "unpinned":
    :func:`~compaction_audit.recall.unpinned.unpinned`), ``object``,
    ``alt`` (which of the rule's objects: 0 the first), ``violated_span``,
    ``violated_round``, ``violated_source``, ``refused`` (why the call did not run, null
    when it ran: :func:`~compaction_audit.recall.callwords.refusals`); sorted by ``ri``,
    ``key``, ``span``, ``fold``, ``how``, ``alt`` (a total order: one row per lost item,
    how and object).
    The violating call of a rule's object is its first (:func:`_first_calls`); the work is a
    fixed number of Polars queries, whatever the number of rules (issue 11, class 5).
    """
    schema: dict[str, Any] = {
        "ri": pl.Int64, "key": pl.String, "kind": pl.String, "text": pl.String,
        "span": pl.String, "fold": pl.String, "lost_round": pl.Int64, "how": pl.String,
        "object": pl.String, "alt": pl.Int64, "violated_span": pl.String,
        "violated_round": pl.Int64,
        "violated_source": pl.String, "refused": pl.String}
    if not lost.height:  # nothing lost (most traces): no row, without a query
        return pl.DataFrame(schema=schema)
    by_fold = lost.filter(pl.col("cause") == "fold")
    calls = items.filter((pl.col("kind") == "span")
                         & pl.col("source").fill_null("").str.starts_with("tool_call:")
                         & pl.col("text").is_not_null()).select(
        # a short flag read as its long form too: "git push -f" uses --force (adv108 #5)
        "id", "ri", "round", "line", "source", with_long_flags(pl.col("text")))
    calls = calls.with_columns(refusals(calls, items).alias("refused"))
    # the assistant's own words are an intent, not a rule ("I will not use --force,
    # let me check first": adv123 #2); a person's or a document's are
    sources = items.filter(pl.col("id").is_in(lost["span"].implode())).select(
        pl.col("id").alias("span"), pl.col("source").fill_null("").str.to_lowercase())
    own = sources.filter(pl.col("source").str.contains(r"^assistant(?::|$)"))
    stated = lost.join(own, on="span", how="anti")
    rules = _rules(stated, rounds)
    parts = []
    if rules.height and calls.height:
        parts.append(_first_calls(rules, calls, items, gone).select(
            "ri", "key", "kind", "text", "span", "fold", "lost_round", "how", "object",
            "alt", pl.col("id").alias("violated_span"), pl.col("round").alias("violated_round"),
            pl.col("source").alias("violated_source"), "refused"))
    # a pin lost at a fold, then its package installed without it (adv123 #5)
    pinned = unpinned(
        stated.filter(pl.col("cause") == "fold")
        .join(sources.select("span", person_source(pl.col("source")).alias("person")),
              on="span", how="left").with_columns(pl.col("person").fill_null(False))
        .select("key", "kind", "text", "span", "fold", "lost_round", "person"),
        calls.with_row_index("_p").sort("ri", "line", "_p"),
        rounds.select(pl.col("round").alias("lost_round"), pl.col("ri").alias("start"))
        .unique("lost_round", keep="last", maintain_order=True))
    if pinned:
        parts.append(pl.DataFrame(pinned).select(
            "ri", "key", "kind", "text", "span", "fold", "lost_round",
            pl.lit("unpinned").alias("how"), "object", pl.lit(0).alias("alt"),
            "violated_span", "violated_round", "violated_source",
            pl.lit(None, pl.String).alias("refused")))
    reused = by_fold.filter((pl.col("kind") == "identifier")
                            & pl.col("reused_span").is_not_null())
    # each reusing text read once, not once per identifier it reuses (adv116 P2: 20,000
    # lost identifiers reused by one call of 160 KB scanned it 20,000 times); an
    # action: a tool call, or text that is no prohibition ("Do NOT run migration 0087
    # with --force" restates a rule)
    text = pl.col("text").fill_null("")
    actions = (items.filter(pl.col("id").is_in(reused["reused_span"].unique().implode()))
               .filter(text.str.contains(DESTRUCTIVE_RE)
                       & (pl.col("source").fill_null("").str.starts_with("tool_call:")
                          | ~text.str.contains(PROHIBITION)))
               .select(pl.col("id").alias("reused_span"), "ri",
                       pl.col("source").alias("violated_source")))
    destructive = (
        reused.join(actions, on="reused_span")
        # the identifier is not itself the destructive word (a lost "--force" reused)
        .filter(~(" " + pl.col("text") + " ").str.contains(DESTRUCTIVE_RE))
        .select("ri", "key", "kind", "text", "span", pl.col("fold").cast(pl.String),
                pl.col("lost_round").cast(pl.Int64), pl.lit("destructive").alias("how"),
                pl.col("text").alias("object"), pl.lit(0).alias("alt"),
                pl.col("reused_span").alias("violated_span"),
                pl.col("reused_round").cast(pl.Int64).alias("violated_round"),
                "violated_source", pl.lit(None, pl.String).alias("refused")))
    parts.append(destructive)
    found = pl.concat([p.cast(schema) for p in parts]).sort(  # type: ignore[arg-type]
        "ri", "key", "span", "fold", "how", "alt", maintain_order=True)
    # why a call named did not run, whichever part named it (a refused install, too)
    found = found.drop("refused").join(
        calls.select(pl.col("id").alias("violated_span"), "refused"), on="violated_span",
        how="left", maintain_order="left")
    return without_permitted(found, items, _said, gone)
