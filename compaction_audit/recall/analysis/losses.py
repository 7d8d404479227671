"""The losses: each discriminator that became unrecoverable, judged at the fold.

:func:`_fold_losses` finds the fold that dropped each fact for good (an as-of join, one
row per drop); :func:`_lost_table` builds the lost table, most severe kind first.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.emptyframes import kept_for_schemas
from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.plans import collect, one
from compaction_audit.recall.analysis.intervals import _merge
from compaction_audit.recall.factkeys import stated_in
from compaction_audit.recall.finished import finished_work
from compaction_audit.recall.harm import asked_again, reuse
from compaction_audit.recall.ranking import document_source, person_source
from compaction_audit.recall.wholetoken import STATING_TYPES


def _fold_losses(session: Session, drops: pl.DataFrame, reach: pl.DataFrame,
                 held: pl.DataFrame) -> pl.DataFrame:
    """:func:`_fold_losses_of`; with no drops (no fold dropped anything: most small
    traces), its empty result, kept per input schemas (issue 14, fleet audits)."""
    if drops.height:
        return _fold_losses_of(session, drops, reach, held)
    return kept_for_schemas(
        "fold_losses", (drops, reach, held, session.membership),
        lambda: _fold_losses_of(session, drops, reach, held))


def _fold_losses_of(session: Session, drops: pl.DataFrame, reach: pl.DataFrame,
                    held: pl.DataFrame) -> pl.DataFrame:
    """Keys a fold dropped at round index ``ri`` that nothing held at that fold: no raw
    span born before ``ri`` and still holding it at ``ri`` (``reach``: ``key``, ``id``,
    ``born``, ``gone``, :func:`~compaction_audit.recall.analysis.stances.holding`), no
    working-set summary at ``ri`` that keeps it.  A span born at ``ri`` (read again
    after the compaction, in the same round) does not count: loss is judged at the fold
    (issue 10, point 4).

    Interval arithmetic: each span holds its keys over ``[born + 1, gone)`` here, each
    keeping summary over its membership; a drop is a loss when ``ri`` falls in no merged
    interval of its key.  Columns ``key``, ``start`` (= ``ri``), ``by_fold`` (true).

    Each drop is looked up in its key's merged intervals by an as-of join (the last
    interval starting at or before ``ri``; merged intervals are disjoint, so ``ri`` is
    in one of them only if it is in that one): one row per drop.  Joining every drop of
    a key with every interval of the key grows with rounds squared (a key dropped at
    1,200 rounds and held over 80 intervals: 1.4 million rows at 18 MB, 22 million and
    an abort at 73 MB; adv15 F4, issue 11 class 5)."""
    at = drops.select("key", "ri").unique()
    keys = at.lazy().select("key").unique()
    strict = one(pl.concat([  # one plan (issue 14, fleet audits)
        reach.lazy().join(keys, on="key")
        .select("key", (pl.col("born") + 1).alias("start"), pl.col("gone").alias("end")),
        held.lazy().join(keys, on="key").join(session.membership.lazy(), on="id")
        .select("key", "start", "end"),
    ]).filter(pl.col("start") < pl.col("end")))
    return one(at.lazy().sort("ri")  # one plan (issue 14, fleet audits)
               .join_asof(_merge(strict, "key").lazy().sort("start"), left_on="ri",
                          right_on="start", by="key", strategy="backward",
                          check_sortedness=False)
               .filter(pl.col("end").is_null() | (pl.col("end") <= pl.col("ri")))
               .select("key", pl.col("ri").alias("start"), pl.lit(True).alias("by_fold")))


def _lost_table(session: Session, items: pl.DataFrame, occ: pl.DataFrame,
                names: pl.DataFrame, losses: pl.DataFrame,
                drops: pl.DataFrame, limits: list[Limit], reach: pl.DataFrame
                ) -> pl.DataFrame:
    """:func:`_lost_rows`; with no losses, its empty result (nothing is checked, no
    limit is met), kept per input schemas (issue 14, fleet audits)."""
    if losses.height:
        return _lost_rows(session, items, occ, names, losses, drops, limits, reach)
    return kept_for_schemas(
        "lost_table", (session.rounds, items, occ, names, losses, drops, reach),
        lambda: _lost_rows(session, items, occ, names, losses, drops, limits, reach))


_ASKING_WORDS = (r"was|were|is|are|what|which|did|do|does|how|why|when|where|who|whose|can"
                 r"|could|should|would|will|have|has|had")
QUESTION = rf"\?|(?i)^\W*(?:{_ASKING_WORDS})\b"
"""A person's span that asks (a question mark, or an interrogative first word): only a
question has an answer to point at ("Set it to 45000 again, please." restates the fact,
and the reply to it is no answer from the summary)."""
NOT_ASKING = rf"(?i)^\W*(?:{_ASKING_WORDS})\s+not\b"
"""Such a first word followed by "not", with no question mark: an imperative or a
statement ("Do NOT use --force when running migration 0051 on prod.", "Did not
help."), no question (usertest77 F1: the next assistant line was its "answer")."""


NARRATION = (r"(?i)^\W*(?:let\s+me|let's|i'll|i\s+will|i'm\s+going\s+to|i\s+am\s+going\s+to"
             r"|(?:now|first|then|next),?\s+(?:let|i)\b)")
"""Assistant text that announces a step ("Let me check the config.", "I'll look at
it", "Now let me ..."): no answer, the step may read the fact again.  Narrower than
:data:`~compaction_audit.recall.ranking.CHATTER`: "Sure: it stayed at 30000." answers."""


def _answered(again: pl.LazyFrame, placed: pl.LazyFrame) -> pl.LazyFrame:
    """Per key asked again by a question (:data:`QUESTION`), the assistant's answer:
    its first text after the person's span that asked, in the log's order (the items
    table's: by round, then as each record lists them; lines alone are not an order
    when spans come from two files),
    and before the next span a person typed (a reply to that, not to the question);
    narration that announces a step (:data:`NARRATION`) is no answer: the step may
    read the fact again; only the assistant's visible text (``source`` "assistant", or
    "assistant:ID" as a native log's ``role`` "assistant" with its own source reads:
    usertest56 #5; not its thinking or reasoning) answers.
    ``placed``: the items with ``_pos``, their place in that order.  Columns ``key``,
    ``answered_line`` (its ``source_line``), ``answered_span``, ``answered_pos``; no row
    when nothing answered."""
    spans = placed.filter((pl.col("kind") == "span") & (pl.col("stype") != "harness"))
    text = pl.col("text").fill_null("")
    asks = text.str.contains(QUESTION) & ~(text.str.contains(NOT_ASKING)
                                           & ~text.str.contains("?", literal=True))
    asked = (again.join(spans.filter(asks)
                        .select(pl.col("id").alias("asked_again_span"),
                                pl.col("_pos").alias("asked_pos")),
                        on="asked_again_span").select("key", "asked_pos").sort("asked_pos"))
    said = pl.col("source").fill_null("").str.to_lowercase()
    visible = (said == "assistant") | (said.str.starts_with("assistant:")
                                       & ~said.str.contains("thinking|reasoning"))
    answers = (spans.filter(pl.col("text").is_not_null() & visible
                            & ~pl.col("text").str.contains(NARRATION))
               .select(pl.col("_pos").alias("answered_pos"),
                       pl.col("source_line").alias("answered_line"),
                       pl.col("id").alias("answered_span")))
    people = spans.filter(person_source(pl.col("source"))).select(
        pl.col("_pos").alias("next_pos"))
    return (asked.join_asof(answers, left_on="asked_pos", right_on="answered_pos",
                            strategy="forward", allow_exact_matches=False)
            .join_asof(people, left_on="asked_pos", right_on="next_pos", strategy="forward",
                       allow_exact_matches=False)
            .filter(pl.col("answered_pos").is_not_null()
                    & (pl.col("next_pos").is_null()
                       | (pl.col("answered_pos") < pl.col("next_pos"))))
            .select("key", "answered_line", "answered_span", "answered_pos"))


def _lost_rows(session: Session, items: pl.DataFrame, occ: pl.DataFrame,
               names: pl.DataFrame, losses: pl.DataFrame,
               drops: pl.DataFrame, limits: list[Limit], reach: pl.DataFrame
               ) -> pl.DataFrame:
    """First loss of each discriminator (a gap in its recoverability, or a fold that
    dropped it with nothing else holding it), with source span, its type and the log
    line that stated it (``span_line``: the earliest span holding it, in the log's order
    (round, line, then place in its record), or the earliest person's span holding it
    before the loss where there is one; ``text_line``:
    its 1-based line inside that span's cleaned text), the
    fold that lost it, the round, whether a user span stated it again afterwards, and
    whether a later action reused it (:func:`compaction_audit.recall.harm.reuse`).

    ``reread_round``/``reread_line``/``reread_span``: the first later span (born at the
    loss round or after, in log order) that holds the fact again, e.g. the agent re-ran the command
    that printed it: the fold still lost it (issue 10, point 4), but the context got it
    back there; null when nothing did.  A person's span is not a re-read: a person who
    names the fact again is asking about it (``asked_again_round``), and a question that
    names an identifier does not bring back the value it stood for; nor is the
    assistant's own prose or tool call: stating a fact from memory brings back nothing
    the log did not already say (an answer that names the identifier with the wrong
    value is the failure to point at, and ``grep -n read_timeout_ms`` names what it
    looks for, its result says what it found).

    ``answered_line``/``answered_span``: the assistant's first text after the person
    asked again (:func:`_answered`), when nothing read the fact again before it: an
    answer given from the summary (seed 002: the agent answers confidently from the
    summary and is wrong); null otherwise.

    ``finished_item``/``finished_line``: the work item the log closed before the fold
    whose section states the fact, or "git commit" for a commit message, and the
    closing call's line (:func:`~compaction_audit.recall.finished.finished_work`).

    ``occ``: every occurrence (``asked`` among its columns): a question that names the
    fact asks again, and an action naming it reuses it; the span that stated it and a
    re-read are spans that hold it (``reach``: ``key``, ``id``, ``until`` among others,
    :func:`~compaction_audit.recall.analysis.stances.holding`): a question names it,
    and a later call naming a rule's object outside the rule does not read the rule
    again (usertest38 #4)."""
    # a few plans, each collected once (issue 14, fleet audits): the lost rows and the
    # user spans, which asked_again and reuse read as frames, then the table
    rounds = session.rounds.lazy().select("ri", "round", "line")
    first = losses.lazy().sort("start", descending=False).group_by(
        "key", maintain_order=True).agg(pl.col("start").first(), pl.col("by_fold").any())
    spans = items.lazy().select("id", pl.col("ri").alias("born"), "source", "source_line")
    placed = items.lazy().with_row_index("_pos")  # the log's order (here and _answered)
    # the span that stated it: a person's, where one did before the loss, else the
    # earliest (usertest58 #3: "keep the deploy on v4.2.1", typed after the assistant's
    # "Deploy pinned to v4.2.1", ranked as the assistant's other prose); prose or a
    # document before code or tool output (usertest72 #6: the file a grep listed and
    # the assistant then said it edited ranked as tool output, off the first screen;
    # a span of the fold's own round only as a child a fold dropped it from: any other
    # came after the fold, a re-read; adv141 #8)
    typed = (person_source(pl.col("source")) & (pl.col("stype") != "harness")
             & (pl.col("born") <= pl.col("start")))
    worded = pl.col("stype").is_in(STATING_TYPES) & (
        (pl.col("born") < pl.col("start")) | pl.col("_dropped").fill_null(False))
    dropped_from = drops.lazy().select("key", pl.col("child").alias("id"),
                                       pl.lit(True).alias("_dropped")).unique()
    source = (occ.lazy().filter(~pl.col("asked")).drop("negated", "asked")
              .rename({"line": "text_line"}).join(spans, on="id")
              .join(placed.select("id", "_pos"), on="id")
              .join(first.select("key", "start"), on="key")
              .join(dropped_from, on=["key", "id"], how="left")
              .sort(typed.fill_null(False), worded.fill_null(False), "born", "source_line",
                    "_pos", descending=[True, True, False, False, False], maintain_order=True)
              .group_by("key", maintain_order=True).first().drop("start", "_pos", "_dropped"))
    fold_at = (first.select("key", "start").join(drops.lazy(), on="key")
               .filter(pl.col("ri") <= pl.col("start")).sort("ri", descending=True)
               .group_by("key", maintain_order=True).first()
               .join(rounds.select("ri", "round"), on="ri")
               .select("key", "fold", pl.col("round").alias("fold_round"),
                       pl.col("line").alias("fold_line")))
    lost_plan = (
        first.join(source, on="key")
        .join(rounds.rename({"ri": "start", "round": "lost_round", "line": "lost_line"}),
              on="start")
        .join(fold_at, on="key", how="left")
    )
    user_plan = items.lazy().filter(
        (pl.col("kind") == "span") & person_source(pl.col("source"))
        & (pl.col("stype") != "harness") & pl.col("text").is_not_null())
    lost, user_spans = collect(lost_plan, user_plan)
    # a bare number (a quantity without a unit) never counts alone (issue 12, point 5):
    # only asked_again judges it, with the words stated with it
    users = occ.lazy().filter(~(pl.col("key").str.starts_with("quantity:")
                                & ~pl.col("key").str.contains(" "))).join(
        user_spans.lazy().select("id", "ri", "round"), on="id")
    again = (pl.concat([
        lost.lazy().select("key", "start").join(users, on="key").select(
            "key", "start", "id", "ri", "round"),
        # in a total order: past its cap the check stops at the same item every run
        asked_again(lost.select("key", "kind", "text", "start", "lost_round", "lost_line")
                    .sort("start", "key"),
                    user_spans.select("id", "ri", "round", "text"), limits).lazy(),
    ]).filter(pl.col("ri") > pl.col("start")).sort("ri", "id")
        .group_by("key", maintain_order=True)
        .agg(pl.col("id").first().alias("asked_again_span"),
             pl.col("round").first().alias("asked_again_round")))
    reread = (
        lost.lazy().select("key", "start", pl.col("id").alias("src"))
        # a span stating a bound value alone reads it again, as it holds it (usertest38 #3)
        # (tested row by row: adv88 #1)
        .join(stated_in(reach.lazy().select("key", "id", "until"), occ)
              .join(spans, on="id"), on="key")
        .filter((pl.col("born") >= pl.col("start")) & (pl.col("id") != pl.col("src"))
                & (pl.col("until").is_null() | (pl.col("born") < pl.col("until")))
                & document_source(pl.col("source")))
        .join(rounds.select(pl.col("ri").alias("born"), "round"), on="born")
        .sort("born", "source_line", "id")
        .group_by("key", maintain_order=True)
        .agg(pl.col("round").first().alias("reread_round"),
             pl.col("source_line").first().alias("reread_line"),
             pl.col("id").first().alias("reread_span")))
    answered = _answered(again, placed)
    reused = reuse(lost.select("key", "start", pl.col("id").alias("span")),
                   pl.concat([occ.select("key", "id"), names.select("key", "id")]), items,
                   session.rounds)
    return finished_work(one(
        lost.lazy().join(again, on="key", how="left").join(reused.lazy(), on="key", how="left")
        .join(reread, on="key", how="left").join(answered, on="key", how="left")
        .join(placed.select(pl.col("id").alias("reread_span"),
                            pl.col("_pos").alias("reread_pos")), on="reread_span", how="left")
        .join(placed.select(pl.col("id").alias("asked_again_span"),  # where it was asked:
                            pl.col("source_line").alias("asked_again_line")),  # a converted
              on="asked_again_span", how="left")  # log's round lines are its own
        .with_columns(  # an answer the context had the fact for is no answer from memory
            *(pl.when(pl.col("reread_pos").is_null()
                      | (pl.col("reread_pos") > pl.col("answered_pos")))
              .then(pl.col(name)) for name in ("answered_line", "answered_span")))
        .select("kind", "text", "rank", pl.col("id").alias("span"),
                pl.col("source").alias("span_source"), pl.col("stype").alias("span_type"),
                pl.col("source_line").alias("span_line"), "text_line",
                pl.when(pl.col("by_fold")).then(pl.lit("fold")).otherwise(pl.lit("eviction"))
                .alias("cause"), "fold", "fold_round", "fold_line", "lost_round", "lost_line",
                "asked_again_span", "asked_again_round", "asked_again_line",
                "reused_round", "reused_span",
                "reused_destructive", "reread_round", "reread_line", "reread_span",
                "answered_line", "answered_span", "key")
        .sort(["rank", "lost_round", "key"], descending=[True, False, False])
    ), items)
