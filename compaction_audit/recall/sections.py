"""The recall sections of a report: folded rounds, lost discriminators, disagreements.

Turns a :class:`~compaction_audit.recall.analysis.Recall` into JSON-able lists (the report
model's ``extra``), which the JSON report writes as is and the terminal report renders.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall.analysis import Recall
from compaction_audit.recall.bare import NO_SUMMARY_TEXT, compactions_without_text
from compaction_audit.recall.ranking import (
    person_source,
    rank_lost,
    tier_counts,
)
from compaction_audit.recall.spantypes import span_type

TRANSCRIPT_POINTER = r"(?i)read the full transcript at:?\s*(\S+)"
"""How a Claude Code 2.1 summary names the full transcript on disk ("If you need
specific details from before compaction ..., read the full transcript at: <path>").
The path is reported (``transcript_reference``) but not counted as a reference that
keeps a fact recoverable: see docs/adapters.md, "A summary that points to the
transcript"."""


def ranked_lost(recall: Recall, session: Session) -> pl.DataFrame:
    """``recall.lost`` in report order (:func:`~compaction_audit.recall.ranking.rank_lost`),
    with ``span_line`` from ``session.items`` (the line that stated the span) where the
    table has none."""
    line = "source_line" if "source_line" in session.items.columns else "line"
    return rank_lost(recall.lost, session.items.select("id", pl.col(line).alias("line")))


def recall_sections(recall: Recall, session: Session, ranked: pl.DataFrame | None = None,
                    fold_facts: pl.DataFrame | None = None) -> dict[str, Any]:
    """``{"folded_rounds": [...], "lost_discriminators": [...], "lost_tiers": {...},
    "classification_disagreements": [...], "folds_not_checked": int, "person_spans":
    int, ...}``.

    ``folded_rounds``: one entry per round with a fold that dropped a fact of a child
    (harness text left out), from ``fold_facts``
    (:func:`compaction_audit.rules.recall.fold_facts`: the rows the fold findings count):
    ``round``, ``line`` (``line_file`` beside it when the trace's lines are in several
    files), ``folds`` (ids), ``dropped`` (drops: one per child and fact), ``facts``
    (distinct facts dropped, summed over the round's folds, as each fold's finding
    counts them) and ``lost`` (those of ``facts`` no span holds any more; the rest are
    still held by another span).
    ``lost_discriminators``: in report order (:func:`ranked_lost`: tier, then later
    spans first), each with ``tier``, ``tier_name``, ``tier_why``, ``span_type`` and
    ``span_line`` (with ``span_file`` when the adapter read spans from a companion file:
    :func:`_span_file`), ``reused_round``, ``reused_span`` (a later action reused it);
    harness text is never listed.  ``lost_tiers``: items per tier
    number.  ``ranked``: the ranked table when the caller has it already.
    ``recall_checkable`` is false, and ``recall_not_checkable`` says "redacted: not
    checkable", when most span text is redaction placeholders.  ``person_spans``: how
    many spans a person typed (:func:`person_spans`).  ``declared_lost``
    (:func:`_declared`), only where a lost fact's span is tagged "discriminating".
    """
    ranked = ranked if ranked is not None else ranked_lost(recall, session)
    not_checked = recall.folds.filter(pl.col("check") != "text")
    return {
        "folded_rounds": _folded_rounds(fold_facts, session),
        "lost_discriminators": _with_files(ranked.drop("key").to_dicts(), session),
        "lost_tiers": {str(k): v for k, v in tier_counts(ranked).items()},
        "classification_disagreements": recall.disagreements,
        "folds_not_checked": not_checked.height,
        "recall_checkable": not recall.redacted,
        "recall_not_checkable": "redacted: not checkable" if recall.redacted else None,
        "folds_not_checked_discriminating": not_checked.filter(
            pl.col("check") == "salience_class").height,
        "person_spans": person_spans(session),
        **_declared(ranked, session),
    }


def _declared(ranked: pl.DataFrame, session: Session) -> dict[str, list[int]]:
    """``{"declared_lost": [positions]}``: the lost facts (their places in
    ``lost_discriminators``) stated by a span the agent tagged ``salience_class``
    "discriminating", which a fold rule never lowers for their tier; ``{}`` when none is
    (most logs).  ``diff`` weighs such a fact's unit as the audit weighs its fold
    (adv127 #2: a declared value lost in a fold that lost a person's rule too read a
    warning, and ``--fail-on-new error`` passed it)."""
    if "salience_class" not in session.items.columns or not ranked.height:
        return {}
    tagged = session.items.filter(pl.col("salience_class") == "discriminating")["id"]
    if not tagged.len():
        return {}
    at = (ranked.with_row_index("_at").filter(pl.col("span").is_in(tagged.implode()))
          ["_at"].to_list())
    return {"declared_lost": at} if at else {}


def _folded_rounds(fold_facts: pl.DataFrame | None, session: Session) -> list[dict[str, Any]]:
    """The ``folded_rounds`` entries (see :func:`recall_sections`): ``fold_facts``
    (``ri``, ``fold``, ``facts``, ``facts_lost``, ``drops``) summed per round."""
    if fold_facts is None or fold_facts.height == 0:
        return []
    files = session.rounds.get_column("line_file", default=None)
    where = ["line_file"] if files is not None and files.null_count() < len(files) else []
    rounds = session.rounds.select("ri", "round", "line", *where)
    return (fold_facts.group_by("ri")
            .agg(pl.col("fold").unique().sort().alias("folds"),
                 pl.col("drops").sum().cast(pl.Int64).alias("dropped"),
                 pl.col("facts").sum().cast(pl.Int64),
                 pl.col("facts_lost").sum().cast(pl.Int64).alias("lost"))
            .join(rounds, on="ri").sort("ri")
            .select("round", "line", *where, "folds", "dropped", "facts", "lost").to_dicts())


def _with_files(rows: list[dict[str, Any]], session: Session) -> list[dict[str, Any]]:
    """``rows`` each with ``span_file`` (:func:`_span_file`), ``reread_file`` and
    ``answered_file`` when the adapter read spans from a companion file; as they are
    otherwise."""
    line_file = session.header.extra.get("span_line_file")
    if not isinstance(line_file, str):
        return rows
    own = set(session.header.extra.get("span_line_file_except") or ())
    other = session.header.extra.get("span_line_file_except_in")
    return [{**d, **_span_file(line_file, own, d.get("span"), other),
             **_file_of("reread_file", line_file, own, d.get("reread_span"), other),
             **_file_of("answered_file", line_file, own, d.get("answered_span"), other),
             **_file_of("asked_again_file", line_file, own, d.get("asked_again_span"), other)}
            for d in rows]


def person_spans(session: Session) -> int:
    """Spans a person typed (source "user", queued messages included; not harness
    text): "asked again" can only be judged when there is one (issue 12, point 5:
    where none is, the report says so instead of showing zero)."""
    spans = (session.items.filter((pl.col("kind") == "span") & person_source(pl.col("source")))
             .group_by("source", "text").len())  # each distinct (source, text) typed once
    return sum(n for src, text, n in spans.iter_rows() if span_type(src, text) != "harness")


def _span_file(line_file: Any, own_lines: set[Any], span: Any, other: Any = None
               ) -> dict[str, str | None]:
    """``{"span_file": name}``: the file a span's line counts in when the adapter read
    spans from a companion file (its ``span_line_file``: a Cline messages file beside
    the compaction file given); for a span of ``span_line_file_except`` (``own_lines``)
    the file ``other`` names (``span_line_file_except_in``: a Cline manifest given, the
    compaction file), else null (the file given); ``{}`` (no key, the output of other
    logs unchanged) when the adapter names no such file."""
    if not isinstance(line_file, str):
        return {}
    if span in own_lines:
        return {"span_file": other[:200] if isinstance(other, str) else None}
    return {"span_file": line_file[:200]}


def _file_of(key: str, line_file: Any, own_lines: set[Any], span: Any, other: Any = None
             ) -> dict[str, str | None]:
    """``{key: name}``: the file the line of ``span`` counts in, by the rule of
    :func:`_span_file` (``reread_file`` for the span that read the fact again,
    ``answered_file`` for the answer; null: the file given, or no such span); ``{}``
    when the adapter names no such file."""
    if not isinstance(line_file, str):
        return {}
    if span is None:
        return {key: None}
    return {key: _span_file(line_file, own_lines, span, other)["span_file"]}


def loss_unchecked(c: dict[str, Any], bare: frozenset[str] = frozenset()) -> bool:
    """Whether the loss of compaction ``c`` (an adapter's ``compaction`` extension)
    cannot be checked: its summary is opaque (encrypted) or redacted, its adapter
    marked it ``unchecked`` (a Cline compaction file read without its messages), or
    its summary is one of ``bare``, those that carry no text over a child that does
    (:func:`~compaction_audit.recall.bare.compactions_without_text`)."""
    return bool(c.get("opaque") or c.get("redacted") or c.get("unchecked")
                or c.get("summary_id") in bare)


DEBT_UNKNOWN = ("recall_debt", "recall_debt_fold", "recall_debt_eviction")
"""The debt columns that are unknown from a compaction whose loss cannot be checked."""


def debt_checked(debt: pl.DataFrame, session: Session, redacted: bool) -> pl.DataFrame:
    """``debt`` (one row per round index ``ri``) with :data:`DEBT_UNKNOWN` null from
    the round of the first compaction whose loss cannot be checked
    (:func:`loss_unchecked`; every round of a log that is mostly redaction,
    ``redacted``): what it lost is not counted, so a count there would be a floor read
    as a measure (a 0 plotted after an encrypted compaction; ``diff`` called it
    "8 -> 0 (-8)", usertest26 #1)."""
    bare = compactions_without_text(session)
    rounds = [c["ri"] for c in session.compactions if loss_unchecked(c, bare)]
    start = 0 if redacted else min(rounds, default=None)
    if start is None or not set(DEBT_UNKNOWN) <= set(debt.columns):
        return debt
    return debt.with_columns(pl.when(pl.col("ri") < start).then(pl.col(name)).alias(name)
                             for name in DEBT_UNKNOWN)


def _lost_at(lost: pl.DataFrame, compactions: list[dict[str, Any]], redacted: bool,
             bare: frozenset[str] = frozenset()) -> list[list[dict[str, Any]]]:
    """For each compaction, the rows of ``lost`` (as dicts, in its order) lost at it:
    ``lost_round`` equal to its ``round`` or ``fold`` equal to its ``summary_id`` (a
    string; another type names no fold); none
    for a compaction not checked (opaque, redacted, ``unchecked`` or a summary of
    ``bare``: :func:`loss_unchecked`).  Two joins for all
    compactions (was one query per compaction, issue 11, class 5)."""
    checked = [i for i, c in enumerate(compactions)
               if not (redacted or loss_unchecked(c, bare))]
    out: list[list[dict[str, Any]]] = [[] for _ in compactions]
    if not checked or lost.height == 0:
        return out
    table = pl.DataFrame(
        {"ci": checked, "round": [compactions[i]["round"] for i in checked],
         "summary_id": [sid if isinstance(sid := compactions[i].get("summary_id"), str)
                        else None for i in checked]},
        schema={"ci": pl.Int64, "round": pl.Int64, "summary_id": pl.String})
    rows = lost.with_row_index("li")
    pairs = pl.concat([
        table.join(rows.select("li", pl.col("lost_round").alias("round")), on="round"),
        table.join(rows.select("li", pl.col("fold").alias("summary_id")), on="summary_id")],
        how="diagonal").select("ci", "li").unique().sort("ci", "li")
    wanted = pairs["li"].unique().sort()
    dicts = dict(zip(wanted.to_list(), rows.drop("li")[wanted].to_dicts(), strict=True))
    for ci, li in pairs.iter_rows():
        out[ci].append(dicts[li])
    return out


def _folded_tokens(session: Session) -> dict[str, int]:
    """Tokens of each compaction summary's children (their sum), by summary id: one
    query for every compaction."""
    ids = [c["summary_id"] for c in session.compactions if c.get("summary_id") is not None]
    if not ids:
        return {}
    sums = (session.edges.filter(pl.col("parent").is_in(ids))
            .join(session.items.select(pl.col("id").alias("child"), "tokens"), on="child")
            .group_by("parent").agg(pl.col("tokens").sum()))
    return {str(p): int(t) for p, t in sums.iter_rows()}


def compaction_view(session: Session, recall: Recall,
                    ranked: pl.DataFrame | None = None) -> list[dict[str, Any]]:
    """Each compaction recorded by an adapter, with what its summary lost.

    Adds to each ``compaction`` extension object: ``folded_tokens`` (the tokens of the
    items the summary folded, its children, as the audit counts them everywhere: the
    log's count where it has one, else the estimate; null without a summary),
    ``compression_ratio`` (folded_tokens / summary_tokens: how many times smaller the
    summary is than what it replaced, both on that one scale; below 1 when the summary
    is longer; null when either is unknown or zero, or the summary is opaque: an
    encrypted remote summary has a size only.  Not tokens_before / summary_tokens:
    tokens_before is the product's measure of the whole prompt, system prompt and tool
    definitions included, so that quotient mixes two scales and grows with everything
    the compaction did not touch; docs/adapters.md, "In the report"), ``lost_checked`` (false
    for an opaque summary, or a redacted one: the compaction marked so, or a log that is
    mostly redaction placeholders, or one an adapter marked ``unchecked``, or a summary
    with no text over a child with one: :mod:`compaction_audit.recall.bare`),
    ``not_checked_reason`` (the adapter's ``unchecked`` reason such as "no messages
    file", else "opaque", "redacted", "no summary text", or null), ``transcript_reference``
    (the path a summary names with "read the full transcript at", else null; not
    counted as a reference)
    and ``lost``: the discriminators of the folded content that became unrecoverable
    at that compaction in report order (:func:`ranked_lost`), each with ``tier``, ``tier_name``,
    ``tier_why``, ``finished_item`` and ``finished_line`` (tier 7: the work item or
    ``git commit`` and the line of the call that closed it, else null), ``span_type``,
    ``span_line``, ``span_file`` (only when the adapter
    read spans from a companion file: the file that line counts in, null for the file
    given; ``reread_file`` likewise for ``reread_line``, ``answered_file`` for
    ``answered_line``), ``asked_again`` (a later user message states it again),
    ``answered_line`` (the assistant's first text after that, when nothing read the
    fact again before it: an answer from the summary) and
    ``reused_round``/``reused_span`` (a later action reused it): evidence the loss did
    harm.
    """
    out = []
    lost = ranked if ranked is not None else ranked_lost(recall, session)
    texts, tokens = {}, {}
    for sid, text, size in (session.items.filter(pl.col("kind") == "summary")
                            .select("id", "text", "tokens").iter_rows()):
        texts[sid], tokens[sid] = text, size
    line_file = session.header.extra.get("span_line_file")
    own_lines = set(session.header.extra.get("span_line_file_except") or ())
    other_file = session.header.extra.get("span_line_file_except_in")
    bare = compactions_without_text(session)
    lost_at = _lost_at(lost, session.compactions, recall.redacted, bare)
    folded = _folded_tokens(session)
    for c, rows in zip(session.compactions, lost_at, strict=True):
        sid = c.get("summary_id")
        size = c.get("summary_tokens")
        if size is None and not c.get("opaque"):  # the summary item's own size (adv60)
            size = tokens.get(str(sid)) if sid is not None else None
        into = folded.get(str(sid)) if sid is not None else None
        opaque = bool(c.get("opaque"))
        unchecked = c.get("unchecked")  # an adapter's reason (a Cline file read alone)
        redacted = bool(c.get("redacted")) or recall.redacted
        textless = c.get("summary_id") in bare and not (opaque or unchecked or redacted)
        ratio = into / size if isinstance(into, int) and isinstance(size, int) \
            and size > 0 and into > 0 and not opaque else None
        entries = [{"kind": d["kind"], "text": d["text"], "span": d["span"],
                    "source": d["span_source"], "span_type": d["span_type"],
                    "span_line": d["span_line"],
                    **_span_file(line_file, own_lines, d["span"], other_file),
                    "tier": d["tier"],
                    "tier_name": d["tier_name"], "tier_why": d["tier_why"],
                    "finished_item": d.get("finished_item"),
                    "finished_line": d.get("finished_line"),
                    "cause": d["cause"],
                    "asked_again": d["asked_again_round"] is not None,
                    "asked_again_round": d["asked_again_round"],
                    "asked_again_span": d["asked_again_span"],
                    "asked_again_line": d["asked_again_line"],
                    **_file_of("asked_again_file", line_file, own_lines,
                               d["asked_again_span"], other_file),
                    "reused_round": d["reused_round"], "reused_span": d["reused_span"],
                    "reread_round": d["reread_round"], "reread_line": d["reread_line"],
                    **_file_of("reread_file", line_file, own_lines, d["reread_span"], other_file),
                    "answered_line": d.get("answered_line"),
                    **_file_of("answered_file", line_file, own_lines, d.get("answered_span"),
                               other_file),
                    "reused_destructive": d.get("reused_destructive")}
                   for d in rows]
        text = texts.get(c.get("summary_id")) or ""
        pointer = re.search(TRANSCRIPT_POINTER, text)
        out.append({**c, **({"summary_tokens": size} if size is not None else {}),
                    "folded_tokens": into, "compression_ratio": ratio, "lost": entries,
                    "lost_checked": not (opaque or redacted or unchecked or textless),
                    "not_checked_reason": str(unchecked) if unchecked else
                    "opaque" if opaque else
                    "redacted" if redacted else
                    NO_SUMMARY_TEXT if textless else None,
                    "transcript_reference": pointer.group(1).rstrip(".,;)") if pointer
                    else None})
    return out
