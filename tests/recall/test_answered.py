"""Where the assistant answered a question about a lost fact without reading it again:
``answered_line`` of the lost table, and the line the reports write for it.

Seed 002's failure: the agent later answers confidently from the summary and is
wrong.  The auditor cannot judge the answer; it points at it: the assistant's first
text after the person asked again, when nothing brought the fact back before it.
Small native logs in our own words, one round per line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit import api
from compaction_audit.report.json_report import render_json
from compaction_audit.report.model import Report

SESSION = {"type": "session", "schema": "compaction-audit/1", "session_id": "answered"}
SET = "Set read_timeout_ms to 45000 on staging after the soak test."
ASK = "Was read_timeout_ms on staging ever raised?"


def span(sid: str, source: str, text: str) -> dict[str, Any]:
    return {"id": sid, "tokens": 20, "text": text, "source": source}


def fold_round(number: int) -> dict[str, Any]:
    """Round ``number`` folds the setting and its reply into a summary without it."""
    return {"type": "round", "round": number,
            "summaries": [{"id": "m1", "tokens": 5, "children": ["u1", "a1"],
                           "text": "Tuned the staging settings."}],
            "evicted": ["u1", "a1"]}


def write(path: Path, *later: dict[str, Any]) -> str:
    """Line 1 the session, line 2 round 0 (the setting), line 3 round 1 (the fold),
    then ``later`` rounds from line 4 on."""
    records = [SESSION,
               {"type": "round", "round": 0,
                "spans": [span("u1", "user", SET), span("a1", "assistant", "Done.")]},
               fold_round(1), *later]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def lost_row(path: str, text: str = "read_timeout_ms") -> dict[str, Any]:
    doc = orjson.loads(render_json(Report([api.audit(path)], []), single=True))
    rows = [d for d in doc["lost_discriminators"] if d["text"] == text]
    assert len(rows) == 1, doc["lost_discriminators"]
    return rows[0]


def test_the_first_assistant_text_after_the_question_is_the_answer(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3,
                  "spans": [span("c3", "tool_call:Bash", "git log --oneline"),
                            span("a3", "assistant", "No, it stayed at 30000.")]},
                 {"type": "round", "round": 4,
                  "spans": [span("a4", "assistant", "Anything else?")]})
    row = lost_row(path)
    assert (row["asked_again_span"], row["asked_again_round"]) == ("u2", 2)
    # line 5 holds round 3: its tool call is no answer, its assistant text is
    assert (row["answered_line"], row["answered_span"]) == (5, "a3")
    # the value of the setting was asked about too: the question names its subject,
    # read_timeout_ms (usertest68 #5), and the same answer is pointed at
    assert lost_row(path, "read_timeout_ms to 45000")["answered_line"] == 5
    # the order of the setting's steps was not asked about: no answer to point at
    assert lost_row(path, SET.rstrip("."))["answered_line"] is None


def test_narration_is_no_answer_and_the_step_it_announces_may_read_the_fact(
        tmp_path: Path) -> None:
    reread = span("r4", "tool_result:Read", "config/staging.toml: read_timeout_ms = 45000")
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3,
                  "spans": [span("a3", "assistant", "Let me check the staging config.")]},
                 {"type": "round", "round": 4, "spans": [reread]},
                 {"type": "round", "round": 5, "spans": [span("a5", "assistant", "Yes: 45000.")]})
    assert lost_row(path)["answered_line"] is None  # read again before the answer
    path = write(tmp_path / "u.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3,
                  "spans": [span("a3", "assistant", "Let me check the staging config.")]},
                 {"type": "round", "round": 4, "spans": [span("a4", "assistant", "No.")]})
    assert (lost_row(path)["answered_line"], lost_row(path)["answered_span"]) == (6, "a4")


def test_an_answer_after_the_fact_was_read_again_is_no_answer_from_memory(
        tmp_path: Path) -> None:
    reread = span("r3", "tool_result:Read", "config/staging.toml: read_timeout_ms = 45000")
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3, "spans": [reread]},
                 {"type": "round", "round": 4, "spans": [span("a4", "assistant", "Yes: 45000.")]})
    row = lost_row(path)
    assert (row["reread_line"], row["answered_line"], row["answered_span"]) == (5, None, None)
    # read again only after the answer: the answer still came from the summary
    path = write(tmp_path / "u.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3, "spans": [span("a3", "assistant", "No.")]},
                 {"type": "round", "round": 4, "spans": [reread]})
    row = lost_row(path)
    assert (row["answered_line"], row["reread_line"]) == (5, 6)


def test_a_reply_in_the_question_s_own_round_answers_it(tmp_path: Path) -> None:
    # a native round lists its spans in order: the reply after the question answers it
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2,
                  "spans": [span("u2", "user", ASK), span("a2", "assistant", "No.")]})
    assert (lost_row(path)["answered_line"], lost_row(path)["answered_span"]) == (4, "a2")


@pytest.mark.parametrize("later", [
    # the assistant spoke before the question, in its round: no answer to it
    [{"type": "round", "round": 2,
      "spans": [span("a2", "assistant", "Ready."), span("u2", "user", ASK)]}],
    # the person moved on before any reply: the reply answers the new request
    [{"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
     {"type": "round", "round": 3,
      "spans": [span("u3", "user", "Never mind; please format the README instead.")]},
     {"type": "round", "round": 4, "spans": [span("a4", "assistant", "Formatted it.")]}],
    # nothing asked: nothing answered, whatever the assistant says next
    [{"type": "round", "round": 2, "spans": [span("a2", "assistant", "No raise.")]}],
])
def test_no_reply_to_the_question_is_no_answer(tmp_path: Path,
                                               later: list[dict[str, Any]]) -> None:
    assert lost_row(write(tmp_path / "t.jsonl", *later))["answered_line"] is None


def test_the_text_report_points_at_the_answer(tmp_path: Path) -> None:
    # an agent product's log: tests/test_asked_again_line.py
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3, "spans": [span("a3", "assistant", "No.")]})
    text = CliRunner().invoke(app, ["audit", path, "--all"], env={"COLUMNS": "200"}).stdout
    assert ("<- asked again at round 2 (line 4), answered at line 5 without reading it again"
            in text), text


def test_the_text_report_of_a_native_log_says_where_a_fact_was_read_again(
        tmp_path: Path) -> None:
    # usertest77 F5: only a product log's compaction list said "read again at line N"
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    path = write(tmp_path / "t.jsonl", {"type": "round", "round": 2, "spans": [span(
        "r2", "tool_result:Bash", "read_timeout_ms = 45000 on staging")]})
    text = CliRunner().invoke(app, ["audit", path, "--all"], env={"COLUMNS": "200"}).stdout
    entry = next(ln for ln in text.splitlines() if ln.lstrip().startswith(
        "quantity    read_timeout_ms to 45000"))
    assert entry.endswith("lost to fold m1 at round 1)  (read again at line 4)"), entry


def test_in_a_cline_task_the_answer_is_the_reply_after_the_question_in_its_own_file(
        tmp_path: Path) -> None:
    # the fact and many replies are in the messages file, the question and its answer
    # only in the compaction file: lines of two files are no order, the rounds are
    def message(i: int, role: str, text: str) -> dict[str, Any]:
        return {"id": f"m{i}", "role": role, "ts": 1_700_000_000_000 + i,
                "content": [{"type": "text", "text": text}]}

    chat = [message(0, "user", SET), message(1, "assistant", "Will do.")]
    for k in range(5):
        chat += [message(2 + 2 * k, "user", f"Please tidy module {k}."),
                 message(3 + 2 * k, "assistant", f"Tidied module {k}.")]
    task = {"version": 1, "sessionId": "T1", "messages": chat}
    (tmp_path / "t.messages.json").write_text(json.dumps(task, indent="\t"))
    summary = {"id": "sum", "role": "user",
               "content": [{"type": "text", "text": "Context summary:\n\nTidied modules."}],
               "metadata": {"kind": "compaction_summary", "summary": "Tidied modules."}}
    after = [message(900, "user", ASK), message(901, "assistant", "No, it stayed at 30000.")]
    compaction = {"version": 1, "sessionId": "T1", "messages": [summary, chat[-1], *after]}
    (tmp_path / "t.compaction.json").write_text(json.dumps(compaction, indent="\t"))
    doc = orjson.loads(render_json(Report([api.audit(str(tmp_path / "t.messages.json"))], []),
                                   single=True))
    ask_line = next(n for n, text in enumerate(
        (tmp_path / "t.compaction.json").read_text().splitlines(), 1) if "ever raised" in text)
    answer_line = next(n for n, text in enumerate(
        (tmp_path / "t.compaction.json").read_text().splitlines(), 1) if "stayed at" in text)
    assert ask_line < answer_line
    rows = [d for d in doc["lost_discriminators"] if d["text"] == "read_timeout_ms"]
    listed = [d for c in doc["compactions"] for d in c["lost"] if d["text"] == "read_timeout_ms"]
    for row in (rows[0], listed[0]):  # the JSON's two lists, each with the file
        assert (row["answered_line"], row["answered_file"]) == (
            answer_line, "t.compaction.json"), row
    # the auditor's own entries are whole: the cap on a log's objects does not cut them
    assert "_truncated" not in listed[0] and "reused_destructive" in listed[0]


def test_an_answer_that_names_the_fact_is_no_re_read(tmp_path: Path) -> None:
    # the assistant's own prose brings nothing back: naming the identifier with the
    # wrong value is the failure, not a recovery (a CI engineer's test)
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3, "spans": [span(
                     "a3", "assistant", "No: read_timeout_ms stayed at 30000.")]})
    row = lost_row(path)
    assert (row["reread_line"], row["answered_line"], row["answered_span"]) == (None, 5, "a3")


def test_a_person_who_restates_the_fact_asked_nothing_to_answer(tmp_path: Path) -> None:
    # "asked again" (the person had to say it again) but no question: no answer
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span(
                     "u2", "user", "Set read_timeout_ms on staging to 45000 again, please.")]},
                 {"type": "round", "round": 3,
                  "spans": [span("a3", "assistant", "Updated the staging config.")]})
    row = lost_row(path)
    assert (row["asked_again_span"], row["answered_line"]) == ("u2", None)


@pytest.mark.parametrize(("said", "answered"), [
    # usertest77 F1: an imperative that opens with "Do NOT" asked nothing
    ("Do NOT set read_timeout_ms on staging to 45000 again.", None),
    ("Did not set read_timeout_ms on staging to 45000 again", None),
    ("Did we set read_timeout_ms on staging to 45000 again?", 5),  # a question
    ("Do not tell me read_timeout_ms on staging is still 45000?", 5),  # its mark
])
def test_a_first_word_of_questions_before_not_asks_nothing(
        tmp_path: Path, said: str, answered: int | None) -> None:
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", said)]},
                 {"type": "round", "round": 3,
                  "spans": [span("a3", "assistant", "Updated the staging config.")]})
    row = lost_row(path)
    assert (row["asked_again_span"], row["answered_line"]) == ("u2", answered)


def test_a_tool_call_names_what_it_looks_for_its_result_is_the_re_read(
        tmp_path: Path) -> None:
    # the call (line 4) names read_timeout_ms; its result (line 5) shows the identifier
    # again but not the lost 45000 (a CI engineer's test: "read again" at the call)
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span(
                     "c2", "tool_call:Bash", "grep -n read_timeout_ms config/staging.toml")]},
                 {"type": "round", "round": 3, "spans": [span(
                     "r3", "tool_result:Bash", "3: read_timeout_ms = 30000")]})
    assert lost_row(path)["reread_line"] == 5
    assert lost_row(path, "read_timeout_ms to 45000")["reread_line"] is None


def test_a_reply_that_opens_with_a_word_of_assent_answers(tmp_path: Path) -> None:
    # only narration that announces a step is skipped (adv37)
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("u2", "user", ASK)]},
                 {"type": "round", "round": 3,
                  "spans": [span("a3", "assistant", "Sure: it stayed at 30000, never raised."),
                            span("a4", "assistant", "Anything else?")]})
    assert lost_row(path)["answered_span"] == "a3"


@pytest.mark.parametrize(("source", "reread"), [
    ("user:alice", None),  # a person's words (queued, named): asked, not read again
    ("Assistant", None), ("assistant:thinking", None),  # the assistant's own words
    ("tool_use:Bash", None), ("function_call", None),  # a call says what it looks for
    ("tool_result:Read", 4), ("deploy-log", 4),  # a result, a log: they bring it back
])
def test_what_reads_a_fact_again(tmp_path: Path, source: str, reread: int | None) -> None:
    text = "read_timeout_ms on staging: is it 45000?" if source == "user:alice" else \
        "config/staging.toml: read_timeout_ms = 45000"
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [span("x2", source, text)]})
    row = lost_row(path)
    assert row["reread_line"] == reread
    if source == "user:alice":
        assert row["asked_again_span"] == "x2"


@pytest.mark.parametrize(("reply", "answered"), [
    ({"role": "assistant", "source": "msg-3"}, 4),  # read as assistant:msg-3
    ({"source": "assistant:msg-3"}, 4),
    ({"source": "assistant:thinking"}, None),  # not its visible text
    ({"role": "tool", "source": "msg-3"}, None),
])
def test_a_native_logs_own_assistant_source_answers(tmp_path: Path, reply: dict[str, Any],
                                                    answered: int | None) -> None:
    """usertest56 #5: role "assistant" with a source of the logger's own ("msg-12",
    read as "assistant:msg-12") never answered: only the source "assistant" did."""
    path = write(tmp_path / "t.jsonl",
                 {"type": "round", "round": 2, "spans": [
                     span("u2", "user", ASK),
                     {"id": "a2", "tokens": 20, "text": "It stayed at 30000.", **reply}]})
    assert lost_row(path)["answered_line"] == answered


def test_a_question_without_the_rule_s_negation_is_answered_from_the_summary(
        tmp_path: Path) -> None:
    # usertest75 #5: the person forgot the rule and asks without its "not"
    rule = "Do not run the billing backfill on weekends."
    records = [SESSION,
               {"type": "round", "round": 0,
                "spans": [span("u1", "user", rule), span("a1", "assistant", "Noted.")]},
               {"type": "round", "round": 1,
                "summaries": [{"id": "m1", "tokens": 5, "children": ["u1", "a1"],
                               "text": "Discussed the billing jobs."}],
                "evicted": ["u1", "a1"]},
               {"type": "round", "round": 2,
                "spans": [span("u2", "user", "Can we run the billing backfill this weekend?"),
                          span("a2", "assistant", "Yes, go ahead.")]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    row = lost_row(str(path), rule.rstrip("."))
    assert (row["asked_again_span"], row["answered_line"], row["answered_span"]) == (
        "u2", 4, "a2")
