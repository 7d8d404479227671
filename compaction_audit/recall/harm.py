"""Harm shown by action: a later span that reused a value the compaction lost.

Issue 10, point 4: a lost discriminator matters most when the agent acts on it after the
fold, e.g. ``order delete ORD-5501 --cascade`` run in the round that lost "Test order
ORD-5501 verified".  A person stating it again ("asked again") is the other evidence:
a later user span that states the lost item, judged by the survival rules with the
user's text in place of a summary (:func:`asked_again`), or holding the same key.

Reuse: a span born at or after the round the key was lost (the compaction's own round
included: the new spans of that round come after the fold), other than the span the
key was first seen in, that holds the same discriminator key and is an *action*: a tool
call (source ``tool_call:*``) or a span whose text reads as a destructive command
(:data:`DESTRUCTIVE_RE`).  A destructive one is reported first, then the earliest.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import polars as pl

from compaction_audit.limits import Limit
from compaction_audit.recall.factkeys import key_norm
from compaction_audit.recall.kinds import CLAUSE_KINDS, Discriminator, Kind
from compaction_audit.recall.literals import Literals
from compaction_audit.recall.questions import (
    Question,
    asks_about,
    asks_clause,
    question_stems,
    subject_question,
)
from compaction_audit.recall.survival import survives

__all__ = ["ASKED_AGAIN_MAX_CHECKS", "DESTRUCTIVE_RE", "asked_again", "reuse"]

ASKED_AGAIN_MAX_CHECKS = 50_000
"""Most (lost item, later user span) survival checks :func:`asked_again` makes in one
session (a bound on Python work per session: lost items x later user messages grows
with the square of the input).  Past it the check stops, the lost items not yet checked
keep only exact key matches, and a :class:`~compaction_audit.limits.Limit` says where it
stopped (issue 11, class 5: it used to check none, silently)."""

DESTRUCTIVE_RE = (
    r"(?i)(?:^|[\s;&|(`'\"])(?:rm|rmdir|delete|del|drop|truncate|destroy|purge|wipe|erase"
    r"|kill|pkill|terminate|revoke|uninstall|deprovision|reset\s+--hard|push\s+(?:-f|--force)"
    r"|--force|-rf|--cascade|--hard|--prune|overwrite)(?:$|[\s;&|)`'\"])"
)
"""A destructive command word or flag (rm, delete, drop, truncate, destroy, --force,
--cascade, reset --hard...), as a Polars regex over the span text."""
PROHIBITION = r"(?i)\b(?:not|never|don't|no|avoid|cannot)\b"
"""Text that forbids rather than acts (a Polars regex): a span that is no tool call and
says it is no destructive action ("Do NOT run migration 0087 with --force" restates a
rule)."""


def reuse(lost: pl.DataFrame, occurrences: pl.DataFrame, items: pl.DataFrame,
          rounds: pl.DataFrame) -> pl.DataFrame:
    """For each lost key, the first later action that reused it.

    ``lost``: ``key``, ``start`` (round index of the loss), ``span`` (where the key was
    first seen).  ``occurrences``: ``key``, ``id`` for every span that holds a key
    (tool-output identifiers included).  ``items``: the session items (``id``, ``ri``,
    ``source``, ``text``).  ``rounds``: ``ri``, ``round``.  Returns ``key``,
    ``reused_round`` (round number), ``reused_span`` (item id), ``reused_destructive``
    (the reuse reads as a destructive command: the harm is marked on the lost item,
    issue 12, point 4); keys never reused are absent.  A span that is no tool call and
    forbids (:data:`PROHIBITION`) is no destructive action: a person restating the
    rule is no reuse of it (usertest77 F2).
    """
    text = pl.col("text").fill_null("")
    call = pl.col("source").fill_null("").str.starts_with("tool_call:")
    actions = items.filter(pl.col("kind") == "span").select(
        "id", "ri",
        (text.str.contains(DESTRUCTIVE_RE) & (call | ~text.str.contains(PROHIBITION))
         ).alias("destructive"),
        call.alias("call"))
    return (
        lost.join(occurrences.unique(), on="key")
        .filter(pl.col("id") != pl.col("span"))
        .join(actions, on="id")
        .filter((pl.col("ri") >= pl.col("start")) & (pl.col("call") | pl.col("destructive")))
        .join(rounds.select("ri", "round"), on="ri")
        .sort(["key", "destructive", "ri", "id"], descending=[False, True, False, False])
        .group_by("key", maintain_order=True)
        .agg(pl.col("round").first().alias("reused_round"),
             pl.col("id").first().alias("reused_span"),
             pl.col("destructive").first().alias("reused_destructive"))
    )


_WORDS_RE = re.compile(r"[a-z_][\w.-]*[a-z0-9_]")
_KIND_OF = {kind.value: kind for kind in Kind}


def asked_again(lost: pl.DataFrame, users: pl.DataFrame,
                limits: list[Limit] | None = None) -> pl.DataFrame:
    """Later user spans that state a lost item again, by the survival rules
    (:func:`compaction_audit.recall.survival.survives` with the user's text as the
    summary): "the verified order was ORD-5501", "remember: no route changes", "we are
    not writing a UI" for "we are not building a UI" (issue 12, point 5).

    A bare number (a quantity without a unit) never counts alone: the words stated with
    it (``read_timeout_ms`` of ``read_timeout_ms: 45000``) must be in the user's text
    too, and a number stated with no words is never asked again ("I ran 45000
    requests" does not restate ``read_timeout_ms: 45000``).

    ``lost``: ``key`` (``"<kind>:<norm>"``), ``kind``, ``text``, ``start`` (round index of
    the loss), and optionally ``lost_round`` and ``lost_line`` (the loss's round number
    and log line: where a :class:`~compaction_audit.limits.Limit` says the check
    stopped; usertest59 #7).  ``users``: ``id``, ``ri``, ``round``, ``text`` of user
    spans (not harness).  Returns ``key``, ``start``, ``id``, ``ri``, ``round`` for the
    first user span after the loss that states each lost item.  Lost items are checked in the
    order of ``lost``, each against the user spans after its loss in order, until
    :data:`ASKED_AGAIN_MAX_CHECKS` survival checks are made; the items not checked by
    then are appended to ``limits`` as one :class:`~compaction_audit.limits.Limit`
    (the first of them is where it stopped).
    """
    schema = {"key": pl.String, "start": pl.Int64, "id": pl.String, "ri": pl.Int64,
              "round": pl.Int64}
    rows: dict[str, list[object]] = {name: [] for name in schema}
    later = users.sort("ri").rows()
    born = [ri for _, ri, _, _ in later]
    # the answer depends on the text alone: a text met again for the same lost item
    # failed before (the first success ends the item), so it is counted, not checked
    # ("continue", "yes", a pasted error: user texts repeat)
    firsts: dict[str, int] = {}
    text_of = [firsts.setdefault(body, len(firsts)) for *_, body in later]
    # each lost item's words, kept while the checks go: a bare number's words are read
    # by a regex (bare numbers only), its discriminator is made when it is first
    # compared (past the cap the others are only counted; on the benchmark grid's 254 MB
    # text cell the cap stops after 3 of 25,084 lost items, whose objects took about
    # 40 % of this check, issue 14)
    norms = lost.select(key_norm(pl.col("key"), pl.col("kind")).alias("norm"))["norm"]
    bare_at = (lost["kind"] == Kind.QUANTITY.value) & ~norms.str.contains(" ", literal=True)
    texts, norm_of = lost["text"].to_list(), norms.to_list()
    words = {at: tuple(w for w in _WORDS_RE.findall(texts[at].lower()) if w != norm_of[at])
             for at in bare_at.arg_true().to_list()}
    checks = [(key, kind, text, norm, start, words.get(at, ()), at)
              for at, (key, kind, text, norm, start) in enumerate(zip(
                  lost["key"].to_list(), lost["kind"].to_list(), texts, norm_of,
                  lost["start"].to_list(), strict=True))
              if words.get(at, True)]  # a bare number never counts alone
    where = ((lost["lost_round"].to_list(), lost["lost_line"].to_list())
             if {"lost_round", "lost_line"} <= set(lost.columns) else None)
    # the named words each user text holds (substrings of its lowercase form), found
    # for all lost items in one pass over the text, on first need: was a lowercase copy
    # and a search of the whole text per (lost item, user span) pair (issue 11, class 5,
    # eighth adversarial pass F6)
    finder = Literals(w for *_, named, _ in checks for w in named)
    holds: dict[int, set[str]] = {}
    asks: dict[int, list[Question]] = {}  # each user text's questions, read once

    def held(at: int, body: str) -> set[str]:
        if at not in holds:
            holds[at] = finder.found_in(body.lower())
        return holds[at]

    def questions(at: int, body: str) -> list[Question]:
        key = text_of[at]
        if key not in asks:  # not setdefault: its argument would be read every time
            asks[key] = question_stems(body)
        return asks[key]

    left = ASKED_AGAIN_MAX_CHECKS
    for pos, (key, kind, text, norm, start, named, row) in enumerate(checks):
        first = bisect_right(born, start)  # the user spans after the loss
        if left < len(later) - first:  # it might not finish: stop before it
            _stopped(text, len(checks) - pos, limits, *(
                (where[0][row], where[1][row]) if where else (None, None)))
            break
        d = Discriminator(_KIND_OF[kind], text, norm, 0, len(text))
        about, clause = subject_question(d), d.kind in CLAUSE_KINDS
        failed: set[int] = set()
        for at in range(first, len(later)):
            left -= 1
            if text_of[at] in failed:
                continue
            item, ri, number, body = later[at]
            failed.add(text_of[at])
            if (survives(d, body) and (not named or held(at, body).issuperset(named))) \
                    or (about is not None and asks_about(about, body)) \
                    or (clause and asks_clause(d, questions(at, body))):
                for name, value in zip(schema, (key, start, item, ri, number), strict=True):
                    rows[name].append(value)
                break
    return pl.DataFrame(rows, schema=schema)


def _stopped(first: str, left: int, limits: list[Limit] | None,
             round_: int | None, line: int | None) -> None:
    """Append to ``limits`` that :func:`asked_again` stopped before ``left`` lost items,
    the first of them ``first`` (its text), lost at ``round_`` (log ``line``)."""
    if limits is not None:
        limits.append(Limit("asked-again", ASKED_AGAIN_MAX_CHECKS,
                            "(lost item, later user message) checks",
                            f"lost item {first!r}",
                            round_, line, left, "lost item(s)"))
