"""recall-floor (CA303) on a product's compactions: one finding per loss, not the
same loss again under another code at every later round (silent-discriminating-fold
names it at the fold); and still firing where it adds something."""

from __future__ import annotations

from typing import Any

from compaction_audit import api
from tests.logs import LogWriter, rnd, session

RULE = "This is a hard rule: never run migration 0047 with --force on prod."
VAGUE = "Worked on the migrations."


def span(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def recall(path: str) -> list[tuple[str, int, str]]:
    return [(f.code, f.round, f.severity.value) for f in api.audit(path).findings
            if f.code in ("CA301", "CA302", "CA303")]


def fold_then_turn(compaction: bool, summary: str = VAGUE) -> list[dict[str, Any]]:
    """Round 0: a person's rule; round 1: a fold of it (evicted), recorded as a
    product's compaction when ``compaction``; round 2: a later turn."""
    fold = rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["r"], "text": summary}],
               evicted=["r"])
    if compaction:
        fold["compaction"] = {"kind": "compact", "summary_id": "F", "tokens_before": 900,
                              "summary_tokens": 5, "trigger": "manual", "opaque": False}
    return [rnd(0, spans=[span("r", RULE)]), fold,
            rnd(2, spans=[span("u2", "Now update the changelog.")])]


SID = "0c0ffee0-0000-4000-8000-0000000000f1"


def claude(kind: str, uuid: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "sessionId": SID, "parentUuid": None, **fields}


def test_a_claude_code_compaction_that_lost_a_rule_is_one_error(write_log: LogWriter) -> None:
    path = write_log([
        claude("user", "u1", message={"role": "user", "content": RULE}),
        claude("assistant", "a1", requestId="req-a1", message={
            "id": "msg-a1", "role": "assistant",
            "content": [{"type": "text", "text": "Understood."}],
            "usage": {"input_tokens": 900, "output_tokens": 5}}),
        claude("system", "b1", subtype="compact_boundary", logicalParentUuid="a1",
               compactMetadata={"trigger": "manual", "preTokens": 12000}),
        claude("user", "s1", isCompactSummary=True,
               message={"role": "user", "content": VAGUE}),
        claude("user", "u2", message={"role": "user", "content": "Now the changelog."}),
    ])
    report = api.audit(str(path))
    assert recall(str(path)) == [("CA301", 1, "error")]
    assert report.counts()["error"] == 1
    assert "negation" in next(f for f in report.findings if f.code == "CA301").message


def test_a_product_compaction_is_judged_once(write_log: LogWriter) -> None:
    path = str(write_log(fold_then_turn(compaction=True)))
    assert recall(path) == [("CA301", 1, "error")]


def test_the_same_fold_in_a_native_log_still_fires_every_round(write_log: LogWriter) -> None:
    path = str(write_log(fold_then_turn(compaction=False)))
    assert recall(path) == [("CA301", 1, "error"), ("CA303", 1, "error"),
                            ("CA303", 2, "error")]
    first = next(f for f in api.audit(path).findings if f.code == "CA303")
    assert first.values["new_spans"] == ["r"] and first.values["below_floor"] == 1


def test_a_floor_above_one_still_fires_on_a_product_compaction(
        write_log: LogWriter) -> None:
    # the summary keeps the rule whole: no fold finding, but one reference < floor 2
    records = [session(recall_floor=2), *fold_then_turn(compaction=True, summary=RULE)]
    path = str(write_log(records))
    assert recall(path) == [("CA303", 1, "error"), ("CA303", 2, "error")]


def kept_then_evicted() -> list[dict[str, Any]]:
    """Round 1: a compaction whose summary F covers r (evicted) and k (kept in the
    working set); round 2: k evicted without a fold."""
    return [
        rnd(0, spans=[span("r", RULE), span("k", "Keep the timeout at 45000 ms.")]),
        {**rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["r", "k"],
                              "text": VAGUE}], evicted=["r"]),
         "compaction": {"kind": "compact", "summary_id": "F", "opaque": False}},
        rnd(2, evicted=["k"]),
    ]


def test_a_later_eviction_of_a_kept_span_still_fires(write_log: LogWriter) -> None:
    # F covers k, which stays in the working set at the compaction (topic-only there);
    # round 2 evicts k without a fold: only the floor rule says its last reference went
    records = kept_then_evicted()
    path = str(write_log(records))
    assert recall(path) == [("CA301", 1, "error"), ("CA302", 1, "warning"),
                            ("CA303", 2, "error")]
    ca303 = next(f for f in api.audit(path).findings if f.code == "CA303")
    assert ca303.values["new_spans"] == ["k"] and ca303.values["below_floor"] == 1


def ca201(path: str) -> list[tuple[int, str, str]]:
    return [(f.round, f.severity.value, f.message) for f in api.audit(path).findings
            if f.code == "CA201"]


def test_a_compaction_summary_born_ungrounded_is_no_finding(write_log: LogWriter) -> None:
    # the compaction evicted every leaf it summarized: its summary has no reachable leaf
    # from the round it is made, by construction (ungrounded-summary said so as info at
    # every product compaction, ux6); the same fold in a native log stays an error
    assert ca201(str(write_log(fold_then_turn(compaction=True)))) == []
    assert ca201(str(write_log(fold_then_turn(compaction=False)))) == [
        (1, "error", "1 retained summary has no reachable leaf: F"),
        (2, "error", "1 retained summary has no reachable leaf (all since earlier rounds)")]


def test_a_compaction_summary_that_loses_its_last_leaf_later_fires(
        write_log: LogWriter) -> None:
    # F keeps k in the working set at its compaction (grounded); round 2 evicts k
    # without a fold: from then on F is unfalsifiable from inside the context (seed 000)
    records = kept_then_evicted()
    assert ca201(str(write_log(records))) == [
        (2, "error", "1 retained summary has no reachable leaf: F")]
