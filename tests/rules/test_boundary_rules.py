"""Boundary rules as data (sqlfluff style): series rows in, fired rounds out.

Each case gives a few rounds of the series by hand and the rounds at which the rule
must fire; boundary values sit exactly on the thresholds (0.25 is not below 0.25).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from compaction_audit.conditions import Condition
from compaction_audit.model import Session, SessionHeader
from compaction_audit.rules import RULES, Context
from compaction_audit.series import Series
from compaction_audit.settings import Settings

DEFAULTS: dict[str, Any] = {
    "raw_ratio": 0.5, "retained_tokens": 100, "summary_depth_max": 2,
    "rounds_at_max_depth": 0, "distinct_source_spans": 10, "query_cosine_retained": 0.5,
    "has_retained": True, "raw_tokens": 50, "summary_tokens": 50,
}


def context(rows: list[dict[str, Any]], settings: dict[str, Any] | None = None,
            start_spans: int | None = None) -> Context:
    data = [{**DEFAULTS, "ri": i, "round": i, "line": i + 1, **row} for i, row in
            enumerate(rows)]
    frame = pl.DataFrame(data, schema_overrides={"query_cosine_retained": pl.Float64,
                                                 "raw_ratio": pl.Float64})
    empty = pl.DataFrame()
    session = Session("t", SessionHeader(start_spans=start_spans), frame, empty, empty,
                      empty, empty)
    series = Series(frame, empty, empty, 3)
    ctx = Context(session, series, Settings().with_values(settings or {}))
    ctx.__dict__["conditions"] = []  # none judged: these rows have no eviction columns
    return ctx


def fired(name: str, ctx: Context) -> list[int]:
    rule = next(cls() for cls in RULES.values() if cls.name == name)
    return rule.evaluate(ctx).fired["ri"].to_list()


INV = {"raw_ratio": 0.2, "distinct_source_spans": 9, "query_cosine_retained": 0.6}

CASES: list[tuple[str, str, list[dict[str, Any]], dict[str, Any], list[int]]] = [
    ("inversion fires", "salience-inversion", [{}, INV], {}, [1]),
    ("inversion raw_ratio exactly 0.25", "salience-inversion",
     [{}, {**INV, "raw_ratio": 0.25}], {}, []),
    ("inversion raw_ratio just below", "salience-inversion",
     [{}, {**INV, "raw_ratio": 0.2499}], {}, [1]),
    ("inversion spans stable", "salience-inversion",
     [{}, {**INV, "distinct_source_spans": 10}], {}, []),
    ("inversion salience flat", "salience-inversion",
     [{}, {**INV, "query_cosine_retained": 0.5}], {}, []),
    ("inversion depth 1", "salience-inversion", [{}, {**INV, "summary_depth_max": 1}], {},
     []),
    ("inversion min_depth lowered", "salience-inversion",
     [{}, {**INV, "summary_depth_max": 1}], {"min_depth": 1}, [1]),
    ("inversion floor raised", "salience-inversion",
     [{}, {**INV, "raw_ratio": 0.3}], {"raw_ratio_floor": 0.35}, [1]),
    ("inversion window 2", "salience-inversion",
     [{}, {"distinct_source_spans": 11, "query_cosine_retained": 0.4},
      {**INV, "query_cosine_retained": 0.45}], {"window": 2}, []),
    ("inversion window 1 same rows", "salience-inversion",
     [{}, {"distinct_source_spans": 11, "query_cosine_retained": 0.4},
      {**INV, "query_cosine_retained": 0.45}], {}, [2]),
    ("inversion sustain 2", "salience-inversion",
     [{}, INV, {**INV, "distinct_source_spans": 8, "query_cosine_retained": 0.7}, {}],
     {"sustain": 2}, [2]),
    ("inversion sustain 3 not reached", "salience-inversion",
     [{}, INV, {**INV, "distinct_source_spans": 8, "query_cosine_retained": 0.7}, {}],
     {"sustain": 3}, []),
    ("provenance floor fires", "provenance-floor",
     [{"distinct_source_spans": 10}, {"distinct_source_spans": 1}], {}, [1]),
    ("provenance floor exactly at floor", "provenance-floor",
     [{"distinct_source_spans": 10}, {"distinct_source_spans": 2}], {}, []),
    ("provenance floor depth 1", "provenance-floor",
     [{"distinct_source_spans": 10}, {"distinct_source_spans": 1, "summary_depth_max": 1}],
     {}, []),
    ("provenance floor minimum 1", "provenance-floor",
     [{"distinct_source_spans": 4}, {"distinct_source_spans": 1},
      {"distinct_source_spans": 0}], {}, [2]),
    ("depth pin fires above 5", "depth-pin",
     [{"rounds_at_max_depth": 5}, {"rounds_at_max_depth": 6}], {}, [1]),
    ("depth pin depth 1 never", "depth-pin",
     [{"rounds_at_max_depth": 9, "summary_depth_max": 1}], {}, []),
    ("depth pin threshold lowered", "depth-pin",
     [{"rounds_at_max_depth": 2}, {"rounds_at_max_depth": 3}], {"depth_pin_rounds": 2}, [1]),
    ("drift fires without inversion", "compaction-drift",
     [{}, {"raw_ratio": 0.2}], {}, [1]),
    ("drift exactly 0.25", "compaction-drift", [{}, {"raw_ratio": 0.25}], {}, []),
    ("drift not when inversion fires", "compaction-drift", [{}, INV], {}, []),
    ("drift skips empty working set", "compaction-drift",
     [{"raw_ratio": 0.0, "retained_tokens": 0}], {}, []),
    ("majority first round only", "summary-majority",
     [{"raw_ratio": 0.5}, {"raw_ratio": 0.49}, {"raw_ratio": 0.3}], {}, [1]),
    ("majority exactly half", "summary-majority", [{"raw_ratio": 0.5}], {}, []),
]


@pytest.mark.parametrize(("name", "rule", "rows", "settings", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_boundary_rule(name: str, rule: str, rows: list[dict[str, Any]],
                       settings: dict[str, Any], expected: list[int]) -> None:
    assert fired(rule, context(rows, settings)) == expected


def test_provenance_floor_uses_session_start_spans() -> None:
    rows = [{"distinct_source_spans": 10}, {"distinct_source_spans": 3}]
    assert fired("provenance-floor", context(rows, start_spans=20)) == [1]  # floor 4
    assert fired("provenance-floor", context(rows)) == []  # first round: 10 -> floor 2


def test_inversion_not_evaluated_is_reported() -> None:
    ctx = context([{}, {**INV, "query_cosine_retained": None}, INV,
                   {**INV, "retained_tokens": 0}])
    rule = RULES["CA101"]()
    out = rule.evaluate(ctx)
    assert out.fired["ri"].to_list() == []
    assert out.not_evaluated == {
        "the working set holds no tokens": 1,
        "the first round has no earlier round to compare with": 1,
        "salience unknown at the round or the round compared with": 2,
    }


def test_drift_not_claimed_where_inversion_could_not_be_judged() -> None:
    # round 1: reachable spans fell (10 -> 9) and salience is unknown: inversion or drift
    rows = [{}, {"raw_ratio": 0.2, "query_cosine_retained": None, "distinct_source_spans": 9},
            {"raw_ratio": 0.2, "summary_depth_max": 1, "query_cosine_retained": None}]
    out = RULES["CA104"]().evaluate(context(rows))
    assert out.fired["ri"].to_list() == [2]  # depth 1: inversion impossible, so drift
    # round 0 (raw_ratio 0.5 of DEFAULTS) cannot drift, judged either way: round 1 only
    assert out.not_evaluated == {"salience-inversion could not be judged there": 1}
    assert out.judged == 2


def test_a_round_at_the_floor_is_judged_no_drift_though_inversion_could_not_be() -> None:
    """usertest49 #6: every round of a log without salience was "not evaluated" for
    drift, also those whose raw_ratio (0.667 and up) no drift can reach."""
    rows = [{"query_cosine_retained": None}, {"raw_ratio": 0.25, "query_cosine_retained": None},
            {"raw_ratio": 0.2499, "query_cosine_retained": None, "distinct_source_spans": 9}]
    out = RULES["CA104"]().evaluate(context(rows))
    assert out.fired["ri"].to_list() == []
    assert out.not_evaluated == {"salience-inversion could not be judged there": 1}  # 2
    assert out.judged == 2


def test_drift_claimed_where_spans_stayed_though_salience_is_unknown() -> None:
    """adv131 #1: reachable spans that did not fall rule inversion out, salience or
    none (seed 000: "raw_ratio < 0.25 but distinct_source_spans is stable -> drift")."""
    rows = [{}, {"raw_ratio": 0.2, "query_cosine_retained": None},
            {"raw_ratio": 0.2, "query_cosine_retained": None, "distinct_source_spans": 11},
            {"raw_ratio": 0.2, "query_cosine_retained": None, "distinct_source_spans": 10}]
    out = RULES["CA104"]().evaluate(context(rows))
    assert out.fired["ri"].to_list() == [1, 2]  # 10 -> 10, 10 -> 11; 11 -> 10 fell
    assert out.not_evaluated == {"salience-inversion could not be judged there": 1}


def test_a_round_failing_two_checks_is_counted_once_under_the_first() -> None:
    """usertest49 #6: a round with an empty working set and no salience was counted
    under both reasons, so the notes summed past the rounds not judged."""
    ctx = context([{}, INV, {**INV, "retained_tokens": 0, "query_cosine_retained": None}])
    out = RULES["CA101"]().evaluate(ctx)
    assert out.not_evaluated == {
        "the first round has no earlier round to compare with": 1,
        "the working set holds no tokens": 1,  # round 2, its salience unknown too
    }
    assert sum(out.not_evaluated.values()) + out.judged == 3


@pytest.mark.parametrize(("sustain", "fires_at", "why"), [
    (1, 1, "without the inversion signature"),  # round 2 is inversion's, not drift's
    (2, 2, "where salience-inversion does not fire (its signature absent, or held for "
           "fewer than the 2 rounds sustain needs)"),
])
def test_drift_under_sustain_does_not_say_the_signature_is_absent(
        sustain: int, fires_at: int, why: str) -> None:
    """usertest41 #4: under sustain=2 a round where spans fell and the cosine rose at
    depth 3 (one round only: no inversion) read "without the inversion signature"."""
    ctx = context([{}, {"raw_ratio": 0.2}, INV], {"sustain": sustain})
    rule = RULES["CA104"]()
    rows = rule.evaluate(ctx).fired
    assert rows["ri"].to_list() == [fires_at]
    assert rule.message(rows.row(0, named=True), ctx) == (
        f"compaction drift: raw_ratio 0.200 < 0.25 {why}")


def test_depth_pin_says_where_the_log_outgrew_its_own_cap() -> None:
    """usertest41 #7: a depth-4 summary under a cap of 3 (the context's) kept
    rounds_at_max_depth at 0 and depth-pin passed with no word; at the cap exactly it
    is judged as before."""
    rows = [{"summary_depth_max": 3, "rounds_at_max_depth": 6},
            {"summary_depth_max": 4, "rounds_at_max_depth": 0},
            {"summary_depth_max": 4, "rounds_at_max_depth": 0}]
    out = RULES["CA103"]().evaluate(context(rows))
    assert out.fired["ri"].to_list() == [0]
    assert out.not_evaluated == {
        "summary_depth_max is past the session's max_depth 3 (the log outgrew its own "
        "cap; rounds_at_max_depth counts rounds at the cap)": 2}


def test_sustain_longer_than_the_session_is_said() -> None:
    out = RULES["CA103"]().evaluate(context([{}, {}], {"sustain": 5}))
    assert out.not_evaluated == {"sustain 5 is longer than the session": 2}


@pytest.mark.parametrize(("sustain", "fires_at", "said"), [
    (1, 1, "summary tokens 60 exceed raw tokens in context 40 for the first time "
           "(raw_ratio 0.400)"),
    (2, 2, "summary tokens 92,104 exceed raw tokens in context 30 (raw_ratio 0.300), 2 "
           "rounds in a row (sustain 2), first at round 11"),  # usertest18 #8: no "92104", no "they
])                                                # first did 1 round(s) before this one"
def test_summary_majority_says_when_summary_tokens_first_exceeded(
        sustain: int, fires_at: int, said: str) -> None:
    """usertest17 #4: with sustain 2 the finding at the second round of the run said
    "for the first time", a round after the first."""
    ctx = context([{"raw_ratio": 0.5},  # rounds 0, 11, 13: round numbers may skip
                   {"raw_ratio": 0.4, "raw_tokens": 40, "summary_tokens": 60, "round": 11},
                   {"raw_ratio": 0.3, "raw_tokens": 30, "summary_tokens": 92104,
                    "round": 13}],
                  {"sustain": sustain})
    rule = RULES["CA105"]()
    fired_rows = rule.evaluate(ctx).fired
    assert fired_rows["ri"].to_list() == [fires_at]
    assert rule.message(fired_rows.row(0, named=True), ctx) == said


@pytest.mark.parametrize(("ratio", "fires_at", "said"), [
    (0.6, 0, "raw_ratio 0.583 below summary_majority_ratio 0.600 for the first time "
             "(summary tokens 30, raw tokens in context 42)"),
    (0.5, 1, "summary tokens 60 exceed raw tokens in context 40 for the first time "
             "(raw_ratio 0.400)"),
    (0.3, 2, "raw_ratio 0.250 below summary_majority_ratio 0.300 for the first time "
             "(summary tokens 90, raw tokens in context 30)"),
])
def test_summary_majority_under_another_ratio_says_the_ratio_it_crossed(
        ratio: float, fires_at: int, said: str) -> None:
    """usertest24 #1: at summary_majority_ratio 0.6 the message said summary tokens
    72,957 "exceed" raw tokens 102,054; at 0.3, "for the first time" rounds after they
    first did.  0.583 is below 0.6; 0.4 is not below 0.3, 0.25 is."""
    ctx = context([{"raw_ratio": 0.583, "raw_tokens": 42, "summary_tokens": 30},
                   {"raw_ratio": 0.4, "raw_tokens": 40, "summary_tokens": 60},
                   {"raw_ratio": 0.25, "raw_tokens": 30, "summary_tokens": 90}],
                  {"summary_majority_ratio": ratio})
    rule = RULES["CA105"]()
    fired_rows = rule.evaluate(ctx).fired
    assert fired_rows["ri"].to_list() == [fires_at]
    assert rule.message(fired_rows.row(0, named=True), ctx) == said


def test_a_rise_is_written_with_the_decimals_that_show_it() -> None:
    """usertest41 #8: a rise of the cosine read "0.070 -> 0.070"."""
    ctx = context([{"query_cosine_retained": 0.07012, "evictions": 1, "offloads": 0},
                   {**INV, "query_cosine_retained": 0.07049, "evictions": 1,
                    "offloads": 0}])
    rule = RULES["CA101"]()
    rows = rule.evaluate(ctx).fired
    assert rule.message(rows.row(0, named=True), ctx) == (
        "salience inversion: raw_ratio 0.200 < 0.25, distinct_source_spans 10 -> 9, "
        "query_cosine_retained 0.0701 -> 0.0705 at depth 2")


def test_a_sustain_longer_than_the_session_is_the_one_note() -> None:
    """usertest50 #5: with sustain 10 over 3 rounds the checks' own counts were added
    to the sustain note, so the notes summed past the rounds."""
    out = RULES["CA101"]().evaluate(context([{}, INV, {**INV, "retained_tokens": 0}],
                                            {"sustain": 10}))
    assert out.not_evaluated == {"sustain 10 is longer than the session": 3}
    assert out.judged == 0


@pytest.mark.parametrize(("status", "severity"), [
    ("holds", "error"), ("unknown", "error"),
    ("fails", "warning"),  # the loop can drift, not invert (usertest61 A5)
])
def test_inversion_is_a_warning_where_a_condition_of_validity_fails(
        status: str, severity: str) -> None:
    ctx = context([{}, INV])
    ctx.__dict__["conditions"] = [Condition("eviction is continuous", status, "")]
    fired_rows = RULES["CA101"]().evaluate(ctx).fired
    assert fired_rows["ri"].to_list() == [1]
    got = fired_rows["severity"].to_list() if "severity" in fired_rows.columns else ["error"]
    assert got == [severity]
