"""The Cline 3.x adapter: real session files (basic and agentic strategies) and quirks."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.discover import discover
from compaction_audit.io import cline
from tests.foreign import (
    FIXTURES,
    all_spans,
    compaction_rounds,
    notes_and_spans,
    run_adapter,
    strict_then_lenient,
    working_set,
    write_json,
)

CLINE = FIXTURES / "cline"


def only_compaction(name: str) -> tuple[int, dict[str, Any]]:
    (line, rnd), = compaction_rounds(run_adapter(cline.records, CLINE / name))
    return line, rnd


def test_basic_strategy_keeps_the_turns_and_folds_the_tool_work() -> None:
    out = run_adapter(cline.records, CLINE / "basic.compaction.json")
    assert out[0][1]["session_id"] == "1784094124598_rruoq"
    line, rnd = only_compaction("basic.compaction.json")
    info = rnd["compaction"]
    assert line == 7  # the marker message of the compaction file
    assert info["strategy"] == "basic"
    assert info["trigger"] == "manual"  # reason: manual_compaction
    assert info["messages_removed"] == 22  # 32 messages before, 10 after
    assert info["tokens_before"] == 12238  # the last measured prompt before it
    assert info["usage_before"]["inputTokens"] == 630254
    # 42 spans in the messages file; the 10 kept messages keep one text span each
    assert len(all_spans(out)) == 42
    kept = working_set(out)
    assert kept[:2] == ["msg_mr9sjimy_1", "msg_SUqLoZ6R"] and len(kept) == 11
    summary = rnd["summaries"][0]
    assert len(summary["children"]) == 32 and rnd["evicted"] == summary["children"]
    # the kept first message lost its @-mentioned file: folded, not kept
    assert "msg_mr9sjimy_1:file" in summary["children"]
    # the summary is the four notices the strategy appended to kept user messages
    assert summary["text"].count(cline.NOTICE_PREFIX) == 4


def test_agentic_strategy_summary_message_folds_all_but_the_last_turn() -> None:
    out = run_adapter(cline.records, CLINE / "agentic.compaction.json")
    line, rnd = only_compaction("agentic.compaction.json")
    info = rnd["compaction"]
    assert (line, info["strategy"], info["trigger"]) == (7, "agentic", None)
    assert info["tokens_before"] == 21919  # metadata.tokensBefore
    assert info["messages_removed"] == 30
    assert [Path(f).name for f in info["files_read"]] == ["agent-sidebar.tsx", "button.tsx"]
    assert [Path(f).name for f in info["files_modified"]] == ["agent-sidebar.tsx"]
    assert rnd["summaries"][0]["text"].startswith("Context summary:")
    assert len(rnd["evicted"]) == 40
    assert working_set(out) == ["msg_mrb7vknq_4n", "msg_Fy5COtRH", "line-7"]


@pytest.mark.parametrize("name", ["basic.compaction.json", "agentic.compaction.json"])
def test_audit_reports_strategy_tokens_removed_and_lost_facts(name: str) -> None:
    report = api.audit(str(CLINE / name))
    assert report.source_format == "cline"
    (c,) = report.compactions
    assert c["strategy"] in ("basic", "agentic")
    assert c["tokens_before"] and c["messages_removed"]
    lost = {d["text"] for d in c["lost"]}
    # the first turn's request-level decision is gone under both strategies
    assert "the filter comes after" in lost


def test_messages_file_alone_has_no_compaction() -> None:
    out = run_adapter(cline.records, CLINE / "session.messages.json")
    assert compaction_rounds(out) == []
    assert len(out) - 1 == 5  # five typed user messages open five rounds
    assert all_spans(out)["msg_mr9sjimy_1:file"]["source"] == "tool_result:file"


def test_manifest_reads_the_messages_file_it_names() -> None:
    out = run_adapter(cline.records, CLINE / "session.json")
    assert len(all_spans(out)) == 42


def test_compaction_file_without_its_messages_file(tmp_path: Path) -> None:
    shutil.copy(CLINE / "agentic.compaction.json", tmp_path / "x.compaction.json")
    out = run_adapter(cline.records, tmp_path / "x.compaction.json")
    (_line, rnd), = compaction_rounds(out)
    # nothing came before the summary in this file: it is a raw summary span
    assert "summaries" not in rnd and rnd["spans"][0]["source"] == "harness:summary"
    assert rnd["compaction"]["messages_removed"] is None


def session(messages: list[Any], version: Any = 1) -> dict[str, Any]:
    return {"version": version, "sessionId": "s1", "agent": "lead", "messages": messages}


def user(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], **extra}


def test_pairing_by_id_prefix_and_a_disagreeing_count(tmp_path: Path) -> None:
    write_json(tmp_path / "s1.messages.json", session([
        user("u1", "Deploy to eu-west-2 only."), user("u2", "Then tag v3.1.")]))
    marker = user("u2", "Then tag v3.1.", metadata={
        "kind": "compaction", "messagesRemoved": 5, "reason": "auto"})
    write_json(tmp_path / "s1.compaction.json", session([marker]))
    out = run_adapter(cline.records, tmp_path / "s1.messages.json")
    (_, rnd), = compaction_rounds(out)
    assert rnd["compaction"]["trigger"] == "auto"
    assert rnd["compaction"]["messages_removed"] == 1
    assert rnd["evicted"] == ["u1"]
    assert out[0][1]["reader_notes"] == [
        "Cline says 5 messages removed at line 6; the two files differ by 1"]


def test_unseen_version_is_said(tmp_path: Path) -> None:
    path = write_json(tmp_path / "v.messages.json", session(
        [user("u1", "hi"), {**user("s1", "note"), "role": "system"}], version=7))
    assert notes_and_spans(cline.records, path) == ([
        "Cline format version 7 not seen before; read as version 1",
        "Cline message role system not seen before; its messages skipped"], ["u1"])


def test_bad_message_is_a_file_line_error_or_a_counted_skip(tmp_path: Path) -> None:
    # indented JSON: the header takes lines 1-5, each message 10 lines from line 6
    path = write_json(tmp_path / "b.messages.json", session([
        user("u1", "first"), {"id": "u2", "role": "user", "content": 42},
        user("u3", "third")]))
    error, out, skipped = strict_then_lenient(cline.records, path)
    assert error == f"{path}:16: expected a list or a string (messages[1].content)"
    assert skipped == [16] and sorted(all_spans(out)) == ["u1", "u3"]
    session_, fmt = api.load(str(path), lenient=True)
    assert fmt == "cline" and [e.line for e in session_.skipped] == [16]


def test_a_session_folder_is_audited_once_per_session(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "s1"
    folder.mkdir(parents=True)
    shutil.copy(CLINE / "session.messages.json", folder / "s1.messages.json")
    shutil.copy(CLINE / "basic.compaction.json", folder / "s1.compaction.json")
    (report,) = api.audit_paths(discover([str(tmp_path / "sessions")])).sessions
    assert report.path.endswith("s1.messages.json")
    assert [c["strategy"] for c in report.compactions] == ["basic"]
