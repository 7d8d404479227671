"""The Claude Code adapter: mapping, real-world quirks, corpus files."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.io import claude_code
from compaction_audit.io.native import read_records
from tests.logs import assert_log_error

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "claude-code"

Records = list[tuple[int, dict[str, Any]]]


def convert(name: str) -> Records:
    """Convert a fixture and check the result with the native reader."""
    path = str(FIXTURES / name)
    out = list(claude_code.records(path))
    read_records(out, path)
    return out


def spans(out: Records) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for _, r in out[1:] for s in r["spans"]}


def compactions(out: Records) -> list[tuple[int, dict[str, Any]]]:
    return [(line, r) for line, r in out[1:] if "compaction" in r]


def corpus_file(name: str) -> str:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"corpus file {name} not available")
    return str(path)


def test_session_record_comes_first() -> None:
    out = convert("claude-session.jsonl")
    line, session = out[0]
    assert line == 1
    assert session == {"type": "session", "schema": "compaction-audit/1",
                       "session_id": "5e55a0de-0000-4000-8000-000000000001",
                       "eviction": "on-overflow", "source_format": "claude-code"}
    assert [r["round"] for _, r in out[1:]] == [0, 1, 2, 3, 4, 5]


def test_rounds_open_at_real_user_turns_and_compactions() -> None:
    out = convert("claude-session.jsonl")
    # line 14 is a message queued while the agent worked: a turn of its own
    assert [line for line, _ in out[1:]] == [5, 14, 16, 18, 23, 26]
    first = out[1][1]
    # the caveat and /clear wrapper lines before the first turn join round 0
    assert [s["id"] for s in first["spans"]][:4] == ["c-meta1", "c-clear", "c-clear-out", "c-u1"]


def test_command_wrappers_are_spans_but_not_turns() -> None:
    out = convert("claude-session.jsonl")
    compaction_round = out[4][1]
    ids = [s["id"] for s in compaction_round["spans"]]
    assert ids == ["c-meta2", "c-compact", "c-compact-out"]
    # the isMeta local-command caveat, the wrapper and its output are command harness
    assert all(s["source"] == "harness:command" for s in compaction_round["spans"])


def test_ansi_escape_bytes_are_kept_literally() -> None:
    by_id = spans(convert("claude-session.jsonl"))
    assert "\x1b[2mCompacted" in by_id["c-compact-out"]["text"]
    assert by_id["toolu_bash1:result"]["text"].startswith("\x1b[32m12 passed")


def test_usage_repeated_over_lines_of_one_call_is_counted_once() -> None:
    by_id = spans(convert("claude-session.jsonl"))
    # msg_A: thinking, text and tool_use over three lines; output_tokens 4, 4, 60
    call = [by_id["c-a2"]["tokens"], by_id["toolu_read1"]["tokens"]]
    assert all(t > 0 for t in call)
    assert sum(call) < 60  # the thinking block's share is not a span
    assert by_id["toolu_read1"]["source"] == "tool_call:Read"
    assert by_id["toolu_read1:result"]["source"] == "tool_result:Read"
    # a call on one line gets its whole output_tokens
    assert by_id["c-a5"]["tokens"] == 12


def test_summary_line_after_the_boundary_gives_the_summary() -> None:
    out = convert("claude-session.jsonl")
    line, rnd = compactions(out)[0]
    assert line == 18
    (summary,) = rnd["summaries"]
    assert summary["id"] == "c-s1"
    assert summary["text"].endswith("changelog updated.")
    assert rnd["compaction"] == {
        "trigger": "manual", "tokens_before": 21000, "tokens_after": 4006,
        "opaque": False, "kind": "compact", "summary_id": "c-s1",
        "summary_tokens": summary["tokens"], "sizes": "estimated"}
    assert set(rnd["evicted"]) == set(summary["children"])
    assert "c-s1" not in spans(out)  # the summary line is not also a user span


def test_each_compaction_folds_the_previous_summary() -> None:
    out = convert("claude-session.jsonl")
    session = read_records(out, "claude-session.jsonl")
    (_, first), (_, second) = compactions(out)
    assert len(first["summaries"][0]["children"]) == 13
    assert "c-s1" in second["summaries"][0]["children"]
    assert second["compaction"]["trigger"] == "auto"
    depth = dict(zip(session.items["id"], session.items["depth"], strict=True))
    assert depth["c-s1"] == 1
    assert depth["c-s2"] == 2


def test_bookkeeping_lines_are_ignored(tmp_path: Path) -> None:
    source = (FIXTURES / "claude-session.jsonl").read_bytes().splitlines(keepends=True)
    kept = [raw for raw in source if orjson.loads(raw)["type"] in (
        "user", "assistant", "system", "queue-operation")]
    assert len(kept) < len(source)
    path = tmp_path / "plain.jsonl"
    path.write_bytes(b"".join(kept))

    def shape(out: Records) -> list[Any]:
        # a span without a uuid is named after its line, which moves with the lines dropped
        return [(r.get("round"), [re.sub(r"^line-\d+", "line-N", s["id"])
                                  for s in r.get("spans", [])]) for _, r in out]

    assert shape(list(claude_code.records(str(path)))) == shape(convert("claude-session.jsonl"))


def test_logical_parent_missing_from_the_file_falls_back_to_file_order() -> None:
    out = convert("claude-missing-parent.jsonl")
    line, rnd = compactions(out)[0]
    assert line == 5
    assert rnd["summaries"][0]["children"] == ["m-u1", "m-a1", "m-u2", "m-a2"]
    assert out[-1][0] == 7  # the next user turn opens a round after the compaction


def test_sidechain_lines_are_skipped_unless_the_whole_file_is_a_subagent(
        tmp_path: Path) -> None:
    source = (FIXTURES / "claude-missing-parent.jsonl").read_bytes().splitlines(keepends=True)
    stray = (b'{"type":"user","isSidechain":true,"uuid":"side-1","sessionId":"s",'
             b'"message":{"role":"user","content":"subagent prompt"}}\n')
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"".join([*source[:2], stray, *source[2:]]))
    ids = list(spans(list(claude_code.records(str(mixed)))))
    assert "side-1" not in ids and len(ids) == 5
    agent = tmp_path / "agent.jsonl"
    agent.write_bytes(b"".join(raw.replace(b'"isSidechain":false', b'"isSidechain":true')
                               for raw in source))
    assert len(spans(list(claude_code.records(str(agent))))) == 5


def test_microcompact_evicts_the_cleared_tool_results() -> None:
    out = convert("claude-microcompact.jsonl")
    line, rnd = compactions(out)[0]
    assert line == 8
    assert "summaries" not in rnd
    assert rnd["evicted"] == ["toolu_k1:result", "toolu_k2:result"]
    assert rnd["compaction"] == {
        "trigger": "auto", "tokens_before": 90000, "tokens_after": 60000, "opaque": False,
        "kind": "microcompact", "summary_id": None, "summary_tokens": 0}


def test_sdk_snake_case_metadata_and_preserved_segment() -> None:
    out = convert("claude-sdk-snake.jsonl")
    assert out[0][1]["session_id"] == "sdk-7"
    _, rnd = compactions(out)[0]
    info = rnd["compaction"]
    assert (info["trigger"], info["tokens_before"], info["tokens_after"]) == ("manual", 99000, 4100)
    (summary,) = rnd["summaries"]
    assert "text" not in summary and info["opaque"] is True
    assert summary["tokens"] == 4100  # no summary text: postTokens stands for its size
    # the preserved segment (s-u2 .. s-a2) stays in the working set, the rest is folded
    assert summary["children"] == ["s-u1", "s-a1"]


@pytest.mark.parametrize(("text", "message"), [
    (b'{"type":"user","uuid":"x","message":{"role":"user","content":"hi"}\n', "bad JSON"),
    (b'{"type":"user","uuid":"x","message":"hi"}\n', "expected an object (message)"),
    (b'{"type":"user","uuid":"x","message":{"content":7}}\n', "(message.content)"),
    # adv45: a message without content was read as empty, its facts out of the audit
    (b'{"type":"user","uuid":"x","message":{"role":"user","content":null}}\n',
     "expected a string or a list (message.content)"),
    (b'{"type":"assistant","uuid":"x","message":{"role":"assistant"}}\n',
     "missing field (message.content)"),
    (b'{"type":"assistant","uuid":"x","message":{}}\n', "missing field (message.content)"),
    # adv46: an empty uuid was reported at another line, as spans[N].id
    (b'{"type":"user","uuid":"","message":{"role":"user","content":"hi"}}\n',
     "expected a non-empty string (uuid)"),
    # adv46: each of these moved a number with exit 0
    (b'{"type":"system","uuid":"x","subtype":1,"compactMetadata":{"preTokens":5}}\n',
     "expected a string (subtype)"),
    (b'{"type":"user","uuid":"x","message":{"role":"user","content":[{"type":"tool_result",'
     b'"tool_use_id":"t","content":7}]}}\n', "expected a string or a list "
     "(message.content[0].content)"),
    (b'{"type":"system","uuid":"x","subtype":"microcompact_boundary",'
     b'"microcompactMetadata":{"compactedToolIds":"t"}}\n',
     "expected a list of strings (microcompactMetadata.compactedToolIds)"),
    # adv64 #5: ids that are no strings cleared nothing, and a PASS said so
    (b'{"type":"system","uuid":"x","subtype":"microcompact_boundary",'
     b'"microcompactMetadata":{"compactedToolIds":["t",-1]}}\n',
     "expected a list of strings (microcompactMetadata.compactedToolIds)"),
    # adv64 #5: an isMeta "true" was read as false (the line then a person's)
    (b'{"type":"user","uuid":"x","isMeta":"true","message":{"role":"user",'
     b'"content":"hi"}}\n', "expected true or false (isMeta)"),
    # adv48: a list uuid was "unhashable" at another line; the others kept nothing
    (b'{"type":"system","uuid":"x","subtype":"compact_boundary","compactMetadata":'
     b'{"preservedMessages":{"uuids":["a",["b"]]}}}\n',
     "expected a string (compactMetadata.preservedMessages.uuids[1])"),
    (b'{"type":"system","uuid":"x","subtype":"compact_boundary","compactMetadata":'
     b'{"preservedSegment":["a","b"]}}\n',
     "expected an object (compactMetadata.preservedSegment)"),
    (b'{"type":"system","uuid":"x","subtype":"compact_boundary","compactMetadata":'
     b'{"preservedSegment":{"headUuid":7,"tailUuid":"b"}}}\n',
     "expected a string (compactMetadata.preservedSegment.headUuid)"),
    # adv48: an empty tool_use id was reported at another line; an origin kind 7 made
    # a person's line generated
    (b'{"type":"assistant","uuid":"x","message":{"role":"assistant","content":[{"type":'
     b'"tool_use","id":"","name":"Bash","input":{}}]}}\n',
     "expected a non-empty string (message.content[0].id)"),
    (b'{"type":"user","uuid":"x","origin":{"kind":7},"message":{"role":"user",'
     b'"content":"hi"}}\n', "expected a string (origin.kind)"),
    # adv48: a queued person's turn of a wrong type was dropped with no word
    (b'{"type":"queue-operation","operation":7,"content":"x"}\n',
     "expected a string (operation)"),
    (b'{"type":"queue-operation","operation":"enqueue","content":{"text":"x"}}\n',
     "expected a string or a list (content)"),
    (b'{"type":"queue-operation","operation":"enqueue","content":[{"type":"text",'
     b'"text":7}]}\n', "expected a string (content[0].text)"),
    # adv48: the context after was -910,000 tokens
    (b'{"type":"system","uuid":"x","subtype":"microcompact_boundary","microcompactMetadata":'
     b'{"preTokens":90000,"tokensSaved":1000000}}\n',
     "tokensSaved 1000000 exceeds preTokens 90000 (microcompactMetadata.tokensSaved)"),
    (b'[1, 2]\n', "expected a JSON object"),
    # adv42: identity fields and flags of a wrong type were read as absent, with no word
    (b'{"type":"user","uuid":12,"message":{"role":"user","content":"hi"}}\n',
     "expected a string (uuid)"),
    (b'{"type":"user","uuid":"x","parentUuid":7,"message":{"role":"user","content":"hi"}}\n',
     "expected a string (parentUuid)"),
    (b'{"type":"user","uuid":"x","logicalParentUuid":[],"message":{"content":"hi"}}\n',
     "expected a string (logicalParentUuid)"),
    (b'{"type":"user","uuid":"x","sessionId":[1],"message":{"content":"hi"}}\n',
     "expected a string (sessionId)"),
    (b'{"type":"user","uuid":"x","session_id":5,"message":{"content":"hi"}}\n',
     "expected a string (session_id)"),  # as the log spells it (adv48)
    (b'{"type":"system","uuid":"x","subtype":"compact_boundary","compact_metadata":'
     b'{"pre_tokens":"99000"}}\n', "expected an integer >= 0 (pre_tokens)"),
    (b'{"type":"user","uuid":"x","isSidechain":"false","message":{"content":"hi"}}\n',
     "expected true or false (isSidechain)"),
    (b'{"type":"user","uuid":"x","isCompactSummary":1,"message":{"content":"hi"}}\n',
     "expected true or false (isCompactSummary)"),
    (b'{"type":"assistant","uuid":"x","message":{"id":5,"role":"assistant","content":[]}}\n',
     "expected a string (message.id)"),
    (b'{"type":"user","uuid":"x","message":{"role":5,"content":"hi"}}\n',
     "expected a string (message.role)"),
    (b'{"type":"system","subtype":"compact_boundary","uuid":"b",'
     b'"compactMetadata":{"trigger":3,"preTokens":9}}\n'
     b'{"type":"user","uuid":"s","isCompactSummary":true,"message":{"content":"S"}}\n',
     "expected a string (compactMetadata.trigger)"),
])
def test_malformed_lines_raise_a_log_error_naming_the_line(
        tmp_path: Path, text: bytes, message: str) -> None:
    assert_log_error(claude_code.records, tmp_path / "bad.jsonl",
                     b'{"type":"user","uuid":"a","message":{"content":"ok"}}\n\n' + text,
                     3, message)


def test_sniff() -> None:
    assert claude_code.sniff([{"type": "file-history-snapshot", "messageId": "m"}])
    assert claude_code.sniff([{"type": "user", "uuid": "u", "message": {}}])
    assert not claude_code.sniff([{"type": "round", "round": 0}])
    assert not claude_code.sniff([{"type": "response_item", "payload": {}}])


def test_corpus_manual_compact() -> None:
    path = corpus_file("agentlogs-manual-compact.jsonl")
    out = list(claude_code.records(path))
    read_records(out, path)
    ((line, rnd),) = compactions(out)
    assert line == 11
    assert rnd["compaction"]["trigger"] == "manual"
    assert rnd["compaction"]["tokens_before"] == 15808
    assert rnd["summaries"][0]["text"].startswith("This session is being continued")
    texts = [s.get("text", "") for s in rnd["spans"]]
    assert any("\x1b[2m" in t for t in texts)
    # the caveats and the /clear and /compact wrappers are the product's, not the user's
    assert Counter(s["source"] for _, r in out[1:] for s in r["spans"]) == {
        "harness:command": 6, "user": 1, "assistant": 1}
    assert [s["text"] for _, r in out[1:] for s in r["spans"]
            if s["source"] == "user"] == ["how are you doing"]


def test_corpus_auto_compact() -> None:
    path = corpus_file("spotter-auto-compact.jsonl")
    out = list(claude_code.records(path))
    read_records(out, path)
    ((line, rnd),) = compactions(out)
    assert line == 1256
    assert rnd["compaction"]["trigger"] == "auto"
    assert rnd["compaction"]["tokens_before"] == 167094
    assert len(rnd["summaries"][0]["text"]) > 14000
    # the two messages typed while the agent worked (lines 497 and 603) are turns;
    # the two queued task notices are not (they arrive later as lines of their own)
    assert [at for at, r in out[1:] if "compaction" not in r] == [5, 497, 603, 1858]
    typed = [(s["id"], s["text"]) for _, r in out[1:] for s in r["spans"]
             if s["source"] == "user"]
    assert typed[1:3] == [("line-497", "check again"),
                          ("line-603", "new beads for the epic were added. tackle them")]
    assert len(typed) == 4


# -- harness text, queued messages, re-appended history (issue 10, point 7) -------------
def user_line(uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "sessionId": "s-h",
            "message": {"role": "user", "content": content}, **extra}


def reply(uuid: str, text: str) -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "sessionId": "s-h",
            "message": {"id": f"msg-{uuid}", "role": "assistant",
                        "content": [{"type": "text", "text": text}]}}


def queue(operation: str, content: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "queue-operation", "operation": operation,
                            "sessionId": "s-h"}
    if content is not None:
        line["content"] = content
    return line


def boundary(uuid: str, parent: str) -> dict[str, Any]:
    return {"type": "system", "subtype": "compact_boundary", "uuid": uuid,
            "logicalParentUuid": parent, "sessionId": "s-h",
            "compactMetadata": {"trigger": "manual", "preTokens": 5000}}


def summary_line(uuid: str, text: str) -> dict[str, Any]:
    return user_line(uuid, text, isCompactSummary=True)


def run(tmp_path: Path, lines: list[dict[str, Any]]) -> Records:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(obj) + b"\n" for obj in lines))
    out = list(claude_code.records(str(path)))
    read_records(out, str(path))
    return out


def sources(out: Records) -> dict[str, str]:
    return {s["id"]: s["source"] for _, r in out[1:] for s in r["spans"]}


def test_harness_text_gets_its_own_source_and_opens_no_round(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("h1", "Port the cache layer to Redis; keep the TTL at 300 s."),
        reply("a1", "Loading the migration skill."),
        user_line("h2", [{"type": "text", "text": "Base directory for this skill: /s/mig\n"
                          "# Migrations\nAlways write a down step."}], isMeta=True),
        user_line("h3", [{"type": "text", "text": "Run the steps in order."}],
                  isMeta=True, sourceToolUseID="toolu_skill"),
        user_line("h4", "The user switched the model to a faster one.", isMeta=True),
        user_line("h5", "<command-name>/model</command-name>\n<command-args></command-args>"),
        user_line("h6", "<local-command-stdout>Set model</local-command-stdout>"),
        user_line("h7", [{"type": "text", "text": "<system-reminder>Todo list empty"
                          "</system-reminder>"}]),
        user_line("h8", [{"type": "text", "text": "<system-reminder>Plan mode is off"
                          "</system-reminder>"},
                         {"type": "text", "text": "Now drop the old memcached client."}]),
    ])
    assert [line for line, _ in out[1:]] == [1, 9]  # the person's two messages only
    assert sources(out) == {
        "h1": "user", "a1": "assistant", "h2": "harness:skill", "h3": "harness:skill",
        "h4": "harness:meta", "h5": "harness:command", "h6": "harness:command",
        "h7": "harness:meta",
        # a line mixing a reminder with the person's words: the words keep the uuid
        "h8": "user", "h8#2": "harness:meta"}
    assert spans(out)["h8"]["text"] == "Now drop the old memcached client."


def test_queued_message_is_a_user_turn_and_a_queued_notice_is_not(
        tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("q1", "Bump the image tag to 2.3."),
        reply("a1", "Working on it."),
        queue("enqueue", "<task-notification>build 7 done</task-notification>"),
        queue("enqueue", "and tag it as stable too"),
        reply("a2", "Tagged 2.3 as stable."),
        queue("remove"),
    ])
    assert [line for line, _ in out[1:]] == [1, 4]
    # each span keeps the line that stated it: the queued message 4, the reply 5
    assert out[2][1]["spans"] == [{"id": "line-4", "tokens": 6, "source": "user",
                                   "source_line": 4, "text": "and tag it as stable too"},
                                  {"id": "a2", "tokens": 6, "source": "assistant",
                                   "source_line": 5, "text": "Tagged 2.3 as stable."}]


def test_queued_message_delivered_as_a_line_is_read_once(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("q1", "List the failing jobs."),
        reply("a1", "Three jobs fail."),
        queue("enqueue", "only the nightly ones"),
        queue("dequeue"),
        user_line("q2", "only the nightly ones"),
        reply("a2", "One nightly job fails."),
        # delivered inside the turn (remove): the same words typed later are new
        queue("enqueue", "retry it"),
        queue("remove"),
        reply("a3", "Retried."),
        user_line("q3", "retry it"),
    ])
    assert [line for line, _ in out[1:]] == [1, 3, 7, 10]
    assert [s["id"] for s in out[2][1]["spans"]] == ["line-3", "a2"]
    assert [s["id"] for _, r in out[1:] for s in r["spans"]
            if s["source"] == "user"] == ["q1", "line-3", "line-7", "q3"]


def test_history_re_appended_by_a_second_compact_is_read_once(tmp_path: Path) -> None:
    first = [user_line("r1", "Rename the orders table to purchases."),
             reply("r2", "Renamed; migration 0031 added.")]
    out = run(tmp_path, [
        *first,
        boundary("b1", "r2"), summary_line("s1", "Summary: orders renamed to purchases."),
        user_line("r3", "Also rename its index."), reply("r4", "Index renamed."),
        boundary("b2", "r4"), summary_line("s2", "Summary: table and index renamed."),
        # the second /compact writes the earlier history again, summary row included
        *first, summary_line("s1", "Summary: orders renamed to purchases."),
        user_line("r3", "Also rename its index."),
        user_line("r5", "Ship it."),
    ])
    assert [line for line, _ in out[1:]] == [1, 3, 5, 7, 13]
    assert [r["compaction"]["summary_id"] for _, r in compactions(out)] == ["s1", "s2"]
    ids = [s["id"] for _, r in out[1:] for s in r["spans"]]
    assert ids == ["r1", "r2", "r3", "r4", "r5"]  # no r1#2, no second s1
    assert compactions(out)[1][1]["summaries"][0]["children"] == ["s1", "r3", "r4"]


def test_compact_summary_row_is_never_a_user_turn(tmp_path: Path) -> None:
    # a summary row with nothing to fold stays a harness span, and opens no turn
    out = run(tmp_path, [summary_line("s0", "Summary: nothing happened yet."),
                         user_line("u1", "Start the deploy.")])
    assert sources(out) == {"s0": "harness:summary", "u1": "user"}
    assert [line for line, r in out[1:] if "compaction" not in r] == [2]


def test_remove_takes_the_oldest_queued_message_still_waiting(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("w1", "Deploy the API."),
        queue("enqueue", "then the worker"),
        queue("enqueue", "then the cron jobs"),
        user_line("w2", "then the worker"),  # the first queued message, as a line
        queue("remove"),  # delivers "then the cron jobs" inside the turn
        reply("a1", "Deployed all three."),
        user_line("w3", "then the cron jobs"),  # typed again later: a new turn
        user_line("w4", "then the worker"),  # likewise
    ])
    assert [s["id"] for _, r in out[1:] for s in r["spans"] if s["source"] == "user"] == [
        "w1", "line-2", "line-3", "w3", "w4"]


def test_message_queued_during_a_compaction_follows_it(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("c1", "Rotate the staging keys."),
        reply("c2", "Rotated."),
        boundary("cb", "c2"),
        queue("enqueue", "and the prod ones"),  # typed while /compact ran
        summary_line("cs", "Summary: staging keys rotated."),
        reply("c3", "Rotating prod keys."),
    ])
    assert [line for line, _ in out[1:]] == [1, 3, 4]
    ((_, rnd),) = compactions(out)
    assert rnd["summaries"][0]["text"] == "Summary: staging keys rotated."
    assert [s["id"] for s in out[3][1]["spans"]] == ["line-4", "c3"]


def test_a_message_id_met_again_after_a_compaction_is_another_response(
        tmp_path: Path) -> None:
    """adv64 #2: an assistant line after a compaction that reused an earlier line's
    ``message.id`` (with 50,000 output tokens) was grouped with that earlier response,
    whose span the compaction had folded: its tokens were split back onto it and the
    compaction "folded" 40,892 tokens of a 5,000-token context."""
    def said(uuid: str, text: str, output: int) -> dict[str, Any]:
        line = reply(uuid, text)
        line["message"].update(id="m1", usage={"output_tokens": output})
        return line

    out = run(tmp_path, [user_line("u1", "Set the timeout to 45000."),
                         said("a1", "Done: the timeout is 45000 now.", 40),
                         boundary("b1", "a1"), summary_line("s1", "Summary: timeout work."),
                         user_line("u2", "What was the timeout?"),
                         said("a2", "It was 30000.", 50_000)])
    tokens = {s["id"]: s["tokens"] for _, r in out[1:] for s in r["spans"]}
    assert (tokens["a1"], tokens["a2"]) == (40, 50_000)
    assert out[0][1]["reader_notes"] == [
        "1 line repeating an earlier response's message id after a person's turn or a "
        "compaction: read as another response"]


UNKNOWN_KEPT = ("1 line of a partial compaction whose {} {}: what it kept is not known, "
                "and everything before it is read as folded")


@pytest.mark.parametrize(("meta", "note"), [
    ({"preserved_segment": {"head_uuid": "s-u2", "tail_uuid": "s-a2"}}, None),
    ({"preserved_segment": {"head_uuid": "dead", "tail_uuid": "beef"}},
     UNKNOWN_KEPT.format("preservedSegment", "names a message not in the file before it, "
                         "or ends before it starts")),
    ({"preserved_segment": {"head_uuid": "s-a2", "tail_uuid": "s-u2"}},  # reversed
     UNKNOWN_KEPT.format("preservedSegment", "names a message not in the file before it, "
                         "or ends before it starts")),
    ({"preserved_messages": {"uuids": ["nope-1", "nope-2"]}},
     UNKNOWN_KEPT.format("preservedMessages", "names no message in the file before it")),
    ({"preserved_messages": {"uuids": ["nope-1", "s-u2", "s-a2"]}}, None),
])
def test_a_kept_range_that_names_nothing_is_said(tmp_path: Path, meta: dict[str, Any],
                                                 note: str | None) -> None:
    """adv68 #2: a partial compaction whose kept segment or messages named uuids not in
    the file (or a reversed segment) was read as keeping nothing, with no word: every
    message before it counted as folded, and its facts as lost."""
    objs = [orjson.loads(raw) for raw in (FIXTURES / "claude-sdk-snake.jsonl").read_bytes()
            .splitlines()]
    (at,) = [i for i, o in enumerate(objs) if o.get("subtype") == "compact_boundary"]
    kept = {k: v for k, v in objs[at]["compact_metadata"].items()
            if k != "preserved_segment"}
    objs[at] = {**objs[at], "compact_metadata": {**kept, **meta}}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    out = list(claude_code.records(str(path)))
    assert out[0][1].get("reader_notes", []) == ([note] if note else [])
    (summary,) = compactions(out)[0][1]["summaries"]
    assert summary["children"] == (["s-u1", "s-a1"] if note is None
                                   else ["s-u1", "s-a1", "s-u2", "s-a2"])


def test_a_compaction_of_zero_tokens_is_of_an_unknown_context(tmp_path: Path) -> None:
    """adv128 #3: ``preTokens: 0`` was the context's size ("context 0 -> N tokens", as
    if it grew); it is unknown, as a null is: the context counted before it stands."""
    objs = [orjson.loads(raw) for raw in (FIXTURES / "claude-session.jsonl").read_bytes()
            .splitlines()]
    first = next(o for o in objs if o.get("subtype") == "compact_boundary")
    assert first["compactMetadata"]["preTokens"] == 21000

    def before(pre: int | None) -> int:
        first["compactMetadata"]["preTokens"] = pre
        path = tmp_path / f"pre-{pre}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
        info = compactions(list(claude_code.records(str(path))))[0][1]["compaction"]
        return int(info["tokens_before"])

    assert before(21000) == 21000
    unknown = before(None)
    assert unknown > 0 and before(0) == unknown


def test_a_context_size_not_from_pretokens_says_it_is_the_last_call(tmp_path: Path) -> None:
    """usertest68 #6: without ``preTokens`` the context before the compaction is the
    last model call's input, and the report said so for Cline only."""
    from tests.gate_app import run

    objs = [orjson.loads(raw) for raw in (FIXTURES / "claude-session.jsonl").read_bytes()
            .splitlines()]
    first = next(o for o in objs if o.get("subtype") == "compact_boundary")

    def info(pre: int | None) -> tuple[dict[str, Any], str]:
        first["compactMetadata"]["preTokens"] = pre
        path = tmp_path / f"pre-{pre}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
        out = compactions(list(claude_code.records(str(path))))[0][1]["compaction"]
        return out, run("audit", str(path)).stdout

    counted, text = info(21000)
    assert "tokens_before_from" not in counted and "(the last call's input)" not in text
    for pre in (None, 0):
        last, text = info(pre)
        assert last["tokens_before_from"] == "last call"
        assert f"context {last['tokens_before']:,} (the last call's input) -> " in text
