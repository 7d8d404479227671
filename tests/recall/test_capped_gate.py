"""A check that stops at its cap never lets a trace pass a gate its findings would fail
(adv103): a stop counts as a warning for the gate, as a compaction that could not be
checked does, and a stop of the asked-again check lowers no severity by the tiers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit.api import audit
from compaction_audit.recall import claims, harm
from tests.gate_app import run
from tests.logs import LogWriter, rnd, session

_WORDS = " ".join(f"w{i:04}x" for i in range(200))  # 200 distinct words, none a claim's


def _claims_log(write_log: LogWriter) -> Path:
    """Three summaries of the 200-word span (round 1), then one whose claim no leaf
    supports (round 2): each parent reads the span's 200 words."""
    return write_log([
        session(session_id="claims", task_query="x"),
        rnd(0, spans=[{"id": "big", "tokens": 100, "text": _WORDS, "source": "tool_result:cat"},
                      {"id": "e1", "tokens": 10, "role": "assistant",
                       "text": "The build finished and the logs look normal."}]),
        rnd(1, summaries=[{"id": f"p{i}", "tokens": 1, "children": ["big"],
                           "text": "Read a long file of words."} for i in range(3)]),
        rnd(2, summaries=[{"id": "final", "tokens": 5, "children": ["e1"],
                           "text": "The build finished. Ticket INC-0042 is the root cause."}]),
    ], name="claims.jsonl")


def test_a_spent_claim_budget_is_a_limit_and_fails_a_warning_gate(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _claims_log(write_log)
    report = audit(str(path))
    assert [f.code for f in report.findings if f.code == "CA305"] == ["CA305"]
    assert report.limits == []
    # a budget of 500 is passed at the second summary of round 1 (each reads the span's
    # 200 words and their stems): it and the two after it are not checked
    monkeypatch.setattr(claims, "SUPPORT_MAX_WORDS", 500)
    report = audit(str(path))
    assert [f.code for f in report.findings if f.code == "CA305"] == []
    [limit] = report.limits
    assert (limit.check, limit.cap, limit.at, limit.round, limit.left) == (
        "unsupported-summary-claim", 500, "summary 'p1'", 1, 3)
    assert limit.message().endswith(": 3 summaries not checked")
    assert report.fails("warning") and not report.fails("error")
    out = run("audit", str(path), "-q", "--fail-on", "warning", "--jobs", "1")
    assert out.exit_code == 1
    assert out.stdout.startswith("PASS (1 check stopped at its limit): ")
    junit = run("audit", str(path), "-f", "junit", "--fail-on", "warning", "--jobs", "1")
    assert 'name="checks completed"' in junit.stdout
    assert '<failure type="not checked" message="1 check stopped at a limit">' in junit.stdout
    skipped = run("audit", str(path), "-f", "junit", "--jobs", "1")
    assert '<skipped message="1 check stopped at a limit"' in skipped.stdout
    assert skipped.exit_code == 0


def _asked_log(write_log: LogWriter, asked: bool) -> Path:
    """A fold that loses tool output (a timeout and five delays), then four person
    messages; the last asks for the timeout again when ``asked``."""
    records: list[dict[str, Any]] = [
        session(session_id="asked", task_query="tune the worker"),
        rnd(0, spans=[
            {"id": "u0", "tokens": 10, "role": "user", "text": "Please tune the worker config."},
            {"id": "t1", "tokens": 50, "source": "tool_result:Bash",
             "text": "config: read_timeout_ms = 45000"},
            {"id": "t2", "tokens": 50, "source": "tool_result:Bash",
             "text": "\n".join(f"retry delay {1000 + i} ms" for i in range(5))}]),
        rnd(1, spans=[{"id": "a1", "tokens": 2000, "role": "assistant",
                       "text": "I will continue."}],
            summaries=[{"id": "m1", "tokens": 10, "children": ["u0", "t1", "t2"],
                        "text": "The user asked to tune the worker config."}],
            evicted=["t1", "t2"], offloaded=["u0"])]
    for r in range(4):
        text = ("What was read_timeout_ms again, 45000?" if asked and r == 3
                else f"Keep going with step {r}.")
        records.append(rnd(2 + r, spans=[{"id": f"u{r + 1}", "tokens": 2000, "role": "user",
                                          "text": text}]))
    return write_log(records, name=f"asked-{asked}.jsonl")


def _severities(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in audit(str(path)).findings:
        if f.code in ("CA301", "CA303"):
            out.setdefault(f.code, set()).add(f.severity.value)
    return out


def test_a_stopped_asked_again_check_lowers_no_severity(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    asked, plain = _asked_log(write_log, True), _asked_log(write_log, False)
    # under the cap: the fact asked again makes errors; tool output alone, warnings
    assert _severities(asked) == {"CA301": {"error"}, "CA303": {"error"}}
    assert _severities(plain) == {"CA301": {"warning"}, "CA303": {"warning"}}
    # 7 lost items x 4 person messages: a cap of 8 stops at the third item, before the
    # timeout; what it did not reach may have been asked again, so no tier lowers them
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 8)
    for path in (asked, plain):
        report = audit(str(path))
        assert [x.check for x in report.limits] == ["asked-again"]
        assert _severities(path) == {"CA301": {"error"}, "CA303": {"error"}}
