"""The Gemini CLI adapter, on a session file Gemini CLI 0.61.0 wrote itself (offline)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from compaction_audit.io import gemini_cli
from compaction_audit.io.detect import detect_format
from tests.foreign import (
    FIXTURES,
    all_spans,
    assert_output_refused,
    compaction_rounds,
    notes_and_spans,
    run_adapter,
    strict_then_lenient,
    working_set,
)

GEMINI = FIXTURES / "gemini-cli"
SESSION = GEMINI / "compression.jsonl"


def test_the_snapshot_rewrite_is_an_inferred_compaction() -> None:
    out = run_adapter(gemini_cli.records, SESSION)
    # six `$set.messages` rewrites (start, two resumes, ...): one holds a snapshot
    rewrites = [n for n, raw in enumerate(SESSION.read_text().splitlines(), 1)
                if '"$set":{"messages"' in raw]
    assert rewrites == [2, 8, 10, 16, 18, 25]
    (line, rnd), = compaction_rounds(out)
    info = rnd["compaction"]
    assert line == 25
    assert (info["strategy"], info["inferred"], info["trigger"]) == ("state_snapshot", True, None)
    # telemetry.log beside the session: the product's own before/after
    assert (info["tokens_before"], info["tokens_after"], info["tokens_from"]) == (120000, 257,
                                                                                  "telemetry")
    summary = rnd["summaries"][0]
    assert summary["text"].startswith(gemini_cli.SNAPSHOT_TAG)
    # folded: the two earlier exchanges (4 messages) and the listing's first result
    assert len(summary["children"]) == 5 and info["messages_removed"] == 4
    assert summary["children"][-1].endswith(":result")


def test_without_telemetry_the_session_measures_tokens(tmp_path: Path) -> None:
    shutil.copy(SESSION, tmp_path / "session.jsonl")
    (_, rnd), = compaction_rounds(run_adapter(gemini_cli.records, tmp_path / "session.jsonl"))
    info = rnd["compaction"]
    # tokens.input of the reply before the rewrite, and of the first reply after it
    assert (info["tokens_before"], info["tokens_after"]) == (120000, 9000)
    assert "tokens_from" not in info


def test_kept_history_rewritten_with_new_ids_stays_in_the_working_set() -> None:
    out = run_adapter(gemini_cli.records, SESSION)
    spans = all_spans(out)
    kept = working_set(out)
    texts = {spans[s].get("text") for s in kept if s in spans}
    assert "List the project files." in texts  # new id in the rewrite, same text
    assert any(spans[s]["source"] == "tool_call:list_directory" for s in kept if s in spans)
    # the session context is product text, kept; the "Got it." reply is the harness's
    harness = sorted(spans[s]["text"][:16] for s in kept
                     if s in spans and spans[s]["source"] == "harness:meta")
    assert harness == ["<session_context", "Got it. Thanks f"]


def test_a_record_written_twice_is_one_message() -> None:
    out = run_adapter(gemini_cli.records, SESSION)
    calls = [s for s in all_spans(out).values() if s["source"] == "tool_call:list_directory"]
    assert len(calls) == 1
    # the tool call took its share of the reply's 20 output tokens; the result none
    assert calls[0]["tokens"] == 20
    # the function response sent after the compression enters again, as a new span
    results = [s["id"] for s in all_spans(out).values()
               if s["source"] == "tool_result:list_directory"]
    assert [r.endswith(("result", "result#2")) for r in results] == [True, True]


def test_audit_lists_what_the_snapshot_dropped() -> None:
    (c,) = api.audit(str(SESSION)).compactions
    # what the person typed first, and the listing the snapshot did not restate
    assert {d["text"] for d in c["lost"]} == {"8443", "ops-7731", "11 bytes", "deploy.yaml"}


def lines_of(objs: list[object]) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


META = {"sessionId": "s", "projectHash": "p", "startTime": "t", "lastUpdated": "t",
        "kind": "main"}


def test_unseen_kind_is_said(tmp_path: Path) -> None:
    path = tmp_path / "session-x.jsonl"
    path.write_text(lines_of([{**META, "kind": "robot"},
                              {"id": "u", "type": "user", "content": [{"text": "hi"}]},
                              {"id": "g", "type": "tool_group", "content": "?"}]))
    assert notes_and_spans(gemini_cli.records, path) == ([
        "Gemini CLI format version robot not seen before; read as kind main",
        "1 message of a message type this reader does not know ('tool_group'): not read"],
        ["u"])


def test_bad_line_is_a_file_line_error_or_a_counted_skip(tmp_path: Path) -> None:
    path = tmp_path / "session-y.jsonl"
    path.write_text(lines_of([META, {"id": "u", "type": "user", "content": 5},
                              {"id": "v", "type": "user", "content": [{"text": "ok"}]}]))
    error, out, skipped = strict_then_lenient(gemini_cli.records, path)
    assert error == f"{path}:2: expected a string or a list (content)"
    assert skipped == [2] and list(all_spans(out)) == ["v"]


def test_a_session_from_before_json_lines_is_read_and_noted(tmp_path: Path) -> None:
    snapshot = f"{gemini_cli.SNAPSHOT_TAG}\n<overall_goal>Ship v2.</overall_goal>\n"
    doc = {"sessionId": "old", "projectHash": "p", "startTime": "t", "lastUpdated": "t",
           "messages": [
               {"id": "a", "type": "user", "content": [{"text": snapshot}]},
               {"id": "b", "type": "gemini", "content": "Got it."},
               {"id": "c", "type": "user", "content": [{"text": "Deploy to eu-west-2."}]}]}
    path = tmp_path / "session-old.json"
    path.write_text(json.dumps(doc, indent=2))
    assert detect_format(str(path)) == "gemini-cli"
    out = run_adapter(gemini_cli.records, path)
    assert out[0][1]["reader_notes"] == [
        "Gemini CLI single-JSON session (before JSON Lines) not seen before; read as its "
        "messages in order"]
    (line, rnd), = compaction_rounds(out)
    # the file was rewritten whole: nothing before the snapshot is left to fold
    assert line == 7 and rnd["spans"][0]["source"] == "harness:summary"
    assert [r["round"] for _, r in out[1:]] == [0, 1]  # then the typed turn
    # minified, on one line (adv65 #4: read as a JSON Lines metadata line, its
    # messages dropped: "no round records"), it is the same session, all on line 1
    path.write_text(json.dumps(doc))
    assert detect_format(str(path)) == "gemini-cli"
    one = run_adapter(gemini_cli.records, path)
    assert [r["round"] for _, r in one[1:]] == [0, 1]
    assert [[s["id"] for s in r["spans"]] for _, r in one[1:]] == [["line-1", "b"], ["c"]]


def test_a_second_compression_folds_the_first_snapshot() -> None:
    out = run_adapter(gemini_cli.records, GEMINI / "two-compressions" / "session.jsonl")
    (first_line, _), (second_line, second) = compaction_rounds(out)
    assert (first_line, second_line) == (25, 40)
    # the second snapshot summarizes a history that held the first: depth 2
    assert "line-25" in second["summaries"][0]["children"]
    info = second["compaction"]
    assert (info["tokens_before"], info["tokens_after"]) == (130000, 272)  # telemetry
    # the first listing request and reply, the first snapshot, the re-sent result and
    # the reply after it
    assert info["messages_removed"] == 5
    report = api.audit(str(GEMINI / "two-compressions" / "session.jsonl"))
    assert report.series["summary_depth_max"].to_list()[-1] == 2


@pytest.mark.parametrize(("value", "why"), [
    ("-257", "must be >= 0, got -257"),
    ("18446744073709551616", "must be <= 1000000000000, got 18446744073709551616"),
    ("257.5", "expected an integer, got a number"),
])
def test_a_bad_token_count_in_telemetry_names_telemetry_log(tmp_path: Path, value: str,
                                                            why: str) -> None:
    """adv18 F3: a negative count was shown ("120,000 -> -257 tokens"), 2**64 was
    blamed on the recording's line 25, and a float was dropped without a word."""
    shutil.copy(SESSION, tmp_path / "compression.jsonl")
    log = (GEMINI / "telemetry.log").read_text()
    assert log.count('"tokens_after": 257') == 1
    (tmp_path / "telemetry.log").write_text(log.replace('"tokens_after": 257',
                                                        f'"tokens_after": {value}'))
    with pytest.raises(LogError) as caught:
        run_adapter(gemini_cli.records, tmp_path / "compression.jsonl")
    assert caught.value.path == str(tmp_path / "telemetry.log")
    # the field named as every error names one (adv48: it was part of the message)
    assert (caught.value.message, caught.value.field) == (why, "attributes.tokens_after")


def test_telemetry_events_name_their_own_lines(tmp_path: Path) -> None:
    """An event's line was counted from the start of the file for each event (25,000
    events: 27 s; adv19b F2), over lines joined with a second newline and without the
    blank ones, so the line named was wrong (25 for line 14 here).  It is the line the
    event ends on, looked up from the lines read, after pretty-printed, one-line and
    blank lines alike."""
    shutil.copy(SESSION, tmp_path / "compression.jsonl")
    event = ('{"attributes": {"event.name": "gemini_cli.chat_compression", '
             '"tokens_before": 120000, "tokens_after": %s}}')
    other = '{\n  "attributes": {\n    "event.name": "gemini_cli.api_request"\n  }\n}'
    # lines 1-5, a blank 6, then 7, 8-12, 13 and 14
    lines = [other, "", event % 9000, other, event % 8000, event % -1]
    (tmp_path / "telemetry.log").write_text("\n".join(lines) + "\n")
    with pytest.raises(LogError) as caught:
        run_adapter(gemini_cli.records, tmp_path / "compression.jsonl")
    assert (caught.value.path, caught.value.line) == (str(tmp_path / "telemetry.log"), 14)
    assert caught.value.message == "must be >= 0, got -1"
    (tmp_path / "telemetry.log").write_text("\n".join(lines[:5]) + "\n")
    assert gemini_cli.read_telemetry(str(tmp_path / "telemetry.log"), None) == (
        [(120000, 9000), (120000, 8000)], None)
    # a write cut short stops the reading there, and says so (adv48)
    (tmp_path / "telemetry.log").write_text("\n".join([*lines[:3], '{"attributes": {',
                                                       event % 7000]) + "\n")
    assert gemini_cli.read_telemetry(str(tmp_path / "telemetry.log"), None) == (
        [(120000, 9000)], 8)


def test_a_linked_recording_reads_the_telemetry_beside_the_file_it_names(
        tmp_path: Path) -> None:
    """adv20 F2: a recording named through a symbolic link read no telemetry.log (its
    tokens_after went from 257, the product's, to an inferred 9000), and -o onto the
    target's telemetry.log replaced it.  Beside the link there is none, so the one
    beside the target is read, and -o may not name it."""
    (tmp_path / "real").mkdir()
    (tmp_path / "job").mkdir()
    shutil.copy(SESSION, tmp_path / "real" / "compression.jsonl")
    shutil.copy(GEMINI / "telemetry.log", tmp_path / "real" / "telemetry.log")
    link = tmp_path / "job" / "r.jsonl"
    link.symlink_to("../real/compression.jsonl")
    for path in (tmp_path / "real" / "compression.jsonl", link):
        (_line, rnd), = compaction_rounds(run_adapter(gemini_cli.records, path))
        assert rnd["compaction"]["tokens_after"] == 257, path
    assert_output_refused(link, tmp_path / "real" / "telemetry.log")


def test_records_of_a_shape_not_known_are_counted_not_dropped(tmp_path: Path) -> None:
    """adv29 F4: the compression's ``$set`` key renamed ``$Set`` made a failing session a
    plain PASS with no word.  An object line that is none of Gemini CLI's records, a
    ``$set`` key that is no field of its conversation record, and a message of a type
    it does not write (once per message id) are counted as not read."""
    lines = SESSION.read_text().splitlines()
    assert '"$set":{"messages"' in lines[24] and gemini_cli.SNAPSHOT_TAG in lines[24]
    renamed = tmp_path / "session-renamed.jsonl"
    renamed.write_text("\n".join([*lines[:24], lines[24].replace('"$set"', '"$Set"', 1),
                                  *lines[25:]]) + "\n")
    out = run_adapter(gemini_cli.records, renamed)
    assert compaction_rounds(out) == []
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [
        "1 line of a record shape (its keys) this reader does not know ('$Set'): not read"]
    report = api.audit(str(renamed))
    assert report.verdict().startswith("PASS (1 line not read, see the notes)")
    assert "lines_not_read" not in run_adapter(gemini_cli.records, SESSION)[0][1]

    path = tmp_path / "session-z.jsonl"
    path.write_text(lines_of([
        META, {"id": "u", "type": "user", "content": [{"text": "hi"}]},
        {"$set": {"Messages": [{"id": "u", "type": "user", "content": "hi"}],
                  "lastUpdated": "t2"}},
        {"id": "g", "type": "Gemini", "content": "hidden"},
        {"id": "g", "type": "Gemini", "content": "hidden, written again"},
        {"id": "n"}, {"$rewindTo": "u"}]))
    out = run_adapter(gemini_cli.records, path)
    assert out[0][1]["lines_not_read"] == 3
    assert out[0][1]["reader_notes"] == [
        "1 $rewindTo line(s) applied: the messages rewound left the context with no "
        "summary, not judged as lost",
        "1 line of a $set key this reader does not know ('Messages'): not read",
        "1 message of a message type this reader does not know ('Gemini'): not read",
        "1 line of a record shape (its keys) this reader does not know ('id'): not read"]


def _compression_line(lines: list[str]) -> int:
    """The index of the fixture's compression rewrite (the `$set.messages` holding the
    snapshot)."""
    return next(i for i, raw in enumerate(lines)
                if '"$set":{"messages"' in raw and gemini_cli.SNAPSHOT_TAG in raw)


def test_an_early_copy_of_the_compression_cannot_hide_it(tmp_path: Path) -> None:
    # adv30 F5: the compression record copied right after the session header made the
    # real one (snapshot text seen before) a sync: nothing folded, a plain PASS
    lines = SESSION.read_text().splitlines()
    at = _compression_line(lines)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([lines[0], lines[at], *lines[1:]]) + "\n")
    out = run_adapter(gemini_cli.records, path)
    (copy_line, copy), (real_line, real) = compaction_rounds(out)
    assert (copy_line, real_line) == (2, at + 2)
    assert copy["compaction"]["messages_removed"] == 0  # nothing before it to fold
    # the real one folds the two exchanges (4 messages, as without the copy), the copy's
    # snapshot, and the listing reply, whose call the copy already held (its result only)
    assert real["compaction"]["messages_removed"] == 6
    report = api.audit(str(path))
    lost = {d["text"] for c in report.compactions for d in c["lost"]}
    assert {"8443", "ops-7731"} <= lost
    assert report.verdict().startswith("FAIL")


def test_a_second_compression_reusing_a_snapshot_text_is_a_compaction(
        tmp_path: Path) -> None:
    # adv30 F5: the same snapshot written again over new messages drops them: read as a
    # second compaction, not a sync that folds nothing
    lines = SESSION.read_text().splitlines()
    at = _compression_line(lines)
    turn = [{"id": "n1", "timestamp": "t", "type": "user",
             "content": [{"text": "Cache nodes now live on port 7150."}]},
            {"id": "n2", "timestamp": "t", "type": "gemini",
             "content": "Noted: cache nodes on port 7150."}]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*lines, *map(json.dumps, turn), lines[at]]) + "\n")
    out = run_adapter(gemini_cli.records, path)
    (first, _), (second, rnd) = compaction_rounds(out)
    assert (first, second) == (at + 1, len(lines) + 3)
    # dropped: the first snapshot (its summary), the function response and the reply
    # after it, and the new turn (two messages)
    assert rnd["compaction"]["messages_removed"] == 5
    folded = {all_spans(out)[s].get("text") for s in rnd["summaries"][0]["children"]
              if s in all_spans(out)}
    assert {"Cache nodes now live on port 7150.", "Noted: cache nodes on port 7150."} <= folded


def test_a_resume_writing_a_seen_snapshot_again_is_a_sync() -> None:
    # the real recording: the resume after the first compression (line 33) writes the
    # first snapshot again with every message since; it drops nothing, so no compaction
    out = run_adapter(gemini_cli.records, GEMINI / "two-compressions" / "session.jsonl")
    assert [line for line, _ in compaction_rounds(out)] == [25, 40]


def test_a_copied_snapshot_in_a_single_json_session_cannot_hide_the_real_one(
        tmp_path: Path) -> None:
    snapshot = f"{gemini_cli.SNAPSHOT_TAG}\n<overall_goal>Ship v2.</overall_goal>\n"
    doc = {"sessionId": "old", "projectHash": "p", "startTime": "t", "lastUpdated": "t",
           "messages": [
               {"id": "x", "type": "user", "content": [{"text": snapshot}]},
               {"id": "a", "type": "user", "content": [{"text": "The key is in vault 42."}]},
               {"id": "b", "type": "gemini", "content": "Vault 42, noted."},
               {"id": "c", "type": "user", "content": [{"text": snapshot}]}]}
    path = tmp_path / "session-old.json"
    path.write_text(json.dumps(doc, indent=2))
    out = run_adapter(gemini_cli.records, path)
    (_, first), (_, second) = compaction_rounds(out)
    assert first["compaction"]["messages_removed"] == 0
    # the second copy of the snapshot drops the exchange before it: folded, with the first
    assert second["compaction"]["messages_removed"] == 3


def test_a_rewrite_that_drops_messages_without_a_snapshot_is_counted(
        tmp_path: Path) -> None:
    # the compression record with its summary tag renamed (a later version, or an
    # edit): no snapshot, yet it drops the two exchanges and nothing writes them back.
    # It was a sync, a plain PASS; now it is counted as not read, and the verdict says so
    lines = SESSION.read_text().splitlines()
    at = _compression_line(lines)
    renamed = lines[at].replace("state_snapshot>", "state_summary>")
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([*lines[:at], renamed, *lines[at + 1:]]) + "\n")
    out = run_adapter(gemini_cli.records, path)
    assert compaction_rounds(out) == []
    session = out[0][1]
    assert session["lines_not_read"] == 1
    assert session["reader_notes"] == [f"1 line {gemini_cli.DROPPED_NOTE}"]
    assert api.audit(str(path)).verdict().startswith("PASS (1 line not read, see the notes)")
    # the same cut as the last line of the file: counted too
    path.write_text("\n".join([*lines[:at], renamed]) + "\n")
    assert run_adapter(gemini_cli.records, path)[0][1]["lines_not_read"] == 1


def test_a_resume_writing_the_context_alone_then_the_history_is_no_loss() -> None:
    # Gemini CLI on resume: the session context alone (lines 8, 16), then the whole
    # history (lines 10, 18): the first drops the earlier messages, the next writes them
    # back, so nothing is counted
    out = run_adapter(gemini_cli.records, SESSION)
    assert "lines_not_read" not in out[0][1] and "reader_notes" not in out[0][1]


def test_a_resume_after_a_rewind_drops_nothing_the_rewind_left(tmp_path: Path) -> None:
    # the resume writes the session context alone, then a history without the rewound
    # turn: the rewind took that turn out (usertest68 #4), so nothing is cut, and nothing
    # counted as not read; a rewind to a message not in the context is counted
    context = {"id": "ctx", "type": "user", "content": [{"text": "<session_context>c"}]}
    turns = [{"id": "u1", "type": "user", "content": [{"text": "Use region eu-west-2."}]},
             {"id": "g1", "type": "gemini", "content": "Region eu-west-2, noted."},
             {"id": "u2", "type": "user", "content": [{"text": "Bucket is logs-7."}]},
             {"id": "g2", "type": "gemini", "content": "Bucket logs-7, noted."}]
    path = tmp_path / "session-r.jsonl"
    path.write_text(lines_of([META, {"$set": {"messages": [context]}}, *turns,
                              {"$rewindTo": "u2"}, META, {"$set": {"messages": [context]}},
                              {"$set": {"messages": [context, *turns[:2]]}}]))
    out = run_adapter(gemini_cli.records, path)
    session = out[0][1]
    assert "lines_not_read" not in session
    assert session["reader_notes"] == [
        "1 $rewindTo line(s) applied: the messages rewound left the context with no "
        "summary, not judged as lost"]
    (rewound,) = [r for at, r in out[1:] if at == 7]  # the $rewindTo line
    assert len(rewound["evicted"]) == 2 and "compaction" not in rewound
    # the resume's rewrites left the cut where the rewind put it: nothing else dropped
    assert all("evicted" not in r for at, r in out[1:] if at > 7)
    path.write_text(lines_of([META, *turns, {"$rewindTo": "gone"}]))
    session = run_adapter(gemini_cli.records, path)[0][1]
    assert session["lines_not_read"] == 1
    assert session["reader_notes"] == [f"1 line {gemini_cli.REWIND_NOTE}"]


def test_telemetry_that_does_not_match_the_compactions_is_said(tmp_path: Path) -> None:
    """adv48: the events are matched to the compactions in order; with one event gone
    the second's sizes moved onto the first compaction with no word, and a write cut
    short ended the reading silently.  Both are reader notes now."""
    folder = GEMINI / "two-compressions"
    shutil.copy(folder / "session.jsonl", tmp_path / "session.jsonl")
    text = (folder / "telemetry.log").read_text(encoding="utf-8")
    second = text.index("{", text.index("\n}") + 1)  # the second object starts there
    (tmp_path / "telemetry.log").write_text(text[:second] + '{"attributes": {\n',
                                            encoding="utf-8")
    notes = run_adapter(gemini_cli.records, tmp_path / "session.jsonl")[0][1]["reader_notes"]
    line = text[:second].count("\n") + 1
    assert [n for n in notes if "telemetry.log" in n] == [
        "telemetry.log holds 1 compression event(s) of this session for 2 compaction(s): "
        "their sizes are matched in order",
        f"telemetry.log: no JSON object could be read from line {line} on; its later "
        "events, if any, are not read"]


def test_a_null_in_telemetry_leaves_the_recordings_count(tmp_path: Path) -> None:
    """adv48: a null tokens_before in telemetry.log erased the recording's 120,000 (the
    recording alone gives 120,000 and 9,000; telemetry 120,000 and 257)."""
    shutil.copy(SESSION, tmp_path / "compression.jsonl")
    log = (GEMINI / "telemetry.log").read_text()
    assert log.count('"tokens_before": 120000') == 1
    (tmp_path / "telemetry.log").write_text(log.replace('"tokens_before": 120000',
                                                        '"tokens_before": null'))
    (_, rnd), = compaction_rounds(run_adapter(gemini_cli.records,
                                              tmp_path / "compression.jsonl"))
    info = rnd["compaction"]
    assert (info["tokens_before"], info["tokens_after"], info["tokens_from"]) == (
        120000, 257, "telemetry")


@pytest.mark.parametrize("kind", ["dangling link", "directory", "fifo"])
def test_a_telemetry_log_that_cannot_be_read_is_said(tmp_path: Path, kind: str) -> None:
    """adv49: a telemetry.log that is there but is no regular file was taken for none:
    the sizes moved from the telemetry's (-> 257) to the recording's (-> 9,000) with no
    word.  A note says so, and the recording's sizes stand."""
    shutil.copy(SESSION, tmp_path / "compression.jsonl")
    beside = tmp_path / "telemetry.log"
    if kind == "dangling link":
        beside.symlink_to("nowhere")
    elif kind == "directory":
        beside.mkdir()
    else:
        os.mkfifo(beside)
    out = run_adapter(gemini_cli.records, tmp_path / "compression.jsonl")
    assert out[0][1]["reader_notes"] == [
        "telemetry.log beside the recording is not a regular file: the compactions' "
        "sizes are the recording's"]
    (_line, rnd), = compaction_rounds(out)
    assert "tokens_from" not in rnd["compaction"]
    shutil.copy(GEMINI / "telemetry.log", tmp_path / "real.log")
    beside.unlink() if kind != "directory" else beside.rmdir()
    beside.symlink_to("real.log")  # a link to a regular file is read
    (_line, rnd), = compaction_rounds(run_adapter(gemini_cli.records,
                                                  tmp_path / "compression.jsonl"))
    assert (rnd["compaction"]["tokens_after"], rnd["compaction"]["tokens_from"]) == (
        257, "telemetry")


def test_a_telemetry_log_without_this_sessions_events_is_said(tmp_path: Path) -> None:
    """adv50: an empty telemetry.log, or one of another session only, left the sizes
    the recording's with no word."""
    shutil.copy(SESSION, tmp_path / "compression.jsonl")
    for text in ("", (GEMINI / "telemetry.log").read_text().replace(
            '"session.id": "', '"session.id": "other-')):
        (tmp_path / "telemetry.log").write_text(text)
        out = run_adapter(gemini_cli.records, tmp_path / "compression.jsonl")
        assert out[0][1]["reader_notes"] == [
            "telemetry.log beside the recording holds no compression event of this "
            "session: the compactions' sizes are the recording's"]
        (_line, rnd), = compaction_rounds(out)
        assert rnd["compaction"]["tokens_after"] == 9000 and "tokens_from" not in rnd[
            "compaction"]


def test_text_a_person_types_under_a_folded_message_s_id_opens_a_round(
        tmp_path: Path) -> None:
    """adv73: a person's new text under the id of a message the compression had folded
    went into the compaction's round (4 rounds, not 5); under a new id it opened one."""
    line = {"id": "bc358223-214a-4c22-9509-9bb58df209ce", "timestamp":
            "2026-11-30T14:57:50.000Z", "type": "user",
            "content": [{"text": "Use the production port 9443 from now on."}]}
    rounds = []
    for mid in (line["id"], "fresh-1"):
        path = tmp_path / f"{mid}.jsonl"
        path.write_bytes(SESSION.read_bytes() + (json.dumps({**line, "id": mid}) + "\n")
                         .encode())
        out = [r for _, r in run_adapter(gemini_cli.records, path)]
        placed = [(r["round"], s["id"]) for r in out if r.get("type") == "round"
                  for s in r.get("spans", []) if "9443" in (s.get("text") or "")]
        rounds.append((sum(r.get("type") == "round" for r in out), placed))
    base = sum(r.get("type") == "round" for _, r in run_adapter(gemini_cli.records, SESSION))
    assert rounds[0][0] == rounds[1][0] == base + 1
    assert rounds[0][1] == [(base, f"{line['id']}#2")]
    assert rounds[1][1] == [(base, "fresh-1")]


def test_a_rewound_message_is_not_lost_at_the_next_compression(tmp_path: Path) -> None:
    """usertest68 #4: a message the person rewound away was folded by the next
    compression and read as a person's lost fact (an error)."""
    from compaction_audit import api

    turns = [{"id": "u1", "type": "user", "content": [{"text": "Use region eu-west-2."}]},
             {"id": "g1", "type": "gemini", "content": "Region eu-west-2, noted."},
             {"id": "u2", "type": "user", "content": [{"text": "The deploy key is ops-7731."}]},
             {"id": "g2", "type": "gemini", "content": "Key ops-7731, noted."}]
    snapshot = {"id": "s", "type": "user", "content": [
        {"text": "<state_snapshot>The user works in region eu-west-2.</state_snapshot>"}]}
    after = [{"$set": {"messages": [snapshot]}}]

    def lost(records: list[dict[str, object]]) -> set[str]:
        path = tmp_path / "session-c.jsonl"
        path.write_text(lines_of([META, *records]))
        return {item["text"] for c in api.audit(str(path)).compactions
                for item in c.get("lost", [])}

    assert any("ops-7731" in t for t in lost([*turns, *after]))  # without the rewind
    assert not any("ops-7731" in t for t in lost([*turns, {"$rewindTo": "u2"}, *after]))
