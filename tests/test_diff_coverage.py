"""``diff`` says when a run could not be fully checked, and its gates fail a candidate
checked less than the baseline (adv29 F3).  Before, a Claude Code transcript whose
compaction lines were retyped (lines not read), or whose summary became opaque (a
compaction that could not be checked), showed as findings "resolved" and passed
``--fail-on-new error`` with "Gates passed" and no word of either."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from tests.gate_app import run
from tests.html_text import unbroken
from tests.logs import ROOT, LogWriter, rnd

CLAUDE = ROOT / "tests" / "fixtures" / "adapters" / "claude-session.jsonl"
"""Our Claude Code session: 2 compactions that lose 2 facts, FAIL (2 errors)."""


def retyped(tmp_path: Path, name: str = "retyped.jsonl") -> str:
    """The session with each compaction's two lines retyped: 4 lines not read."""
    objs: list[dict[str, Any]] = [orjson.loads(raw)
                                  for raw in CLAUDE.read_bytes().splitlines()]
    objs = [dict(o, type=o["type"] + "2") if o.get("subtype") == "compact_boundary"
            or o.get("isCompactSummary") is True else o for o in objs]
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return str(path)


def test_a_candidate_with_lines_not_read_fails_the_gate_and_says_so(tmp_path: Path) -> None:
    cand = retyped(tmp_path)
    result = run("diff", str(CLAUDE), cand, "--fail-on-new", "error")
    assert result.exit_code == 1, result.output
    verdict = result.output.rstrip().splitlines()[-1]
    resolved = json.loads(run("diff", str(CLAUDE), cand, "-f", "json").stdout)[
        "findings"]["counts"]["resolved"]
    assert resolved > 0  # what the retyped lines hid
    assert verdict.endswith("; candidate not fully checked: 4 lines not read, so its "
                            f"{resolved} resolved finding(s) may be unread, not fixed")
    assert "Gates FAILED (--fail-on-new error):" in result.output
    assert "Gates passed" not in result.output
    assert ("the candidate could not be checked as fully as the baseline: 4 lines not "
            "read (the baseline: 0)") in " ".join(result.output.split())
    assert "(4 rounds, round 0..3, 4 lines not read)" in result.output  # the run's line


def test_the_json_counts_each_run_and_gives_the_reason(tmp_path: Path) -> None:
    doc = json.loads(run("diff", str(CLAUDE), retyped(tmp_path), "-f", "json",
                         "--fail-if-onset-earlier", "0").stdout)
    assert (doc["baseline"]["lines_not_read"], doc["candidate"]["lines_not_read"]) == (0, 4)
    assert doc["candidate"]["compactions_not_checked"] == 0
    assert doc["gates"]["passed"] is False
    assert doc["gates"]["reasons"] == [
        "the candidate could not be checked as fully as the baseline: 4 lines not read "
        "(the baseline: 0); what it resolves may be unread, not fixed (audit the "
        "candidate: its notes say why)"]


def test_runs_checked_alike_pass_the_gate_but_the_verdict_says_it(tmp_path: Path) -> None:
    a, b = retyped(tmp_path, "a.jsonl"), retyped(tmp_path, "b.jsonl")
    result = run("diff", a, b, "--fail-on-new", "error")
    assert result.exit_code == 0, result.output
    assert ("Gates passed (--fail-on-new error), but the candidate was not fully checked "
            "(4 lines not read, as the baseline): see the verdict.") in " ".join(
                result.output.split())
    assert result.output.rstrip().splitlines()[-1] == (
        "no change; baseline not fully checked: 4 lines not read; candidate not fully "
        "checked: 4 lines not read")
    page = run("diff", a, b, "--fail-on-new", "error", "-f", "html").stdout
    page = unbroken(page)  # flags kept whole
    assert '<p class="verdict WARN" id="verdict">no change; baseline not fully' in page
    assert ('<p class="WARN">Gates passed (--fail-on-new error), but the candidate was not '
            "fully checked (4 lines not read, as the baseline): see the verdict.</p>") in page


def test_an_opaque_compaction_in_the_candidate_is_not_a_fix(write_log: LogWriter) -> None:
    spans = [{"id": "a", "tokens": 40, "text": "Keep port 8080 because 80 is taken."}]
    compaction = {"kind": "compact", "summary_id": "S", "summary_tokens": 5}
    base = write_log([rnd(0, spans=spans), rnd(
        1, summaries=[{"id": "S", "tokens": 5, "children": ["a"], "text": "Ports."}],
        evicted=["a"], compaction=compaction)], name="base.jsonl")
    cand = write_log([rnd(0, spans=spans), rnd(
        1, summaries=[{"id": "S", "tokens": 5, "children": ["a"]}], evicted=["a"],
        compaction={**compaction, "opaque": True})], name="cand.jsonl")
    doc = json.loads(run("diff", str(base), str(cand), "-f", "json", "--fail-on-new",
                         "error").stdout)
    assert doc["findings"]["counts"]["new"] == 0
    assert doc["candidate"]["compactions_not_checked"] == 1
    assert "candidate not fully checked: 1 compaction could not be checked" in doc["verdict"]
    assert doc["gates"]["reasons"][-1].startswith(
        "the candidate could not be checked as fully as the baseline: 1 compaction could "
        "not be checked (the baseline: 0)")


def test_as_many_lines_not_read_for_another_reason_fail_the_gate(tmp_path: Path) -> None:
    """adv31 N8: the gate compared counts only, so a candidate whose compaction lines
    were not read passed beside a baseline with as many unrelated lines not read."""
    objs = [orjson.loads(raw) for raw in CLAUDE.read_bytes().splitlines()]
    base = tmp_path / "base.jsonl"
    base.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs)
                     + b'{"type": "x-telemetry"}\n' * 4)
    result = run("diff", str(base), retyped(tmp_path), "--fail-on-new", "error")
    assert result.exit_code == 1, result.output
    assert ("the candidate could not be checked as fully as the baseline: lines not read "
            "for a reason the baseline has not: of a type this reader does not know "
            "('system2') and 1 more;") in " ".join(result.output.split())
    same = run("diff", str(base), str(base), "--fail-on-new", "error")
    assert same.exit_code == 0, same.output


def test_a_candidate_whose_inversion_could_not_be_judged_fails_the_gate(
        tmp_path: Path) -> None:
    """usertest38 #1: a candidate logging ``retained`` every other round (and no text to
    rebuild a cosine from) had its inversion rule judge 1 round of 40; "inversion onset
    disappeared: round 8 -> none" then passed --fail-if-onset-earlier 0.  Rounds the
    rule could not judge, those before its first comparison aside, count as checked
    less when their share grows; the same log as the baseline passes."""
    sample = ROOT / "sample_logs" / "research-decay.jsonl"  # rounds 1 to 40
    objs = [orjson.loads(raw) for raw in sample.read_bytes().splitlines()]
    for o in objs[1:]:
        if o["round"] % 2:
            del o["retained"]
        for item in (*o.get("spans", ()), *o.get("summaries", ())):
            item.pop("text", None)
    cand = tmp_path / "every-other.jsonl"
    cand.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    result = run("diff", str(sample), str(cand), "--fail-if-onset-earlier", "0")
    assert result.exit_code == 1, result.output
    assert ("the candidate could not be checked as fully as the baseline: CA101 "
            "salience-inversion not judged at 39 of 40 rounds (the baseline: 0 of 40)"
            ) in " ".join(result.output.split())
    again = run("diff", str(cand), str(cand), "--fail-if-onset-earlier", "0")
    assert again.exit_code == 0, again.output
    assert "not judged" not in again.output
    swapped = run("diff", str(cand), str(sample), "--fail-if-onset-earlier", "0")
    # judged more: the onset gate decides; the verdict says the baseline looked less
    assert "could not be checked as fully" not in swapped.output
    assert ("baseline not fully checked: CA101 salience-inversion not judged at 39 of 40 "
            "rounds") in " ".join(swapped.output.split())


def _without_salience(tmp_path: Path) -> Path:
    """research-decay (rounds 1 to 40) with no ``retained`` and no texts: nothing to
    read salience from, logged or rebuilt."""
    objs = [orjson.loads(raw) for raw in SAMPLE.read_bytes().splitlines()]
    for o in objs[1:]:
        o.pop("retained", None)
        for item in (*o.get("spans", ()), *o.get("summaries", ())):
            item.pop("text", None)
    path = tmp_path / "no-salience.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return path


SAMPLE = ROOT / "sample_logs" / "research-decay.jsonl"


def test_the_verdict_says_a_run_judged_less_without_a_gate(tmp_path: Path) -> None:
    """usertest49 #4: without a gate, "inversion onset disappeared: round 5 -> none"
    against a candidate that records no salience (and no text for a rebuilt cosine)
    said nothing of it, though ``diff --help`` says the verdict tells when either run
    could not be fully checked."""
    cand = _without_salience(tmp_path)
    out = " ".join(run("diff", str(SAMPLE), str(cand), "-q").output.split())
    assert out.startswith("inversion onset disappeared: round 8 -> none;")
    assert ("candidate not fully checked: CA101 salience-inversion not judged at 40 of 40 "
            "rounds, CA301 silent-discriminating-fold not judged at 40 of 40 rounds with a "
            "fold, so its"
            ) in out  # no text either: the folds were not compared
    same = run("diff", str(SAMPLE), str(SAMPLE), "-q")
    assert same.output.strip() == "no change"


def test_the_verdict_says_neither_run_was_judged_for_inversion(tmp_path: Path) -> None:
    """usertest50 #3: two runs that record no salience (and no text to rebuild a cosine
    from) said "no change", though neither could show an onset."""
    bare = _without_salience(tmp_path)
    out = " ".join(run("diff", str(bare), str(bare), "-q").output.split())
    assert out == ("no change; CA101 salience-inversion judged neither run (not applicable: "
                   "no salience recorded)")


def _mid_turn_compaction(path: Path, cut: int | None = None) -> Path:
    """A Claude Code session in our own words: a request, a grep, an automatic
    compaction in the middle of the turn, the agent's edit after it in the same round,
    then the next request; ``cut``: only its first lines (5: it ends at the summary)."""
    sid = "5e55a0de-0000-4000-8000-0000000000aa"

    def said(uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
        return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": sid,
                "message": {"role": "user", "content": content}, **extra}

    def reply(uuid: str, parent: str, content: list[Any], tokens: int) -> dict[str, Any]:
        return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": sid,
                "message": {"id": f"msg-{uuid}", "role": "assistant", "content": content,
                            "usage": {"input_tokens": tokens, "output_tokens": 40}}}

    lines = [
        said("u1", None, "Move the billing cron to 02:30 UTC and keep retries at 4."),
        reply("a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash",
                            "input": {"command": "grep -n cron deploy/billing.yaml"}}], 9000),
        said("r1", "a1", [{"type": "tool_result", "tool_use_id": "t1",
                           "content": "12: schedule: '0 1 * * *'\n13: retries: 4"}]),
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
         "logicalParentUuid": "r1", "sessionId": sid, "content": "Conversation compacted",
         "compactMetadata": {"trigger": "auto", "preTokens": 90000}},
        said("s1", "b1", "This session is being continued from a previous conversation. "
             "Summary: the person asked to move the billing cron; deploy/billing.yaml "
             "line 12 holds the schedule.", isCompactSummary=True,
             isVisibleInTranscriptOnly=True),
        reply("a2", "s1", [{"type": "text", "text": "Editing deploy/billing.yaml now."}],
              3000),
        reply("a3", "a2", [{"type": "tool_use", "id": "t2", "name": "Edit",
                            "input": {"file_path": "deploy/billing.yaml"}}], 3100),
        said("r2", "a3", [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]),
        said("u2", "r2", "Now run the billing tests."),
        reply("a4", "u2", [{"type": "text", "text": "Running them."}], 3300),
    ]
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines[:cut]))
    return path


def test_a_run_that_ends_at_its_compaction_is_not_checked_less(tmp_path: Path) -> None:
    """usertest73 #1: a Claude Code trace cut right after its compaction read as
    "checked less" than the whole run (salience-inversion "not judged at 1 of 2
    rounds", the compaction's round, which no work follows and which the rule leaves
    out by construction) and failed ``--fail-on-new error``.  A shorter run is not one
    checked less: both gates pass, and the verdict says nothing of coverage."""
    whole = _mid_turn_compaction(tmp_path / "whole.jsonl")
    ended = _mid_turn_compaction(tmp_path / "ended.jsonl", cut=5)
    audited = " ".join(run("audit", str(ended)).output.split())
    assert ("CA101 salience-inversion: not evaluated at 1 of 2 round(s): no work follows "
            "the compaction in its round") in audited  # the round the rule leaves out
    result = run("diff", str(whole), str(ended), "--fail-on-new", "error",
                 "--fail-if-onset-earlier", "0")
    assert result.exit_code == 0, result.output
    assert "not judged" not in result.output
    assert "not fully checked" not in result.output
    assert "Gates passed (--fail-if-onset-earlier 0, --fail-on-new error)." in result.output


def test_resolved_units_said_unread_are_those_of_the_rules_judged_less(
        tmp_path: Path) -> None:
    """usertest73 #2: when the candidate's gaps are rounds some rules could not judge,
    the resolved units that "may be unread" are those rules' (salience-inversion for
    want of salience; the fold rules for want of text), not every rule's: all 733 were
    said so for a candidate without salience or text, 3 of them compaction-drift's and
    unsupported-summary-claim's."""
    cand = _without_salience(tmp_path)
    doc = json.loads(run("diff", str(SAMPLE), str(cand), "-f", "json", "--all").stdout)
    per_rule = Counter(u["code"] for u in doc["findings"]["resolved"])
    assert per_rule == {"CA302": 611, "CA301": 113, "CA101": 6, "CA104": 2, "CA305": 1}
    out = " ".join(run("diff", str(SAMPLE), str(cand), "-q").output.split())
    assert out.endswith("so its 730 resolved finding(s) may be unread, not fixed")
