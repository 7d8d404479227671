"""The opencode adapter: ``opencode export`` JSON and the SQLite store (synthetic data)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from compaction_audit.io import opencode
from compaction_audit.io.detect import detect_format
from tests.foreign import (
    FIXTURES,
    all_spans,
    compaction_rounds,
    run_adapter,
    without_lines,
    working_set,
    write_json,
)

EXPORT = FIXTURES / "opencode" / "export.json"


def export() -> dict[str, Any]:
    return dict(json.loads(EXPORT.read_text()))


def test_compaction_part_and_summary_message_fold_everything_before() -> None:
    out = run_adapter(opencode.records, EXPORT)
    assert out[0][1]["session_id"] == "ses_demo"
    _, (line, rnd) = compaction_rounds(out)
    info = rnd["compaction"]
    assert line == 159  # the user message with the compaction part (msg_04)
    assert (info["trigger"], info["overflow"], info["strategy"]) == ("auto", True, "summary")
    assert info["messages_removed"] == 3  # msg_01..msg_03
    # input + cache.read of msg_03 before; of msg_07, the first reply after
    assert (info["tokens_before"], info["tokens_after"]) == (9900, 2100)
    summary = rnd["summaries"][0]
    assert summary["id"] == "msg_05" and summary["text"].startswith("We are adding rate")
    assert summary["children"] == ["msg_01", "msg_02", "call_read1", "msg_03", "call_edit1",
                                   "call_edit1:result"]
    assert working_set(out) == ["msg_06", "msg_07", "msg_05"]


def test_pruned_tool_output_is_a_microcompact_before_the_next_message() -> None:
    (line, rnd), _ = compaction_rounds(run_adapter(opencode.records, EXPORT))
    # compacted at t=5000: the first message created after it is msg_04 (t=6000)
    assert line == 159 and rnd["evicted"] == ["call_read1:result"]
    assert (rnd["compaction"]["kind"], rnd["compaction"]["strategy"]) == ("microcompact",
                                                                          "prune")


def test_synthetic_text_is_harness_and_opens_no_round() -> None:
    out = run_adapter(opencode.records, EXPORT)
    spans = all_spans(out)
    assert spans["msg_06"]["source"] == "harness:meta"
    assert [line for line, _ in out[1:]] == [15, 159, 159]  # msg_01, prune, compaction


def test_output_tokens_are_split_over_text_and_tool_calls() -> None:
    spans = all_spans(run_adapter(opencode.records, EXPORT))
    # msg_03: 300 output tokens over its text and its edit call, by UTF-8 length
    assert spans["msg_03"]["tokens"] + spans["call_edit1"]["tokens"] == 300


def build_store(path: Path, sessions: list[dict[str, Any]]) -> Path:
    """An SQLite store in opencode's layout: id columns plus a ``data`` JSON column."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, time_created INT,"
        " time_updated INT, data TEXT);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INT,"
        " data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,"
        " data TEXT);")
    for exp in sessions:
        info = exp["info"]
        db.execute("INSERT INTO session VALUES (?, NULL, ?, ?, ?)",
                   (info["id"], info["time"]["created"], info["time"]["updated"],
                    json.dumps({k: v for k, v in info.items() if k != "id"})))
        for m in exp["messages"]:
            mi = m["info"]
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?)",
                       (mi["id"], info["id"], mi["time"]["created"],
                        json.dumps({k: v for k, v in mi.items() if k != "id"})))
            for p in m["parts"]:
                db.execute("INSERT INTO part VALUES (?, ?, ?, ?)",
                           (p["id"], mi["id"], info["id"],
                            json.dumps({k: v for k, v in p.items() if k != "id"})))
    db.commit()
    db.close()
    return path


def test_sqlite_store_reads_like_the_export(tmp_path: Path) -> None:
    store = build_store(tmp_path / "open code?#1.db", [export()])  # URI characters
    assert detect_format(str(store)) == "opencode"
    from_store = run_adapter(opencode.records, store)
    from_export = run_adapter(opencode.records, EXPORT)
    # the same rounds; a store has no lines: a round's line is its message's position
    assert without_lines(from_store) == without_lines(from_export)
    assert [line for line, _ in from_store[1:]] == [1, 4, 4]


def test_store_with_several_sessions_reads_the_latest_and_says_so(tmp_path: Path) -> None:
    older = export()
    older["info"] = {**older["info"], "id": "ses_old", "time": {"created": 1, "updated": 2}}
    first = older["messages"][0]
    older["messages"] = [{"info": {**first["info"], "id": "msg_old"},
                          "parts": [{**first["parts"][0], "id": "prt_old"}]}]
    store = build_store(tmp_path / "opencode.db", [older, export()])
    out = run_adapter(opencode.records, store)
    assert out[0][1]["session_id"] == "ses_demo"
    assert out[0][1]["reader_notes"] == [
        "opencode store: read session ses_demo, the latest of 2 "
        "(use `opencode export` for another)",
        "1 session of the store other than the one read, not audited (audit one with "
        "`opencode export <id>`)"]
    assert out[0][1]["lines_not_read"] == 1  # adv31 N3: said in the verdict and CI


def test_part_fields_of_other_versions_are_read_tolerantly(tmp_path: Path) -> None:
    exp = export()
    exp["info"]["version"] = "2.0.0"
    marker = exp["messages"][3]["parts"][0]
    del marker["auto"], marker["overflow"]  # an older part: no auto, no overflow
    marker["reason"] = "a field from a later version"
    exp["messages"][1]["parts"].append({"id": "prt_x", "type": "a-new-part", "x": 1})
    exp["messages"].insert(1, {"info": {"id": "msg_s", "role": "system", "time": {}},
                               "parts": []})
    out = run_adapter(opencode.records, write_json(tmp_path / "e.json", exp))
    (_, rnd) = compaction_rounds(out)[1]
    assert rnd["compaction"]["trigger"] is None and "overflow" not in rnd["compaction"]
    # a part type and a message role not known are counted as not read (adv29 F4)
    assert out[0][1]["reader_notes"] == [
        "opencode format version 2.0.0 not seen before; read as 1.x",
        "1 message of a message role this reader does not know ('system'): not read",
        "1 part of a part type this reader does not know ('a-new-part'): not read"]
    assert out[0][1]["lines_not_read"] == 2
    assert rnd["compaction"]["messages_removed"] == 3  # the skipped one is not counted


def test_bad_message_is_a_file_line_error_or_a_counted_skip(tmp_path: Path) -> None:
    exp = export()
    exp["messages"][2]["parts"] = "not a list"
    path = write_json(tmp_path / "bad.json", exp)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if '"id": "msg_03"' in text) - 2  # the message object opens 2 lines up
    with pytest.raises(LogError) as info:
        run_adapter(opencode.records, path)
    assert str(info.value) == f"{path}:{line}: expected a list (messages[2].parts)"
    session, fmt = api.load(str(path), lenient=True)
    assert fmt == "opencode" and [e.line for e in session.skipped] == [line]


def store_error(path: Path, sql: str) -> str:
    """The one-line error of reading the store ``path`` after ``sql`` ran on it."""
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()
    with pytest.raises(LogError) as info:
        list(opencode.records(str(path)))
    return str(info.value)


def test_a_store_without_opencode_tables_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    assert store_error(path, "CREATE TABLE notes (body TEXT)") == (
        f"{path}: cannot read the SQLite store: no such table: session")


REAL = FIXTURES / "opencode" / "real"


def test_a_store_whose_only_session_is_its_own_parent_says_so(tmp_path: Path) -> None:
    """adv56: a session whose parent_id is its own id was "the store holds no session"."""
    import shutil

    path = tmp_path / "opencode.db"
    shutil.copy(REAL / "opencode.db", path)
    assert store_error(path, "UPDATE session SET parent_id = id") == (
        f"{path}: the store holds no top-level session (1 marked a subagent session by "
        "parent_id) (session)")


def test_real_export_and_store_of_opencode_1_18() -> None:
    from_export = run_adapter(opencode.records, REAL / "export.json")
    from_store = run_adapter(opencode.records, REAL / "opencode.db")
    assert detect_format(str(REAL / "opencode.db")) == "opencode"
    assert without_lines(from_export) == without_lines(from_store)
    assert "reader_notes" not in from_export[0][1]  # version 1.18.33: a known major
    (line, rnd), = compaction_rounds(from_export)
    (store_line, _), = compaction_rounds(from_store)
    assert (line, store_line) == (246, 5)  # the compaction message; 5th in the store
    info = rnd["compaction"]
    assert (info["trigger"], info["overflow"], info["strategy"]) == ("auto", False, "summary")
    assert info["messages_removed"] == 4  # two prompts and their replies
    assert (info["tokens_before"], info["tokens_after"]) == (2900, 1200)
    assert rnd["summaries"][0]["text"] == ("We are preparing the staging deploy. Rollbacks "
                                           "use the blue-green switch.")
    spans = all_spans(from_export)
    # opencode's own "Continue ..." message after an automatic compaction
    assert [s["source"] for s in spans.values() if s["text"].startswith("Continue")] == [
        "harness:meta"]


def test_a_compaction_that_keeps_a_tail(tmp_path: Path) -> None:
    exp = export()
    exp["messages"][3]["parts"][0]["tail_start_id"] = "msg_03"  # newer opencode
    out = run_adapter(opencode.records, write_json(tmp_path / "tail.json", exp))
    (_, rnd) = compaction_rounds(out)[1]
    # msg_03 and its edit stay; msg_01 and msg_02 (its pruned result already gone) fold
    assert rnd["summaries"][0]["children"] == ["msg_01", "msg_02", "call_read1"]
    assert rnd["compaction"]["messages_removed"] == 2
    assert rnd["compaction"]["tail_start_id"] == "msg_03"
    assert working_set(out)[:3] == ["msg_03", "call_edit1", "call_edit1:result"]


@pytest.mark.parametrize("tail", ["msg_zz", 3, ["msg_03"]])
def test_a_tail_that_names_no_message_is_said(tmp_path: Path, tail: Any) -> None:
    """adv68 #3: a tail_start_id naming no message since the last compaction, or not a
    string, was read as no tail, with no word (every message since counted as folded)."""
    exp = export()
    exp["messages"][3]["parts"][0]["tail_start_id"] = tail
    path = write_json(tmp_path / "tail.json", exp)
    if not isinstance(tail, str):
        with pytest.raises(LogError) as err:
            run_adapter(opencode.records, path)
        assert (err.value.message, err.value.field) == (
            "expected a string", "messages[3].parts[0].tail_start_id")
        return
    out = run_adapter(opencode.records, path)
    (_, rnd) = compaction_rounds(out)[1]
    assert "tail_start_id" not in rnd["compaction"]
    assert out[0][1]["reader_notes"] == [
        "a compaction's tail_start_id names no message since the one before it: what it "
        "kept is not known, and every message since is read as folded"]


def test_an_early_copy_of_the_tail_message_keeps_no_more(tmp_path: Path) -> None:
    # adv30 (survey of F5's class): the tail was found by the first message with its id,
    # so a copy of msg_03 put first kept everything since it: nothing folded, a PASS
    exp = export()
    exp["messages"][3]["parts"][0]["tail_start_id"] = "msg_03"
    planted = json.loads(json.dumps(exp["messages"][2]))
    exp["messages"].insert(0, planted)
    path = tmp_path / "tail.json"  # one line: indented, the copy meets adv30 F2's KeyError
    path.write_text(json.dumps(exp), encoding="utf-8")
    (_, rnd) = compaction_rounds(run_adapter(opencode.records, path))[1]
    # the copy (msg_03 and its edit), msg_01 and msg_02 fold; the real msg_03 stays
    assert rnd["summaries"][0]["children"] == ["msg_03", "call_edit1", "call_edit1:result",
                                               "msg_01", "msg_02", "call_read1"]
    assert rnd["compaction"]["messages_removed"] == 3
    assert api.audit(str(path)).verdict().startswith("FAIL")


@pytest.mark.parametrize(("table", "data", "error"), [
    ("part", "{not json", "bad JSON: unexpected character, expected a string key: line 1 "
     "column 2 (char 1) (message 1.parts[0].data)"),
    ("part", "[1,2]", "expected a JSON object (message 1.parts[0].data)"),
    ("message", "[1,2]", "expected a JSON object (message 1.info.data)"),
])
def test_a_store_row_whose_data_cannot_be_read_is_a_bad_record(
        tmp_path: Path, table: str, data: str, error: str) -> None:
    """adv14 F9: the row was kept without its content, so the user's first part ("The
    staging port is 8443 ...") vanished and the failing session passed (exit 0)."""
    import shutil

    path = tmp_path / "opencode.db"
    shutil.copy(REAL / "opencode.db", path)
    db = sqlite3.connect(path)
    first = db.execute(f"SELECT id FROM {table} ORDER BY time_created LIMIT 1").fetchone()[0]
    db.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (data, first))
    db.commit()
    db.close()
    with pytest.raises(LogError) as info:
        list(opencode.records(str(path)))
    assert str(info.value) == f"{path}:1: {error}"


def test_a_part_of_a_type_not_known_is_counted_not_dropped(tmp_path: Path) -> None:
    """adv29 F4: the ``compaction`` part retyped ``Compaction`` made a failing session a
    plain PASS with no word (unknown part types were ignored).  Each part of a type
    not in opencode's schema is counted as not read; the schema's bookkeeping parts
    (``step-start``, ``step-finish``, ``reasoning``, ...) are not."""
    exp = export()
    marker = exp["messages"][3]["parts"][0]
    assert marker["type"] == "compaction"
    marker["type"] = "Compaction"
    exp["messages"][1]["parts"] += [{"id": "prt_r", "type": "reasoning", "text": "hm"},
                                    {"id": "prt_p", "type": "patch", "hash": "h",
                                     "files": []}]
    path = write_json(tmp_path / "renamed.json", exp)
    out = run_adapter(opencode.records, path)
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [  # its summary message still folds (adv73)
        opencode.SUMMARY_WITHOUT_MARKER,
        "1 part of a part type this reader does not know ('Compaction'): not read"]
    assert "1 line not read, see the notes" in api.audit(str(path)).verdict()
    for name in ("export.json", "real/export.json", "real/opencode.db"):
        head = run_adapter(opencode.records, FIXTURES / "opencode" / name)[0][1]
        assert "lines_not_read" not in head, name


def test_a_compaction_whose_summary_message_is_not_flagged_is_not_checked(
        tmp_path: Path) -> None:
    """adv31 N4: msg_05's ``summary`` flag renamed ``Summary`` dropped the pending
    compaction without a word (msg_05 was read as a reply, nothing was folded) and the
    failing session was a plain PASS.  The compaction is now recorded at its marker's
    line (msg_04), folds nothing, and is a compaction that could not be checked; so is
    a marker at the end of the session, with no message after it."""
    exp = export()
    exp["messages"][4]["info"]["Summary"] = exp["messages"][4]["info"].pop("summary")
    path = write_json(tmp_path / "flag.json", exp)
    _, (line, rnd) = compaction_rounds(run_adapter(opencode.records, path))
    assert line == 159 and "summaries" not in rnd
    assert rnd["compaction"]["unchecked"].startswith("the compaction part is not followed")
    assert rnd["compaction"]["tokens_after"] == 10400  # msg_05: input 10400, cache.read 0
    report = api.audit(str(path))
    assert "1 compaction could not be checked" in report.verdict()
    exp = export()
    exp["messages"] = exp["messages"][:4]  # the marker is the last message
    path = write_json(tmp_path / "last.json", exp)
    _, (line, rnd) = compaction_rounds(run_adapter(opencode.records, path))
    assert line == 159 and "unchecked" in rnd["compaction"]


def edit(store: Path, *statements: str) -> None:
    """Run ``statements`` on the SQLite file ``store`` and commit."""
    db = sqlite3.connect(store)
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.close()


def later_session() -> dict[str, Any]:
    """A session ``ses_b`` updated after the export's, of its first two messages (new
    ids): harmless, and the one a store's reader picks."""
    harmless = export()
    harmless["info"] = {**harmless["info"], "id": "ses_b",
                        "time": {"created": 1, "updated": 99_999_999}}
    harmless["messages"] = [
        {"info": {**m["info"], "id": f"b_{m['info']['id']}"},
         "parts": [{**p, "id": f"b_{p['id']}"} for p in m["parts"]]}
        for m in harmless["messages"][:2]]
    return harmless


def test_every_session_of_a_store_not_audited_is_counted(tmp_path: Path) -> None:
    """adv31 N3: a failing session beside a later-updated one, or marked a subagent of
    it, passed with no word in -q, github or junit (only the full report noted the
    first, nothing the second); parts whose message is in no row were dropped without a
    word.  Each other session that holds a message is counted as not read (an empty
    one is not), each orphan part too, and a part whose session_id column differs but
    whose message is in the session is read."""
    failing = export()
    harmless = later_session()
    empty = {"info": {**harmless["info"], "id": "ses_empty",
                      "time": {"created": 1, "updated": 2}}, "messages": []}
    store = build_store(tmp_path / "child.db", [failing, harmless, empty])
    edit(store, "UPDATE session SET parent_id = 'ses_b' WHERE id = 'ses_demo'")
    head = run_adapter(opencode.records, store)[0][1]
    assert head["session_id"] == "ses_b" and head["lines_not_read"] == 1
    assert head["reader_notes"] == [
        "opencode store: read session ses_b, the latest of 2 (use `opencode export` "
        "for another)",
        "1 session of the store marked a subagent session (parent_id), not audited "
        "(audit one with `opencode export <id>`)"]
    assert "1 line not read" in api.audit(str(store)).verdict()
    store = build_store(tmp_path / "orphans.db", [export()])
    db = sqlite3.connect(store)
    db.execute("UPDATE part SET message_id = 'msg_gone' WHERE message_id = 'msg_03'")
    db.execute("UPDATE part SET session_id = 'ses_other' WHERE message_id = 'msg_05'")
    db.commit()
    db.close()
    out = run_adapter(opencode.records, store)
    assert out[0][1]["lines_not_read"] == 2  # msg_03's text and tool parts
    assert out[0][1]["reader_notes"] == [
        "2 parts of the session whose message is not in the store: not read"]
    _, (_, rnd) = compaction_rounds(out)
    assert rnd["summaries"][0]["text"].startswith("We are adding rate")  # msg_05 read


@pytest.mark.parametrize("change", ["empty text", "retyped part", "no parts"])
def test_an_empty_summary_is_judged_as_one(tmp_path: Path, change: str) -> None:
    """adv32 A2: a summary message whose text was empty, whose text part was retyped
    or that had no parts made a fold without a summary text, which no fold rule
    judges: the failing session was a plain PASS.  It is an empty summary, judged."""
    exp = export()
    parts = exp["messages"][4]["parts"]
    if change == "empty text":
        parts[0]["text"] = ""
    elif change == "retyped part":
        parts[0]["type"] = "reasoning"
    else:
        parts.clear()
    path = write_json(tmp_path / "empty.json", exp)
    verdict = api.audit(str(path)).verdict()
    assert verdict.startswith("FAIL: 1 error(s), 0 warning(s), 0 info; 2 compactions "
                              "lost 3 fact(s)"), verdict


@pytest.mark.parametrize("value", [-5, 1.5, "abc"])
def test_a_store_message_time_of_a_wrong_type_is_an_error(tmp_path: Path, value: Any
                                                           ) -> None:
    """adv46: the messages are read in the order of ``time_created``: a -5 put a message
    first and the session went from FAIL to WARN (exit 0), an "abc" moved what the
    compaction folded."""
    import shutil

    path = tmp_path / "opencode.db"
    shutil.copy(REAL / "opencode.db", path)
    db = sqlite3.connect(path)
    count = db.execute("SELECT count(*) FROM message").fetchone()[0]
    last = db.execute("SELECT id FROM message ORDER BY time_created DESC LIMIT 1"
                      ).fetchone()[0]
    db.execute("UPDATE message SET time_created = ? WHERE id = ?", (value, last))
    db.commit()
    db.close()
    with pytest.raises(LogError, match=r"expected an integer >= 0 \(message \d+\."
                                       r"time_created\)"):
        list(opencode.records(str(path)))
    assert count > 1


@pytest.mark.parametrize(("edit", "field"), [
    (lambda m: m["info"].__setitem__("time", {"created": "x"}), "info.time.created"),
    (lambda m: m["info"].__setitem__("time", -5), "info.time"),
    (lambda m: m["info"].__setitem__("tokens", "820"), "info.tokens"),
])
def test_an_export_time_or_tokens_of_a_wrong_type_is_an_error(
        tmp_path: Path, edit: Any, field: str) -> None:
    """adv46: ``info.time.created`` orders the pruning (an "x" moved the context
    before), and ``info.tokens`` written as "820" changed what was folded."""
    exp = export()
    edit(exp["messages"][1])
    path = write_json(tmp_path / "bad.json", exp)
    with pytest.raises(LogError, match=rf"\({re.escape('messages[1].' + field)}\)"):
        list(opencode.records(str(path)))


@pytest.mark.parametrize(("state", "error"), [
    (None, "expected an object (messages[1].parts[2].state)"),
    (5, "expected an object (messages[1].parts[2].state)"),
    ({"status": 5}, "expected a string (messages[1].parts[2].state.status)"),
])
def test_a_tool_state_of_the_wrong_type_is_an_error(tmp_path: Path, state: Any,
                                                    error: str) -> None:
    """adv65 #5: a tool part whose state was null (or whose status was 5) kept its call
    span and dropped its result and its prune with no word: 2 compactions became 1."""
    exp = export()
    exp["messages"][1]["parts"][2]["state"] = state
    path = write_json(tmp_path / "e.json", exp)
    with pytest.raises(LogError) as info:
        run_adapter(opencode.records, path)
    assert str(info.value).endswith(error)


def test_a_tool_status_not_known_is_said(tmp_path: Path) -> None:
    """adv65 #5: a status "Completed" dropped the result and its prune in silence."""
    exp = export()
    exp["messages"][1]["parts"][2]["state"]["status"] = "Completed"
    out = run_adapter(opencode.records, write_json(tmp_path / "e.json", exp))
    assert "a tool part of a status this reader does not know ('Completed'): its result " \
        "is not read" in out[0][1]["reader_notes"]
    assert len(compaction_rounds(out)) == 1  # the prune went with the result: said


@pytest.mark.parametrize("packer", ["gzip", "zstd"])
def test_a_compressed_store_says_to_decompress_it(tmp_path: Path, packer: str) -> None:
    """adv65 #6: a gzip or zstd opencode store said "file is not a database"."""
    raw = (REAL / "opencode.db").read_bytes()
    if packer == "gzip":
        import gzip

        packed, name = gzip.compress(raw), "st.db.gz"
    else:
        import zstandard

        packed, name = zstandard.ZstdCompressor().compress(raw), "st.db.zst"
    path = tmp_path / name
    path.write_bytes(packed)
    with pytest.raises(LogError) as info:
        run_adapter(opencode.records, path)
    assert str(info.value) == (f"{path}: a compressed opencode SQLite store is not read: "
                               "SQLite reads the file itself, so decompress it first")


@pytest.mark.parametrize("how", ["assistant", "deleted"])
def test_a_summary_message_with_no_compaction_part_before_it_still_folds(
        tmp_path: Path, how: str) -> None:
    """adv73: the compaction part in an assistant message (or no part at all) dropped
    the compaction; its summary message read as a plain reply folded nothing, and the
    failing session passed."""
    doc = json.loads(EXPORT.read_text())
    if how == "assistant":
        doc["messages"][3]["info"]["role"] = "assistant"  # msg_04, the compaction part
    else:
        del doc["messages"][3]
    path = tmp_path / "o.json"
    path.write_text(json.dumps(doc))
    out = run_adapter(opencode.records, path)
    _, (_, rnd) = compaction_rounds(out)
    info = rnd["compaction"]
    # msg_01..msg_03, and msg_04 when it is an assistant message (with no span)
    assert info["trigger"] is None
    assert info["messages_removed"] == (4 if how == "assistant" else 3)
    assert rnd["summaries"][0]["children"] == [
        "msg_01", "msg_02", "call_read1", "msg_03", "call_edit1", "call_edit1:result"]
    notes = out[0][1]["reader_notes"]
    assert opencode.SUMMARY_WITHOUT_MARKER in notes[0]
    session = out[0][1]
    if how == "assistant":
        assert session["lines_not_read"] == 1
        assert any(opencode.COMPACTION_ELSEWHERE in n for n in notes)
    else:
        assert "lines_not_read" not in session
    report = api.audit(str(path))
    assert report.verdict_head() == "FAIL"


@pytest.mark.parametrize("flag", ["true", 1, {"title": "x"}])
def test_a_summary_flag_that_is_no_boolean_is_a_field_error(tmp_path: Path, flag: Any) -> None:
    """adv74: with the compaction part gone, a summary flag "true", 1 or an object read
    the summary message as a plain reply: nothing folded, a failing session passed."""
    doc = json.loads(EXPORT.read_text())
    del doc["messages"][3]
    doc["messages"][3]["info"]["summary"] = flag  # msg_05, the summary message
    path = tmp_path / "o.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LogError) as info:
        list(opencode.records(str(path)))
    assert str(info.value) == f"{path}:1: expected true or false (messages[3].info.summary)"


def test_messages_of_a_session_without_its_row_are_counted(tmp_path: Path) -> None:
    """adv81 #1: deleting the failing session's row (its messages kept) beside a later
    harmless session gave a clean PASS, even with --fail-on warning."""
    failing = export()
    harmless = later_session()
    store = build_store(tmp_path / "rowless.db", [failing, harmless])
    edit(store, "DELETE FROM session WHERE id = 'ses_demo'",
         "INSERT INTO message VALUES ('msg_nul', NULL, 5, '{}')")
    head = run_adapter(opencode.records, store)[0][1]
    assert head["session_id"] == "ses_b" and head["lines_not_read"] == 2
    assert head["reader_notes"] == [
        "2 sessions holding messages but no row of the store's session table (or no "
        "session id), not audited"]
    assert "2 lines not read" in api.audit(str(store)).verdict()


@pytest.mark.parametrize("side", ["-journal", "-wal", "-shm"])
def test_no_output_is_written_where_sqlite_reads_beside_the_store(
        tmp_path: Path, side: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv81 #5: ``convert opencode.db -o opencode.db-journal`` wrote a hot journal, and
    the store could no longer be read; the companion check saw only existing files."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    store = build_store(tmp_path / "opencode.db", [export()])
    monkeypatch.chdir(tmp_path)
    for args in (["convert", "opencode.db"], ["audit", "opencode.db", "-f", "json"]):
        result = CliRunner().invoke(app, [*args, "-o", f"opencode.db{side}"])
        assert result.exit_code == 2, args
        assert result.stderr == (
            f"compaction-audit: opencode.db{side}: is where SQLite looks for the "
            f"{side[1:]} of the input opencode.db; refusing to write it (choose another "
            "output)\n")
        assert not (tmp_path / f"opencode.db{side}").exists()
    assert api.audit(str(store)).verdict()  # still readable


def test_a_hot_journal_that_stops_the_read_is_named(tmp_path: Path) -> None:
    store = build_store(tmp_path / "opencode.db", [export()])
    (tmp_path / "opencode.db-journal").write_bytes(b"x")
    with pytest.raises(LogError) as caught:
        api.audit(str(store))
    assert caught.value.message == (
        "cannot open the SQLite store: attempt to write a readonly database (a hot journal "
        "beside it, opencode.db-journal, must be rolled back, which a read-only reader "
        "cannot do: open the store once with its program, or move the journal away if it "
        "is not the store's)")
