"""compaction-drift (CA104) at a product's compaction round with no work after the
compaction (a session compacted by hand as its last act): its raw_ratio measures what
the compaction kept, not drift; the note says so, and drift is still called where
work follows the compaction, and in native logs."""

from __future__ import annotations

from typing import Any

from compaction_audit import api
from compaction_audit.rules.boundary import BARE_COMPACTION
from tests.logs import LogWriter, rnd

SID = "0c0ffee0-0000-4000-8000-0000000000d1"
SUMMARY = " ".join(["The user asked to rename the flag and the agent did so in cli.py."] * 20)


def line(kind: str, uuid: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "sessionId": SID, "parentUuid": None, **fields}


def assistant(uuid: str, text: str) -> dict[str, Any]:
    return line("assistant", uuid, requestId=f"req-{uuid}",
                message={"id": f"msg-{uuid}", "role": "assistant",
                         "content": [{"type": "text", "text": text}],
                         "usage": {"input_tokens": 900, "output_tokens": 3}})


def compacted_by_hand(after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A person's turn, the reply, a manual /compact and its summary, then ``after``."""
    return [line("user", "u1", message={"role": "user", "content": "Rename the flag."}),
            assistant("a1", "Renamed it."),
            line("system", "b1", subtype="compact_boundary", logicalParentUuid="a1",
                 compactMetadata={"trigger": "manual", "preTokens": 15000}),
            line("user", "s1", isCompactSummary=True,
                 message={"role": "user", "content": SUMMARY}),
            *after]


def drift(path: str) -> tuple[list[int], dict[str, int]]:
    report = api.audit(path)
    notes = {n.reason: n.rounds for n in report.not_evaluated if n.code == "CA104"}
    return [f.round for f in report.findings if f.code == "CA104"], notes


def test_a_log_that_ends_at_a_manual_compact_has_no_drift_warning(
        write_log: LogWriter) -> None:
    path = str(write_log(compacted_by_hand([])))
    report = api.audit(path)
    (c,) = report.compactions
    assert c["round"] == 1 and report.series["raw_ratio"][1] == 0.0  # the summary alone
    assert drift(path) == ([], {BARE_COMPACTION: 1})
    assert report.counts()["warning"] == 0


def test_command_wrappers_after_the_compaction_are_not_work(write_log: LogWriter) -> None:
    wrapper = line("user", "c1", message={
        "role": "user", "content": "<command-name>/compact</command-name>"})
    path = str(write_log(compacted_by_hand([wrapper])))
    ratio = api.audit(path).series["raw_ratio"][1]
    assert 0 < ratio < 0.25  # the wrapper is raw, but no work
    assert drift(path) == ([], {BARE_COMPACTION: 1})


def test_work_after_the_compaction_is_judged(write_log: LogWriter) -> None:
    path = str(write_log(compacted_by_hand([assistant("a2", "Done.")])))
    ratio = api.audit(path).series["raw_ratio"][1]
    assert 0 < ratio < 0.25
    rounds, notes = drift(path)
    assert rounds == [1] and BARE_COMPACTION not in notes


def test_a_native_round_is_always_judged(write_log: LogWriter) -> None:
    # a native round is itself a compaction round: its raw_ratio is after the eviction
    # pass, as seed 000 measures it
    path = str(write_log([
        rnd(0, spans=[{"id": "s1", "tokens": 100}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 40, "children": ["s1"]}],
            spans=[{"id": "s2", "tokens": 10}], evicted=["s1"]),
    ]))
    assert api.audit(path).series["raw_ratio"][1] == 0.2
    assert drift(path) == ([1], {})
