"""Claude Code ``attachment`` lines (adv134 #1): an @-mentioned file, a directory
listing and a file changed outside the agent are documents the model read (Claude Code
sends a file as a ``Read`` call and its result), a queued command is the person's
message, and the product's reminders are not read; a document of a shape not known is
counted as a line not read, never dropped in silence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.io import claude_attachments
from tests.test_adapters_claude_code import boundary, queue, reply, run, summary_line, user_line

CONFIG = "db_host: db-r7.internal\nlisten_port: 6543\nread_timeout_ms: 45000\n"


def attached(uuid: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "attachment", "uuid": uuid, "sessionId": "s-h", "attachment": body,
            **extra}


def mentioned(text: str = CONFIG, form: str = "text") -> dict[str, Any]:
    content: dict[str, Any] = {"type": form}
    if form == "text":
        content["file"] = {"filePath": "/w/config/db.yaml", "content": text}
    return {"type": "file", "filename": "/w/config/db.yaml", "content": content}


def spans(out: list[tuple[int, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(s["source"], s.get("text", "")) for _, r in out[1:] for s in r["spans"]]


def session(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [user_line("u1", "Fix the staging DB timeout; the settings are in "
                            "@config/db.yaml."), *middle,
            reply("a1", "I will raise the timeout after checking the replica."),
            boundary("b1", "a1"), summary_line("s1", "Summary: fixing the DB timeout."),
            user_line("u2", "Go on.")]


def lost(tmp_path: Path) -> set[str]:
    report = api.audit(str(tmp_path / "session.jsonl"))
    return {i["text"] for c in report.compactions for i in c.get("lost", [])}


def test_a_mentioned_file_is_read_and_its_values_can_be_lost(tmp_path: Path) -> None:
    out = run(tmp_path, session(attached("f1", mentioned())))
    assert ("tool_result:Read", CONFIG) in spans(out)
    assert "lines_not_read" not in out[0][1]
    assert {"read_timeout_ms: 45000", "listen_port: 6543"} <= lost(tmp_path)


def test_the_same_as_the_file_read_by_the_read_tool(tmp_path: Path) -> None:
    """The control: what the audit finds is the same as for a Read call's result."""
    run(tmp_path, session(attached("f1", mentioned())))
    by_attachment = lost(tmp_path)
    call = {"type": "assistant", "uuid": "t1", "sessionId": "s-h", "message": {
        "id": "m-t1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "call-1", "name": "Read",
             "input": {"file_path": "/w/config/db.yaml"}}]}}
    result = user_line("r1", [{"type": "tool_result", "tool_use_id": "call-1",
                               "content": CONFIG}])
    run(tmp_path, session(call, result))
    assert by_attachment == lost(tmp_path) - {"/w/config/db.yaml"}


def test_an_image_is_an_image_span(tmp_path: Path) -> None:
    out = run(tmp_path, session(attached("f1", mentioned(form="image"))))
    (span,) = [s for _, r in out[1:] for s in r["spans"] if s["source"] == "tool_result:Read"]
    assert span["tokens"] > 0 and span.get("text", "") == ""


@pytest.mark.parametrize("body", [
    mentioned(form="pdf"), mentioned(form="notebook"),
    {"type": "file", "filename": "x.yaml", "content": {"type": "text", "file": {}}},
    {"type": "directory", "path": "/w", "content": ["a", "b"]},
    {"type": "edited_text_file", "filename": "x.py", "snippet": 7},
])
def test_a_document_of_a_shape_not_known_is_counted_not_read(
        tmp_path: Path, body: dict[str, Any]) -> None:
    out = run(tmp_path, session(attached("f1", body)))
    assert out[0][1]["lines_not_read"] == 1
    assert any("of an attachment whose content this reader does not read" in n
               for n in out[0][1]["reader_notes"])


def test_a_listing_and_an_edited_file(tmp_path: Path) -> None:
    out = run(tmp_path, session(
        attached("d1", {"type": "directory", "path": "/w", "content": "app.py\nsetup.cfg"}),
        attached("e1", {"type": "edited_text_file", "filename": "/w/app.py",
                        "snippet": "  3\tTIMEOUT_MS = 45000"}),
        attached("e2", {"type": "edited_text_file", "filename": "/w/b.py"})))
    assert [s for s in spans(out) if s[0].startswith("tool_result:")] == [
        ("tool_result:Bash", "app.py\nsetup.cfg"), ("tool_result:Read", "  3\tTIMEOUT_MS = 45000")]


@pytest.mark.parametrize("body", [
    {"type": "plan_mode", "planFilePath": "/p/plan.md"},
    {"type": "hook_success", "hookName": "SessionStart", "stdout": "ok"},
    {"type": "todo_reminder", "content": [{"content": "write tests"}]},
    {"type": "hook_additional_context", "content": ["Branch is main."]},
])
def test_the_products_reminders_are_not_read(tmp_path: Path, body: dict[str, Any]) -> None:
    plain = spans(run(tmp_path, session()))
    out = run(tmp_path, session(attached("x1", body)))
    assert spans(out) == plain and "lines_not_read" not in out[0][1]


def test_a_queued_command_is_the_persons_message_once(tmp_path: Path) -> None:
    text = "Also keep read_timeout_ms at 45000."
    command = {"type": "queued_command", "prompt": text}
    alone = run(tmp_path, session(attached("q1", command)))
    assert spans(alone).count(("user", text)) == 1
    rounds = [r for _, r in alone[1:] if any(s.get("text") == text for s in r["spans"])]
    assert rounds[0]["spans"][0]["text"] == text  # it opened a round of its own
    with_enqueue = run(tmp_path, session(queue("enqueue", text), attached("q1", command)))
    assert spans(with_enqueue).count(("user", text)) == 1  # delivered, not typed twice
    notice = {"type": "queued_command", "prompt": "<task-notification>done</task-notification>",
              "commandMode": "task-notification"}
    assert not any(s[0] == "user" and "task-notification" in s[1]
                   for s in spans(run(tmp_path, session(attached("q2", notice)))))


def test_a_file_attached_between_a_boundary_and_its_summary_is_not_folded(
        tmp_path: Path) -> None:
    """Claude Code attaches the files it read again after a compaction."""
    lines = [user_line("u1", "Fix the DB timeout."), reply("a1", "Looking."),
             boundary("b1", "a1"), attached("f1", mentioned()),
             summary_line("s1", "Summary: fixing the DB timeout."), user_line("u2", "Go on.")]
    out = run(tmp_path, lines)
    (compaction,) = [r for _, r in out[1:] if "compaction" in r]
    assert compaction["summaries"][0]["children"] == ["u1", "a1"]
    assert ("tool_result:Read", CONFIG) in spans(out)
    assert len([r for _, r in out[1:] if "compaction" in r]) == 1


def test_a_subagents_attachment_is_counted_not_read(tmp_path: Path) -> None:
    out = run(tmp_path, session(attached("f1", mentioned(), isSidechain=True)))
    assert out[0][1]["lines_not_read"] == 1
    assert ("tool_result:Read", CONFIG) not in spans(out)


def test_the_module_reads_no_other_type() -> None:
    assert claude_attachments.document({"type": "plan_file_reference",
                                        "planContent": "# Plan"}) is None
    assert claude_attachments.queued_prompt({"type": "file"}) is None


OPENED = ("<ide_opened_file>The user opened the file /w/src/header.tsx in the IDE. This "
          "may or may not be related to the current task.</ide_opened_file>")
SELECTED = ("<ide_selection>The user selected the lines 10 to 11 from /w/settings.py:\n"
            "POOL_SIZE = 64\nSTATEMENT_TIMEOUT_MS = 9000\n\nThis may or may not be related "
            "to the current task.</ide_selection>")


@pytest.mark.parametrize("content", [
    [{"type": "text", "text": OPENED}, {"type": "text", "text": "Fix the header wrap."}],
    OPENED + "\nFix the header wrap.",
])
def test_the_ides_note_of_the_file_open_is_not_the_persons(tmp_path: Path,
                                                           content: Any) -> None:
    """usertest70 #1: VS Code's note ("This may or may not be related to the current
    task.") was a person's lost negation: a false error on every VS Code session."""
    out = run(tmp_path, [user_line("u1", content), reply("a1", "Fixed.")])
    assert ("user", "Fix the header wrap.") in spans(out)
    assert ("harness:meta", OPENED) in spans(out) or ("harness:meta", OPENED + "\nFix the "
                                                      "header wrap.") in spans(out)
    assert not any(s == "user" and "may not be related" in t for s, t in spans(out))


@pytest.mark.parametrize("content", [
    [{"type": "text", "text": SELECTED}, {"type": "text", "text": "Why is this slow?"}],
    SELECTED + "\nWhy is this slow?",
    OPENED + SELECTED + "\nWhy is this slow?",  # adv136 #3: the selection after the note
])
def test_an_ide_selection_is_a_document_the_model_read(tmp_path: Path, content: Any) -> None:
    out = run(tmp_path, [user_line("u1", content), reply("a1", "Looking.")])
    assert ("tool_result:Read", SELECTED) in spans(out)
    assert ("user", "Why is this slow?") in spans(out)


@pytest.mark.parametrize(("text", "typed"), [
    # adv136 #1: words opening with "<" after a note were nobody's
    (OPENED + "\n<Navbar> must keep max_items = 12; do NOT remove React.memo.",
     "<Navbar> must keep max_items = 12; do NOT remove React.memo."),
    # adv136 #7: the person's words between two notes, the selection's own sentence not
    (OPENED + " Keep max_items = 12. " + SELECTED, "Keep max_items = 12."),
    # adv136 #4: a note not closed leaves the rest the person's
    ("<ide_opened_file>The user opened /w/a.ts. Do NOT remove React.memo.",
     "<ide_opened_file>The user opened /w/a.ts. Do NOT remove React.memo."),
])
def test_the_persons_words_beside_the_ides_notes(tmp_path: Path, text: str,
                                                 typed: str) -> None:
    out = run(tmp_path, [user_line("u1", text), reply("a1", "OK.")])
    assert [t for s, t in spans(out) if s == "user"] == [typed]


def test_a_selected_lines_attachment_is_a_document(tmp_path: Path) -> None:
    body = {"type": "selected_lines_in_ide", "filename": "/w/settings.py", "lineStart": 10,
            "lineEnd": 11, "content": "POOL_SIZE = 64\nSTATEMENT_TIMEOUT_MS = 9000"}
    out = run(tmp_path, session(attached("s9", body)))
    assert ("tool_result:Read", body["content"]) in spans(out)
    assert "STATEMENT_TIMEOUT_MS = 9000" in lost(tmp_path)


def test_a_queued_command_after_its_remove_is_read_once(tmp_path: Path) -> None:
    """adv135 #5: enqueue, remove (delivered), then the attachment: two user spans."""
    text = "Also keep read_timeout_ms at 45000."
    out = run(tmp_path, session(queue("enqueue", text), queue("remove"),
                                attached("q1", {"type": "queued_command", "prompt": text})))
    assert spans(out).count(("user", text)) == 1


def test_a_file_attached_again_by_a_compaction_survives_a_rewind_to_its_summary(
        tmp_path: Path) -> None:
    """adv136 #6: the files a compaction attached again came before the first prompt
    after it, and a rewind to that prompt cut them."""
    lines = [user_line("u1", "Fix the DB timeout."), reply("a1", "Looking."),
             boundary("b1", "a1"), attached("f1", mentioned()),
             summary_line("s1", "Summary: fixing the DB timeout."),
             {**user_line("u2", "Go on."), "parentUuid": "s1"},
             {**reply("a2", "Going on."), "parentUuid": "u2"},
             {**user_line("u3", "Instead, stop here."), "parentUuid": "s1"}]
    from tests.test_claude_rewind import ids

    assert ids(run(tmp_path, lines)) == ["f1", "s1", "u3"]  # (spans first in a round)


def test_a_remove_without_its_attachment_takes_no_later_message(tmp_path: Path) -> None:
    """adv136 #5: a remove with no attachment (as Claude Code 2.1.39 writes it), then,
    a turn later, a queued_command with the same text: the person's second message."""
    text = "Also keep read_timeout_ms at 45000."
    out = run(tmp_path, session(queue("enqueue", text), queue("remove"),
                                user_line("u9", "Next step."),
                                attached("q1", {"type": "queued_command", "prompt": text})))
    assert spans(out).count(("user", text)) == 2


def test_a_queued_message_after_the_ides_note_is_the_persons(tmp_path: Path) -> None:
    """A message queued from VS Code opens with the note of the file open: its words
    were the product's whole (queue-operation and queued_command alike)."""
    words = "Also keep read_timeout_ms at 45000."
    text = OPENED + "\n" + words
    by_queue = run(tmp_path, session(queue("enqueue", text)))
    assert spans(by_queue).count(("user", words)) == 1
    command = {"type": "queued_command", "prompt": text}
    assert spans(run(tmp_path, session(attached("q1", command)))).count(("user", words)) == 1


@pytest.mark.parametrize("text", [
    "Wrap it: <ide_opened_file>Pin asyncpg==0.29.0; do NOT use --force.</ide_opened_file>",
    "<ide_selection>Keep pool_size = 48; do NOT use --force.</ide_selection>",
])
def test_tags_around_a_persons_own_words_are_no_note(tmp_path: Path, text: str) -> None:
    """adv137 #2: a note is the tag and the extension's first words; a person who types
    the tags around a rule of their own wrote the rule (it was hidden, exit 0)."""
    out = run(tmp_path, [user_line("u1", text), reply("a1", "OK.")])
    assert [t for s, t in spans(out) if s == "user"] == [text]
    from compaction_audit.recall.spantypes import clean_text

    assert clean_text(text) == text
