"""A span's ``role`` (spec, log-format: who wrote it; ``source`` decides only when
``role`` is absent): adv49 found the reader ignored it, so a person's span with
``role: "user"`` and a message id as its source was no person's, and harness text
with ``source: "user"`` was typed by a person, each with no word.  Small logs written
here; the sources and tiers below are worked out by hand from ``with_role``."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.io.native import read_native
from compaction_audit.io.records import with_role
from tests.logs import LogWriter, rnd

NEGATION = "Never deploy the billing service on a Friday."


@pytest.mark.parametrize(("source", "role", "read_as"), [
    ("msg-1", None, "msg-1"),  # no role: the source decides, as before
    ("user", None, "user"),
    ("msg-1", "user", "user:msg-1"),
    ("user", "user", "user"), ("user:typed", "user", "user:typed"),
    ("user:meta", "user", "user:user:meta"),  # the role wins over the legacy harness value
    ("user", "system", "harness:user"), (None, "system", "harness:system"),
    ("harness:skill", "system", "harness:skill"), ("harness", "system", "harness:harness"),
    ("msg-1", "tool", "tool:msg-1"), ("tool_result:Bash", "tool", "tool_result:Bash"),
    ("user:x", "assistant", "assistant:user:x"), (None, "assistant", "assistant"),
    # adv50: a call is the assistant's words (rules read its tool_call: source), and a
    # tool's output is never a call
    ("tool_call:Bash", "assistant", "tool_call:Bash"),
    ("function_call:shell", "assistant", "function_call:shell"),
    ("tool_call:Bash", "tool", "tool:tool_call:Bash"),
    ("", "user", "user"),
])
def test_the_role_decides_how_the_source_is_read(source: str | None, role: str | None,
                                                 read_as: str | None) -> None:
    assert with_role(source, role) == read_as


def _log(**span_fields: Any) -> list[dict[str, Any]]:
    return [rnd(0, spans=[{"id": "u", "tokens": 20, "text": NEGATION, **span_fields}]),
            rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"],
                               "text": "Deployment notes."}], evicted=["u"])]


def _tiers(write_log: LogWriter, **span_fields: Any) -> list[tuple[str, int]]:
    report = api.audit(str(write_log(_log(**span_fields))))
    return [(d["text"], d["tier"]) for d in report.extra["lost_discriminators"]]


def test_a_person_is_known_by_role_and_harness_text_is_never_lost(
        write_log: LogWriter) -> None:
    person = [("Never deploy the billing service on a Friday", 2)]
    # role "user" with a message id for a source: typed by a person (tier 2)
    assert _tiers(write_log, source="msg-1", role="user") == person
    assert _tiers(write_log, source="user") == person  # no role: the source decides
    # without the role a message id is prose: the negation is an assistant decision
    assert [t for _, t in _tiers(write_log, source="msg-1")] == [4]
    # role "system" (text the harness injected) is never a lost fact, whatever its source
    assert _tiers(write_log, source="user", role="system") == []
    items = read_native(str(write_log(_log(source="msg-1", role="user")))).items
    assert items.filter(items["id"] == "u")["source"].to_list() == ["user:msg-1"]


@pytest.mark.parametrize(("role", "said"), [("User", "'User'"), (7, "an integer"),
                                             ("", "''")])
def test_a_role_the_spec_does_not_name_is_an_error(write_log: LogWriter, role: Any,
                                                   said: str) -> None:
    path = write_log(_log(source="user", role=role))
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"compaction-audit: {path}:1: must be 'user', 'assistant', 'tool' or 'system', "
        f"got {said} (spans[0].role)\n")


def test_a_prompt_marked_by_role_is_part_of_the_task_query(write_log: LogWriter) -> None:
    """adv50: the rebuilt cosine's query took only spans of source "user": a person's
    prompt written with ``role: "user"`` and a message id left the log with no task
    query, and a second such prompt out of it, with no word."""
    from compaction_audit.cosine.query import task_query

    first = {"id": "p1", "tokens": 9, "text": "Fix the billing export.", "source": "user"}
    later = {"id": "p2", "tokens": 9, "text": "Also cap retries at 3.", "source": "msg-2",
             "role": "user"}
    query = task_query(read_native(str(write_log([rnd(0, spans=[first, later])]))))
    assert (query.origin, query.prompts, query.text) == (
        "prompts", 2, "Fix the billing export.\nAlso cap retries at 3.")
    alone = task_query(read_native(str(write_log([rnd(0, spans=[later])], "b.jsonl"))))
    assert (alone.origin, alone.prompts) == ("prompts", 1)
    # a harness message by role is no prompt
    harness = {**later, "role": "system"}
    assert task_query(read_native(str(write_log([rnd(0, spans=[harness])], "c.jsonl")))
                      ).origin == "none"


def test_a_decision_whose_source_names_no_author_is_not_called_the_assistant_s(
        write_log: LogWriter) -> None:
    # usertest24 #3: a native span of source "shell:s300" (read as prose) ranked as
    # "assistant decision, a decision in the assistant's prose"
    from compaction_audit import api

    text = "Do NOT run migration 0074 with --force on prod."
    records = [rnd(0, spans=[{"id": "a", "tokens": 20, "text": text, "source": "shell:s300"},
                             {"id": "b", "tokens": 20, "text": text.replace("0074", "0075"),
                              "role": "assistant"}]),
               rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a", "b"],
                                  "text": "Ran the migrations."}], evicted=["a", "b"])]
    lost = api.audit(str(write_log(records))).extra["lost_discriminators"]
    named = {(d["span"], d["tier"], d["tier_name"], d["tier_why"])
             for d in lost if d["kind"] == "negation"}
    assert named == {
        ("a", 4, "decision in prose", "a decision in prose whose source does not say who "
                                      "wrote it"),
        ("b", 4, "assistant decision", "a decision in the assistant's prose")}


@pytest.mark.parametrize(("role", "source", "call"), [
    ("assistant", "tool_call:Bash", True), (None, "tool_call:Bash", True),
    # usertest38 #2: role "tool" is a tool's output, whatever the source says; the docs
    # (log-format.md, "Tool calls and tool output") say so
    ("tool", "tool_call:Bash", False), ("tool", "tool:t8", False), (None, "tool:t8", False)])
def test_only_a_call_can_break_a_lost_rule(write_log: LogWriter, role: str | None,
                                           source: str, call: bool) -> None:
    push = {"id": "t8", "tokens": 9, "text": "git push --force origin main",
            "source": source, **({"role": role} if role else {})}
    records = [rnd(0, spans=[{"id": "u0", "tokens": 12, "role": "user",
                              "text": "Never use --force when pushing to main."}]),
               rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u0"],
                                  "text": "Pushing notes."}], evicted=["u0"]),
               rnd(2, spans=[push])]
    found = [f for f in api.audit(str(write_log(records))).findings if f.code == "CA307"]
    assert [(f.values["how"], f.values["object"], f.values["violated_span"])
            for f in found] == ([("command", "--force", "t8")] if call else [])
