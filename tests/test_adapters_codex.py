"""The Codex CLI adapter: mapping, real-world quirks, corpus files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import codex
from compaction_audit.io.native import read_records
from tests.logs import assert_log_error

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "codex"

Records = list[tuple[int, dict[str, Any]]]


def convert(path: str | Path) -> Records:
    """Convert a rollout and check the result with the native reader."""
    out = list(codex.records(str(path)))
    read_records(out, str(path))
    return out


def fixture(name: str) -> Records:
    return convert(FIXTURES / name)


def corpus(name: str) -> Records:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"corpus file {name} not available")
    return convert(path)


def compactions(out: Records) -> list[tuple[int, dict[str, Any]]]:
    return [(line, r) for line, r in out[1:] if "compaction" in r]


def working_set_after(out: Records, line: int) -> set[str]:
    """Delta-mode working set after the round at ``line``."""
    ws: set[str] = set()
    for at, r in out[1:]:
        ws |= {s["id"] for s in r["spans"]} | {s["id"] for s in r.get("summaries", [])}
        ws -= set(r.get("evicted", []))
        if at == line:
            break
    return ws


def test_session_record_has_the_context_window_as_budget() -> None:
    out = fixture("codex-local.jsonl")
    assert out[0] == (1, {"type": "session", "schema": "compaction-audit/1",
                          "eviction": "on-overflow", "source_format": "codex",
                          "session_id": "codex-local-1", "budget_tokens": 200000})


def test_rounds_open_at_real_user_turns_and_compactions() -> None:
    out = fixture("codex-local.jsonl")
    assert [line for line, _ in out[1:]] == [4, 13, 18, 21, 25]
    first = out[1][1]["spans"]
    # the injected environment context is a span of round 0, not a turn of its own
    assert [s["source"] for s in first] == ["harness:meta", "user", "tool_call:shell",
                                            "tool_result:shell", "assistant"]
    assert first[2]["id"] == "call_a" and first[3]["id"] == "call_a:output"


def test_replacement_history_keeps_matching_spans_out_of_the_fold() -> None:
    out = fixture("codex-local.jsonl")
    line, rnd = compactions(out)[0]
    assert line == 18
    (summary,) = rnd["summaries"]
    assert summary["text"].startswith("Summary: Dockerfile base pinned")
    assert summary["children"] == ["call_a", "call_a:output", "line-11", "line-14"]
    assert rnd["evicted"] == summary["children"]
    assert {"line-2", "line-4", "line-13"} <= working_set_after(out, line)


def test_duplicate_and_zero_token_counts_are_ignored() -> None:
    (_, first), (_, second) = compactions(fixture("codex-local.jsonl"))
    assert first["compaction"] == {
        "trigger": None, "tokens_before": 150000, "tokens_after": 9000, "opaque": False,
        "kind": "compact", "summary_id": "line-18",
        "summary_tokens": first["summaries"][0]["tokens"], "sizes": "estimated"}
    assert (second["compaction"]["tokens_before"], second["compaction"]["tokens_after"]) == (
        160000, 7000)


def test_second_compaction_folds_the_first_summary() -> None:
    out = fixture("codex-local.jsonl")
    session = read_records(out, "codex-local.jsonl")
    _, rnd = compactions(out)[1]
    assert "line-18" in rnd["summaries"][0]["children"]
    depth = dict(zip(session.items["id"], session.items["depth"], strict=True))
    assert depth["line-25"] == 2
    # an item of the replacement history seen nowhere before enters as a new span
    # (developer-role instructions are the product's: harness)
    assert [(s["id"], s["source"]) for s in rnd["spans"]] == [("line-25.1", "harness:meta")]


def test_remote_compaction_summary_is_opaque() -> None:
    out = fixture("codex-remote.jsonl")
    assert out[0][1]["budget_tokens"] == 272000  # from task_started
    ((line, rnd),) = compactions(out)
    assert line == 9
    (summary,) = rnd["summaries"]
    assert "text" not in summary
    assert summary["tokens"] == 75  # 400 base64 chars -> 300 bytes -> 75 tokens
    assert summary["children"] == ["call_p", "call_p:output", "line-6"]
    info = rnd["compaction"]
    assert info["opaque"] is True and info["summary_tokens"] == 75
    assert (info["tokens_before"], info["tokens_after"]) == (190000, 21000)
    assert "line-3" in working_set_after(out, line)


def test_compaction_without_replacement_history_keeps_user_turns() -> None:
    out = fixture("codex-legacy.jsonl")
    (_, rnd), = compactions(out)
    assert rnd["summaries"][0]["children"] == ["line-3"]
    assert rnd["compaction"]["tokens_before"] is None


@pytest.mark.parametrize(("text", "message"), [
    (b'{"type":"response_item","payload":[]}\n', "(payload)"),
    (b'{"type":"response_item","payload":{"type":"message","role":"user","content":5}}\n',
     "(payload.content)"),
    (b'{"type":"compacted","payload":{"message":"s","replacement_history":{}}}\n',
     "(payload.replacement_history)"),
    (b'{"type":"event_msg","payload":{"type":"token_count"', "truncated last line"),
    # adv42: a window written as a string left the budget unknown, with no word
    (b'{"type":"event_msg","payload":{"type":"task_started","model_context_window":"9"}}\n',
     "expected an integer >= 0 (payload.model_context_window)"),
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"model_context_window":1.5}}}\n',
     "expected an integer >= 0 (payload.info.model_context_window)"),
    # adv46: a negative window let a later one stand in; an info that is no object left
    # the context size unknown
    (b'{"type":"event_msg","payload":{"type":"task_started","model_context_window":-1}}\n',
     "expected an integer >= 0 (payload.model_context_window)"),
    (b'{"type":"event_msg","payload":{"type":"token_count","info":"200000"}}\n',
     "expected an object (payload.info)"),
    # adv64 #3, #5: a usage that is no object was skipped (tokens_before then came from
    # an older event); a call id [] was read as absent; a session id {} as no record
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"last_token_usage":"5"}}}\n', "expected an object (payload.info.last_token_usage)"),
    # adv67 #4: a null or missing usage or total left an older event's size standing
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"last_token_usage":null}}}\n', "expected an object (payload.info.last_token_usage)"),
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"total_token_usage":{}}}}\n', "missing field (payload.info.last_token_usage)"),
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"last_token_usage":{"input_tokens":5,"total_tokens":null}}}}\n',
     "expected an integer >= 0 (payload.info.last_token_usage.total_tokens)"),
    (b'{"type":"event_msg","payload":{"type":"token_count","info":'
     b'{"last_token_usage":{"input_tokens":5}}}}\n',
     "missing field (payload.info.last_token_usage.total_tokens)"),
    (b'{"type":"response_item","payload":{"type":"function_call","name":"sh",'
     b'"arguments":"{}","call_id":[]}}\n', "expected a string (payload.call_id)"),
    (b'{"type":"response_item","payload":{"type":"function_call_output","output":"x",'
     b'"id":{}}}\n', "expected a string (payload.id)"),
    (b'{"type":"session_meta","payload":{"id":{}}}\n', "expected a string (payload.id)"),
])
def test_malformed_lines_raise_a_log_error_naming_the_line(
        tmp_path: Path, text: bytes, message: str) -> None:
    assert_log_error(codex.records, tmp_path / "bad.jsonl",
                     b'{"type":"session_meta","payload":{"id":"x"}}\n' + text, 2, message)


def test_sniff() -> None:
    assert codex.sniff([{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}])
    assert not codex.sniff([{"type": "user", "uuid": "u"}])


def test_corpus_local_compaction() -> None:
    out = corpus("synthetic-local-compaction.jsonl")
    ((line, rnd),) = compactions(out)
    assert line == 16
    (summary,) = rnd["summaries"]
    assert summary["text"].startswith("Another language model started to solve this problem")
    assert summary["text"].endswith("Deploy is on a pinned release.")
    kept = [s for _, r in out[1:] for s in r["spans"]
            if s["id"] in working_set_after(out, line) and "v4.2.1" in s.get("text", "")]
    assert [s["id"] for s in kept] == ["line-12"]
    assert "line-12" not in summary["children"]
    assert rnd["compaction"]["tokens_before"] == 231900


def test_corpus_remote_compaction() -> None:
    out = corpus("synthetic-remote-compaction.jsonl")
    ((line, rnd),) = compactions(out)
    assert line == 5
    assert rnd["compaction"]["opaque"] is True
    (summary,) = rnd["summaries"]
    assert "text" not in summary
    # nothing else was in the working set: the kept user message is the fold's only
    # child, and it stays
    assert summary["children"] == ["line-2"]
    assert "evicted" not in rnd


def test_tool_call_text_keeps_values_not_json_keys() -> None:
    from compaction_audit.io.tokens import tool_input_text

    assert tool_input_text('{"cmd": "grep -n read_timeout_ms config/staging.toml"}') == \
        "grep -n read_timeout_ms config/staging.toml"
    assert tool_input_text({"file_path": "/a/b.py", "replace_all": False,
                            "edits": [{"old_string": "x"}]}) == "/a/b.py\nfalse\nx"
    assert tool_input_text("not json {") == "not json {"


# -- harness text, token counts, encrypted summaries (issue 10, point 7) ----------------
def rollout(tmp_path: Path, payloads: list[tuple[str, dict[str, Any]]]) -> Records:
    path = tmp_path / "rollout.jsonl"
    lines = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "r-1"}}]
    lines += [{"timestamp": "t", "type": kind, "payload": p} for kind, p in payloads]
    path.write_bytes(b"".join(orjson.dumps(obj) + b"\n" for obj in lines))
    return convert(path)


def message(role: str, text: str) -> tuple[str, dict[str, Any]]:
    return "response_item", {"type": "message", "role": role,
                             "content": [{"type": "input_text", "text": text}]}


def usage(inp: int, cached: int, out: int, total: int | None = None,
          window: int | None = None) -> tuple[str, dict[str, Any]]:
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
            "total_tokens": inp + out if total is None else total}
    info: dict[str, Any] = {"last_token_usage": last, "total_token_usage": dict(last)}
    if window is not None:
        info["model_context_window"] = window
    return "event_msg", {"type": "token_count", "info": info}


def test_injected_messages_get_harness_sources(tmp_path: Path) -> None:
    out = rollout(tmp_path, [
        message("developer", "<permissions instructions>read-only</permissions instructions>"),
        message("user", "# AGENTS.md instructions for /srv\nUse tabs."),
        message("user", "<environment_context><cwd>/srv</cwd></environment_context>"),
        message("user", "Lower the worker pool to 4."),
        message("user", "<user_shell_command>git status</user_shell_command>"),
        message("user", "Another language model started to solve this problem: pool is 8."),
        message("assistant", "Pool lowered to 4."),
    ])
    assert [line for line, _ in out[1:]] == [5]  # only the person's message opens a round
    assert [s["source"] for s in out[1][1]["spans"]] == [
        "harness:meta", "harness:meta", "harness:meta", "user", "harness:command",
        "harness:summary", "assistant"]


def test_zero_counts_and_counts_above_the_window_are_no_token_count(tmp_path: Path) -> None:
    compact = ("compacted", {"message": "Summary: pool lowered to 4.",
                             "replacement_history": []})
    out = rollout(tmp_path, [
        message("user", "Lower the worker pool to 4."),
        usage(90000, 80000, 500, window=128000),
        usage(0, 0, 0, total=4000),  # all three counts 0: skipped, whatever the total
        usage(900000, 0, 0),  # above the 128,000-token window: not a token count
        compact,
        usage(0, 0, 0),
        usage(12000, 0, 0, total=130000),  # above the window again
        usage(12000, 6000, 40),
    ])
    ((_, rnd),) = compactions(out)
    assert (rnd["compaction"]["tokens_before"], rnd["compaction"]["tokens_after"]) == (
        90500, 12040)
    assert out[0][1]["budget_tokens"] == 128000


def test_encrypted_compaction_is_opaque_whatever_the_message_says(tmp_path: Path) -> None:
    out = rollout(tmp_path, [
        message("user", "Lower the worker pool to 4."),
        message("assistant", "Pool lowered to 4."),
        ("compacted", {"message": "Summary: pool lowered to 4.", "replacement_history": [
            message("user", "Lower the worker pool to 4.")[1],
            {"type": "compaction", "encrypted_content": "A" * 80}]}),
    ])
    ((_, rnd),) = compactions(out)
    (summary,) = rnd["summaries"]
    assert "text" not in summary
    assert summary["tokens"] == 15  # 80 base64 chars -> 60 bytes -> 15 tokens
    assert rnd["compaction"]["opaque"] is True
    assert summary["children"] == ["line-3"]


@pytest.mark.parametrize("blob", [12345, {"a": "b"}, None, ["QUJD"]])
def test_encrypted_content_that_is_not_a_string_is_an_error(tmp_path: Path, blob: Any) -> None:
    """adv84: an ``encrypted_content`` 12345, {} or null was read as a summary of about
    0 tokens ("an estimate from the size of its encrypted content"), exit 0."""
    compact = {"message": "", "replacement_history": [
        message("user", "Lower the worker pool to 4.")[1],
        {"type": "compaction", "encrypted_content": blob}]}
    text = b"".join(orjson.dumps(obj) + b"\n" for obj in [
        {"type": "session_meta", "payload": {"id": "x"}},
        {"type": "response_item", "payload": message("user", "Lower the worker pool to 4.")[1]},
        {"type": "compacted", "payload": compact}])
    path = tmp_path / "bad.jsonl"
    path.write_bytes(text)
    with pytest.raises(LogError) as info:
        list(codex.records(str(path)))
    assert (info.value.line, str(info.value)) == (
        3, f"{path}:3: expected a string (payload.replacement_history[1].encrypted_content)")


def test_an_encrypted_item_without_its_content_is_opaque(tmp_path: Path) -> None:
    out = rollout(tmp_path, [
        message("user", "Lower the worker pool to 4."),
        ("compacted", {"message": "", "replacement_history": [{"type": "compaction"}]}),
    ])
    ((_, rnd),) = compactions(out)
    assert (rnd["summaries"][0]["tokens"], rnd["compaction"]["opaque"]) == (0, True)


def test_lines_of_a_type_not_known_are_counted_not_dropped(tmp_path: Path) -> None:
    """adv27 F2: the ``compacted`` line renamed 'compacted2' was dropped without a
    word, and the failing rollout passed, exit 0."""
    lines = (FIXTURES / "codex-local.jsonl").read_bytes().splitlines()
    objs = [orjson.loads(x) for x in lines if x.strip()]
    assert sum(o.get("type") == "compacted" for o in objs) == 2
    renamed = [dict(o, type="compacted2") if o.get("type") == "compacted" else o
               for o in objs]
    path = tmp_path / "renamed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in renamed))
    head = convert(path)[0][1]
    assert head["lines_not_read"] == 2
    assert head["reader_notes"] == [
        "2 lines of a type this reader does not know ('compacted2'): not read"]
    assert "lines_not_read" not in fixture("codex-local.jsonl")[0][1]


def test_a_compaction_event_without_its_compacted_line_is_not_checked(tmp_path: Path) -> None:
    """adv28 F6: the ``compacted`` line removed (or renamed ``event_msg``) while its
    ``context_compacted`` event stays made a failing rollout a plain PASS; the event
    now stands for a compaction that could not be checked."""
    from compaction_audit.api import audit

    objs = [orjson.loads(x) for x in (FIXTURES / "codex-local.jsonl").read_bytes().splitlines()
            if x.strip()]
    events = sum(o.get("type") == "event_msg" and o["payload"].get("type") ==
                 "context_compacted" for o in objs)
    kept = [o for o in objs if o.get("type") != "compacted"]
    path = tmp_path / "lost.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in kept))
    out = convert(path)
    lost = compactions(out)
    assert len(lost) == events > 0
    assert all(r["compaction"]["unchecked"] == "the rollout records the compaction's event "
               "but not its compacted line" for _, r in lost)
    report = audit(str(path))
    assert report.compactions_not_checked() == events
    assert report.verdict().startswith(f"PASS ({events} compaction")
    assert len(compactions(fixture("codex-local.jsonl"))) == 2  # with them: as before


def test_payloads_of_a_type_not_known_are_counted_not_dropped(tmp_path: Path) -> None:
    """adv29 F5: every ``response_item`` message retyped ``Message`` turned a failing
    rollout into exit 0 with no word: the payload's type was not the line's, so it was
    never counted.  Unknown ``response_item`` payload and ``event_msg`` types are now
    counted as not read; the bookkeeping Codex writes (``reasoning``, ``ghost_snapshot``,
    ``user_message``, ``turn_aborted``, ...) is not."""
    out = rollout(tmp_path, [
        message("user", "Set the retry limit to 7."),
        ("response_item", {"type": "Message", "role": "user",
                           "content": [{"type": "input_text", "text": "hidden"}]}),
        ("response_item", {"type": "Message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "hidden too"}]}),
        ("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}),
        ("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        ("event_msg", {"type": "user_message", "message": "Set the retry limit to 7."}),
        ("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        ("event_msg", {"type": "Context_Compacted"}),
        ("response_item", {"role": "user", "content": "no type at all"}),
        # adv67 #5: a list or an object as the type was an internal error (TypeError)
        ("response_item", {"type": ["function_call"], "call_id": "c", "arguments": "{}"}),
        ("event_msg", {"type": {"token_count": 1}}),
    ])
    head = out[0][1]
    assert head["lines_not_read"] == 6
    assert head["reader_notes"] == [
        "2 lines of a response_item payload type this reader does not know ('Message'): "
        "not read",
        "1 line of an event_msg type this reader does not know ('Context_Compacted'): "
        "not read",
        "1 line of a response_item payload type this reader does not know (None): "
        "not read",
        "1 line of a response_item payload type this reader does not know "
        "(['function_call']): not read",
        "1 line of an event_msg type this reader does not know ({'token_count': 1}): "
        "not read"]
    for name in ("codex-local.jsonl", "codex-remote.jsonl", "codex-legacy.jsonl"):
        assert "lines_not_read" not in fixture(name)[0][1], name


def test_a_compacted_line_pairs_only_with_the_event_right_after_it(tmp_path: Path) -> None:
    """adv29 F6: a ``compacted`` line whose own ``context_compacted`` event was removed
    "paid for" a later event that had no compacted line, and that second compaction
    vanished without a word.  An event pairs only with a compacted line not yet paired
    and with no rollout item (a response item, a turn context) between them."""
    compacted = ("compacted", {"message": "Summary: retry limit is 7."})
    event = ("event_msg", {"type": "context_compacted"})
    head = [message("user", "Set the retry limit to 7."), message("assistant", "Done.")]
    later = [("turn_context", {"cwd": "/w"}), message("user", "Now the timeout.")]
    paired = rollout(tmp_path, [*head, compacted, usage(10, 0, 1), event, *later])
    assert [r["compaction"].get("unchecked") for _, r in compactions(paired)] == [None]
    # the first compaction's event removed, a second event with no compacted line added
    attack = rollout(tmp_path, [*head, compacted, *later, event])
    assert [r["compaction"].get("unchecked") for _, r in compactions(attack)] == [
        None, "the rollout records the compaction's event but not its compacted line"]
    # one compacted line, two events after it: the second has no line of its own
    twice = rollout(tmp_path, [*head, compacted, event, event])
    assert len(compactions(twice)) == 2


@pytest.mark.parametrize(("role", "field"), [
    (7, "(payload.role)"), (None, "(payload.role)"), (["user"], "(payload.role)")])
def test_a_message_role_that_is_not_a_string_is_an_error(
        tmp_path: Path, role: Any, field: str) -> None:
    """adv42: a role 7 (or none) was read as the source "7" ("None"): the person's
    requirements were no longer "typed by a person", and the verdict moved with no word."""
    payload: dict[str, Any] = {"type": "message", "content": [
        {"type": "input_text", "text": "Set the retry limit to 7."}]}
    if role is not None:
        payload["role"] = role
    text = orjson.dumps({"type": "response_item", "payload": payload}) + b"\n"
    assert_log_error(codex.records, tmp_path / "bad.jsonl",
                     b'{"type":"session_meta","payload":{"id":"x"}}\n' + text, 2, field)


def test_a_message_role_not_known_is_counted_not_read(tmp_path: Path) -> None:
    """adv42: roles "User" and "root" became sources of their own (a round went missing,
    "that matter" fell from 8 to 4) where the Cline reader counts such a message as not
    read; now the Codex reader does too, in the history a compaction keeps as well."""
    out = rollout(tmp_path, [
        message("user", "Set the retry limit to 7."),
        message("User", "Never raise it above 9."),
        message("root", "hidden"),
        message("developer", "Be brief."),
        ("compacted", {"message": "Summary: retry limit is 7.", "replacement_history": [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "Set the retry limit to 7."}]},
            {"type": "message", "role": "Root",
             "content": [{"type": "input_text", "text": "kept?"}]}]}),
        ("event_msg", {"type": "context_compacted"}),
    ])
    head = out[0][1]
    assert head["lines_not_read"] == 3
    assert head["reader_notes"] == [
        "1 line of a message role this reader does not know ('User'): not read",
        "1 line of a message role this reader does not know ('root'): not read",
        "1 line of a message role this reader does not know ('Root'): not read"]
    texts = [s.get("text") for _, r in out if r.get("type") == "round"
             for s in r.get("spans", [])]
    assert "Never raise it above 9." not in texts and "hidden" not in texts
    assert "Set the retry limit to 7." in texts and "Be brief." in texts


def test_a_history_item_of_a_type_not_known_is_counted_not_read(tmp_path: Path) -> None:
    """adv46: a replacement_history item typed "Message" (or no type) was skipped with
    no word, and the message it kept was counted as folded; the bookkeeping items
    Codex writes there (``reasoning``) are not counted."""
    out = rollout(tmp_path, [
        message("user", "Set the retry limit to 7."),
        ("compacted", {"message": "Summary: retry limit is 7.", "replacement_history": [
            {"type": "Message", "role": "user",
             "content": [{"type": "input_text", "text": "Set the retry limit to 7."}]},
            {"role": "user", "content": []},
            {"type": "reasoning", "summary": []},
            # adv47: Codex persists its encrypted summary under this type too
            {"type": "context_compaction", "encrypted_content": "gAAAA"},
            {"type": ["function_call"], "call_id": "c"}]}),  # adv67 #5: was a TypeError
        ("event_msg", {"type": "context_compacted"}),
    ])
    note = "1 line of a replacement_history item type this reader does not know ({}): not read"
    assert (out[0][1]["lines_not_read"], out[0][1]["reader_notes"]) == (
        3, [note.format("'Message'"), note.format(None), note.format("['function_call']")])



def test_a_summary_restating_the_kept_request_states_nothing_unsupported(
        tmp_path: Path) -> None:
    """adv84 #1: Codex keeps the person's messages verbatim in ``replacement_history``
    beside its summary; a summary restating one was an unsupported claim (CA305, an
    error) because only the folded messages were read as its sources."""
    from compaction_audit import api

    request = "Pin lib2==1.2.0 in requirements.txt; never upgrade it."
    summary = "The user asked to pin lib2==1.2.0 in requirements.txt. The edit is done."
    kept = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": request}]}
    rollout(tmp_path, [message("user", request), message("assistant", "Edited the file."),
                       usage(1000, 0, 5, window=258400),
                       ("compacted", {"message": summary, "replacement_history": [
                           kept, message("user", summary)[1]]}),
                       ("event_msg", {"type": "context_compacted"}),
                       usage(300, 0, 5, window=258400), message("user", "Continue")])
    report = api.audit(str(tmp_path / "rollout.jsonl"))
    assert [f.code for f in report.findings if f.code == "CA305"] == []
    assert report.extra["lost_discriminators"] == []
