"""Finished work: lost facts stated under a work item the log closed before the fold,
or in a commit message, rank in tier 7 and are not facts that matter
(:mod:`compaction_audit.recall.finished`).

Small native logs in our own words: round 0 reads two task specs (one tool result,
two sections), round 1 holds the calls, the fold comes after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from compaction_audit import api
from compaction_audit.recall.finished import finished_work
from compaction_audit.recall.finished.commands import closings, commands
from compaction_audit.recall.ranking import LOW_TIERS, TIER_NAMES, add_tiers, rank_lost
from compaction_audit.report.json_report import render_json
from compaction_audit.report.model import Report

SESSION = {"type": "session", "schema": "compaction-audit/1", "session_id": "finished"}
SPECS = "\n".join([
    "\u25cb acme-ui.1 \u00b7 Cache the avatar thumbnails   [open]",
    "Requirements:",
    "- Thumbnails must never exceed 48 KB on disk.",
    "",
    "\u25cb acme-ui.2 \u00b7 Retry the upload queue   [open]",
    "Depends on:",
    "  -> acme-ui.1: Cache the avatar thumbnails",
    "- acme-ui.1: Cache the avatar thumbnails",
    "Requirements:",
    "- Retries must stop after 7 attempts per upload.",
])


def span(sid: str, source: str, text: str) -> dict[str, Any]:
    return {"id": sid, "tokens": 20, "text": text, "source": source}


def write(path: Path, calls: list[dict[str, Any]], fold_round: int = 2,
          late: list[dict[str, Any]] | None = None, specs: str = SPECS) -> str:
    """Line 2: round 0 reads the specs (span ``r1``); line 3: round 1 with ``calls``;
    line 4: the fold of ``r1`` into a summary that keeps neither requirement (round
    ``fold_round``); ``late`` calls at the round after it (line 5)."""
    records: list[dict[str, Any]] = [
        SESSION,
        {"type": "round", "round": 0, "spans": [span("r1", "tool_result:Bash", specs)]},
        {"type": "round", "round": 1, "spans": calls},
        {"type": "round", "round": fold_round,
         "summaries": [{"id": "m1", "tokens": 5, "children": ["r1"],
                        "text": "Worked through the acme tasks."}],
         "evicted": ["r1"]},
    ]
    if late is not None:
        records.append({"type": "round", "round": fold_round + 1, "spans": late})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def lost(path: str) -> dict[str, dict[str, Any]]:
    doc = orjson.loads(render_json(Report([api.audit(path)], []), single=True))
    return {d["text"]: d for d in doc["lost_discriminators"]}


def lost_of_call(tmp_path: Path, source: str, text: str) -> list[dict[str, Any]]:
    """The lost facts of one call (span ``g1``, round 0) that round 1 folds away."""
    path = tmp_path / "call.jsonl"
    records = [SESSION,
               {"type": "round", "round": 0, "spans": [span("g1", source, text)]},
               {"type": "round", "round": 1,
                "summaries": [{"id": "m1", "tokens": 5, "children": ["g1"],
                               "text": "Worked on the queue."}],
                "evicted": ["g1"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return [d for d in lost(str(path)).values() if d["span"] == "g1"]


AVATAR = "Thumbnails must never exceed 48 KB on disk"
RETRY = "Retries must stop after 7 attempts per upload"


def test_a_closed_items_spec_is_finished_work_and_an_open_ones_is_not(
        tmp_path: Path) -> None:
    rows = lost(write(tmp_path / "t.jsonl", [
        span("c1", "tool_call:Bash", "tracker close acme-ui.1\nClose the avatar task")]))
    avatar, retry = rows[AVATAR], rows[RETRY]
    assert (avatar["tier"], avatar["tier_name"]) == (7, "finished work")
    assert avatar["finished_item"] == "acme-ui.1" and avatar["finished_line"] == 3
    assert avatar["tier_why"] == ("under acme-ui.1, which a call closed at line 3 before "
                                  "the compaction")
    # acme-ui.2's section lists acme-ui.1 as a dependency, indented and as a list
    # item: neither starts a section, so the retry requirement stays acme-ui.2's
    assert retry["tier"] == 3 and retry["finished_item"] is None
    doc = orjson.loads(render_json(Report([api.audit(str(tmp_path / "t.jsonl"))], []),
                                   single=True))
    assert doc["lost_tiers"]["7"] >= 1


def test_an_argument_list_one_per_line_closes_its_item(tmp_path: Path) -> None:
    # a Codex rollout writes ["tracker", "close", "acme-ui.1"] one argument per line
    rows = lost(write(tmp_path / "t.jsonl", [
        span("c1", "tool_call:shell", "tracker\nclose\nacme-ui.1\n/work/repo")]))
    assert rows[AVATAR]["finished_item"] == "acme-ui.1"
    # an item on a line of its own far from any closing word closes nothing
    rows = lost(write(tmp_path / "u.jsonl", [
        span("c1", "tool_call:shell", "close\nthe\nlog\nfirst\nacme-ui.1")]))
    assert rows[AVATAR]["finished_item"] is None


def test_nothing_is_finished_without_a_call_that_closes_before_the_fold(
        tmp_path: Path) -> None:
    # a call that only shows or updates the item closes nothing
    rows = lost(write(tmp_path / "a.jsonl", [
        span("c1", "tool_call:Bash", "tracker show acme-ui.1"),
        span("c2", "tool_call:Bash", "tracker update acme-ui.1 --status in_progress")]))
    assert rows[AVATAR]["tier"] == 3 and rows[AVATAR]["finished_item"] is None
    # the tool's result saying "closed" is no call: only what the agent ran counts
    rows = lost(write(tmp_path / "b.jsonl", [
        span("c1", "tool_result:Bash", "acme-ui.1 closed by someone else")]))
    assert rows[AVATAR]["finished_item"] is None
    # closed after the fold: the task was still open when the compaction dropped it
    rows = lost(write(tmp_path / "c.jsonl", [], late=[
        span("c1", "tool_call:Bash", "tracker close acme-ui.1")]))
    assert rows[AVATAR]["tier"] == 3 and rows[AVATAR]["finished_item"] is None


def test_a_negated_close_or_a_reopen_leaves_the_task_open(tmp_path: Path) -> None:
    for n, calls in enumerate([
        ["git commit -m 'acme-ui.1 is not done yet'"],
        ["echo \"don't close acme-ui.1 yet\""],
        ["tracker close acme-ui.1", "tracker reopen acme-ui.1"],
        ["tracker close acme-ui.1", "tracker update acme-ui.1 --status in_progress"],
    ]):
        rows = lost(write(tmp_path / f"t{n}.jsonl", [
            span(f"c{k}", "tool_call:Bash", text) for k, text in enumerate(calls)]))
        assert rows[AVATAR]["finished_item"] is None, calls
        assert rows[AVATAR]["tier"] == 3
    # opened again, then closed again (in the record's order): finished
    rows = lost(write(tmp_path / "again.jsonl", [
        span("c1", "tool_call:Bash", "tracker close acme-ui.1"),
        span("c2", "tool_call:Bash", "tracker reopen acme-ui.1"),
        span("c3", "tool_call:Bash", "tracker close acme-ui.1")]))
    assert rows[AVATAR]["finished_item"] == "acme-ui.1"
    # closed before the fold, opened again after it: it was finished when it was lost
    rows = lost(write(tmp_path / "late.jsonl", [
        span("c1", "tool_call:Bash", "tracker close acme-ui.1")], late=[
        span("c2", "tool_call:Bash", "tracker reopen acme-ui.1")]))
    assert rows[AVATAR]["finished_item"] == "acme-ui.1"


def test_a_file_name_on_a_closing_line_is_no_work_item(tmp_path: Path) -> None:
    specs = SPECS.replace("acme-ui.1", "cache-avatars.ts")
    path = write(tmp_path / "t.jsonl", [
        span("c1", "tool_call:Edit", "close the handle in cache-avatars.ts")], specs=specs)
    assert lost(path)[AVATAR]["finished_item"] is None


def test_a_commit_message_is_finished_work(tmp_path: Path) -> None:
    message = ("git commit -m \"$(cat <<'EOF'\nfeat: upload queue\n\nConstraints:\n"
               "- Retries must stop after 9 attempts per upload\n"
               "- Never retry a 4xx response\nEOF\n)\"")
    rows = lost_of_call(tmp_path, "tool_call:Bash", message)
    assert {d["text"] for d in rows} >= {"Never retry a 4xx response",
                                         "Retries must stop after 9 attempts per upload"}
    assert {d["tier"] for d in rows} == {7}
    assert {d["finished_item"] for d in rows} == {"git commit"}
    assert rows[0]["tier_why"] == "in a commit message (line 2): work done and recorded"


def test_finished_work_is_a_low_tier_after_the_others() -> None:
    assert TIER_NAMES[7] == "finished work" and 7 in LOW_TIERS
    frame = pl.DataFrame({
        "kind": ["requirement"] * 4, "text": ["Keep the cache warm at all times"] * 4,
        "span_source": ["user", "tool_result:Bash", "tool_result:Bash", "tool_result:Bash"],
        "span_type": ["prose", "spec", "spec", "spec"],
        "asked_again_round": [None, 5, None, None],
        "finished_item": ["x-1", "x-1", "x-1", None],
        "finished_line": [3, 3, 3, None]},
        schema_overrides={"asked_again_round": pl.Int64})
    # a person's fact and one asked again keep their tier; the others are tier 7
    assert add_tiers(frame)["tier"].to_list() == [2, 1, 7, 3]
    # a frame without the columns (a fold's child) ranks as before
    assert add_tiers(frame.drop("finished_item", "finished_line"))["tier"].to_list() == [
        2, 1, 3, 3]


def test_within_a_tier_facts_not_read_again_come_first() -> None:
    frame = pl.DataFrame({
        "kind": ["requirement"] * 3,
        "text": ["Keep the cache warm always", "Never retry twice per upload",
                 "Stop after seven attempts"],
        "span_source": ["tool_result:Bash"] * 3, "span_type": ["spec"] * 3,
        "asked_again_round": [None] * 3, "rank": [1, 1, 1],
        "span": ["a", "b", "c"], "span_line": [30, 20, 10],
        "reread_line": [40, None, None]},
        schema_overrides={"asked_again_round": pl.Int64, "reread_line": pl.Int64})
    # later spans first, but the one read again at line 40 goes after the others
    assert rank_lost(frame)["span"].to_list() == ["b", "c", "a"]


def test_without_calls_the_columns_are_null_and_the_rows_kept() -> None:
    lost_rows = pl.DataFrame({"span": ["r1", "r2"], "text_line": [1, 2],
                              "fold_round": [2, 2], "fold_line": [4, 4]})
    items = pl.DataFrame({"id": ["r1", "r2"], "kind": ["span", "span"],
                          "source": ["tool_result:Bash", "user"],
                          "text": ["* a-1 · x\ny", "close a-1"], "round": [0, 1],
                          "source_line": [2, 3]})
    out = finished_work(lost_rows, items)
    assert out.columns == [*lost_rows.columns, "finished_item", "finished_line"]
    assert out["finished_item"].to_list() == [None, None]  # a person's words close nothing
    assert out.schema["finished_line"] == pl.Int64


def test_a_plan_that_mentions_git_commit_is_no_commit(tmp_path: Path) -> None:
    plan = ("Requirements:\n- Retries must stop after 9 attempts per upload\n\n"
            "When tests pass: git commit and open a PR.")
    rows = lost_of_call(tmp_path, "tool_call:Write", plan)
    assert rows and all(d["finished_item"] is None for d in rows)


EPIC = "\n".join([
    "\u25cb acme-ui \u00b7 Media pipeline   [epic]",
    "Constraints:",
    "- Uploads must never block the interface thread.",
    "",
    "\u25cb acme-ui.2 \u00b7 Upload queue   [open]",
    "Requirements:",
    "- Retries must stop after 7 attempts per upload.",
])
BLOCK = "Uploads must never block the interface thread"


def test_an_epic_is_finished_only_when_every_item_below_it_is(tmp_path: Path) -> None:
    def epic(name: str, closes: str) -> dict[str, dict[str, Any]]:
        return lost(write(tmp_path / name, [span("c1", "tool_call:Bash", closes)],
                          specs=EPIC))
    # acme-ui.2, below the epic, is still open
    rows = epic("open.jsonl", "tracker close acme-ui")
    assert rows[BLOCK]["finished_item"] is None and rows[BLOCK]["tier"] == 3
    assert rows[RETRY]["finished_item"] is None  # its section, not the epic's
    rows = epic("done.jsonl", "tracker close acme-ui.2 acme-ui")
    assert rows[BLOCK]["finished_item"] == "acme-ui"
    assert rows[RETRY]["finished_item"] == "acme-ui.2"


def test_a_loss_without_a_fold_is_judged_where_it_was_lost(tmp_path: Path) -> None:
    # round 1 evicts the spec with no summary; the task closes at round 2, afterwards
    path = tmp_path / "t.jsonl"
    records = [SESSION,
               {"type": "round", "round": 0, "spans": [span("r1", "tool_result:Bash", SPECS)]},
               {"type": "round", "round": 1, "evicted": ["r1"]},
               {"type": "round", "round": 2,
                "spans": [span("c1", "tool_call:Bash", "tracker close acme-ui.1")]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    rows = lost(str(path))
    assert rows[AVATAR]["cause"] == "eviction" and rows[AVATAR]["finished_item"] is None


CLOSINGS = [
    # (a call's text, what it closes (True) or opens again (False), in order)
    ("bd close spotter-gqc.1 spotter-gqc.2 spotter-gqc 2>&1\nClose all epic tasks",
     [("spotter-gqc.1", True), ("spotter-gqc.2", True), ("spotter-gqc", True)]),
    ('bd close --reason "shipped" acme-ui.2', [("acme-ui.2", True)]),
    ("BEADS_DIR=/work/.beads bd --no-daemon close acme-ui.2 2>&1", [("acme-ui.2", True)]),
    ("bd close acme-ui.1,acme-ui.2", [("acme-ui.1", True), ("acme-ui.2", True)]),
    ("bd update acme-ui.2 --status closed", [("acme-ui.2", True)]),
    ("jira issue resolve acme-ui.2", [("acme-ui.2", True)]),
    ("bd reopen acme-ui.2", [("acme-ui.2", False)]),
    ("bd update acme-ui.2 -s in_progress", [("acme-ui.2", False)]),
    ("tracker\nclose\nacme-ui.1\n/work/repo", [("acme-ui.1", True)]),  # Codex argv
    ("(cd repo && bd close acme-ui.2) # done with acme-ui.1", [("acme-ui.2", True)]),
    # adv39: closing one task while claiming the next; a loop's "done"; code, prose
    ("tracker close acme-ui.1 && tracker update acme-ui.2 --status in_progress",
     [("acme-ui.1", True), ("acme-ui.2", False)]),
    ('tracker close acme-ui.1 --reason "done; acme-ui.2 next"', [("acme-ui.1", True)]),
    ("for id in acme-ui.1 acme-ui.2; do tracker show $id; done", []),
    ("// TODO(acme-ui.2): close the socket once acme-ui.2 lands", []),
    ("echo 'acme-ui.2 is not done' && echo \"don't close acme-ui.2 yet\"", []),
    # adv40: quoted text, here-documents, prose, dry runs
    ('bd comment acme-ui.2 "blocked; cannot close acme-ui.2 yet"', []),
    ("cat >> NOTES.md <<'EOF'\nbd close acme-ui.2\nEOF", []),
    ('git commit -m "WIP; will close acme-ui.2 after review"', []),
    ('echo "tests pass; ready to close acme-ui.2 tomorrow"', []),
    ("Next we close acme-ui.2 once retries are capped.", []),
    ("Then close acme-ui.2 when CI is green [pending]", []),
    ("bd close acme-ui.2 --dry-run", []),
    ("bd close acme-ui.2 --help", []),
    ("close\nthe\nlog\nfirst\nacme-ui.1", []),
    # adv41: a quoted or unknown state opens; printing, git, shell keywords, prose
    ('bd update acme-ui.1 --status "in_progress"', [("acme-ui.1", False)]),
    ("bd update acme-ui.1 --status=in_review", [("acme-ui.1", False)]),
    ('linear issue update acme-ui.1 --state "In Progress"', [("acme-ui.1", False)]),
    ('bd update acme-ui.1 --status "closed"', [("acme-ui.1", True)]),
    ("bd close acme-ui.2 --reason shipped", [("acme-ui.2", True)]),
    ("echo done acme-ui.1", []),
    ("echo bd close acme-ui.1", []),
    ("git checkout -b close acme-ui.1", []),
    ("if false; then bd close acme-ui.1; fi", []),
    ("Let me close acme-ui.1", []),
    ("We can now close acme-ui.1", []),
    # adv44: a script whose first line is one word is a script, read by its lines
    ("date\nnpm run lint\nbd reopen acme-ui.1", [("acme-ui.1", False)]),
    ("pwd\ngit add -A\nbd close acme-ui.1", [("acme-ui.1", True)]),
]

ARGV = {
    # adv43: an argument list's lines are arguments, read as commands only in a shell's
    # script: a commit message or an echo that names a close closes nothing
    "echo\nbd close acme-ui.1": [],
    "git\ncommit\n-m\nbd close acme-ui.1": [],
    "bash\n-lc\necho bd close acme-ui.1": [],
    "bash\n-lc\nbd close acme-ui.1\n/work/repo": [("acme-ui.1", True)],
    "/bin/sh\n-c\nmake test && bd close acme-ui.2": [("acme-ui.2", True)],
    "tracker\nclose\nacme-ui.1\n/work/repo": [("acme-ui.1", True)],
    # adv44: Windows shells
    "powershell.exe\n-Command\nbd close acme-ui.1": [("acme-ui.1", True)],
    "pwsh\n-Command\nbd reopen acme-ui.1": [("acme-ui.1", False)],
    "C:\\Windows\\System32\\cmd.exe\n/c\nbd close acme-ui.2": [("acme-ui.2", True)],
}


@pytest.mark.parametrize(("text", "want"), ARGV.items())
def test_what_an_argument_list_closes_or_opens(text: str, want: list[tuple[str, bool]]
                                                ) -> None:
    assert closings(commands(text, argv=True)) == want


@pytest.mark.parametrize(("text", "want"), CLOSINGS)
def test_what_a_calls_commands_close_or_open(text: str, want: list[tuple[str, bool]]
                                              ) -> None:
    assert closings(commands(text)) == want


CLOSE_1 = span("c1", "tool_call:Bash", "bd close acme-ui.1")


def test_only_a_header_starts_a_section(tmp_path: Path) -> None:
    # adv40: a heading that mentions an item, a reference line, a table row, an arrow
    # or a bullet inside acme-ui.2's spec took its requirement into acme-ui.1's section
    for n, line in enumerate([
        "## Unblocked now that acme-ui.1 is closed",
        "acme-ui.1: the thumbnail cache (closed).",
        "\n| acme-ui.1 | closed |\n",
        "\u2192 acme-ui.1: Thumbnail cache",
        "\u2022 acme-ui.1 \u00b7 dep",
        "\nacme-ui.1: the avatar cache this builds on is done.\n",  # adv41: no mark
    ]):
        rows = lost(write(tmp_path / f"t{n}.jsonl", [CLOSE_1],
                          specs=SPECS.replace("Depends on:", "Depends on:\n" + line)))
        assert rows[RETRY]["finished_item"] is None, line
        assert rows[AVATAR]["finished_item"] == "acme-ui.1", line
    # a heading no item leads ends the section before it
    specs = SPECS.replace("\n\n\u25cb acme-ui.2", "\n## Constraints for all work\n"
                          "- Every upload must stay under 5 MB.\n\n\u25cb acme-ui.2")
    rows = lost(write(tmp_path / "h.jsonl", [CLOSE_1], specs=specs))
    assert rows["Every upload must stay under 5 MB"]["finished_item"] is None
    assert rows[AVATAR]["finished_item"] == "acme-ui.1"


def test_a_commit_call_demotes_its_message_only(tmp_path: Path) -> None:
    script = ("cat > RULES.md <<'EOF'\nConstraints:\n"
              "- Retries must stop after 9 attempts per upload\n"
              "- Never retry a 4xx response\nEOF\ngit add RULES.md && git commit -m 'add rules'")
    rows = {d["text"]: d for d in lost_of_call(tmp_path, "tool_call:Bash", script)}
    for text in ("Never retry a 4xx response", "Retries must stop after 9 attempts per upload"):
        assert rows[text]["finished_item"] is None  # the file's text, not the message


def test_only_a_shell_tools_commands_close(tmp_path: Path) -> None:
    # adv41: a pending todo "Commit and close acme-ui.1" took a session from FAIL to
    # WARN; a plan step, a subagent's prompt close nothing either
    for n, source in enumerate(["tool_call:TodoWrite", "tool_call:update_plan",
                                "tool_call:Task"]):
        rows = lost(write(tmp_path / f"t{n}.jsonl", [
            span("c1", source, "bd close acme-ui.1")]))
        assert rows[AVATAR]["finished_item"] is None, source
    for n, source in enumerate(["tool_call:shell", "tool_call:exec_command",
                                "tool_call:execute_command", "tool_call:run_shell_command"]):
        rows = lost(write(tmp_path / f"s{n}.jsonl", [
            span("c1", source, "bd close acme-ui.1")]))
        assert rows[AVATAR]["finished_item"] == "acme-ui.1", source


def test_a_document_with_crlf_line_ends_keeps_its_sections() -> None:
    from compaction_audit.recall.finished.sections import items_of_lines

    want = {**{n: "acme-ui.1" for n in range(1, 5)}, **{n: "acme-ui.2" for n in range(5, 11)}}
    assert items_of_lines(SPECS) == want
    assert items_of_lines(SPECS.replace("\n", "\r\n")) == want  # adv41: "\r" lines


@pytest.mark.parametrize(("result", "finished"), [
    ("\u2713 Closed acme-ui.1: Closed", True),
    ("Error: acme-ui.1 has open blockers; not closed", False),
    ("Exit code 1\nbd: no such issue", False),
    ('{"output": "", "metadata": {"exit_code": 2}}', False),
    ("The user doesn't want to proceed with this tool use.", False),
    # adv44: Codex's exec_command, Gemini CLI, Claude Code's other refusals, Cline's,
    # and bd closing several items and failing on one
    ("Chunk ID: 7\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:", False),
    ("Command: bd close acme-ui.1\nStdout: \nStderr: Error: no such issue\nExit Code: 1",
     False),
    ('{"error": "[Operation Cancelled] Reason: user cancelled"}', False),
    ("<tool_use_error>Error: No such tool available: Bash</tool_use_error>", False),
    ("The user doesn't want to take this action right now. STOP what you are doing.",
     False),
    ("Claude requested permissions to use Bash, but you haven't granted it yet.", False),
    ("The user denied this operation.", False),
    ("\u2713 Closed acme-ui.2: Closed\nError closing acme-ui.1: database is locked", False),
    ("Chunk ID: 7\nWall time: 0.2 seconds\nProcess exited with code 0\nOutput:\n"
     "\u2713 Closed acme-ui.1", True),
])
def test_a_close_whose_result_says_it_failed_closes_nothing(
        tmp_path: Path, result: str, finished: bool) -> None:
    """adv43: a close whose result was an error still made the task's spec finished
    work; the result is the span an adapter names after the call (``c1:result``)."""
    rows = lost(write(tmp_path / "t.jsonl", [
        CLOSE_1, span("c1:result", "tool_result:Bash", result)]))
    assert (rows[AVATAR]["finished_item"] == "acme-ui.1") is finished
    assert (rows[AVATAR]["tier"] == 7) is finished


def test_a_failed_commit_commits_nothing_and_a_failed_reopen_still_opens(
        tmp_path: Path) -> None:
    message = ("git commit -m \"$(cat <<'EOF'\nfeat: upload queue\n\nConstraints:\n"
               "- Retries must stop after 9 attempts per upload\nEOF\n)\"")

    def commit_facts(result: str) -> set[str | None]:
        path = tmp_path / "g.jsonl"
        records = [SESSION,
                   {"type": "round", "round": 0, "spans": [
                       span("g1", "tool_call:Bash", message),
                       span("g1:result", "tool_result:Bash", result)]},
                   {"type": "round", "round": 1,
                    "summaries": [{"id": "m1", "tokens": 5, "children": ["g1"],
                                   "text": "Worked on the queue."}], "evicted": ["g1"]}]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return {d["finished_item"] for d in lost(str(path)).values() if d["span"] == "g1"}

    assert commit_facts("[main 1a2b3c4] feat: upload queue") == {"git commit"}
    assert commit_facts("Exit code 128\nfatal: not a git repository") == {None}
    # a reopen whose result is an error is still taken as opening: the safe reading
    assert lost(write(tmp_path / "r.jsonl", [CLOSE_1]))[AVATAR]["tier"] == 7
    rows = lost(write(tmp_path / "r.jsonl", [
        CLOSE_1, span("o1", "tool_call:Bash", "bd reopen acme-ui.1"),
        span("o1:result", "tool_result:Bash", "Error: cannot reopen")]))
    assert rows[AVATAR]["finished_item"] is None


def test_only_codex_shell_calls_are_argument_lists(tmp_path: Path) -> None:
    """adv43/adv44: ``["echo", "bd close X"]`` (Codex's ``shell``, one argument per
    line) closes nothing, where the same two lines in a Bash script are two commands."""
    two_lines = "echo\nbd close acme-ui.1"
    rows = lost(write(tmp_path / "a.jsonl", [span("c1", "tool_call:shell", two_lines)]))
    assert rows[AVATAR]["finished_item"] is None
    rows = lost(write(tmp_path / "b.jsonl", [span("c1", "tool_call:Bash", two_lines)]))
    assert rows[AVATAR]["finished_item"] == "acme-ui.1"


def test_a_compactions_lost_list_says_which_item_was_finished(tmp_path: Path) -> None:
    # the same fact in the compaction's own list (compactions[].lost) as in
    # lost_discriminators: its item and the closing line (usertest7)
    path = tmp_path / "t.jsonl"
    lines = write(path, [span("c1", "tool_call:Bash", "tracker close acme-ui.1")])
    records = [json.loads(x) for x in Path(lines).read_text().splitlines()]
    records[3]["compaction"] = {"summary_id": "m1", "trigger": "auto"}
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    doc = orjson.loads(render_json(Report([api.audit(str(path))], []), single=True))
    (compaction,) = doc["compactions"]
    rows = {d["text"]: d for d in compaction["lost"]}
    assert (rows[AVATAR]["finished_item"], rows[AVATAR]["finished_line"]) == ("acme-ui.1", 3)
    assert (rows[RETRY]["finished_item"], rows[RETRY]["finished_line"]) == (None, None)


def _assistant_log(tmp_path: Path, text: str, close: str = "bd close acme-ui.1",
                   late: bool = False, source: str = "assistant") -> dict[str, dict[str, Any]]:
    """Round 0: the assistant's plan ``text`` (span ``a1``); round 1 (or round 3, after
    the fold, with ``late``): a Bash call ``close``; round 2: the fold of ``a1``."""
    call = {"type": "round", "round": 3 if late else 1,
            "spans": [span("c1", "tool_call:Bash", close)]}
    fold = {"type": "round", "round": 2,
            "summaries": [{"id": "m1", "tokens": 5, "children": ["a1"],
                           "text": "Worked through the acme tasks."}], "evicted": ["a1"]}
    records = [SESSION, {"type": "round", "round": 0, "spans": [span("a1", source, text)]},
               *([fold, call] if late else [call, fold])]
    path = tmp_path / "plan.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return {d["text"]: d for d in lost(str(path)).values() if d["span"] == "a1"}


def test_the_assistants_plan_of_a_closed_item_is_finished_work(tmp_path: Path) -> None:
    """usertest8: "`project.ex` to understand the Project resource, then implement
    gqc.5" ranked as an assistant decision after gqc.5 was closed (a call at line 1169,
    the compaction at 1256).  A plan step in the assistant's words ("implement X")
    naming one item the log closed before the fold (by its id less the project prefix
    too) is finished work; adv51: a standing rule stated under an item is not."""
    # (usertest36: with no comma, "Do not rebuild X before you implement ui.1" is one
    # negation, the order it forbids; the plan step here follows a comma)
    plan = "Do not rebuild the sprite sheet, then implement ui.1 in generated code."
    facts = _assistant_log(tmp_path, plan)
    # the negation's own words name no item, and the bare id is no plan step: each
    # keeps its tier (each rule is narrow)
    assert {(d["kind"], d["finished_item"], d["finished_line"], d["tier"])
            for d in facts.values()} == {("negation", None, None, 4),
                                         ("ordering", "acme-ui.1", 3, 7),
                                         ("identifier", None, None, 5)}, facts
    # a second possible item (a token with a digit) in the same clause: kept
    two = _assistant_log(tmp_path, plan.replace("ui.1", "ui.1 and acme-ui.2"))
    assert {d["finished_item"] for d in two.values()} == {None}
    # closed after the fold: the task was open when the plan was lost
    assert {d["finished_item"] for d in _assistant_log(tmp_path, plan, late=True).values()
            } == {None}
    # a person's words are not the assistant's plan: tier 2 stays
    typed = _assistant_log(tmp_path, plan, source="user")
    assert {(d["finished_item"], d["tier"]) for d in typed.values()} == {(None, 2)}
    # a short form two items share names neither
    both = _assistant_log(tmp_path, plan, close="bd close acme-ui.1 beta-ui.1")
    assert {d["finished_item"] for d in both.values()} == {None}


@pytest.mark.parametrize(("text", "close"), [
    # adv51: rules stated while working on an item outlive it
    ("From now on, every endpoint must return 404 before you implement ui.1.",
     "bd close acme-ui.1"),
    ("The user said: deploy only after QA signs off, then implement ui.1.",
     "bd close acme-ui.1"),
    ("Never merge without review, per the user's rule stated during ui.1.",
     "bd close acme-ui.1"),
    # a version is no short form of an item (release-v1.2 is not v1.2)
    ("The SDK must stay pinned at v1.2 until we implement v1.2 support.",
     "bd close release-v1.2"),
    # adv52: a rule inside the plan step, or in the message around it, outlives it
    ("Implement ui.1 without touching the billing tables, they are shared with prod.",
     "bd close acme-ui.1"),
    ("Whenever you implement ui.1, use the staging database, not prod.",
     "bd close acme-ui.1"),
    ("Only implement ui.1 after the migration is applied to staging, not prod.",
     "bd close acme-ui.1"),
    ("From now on:\nread the schema first, then implement ui.1.", "bd close acme-ui.1"),
    ("Note (applies to every ticket): read the schema, then implement ui.1.",
     "bd close acme-ui.1"),
])
def test_a_standing_rule_under_an_item_is_not_finished_work(tmp_path: Path, text: str,
                                                            close: str) -> None:
    facts = _assistant_log(tmp_path, text, close=close)
    assert facts and {d["finished_item"] for d in facts.values()} == {None}, facts


def test_a_fold_findings_dropped_fact_has_the_lost_tables_tier_and_its_name(
        tmp_path: Path) -> None:
    """usertest11: a finished spec requirement was tier 7 in a fold finding's children
    but named "spec requirement" there (the child's own name; the lost table said
    "finished work"): a reader grouping by name counted finished work as specs."""
    path = write(tmp_path / "t.jsonl", [
        span("c1", "tool_call:Bash", "tracker close acme-ui.1\nClose the avatar task")])
    doc = orjson.loads(render_json(Report([api.audit(path)], []),
                                   single=True, show_all=True))
    ranked = {d["text"]: (d["tier"], d["tier_name"]) for d in doc["lost_discriminators"]}
    dropped = {d["text"]: (d["tier"], d["tier_name"])
               for f in doc["findings"] for child in f["values"].get("children", [])
               for d in child["dropped"]}
    assert dropped[AVATAR] == ranked[AVATAR] == (7, "finished work")
    assert dropped[RETRY] == ranked[RETRY] == (3, "spec requirement")
