"""A user message Codex shortened to fit its replacement history keeps the message it
was cut from (usertest61 A1: the message was folded and its facts listed as lost while
the copy, in the new context, still held them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.io import codex
from compaction_audit.io.codex_truncated import original, parts
from compaction_audit.io.native import read_records

ASK = ("Staging looks slow again; revert the timeout to 30000 but keep the deploy on "
       "v4.2.1. The attached log follows: " + "line of log " * 40 + "end of the log.")


@pytest.mark.parametrize(("text", "want"), [
    ("Staging looks slow again…1234 tokens truncated…end of the log.",
     ("Staging looks slow again", "end of the log.")),
    ("Staging looks slow again ... 1,234 chars truncated ... end", ("Staging looks slow again",
                                                                    "end")),
    ("Staging looks slow again; revert …", ("Staging looks slow again; revert", "")),
    ("Short…12 tokens truncated…end", None),  # too little of its start kept
    ("Staging looks slow again; nothing was cut here.", None),
])
def test_the_parts_a_truncated_copy_kept(text: str, want: tuple[str, str] | None) -> None:
    assert parts(text) == want


def test_the_original_starts_and_ends_with_the_copy() -> None:
    head, tail = ASK[:60], ASK[-15:]
    assert original((head, tail), ["Another message.", ASK]) == ASK
    assert original((head, "not its end"), [ASK]) is None
    assert original((ASK, ""), [ASK]) is None  # a copy as long as the message cut nothing


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}


def _compaction(tmp_path: Path, kept: str) -> dict[str, Any]:
    lines = [("session_meta", {"id": "s"}),
             ("response_item", _user(ASK)),
             ("compacted", {"message": "Summary: staging was slow.",
                            "replacement_history": [_user(kept),
                                                    _user("Summary: staging was slow.")]})]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"timestamp": "t", "type": kind, "payload": p})
                              + b"\n" for kind, p in lines))
    out = list(codex.records(str(path)))
    read_records(out, str(path))
    ((rnd,),) = [[r for _, r in out[1:] if "compaction" in r]]
    return rnd


@pytest.mark.parametrize("kept", [
    ASK[:80] + "…812 tokens truncated…" + ASK[-30:],  # as Codex cuts the middle
    ASK[:80] + " …",  # cut at its end
])
def test_a_truncated_copy_keeps_its_message(tmp_path: Path, kept: str) -> None:
    rnd = _compaction(tmp_path, kept)
    assert rnd.get("evicted", []) == []  # the message stays: nothing folded
    assert rnd["spans"] == []  # the copy is no new span


def test_a_copy_of_no_message_in_the_context_is_a_new_span(tmp_path: Path) -> None:
    rnd = _compaction(tmp_path, "Deploy the hotfix to production before noon …")
    assert rnd["summaries"][0]["children"] == rnd["evicted"] == ["line-2"]
    assert [s["text"] for s in rnd["spans"]] == ["Deploy the hotfix to production before noon …"]
