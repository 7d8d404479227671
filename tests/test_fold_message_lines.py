"""CA301/CA302 messages name a product's spans by the log line that stated them (as the
report's lost list does), not by the adapter's ids (``line-11``, tool-use ids, message
ids); a native log's ids, the logger's own, stay."""

from __future__ import annotations

from pathlib import Path

from compaction_audit import api

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ROOT / "tests" / "fixtures" / "adapters"


def _ca301(path: Path) -> str:
    return next(f.message for f in api.audit(str(path)).findings if f.code == "CA301")


def test_a_codex_fold_names_the_lines_of_the_facts_it_dropped() -> None:
    # line 11: "Pinned FROM debian:12.5; the healthcheck stays at 15s."
    # line 14: "Added USER app after the install step."
    assert _ca301(ADAPTERS / "codex-local.jsonl") == (
        "fold line-18 silently dropped: line 14: ordering 'Added USER app after the install "
        "step'; line 11: quantity '12.5' (still held by another span), quantity '15s' "
        "(still held by another span)")  # by line 22 and the summary (usertest19 #5)


def test_a_claude_code_fold_names_a_span_by_line_and_a_summary_by_id() -> None:
    # c-s1 is the first compaction's summary: a summary has no line of its own
    assert _ca301(ADAPTERS / "claude-session.jsonl") == (
        "fold c-s2 silently dropped: c-s1: identifier 'worker.toml'; line 25: quantity "
        "'0.8s'")


def test_a_native_log_keeps_its_span_ids() -> None:
    # span 3 (a numeric id, on purpose) is named by its id, not by its round's line
    assert _ca301(ROOT / "sample_logs" / "handwritten.jsonl") == (
        "fold m2 silently dropped: 5 lost facts (1 more still held by another span) from "
        "2 of its children, first negation 'Do NOT enable --force on the prod migration' "
        "(span 3), scope 'prod' (span 3) and 3 more")  # "(3)" read as a line (usertest20)


def test_a_fact_another_span_still_holds_is_said_held(tmp_path: Path) -> None:
    """usertest19 #5: a fold of few facts listed one still held by a span in the
    context as "silently dropped", beside a compaction line saying "1 lost"."""
    from tests.logs import dump, held_fact_records

    trace = dump(held_fact_records(), tmp_path / "held.jsonl")
    assert _ca301(trace) == (
        "fold F silently dropped: u: constraint 'Keep the retry limit at 7'; t: quantity "
        "'read_timeout_ms to 45000' (still held by another span), identifier "
        "'read_timeout_ms'")


def test_a_fact_of_an_offloaded_span_is_said_recoverable(tmp_path: Path) -> None:
    """usertest22 #1: a topic-only fold whose child was offloaded said its facts were
    "still held by another span", with no other span in the log."""
    from tests.logs import dump, rnd

    trace = dump([
        rnd(0, spans=[{"id": "u", "tokens": 20, "source": "user",
                       "text": "Keep the retry limit at 7."}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"],
                           "text": "Worked on the deploy."}], offloaded=["u"])],
        tmp_path / "off.jsonl")
    (message,) = [f.message for f in api.audit(str(trace)).findings if f.code == "CA302"]
    assert message == ("fold F kept the topic only: u: constraint 'Keep the retry limit at "
                       "7' (recoverable: the span is offloaded)")
