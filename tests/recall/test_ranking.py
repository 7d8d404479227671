"""Tiers of lost facts (issue 10, point 5): hand-made lost tables and a small log."""

from __future__ import annotations

from typing import Any

import polars as pl

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.ranking import (
    add_tiers,
    content_words,
    rank_lost,
    span_type_from_source,
    tier_counts,
)
from tests.logs import LogWriter, rnd, session


def lost_table(rows: list[dict[str, Any]], **extra: pl.DataType) -> pl.DataFrame:
    """A lost table with the columns ranking reads (others as the analysis has them)."""
    schema: dict[str, Any] = {"kind": pl.String, "text": pl.String, "rank": pl.Int64,
                              "span": pl.String, "span_source": pl.String,
                              "asked_again_round": pl.Int64, **extra}
    full = [{k: r.get(k) for k in schema} for r in rows]
    return pl.DataFrame(full, schema=schema)


def row(kind: str, text: str, source: str, span: str = "s", again: int | None = None,
        **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "text": text, "rank": 9 if kind in ("negation", "constraint")
            else 2, "span": span, "span_source": source, "asked_again_round": again,
            **extra}


def tiers(frame: pl.DataFrame) -> list[tuple[str, int, str]]:
    return list(add_tiers(frame).select("text", "tier", "tier_name").iter_rows())


def test_each_tier_from_its_description() -> None:
    frame = lost_table([
        row("identifier", "ORD-5501", "tool_result:Bash", again=2),
        row("constraint", "subscribe only when connected", "user"),
        row("quantity", "45000", "user"),
        row("negation", "no migrations, no route changes", "assistant"),
        row("negation", "must not add", "assistant"),
        row("negation", "Let me not rerun the migration tests", "assistant"),
        row("identifier", "lumen-rt", "assistant"),
        row("identifier", "payments-prod", "tool_result:Read"),
        row("quantity", "12", "tool_call:Bash"),
    ])
    assert tiers(frame) == [
        ("ORD-5501", 1, "asked again"),
        ("subscribe only when connected", 2, "typed by a person"),
        ("45000", 2, "typed by a person"),
        ("no migrations, no route changes", 4, "assistant decision"),  # 3 content words
        ("must not add", 5, "other prose"),  # a fragment: one content word
        ("Let me not rerun the migration tests", 5, "other prose"),  # chatter
        ("lumen-rt", 5, "other prose"),
        ("payments-prod", 6, "tool output"),
        ("12", 6, "tool output"),
    ]


def test_tier_why_names_the_reason() -> None:
    frame = lost_table([row("identifier", "ORD-5501", "user", again=3),
                        row("negation", "must not add", "assistant"),
                        row("quantity", "12", "tool_result:Bash")])
    assert add_tiers(frame)["tier_why"].to_list() == [
        "a person named it again at round 3",
        "a fragment: cut short or fewer than two content words",
        "a quantity from tool output",
    ]


def test_fragments_and_code_arrows_are_never_decisions() -> None:
    texts = ["must read as `state", "Never add a `Co-Authored-By", "must keep the cache and",
             "fn record ->", "fn p -> p.visible_sessions", "ceff8c3..bb53fb4 main -> main"]
    kinds = ["constraint", "negation", "constraint", "ordering", "ordering", "ordering"]
    frame = lost_table([row(k, t, "assistant") for k, t in zip(kinds, texts, strict=True)]
                       + [row("ordering", "build staging, then deploy prod", "assistant"),
                          row("constraint", "only use `uv run` for tests", "assistant")])
    assert [t for _, t, _ in tiers(frame)] == [5, 5, 5, 5, 5, 5, 4, 4]
    why = add_tiers(frame)["tier_why"].to_list()
    assert why[4] == "an arrow in code or a log line, not an ordering"
    assert why[0] == "a fragment: cut short or fewer than two content words"
    # the same texts from tool output, span type unknown: none may be spec text
    tool = lost_table([row(k, t, "tool_result:Read") for k, t in zip(kinds, texts,
                                                                     strict=True)])
    assert [t for _, t, _ in tiers(tool)] == [6] * 6


def test_an_ordering_with_one_side_is_a_fragment() -> None:
    # its marker starts or ends it: the other side was in the sentence before
    one = ["Then the `ThreadSection` wrapper", "the filter comes after",
           "run the migration afterwards", "Afterwards the cache warms up"]
    # "before X" and "after X" name what they are ordered against
    both = ["restart the db before the backup", "build staging, then deploy prod",
            "Reverted read_timeout_ms to 30000",
            "Before deploying, run the database migrations on staging",
            "After the build passes, tag the release", "after a failed migration",
            # the extractor cut the subject off at ":" or "but": still decisions (adv47)
            "comes before rate limiting", "was moved after the nightly backup"]
    frame = lost_table([row("ordering", t, "assistant") for t in one + both])
    assert [t for _, t, _ in tiers(frame)] == [5] * 4 + [4] * 8
    assert set(add_tiers(frame)["tier_why"].to_list()[:4]) == {
        "a fragment: cut short or fewer than two content words"}
    # another kind may end in the same word: only an ordering is judged so
    other = lost_table([row("negation", "do not deploy the service before", "assistant")])
    assert [t for _, t, _ in tiers(other)] == [4]


def test_reuse_by_a_later_span_is_named_in_why() -> None:
    frame = lost_table([row("identifier", "ORD-5501", "tool_result:Bash", reused_round=1),
                        row("identifier", "ORD-7", "tool_result:Bash")],
                       reused_round=pl.Int64)
    assert add_tiers(frame)["tier_why"].to_list() == [
        "an identifier from tool output; reused by a later span at round 1",
        "an identifier from tool output"]


def test_span_type_column_wins_over_the_source() -> None:
    frame = lost_table([
        row("negation", "no reopen workflow in this task", "tool_result:Bash",
            span_type="spec"),
        row("negation", "no reopen workflow in this task", "tool_result:Bash",
            span_type="tool_output"),
        row("negation", "no reopen workflow in this task", "tool_result:Bash"),
        row("identifier", "x.test.ts", "tool_result:Read", span_type="code"),
    ], span_type=pl.String)
    assert [t for _, t, _ in tiers(frame)] == [3, 6, 5, 6]
    # a fragment of spec text ("must add `", one content word) is no requirement;
    # a value in spec text says where it came from
    cut = lost_table([
        row("constraint", "must add `", "tool_result:Bash", span_type="spec"),
        row("condition", "only when", "tool_result:Bash", span_type="spec"),
        row("identifier", "additionalContext", "tool_result:Bash", span_type="spec"),
    ], span_type=pl.String)
    assert [(t, w) for w, t in add_tiers(cut).select("tier_why", "tier").rows()] == [
        (5, "a fragment: cut short or fewer than two content words"),
        (5, "a fragment: cut short or fewer than two content words"),
        (5, "an identifier in spec text")]
    # without a known type, a 2+ word clause in tool output may be spec text (5);
    # an arrow there is not, nor is a one-word fragment
    unknown = lost_table([
        row("ordering", "spotter-gqc -> spotter-gqc", "tool_result:Bash"),
        row("constraint", "must be derived", "tool_result:Bash"),
    ])
    assert [t for _, t, _ in tiers(unknown)] == [6, 6]


def test_span_type_fallback_from_source() -> None:
    sources = ["user", "assistant", "tool_call:Bash", "tool_result:Read", "tool:shell",
               "harness:meta", "harness:skill", "user:meta", None, "msg-12"]
    got = pl.select(span_type_from_source(pl.Series(sources, dtype=pl.String)))
    assert got.to_series().to_list() == [
        "prose", "prose", "tool_output", "tool_output", "tool_output", "harness",
        "harness", "harness", "prose", "prose"]


def test_content_words_leave_out_markers_and_function_words() -> None:
    texts = ["must add `", "always returns `", "no migrations, no route changes",
             "keep status codes exactly", "Do NOT enable --force on the prod migration"]
    got = pl.select(content_words(pl.Series(texts))).to_series().to_list()
    assert got == [1, 1, 3, 2, 4]


def test_rank_lost_orders_by_tier_then_later_spans_and_drops_harness() -> None:
    frame = lost_table([
        row("quantity", "12", "tool_result:Bash", span="t1"),
        row("negation", "do not rotate the signing keys", "assistant", span="a1"),
        row("negation", "never touch the billing tables", "assistant", span="a2"),
        row("negation", "DO NOT respond to these messages", "user:meta", span="h1"),
        row("constraint", "only on weekdays", "user", span="u1"),
    ])
    items = pl.DataFrame({"id": ["u1", "a1", "h1", "t1", "a2"], "line": [3, 8, 9, 10, 14]})
    ranked = rank_lost(frame, items)
    assert ranked.select("text", "tier", "span_line").rows() == [
        ("only on weekdays", 2, 3),
        ("never touch the billing tables", 4, 14),  # the later span first
        ("do not rotate the signing keys", 4, 8),
        ("12", 6, 10),
    ]
    assert tier_counts(ranked) == {1: 0, 2: 1, 3: 0, 4: 2, 5: 0, 6: 1, 7: 0}


def test_rank_lost_keeps_a_span_line_the_table_has() -> None:
    frame = lost_table([row("quantity", "45 s", "user", span="u1", span_line=40),
                        row("quantity", "30 s", "user", span="u2")], span_line=pl.Int64)
    items = pl.DataFrame({"id": ["u1", "u2"], "line": [7, 9]})
    assert rank_lost(frame, items).select("text", "span_line").rows() == [
        ("45 s", 40), ("30 s", 9)]


def test_spans_of_one_round_keep_their_order_in_the_log() -> None:
    # adapters give every span of a round the round's line: the item order decides
    frame = lost_table([row("quantity", "111", "user", span="u1"),
                        row("quantity", "222", "user", span="u2")])
    items = pl.DataFrame({"id": ["u1", "u2"], "line": [5, 5]})
    assert rank_lost(frame, items)["text"].to_list() == ["222", "111"]


def span(i: str, text: str, source: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def test_report_lists_lost_facts_in_tier_order(write_log: LogWriter) -> None:
    path = write_log([
        session(),
        rnd(0, spans=[span("u1", "Never deploy on Fridays.", "user"),
                      span("a1", "I decided the cache must stay disabled in prod.",
                           "assistant"),
                      span("t1", "retries=12", "tool_result:Read"),
                      span("m1", "DO NOT respond to these messages.", "user:meta")]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u1", "a1", "t1", "m1"],
                           "text": "Worked on the deployment."}],
            evicted=["u1", "a1", "t1", "m1"]),
    ])
    report = audit_session(read_native(str(path)))
    lost = report.extra["lost_discriminators"]
    got = [(d["tier"], d["span"], d["kind"], d["text"]) for d in lost]
    # a clause shows its left side ("the cache must ..."); tool output gives the keyed
    # value "retries=12" and not the bare key, which no prose used (issue 10, point 1)
    assert got == [
        (2, "u1", "negation", "Never deploy on Fridays"),
        (4, "a1", "constraint", "I decided the cache must stay disabled in prod"),
        (5, "a1", "scope", "prod"),
        (6, "t1", "quantity", "retries=12"),
    ]
    # the log line that stated each (round 0 is line 2, after the session record)
    assert all(d["span_line"] == 2 for d in lost)
    assert report.extra["lost_tiers"] == {"1": 0, "2": 1, "3": 0, "4": 1, "5": 1, "6": 1,
                                           "7": 0}


def test_within_one_span_later_lines_first() -> None:
    # one tool result holding three task specs: the last (the pending task) comes first;
    # without text_line the kind's rank decides
    spec = "tool_result:Bash"
    frame = lost_table([row("requirement", "Show the badge", spec, span_type="spec",
                            text_line=3, span_line=660),
                        row("requirement", "Token expires by TTL", spec, span_type="spec",
                            text_line=204, span_line=660),
                        row("negation", "Do not use temp files", spec, span_type="spec",
                            text_line=139, span_line=660)],
                       span_type=pl.String, text_line=pl.Int64, span_line=pl.Int64)
    assert rank_lost(frame)["text"].to_list() == [
        "Token expires by TTL", "Do not use temp files", "Show the badge"]
    assert rank_lost(frame.drop("text_line"))["text"].to_list() == [
        "Do not use temp files", "Show the badge", "Token expires by TTL"]


def test_condition_and_requirement_kinds_are_clauses() -> None:
    # a requirement unit and a condition from a `bd show` spec read by a tool are spec
    # requirements (3); the same condition in the assistant's prose is a decision (4)
    frame = lost_table([
        row("requirement", "Token is one-time and expires by TTL", "tool_result:Bash",
            span_type="spec"),
        row("condition", "runs only in review mode", "tool_result:Bash", span_type="spec"),
        row("condition", "when annotations exist in the header", "assistant",
            span_type="prose"),
    ], span_type=pl.String)
    assert [t for _, t, _ in tiers(frame)] == [3, 3, 4]
