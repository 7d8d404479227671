"""Cline file names and pairing (adv9 pass on issue 11): the file span lines count in,
chosen the same way on every run and named truly (F2); file names that are not UTF-8
(F6); each neighbour file read once per run (minor note, class 5)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.discover import discover
from compaction_audit.io import cline, cline_folder, cline_pair
from compaction_audit.io import records as rec
from compaction_audit.io.records import FieldError
from compaction_audit.recall.sections import _span_file
from compaction_audit.report.model import reader_notes
from tests.foreign import FIXTURES, compaction_rounds, run_adapter, write_json

CLINE = FIXTURES / "cline"
ROOT = Path(__file__).resolve().parent.parent


def user(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], **extra}


def _manifest_tie(folder: Path) -> Path:
    """A manifest, a messages file of one message and a compaction file that keeps it
    and adds one: one span from each companion file, neither the file given."""
    folder.mkdir()
    write_json(folder / "s9.json", {"session_id": "s9", "messages_path": "s9.messages.json"})
    u1 = user("u1", "Deploy to port 8443 with key ops-7731.")
    write_json(folder / "s9.messages.json", {"version": 1, "sessionId": "s9",
                                             "messages": [u1]})
    marker = {**u1, "metadata": {"kind": "compaction", "messagesRemoved": 0,
                                 "reason": "auto"}}
    write_json(folder / "s9.compaction.json", {
        "version": 1, "sessionId": "s9",
        "messages": [marker, user("u2", "Now run the tests on port 9000.")]})
    return folder / "s9.json"


_HEAD = ("import sys, orjson; from compaction_audit.io import cline; "
         "line, head = next(cline.records(sys.argv[1])); "
         "sys.stdout.buffer.write(orjson.dumps(head, option=orjson.OPT_SORT_KEYS))")


def test_span_line_file_is_the_same_for_every_hash_seed(tmp_path: Path) -> None:
    manifest = _manifest_tie(tmp_path / "tie")
    heads = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", _HEAD, str(manifest)], env=env,
                              capture_output=True, check=True, cwd=ROOT)
        heads.add(done.stdout)
    # was two outputs (seeds 0 and 1 chose different files for a 1-1 tie)
    (head,) = heads
    record = json.loads(head)
    # the tie goes to the file read first (the messages file); u2's line is in the
    # compaction file, which is named: the manifest given holds no span line at all
    assert (record["span_line_file"], record["span_line_file_except"],
            record["span_line_file_except_in"]) == (
        "s9.messages.json", ["u2"], "s9.compaction.json")


def test_span_line_file_names_the_file_given_by_leaving_it_out(tmp_path: Path) -> None:
    manifest = _manifest_tie(tmp_path / "tie")
    folder = manifest.parent
    # the compaction file given: u1's line is in the messages file, u2's its own
    head = run_adapter(cline.records, folder / "s9.compaction.json")[0][1]
    assert (head["span_line_file"], head["span_line_file_except"]) == (
        "s9.messages.json", ["u2"])
    assert "span_line_file_except_in" not in head
    # the messages file given: u2 comes from the compaction file, u1 is its own
    head = run_adapter(cline.records, folder / "s9.messages.json")[0][1]
    assert (head["span_line_file"], head["span_line_file_except"]) == (
        "s9.compaction.json", ["u1"])
    assert "span_line_file_except_in" not in head


def test_a_span_of_the_other_companion_names_that_file() -> None:
    own = {"u2"}
    assert _span_file("s9.messages.json", own, "u1", "s9.compaction.json") == {
        "span_file": "s9.messages.json"}
    assert _span_file("s9.messages.json", own, "u2", "s9.compaction.json") == {
        "span_file": "s9.compaction.json"}
    assert _span_file("s9.messages.json", own, "u2", None) == {"span_file": None}
    assert _span_file(None, own, "u2", "s9.compaction.json") == {}


# -- names that are not UTF-8 -------------------------------------------------------

def _bytes_name(folder: Path, name: bytes, source: Path) -> str:
    """Copy ``source`` to ``folder/name`` (raw bytes); the path as Python reads it."""
    target = os.path.join(os.fsencode(folder), name)
    shutil.copyfile(source, target)
    return os.fsdecode(target)


def test_a_session_file_whose_name_is_not_utf8_is_read(tmp_path: Path) -> None:
    given = _bytes_name(tmp_path, b"a\xff.compaction.json", CLINE / "basic.compaction.json")
    _bytes_name(tmp_path, b"a\xff.messages.json", CLINE / "session.messages.json")
    out = run_adapter(cline.records, given)  # the record check passes
    # paired by its stem: the name shown as the reports show it, escaped
    assert out[0][1]["span_line_file"] == "a\\xff.messages.json"
    assert len(compaction_rounds(out)) == 1
    report = api.audit(given)
    assert report.compactions[0]["lost"]
    assert {d["span_file"] for d in report.compactions[0]["lost"]} == {"a\\xff.messages.json"}
    result = CliRunner().invoke(app, ["convert", given, "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.output


def test_neighbours_whose_names_are_not_utf8_are_skipped_and_named(tmp_path: Path) -> None:
    shutil.copy(CLINE / "session.messages.json", tmp_path / "s.messages.json")
    _bytes_name(tmp_path, b"b\xff.compaction.json", CLINE / "basic.compaction.json")
    _bytes_name(tmp_path, b"c\xfe.compaction.json", CLINE / "agentic.compaction.json")
    note = ("2 file(s) beside s.messages.json not read: their names are not UTF-8 "
            "(b\\xff.compaction.json, c\\xfe.compaction.json); rename them to pair them "
            "with this session")
    out = run_adapter(cline.records, tmp_path / "s.messages.json")
    assert out[0][1]["reader_notes"] == [note]
    assert compaction_rounds(out) == []  # read alone
    # a folder search audits the two compaction files the messages file does not read
    # as traces of their own (issue 11, class 2), each paired by its sessionId
    traces = discover([str(tmp_path)])
    assert [Path(t).name for t in traces] == [
        "b\udcff.compaction.json", "c\udcfe.compaction.json", "s.messages.json"]
    reports = api.audit_paths(traces).sessions
    assert reader_notes(reports[2]) == [note]
    assert [[c["strategy"] for c in r.compactions] for r in reports] == [
        ["basic"], ["agentic"], []]
    # was: "s.messages.json:1: nested too deeply (session)", exit 2; now exit 1: the
    # agentic compaction file fails the gate
    result = CliRunner().invoke(app, ["audit", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "b\\xff.compaction.json, c\\xfe.compaction.json" in result.output
    assert f"compaction-audit {tmp_path}/c\\xfe.compaction.json" in result.output
    # one error: the fold (CA301); recall-floor leaves a product compaction to it, and
    # compaction-drift is not judged at a compaction round with no work after it; the
    # failing trace's verdict heads its report and ends it
    assert result.output.count("FAIL: 1 error(s), 0 warning(s)") == 2


def test_a_string_that_cannot_be_json_is_not_called_nested() -> None:
    with pytest.raises(FieldError) as caught:
        rec.as_json({"name": "a\udcff"}, "session")
    assert "nested" not in str(caught.value)
    assert "cannot be written as JSON" in str(caught.value)
    deep: Any = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(FieldError, match="nested too deeply"):
        rec.as_json(deep, "session")


# -- each neighbour read once per run ----------------------------------------------

def test_compaction_files_beside_many_messages_files_are_read_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: dict[str, int] = {}
    read = cline.read_document

    def counted(path: str, lines: Any) -> Any:
        reads[Path(path).name] = reads.get(Path(path).name, 0) + 1
        return read(path, lines)

    monkeypatch.setattr(cline, "read_document", counted)  # the file given
    monkeypatch.setattr(cline_pair, "read_document", counted)  # its partner
    monkeypatch.setattr(cline_folder, "read_document", counted)  # the folder's index
    n = 6
    for i in range(n):
        write_json(tmp_path / f"m{i}.messages.json", {
            "version": 1, "sessionId": f"m{i}", "messages": [user(f"u{i}", f"Task {i}.")]})
        write_json(tmp_path / f"c{i}.compaction.json", {
            "version": 1, "sessionId": f"other{i}", "messages": [user(f"x{i}", "Other.")]})
    # the one compaction file of m0's session, under another name
    marker = user("u0", "Task 0.", metadata={"kind": "compaction", "reason": "auto"})
    write_json(tmp_path / "zz.compaction.json", {
        "version": 1, "sessionId": "m0", "messages": [marker, user("u9", "Then ship.")]})
    for i in range(n):
        out = run_adapter(cline.records, tmp_path / f"m{i}.messages.json")
        assert len(compaction_rounds(out)) == (1 if i == 0 else 0)
    # each messages file read once as a trace and once for the folder's index (the
    # compaction files no messages file pairs with, adv32 A6); each compaction file once
    # for its sessionId, and zz once more as m0's partner (was: every compaction file
    # once per messages file)
    assert reads == {**{f"m{i}.messages.json": 2 for i in range(n)},
                     **{f"c{i}.compaction.json": 1 for i in range(n)},
                     "zz.compaction.json": 2}
