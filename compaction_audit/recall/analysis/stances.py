"""Which occurrences of a fact hold it (usertest38 #4): the stances of
:mod:`compaction_audit.recall.stance` as rows of the occurrence table, and how long
each span holding a fact keeps it in reach.

The occurrence table (:func:`~compaction_audit.recall.analysis.occurrences._occurrences`)
lists every (fact, span) a discriminator is read in, with two flags made here:
``asked`` (named in a question: the span asks for the fact, it does not hold it) and
``negated`` (a token stated negatively: inside a rule that forbids, or right after a
negation word).  The recall debt,
the loss at the fold and "read again" (:mod:`compaction_audit.recall.analysis.run`,
:mod:`~compaction_audit.recall.analysis.losses`) read the spans that hold a fact
through :func:`holding`; "asked again" and a reuse by a later action read every
occurrence.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.recall import stance
from compaction_audit.recall.spantypes import clean_text
from compaction_audit.recall.textwork import Extracted
from compaction_audit.recall.wholetoken import STATING_TYPES

__all__ = ["HOLDER_SCHEMA", "REACH_SCHEMA", "STANCE_SCHEMA", "holders_of", "holding",
           "stance_rows"]

STANCE_SCHEMA = {"_d": pl.Int64, "pos": pl.Int64, "negated": pl.Boolean, "asked": pl.Boolean}

_NEGATION_WORD = r"(?i)\b(?:without|no|not|never|nor|avoid)\b|n't\b|n\u2019t\b"
"""A word :func:`~compaction_audit.recall.stance.negated` may read: the texts without
one state no token negatively."""


def stance_rows(distinct: pl.DataFrame, found_in: Extracted) -> pl.DataFrame:
    """``_d``, ``pos``, ``negated``, ``asked`` for each discriminator (``pos`` of the
    text numbered ``_d`` in ``distinct``: ``text``, ``stype``, ``_d``) that is stated
    negatively or asked (:func:`~compaction_audit.recall.stance.negated`,
    :func:`~compaction_audit.recall.stance.asked`); none for the others.  Only the
    prose and spec texts with a question mark or a negation word are read, each once,
    in Python: a sort and a binary search per discriminator, and a search of the few
    characters before each token."""
    rows: dict[str, list[object]] = {name: [] for name in STANCE_SCHEMA}
    todo = (distinct.lazy().filter(pl.col("stype").is_in(STATING_TYPES)
                                   & (pl.col("text").str.contains("?", literal=True)
                                      | pl.col("text").str.contains(_NEGATION_WORD)))
            .select("text", "stype", "_d").collect())  # one query (issue 14)
    for text, stype, number in todo.iter_rows():
        found = found_in[(text, stype)]
        if not found:
            continue
        cleaned = clean_text(text)
        negated = stance.negated(cleaned, found)
        asked = stance.asked(cleaned, found)
        for pos, (r, a) in enumerate(zip(negated, asked, strict=True)):
            if r or a:
                rows["_d"].append(number)
                rows["pos"].append(pos)
                rows["negated"].append(r)
                rows["asked"].append(a)
    return pl.DataFrame(rows, schema=STANCE_SCHEMA)


HOLDER_SCHEMA = {"key": pl.String, "id": pl.String, "negated": pl.Boolean,
                 "stating": pl.Boolean}
REACH_SCHEMA = {"key": pl.String, "id": pl.String, "born": pl.Int64, "gone": pl.Int64,
                "until": pl.Int64}


def holders_of(frame: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """:data:`HOLDER_SCHEMA` rows of the (``key``, ``id``, ``negated``, and ``asked``
    when it has one) rows of ``frame`` that are not asked; ``stating``: the span is
    prose or spec text (a person's, the assistant's, a document's words:
    :data:`~compaction_audit.recall.wholetoken.STATING_TYPES`), read from ``items``'
    ``stype``.  One query; none when ``frame`` is empty (issue 14: a trace without a
    fact pays nothing)."""
    if frame.height == 0:
        return pl.DataFrame(schema=HOLDER_SCHEMA)
    stated = frame.lazy()
    if "asked" in frame.columns:
        stated = stated.filter(~pl.col("asked"))
    return (stated.select("key", "id", "negated")
            .join(items.lazy().select("id", "stype"), on="id", how="left")
            .select("key", "id", "negated",
                    pl.col("stype").is_in(STATING_TYPES).fill_null(False).alias("stating"))
            .collect())


def holding(holders: pl.DataFrame, life: pl.DataFrame) -> pl.LazyFrame:
    """``key``, ``id``, ``born``, ``gone``, ``until``: each span that holds a fact
    (``holders``: ``key``, ``id``, ``negated``, ``stating``, :func:`holders_of`; asked
    occurrences already left out) with the rounds it holds it over, ``[born, gone)``
    of ``life`` (``id``, ``born``, ``gone``), except for a rule's object: a token
    that every prose or spec span states only negatively ("Do NOT run release.sh with
    --force", "release.sh will run without --force") until the first span stating it
    so leaves reach (one that was in reach: a span evicted in the round it came
    leaves nothing).  From that round the rule is gone, and a span naming its object
    otherwise (``./release.sh --force``, the call that breaks the rule; a dry run's
    output naming the script) does not restate it (usertest38 #4): ``until`` is that
    round for such a span, null for the others.  What is said of the token after the
    rule is gone decides nothing: a call, or the assistant's "now running it with
    --force", may be the violation itself.  A token some prose states plainly before
    ("release.sh will run ...") is a fact of its own, held wherever it is named."""
    spans = (holders.lazy().select("key", "id", "negated", "stating").unique()
             .join(life.lazy(), on="id"))
    until = (spans.filter(pl.col("negated") & (pl.col("born") < pl.col("gone")))
             .group_by("key").agg(pl.col("gone").min().alias("until")))
    objects = (spans.join(until, on="key")
               .group_by("key", "until")
               .agg((pl.col("negated") | ~pl.col("stating") | (pl.col("born") >= pl.col("until")))
                    .all().alias("object"))
               .filter("object").select("key", "until"))
    return (spans.join(objects, on="key", how="left")
            .with_columns(pl.when(~pl.col("negated")).then(pl.col("until")).alias("until"))
            .select("key", "id", "born", pl.min_horizontal("gone", "until").alias("gone"),
                    "until"))
