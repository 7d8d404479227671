"""A Claude Code transcript that ends at its ``compact_boundary`` (cut there, or still
being written: the boundary line is written before the summary line) has a compaction
whose summary is not in the log: not checked, its size unknown, and nothing said of
encrypted content (usertest74 F2: "summary about 0 tokens, an estimate from the size
of its encrypted content (opaque)").  Lines written for the case."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate_app import run
from tests.test_adapters_claude_code import boundary, reply, user_line


def _transcript(tmp_path: Path, summary: bool) -> Path:
    lines = [user_line("u1", "Pin the staging pool to 16 connections."),
             reply("a1", "Pinned the staging pool to 16 connections."),
             boundary("b1", "a1")]
    if summary:
        lines.append(user_line("s1", "Summary: pinned the staging pool.",
                               isCompactSummary=True))
    path = tmp_path / ("whole.jsonl" if summary else "cut.jsonl")
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_transcript_that_ends_at_its_boundary_has_no_summary_to_check(
        tmp_path: Path) -> None:
    path = _transcript(tmp_path, summary=False)
    out = " ".join(run("audit", str(path), "--isolated").output.split())
    assert "1 compaction could not be checked: no summary line right after its boundary" in out
    assert ("context 5,000 -> unknown tokens; summary not in the log, ratio unknown; loss "
            "not checkable (no summary line right after its boundary)") in out
    assert "encrypted" not in out and "ciphertext" not in out
    assert ("raw = raw_ratio (from round 1 on, a summary not in the log counted at the "
            "product's context size after the compaction, 0 where it gives none)") in out
    doc = json.loads(run("audit", str(path), "--isolated", "-f", "json").stdout)
    (c,) = doc["compactions"]
    assert (c["lost_checked"], c["not_checked_reason"], c["summary_tokens"], c["opaque"]) \
        == (False, "no summary line right after its boundary", None, True)


def test_a_transcript_with_its_summary_line_is_checked(tmp_path: Path) -> None:
    doc = json.loads(run("audit", str(_transcript(tmp_path, summary=True)), "--isolated",
                         "-f", "json").stdout)
    (c,) = doc["compactions"]
    assert (c["lost_checked"], c["not_checked_reason"], c["opaque"]) == (True, None, False)
    # "16" is stated by the person and the reply; the summary keeps the pool, not it
    assert [(x["kind"], x["text"]) for x in c["lost"]] == [("quantity", "16")]
