"""Ranking lost discriminators: the facts that matter first (issue 10, point 5).

Every lost item gets a *tier*; reports order by tier, within a tier the facts nothing
read again first (the others the context got back), then later spans first, and
within a span later lines first (the most recent statement of the task is the one a
later decision builds on):

====  ==================  ===========================================================
tier  name                which items
====  ==================  ===========================================================
1     asked again         a person named it again after it was lost (harm shown)
2     typed by a person   a clause (or value) a person typed (``span_source`` "user"
                          or "user:...", not the legacy harness "user:meta")
3     spec requirement    a whole clause from spec text (markdown requirements,
                          no-gos...; a fragment of one is "other prose")
4     assistant decision  a clause the assistant wrote, with at least two content
                          words and not chatter ("let me", "I'll", "now", ...);
                          named "decision in prose" where the span's source does
                          not say the assistant (a native log's free-form source)
5     other prose         anything else from prose (values in prose, fragments)
6     tool output         values and identifiers from tool output or code
7     finished work       stated under a work item the log closed before the fold,
                          or in a commit message
                          (:mod:`compaction_audit.recall.finished`); a person's
                          facts (tiers 1 and 2) keep their tier
====  ==================  ===========================================================

Harness text (caveats, skill documents, command wrappers, compact summaries) is never
a fact: :func:`rank_lost` drops those rows.  Tiers 5 to 7 are :data:`LOW_TIERS`: a
compaction that lost only those is at most a warning (point 6, rules/recall.py).

Span types (``prose|spec|code|tool_output|harness``) come from the lost table's
``span_type`` column (recall-core, :mod:`compaction_audit.recall.spantypes`); when the
column is missing or null, :func:`span_type_from_source` derives one from
``span_source`` alone, and then a whole clause from tool output (two or more content
words, not cut short), which may be a spec the agent read, is ranked "other prose" (5)
rather than "tool output" (6); an ordering there (an arrow) is not.

Everything is Polars expressions over the table; no Python per row.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.emptyframes import when_empty
from compaction_audit.plans import one

TIER_NAMES: dict[int, str] = {
    1: "asked again", 2: "typed by a person", 3: "spec requirement",
    4: "assistant decision", 5: "other prose", 6: "tool output", 7: "finished work",
}
"""Tier number -> the name reports print (issue 10, point 5)."""

UNNAMED_DECISION = "decision in prose"
"""Tier 4's name for a clause whose span's source does not say the assistant wrote it
(a native log's free-form source, such as ``shell:s300``, is read as prose)."""
UNNAMED_WHY = "a decision in prose whose source does not say who wrote it"
"""Its ``tier_why`` in place of "a decision in the assistant's prose"."""

LOW_TIERS = frozenset({5, 6, 7})
"""Tiers whose loss alone is at most a warning (issue 10, point 6)."""

VALUE_KINDS = ("quantity", "version", "identifier", "scope", "link")
"""Single-token kinds (values and identifiers); every other kind is a clause: negation,
constraint, causal, ordering, condition and requirement (a spec bullet,
:mod:`compaction_audit.recall.kinds`)."""

SPAN_TYPES = ("prose", "spec", "code", "tool_output", "harness")
"""The span types of the contract (recall/spantypes.py, owner recall-core)."""

_STOP = (
    "a an the this that these those it its on in at to of for with by from into onto as "
    "be been being is are was were am do does did done have has had will would should "
    "shall can could may might must not no never only any all some also just then than "
    "and or nor but if when while so because since before after without instead rather "
    "we you they he she our your their my me us them there here what which who how "
    "don't doesn't didn't isn't aren't won't can't cannot shouldn't least most exactly "
    "always unchanged keep ensure avoid prefer retain preserve")
STOPWORDS = tuple(sorted(set(_STOP.split())))
"""Function words and clause markers: not content words (a clause of one marker and one
word, such as "must add `", is a fragment)."""

CHATTER = (r"(?i)^\W*(?:let me|let's|now\b|i'll|i will|i'm|i am|i need|i see|we'll|"
           r"great|perfect|good|ok(?:ay)?\b|sure|done|looks good|all \d+ tests?|"
           r"then (?:let|i|run|check)|first,? (?:let|i))")
"""Assistant narration that announces a step rather than deciding something."""

_CONTENT_WORD = r"[a-z][a-z0-9_'\-]{2,}"


def span_type_from_source(source: pl.Expr) -> pl.Expr:
    """The fallback span type of a ``span_source`` (contract, "Span source values"):
    "harness:*" and the legacy "user:meta" -> harness; "tool..." (tool_call:NAME,
    tool_result:NAME, a native "tool:shell") -> tool_output; anything else (user,
    assistant, a message id, null) -> prose."""
    s = source.fill_null("")
    return (pl.when(s.str.starts_with("harness") | (s == "user:meta")
                    | (s == "compaction_summary")).then(pl.lit("harness"))
            .when(s.str.starts_with("tool")).then(pl.lit("tool_output"))
            .otherwise(pl.lit("prose")))


def with_span_type(frame: pl.DataFrame, source: str = "span_source") -> pl.DataFrame:
    """``frame`` with a ``span_type`` column, nulls (or the whole column) filled from
    ``source``; adds a boolean ``span_type_known`` (false where the fallback was used)."""
    fallback = span_type_from_source(pl.col(source))
    if "span_type" not in frame.columns:
        return frame.with_columns(fallback.alias("span_type"),
                                  pl.lit(False).alias("span_type_known"))
    return frame.with_columns(pl.col("span_type").is_not_null().alias("span_type_known"),
                              pl.col("span_type").fill_null(fallback))


def content_words(text: pl.Expr) -> pl.Expr:
    """Number of content words of a text: words of 3+ characters that are neither
    function words nor clause markers (:data:`STOPWORDS`)."""
    return (text.fill_null("").str.to_lowercase().str.extract_all(_CONTENT_WORD)
            .list.eval(pl.element().filter(~pl.element().is_in(STOPWORDS))).list.len())


def person_source(source: pl.Expr) -> pl.Expr:
    """True for a person's words: ``source`` "user" or "user:..." other than the
    legacy harness value "user:meta" (contract, "Span source values")."""
    s = source.fill_null("")
    return (s == "user") | (s.str.starts_with("user:") & (s != "user:meta"))


def document_source(source: pl.Expr) -> pl.Expr:
    """True for a span that can bring a fact back into the context, a document: a
    known source that is not a person's (:func:`person_source`), not the assistant's
    own words (``assistant``, ``assistant:...``, thinking included, in any case) and
    not a tool call (``tool_call``, ``tool_use``, ``function_call``, with or without
    ``:NAME``): a tool's result, a file, a log a tool printed.  A span without a source
    is not counted: nothing says it is one."""
    low = source.fill_null("").str.to_lowercase()
    return (source.is_not_null() & (low != "") & ~person_source(low)
            & ~low.str.contains(r"^(?:assistant|tool_call|tool_use|function_call)(?::|$)"))


FRAGMENT = (r"(?i)^[^`]*(?:`[^`]*`[^`]*)*`[^`]*$"
            r"|(?:\b(?:and|or|to|of|the|a|an)|[:,(\[{=-]|->|=>|→)\s*$")
"""A clause cut short: an open code span (an odd number of backticks), or a dangling
conjunction, article or opening punctuation at the end (issue 10, point 2)."""

ONE_SIDED = (r"(?i)^\W*(?:then|afterwards|subsequently)\b"
             r"|\b(?:then|before|after(?:wards)?|subsequently)\W*$")
"""An ordering with one side only: it ends with its marker ("the filter comes
after"), or starts with one that points back to the sentence before ("Then the
wrapper", "Afterwards ..."): the clause alone states no order (a fragment, never a
decision).  "before X" and "after X" name what they are ordered against ("after a
failed migration", "Before deploying, run the migrations"): not fragments."""

CODE_ARROW = r"(?:->|=>|\|>|→).*|.*(?:->|=>|\|>|→)"
CODE_CHARS = r"[.`_(){}\[\]=:@%/]"
"""An ordering is code (a function arrow, a git range, a log line), not a sequence of
steps, when its text has an arrow and a code character besides."""


_PART = "_tier_part_"
"""Prefix of the helper columns :func:`add_tiers` computes once (:func:`tier_parts`)."""


def tier_parts(source: str = "span_source") -> dict[str, pl.Expr]:
    """The per-row facts the tier reads, by helper column name: ``clause``, ``person``,
    ``chatter``, ``code_arrow``, ``cut`` (over ``kind``, ``text`` and ``source``).
    Computed as columns once, then read by :func:`tier_exprs`: written inline, each
    appeared in several branches of two ``when`` chains and Polars planned the copies
    (about 20 ms a call: issue 14, fleet audits)."""
    kind = pl.col("kind")
    text = pl.col("text").fill_null("")
    words = content_words(text)
    code_arrow = (kind == "ordering") & text.str.contains(CODE_ARROW) & text.str.contains(
        CODE_CHARS)
    one_sided = (kind == "ordering") & text.str.contains(ONE_SIDED)
    return {f"{_PART}clause": ~kind.is_in(VALUE_KINDS),
            f"{_PART}person": person_source(pl.col(source)),
            f"{_PART}chatter": text.str.contains(CHATTER),
            f"{_PART}code_arrow": code_arrow,
            f"{_PART}cut": (words < 2) | text.str.contains(FRAGMENT) | code_arrow
            | one_sided}


def tier_exprs(asked_again: str = "asked_again_round") -> tuple[pl.Expr, pl.Expr]:
    """``(tier, tier_why)`` over columns ``kind``, ``span_type`` (filled, see
    :func:`with_span_type`), ``span_type_known``, ``asked_again`` and the helper
    columns of :func:`tier_parts`."""
    kind, stype = pl.col("kind"), pl.col("span_type")
    clause, person, chatter, code_arrow, cut = (
        pl.col(f"{_PART}{name}") for name in ("clause", "person", "chatter", "code_arrow",
                                              "cut"))
    tool = stype.is_in(["tool_output", "code"])
    # without a span type, a whole clause in tool output may be spec text the agent
    # read; an arrow there is code or a log line, never a requirement
    maybe_spec = (tool & clause & ~pl.col("span_type_known") & ~cut
                  & (kind != "ordering"))
    decision = clause & (stype == "prose") & ~cut & ~chatter
    again = pl.col(asked_again)
    finished = pl.col("finished_item").is_not_null()
    article = pl.when(kind.str.contains("^[aeiou]")).then(pl.lit("an")).otherwise(pl.lit("a"))
    tier = (
        pl.when(again.is_not_null()).then(1)
        .when(person & (stype != "harness")).then(2)
        .when(finished).then(7)
        .when(clause & (stype == "spec") & ~cut).then(3)
        .when(decision).then(4)
        .when(tool & ~maybe_spec).then(6)
        .otherwise(5)
    ).cast(pl.Int64)
    why = (
        pl.when(again.is_not_null())
        .then(pl.format("a person named it again at round {}", again))
        .when(person & (stype != "harness")).then(pl.lit("typed by a person"))
        .when(finished & (pl.col("finished_item") == "git commit"))
        .then(pl.format("in a commit message (line {}): work done and recorded",
                        pl.col("finished_line")))
        .when(finished).then(pl.format("under {}, which a call closed at line {} before "
                                       "the compaction", pl.col("finished_item"),
                                       pl.col("finished_line")))
        .when(clause & (stype == "spec") & ~cut).then(pl.lit("a requirement from spec text"))
        .when(decision).then(pl.lit("a decision in the assistant's prose"))
        .when(code_arrow).then(pl.lit("an arrow in code or a log line, not an ordering"))
        .when(clause & cut).then(pl.lit("a fragment: cut short or fewer than two content "
                                        "words"))
        .when(tool & ~maybe_spec)
        .then(pl.format("{} {} from {}", article, kind,
                        pl.when(stype == "code").then(pl.lit("code"))
                        .otherwise(pl.lit("tool output"))))
        .when(maybe_spec).then(pl.lit("a clause in tool output (span type unknown)"))
        .when(clause & chatter).then(pl.lit("assistant narration, not a decision"))
        .otherwise(pl.format("{} {} in {}", article, kind,
                             pl.when(stype == "spec").then(pl.lit("spec text"))
                             .otherwise(pl.lit("prose"))))
    )
    return tier, why


@when_empty
def add_tiers(frame: pl.DataFrame, asked_again: str = "asked_again_round",
              source: str = "span_source") -> pl.DataFrame:
    """``frame`` (columns ``kind``, ``text``, ``source``, ``asked_again``, optional
    ``span_type``) with ``span_type`` filled and ``tier`` (Int64), ``tier_name``,
    ``tier_why`` added; rows are kept as they are (harness rows included)."""
    parts = tier_parts(source)
    added = [] if "finished_item" in frame.columns else ["finished_item", "finished_line"]
    if added:  # a fold's child, a table of a test: not finished work (read, then dropped)
        frame = frame.with_columns(pl.lit(None, pl.String).alias("finished_item"),
                                   pl.lit(None, pl.Int64).alias("finished_line"))
    typed = with_span_type(frame, source).with_columns(**parts)
    tier, why = tier_exprs(asked_again)
    if "reused_round" in typed.columns:  # recall-core: a later span reused the value
        why = pl.when(pl.col("reused_round").is_not_null()).then(
            pl.format("{}; reused by a later span at round {}", why, pl.col("reused_round"))
        ).otherwise(why)
    names = pl.DataFrame({"tier": list(TIER_NAMES), "tier_name": list(TIER_NAMES.values())},
                         schema={"tier": pl.Int64, "tier_name": pl.String})
    # tier 4 says "the assistant" only where the span's source says so (an adapter's
    # "assistant", a native role "assistant"): a native log's free-form source
    # ("shell:s300") read as prose is no one's (usertest24 #3)
    unnamed = (tier == 4) & ~pl.col(source).fill_null("").str.starts_with("assistant")
    return (typed.with_columns(tier.alias("tier"), why.alias("tier_why"))
            .join(names, on="tier", how="left", maintain_order="left")
            .with_columns(
                pl.when(unnamed).then(pl.lit(UNNAMED_DECISION)).otherwise("tier_name")
                .alias("tier_name"),
                pl.when(unnamed).then(pl.col("tier_why").str.replace(
                    "a decision in the assistant's prose", UNNAMED_WHY, literal=True))
                .otherwise("tier_why").alias("tier_why"))
            .drop("span_type_known", *parts, *added))


def rank_lost(lost: pl.DataFrame, items: pl.DataFrame | None = None) -> pl.DataFrame:
    """The lost table (:class:`~compaction_audit.recall.analysis.Recall` ``lost``) in
    report order, harness rows dropped.

    Adds ``span_type`` (filled), ``tier``, ``tier_name``, ``tier_why`` and ``span_line``
    (kept when the table has it, else the ``line`` of the span in ``items``, the
    session's ``items`` table with ``id`` and ``line``; null when neither).  Order:
    tier, then the facts nothing read again before those something did
    (``reread_line`` set: the context got them back, the others still need reading),
    then later spans first (``span_line`` descending, then the span's position
    in ``items``: a native round's spans share its line), then later lines of one span
    first (``text_line`` descending when the table has it: a long tool result that
    holds several task specs ends with the latest), then the kind's rank (worst
    first), then the text.
    """
    tiered = add_tiers(lost)
    columns = tiered.columns
    ranked = tiered.lazy().filter(pl.col("span_type") != "harness")  # one plan (issue 14)
    if "span_line" not in columns:
        ranked = ranked.with_columns(pl.lit(None, pl.Int64).alias("span_line"))
    if items is not None:
        where = items.lazy().select(pl.col("id").alias("span"), pl.col("line").alias("_line"),
                                    pl.int_range(pl.len(), dtype=pl.Int64).alias("_order"))
        ranked = (ranked.join(where, on="span", how="left", maintain_order="left")
                  .with_columns(pl.col("span_line").fill_null(pl.col("_line"))
                                .cast(pl.Int64)))
    else:
        ranked = ranked.with_columns(pl.lit(None, pl.Int64).alias("_order"))
    if "text_line" not in columns:
        ranked = ranked.with_columns(pl.lit(None, pl.Int64).alias("text_line"))
    if "reread_line" not in columns:
        ranked = ranked.with_columns(pl.lit(None, pl.Int64).alias("reread_line"))
    back = pl.col("reread_line").is_not_null().alias("_back")  # read again: last
    return one(ranked.with_columns(back)
               .sort(["tier", "_back", "span_line", "_order", "text_line", "rank", "text"],
                     descending=[False, False, True, True, True, True, False],
                     nulls_last=True, maintain_order=True)
               .drop("_line", "_order", "_back", strict=False))


def tier_counts(ranked: pl.DataFrame) -> dict[int, int]:
    """Items per tier of a ranked table (every tier present, zeros included)."""
    counts = dict(ranked.group_by("tier").len().iter_rows()) if ranked.height else {}
    return {t: int(counts.get(t, 0)) for t in TIER_NAMES}
