"""ungrounded-summary, silent-drop and logged-mismatch on small logs, firing and not."""

from __future__ import annotations

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.report.model import SessionReport
from compaction_audit.settings import Settings
from tests.logs import LogWriter, rnd, spans


def audit(path: object, **settings: object) -> SessionReport:
    return audit_session(read_native(str(path)), Settings().with_values(settings))


def by_rule(report: SessionReport, rule: str) -> list[tuple[int, int]]:
    return [(f.round, f.line) for f in report.findings if f.rule == rule]


BASE = rnd(0, spans=spans(("a", 10), ("b", 10)), retained=[["a", 0.1], ["b", 0.2]])


def test_ungrounded_fires_when_last_leaf_goes(write_log: LogWriter) -> None:
    path = write_log([
        BASE,
        rnd(1, summaries=[{"id": "S", "tokens": 2, "children": ["a", "b"]}],
            offloaded=["a"], evicted=["b"], retained=[["S", 0.5]]),
        rnd(2, retained=[["S", 0.5]]),
        rnd(3, evicted=["a"], retained=[["S", 0.5]]),
    ])
    report = audit(path)
    assert by_rule(report, "ungrounded-summary") == [(3, 4)]
    finding = next(f for f in report.findings if f.rule == "ungrounded-summary")
    assert finding.values == {"summaries": ["S"], "ungrounded_summaries": 1,
                              "new_summaries": 1}
    assert finding.message == "1 retained summary has no reachable leaf: S"


def test_ungrounded_names_each_summary_once_and_counts_the_rest(
        write_log: LogWriter) -> None:
    # 25 summaries lose their only leaf at round 1, one more (Z) at round 3; all stay
    folds = [{"id": f"F{i:02d}", "tokens": 1, "children": [f"s{i:02d}"]} for i in range(25)]
    path = write_log([
        rnd(0, spans=[*spans(*((f"s{i:02d}", 1) for i in range(25))), *spans(("z", 1))]),
        rnd(1, summaries=folds, evicted=[f"s{i:02d}" for i in range(25)]),
        rnd(2, summaries=[{"id": "Z", "tokens": 1, "children": ["z"]}]),
        rnd(3, evicted=["z"]),
        rnd(4),
    ])
    found = {f.round: f for f in audit(path).findings if f.rule == "ungrounded-summary"}
    assert sorted(found) == [1, 2, 3, 4]
    first = found[1].values
    assert (first["ungrounded_summaries"], first["new_summaries"]) == (25, 25)
    assert first["summaries"] == [f"F{i:02d}" for i in range(20)]  # LIST_CAP
    assert found[1].message.endswith("F19 and 5 more")
    assert found[2].values == {"summaries": [], "ungrounded_summaries": 25,
                               "new_summaries": 0}
    assert found[2].message == ("25 retained summaries have no reachable leaf "
                                "(all since earlier rounds)")
    assert found[3].values == {"summaries": ["Z"], "ungrounded_summaries": 26,
                               "new_summaries": 1}
    assert found[3].message.endswith("no reachable leaf; new at this round: Z")
    assert found[4].values["ungrounded_summaries"] == 26


def test_ungrounded_quiet_while_a_leaf_is_offloaded(write_log: LogWriter) -> None:
    path = write_log([
        BASE,
        rnd(1, summaries=[{"id": "S", "tokens": 2, "children": ["a", "b"]}],
            offloaded=["a"], evicted=["b"], retained=[["S", 0.5]]),
    ])
    assert by_rule(audit(path), "ungrounded-summary") == []


def test_silent_drop_fires_and_not(write_log: LogWriter) -> None:
    dropped = write_log([BASE, rnd(1, retained=[["a", 0.1]])], "drop.jsonl")
    report = audit(dropped)
    assert by_rule(report, "silent-drop") == [(1, 2)]
    assert report.findings[0].values == {"items": ["b"], "silent_drops": 1}
    listed = write_log([BASE, rnd(1, evicted=["b"], retained=[["a", 0.1]])], "ok.jsonl")
    assert by_rule(audit(listed), "silent-drop") == []


def test_logged_mismatch_boundary(write_log: LogWriter) -> None:
    # rebuilt raw_ratio is 1.0 (no summaries); tolerance 0.25 -> 0.75 is exactly at it
    at = write_log([{**BASE, "logged": {"raw_ratio": 0.75}}], "at.jsonl")
    assert by_rule(audit(at, logged_tolerance=0.25), "logged-mismatch") == []
    over = write_log([{**BASE, "logged": {"raw_ratio": 0.5}}], "over.jsonl")
    assert by_rule(audit(over, logged_tolerance=0.25), "logged-mismatch") == [(0, 1)]
    count = write_log([{**BASE, "logged": {"distinct_source_spans": 3,
                                            "summary_depth_max": 0}}], "count.jsonl")
    report = audit(count)
    assert by_rule(report, "logged-mismatch") == [(0, 1)]
    assert report.findings[0].values["mismatches"] == [
        {"field": "distinct_source_spans", "logged": 3.0, "rebuilt": 2.0}]
    assert report.findings[0].message == (
        "logged aggregates disagree: distinct_source_spans logged 3, rebuilt 2")
    whole = write_log([{**BASE, "logged": {"raw_ratio": 0.0}}], "whole.jsonl")
    # a ratio keeps its decimals when whole (usertest49 #7: "rebuilt 0" for 0.0)
    assert audit(whole).findings[0].message == (
        "logged aggregates disagree: raw_ratio logged 0.000, rebuilt 1.000")
    near = write_log([{**BASE, "logged": {"raw_ratio": 1.0004}}], "near.jsonl")
    # usertest50 #6: "logged 1.000, rebuilt 1.000" under a tolerance of 0.0001
    assert audit(near, logged_tolerance=0.0001).findings[0].message == (
        "logged aggregates disagree: raw_ratio logged 1.0004, rebuilt 1.0000")
    exact = write_log([{**BASE, "logged": {"distinct_source_spans": 2, "raw_ratio": 1.0,
                                            "query_cosine_retained": 0.15}}], "exact.jsonl")
    assert by_rule(audit(exact), "logged-mismatch") == []


def test_logged_salience_unverifiable_in_delta_mode(write_log: LogWriter) -> None:
    path = write_log([BASE, rnd(1, logged={"query_cosine_retained": 0.9})])
    assert by_rule(audit(path), "logged-mismatch") == []
