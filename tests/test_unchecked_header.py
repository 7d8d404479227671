"""What an audit could not check is said at the top of the text report (the verdict
says it last), and a compaction file left unread beside one trace but audited in the
same run as a trace of its own is not called unchecked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.report.model import reader_notes
from tests.foreign import FIXTURES
from tests.logs import LogWriter, rnd

CLINE = FIXTURES / "cline"  # our own synthetic session: one messages file, two compactions


def header(path: str) -> list[str]:
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "--fail-on", "never"],
                             env={"COLUMNS": "160"}).output.splitlines()
    return out[:out.index("")]


def opaque(records_opaque: bool) -> list[dict[str, object]]:
    """A compaction recorded opaque, or one whose summary has a text (checked): a summary
    with no text over a child with one could not be checked either (adv143 F5)."""
    summary = {"id": "S", "tokens": 5, "children": ["a"],
               **({} if records_opaque else {"text": "Kept port 8080."})}
    return [rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}]),
            rnd(1, summaries=[summary], evicted=["a"],
                compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5,
                            "opaque": records_opaque})]


def test_an_opaque_compaction_is_said_in_the_header(write_log: LogWriter) -> None:
    lines = header(str(write_log(opaque(True))))
    assert "  unchecked  1 compaction could not be checked: opaque summary" in lines


def test_a_checked_compaction_adds_no_line(write_log: LogWriter) -> None:
    assert not any(ln.startswith("  unchecked") for ln in header(str(write_log(opaque(False)))))


def copy_session(folder: Path) -> Path:
    for name in ("session.messages.json", "basic.compaction.json", "agentic.compaction.json"):
        shutil.copy(CLINE / name, folder / name)
    return folder / "session.messages.json"


def test_unread_compaction_files_are_said_in_the_header(tmp_path: Path) -> None:
    lines = header(str(copy_session(tmp_path)))
    assert ("  unchecked  2 compactions could not be checked: 2 compaction files beside it "
            "not read (audit the folder, or each file by name, to check them)") in lines


def test_compaction_files_audited_in_the_same_run_are_not_unchecked(tmp_path: Path) -> None:
    messages = copy_session(tmp_path)
    alone = api.audit_paths([str(messages)], jobs=1).sessions[0]
    assert alone.compactions_not_checked() == 2
    # no compaction checked: the verdict cannot say what they lost (ux7)
    assert alone.compaction_loss() == ""
    assert alone.verdict().endswith("; this loop can drift but not invert")
    # what auditing the folder runs: every file, each compaction file a trace of its own
    report = api.audit_paths([str(tmp_path / n) for n in (
        "agentic.compaction.json", "basic.compaction.json", "session.messages.json")], jobs=1)
    both = report.sessions[2]
    assert both.compactions_not_checked() == 0
    assert both.header.extra["compaction_files_unread"] == []
    # ux7: the reader's "not read ...; audit each of them by name" is gone with them
    assert reader_notes(both) == ["audited in this run as traces of their own: "
                                  "agentic.compaction.json, basic.compaction.json"]
    assert "could not be checked" not in both.verdict()  # nothing left unchecked
    # its own file holds no compaction: said in the product's terms, not as a loop
    # that "can drift but not invert" (a PASS row beside its compactions' FAIL rows),
    # and where they are (usertest8: "no compaction in this log" read as false of a
    # session that compacted twice)
    assert both.header.extra["compaction_files_audited"] == 2
    assert both.verdict() == (
        "PASS: 0 error(s), 0 warning(s), 0 info; no compaction in this file; its 2 "
        "compaction files audited in this run as traces of their own")
    folder = CliRunner().invoke(app, ["audit", str(tmp_path), "--isolated"]).output
    assert "could not be checked" not in folder
    # one of the two named with the messages file: the other stays unread
    some = api.audit_paths([str(messages), str(tmp_path / "basic.compaction.json")], jobs=1)
    first = some.sessions[0]
    assert first.header.extra["compaction_files_unread"] == ["agentic.compaction.json"]
    assert first.compactions_not_checked() == 1
    assert reader_notes(first) == [
        "1 compaction file of this session beside session.messages.json is not read: "
        "agentic.compaction.json; audit each of them by name (or the folder) to check its "
        "compaction", "audited in this run as a trace of its own: basic.compaction.json"]


def test_a_product_log_that_never_compacted_says_so(write_log: LogWriter) -> None:
    from tests.recall.test_severity import assistant, user

    transcript = write_log([user("u1", "Rename the flag to --dry-run."),
                            assistant("a1", "Renamed it in cli.py.")], "t.jsonl")
    assert api.audit(str(transcript)).verdict() == (
        "PASS: 0 error(s), 0 warning(s), 0 info; no compaction in this log")
    # a native log keeps the conditions' words: its loop is the auditor's to judge
    native = write_log([rnd(0, spans=[{"id": "a", "tokens": 5}])], "n.jsonl")
    assert "no compaction" not in api.audit(str(native)).verdict()


def test_the_html_header_says_it_too(tmp_path: Path, write_log: LogWriter) -> None:
    """usertest15: the HTML page said PASS in green with the unread compaction files
    only in its last notes; its header table has the text report's row now."""
    pytest.importorskip("altair", reason="the html extra")
    page = tmp_path / "r.html"
    out = CliRunner().invoke(app, ["audit", str(copy_session(tmp_path)), "--isolated",
                                   "-f", "html", "-o", str(page)])
    assert out.exit_code == 0, out.output
    assert ("<tr><th>unchecked</th><td>2 compactions could not be checked: 2 compaction "
            "files beside it not read (audit the folder, or each file by name, to check "
            "them)</td></tr>") in page.read_text()
    checked = tmp_path / "c.html"
    CliRunner().invoke(app, ["audit", str(write_log(opaque(False))), "--isolated", "-f",
                             "html", "-o", str(checked)])
    assert "<th>unchecked</th>" not in checked.read_text()


def test_a_converted_log_says_the_unread_files_are_beside_its_source(tmp_path: Path) -> None:
    """usertest26b #7: a converted Cline log said its 2 unread compaction files were
    "beside it" and to audit them by name: none is beside the converted file."""
    source = copy_session(tmp_path)
    out = tmp_path / "converted" / "s.ca.jsonl"
    out.parent.mkdir()
    done = CliRunner().invoke(app, ["convert", str(source), "-o", str(out)])
    assert done.exit_code == 0, done.output
    text = " ".join(ln.strip() for ln in header(str(out)))
    assert ("unchecked  2 compactions could not be checked: 2 compaction files beside "
            "session.messages.json (where this trace was converted from) not read (audit the "
            "folder, or each file by name, to check them)") in text
    report = api.audit(str(out))
    assert report.converted_from() == "session.messages.json"
    assert all(n.endswith("(said when the cline log was read, before its conversion to "
                          "this trace)") for n in reader_notes(report))
    assert report.unchecked()[-1][0].startswith(
        "2 compaction files beside session.messages.json (where this trace was converted "
        "from) not read, so not checked")
    read = api.audit(str(source))  # read as written: as before
    assert read.converted_from() is None
    assert read.unchecked()[-1][0].startswith("2 compaction files beside the trace not read")


def test_a_source_format_that_is_no_string_is_a_field_error(write_log: LogWriter) -> None:
    """adv77 #5: an object there was printed as its Python repr in the reader notes."""
    from compaction_audit.errors import LogError
    from tests.logs import session

    path = str(write_log([session(source_format={"a": "b"}, reader_notes=["x"]),
                          rnd(0, spans=[{"id": "a", "tokens": 1}])], "sf.jsonl"))
    with pytest.raises(LogError) as err:
        api.audit(path)
    assert (err.value.line, err.value.field) == (1, "source_format")
    assert str(err.value) == f"{path}:1: expected a string, got an object (source_format)"
