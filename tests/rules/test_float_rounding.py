"""Thresholds decided in floating point hold at their exact values (adv78 #2-#4).

A rise, a tolerance and a floor each met a value that is exact in decimal and not in
binary: a mean salience of 0.2 computed two ways "rose" (an error-level CA101), a
difference of exactly the tolerance was "more than" it (CA203), and a floor of
100 x 0.29 was 28, not 29 (CA102 missed).  Each case fires one step past the boundary.
"""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import LogWriter, rnd, session


def codes(path: str, *args: str) -> list[tuple[str, int]]:
    """(rule, first round) of every finding episode of ``audit PATH ARGS`` as JSON."""
    out = CliRunner().invoke(app, ["audit", path, "--format", "json", "--isolated", *args])
    assert out.exit_code in (0, 1), out.output
    return [(f["code"], f["round"]) for f in json.loads(out.stdout)["findings"]]


def salience_log(last: list[Any]) -> list[dict[str, Any]]:
    """Depth 2 at round 2 with raw_ratio under 0.25 and a source span fewer; the mean
    retained salience of round 1 is 1.0 / 5, summed in file order 0.19999999999999998;
    round 2's is the mean of ``last`` with m2's 0.2."""
    return [
        session(session_id="rose", budget_tokens=100_000, max_depth=2, eviction="continuous"),
        rnd(0, spans=[{"id": f"s{i}", "tokens": 10} for i in range(6)],
            retained=[[f"s{i}", 0.2] for i in range(6)]),
        rnd(1, summaries=[{"id": "m1", "tokens": 100, "children": ["s0", "s1"]}],
            evicted=["s0", "s1"],
            retained=[["m1", 0.2], ["s2", 0.3], ["s3", 0.2], ["s4", 0.2], ["s5", 0.1]]),
        rnd(2, summaries=[{"id": "m2", "tokens": 200, "children": ["m1", "s5"]}],
            evicted=["m1", "s5"], retained=[["m2", 0.2], *last]),
    ]


def test_a_mean_salience_equal_up_to_rounding_did_not_rise(write_log: LogWriter) -> None:
    same = [["s2", 0.1], ["s3", 0.2], ["s4", 0.3]]  # 0.8 / 4 = 0.2, as round 1's
    assert ("CA101", 2) not in codes(str(write_log(salience_log(same))), "--select", "CA101")
    risen = [["s2", 0.1], ["s3", 0.2], ["s4", 0.30001]]  # 0.2000025: a rise
    assert codes(str(write_log(salience_log(risen), "r.jsonl")), "--select", "CA101") == [
        ("CA101", 2)]


def logged_log(logged: float) -> list[dict[str, Any]]:
    """One span whose salience 0.5 is the rebuilt query_cosine_retained; the log's own
    aggregate says ``logged``."""
    return [session(session_id="b", budget_tokens=1000),
            rnd(0, spans=[{"id": "s1", "tokens": 100, "text": "x"}],
                retained=[{"id": "s1", "salience": 0.5}],
                logged={"query_cosine_retained": logged})]


def test_a_difference_of_exactly_the_tolerance_is_no_mismatch(write_log: LogWriter) -> None:
    # 0.51 - 0.50 is 0.010000000000000009: "more than" logged_tolerance 0.01 it is not
    assert codes(str(write_log(logged_log(0.51))), "--select", "CA203") == []
    assert codes(str(write_log(logged_log(0.49), "b.jsonl")), "--select", "CA203") == []
    assert codes(str(write_log(logged_log(0.5101), "c.jsonl")), "--select", "CA203") == [
        ("CA203", 0)]


def floor_log(reachable: int) -> list[dict[str, Any]]:
    """start_spans 100; at depth 2 (round 2) ``reachable`` raw spans stay reachable."""
    spans = [{"id": f"s{i}", "tokens": 10} for i in range(100)]
    folded = [f"s{i}" for i in range(100 - reachable)]
    kept = [[f"s{i}", 0.5] for i in range(100 - reachable, 100)]
    return [session(session_id="floor", budget_tokens=100_000, start_spans=100),
            rnd(0, spans=spans, retained=[[s["id"], 0.5] for s in spans]),
            rnd(1, summaries=[{"id": "m1", "tokens": 5, "children": folded}],
                evicted=folded, retained=[["m1", 0.5], *kept]),
            rnd(2, summaries=[{"id": "m2", "tokens": 5, "children": ["m1"]}],
                evicted=["m1"], retained=[["m2", 0.5], *kept])]


def test_the_floor_is_the_product_floored_up_to_rounding(write_log: LogWriter) -> None:
    # 100 x 0.29 is 28.999999999999996: the floor is 29, so 28 breaches it, 29 does not
    args = ("--select", "CA102", "--set", "span_floor_fraction=0.29")
    assert codes(str(write_log(floor_log(28))), *args) == [("CA102", 2)]
    assert codes(str(write_log(floor_log(29), "at.jsonl")), *args) == []


def large_log(base: float, rise: float) -> list[dict[str, Any]]:
    """Depth 2 at round 2, raw spans falling, retained saliences of about ``base`` with
    the last summary's ``rise`` higher (adv79: a tolerance of a billionth of the value
    took a rise of 2 on 3e9 for rounding)."""
    def num(x: float) -> float | int:
        return int(x) if x == int(x) else x
    return [session(session_id="big", max_depth=3, eviction="continuous",
                    scorer={"depth_penalty": 0}),
            rnd(0, spans=[{"id": k, "tokens": 10} for k in "abcd"],
                retained=[[k, num(base)] for k in "abcd"]),
            rnd(1, summaries=[{"id": "m1", "tokens": 50, "children": ["a", "b"]},
                              {"id": "m2", "tokens": 100, "children": ["m1"]}],
                evicted=["a", "b", "m1"], retained=[["c", num(base)], ["d", num(base)],
                                                    ["m2", num(base)]]),
            rnd(2, evicted=["c"], retained=[["d", num(base)], ["m2", num(base + rise)]])]


def test_a_small_rise_of_large_saliences_is_a_rise(write_log: LogWriter) -> None:
    assert codes(str(write_log(large_log(3e9, 4))), "--select", "CA101") == [("CA101", 2)]
    assert codes(str(write_log(large_log(3e9, 0), "flat.jsonl")), "--select", "CA101") == []


def test_an_exact_floor_is_not_rounded_up(write_log: LogWriter) -> None:
    """adv79: start_spans 5e9 x 0.2 (exactly 1e9) read a floor of 1,000,000,001."""
    records = floor_log(28)
    records[0] = session(session_id="floor", budget_tokens=100_000, start_spans=5_000_000_000)
    out = CliRunner().invoke(app, ["audit", str(write_log(records)), "--select", "CA102",
                                   "--isolated"], env={"COLUMNS": "200"})
    assert "distinct_source_spans 28 < 1000000000 (start_spans 5000000000 x 0.2)" in out.output
