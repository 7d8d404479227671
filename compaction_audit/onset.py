"""Onsets and first rounds (spec rules.md, "Onsets"), shared by reports and ``diff``.

- inversion onset: the first round of the first run of ``sustain_onset`` consecutive
  rounds with ``summary_depth_max`` >= ``min_depth``, ``distinct_source_spans``
  falling and ``query_cosine_retained`` rising (compared ``window`` rounds back); the
  rebuilt ``query_cosine_rebuilt`` when the log records no salience (issue 16).
- inversion boundary: the first round at which salience-inversion fires.
- the first round of every rule, and the round at which summary tokens first exceed
  raw tokens.

``None`` means the session has none; :func:`onset_key` orders None after any round.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.rules.base import FELL, ROSE, Context, Finding, sustained


def inversion_onset(ctx: Context) -> int | None:
    """Round number of the inversion onset, or None."""
    s = ctx.settings
    signature = (pl.col("summary_depth_max") >= s.min_depth) & FELL & ROSE
    n = s.sustain_onset
    hits = ctx.frame.with_columns(sustained(signature, n).alias("hit")).filter("hit")
    if not hits.height:
        return None
    end_ri = int(hits["ri"][0])
    return int(ctx.frame["round"][end_ri - n + 1])


def onsets(ctx: Context, findings: list[Finding]) -> dict[str, Any]:
    """The onsets of one session: ``inversion_onset``, ``inversion_boundary``,
    ``summary_majority`` (round numbers or None) and ``first_round`` by rule name: the
    earliest round of its findings, or of a finding's own ``first_round`` value where
    it names an earlier one (the first summary stating an unsupported claim, CA305,
    found at the latest; the round a sustained run began, CA105)."""
    first: dict[str, int] = {}
    for f in findings:
        began = f.values.get("first_round")
        at = began if type(began) is int and began < f.round else f.round
        if f.rule not in first or at < first[f.rule]:
            first[f.rule] = at
    majority = ctx.series.frame.filter(
        pl.col("summary_tokens") > pl.col("raw_tokens"))["round"]
    return {
        "inversion_onset": inversion_onset(ctx),
        "inversion_boundary": first.get("salience-inversion"),
        "summary_majority": int(majority[0]) if len(majority) else None,
        "first_round": first,
    }


def onset_key(value: int | None) -> float:
    """Sort key: None (no onset) is later than any round."""
    return float("inf") if value is None else float(value)
