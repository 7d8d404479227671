"""salience-inversion (CA101) and provenance-floor (CA102) at a product's second
compaction (usertest68 #1): every Claude Code session with two compactions failed on a
CA102 error, with a CA101 "halt compaction and rehydrate" beside it, though neither
compaction lost a fact.  Each compaction evicts every span it folds, so at a summary of
a summary the reachable source spans are those since the last compaction, by
construction.  Both rules still fire on a native log of the same shape, and CA101 still
fires where work follows the compaction in its round."""

from __future__ import annotations

from typing import Any

from compaction_audit import api
from compaction_audit.rules.boundary import BARE_COMPACTION, PRODUCT_FOLDS
from tests.logs import LogWriter, rnd

SID = "0c0ffee0-0000-4000-8000-0000000000e2"
ASK = "Rename the --color flag to --colour in cli.py and update the tests."
FIRST = ("Summary: the user asked to rename the --color flag to --colour in cli.py and "
         "update the tests; the agent renamed it in cli.py.")
SECOND = (FIRST + " Then the user asked to update README.md for --colour; the agent "
          "updated README.md.")


def line(kind: str, uuid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "sessionId": SID, "parentUuid": parent, **fields}


def user(uuid: str, parent: str | None, text: str, **extra: Any) -> dict[str, Any]:
    return line("user", uuid, parent, message={"role": "user", "content": text}, **extra)


def assistant(uuid: str, parent: str, text: str) -> dict[str, Any]:
    return line("assistant", uuid, parent, requestId=f"req-{uuid}",
                message={"id": f"msg-{uuid}", "role": "assistant",
                         "content": [{"type": "text", "text": text}],
                         "usage": {"input_tokens": 900, "output_tokens": 3}})


def compaction(uuid: str, last: str, summary: str) -> list[dict[str, Any]]:
    return [line("system", f"b{uuid}", None, subtype="compact_boundary",
                 logicalParentUuid=last,
                 compactMetadata={"trigger": "auto", "preTokens": 150000}),
            user(f"s{uuid}", f"b{uuid}", summary, isCompactSummary=True)]


def two_compactions(after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Work, a compaction keeping every fact, more work, a second compaction keeping
    every fact again (its summary folds the first), then ``after``."""
    return [user("u1", None, ASK),
            assistant("a1", "u1", "Renamed --color to --colour in cli.py."),
            *compaction("1", "a1", FIRST),
            user("u2", "s1", "Now update README.md for --colour."),
            assistant("a2", "u2", "Updated README.md."),
            *compaction("2", "a2", SECOND),
            *after]


def codes(path: str) -> tuple[list[tuple[str, int]], dict[tuple[str, str], int]]:
    report = api.audit(path)
    fired = [(f.code, f.round) for f in report.findings if f.code in ("CA101", "CA102")]
    notes = {(n.code, n.reason): n.rounds for n in report.not_evaluated
             if n.code in ("CA101", "CA102")}
    return fired, notes


def test_two_faithful_compactions_pass(write_log: LogWriter) -> None:
    path = str(write_log(two_compactions([])))
    report = api.audit(path)
    assert [c["round"] for c in report.compactions] == [1, 3]
    assert report.series["summary_depth_max"][3] == 2
    assert report.series["distinct_source_spans"][3] == 0  # by construction
    fired, notes = codes(path)
    assert fired == []
    assert notes[("CA102", PRODUCT_FOLDS)] == 1  # the one round at depth 2
    assert notes[("CA101", BARE_COMPACTION)] == 2  # both compaction rounds, no work after
    assert report.onsets["inversion_boundary"] is None
    assert report.counts()["error"] == 0 and report.counts()["warning"] == 0


def test_work_after_the_second_compaction_is_judged_by_ca101_only(
        write_log: LogWriter) -> None:
    path = str(write_log(two_compactions([assistant("a3", "s2", "Both files are done.")])))
    fired, notes = codes(path)
    assert ("CA102", 3) not in fired
    assert notes[("CA102", PRODUCT_FOLDS)] == 1
    assert notes[("CA101", BARE_COMPACTION)] == 1  # the first compaction's round only


def native(rounds: int) -> list[dict[str, Any]]:
    """The same shape written natively: two raw spans, folded by m1; m1 and a new span
    folded by m2 (depth 2), every folded span evicted."""
    out = [rnd(0, spans=[{"id": "s1", "tokens": 100}, {"id": "s2", "tokens": 100}],
               retained=[["s1", 0.5], ["s2", 0.5]]),
           rnd(1, summaries=[{"id": "m1", "tokens": 40, "children": ["s1", "s2"]}],
               evicted=["s1", "s2"], retained=[["m1", 0.5]]),
           rnd(2, spans=[{"id": "s3", "tokens": 100}], retained=[["m1", 0.5], ["s3", 0.5]]),
           rnd(3, summaries=[{"id": "m2", "tokens": 50, "children": ["m1", "s3"]}],
               evicted=["m1", "s3"], retained=[["m2", 0.8]])]
    return out[:rounds]


def test_a_native_log_of_the_same_shape_breaches_the_floor(write_log: LogWriter) -> None:
    path = str(write_log(native(4)))
    fired, notes = codes(path)
    # 0 reachable < max(1, floor(2 x 0.2)); raw_ratio 0 < 0.25 at depth 2, spans 1 -> 0,
    # salience 0.5 -> 0.8
    assert fired == [("CA101", 3), ("CA102", 3)]
    assert not any(reason in (PRODUCT_FOLDS, BARE_COMPACTION) for _, reason in notes)


def test_the_floor_is_judged_below_min_depth(write_log: LogWriter) -> None:
    """One compaction (depth 1): nothing to exempt, nothing fires, no note."""
    path = str(write_log(two_compactions([])[:4]))
    fired, notes = codes(path)
    assert fired == [] and not any(reason == PRODUCT_FOLDS for _, reason in notes)


def test_a_native_log_with_compaction_records_is_judged(write_log: LogWriter) -> None:
    """adv132 #4: the ``compaction`` round field is any writer's (docs/log-format.md);
    a native log carrying it is no product's trace, and lost its CA102 error to the
    exemption."""
    records = native(4)
    records[1]["compaction"] = {"summary_id": "m1", "kind": "compact"}
    records[3]["compaction"] = {"summary_id": "m2", "kind": "compact"}
    path = str(write_log(records))
    fired, notes = codes(path)
    assert fired == [("CA101", 3), ("CA102", 3)]
    assert not any(reason in (PRODUCT_FOLDS, BARE_COMPACTION) for _, reason in notes)
