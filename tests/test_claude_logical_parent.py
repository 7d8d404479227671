"""A Claude Code boundary's ``logicalParentUuid`` is a link, not a claim of what was
kept (adv112 #2): messages the file puts after the named parent and before the boundary
were in the conversation the summary replaced, so they are folded, with a note; only a
partial compaction's own fields keep some."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io import claude_code
from tests.test_adapters_claude_code import boundary, reply, run, summary_line, user_line

NOTE = f"1 line {claude_code.PARENT_NOT_LAST}"


def _tool_call(uuid: str, command: str) -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "sessionId": "s-h",
            "message": {"id": f"msg-{uuid}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu-{uuid}", "name": "Bash",
                 "input": {"command": command}}]}}


def _session(parent: str, between: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return [
        user_line("u1", "Hello, let's start on the billing export."),
        user_line("u2", "Do NOT use --force when pushing to main."),
        reply("a1", "Understood, I will fix the billing export."),
        *(between or []),
        boundary("b1", parent),
        summary_line("s1", "Summary: we worked on the billing export."),
        user_line("u3", "Push it now."),
        _tool_call("a2", "git push --force origin main"),
    ]


def _fold(out: list[tuple[int, dict[str, Any]]]) -> list[str]:
    ((summary,),) = [r["summaries"] for _, r in out[1:] if "compaction" in r]
    return list(summary["children"])


def test_messages_after_an_early_parent_are_folded_and_said(tmp_path: Path) -> None:
    out = run(tmp_path, _session("u1"))
    assert _fold(out) == ["u1", "u2", "a1"]  # u2 and a1 were read as kept
    assert out[0][1]["reader_notes"] == [NOTE]


def test_a_parent_that_is_the_last_message_gets_no_note(tmp_path: Path) -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "a1", "snapshot": {}}
    out = run(tmp_path, _session("a1", [snapshot]))
    assert _fold(out) == ["u1", "u2", "a1"]
    assert "reader_notes" not in out[0][1]


def test_the_rule_after_an_early_parent_is_lost_and_its_break_fails_the_gate(
        tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in _session("u1")))
    result = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("FAIL: 2 error(s)"), result.stdout
