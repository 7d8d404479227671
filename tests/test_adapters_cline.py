"""The Cline 3.x adapter: our synthetic session (basic and agentic strategies), quirks,
and the real session files of the corpus when it is present."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.discover import discover
from compaction_audit.errors import LogError
from compaction_audit.io import cline
from compaction_audit.report.model import reader_notes
from tests.foreign import (
    FIXTURES,
    all_spans,
    assert_output_refused,
    compaction_rounds,
    notes_and_spans,
    run_adapter,
    strict_then_lenient,
    working_set,
    write_json,
)
from tests.logs import CORPUS

CLINE = FIXTURES / "cline"
"""Our own synthetic session (see its README): 12 messages, in order u1 a1 r1 a2 r2 a3 |
u2 a4 r3 a5 | u3 a6 (u: typed request, a: assistant, r: tool result; | a new turn)."""
REAL = CORPUS / "cline"
"""The real session files Cline's authors published (read-only, not in the project)."""

# the 16 spans of the synthetic session: each text, tool call, tool result and file part
SPANS = ["msg_u1", "msg_u1:file", "msg_a1", "toolu_read1", "toolu_read1:result", "msg_a2",
         "toolu_edit1", "toolu_edit1:result", "msg_a3", "msg_u2", "msg_a4", "toolu_run1",
         "toolu_run1:result", "msg_a5", "msg_u3", "msg_a6"]
# what the basic strategy keeps: the three requests and the last reply of each turn
BASIC_KEPT = ["msg_u1", "msg_a3", "msg_u2", "msg_a5", "msg_u3", "msg_a6"]


def only_compaction(path: Path) -> tuple[int, dict[str, Any]]:
    (line, rnd), = compaction_rounds(run_adapter(cline.records, path))
    return line, rnd


def real(name: str) -> Path:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"corpus file cline/{name} not available")
    return path


def test_basic_strategy_keeps_the_turns_and_folds_the_tool_work() -> None:
    out = run_adapter(cline.records, CLINE / "basic.compaction.json")
    assert out[0][1]["session_id"] == "1795512345678_wxq7k"
    assert "reader_notes" not in out[0][1]  # messagesRemoved 6 = what the files differ by
    line, rnd = only_compaction(CLINE / "basic.compaction.json")
    info = rnd["compaction"]
    assert line == 7  # the marker message opens on line 7 of the compaction file
    assert info["strategy"] == "basic"
    assert info["trigger"] == "manual"  # reason: manual_compaction
    assert info["messages_removed"] == 6  # 12 messages before, 6 after: a1 r1 a2 r2 a4 r3
    assert info["tokens_before"] == 2705  # a6's metrics.inputTokens, the last measured
    assert info["tokens_before_from"] == "last call"  # said so (usertest64 N4)
    # usageBefore is the sum of the six assistant messages' inputTokens
    assert info["usage_before"]["inputTokens"] == 1840 + 2260 + 2495 + 2570 + 2630 + 2705
    assert list(all_spans(out)) == SPANS
    assert working_set(out) == [*BASIC_KEPT, "line-7"]
    summary = rnd["summaries"][0]
    # the 10 spans not kept are folded and evicted, the first request's file part too
    assert summary["children"] == [s for s in SPANS if s not in BASIC_KEPT]
    assert rnd["evicted"] == summary["children"]
    assert "msg_u1:file" in summary["children"]
    # the summary is the two notices appended to u1 and u2 (u3's turn had no action)
    assert summary["text"].count(cline.NOTICE_PREFIX) == 2
    assert "pytest -q tests/test_fetch.py" in summary["text"]


def test_agentic_strategy_summary_message_folds_all_but_the_last_turn() -> None:
    out = run_adapter(cline.records, CLINE / "agentic.compaction.json")
    line, rnd = only_compaction(CLINE / "agentic.compaction.json")
    info = rnd["compaction"]
    assert (line, info["strategy"], info["trigger"]) == (7, "agentic", None)  # no reason
    assert info["tokens_before"] == 2750  # metadata.tokensBefore, not a6's 2705
    assert info["tokens_before_from"] is None  # the strategy's own count
    assert info["messages_removed"] == 10  # 12 before; u3 and a6 kept
    assert [Path(f).name for f in info["files_read"]] == ["fetch.py", "test_fetch.py"]
    assert [Path(f).name for f in info["files_modified"]] == ["fetch.py"]
    assert rnd["summaries"][0]["text"].startswith("Context summary:")
    assert rnd["evicted"] == SPANS[:14]  # all but u3 and a6
    assert working_set(out) == ["msg_u3", "msg_a6", "line-7"]


@pytest.mark.parametrize(("name", "strategy", "lost"), [
    # basic keeps the request word for word (pin, rule) and a3's "8 second", but folds
    # a2, the only message stating the backoff, and the read_files result whose test
    # file holds the keyed value {"temp": 11} (a k: v value from tool output)
    ("basic.compaction.json", "basic", {("quantity", "500 ms"), ("quantity", '"temp": 11')}),
    # the agentic summary restates the path, the pin and both numbers, not the rule nor
    # the test file's keyed value
    ("agentic.compaction.json", "agentic", {("negation", "Do not touch the cache module"),
                                            ("quantity", '"temp": 11')}),
])
def test_audit_reports_strategy_tokens_removed_and_lost_facts(
        name: str, strategy: str, lost: set[tuple[str, str]]) -> None:
    report = api.audit(str(CLINE / name))
    assert report.source_format == "cline"
    (c,) = report.compactions
    assert c["strategy"] == strategy
    # the basic strategy records no count of its own: the context is the last call's
    # input, and the line says so beside the agentic strategy's own count (usertest64 N4)
    from compaction_audit.report.compaction_text import compaction_sizes
    assert compaction_sizes(c).startswith(
        "context 2,705 (the last call's input) -> unknown tokens" if strategy == "basic"
        else "context 2,750 -> unknown tokens")
    assert {(d["kind"], d["text"]) for d in c["lost"]} == lost


def test_messages_file_alone_has_no_compaction() -> None:
    out = run_adapter(cline.records, CLINE / "session.messages.json")
    assert compaction_rounds(out) == []
    # the three typed requests open the three rounds, on the lines of their messages
    assert [line for line, _ in out[1:]] == [7, 146, 226]
    assert all_spans(out)["msg_u1:file"]["source"] == "tool_result:file"


def test_manifest_reads_the_messages_file_it_names() -> None:
    # messages_path names a file that is not beside the manifest: the folder's messages
    # file of the same sessionId is read
    out = run_adapter(cline.records, CLINE / "session.json")
    assert list(all_spans(out)) == SPANS


def test_compaction_file_without_its_messages_file(tmp_path: Path) -> None:
    shutil.copy(CLINE / "agentic.compaction.json", tmp_path / "x.compaction.json")
    out = run_adapter(cline.records, tmp_path / "x.compaction.json")
    (_line, rnd), = compaction_rounds(out)
    # nothing came before the summary in this file: it is a raw summary span
    assert "summaries" not in rnd and rnd["spans"][0]["source"] == "harness:summary"
    assert rnd["compaction"]["messages_removed"] is None


def test_real_basic_compaction_from_the_corpus() -> None:
    out = run_adapter(cline.records, real("basic.compaction.json"))
    assert out[0][1]["session_id"] == "1784094124598_rruoq"
    (line, rnd), = compaction_rounds(out)
    info = rnd["compaction"]
    assert (line, info["strategy"], info["trigger"]) == (7, "basic", "manual")
    assert info["messages_removed"] == 22  # 32 messages before, 10 after
    assert info["tokens_before"] == 12238  # the last measured prompt before it
    assert info["usage_before"]["inputTokens"] == 630254
    # 42 spans in the messages file; the 10 kept messages keep one text span each
    assert len(all_spans(out)) == 42
    kept = working_set(out)
    assert kept[:2] == ["msg_mr9sjimy_1", "msg_SUqLoZ6R"] and len(kept) == 11
    summary = rnd["summaries"][0]
    assert len(summary["children"]) == 32 and rnd["evicted"] == summary["children"]
    assert "msg_mr9sjimy_1:file" in summary["children"]  # the @-mentioned file, dropped
    assert summary["text"].count(cline.NOTICE_PREFIX) == 4


def test_real_agentic_compaction_from_the_corpus() -> None:
    out = run_adapter(cline.records, real("agentic.compaction.json"))
    (line, rnd), = compaction_rounds(out)
    info = rnd["compaction"]
    assert (line, info["strategy"], info["trigger"]) == (7, "agentic", None)
    assert (info["tokens_before"], info["messages_removed"]) == (21919, 30)
    assert [Path(f).name for f in info["files_read"]] == ["agent-sidebar.tsx", "button.tsx"]
    assert len(rnd["evicted"]) == 40
    assert working_set(out) == ["msg_mrb7vknq_4n", "msg_Fy5COtRH", "line-7"]


@pytest.mark.parametrize("name", ["session.json", "session.messages.json",
                                  "basic.compaction.json", "agentic.compaction.json"])
def test_real_files_are_detected_and_audited(name: str) -> None:
    report = api.audit(str(real(name)))
    assert report.source_format == "cline"
    if "compaction" in name:
        (c,) = report.compactions
        # the first request's decision is gone under both strategies
        assert "the filter comes after" in {d["text"] for d in c["lost"]}
    else:
        assert report.compactions == []


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
        "1 message of a message role this reader does not know ('system'): not read"],
        ["u1"])


def test_a_message_of_a_role_not_known_is_counted_not_read(tmp_path: Path) -> None:
    """adv31 N7: a message whose role ``user`` became ``User`` was skipped with a note
    only: not counted in ``lines_not_read``, the verdict or the CI formats.  It is
    counted now, one line per message."""
    path = write_json(tmp_path / "r.messages.json", session(
        [user("u1", "Use port 8080."), {**user("u2", "and 9090"), "role": "User"},
         {**user("u3", "x"), "role": "User"}]))
    out = run_adapter(cline.records, path)
    assert out[0][1]["lines_not_read"] == 2
    assert out[0][1]["reader_notes"] == [
        "2 messages of a message role this reader does not know ('User'): not read"]
    assert "2 lines not read, see the notes" in api.audit(str(path)).verdict()


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
    # adv46: a role that is no string named no field ("unexpected record shape")
    path = write_json(tmp_path / "r.messages.json", session([
        user("u1", "first"), {"id": "u2", "role": 5, "content": "x"}]))
    with pytest.raises(LogError) as err:
        list(cline.records(str(path)))
    assert str(err.value) == f"{path}:16: expected a string (messages[1].role)"
    # and an empty id was reported at the first message's line, as spans[N].id
    path = write_json(tmp_path / "e.messages.json", session([
        user("u1", "first"), {"id": "", "role": "user", "content": "x"}]))
    with pytest.raises(LogError) as err:
        list(cline.records(str(path)))
    assert str(err.value) == f"{path}:16: expected a non-empty string (messages[1].id)"


def test_a_session_folder_is_audited_once_per_session(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "s1"
    folder.mkdir(parents=True)
    shutil.copy(CLINE / "session.messages.json", folder / "s1.messages.json")
    shutil.copy(CLINE / "basic.compaction.json", folder / "s1.compaction.json")
    (report,) = api.audit_paths(discover([str(tmp_path / "sessions")])).sessions
    assert report.path.endswith("s1.messages.json")
    assert [c["strategy"] for c in report.compactions] == ["basic"]


def test_compaction_file_alone_is_not_checked_and_says_what_was_looked_for(
        tmp_path: Path) -> None:
    # the basic file copied into an empty folder: what it removed is nowhere to compare
    shutil.copy(CLINE / "basic.compaction.json", tmp_path / "b.compaction.json")
    report = api.audit(str(tmp_path / "b.compaction.json"))
    (c,) = report.compactions
    assert (c["unchecked"], c["lost_checked"], c["lost"]) == ("no messages file", False, [])
    assert c["not_checked_reason"] == "no messages file"
    assert report.compactions_not_checked() == 1
    assert "1 compaction could not be checked" in report.verdict()
    assert reader_notes(report) == [
        "b.compaction.json: the session's messages file was not found (looked for "
        "b.messages.json and a *.messages.json with sessionId '1795512345678_wxq7k' "
        "beside it), so its compaction is not checked"]


def test_compaction_file_from_standard_input_is_not_checked() -> None:
    data = (CLINE / "basic.compaction.json").read_bytes()
    out = list(cline.records("-", enumerate(data.splitlines(keepends=True), 1)))
    (_, rnd), = compaction_rounds(out)
    assert rnd["compaction"]["unchecked"] == "no messages file"
    assert out[0][1]["reader_notes"] == [
        "a Cline compaction file read from standard input: its messages file cannot be "
        "looked for, so its compaction is not checked"]


def test_messages_file_from_standard_input_says_its_compactions_were_not_looked_for(
        ) -> None:
    """adv103 #6: read by name, beside two compaction files, it says they were not
    checked; from standard input it said nothing of them."""
    data = (CLINE / "session.messages.json").read_bytes()
    out = list(cline.records("-", enumerate(data.splitlines(keepends=True), 1)))
    assert compaction_rounds(out) == []
    assert out[0][1]["reader_notes"] == [
        "a Cline messages file read from standard input: the compaction files Cline "
        "keeps beside it cannot be looked for; audit the file by name, or its folder, to "
        "check its compactions"]


def test_paired_compaction_is_checked() -> None:
    (_, rnd), = compaction_rounds(run_adapter(cline.records, CLINE / "basic.compaction.json"))
    assert "unchecked" not in rnd["compaction"]


def test_messages_file_pairs_the_one_compaction_file_of_its_session(tmp_path: Path) -> None:
    # names that do not share the <id> prefix: paired by the sessionId both carry
    shutil.copy(CLINE / "session.messages.json", tmp_path / "history.messages.json")
    shutil.copy(CLINE / "basic.compaction.json", tmp_path / "after.compaction.json")
    out = run_adapter(cline.records, tmp_path / "history.messages.json")
    (_, rnd), = compaction_rounds(out)
    assert rnd["compaction"]["strategy"] == "basic"
    assert working_set(out) == [*BASIC_KEPT, "line-7"]
    assert "reader_notes" not in out[0][1]


def test_messages_file_names_the_compaction_files_it_leaves(tmp_path: Path) -> None:
    # two compactions of one session (two strategies): neither is picked silently
    for name in ("session.messages.json", "basic.compaction.json",
                 "agentic.compaction.json", "session.json"):
        shutil.copy(CLINE / name, tmp_path / name)
    note = ("2 compaction files of this session beside session.messages.json are not "
            "read: agentic.compaction.json, basic.compaction.json; audit each of them "
            "by name (or the folder) to check its compaction")
    for given in ("session.messages.json", "session.json"):
        out = run_adapter(cline.records, tmp_path / given)
        assert compaction_rounds(out) == []
        assert out[0][1]["reader_notes"] == [note]
        assert out[0][1]["compaction_files_unread"] == [
            "agentic.compaction.json", "basic.compaction.json"]
    (report,) = api.audit_paths([str(tmp_path / "session.messages.json")]).sessions
    assert reader_notes(report) == [note]
    # the verdict line says it too, not only the note below the findings
    assert report.compactions_not_checked() == 2
    assert report.verdict().startswith("PASS (2 compactions could not be checked): ")


def test_messages_file_with_its_one_compaction_file_leaves_none_unread(
        tmp_path: Path) -> None:
    for name in ("session.messages.json", "basic.compaction.json"):
        shutil.copy(CLINE / name, tmp_path / name)
    out = run_adapter(cline.records, tmp_path / "session.messages.json")
    assert "compaction_files_unread" not in out[0][1]
    (report,) = api.audit_paths(discover([str(tmp_path)])).sessions
    assert report.compactions_not_checked() == 0


def test_lines_of_the_messages_file_name_it(tmp_path: Path) -> None:
    # the compaction file given: a2 opens on line 77 of the messages file and its text
    # part ("500 ms") is on line 83, so the lost fact names that file and that line (the
    # line that holds it, not the message's "{": ux6); given the messages file, lines
    # are its own
    out = run_adapter(cline.records, CLINE / "basic.compaction.json")
    assert out[0][1]["span_line_file"] == "session.messages.json"
    assert "span_line_file_except" not in out[0][1]
    report = api.audit(str(CLINE / "basic.compaction.json"))
    lost = {d["text"]: (d["span_line"], d["span_file"]) for d in report.compactions[0]["lost"]}
    assert lost["500 ms"] == (83, "session.messages.json")
    held = (CLINE / "session.messages.json").read_text().splitlines()[83 - 1]
    assert held.lstrip().startswith('"text": ') and "500 ms" in held
    assert {d["span_file"] for d in report.extra["lost_discriminators"]} == {
        "session.messages.json"}
    result = CliRunner().invoke(app, ["audit", "--all", str(CLINE / "basic.compaction.json")],
                                env={"COLUMNS": "120"})
    assert "(assistant, session.messages.json:83)" in result.output
    # a line of the messages file is never shown as if it were the trace's own line
    flat = " ".join(result.output.split())
    assert "line 83 of session.messages.json" in flat
    assert re.search(r"line 83(?! of session\.messages\.json)", flat) is None
    result = CliRunner().invoke(app, ["audit", "--all", "--format", "markdown",
                                      str(CLINE / "basic.compaction.json")])
    assert r"(assistant, session\.messages\.json:83)" in result.output
    run_adapter_out = run_adapter(cline.records, CLINE / "session.messages.json")
    assert "span_line_file" not in run_adapter_out[0][1]
    # a message the compaction file adds after the last kept one is a line of its own
    write_json(tmp_path / "s1.messages.json", session([
        user("u1", "Deploy to eu-west-2 only."), user("u2", "Then tag v3.1.")]))
    marker = user("u2", "Then tag v3.1.", metadata={"kind": "compaction", "reason": "auto"})
    write_json(tmp_path / "s1.compaction.json", session([marker, user("u3", "Now ship.")]))
    head = run_adapter(cline.records, tmp_path / "s1.compaction.json")[0][1]
    assert (head["span_line_file"], head["span_line_file_except"]) == (
        "s1.messages.json", ["u3"])


def test_native_lost_facts_carry_no_file(tmp_path: Path) -> None:
    # a single-file log: no span_file key, "line N" as before
    write_json(tmp_path / "s1.messages.json", session([
        user("u1", "Use port 8443."), user("u2", "Next.")]))
    report = api.audit(str(tmp_path / "s1.messages.json"))
    assert "span_line_file" not in report.header.extra
    assert all("span_file" not in d for d in report.extra["lost_discriminators"])


def _cline_folder(folder: Path, pairs: dict[str, str]) -> Path:
    """Copy fixture files into ``folder`` under new names (``new name -> fixture``)."""
    folder.mkdir(parents=True)
    for name, fixture in pairs.items():
        shutil.copy(CLINE / fixture, folder / name)
    return folder


def test_folder_audits_a_paired_compaction_file_once(tmp_path: Path) -> None:
    # s2.compaction.json is read with s2.messages.json: not a second trace
    folder = _cline_folder(tmp_path / "s2", {"s2.messages.json": "session.messages.json",
                                             "s2.compaction.json": "basic.compaction.json"})
    assert discover([str(folder)]) == [f"{folder}/s2.messages.json"]


def test_folder_audits_each_unpaired_compaction_file(tmp_path: Path) -> None:
    # two compaction files of one session: the messages file reads neither, so each is
    # a trace of its own (issue 11, class 2: the folder must not pass on the messages file)
    folder = _cline_folder(tmp_path / "s3", {
        "session.messages.json": "session.messages.json",
        "basic.compaction.json": "basic.compaction.json",
        "agentic.compaction.json": "agentic.compaction.json"})
    traces = discover([str(folder)])
    assert traces == [f"{folder}/agentic.compaction.json",
                      f"{folder}/basic.compaction.json", f"{folder}/session.messages.json"]
    reports = api.audit_paths(traces).sessions
    assert [[c["strategy"] for c in r.compactions] for r in reports] == [
        ["agentic"], ["basic"], []]
    # a glob over the folder finds the same traces
    assert discover([f"{tmp_path}/s*"]) == traces


def test_folder_with_a_failing_unpaired_compaction_fails_the_gate(tmp_path: Path) -> None:
    folder = _cline_folder(tmp_path / "s4", {
        "session.messages.json": "session.messages.json",
        "basic.compaction.json": "basic.compaction.json",
        "agentic.compaction.json": "agentic.compaction.json"})
    result = CliRunner().invoke(app, ["audit", str(folder), "-q"])
    assert result.exit_code == 1, result.output
    # one of the two fails (the agentic summary drops what the later turn needs)
    assert "agentic.compaction.json: FAIL" in result.output
    assert "basic.compaction.json: WARN" in result.output
    assert "session.messages.json: PASS" in result.output
    # the messages file named alone keeps its verdict, and its note names the files
    alone = CliRunner().invoke(app, ["audit", str(folder / "session.messages.json")])
    assert alone.exit_code == 0, alone.output
    assert "PASS (2 compactions could not be checked)" in alone.output
    words = " ".join(alone.output.split())  # the note wraps to the width, indented
    assert "agentic.compaction.json, basic.compaction.json; audit each" in words


def test_folder_of_a_compaction_file_alone_audits_it(tmp_path: Path) -> None:
    folder = _cline_folder(tmp_path / "s5", {"s5.compaction.json": "basic.compaction.json"})
    assert discover([str(folder)]) == [f"{folder}/s5.compaction.json"]


def test_a_linked_messages_file_is_paired_beside_the_file_it_names(tmp_path: Path) -> None:
    """adv20 F2: a messages file named through a symbolic link in another folder lost
    the compaction file beside its target (where Cline writes it): no compaction, PASS.
    Beside the link nothing is found, so the target's folder is searched; -o may not
    name the compaction file found there."""
    (tmp_path / "real").mkdir()
    (tmp_path / "job").mkdir()
    for name in ("session.messages.json", "basic.compaction.json"):
        shutil.copy(CLINE / name, tmp_path / "real" / name)
    link = tmp_path / "job" / "m.messages.json"
    link.symlink_to("../real/session.messages.json")
    direct = run_adapter(cline.records, tmp_path / "real" / "session.messages.json")
    linked = run_adapter(cline.records, link)
    assert len(compaction_rounds(linked)) == len(compaction_rounds(direct)) == 1
    assert_output_refused(link, tmp_path / "real" / "basic.compaction.json")


@pytest.mark.parametrize("change", ["other kind", "no metadata", "no summary message"])
def test_a_compaction_file_without_its_summary_marker_is_judged(
        tmp_path: Path, change: str) -> None:
    """adv32 A1: a compaction file whose summary message lost its marker (its kind
    renamed, its metadata removed, or the message removed) made a fold without a
    summary text, which no fold rule judges: the failing session was a plain PASS.
    The fold is judged with an empty summary: what it dropped is lost."""
    shutil.copy(CLINE / "session.messages.json", tmp_path)
    doc = json.loads((CLINE / "agentic.compaction.json").read_text())
    if change == "other kind":
        doc["messages"][0]["metadata"] = {"kind": "note"}
    elif change == "no metadata":
        del doc["messages"][0]["metadata"]
    else:
        del doc["messages"][0]
    path = tmp_path / "agentic.compaction.json"
    path.write_text(json.dumps(doc, indent=1))
    verdict = api.audit(str(path)).verdict()
    assert verdict.startswith("FAIL: 1 error(s), 0 warning(s), 0 info; 1 compaction "
                              "lost 6 fact(s), 3 that matter"), verdict


def test_a_message_id_that_is_not_a_string_is_an_error(tmp_path: Path) -> None:
    """adv42's class (a field the reader reads, of a wrong type, read as absent): a
    message id 5 was keyed by its line, and the same message kept by a compaction file
    was then never matched, so what the compaction kept counted as folded."""
    path = write_json(tmp_path / "i.messages.json", session([
        user("u1", "first"), {**user("u2", "Use port 8080."), "id": 5}]))
    error, out, skipped = strict_then_lenient(cline.records, path)
    assert error.startswith(f"{path}:16: ") and error.endswith("(messages[1].id)"), error
    assert skipped == [16] and sorted(all_spans(out)) == ["u1"]
    write_json(tmp_path / "i.messages.json", session([user("u1", "first")]))
    kept = {**user("u1", "first"), "id": ["u1"]}
    write_json(tmp_path / "i.compaction.json", session([kept]))
    with pytest.raises(LogError, match=r"expected a string \(messages\[0\]\.id\)"):
        run_adapter(cline.records, tmp_path / "i.messages.json")


def test_a_part_of_a_type_not_known_is_counted_not_read(tmp_path: Path) -> None:
    """adv46: a part typed "Text" was dropped with no word, in the messages file (its
    facts left the audit) and in a compaction file (the kept message's part was
    counted as folded: WARN became FAIL); thinking parts are not counted."""
    path = write_json(tmp_path / "r.messages.json", session(
        [user("u1", "Use port 8080."),
         {**user("u2", "x"), "content": [{"type": "Text", "text": "and 9090"},
                                         {"type": "thinking", "thinking": "hm"}]}]))
    out = run_adapter(cline.records, path)
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [
        "1 part of a part type this reader does not know ('Text'): not read"]
    for name in ("session.messages.json", "session.json", "basic.compaction.json"):
        shutil.copy(FIXTURES / "cline" / name, tmp_path / name)
    doc = json.loads((tmp_path / "basic.compaction.json").read_text(encoding="utf-8"))
    kept = next(m for m in doc["messages"] if isinstance(m.get("content"), list)
                and m.get("metadata") is None)
    kept["content"][0]["type"] = "Text"
    (tmp_path / "basic.compaction.json").write_text(json.dumps(doc), encoding="utf-8")
    out = run_adapter(cline.records, tmp_path / "basic.compaction.json")
    assert "1 part of a part type this reader does not know ('Text'): not read" in \
        out[0][1]["reader_notes"]


def test_the_usage_before_a_compaction_is_checked(tmp_path: Path) -> None:
    """adv57: `usageBefore` went into the report's compactions unchecked: -7 tokens,
    10^30 tokens, "lots"."""
    doc = json.loads((CLINE / "basic.compaction.json").read_text())
    usage = doc["messages"][0]["metadata"]["usageBefore"]
    for key, value, problem in (("inputTokens", -7, "expected an integer >= 0"),
                                ("outputTokens", 10**30, "must be <= 1,000,000,000,000 tokens"),
                                ("cacheReadTokens", "lots", "expected an integer >= 0"),
                                ("cost", -1.5, "expected a number >= 0")):
        bad = json.loads(json.dumps(doc))
        bad["messages"][0]["metadata"]["usageBefore"] = {**usage, key: value}
        path = write_json(tmp_path / "b.compaction.json", bad)
        with pytest.raises(LogError) as err:
            list(cline.records(str(path)))
        assert str(err.value).endswith(
            f"{problem} (messages[0].metadata.usageBefore.{key})"), err.value
    # adv58: only the keys checked reach the report (a totalTokens of 10^30 did)
    doc["messages"][0]["metadata"]["usageBefore"] = {**usage, "totalTokens": 10**30}
    path = write_json(tmp_path / "t.compaction.json", doc)
    [(_, rnd)] = compaction_rounds(run_adapter(cline.records, path))
    assert rnd["compaction"]["usage_before"] == usage


def test_messages_removed_is_a_count_of_messages(tmp_path: Path) -> None:
    """adv68 #5: a messagesRemoved of 10^18 said "must be <= ... tokens"."""
    doc = json.loads((CLINE / "basic.compaction.json").read_text())
    doc["messages"][0]["metadata"]["messagesRemoved"] = 10**18
    path = write_json(tmp_path / "b.compaction.json", doc)
    with pytest.raises(LogError) as err:
        list(cline.records(str(path)))
    assert str(err.value).endswith(
        "must be <= 1,000,000,000,000 messages (messages[0].metadata.messagesRemoved)")


def test_a_message_id_repeated_in_one_file_is_an_error(tmp_path: Path) -> None:
    """note 31 (adv84): a messages file repeating a message id read it twice, and a
    compaction then folded 20 children for 19 messages; message ids are unique within
    a file (a compaction file repeats the messages file's, which is its point)."""
    path = write_json(tmp_path / "d.messages.json", session([
        user("u1", "first"), user("u2", "Use port 8080."), user("u1", "first")]))
    error, out, skipped = strict_then_lenient(cline.records, path)
    assert error == (f"{path}:26: message id 'u1' repeated (first at messages[0]): "
                     "message ids are unique (messages[2].id)"), error
    assert skipped == [26] and sorted(all_spans(out)) == ["u1", "u2"]
    write_json(tmp_path / "d.messages.json", session([user("u1", "first"),
                                                      user("u2", "second")]))
    write_json(tmp_path / "d.compaction.json", session([user("u2", "second"),
                                                        user("u2", "second")]))
    with pytest.raises(LogError, match=r"'u2' repeated \(first at messages\[0\]\).*"
                                       r"\(messages\[1\]\.id\)"):
        run_adapter(cline.records, tmp_path / "d.messages.json")
    write_json(tmp_path / "d.compaction.json", session([user("u2", "second")]))
    run_adapter(cline.records, tmp_path / "d.messages.json")  # kept once: no error


def test_a_message_skipped_under_lenient_leaves_its_id_to_the_next(tmp_path: Path) -> None:
    """adv87 #8: a first message with bad metrics and a valid second of the same id
    were both dropped under --lenient ("no round records"); the skipped one was never
    read, so the second is the first read with that id."""
    bad = {**user("u1", "first"), "metrics": {"inputTokens": "many"}}
    path = write_json(tmp_path / "l.messages.json", session([bad, user("u1", "first"),
                                                             user("u2", "second")]))
    error, out, skipped = strict_then_lenient(cline.records, path)
    assert "(messages[0].metrics.inputTokens)" in error, error
    assert len(skipped) == 1 and sorted(all_spans(out)) == ["u1", "u2"]
