"""A span holds a fact only where it states it (usertest38 #4): a question asks for a
fact, and a rule's object named outside the rule (the call that breaks it) does not
restate the rule.  The recall debt, the loss at the fold and "read again" read the
spans that hold a fact; "asked again" and a reuse read every span naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall import stance
from compaction_audit.recall.extract import extract
from compaction_audit.report.model import SessionReport
from tests.logs import LogWriter, analyse_alone_and_helped, rnd


def span(i: str, text: str, source: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def audit(path: Path) -> SessionReport:
    return audit_session(read_native(str(path)))


def debt(report: SessionReport) -> list[tuple[int, int, int]]:
    """(round, discriminators_seen, recall_debt) of every round."""
    return [tuple(r) for r in report.series.select(
        "round", "discriminators_seen", "recall_debt").rows()]


def lost(report: SessionReport) -> dict[str, dict[str, Any]]:
    return {d["text"]: d for d in report.extra["lost_discriminators"]}


def texts(text: str, flags: list[bool]) -> list[str]:
    return [d.text for d, f in zip(extract(text), flags, strict=True) if f]


# ----------------------------------------------------------------- stance, per text
@pytest.mark.parametrize(("text", "negated"), [
    ("Do NOT run release.sh with --force; it skips the checks.", ["release.sh", "--force"]),
    ("Noted: release.sh will run without --force.", ["--force"]),  # a fragment's object
    ("There is no `--force` flag here.", ["--force"]),
    ("Never release without --confirm.", []),  # a double negation requires it
    ("The layout doesn't render flash_messages.", []),  # it describes, it forbids nothing
    ("Run release.sh with --force. Not now.", []),  # "Not" is past a sentence's end
])
def test_a_token_is_negated_inside_a_prohibition_or_right_after_a_negation(
        text: str, negated: list[str]) -> None:
    assert texts(text, stance.negated(text, extract(text))) == negated


@pytest.mark.parametrize(("text", "asked"), [
    ("Which version of lib2 did we pin again?", ["lib2"]),
    ("Was it port 8443?", []),  # a value the question writes is stated
    ("Which lib2 did we pin? lib2 stays at 1.2.0.", []),  # stated after the question
    ("Add `allow_nil? false` to `source_id`.", []),  # code's question mark ends nothing
    ("Should we not use --force? Use release.sh now.", ["not use --force", "--force"]),
])
def test_a_name_or_a_rule_in_a_question_is_asked(text: str, asked: list[str]) -> None:
    assert texts(text, stance.asked(text, extract(text))) == asked


def test_one_token_s_stance_is_the_whole_text_s() -> None:
    # trace asks of one token per span what the analysis reads of every token
    for text in ("Do NOT run release.sh with --force; it skips the checks.",
                 "Noted: release.sh will run without --force. Never release without "
                 "--confirm.", "The layout doesn't render flash_messages on prod."):
        found = extract(text)
        whole = list(zip(stance.rules_over(found), stance.negated(text, found), strict=True))
        assert [stance.stance_of_token(text, found, d) for d in found] == whole


# ------------------------------------------------------------ the audit, per session
RULE = [
    rnd(0, spans=[span("u", "Do NOT run deploy.sh with --force; it skips the checks.",
                       "user")]),
    rnd(1, spans=[span("a", "Noted: deploy.sh will run without --force.", "assistant")]),
    rnd(2, summaries=[{"id": "F", "tokens": 5, "children": ["u", "a"],
                       "text": "Talked about the deployment."}], evicted=["u", "a"]),
    rnd(3, spans=[span("t", "$ ./deploy.sh --force\ndeploy finished", "tool:t")]),
]
"""u forbids --force; a says so too ("without --force") and names deploy.sh plainly;
F keeps neither; t, a round after, runs the forbidden command."""


def test_the_call_that_breaks_a_lost_rule_does_not_restate_its_object(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    report = audit(write_log(RULE))
    # seen: the negation, deploy.sh and --force; F loses all three at round 2.  t holds
    # deploy.sh again (a stated it plainly: a fact of its own), not --force: every span
    # stating --force before the rule left stated it negatively (debt 1 before)
    assert debt(report) == [(0, 3, 0), (1, 3, 0), (2, 3, 3), (3, 3, 2)]
    rows = lost(report)
    assert (rows["--force"]["reread_span"], rows["--force"]["reused_span"]) == (None, "t")
    assert (rows["deploy.sh"]["reread_span"], rows["deploy.sh"]["reused_span"]) == ("t", "t")
    alone, _ = analyse_alone_and_helped(read_native(str(write_log(RULE))), monkeypatch)
    assert alone.debt["recall_debt"].to_list() == [0, 0, 3, 2]


def test_a_token_stated_plainly_before_the_rule_left_is_held_where_named(
        write_log: LogWriter) -> None:
    # a states --force plainly: --force is a fact of its own, and t holds it again
    plain = [*RULE[:1], rnd(1, spans=[span("a", "Noted: deploy.sh takes --force.",
                                           "assistant")]), *RULE[2:]]
    report = audit(write_log(plain))
    assert debt(report) == [(0, 3, 0), (1, 3, 0), (2, 3, 3), (3, 3, 1)]
    assert lost(report)["--force"]["reread_span"] == "t"


def test_a_question_naming_a_lost_fact_does_not_hold_it(write_log: LogWriter) -> None:
    records = [
        rnd(0, spans=[span("u", "Set read_timeout_ms to 45000 on staging.", "user")]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"],
                           "text": "Adjusted the config."}], evicted=["u"]),
        rnd(2, spans=[span("q", "Which value of read_timeout_ms did we use?", "user")]),
        rnd(3, spans=[span("v", "Was it 45000?", "user")]),
    ]
    report = audit(write_log(records))
    # F loses read_timeout_ms, 45000 (bound to it: read_timeout_ms to 45000) and
    # staging; q asks for the name (it held it before: debt 2); v states the value
    # alone, binding the name to nothing else (holds the bound value: debt 2, was 1),
    # and 45000 unbound is a fact of its own (seen 4)
    assert debt(report) == [(0, 3, 0), (1, 3, 3), (2, 3, 3), (3, 4, 2)]
    row = lost(report)["read_timeout_ms"]
    assert (row["asked_again_span"], row["reread_span"]) == ("q", None)
    # a fact named only in a question is no fact seen: nothing owed for it
    only = [rnd(0, spans=[span("q", "Should we raise max_conns on staging?", "user")]),
            rnd(1, spans=[span("a", "Looking.", "assistant")], evicted=["q"])]
    assert debt(audit(write_log(only, "only.jsonl"))) == [(0, 0, 0), (1, 0, 0)]


@pytest.mark.parametrize(("text", "bounds"), [
    ("?" * 20_000 + "x", []),  # marks inside a sentence: no end (adv146 F2: 18 s)
    ("?!" * 10_000 + "x", []),
    ("Why" + "?" * 20_000 + " ok", [(0, 3)]),  # one run, one question
    ("Really!? Yes!", [(0, 6)]),  # the run "!?" ends a question
    ("Stop!! Go?", [(6, 9)]),  # a run of "!" ends a sentence, not a question
    ("Is it\uff1fnext", [(0, 5)]),  # a full-width mark ends it whatever follows
    ("Fine?🙂 yes", [(0, 4)]),
    ("Is it?x", []),
])
def test_a_run_of_marks_is_read_once(text: str, bounds: list[tuple[int, int]]) -> None:
    assert stance.question_bounds(text) == bounds
