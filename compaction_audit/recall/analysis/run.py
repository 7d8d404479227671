"""The whole recall analysis of a session: :func:`analyse`, and its survival limit.

Runs the text work, the fold checks, the occurrences, the recall debt (interval
arithmetic in Polars), the losses and the floor, and reports the survival checks that
stopped at their cap (:func:`_survival_limit`).  A test that replaces a step (such as
``_floor``) patches it here, where :func:`analyse` reads it.
"""

from __future__ import annotations

import polars as pl

from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.plans import collect, one
from compaction_audit.reachability import interval_sum, interval_sums, resolvable_end
from compaction_audit.recall import textwork
from compaction_audit.recall.analysis.floor import _floor
from compaction_audit.recall.analysis.folds import (
    _text_work,
    _without_names,
    fold_checks,
    summary_wording,
)
from compaction_audit.recall.analysis.intervals import _merge
from compaction_audit.recall.analysis.items import typed_items
from compaction_audit.recall.analysis.lifted import without_lifted
from compaction_audit.recall.analysis.losses import _fold_losses, _lost_table
from compaction_audit.recall.analysis.model import Recall, redacted_share
from compaction_audit.recall.analysis.occurrences import (
    DiscriminatorRows,
    _disagreements,
    _occurrences,
)
from compaction_audit.recall.analysis.rebound import bound_again
from compaction_audit.recall.analysis.restated import restated
from compaction_audit.recall.analysis.stances import REACH_SCHEMA, holders_of, holding
from compaction_audit.recall.factkeys import fact_key, with_unbound_holders
from compaction_audit.recall.ranking import person_source
from compaction_audit.recall.textwork import Extracted, Survived, TextJobs
from compaction_audit.series import Series
from compaction_audit.takeback import taken_back


def analyse(session: Session, series: Series, items: pl.DataFrame | None = None,
            jobs: TextJobs | None = None) -> Recall:
    """Run the whole recall analysis of ``session`` (see
    :class:`~compaction_audit.recall.analysis.model.Recall`); ``items``:
    :func:`~compaction_audit.recall.analysis.items.typed_items` of the session when the
    caller has it already; ``jobs``: its
    text jobs (:meth:`~compaction_audit.recall.textwork.TextJobs.start` on the same
    ``items``) when the caller started them early (they are closed here)."""
    n = session.n_rounds
    items = items if items is not None else typed_items(session)
    extracted = Extracted()
    survived: Survived = {}
    shallow, by_pairs = _text_work(session, items, series, extracted, survived, jobs)
    rows = DiscriminatorRows(extracted)  # each text's fields read once for both
    folds = fold_checks(session, extracted, survived, items, rows)
    occ, held, names = _occurrences(session, series, extracted, survived, items, shallow, rows)
    del rows
    gone = taken_back(session)  # what the person took back was never said: no loss, no
    if gone.len():  # question, no re-read (usertest69: a rewound rule was lost by eviction)
        occ = occ.filter(~pl.col("id").is_in(gone.implode()))
    folds = bound_again(_without_names(folds, names), held)
    # a summary's own words, no leaf's fact (after a bare value is read as the pin
    # its summary kept: usertest49 #1)
    folds = _without_names(folds, summary_wording(folds, occ, items, held))
    folds, held = without_lifted(folds, items, held)  # rules the person lifted
    if jobs is not None:  # asked-again and flips index user and summary texts (as prose)
        jobs.narrow(items.filter(((pl.col("kind") == "span") & person_source(pl.col("source")))
                                 | (pl.col("kind") == "summary"))
                    .select("text").drop_nulls().unique()["text"].to_list())
    del extracted, survived  # the text tables are not read again: free them early
    life = session.items.select("id", pl.col("ri").alias("born"),
                                resolvable_end(session).alias("gone"))
    drops_plan = (
        folds.lazy().filter(pl.col("dropped").list.len() > 0).explode("dropped")
        .select(pl.col("dropped").struct.field("kind").alias("k"),
                pl.col("dropped").struct.field("norm").alias("norm"),
                pl.col("dropped").struct.field("text").alias("t"), "fold", "ri", "line",
                "child")
        .select(fact_key(pl.col("k"), pl.col("norm"), pl.col("t")).alias("key"), "k", "t", "fold",
                "ri", "line", "child")
        .sort("ri")
    )
    # a question names a fact, it does not state it: seen and held where stated
    # (usertest38 #4: "Which version of lib2 did we pin again?" lowered the debt); a
    # span stating a bound value alone holds it (usertest38 #3)
    holders = holders_of(with_unbound_holders(occ, items, life), items)
    # a fact is first seen where a span states it, not where a span states its value
    # alone before it was bound (adv91 #2: "Keep read_timeout_ms at 16." two rounds
    # before "Set pool_size to 16." dated the later fact's loss before it was stated)
    first_seen_plan = (holders_of(occ, items).lazy().join(life.lazy(), on="id")
                       .group_by("key").agg(pl.col("born").min().alias("start"))
                       .with_columns(pl.lit(n, pl.Int64).alias("end")))
    drops, first_seen, debt, losses, reach = _debt_and_losses(session, holders, held, life,
                                                              drops_plan, first_seen_plan)
    if drops.height:  # spans that state a lost fact in another form hold it (usertest10)
        more = restated(items, losses, drops, occ, life)
        if more.height:
            plain = more.with_columns(pl.lit(False).alias("negated"),  # stated plainly
                                      pl.lit(False).alias("asked"),
                                      pl.lit(True).alias("restated"))
            holders = holders_of(with_unbound_holders(pl.concat(
                [occ.select("key", "id", "negated", "asked",
                            pl.lit(False).alias("restated")), plain]), items, life), items)
            _, _, debt, losses, reach = _debt_and_losses(session, holders, held, life,
                                                         drops.lazy(), first_seen.lazy())
    drops = drops.drop("k", "t")
    limits: list[Limit] = [] if not shallow else [_survival_limit(items, shallow, by_pairs)]
    lost = _lost_table(session, items, occ, names, losses, drops, limits, reach)
    floor = _floor(session, series, occ, held, life)
    return Recall(folds, debt, lost, floor, _disagreements(session, occ),
                  redacted_share(session), limits, occ.get_column("key").unique())


def _debt_and_losses(session: Session, holders: pl.DataFrame, held: pl.DataFrame,
                     life: pl.DataFrame, drops_plan: pl.LazyFrame,
                     first_seen_plan: pl.LazyFrame
                     ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame,
                                pl.DataFrame]:
    """(``drops``, ``first_seen``, ``debt``, ``losses``, ``reach``): the plans
    collected, the recall debt per round, each loss (``key``, ``start``, ``by_fold``)
    and the reach of each holder (:func:`~compaction_audit.recall.analysis.stances.
    holding`: ``key``, ``id``, ``born``, ``gone``, ``until``), from the spans that
    hold each fact (``holders``: ``key``, ``id``, ``negated``, ``stating``, each in
    reach over its ``life``, a rule's object named outside a rule until the rule
    leaves reach) and the summaries that keep one (``held``, over their membership).
    Interval arithmetic in Polars, in as few queries as the analysis had before
    :func:`restated` and the holders' reach (a trace with no fold pays nothing for
    it: issue 14, fleet audits)."""
    n = session.n_rounds
    reach = (one(holding(holders, life)) if holders.height
             else pl.DataFrame(schema=REACH_SCHEMA))
    recoverable = one(pl.concat([  # one plan (issue 14, fleet audits)
        reach.lazy().select("key", pl.col("born").alias("start"), pl.col("gone").alias("end")),
        held.lazy().join(session.membership.lazy(), on="id").select("key", "start", "end"),
    ]).filter(pl.col("start") < pl.col("end")))
    dropped_keys = drops_plan.group_by("key", maintain_order=True).first()
    gaps_plan = (
        _merge(recoverable, "key").lazy()
        .with_columns(pl.col("start").shift(-1).over("key").fill_null(n).alias("next"))
        .select("key", pl.col("end").alias("start"), pl.col("next").alias("end"))
        .filter(pl.col("start") < pl.col("end"))
        # no loss before the fact was first stated (a bare value held it earlier): a
        # gap begins there at the earliest (adv93 #1: a statement folded in its own
        # round held the fact for no round, and the gap before it stood)
        .join(first_seen_plan.select("key", pl.col("start").alias("_seen")), on="key",
              how="left")
        .with_columns(pl.max_horizontal("start", pl.col("_seen").fill_null(0)).alias("start"))
        .filter(pl.col("start") < pl.col("end"))
        .drop("_seen")
        .join(dropped_keys.select("key", pl.lit(True).alias("by_fold")), on="key", how="left")
        .with_columns(pl.col("by_fold").fill_null(False))
    )
    drops, gaps, first_seen = collect(drops_plan, gaps_plan, first_seen_plan)
    debt = one(
        interval_sum(first_seen, n).lazy().rename({"value": "discriminators_seen"})
        .join(interval_sums(gaps, n, {"recall_debt": pl.lit(1, pl.Int64),
                                      "recall_debt_fold": pl.col("by_fold").cast(pl.Int64)})
              .lazy(), on="ri")
        .with_columns((pl.col("recall_debt") - pl.col("recall_debt_fold"))
                      .alias("recall_debt_eviction"))
        .sort("ri")
    )
    losses = pl.concat([gaps.select("key", "start", "by_fold"),
                        _fold_losses(session, drops, reach, held)])
    return drops, first_seen, debt, losses, reach


def _survival_limit(items: pl.DataFrame, shallow: set[str], by_pairs: bool) -> Limit:
    """The survival checks stopped at their cap
    (:func:`~compaction_audit.recall.analysis.folds._text_work`; ``by_pairs``: the cap
    on discriminators looked up, else the one on clause classes compared): at the
    first summary (in log order) whose text is past it; ``left``: the summaries past
    it."""
    past = (items.filter((pl.col("kind") == "summary") & pl.col("text").is_in(list(shallow)))
            .sort("ri", "line", maintain_order=True))
    first = past.row(0, named=True)
    cap, unit = ((textwork.SURVIVAL_MAX_PAIRS,
                  "checks of a leaf's discriminators against a summary above its fold")
                 if by_pairs else
                 (textwork.SURVIVAL_MAX_CHECKS,
                  "comparisons of a class of clauses with a summary above its leaves' fold"))
    return Limit("recall-survival", cap, unit, f"summary {first['id']!r}", first["round"],
                 first["line"], past.height,
                 "summaries compared with their own children only, leaves below them")
