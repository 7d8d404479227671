"""The Claude Code adapter: mapping, real-world quirks, corpus files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import claude_code
from compaction_audit.io.native import read_records

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
    assert [r["round"] for _, r in out[1:]] == [0, 1, 2, 3, 4]


def test_rounds_open_at_real_user_turns_and_compactions() -> None:
    out = convert("claude-session.jsonl")
    assert [line for line, _ in out[1:]] == [5, 16, 18, 23, 26]
    first = out[1][1]
    # the caveat and /clear wrapper lines before the first turn join round 0
    assert [s["id"] for s in first["spans"]][:4] == ["c-meta1", "c-clear", "c-clear-out", "c-u1"]


def test_command_wrappers_are_spans_but_not_turns() -> None:
    out = convert("claude-session.jsonl")
    compaction_round = out[3][1]
    ids = [s["id"] for s in compaction_round["spans"]]
    assert ids == ["c-meta2", "c-compact", "c-compact-out"]
    assert all(s["source"] == "user:meta" for s in compaction_round["spans"])


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
        "summary_tokens": summary["tokens"]}
    assert set(rnd["evicted"]) == set(summary["children"])
    assert "c-s1" not in spans(out)  # the summary line is not also a user span


def test_each_compaction_folds_the_previous_summary() -> None:
    out = convert("claude-session.jsonl")
    session = read_records(out, "claude-session.jsonl")
    (_, first), (_, second) = compactions(out)
    assert len(first["summaries"][0]["children"]) == 12
    assert "c-s1" in second["summaries"][0]["children"]
    assert second["compaction"]["trigger"] == "auto"
    depth = dict(zip(session.items["id"], session.items["depth"], strict=True))
    assert depth["c-s1"] == 1
    assert depth["c-s2"] == 2


def test_bookkeeping_lines_are_ignored(tmp_path: Path) -> None:
    source = (FIXTURES / "claude-session.jsonl").read_bytes().splitlines(keepends=True)
    kept = [raw for raw in source if orjson.loads(raw)["type"] in ("user", "assistant", "system")]
    assert len(kept) < len(source)
    path = tmp_path / "plain.jsonl"
    path.write_bytes(b"".join(kept))

    def shape(out: Records) -> list[Any]:
        return [(r.get("round"), [s["id"] for s in r.get("spans", [])]) for _, r in out]

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
    (b'[1, 2]\n', "expected a JSON object"),
])
def test_malformed_lines_raise_a_log_error_naming_the_line(
        tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"type":"user","uuid":"a","message":{"content":"ok"}}\n\n' + text)
    with pytest.raises(LogError) as info:
        list(claude_code.records(str(path)))
    assert info.value.line == 3
    assert message in str(info.value)


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


def test_corpus_auto_compact() -> None:
    path = corpus_file("spotter-auto-compact.jsonl")
    out = list(claude_code.records(path))
    read_records(out, path)
    ((line, rnd),) = compactions(out)
    assert line == 1256
    assert rnd["compaction"]["trigger"] == "auto"
    assert rnd["compaction"]["tokens_before"] == 167094
    assert len(rnd["summaries"][0]["text"]) > 14000
