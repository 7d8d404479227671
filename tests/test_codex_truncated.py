"""A user message Codex shortened in its replacement history is judged with the summary
(usertest61 A1: the copy was a new span, and every fact of the message was listed lost
while the copy still held it; adv113 #1, #5: keeping the message it was cut from hid
what the cut removed, and could pick the wrong message; adv113 #3: the search was
quadratic in a run of spaces)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.io import codex
from compaction_audit.io import codex_truncated as truncated
from compaction_audit.io.codex_truncated import is_copy
from compaction_audit.io.native import read_records

RULE = "IMPORTANT: Do NOT use --force when pushing to main."
HEAD = "Staging looks slow again; keep the deploy on v4.2.1 and the timeout at 45000. "
TAIL = " That is the whole log; the retry budget is 3."
ASK = HEAD + "line of log " * 40 + RULE + " " + "line of log " * 40 + TAIL


@pytest.mark.parametrize(("text", "copy"), [
    ("Staging looks slow again…1234 tokens truncated…end of the log.", True),
    ("Staging looks slow again ... 1,234 chars truncated ... end", True),
    ("Staging looks slow again; revert …", True),
    ("Staging looks slow again...", True),
    ("Staging looks slow again; nothing was cut here.", False),
    ("The logs were truncated yesterday.", False),
])
def test_a_truncated_copy_is_told_by_its_marker(text: str, copy: bool) -> None:
    assert is_copy(text) is copy


def test_the_marker_is_searched_from_a_literal() -> None:
    """adv113 #3: a pattern led by white space is quadratic in a run of it (13 s on
    40,000 spaces); one led by the ellipsis starts once per ellipsis.  Checked by its
    shape, not by a clock."""
    assert truncated._MIDDLE_RE.pattern.startswith("(?:…|\\.\\.\\.)")
    assert is_copy("a" + " " * 50_000 + "12 tokens truncated" + " " * 50_000 + "b") is False


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


@pytest.mark.parametrize(("kept", "judged"), [
    # as Codex cuts the middle: the mark is a paragraph break, no quantity, no clause
    # across it (adv114 #1, #3)
    (ASK[:200] + "…812 tokens truncated…" + ASK[-60:], ASK[:200] + "\n\n" + ASK[-60:]),
    (ASK[:200] + " …", ASK[:200] + " "),  # cut at its end
])
def test_the_copy_is_judged_with_the_summary_and_the_message_folded(
        tmp_path: Path, kept: str, judged: str) -> None:
    rnd = _compaction(tmp_path, kept)
    (summary,) = rnd["summaries"]
    assert summary["children"] == rnd["evicted"] == ["line-2"]  # the message is gone
    assert summary["text"] == ("Summary: staging was slow.\n\n" + judged).strip()
    assert summary["tokens"] == 7  # the summary's own words: the copy is a span of its own
    # a span of its own, its marks no fact either (adv115 #1: folded at the next
    # compaction, "10011 tokens" was a lost fact typed by a person)
    assert [s["text"] for s in rnd["spans"]] == [truncated.without_marks(kept)]


def test_without_marks_makes_each_cut_a_paragraph_break() -> None:
    assert truncated.without_marks("we did not…38014 tokens truncated…use --force") == (
        "we did not\n\nuse --force")
    assert truncated.without_marks("keep the port at 8443 ...") == "keep the port at 8443 \n\n"
    assert truncated.without_marks("nothing was cut") == "nothing was cut"


def test_a_message_of_no_cut_is_a_new_span(tmp_path: Path) -> None:
    rnd = _compaction(tmp_path, "Deploy the hotfix to production before noon.")
    assert rnd["summaries"][0]["text"] == "Summary: staging was slow."
    assert [s["text"] for s in rnd["spans"]] == ["Deploy the hotfix to production before noon."]


def test_what_the_cut_removed_is_lost_and_what_it_kept_is_not(tmp_path: Path) -> None:
    from compaction_audit.api import audit

    path = tmp_path / "rollout.jsonl"
    kept = ASK[:200] + "…812 tokens truncated…" + ASK[-60:]
    lines = [("session_meta", {"id": "s"}), ("response_item", _user(ASK)),
             ("compacted", {"message": "Summary: staging was slow.",
                            "replacement_history": [_user(kept),
                                                    _user("Summary: staging was slow.")]})]
    path.write_bytes(b"".join(orjson.dumps({"timestamp": "t", "type": kind, "payload": p})
                              + b"\n" for kind, p in lines))
    lost = {d["text"] for d in audit(str(path)).extra["lost_discriminators"]}
    assert "Do NOT use --force when pushing to main" in lost  # in the cut
    assert not lost & {"v4.2.1", "45000"}  # in the copy's start
