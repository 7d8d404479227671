"""Claude Code ``/rewind``: the next line names the message before the one rewound to
as its parent, and the lines after that message stay in the file, out of the
conversation.  The turns taken back leave the context with no summary, so a rule the
person withdrew is no lost fact at the next compaction; everything that is not a
rewind (parallel tool calls, progress lines, a stop hook's fork, a queued message, a
parent not in the file, a rewind across a compaction) leaves the context as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from tests.test_adapters_claude_code import boundary, reply, run, summary_line, user_line

RULE = "Do NOT run the migration on prod; pin psycopg==3.1.18 for it."


def chain(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines with ``parentUuid`` set to the line before's uuid, where a line does
    not name its own (``parentUuid`` given) and has a uuid."""
    out: list[dict[str, Any]] = []
    last: str | None = None
    for obj in lines:
        obj = dict(obj)
        obj.setdefault("parentUuid", last)
        out.append(obj)
        last = obj.get("uuid", last)
    return out


def after(uuid: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "parentUuid": uuid}


def tool_use(uuid: str, call: str, message_id: str = "m-tools") -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "sessionId": "s-h",
            "message": {"id": message_id, "role": "assistant", "content": [
                {"type": "tool_use", "id": call, "name": "Bash",
                 "input": {"command": f"echo {call}"}}]}}


def tool_result(uuid: str, call: str, text: str) -> dict[str, Any]:
    return user_line(uuid, [{"type": "tool_result", "tool_use_id": call, "content": text}])


def progress(uuid: str) -> dict[str, Any]:
    return {"type": "progress", "uuid": uuid, "sessionId": "s-h", "data": {}}


def stop_hook(uuid: str) -> dict[str, Any]:
    return {"type": "system", "subtype": "stop_hook_summary", "uuid": uuid,
            "sessionId": "s-h", "content": "hook ran"}


def ids(out: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """The working set at the end, in entry order."""
    working: dict[str, None] = {}
    for _, rnd in out[1:]:
        for s in (*rnd.get("spans", []), *rnd.get("summaries", [])):
            working[s["id"]] = None
        for gone in rnd.get("evicted", []):
            working.pop(gone, None)
    return list(working)


def dropped(out: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """What rounds without a compaction evicted (a rewind's drops)."""
    return [i for _, r in out[1:] if "compaction" not in r for i in r.get("evicted", [])]


def note(out: list[tuple[int, dict[str, Any]]]) -> list[str]:
    return [n for n in out[0][1].get("reader_notes", []) if "rewind" in n]


def lost(tmp_path: Path) -> set[str]:
    path = str(tmp_path / "session.jsonl")
    return {i["text"] for c in api.audit(path).compactions for i in c.get("lost", [])}


HEAD = [user_line("u1", "Add an index on invoices.number."),
        reply("a1", "Added the index on invoices.number."),
        user_line("u2", RULE),
        reply("a2", "Understood; the migration stays off prod.")]
FOLD = [boundary("b1", "a3"), summary_line("s1", "Summary: an index was added on "
                                                  "invoices.number and checked."),
        user_line("u4", "Go on.")]


def test_a_rewound_turn_leaves_the_context_and_is_not_lost(tmp_path: Path) -> None:
    lines = chain(*HEAD, after("a1", user_line("u3", "Only check the index instead.")),
                  reply("a3", "The index is fine."), *FOLD)
    out = run(tmp_path, lines)
    assert dropped(out) == ["u2", "a2"]
    assert note(out) == ["1 rewind(s) (a person's message naming an earlier one as its "
                         "parent, as /rewind writes): 2 item(s) after it left the context "
                         "with no summary, not judged as lost"]
    (fold,) = [r["summaries"][0]["children"] for _, r in out[1:] if "compaction" in r]
    assert fold == ["u1", "a1", "u3", "a3"]
    assert not any("migration" in t or "psycopg" in t for t in lost(tmp_path))


def test_without_the_rewind_the_same_rule_is_lost(tmp_path: Path) -> None:
    """The control: u3 follows a2, so u2 was in the context the summary replaced."""
    lines = chain(*HEAD, user_line("u3", "Only check the index instead."),
                  reply("a3", "The index is fine."), *FOLD)
    out = run(tmp_path, lines)
    assert dropped(out) == [] and note(out) == []
    assert any("psycopg==3.1.18" in t for t in lost(tmp_path))


def test_parallel_tool_calls_progress_and_a_stop_hook_are_no_rewind(tmp_path: Path) -> None:
    """As the real transcripts write them: the second tool_use follows a progress line,
    each result names the call it answers, and a stop hook forks from the message
    before the reply; the next prompt follows the hook."""
    lines = chain(
        user_line("u1", RULE),
        tool_use("t1", "call-1"), progress("p1"), tool_use("t2", "call-2"),
        after("t1", tool_result("r1", "call-1", "one")),
        after("t2", tool_result("r2", "call-2", "two")),
        reply("a1", "Both ran."),
        after("r2", stop_hook("h1")),
        user_line("u2", "Now summarise what ran."),
        reply("a2", "Two commands ran."))
    out = run(tmp_path, lines)
    assert dropped(out) == [] and note(out) == []
    assert ids(out) == ["u1", "call-1", "call-2", "call-1:result", "call-2:result", "a1",
                        "u2", "a2"]


def test_a_queued_message_then_a_result_is_no_rewind(tmp_path: Path) -> None:
    """A message typed while a tool runs opens a turn after the call; the result that
    follows names the call: a line before a person's turn, but a tool result never
    rewinds."""
    queued = {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-h",
              "content": "Also keep the TTL at 300 s."}
    lines = chain(user_line("u1", RULE), tool_use("t1", "call-1"), queued,
                  after("t1", tool_result("r1", "call-1", "done")),
                  reply("a1", "Done; TTL noted."))
    out = run(tmp_path, lines)
    assert dropped(out) == [] and note(out) == []


def test_a_rewind_to_the_first_prompt_drops_everything_before(tmp_path: Path) -> None:
    """The first prompt hangs from progress lines whose first has a null parent; a
    rewind to it names the last of them."""
    lines = chain(progress("p0"), progress("p1"), *HEAD,
                  after("p1", user_line("u3", "Start over: only check the index.")))
    lines[0]["parentUuid"] = None
    out = run(tmp_path, lines)
    assert dropped(out) == ["u1", "a1", "u2", "a2"]
    assert ids(out) == ["u3"]


def test_a_chain_from_another_root_places_nothing(tmp_path: Path) -> None:
    """A parent chain ending at a null parent other than the first prompt's (a hook's
    lines at a resume, say) is not known to be a rewind: nothing leaves."""
    lines = chain(progress("p0"), *HEAD, progress("q0"), progress("q1"),
                  after("q1", user_line("u3", "Resumed: check the index.")))
    lines[0]["parentUuid"] = None
    lines[5]["parentUuid"] = None
    out = run(tmp_path, lines)
    assert dropped(out) == [] and len(ids(out)) == 5


def test_a_parent_not_in_the_file_places_nothing(tmp_path: Path) -> None:
    lines = chain(*HEAD, after("zz-not-here", user_line("u3", "Check the index.")))
    out = run(tmp_path, lines)
    assert dropped(out) == [] and len(ids(out)) == 5


def test_a_rewind_to_the_first_prompt_after_a_compaction(tmp_path: Path) -> None:
    """The first prompt after a compaction follows its summary line; a rewind to it
    names the summary: what came after the summary leaves, the summary stays."""
    lines = chain(*HEAD, reply("a3", "Checked."), *FOLD, reply("a4", "Going on."),
                  after("s1", user_line("u5", "Instead, stop here.")))
    lines[len(HEAD) + 1]["parentUuid"] = None  # the boundary is a root, as written
    out = run(tmp_path, lines)
    assert dropped(out) == ["u4", "a4"]
    assert ids(out) == ["s1", "u5"]


def test_a_rewind_across_a_compaction_is_not_placed(tmp_path: Path) -> None:
    """A line naming a message the compaction folded: what it would cut is not known
    (the fold already took it), so nothing more leaves."""
    lines = chain(*HEAD, reply("a3", "Checked."), *FOLD, reply("a4", "Going on."),
                  after("a1", user_line("u5", "Back to before the rule.")))
    out = run(tmp_path, lines)
    assert dropped(out) == [] and note(out) == []
    assert ids(out) == ["s1", "u4", "a4", "u5"]


def test_a_command_line_after_the_rewind_places_it(tmp_path: Path) -> None:
    """A person's command (its meta lines) may be the first line after a rewind; the
    prompt then follows it, and the second rewind goes back further."""
    command = user_line("c1", "<command-name>/model</command-name>\n"
                              "<command-args>opus</command-args>")
    lines = chain(*HEAD, after("a1", command), user_line("u3", "Check the index."),
                  reply("a3", "Fine."),
                  after("u1", user_line("u4", "Redo it from the start.")))
    out = run(tmp_path, lines)
    assert dropped(out) == ["u2", "a2", "a1", "c1", "u3", "a3"]
    assert ids(out) == ["u1", "u4"]
    assert note(out)[0].startswith("2 rewind(s)")


def test_a_null_parent_after_a_null_first_parent_is_a_rewind_to_it(tmp_path: Path) -> None:
    """A session whose first prompt has a null parent: a rewind to it writes the new
    prompt with a null parent too (Claude Code reads a null parent as a root)."""
    lines = chain(*HEAD, after("x", user_line("u3", "Start over: only check the index.")))
    lines[0]["parentUuid"] = None
    lines[-1]["parentUuid"] = None
    out = run(tmp_path, lines)
    assert dropped(out) == ["u1", "a1", "u2", "a2"]
    assert ids(out) == ["u3"]
    # no round of its own: they leave in the round the new prompt opens
    (rnd,) = [r for at, r in out[1:] if r.get("evicted")]
    assert [s["id"] for s in rnd["spans"]] == ["u3"]


def test_a_null_parent_needs_a_null_first_parent(tmp_path: Path) -> None:
    """The first prompt hangs from a line not in the file (a resumed session): a later
    null parent is not known to go back to it, and after a compaction no null parent
    places anything."""
    lines = chain(*HEAD, after("x", user_line("u3", "Check the index.")))
    lines[0]["parentUuid"] = "not-in-the-file"
    lines[-1]["parentUuid"] = None
    assert dropped(run(tmp_path, lines)) == []
    lines = chain(*HEAD, reply("a3", "Checked."), *FOLD,
                  after("x", user_line("u5", "Check the index.")))
    lines[0]["parentUuid"] = None
    lines[-1]["parentUuid"] = None
    assert dropped(run(tmp_path, lines)) == []


def test_a_file_of_null_parents_is_no_tree(tmp_path: Path) -> None:
    """Every line's parent written null (a converter's file, not Claude Code's): a null
    parent goes back to nothing, and every turn stays."""
    lines = [{**obj, "parentUuid": None} for obj in HEAD]
    assert dropped(run(tmp_path, lines)) == []


def test_a_rewound_fact_is_no_loss_by_eviction_either(tmp_path: Path) -> None:
    """The turns taken back left with no fold: the recall analysis read their facts as
    lost by eviction (the JSON's lost_discriminators, the recall debt) while the note
    said "not judged as lost"."""
    lines = chain(*HEAD, after("a1", user_line("u3", "Only check the index instead.")),
                  reply("a3", "The index is fine."), *FOLD)
    run(tmp_path, lines)
    report = api.audit(str(tmp_path / "session.jsonl"))
    texts = [d["text"] for d in report.extra["lost_discriminators"]]
    assert not any("psycopg" in t or "migration" in t for t in texts), texts


def test_a_products_line_that_forks_places_no_rewind(tmp_path: Path) -> None:
    """adv135 #1: a line not sent to the model (or the product's isMeta text) named a
    message before the person's turn, and the next prompt continued the old branch: the
    turn was cut at the fork and its rule's loss hidden.  Only a person's turn places a
    rewind."""
    for extra in ({"isVisibleInTranscriptOnly": True}, {"isMeta": True}):
        fork = after("a1", user_line("m1", "Some note of the product's.", **extra))
        lines = chain(*HEAD, fork, after("a2", user_line("u3", "Go on.")),
                      reply("a3", "Going on."), *FOLD)
        out = run(tmp_path, lines)
        assert dropped(out) == [] and note(out) == [], extra
        assert any("psycopg==3.1.18" in t for t in lost(tmp_path)), extra


def test_a_line_naming_itself_places_nothing(tmp_path: Path) -> None:
    """adv135 #4: a line reusing the first prompt's uuid and naming itself as parent."""
    lines = chain(*HEAD, {**user_line("u1", "Again."), "parentUuid": "u1"})
    assert dropped(run(tmp_path, lines)) == []


def test_the_new_branchs_own_lines_before_the_prompt_stay(tmp_path: Path) -> None:
    """After a rewind, a file attached before the new prompt hangs from the rewind's
    message, and the prompt from it: the file is in the new branch, not taken back."""
    attachment = {"type": "attachment", "uuid": "f1", "sessionId": "s-h", "attachment": {
        "type": "file", "filename": "/w/db.yaml", "content": {
            "type": "text", "file": {"filePath": "/w/db.yaml", "content": "port: 6543"}}}}
    lines = chain(*HEAD, after("a1", attachment), user_line("u3", "Use that port."))
    out = run(tmp_path, lines)
    assert dropped(out) == ["u2", "a2"]
    assert ids(out) == ["u1", "a1", "f1", "u3"]


def test_a_new_branch_too_long_to_walk_cuts_nothing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """adv136 #8: past the walk's bound the new branch is not known: nothing is cut
    (an attachment farther up was cut, a loss hidden)."""
    from compaction_audit.io import claude_branches

    monkeypatch.setattr(claude_branches, "PATH_MAX", 2)
    hooks = [after("a1", progress("p1")), progress("p2"), progress("p3")]
    lines = chain(*HEAD, *hooks, user_line("u3", "Check the index."))
    assert dropped(run(tmp_path, lines)) == []
    monkeypatch.setattr(claude_branches, "PATH_MAX", 3)
    assert dropped(run(tmp_path, lines)) == ["u2", "a2"]
