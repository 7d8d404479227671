"""Lines a reader did not read are said in every format a CI gate reads, as a
compaction that could not be checked is: a ``github`` notice and the gate line, a
SARIF note notification, a skipped JUnit case, the Markdown heading and the summary
table across traces (adv29 F2).  Before, a Claude Code transcript whose compaction
lines were retyped said ``PASS (4 lines not read, see the notes)`` in text, and
``exit 0: 1 trace(s), 0 reach --fail-on error`` alone in ``--format github``; JUnit
and SARIF had no word of it, nor the summary table of several traces."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.github import escape_property
from tests.logs import LogWriter, rnd, session

FIXTURE = Path(__file__).parent / "fixtures" / "adapters" / "claude-session.jsonl"
HOSTILE = "a%0A::error::b"
"""A type name as a log may write it: the github format must escape it (``%25``)."""
SAID = ("5 lines not read, so not checked: 2 lines of a type this reader does not know "
        "('system2'); 2 lines of a type this reader does not know ('user2'); 1 line of a "
        "type this reader does not know ('a%0A::error::b')")


def retyped(tmp_path: Path, name: str = "retyped.jsonl") -> str:
    """The Claude Code fixture (2 compactions, FAIL) with each compaction's two lines
    retyped ('system2', 'user2'), and one line of a hostile type: 5 lines not read,
    and a PASS."""
    objs: list[dict[str, Any]] = [orjson.loads(raw)
                                  for raw in FIXTURE.read_bytes().splitlines()]
    objs = [dict(o, type=o["type"] + "2") if o.get("subtype") == "compact_boundary"
            or o.get("isCompactSummary") is True else o for o in objs]
    objs.append({"type": HOSTILE, "uuid": "h"})
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return str(path)


def run(args: list[str], code: int = 0) -> str:
    out = CliRunner().invoke(app, ["audit", *args, "--isolated"])
    assert out.exit_code == code, out.output
    return out.output


def test_github_notices_lines_not_read_and_counts_them_on_the_exit_line(
        tmp_path: Path) -> None:
    path = retyped(tmp_path)
    said = SAID.replace("%", "%25")  # the message escaped as GitHub's rules ask
    assert run([path, "-f", "github"]).splitlines() == [
        f"::notice file={escape_property(path)},title=lines not read::{said}",
        "exit 0: 1 trace(s), 0 reach --fail-on error, 5 line(s) not read"]


def test_sarif_has_a_note_notification_for_lines_not_read(tmp_path: Path) -> None:
    path = retyped(tmp_path)
    doc = json.loads(run([path, "-f", "sarif"]))
    [note] = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note"
    assert note["message"]["text"] == SAID
    assert "region" not in note["locations"][0]["physicalLocation"]  # no line: the trace


def test_junit_skips_a_lines_read_case(tmp_path: Path) -> None:
    suite = ET.fromstring(run([retyped(tmp_path), "-f", "junit"])).find("testsuite")
    assert suite is not None
    [case] = [c for c in suite.iter("testcase") if c.get("name") == "lines read"]
    skipped = case.find("skipped")
    assert skipped is not None
    assert (skipped.get("message"), skipped.text) == ("5 lines not read", SAID)
    assert suite.get("tests") == str(len(list(suite.iter("testcase"))))
    assert suite.get("skipped") == str(len(suite.findall("testcase/skipped")))
    assert suite.get("failures") == "0"


def test_markdown_heading_and_the_summary_of_several_traces_count_them(
        tmp_path: Path) -> None:
    paths = [retyped(tmp_path, "a.jsonl"), retyped(tmp_path, "b.jsonl")]
    gate = "exit 0: 2 trace(s), 0 reach --fail-on error, 10 line(s) not read"
    text = run([*paths, "--summary"])
    assert text.count(" info (5 lines not read)\n") == 2  # each row, after its counts
    assert text.rstrip().splitlines()[-1] == gate
    assert run([*paths, "-q"]).rstrip().splitlines()[-1] == gate
    markdown = run([*paths, "-f", "markdown"]).splitlines()
    assert markdown[:3] == ["## compaction-audit: PASS (10 lines not read)", "", gate]


def test_lines_shown_only_in_the_transcript_are_noticed(tmp_path: Path) -> None:
    """m3 of adv29: the Claude Code reader's isVisibleInTranscriptOnly note."""
    objs = [orjson.loads(raw) for raw in FIXTURE.read_bytes().splitlines()]
    first = next(i for i, o in enumerate(objs) if o.get("type") == "user"
                 and not o.get("isMeta") and not o.get("isCompactSummary"))
    objs.insert(first + 1, dict(objs[first], uuid="vis", isVisibleInTranscriptOnly=True))
    path = tmp_path / "vis.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    notices = [ln for ln in run([str(path), "-f", "github"], code=1).splitlines()
               if "title=lines not read" in ln]
    assert [n.split("::")[-1] for n in notices] == [
        "1 line not read, so not checked: 1 line marked isVisibleInTranscriptOnly (not "
        "sent to the model)"]


def test_many_unchecked_compactions_keep_the_lines_not_read_notice(
        write_log: LogWriter) -> None:
    """Twelve opaque compactions took every notice slot: the lines-not-read notice was
    cut and the notice episode's summary made an eleventh notice (GitHub shows 10)."""
    note = "3 lines of a type this reader does not know ('x'): not read"
    records: list[Any] = [
        session(session_id="s", lines_not_read=3, reader_notes=[note]),
        rnd(0, spans=[{"id": f"a{i}", "tokens": 40, "text": f"Keep port {8000 + i}."}
                      for i in range(12)])]
    records += [rnd(i + 1, summaries=[{"id": f"S{i}", "tokens": 5, "children": [f"a{i}"]}],
                    evicted=[f"a{i}"], compaction={"kind": "compact", "summary_id": f"S{i}",
                                                   "summary_tokens": 5, "opaque": True})
                for i in range(12)]
    path = str(write_log(records))
    out = run([path, "-f", "github"]).splitlines()
    notices = [ln for ln in out if ln.startswith("::notice ")]
    titles = [n.split("title=")[1].split("::")[0] for n in notices]
    assert titles == ["lines not read", "CA105 summary-majority (round 11)",
                      *["compaction not checked"] * 7, "5 more notice annotation(s)"]
    assert notices[0].endswith("::3 lines not read, so not checked: 3 lines of a type "
                               "this reader does not know ('x')")
    assert notices[-1].endswith("::5 more notice annotation(s) in this trace: compaction "
                                "not checked x5; the job summary and the text, JSON or "
                                "SARIF reports list them")
    # the trace's file, no line: on a line it reads as a finding there (usertest17 #9)
    assert notices[-1].startswith(f"::notice file={path},title=5 more notice")
    assert out[-1] == ("exit 0: 1 trace(s), 0 reach --fail-on error, 12 compaction(s) "
                       "could not be checked, 3 line(s) not read")


def test_a_trace_not_fully_checked_fails_a_warning_gate(
        tmp_path: Path, write_log: LogWriter) -> None:
    """adv32 A4: no --fail-on value could fail a trace whose compaction lines were not
    read (the copy-first attack stayed exit 0 under --fail-on info), while --lenient
    skips counted as a warning.  Lines not read and compactions that could not be
    checked count as a warning for the gate now; the default gate (error) passes them,
    and the verdict keeps its head."""
    path = retyped(tmp_path)
    assert run([path, "-q"]).startswith("PASS (5 lines not read, see the notes)")
    for fail_on in ("warning", "info"):
        last = run([path, "-f", "github", "--fail-on", fail_on], code=1).splitlines()[-1]
        assert last == (f"exit 1: 1 trace(s), 1 reach --fail-on {fail_on}, "
                        "5 line(s) not read")
    opaque = write_log([session(), rnd(0, spans=[{"id": "a", "tokens": 40}]), rnd(
        1, summaries=[{"id": "S", "tokens": 5, "children": ["a"]}], evicted=["a"],
        compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5,
                    "opaque": True})])
    run([str(opaque), "-q", "--fail-on", "warning"], code=1)
    run([str(opaque), "-q"], code=0)
    run([str(FIXTURE), "-q", "--fail-on", "never"], code=0)
