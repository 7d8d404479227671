"""The recall analysis on the shared corpus (skipped when ../shared/corpus is absent)."""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from tests.logs import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")

RECALL = ("silent-discriminating-fold", "recall-floor")


def test_the_local_command_caveat_yields_no_lost_fact() -> None:
    report = audit(str(CORPUS / "claude-code/agentlogs-manual-compact.jsonl"))
    assert [f.rule for f in report.findings if f.rule in RECALL] == []
    assert not [d for d in report.extra["lost_discriminators"]
                if "respond to these messages" in d["text"]]


def test_the_end_of_a_long_tool_result_is_read() -> None:
    report = audit(str(CORPUS / "claude-code/spotter-auto-compact.jsonl"))
    rows = report.extra["lost_discriminators"]
    # the spec of the pending subtask is the last part of one 9,670-character result,
    # read again after the compaction: lost at the fold all the same
    (row,) = [d for d in rows if d["text"] == "Do not use temp-file preload"]
    (compaction,) = report.compactions  # the one automatic compaction
    assert (row["span_type"], row["cause"], row["lost_round"]) == (
        "spec", "fold", compaction["round"])
    assert row["span_line"] > 130
    assert not [d for d in rows if d["span_type"] == "harness"]
