"""The two runs' series aligned on the round number, and where they diverge."""

from __future__ import annotations

import polars as pl

from compaction_audit.cosine.embed import LEXICAL_NAME
from compaction_audit.report.model import SessionReport

SERIES_COLUMNS = ("raw_ratio", "distinct_source_spans", "query_cosine_retained",
                  "summary_depth_max", "query_cosine_rebuilt")
"""Series quantities compared side by side (the logged and the rebuilt cosine both, issue
16); ``recall_debt*`` columns are added when a run's series has them."""

FLOAT_TOLERANCE = 1e-9
"""Two float series values closer than this are equal (ratios, scores)."""


def quantities(base: SessionReport, cand: SessionReport) -> list[str]:
    """:data:`SERIES_COLUMNS` plus every ``recall_debt*`` column of either series (in
    series order, baseline first), without a quantity neither run has a value of (a
    product's log records no salience: "query_cosine_retained unknown" in both runs
    and at every diverging round, usertest26 #6)."""
    debt = [c for r in (base, cand) for c in r.series.columns if c.startswith("recall_debt")]
    return [q for q in [*SERIES_COLUMNS, *dict.fromkeys(debt)]
            if any(q in r.series.columns and r.series[q].null_count() < r.series.height
                   for r in (base, cand))]


def _side(r: SessionReport, cols: list[str], suffix: str) -> pl.DataFrame:
    frame = r.series
    exprs = [pl.col("round").cast(pl.Int64)]
    for c in cols:
        expr = pl.col(c) if c in frame.columns else pl.lit(None)
        exprs.append(expr.alias(f"{c}{suffix}"))
    exprs.append(pl.lit(True).alias(f"in{suffix}"))
    return frame.select(exprs)


def _differs(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """Null-aware inequality; floats within :data:`FLOAT_TOLERANCE` are equal."""
    one_null = a.is_null() != b.is_null()
    far = (a.cast(pl.Float64) - b.cast(pl.Float64)).abs() > FLOAT_TOLERANCE
    return one_null | far.fill_null(False)


def _fitted(r: SessionReport) -> bool:
    """True when ``r``'s ``query_cosine_rebuilt`` came from the lexical TF-IDF, whose
    weights are fitted on the session's own texts: two runs with the same working set
    at a round get different values when their other rounds differ (the two Cline
    compactions of one task differed at every round by 0.001), so the rebuilt cosine
    makes no round diverge; the shipped model's cosine depends on the texts alone."""
    return str((r.cosine or {}).get("method") or "").startswith(LEXICAL_NAME)


def _query(r: SessionReport) -> tuple[object, object]:
    """What ``r``'s rebuilt cosine is measured against (the query's kind and detail:
    "the person's first prompt and 2 later prompt(s)"): two runs measured against
    different queries differ at rounds whose texts are the same (usertest76 F7: a
    transcript cut before the person's last prompt differed at rounds 0 and 1)."""
    cosine = r.cosine or {}
    return cosine.get("query"), cosine.get("query_detail")


def align_series(base: SessionReport, cand: SessionReport, cols: list[str]) -> pl.DataFrame:
    """The two series joined on ``round`` (full outer join, sorted by round); see
    :class:`RunDiff` for the columns.  A round missing on one side is null there.
    ``diverges``: a round one run lacks, or where a quantity differs (floats beyond
    :data:`FLOAT_TOLERANCE`; ``query_cosine_rebuilt`` not when a run's is the lexical
    TF-IDF's, :func:`_fitted`, nor when the runs' queries differ, :func:`_query`)."""
    joined = (_side(base, cols, "_baseline")
              .join(_side(cand, cols, "_candidate"), on="round", how="full", coalesce=True)
              .sort("round"))
    present = [pl.col(f"in{s}").fill_null(False) for s in ("_baseline", "_candidate")]
    diverges = ~(present[0] & present[1])
    for c in cols:
        if c == "query_cosine_rebuilt" and (_fitted(base) or _fitted(cand)
                                            or _query(base) != _query(cand)):
            continue  # shown, not compared (see _fitted, _query)
        diverges = diverges | _differs(pl.col(f"{c}_baseline"), pl.col(f"{c}_candidate"))
    return joined.with_columns(present[0].alias("in_baseline"),
                               present[1].alias("in_candidate"),
                               diverges.alias("diverges"))
