"""A compaction that could not be checked is said in every format that gates CI: a
SARIF notification, a skipped JUnit case and a ``github`` notice, never a silent pass
(docs/ci.md). Before, SARIF and JUnit said nothing of it (16 green JUnit cases over an
opaque summary), the ``github`` format said nothing of compaction files left unread
beside a Cline messages file, and an adapter's own reason read "no messages file
summary"."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.foreign import FIXTURES
from tests.logs import LogWriter, rnd

CLINE = FIXTURES / "cline"  # our own synthetic session: one messages file, two compactions


def run(path: str, fmt: str) -> str:
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", fmt])
    assert out.exit_code == 0, out.output
    return out.output


def opaque_log(write_log: LogWriter) -> str:
    return str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"]}], evicted=["a"],
            compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5,
                        "opaque": True})]))


def unread_session(folder: Path) -> str:
    for name in ("session.messages.json", "basic.compaction.json", "agentic.compaction.json"):
        shutil.copy(CLINE / name, folder / name)
    return str(folder / "session.messages.json")


def test_sarif_notes_an_opaque_compaction_at_its_line(write_log: LogWriter) -> None:
    path = opaque_log(write_log)
    doc = json.loads(run(path, "sarif"))
    [note] = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note"
    assert note["message"]["text"] == "compaction at round 1 could not be checked: opaque summary"
    assert note["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}  # round 1


def test_junit_skips_a_case_for_an_opaque_compaction(write_log: LogWriter) -> None:
    suite = ET.fromstring(run(opaque_log(write_log), "junit")).find("testsuite")
    assert suite is not None
    [case] = [c for c in suite.iter("testcase") if c.get("name") == "compactions checked"]
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "1 compaction could not be checked"
    assert skipped.text == "compaction at round 1 could not be checked: opaque summary (line 2)"
    assert suite.get("failures") == "0"
    assert suite.get("skipped") == str(len(suite.findall("testcase/skipped")))
    assert suite.get("tests") == str(len(list(suite.iter("testcase"))))


def test_a_checked_trace_has_no_skipped_case(write_log: LogWriter) -> None:
    path = str(write_log([rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Port 8080."}])]))
    suite = ET.fromstring(run(path, "junit")).find("testsuite")
    assert suite is not None
    assert not [c for c in suite.iter("testcase") if c.get("name") == "compactions checked"]
    doc = json.loads(run(path, "sarif"))
    assert doc["runs"][0]["invocations"][0]["toolExecutionNotifications"] == []


def test_unread_compaction_files_are_said_in_github_sarif_and_junit(tmp_path: Path) -> None:
    path = unread_session(tmp_path)
    said = ("2 compaction files beside the trace not read, so not checked: "
            "agentic.compaction.json, basic.compaction.json; audit each by name (or the "
            "folder)")
    gh = run(path, "github").splitlines()
    assert gh[0] == f"::notice file={path},title=compaction not checked::{said}"
    doc = json.loads(run(path, "sarif"))
    [note] = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"] == said
    assert "region" not in note["locations"][0]["physicalLocation"]
    suite = ET.fromstring(run(path, "junit")).find("testsuite")
    assert suite is not None
    skipped = [c.find("skipped") for c in suite.iter("testcase")
               if c.get("name") == "compactions checked"]
    assert [(s.get("message"), s.text) for s in skipped if s is not None] == [
        ("2 compactions could not be checked", said)]


def test_an_adapter_reason_is_not_called_a_summary(tmp_path: Path) -> None:
    shutil.copy(CLINE / "agentic.compaction.json", tmp_path / "agentic.compaction.json")
    gh = run(str(tmp_path / "agentic.compaction.json"), "github").splitlines()
    [notice] = [g for g in gh if g.startswith("::notice ")]
    assert notice.endswith("could not be checked: no messages file")


def _skipped(suite: ET.Element) -> dict[str, str | None]:
    return {str(c.get("name")).split()[0]: s.get("message") for c in suite.iter("testcase")
            for s in c.findall("skipped")}


def test_the_rules_that_judge_folds_are_skipped_when_no_compaction_was_checked(
        write_log: LogWriter) -> None:
    """ux5 F4: CA301-CA307 were green for a trace whose only compaction is opaque."""
    suite = ET.fromstring(run(opaque_log(write_log), "junit")).find("testsuite")
    assert suite is not None
    why = "not applicable: no compaction of this trace could be checked"
    skipped = _skipped(suite)
    assert {c: m for c, m in skipped.items() if m == why} == {
        f"CA30{i}": why for i in range(1, 8)}
    assert "CA201" not in skipped  # it judges what is there: a summary with no source


def test_one_checked_compaction_keeps_the_fold_rules_judged(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."},
                      {"id": "b", "tokens": 40, "text": "Keep port 9090."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"]}], evicted=["a"],
            compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5,
                        "opaque": True}),
        rnd(2, summaries=[{"id": "T", "tokens": 5, "children": ["b"], "text": "Port 9090."}],
            evicted=["b"], compaction={"kind": "compact", "summary_id": "T",
                                       "summary_tokens": 5})]))
    suite = ET.fromstring(run(path, "junit")).find("testsuite")
    assert suite is not None
    assert not [c for c, m in _skipped(suite).items() if c.startswith("CA30")]


def test_under_fail_on_warning_junit_fails_and_sarif_warns_as_the_exit_does(
        write_log: LogWriter) -> None:
    # adv38: exit 1 while JUnit said failures="0" and SARIF held a note only
    path = opaque_log(write_log)
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "junit",
                                   "--fail-on", "warning"])
    assert out.exit_code == 1
    suite = ET.fromstring(out.output).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    [case] = [c for c in suite.iter("testcase") if c.get("name") == "compactions checked"]
    failure = case.find("failure")
    assert failure is not None and case.find("skipped") is None
    assert failure.get("message") == "1 compaction could not be checked"
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "sarif",
                                   "--fail-on", "warning"])
    assert out.exit_code == 1
    [note] = json.loads(out.output)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning"


def test_a_logs_reason_for_an_unchecked_compaction_is_escaped_and_cut(
        write_log: LogWriter) -> None:
    reason = "x\n\x1b]0;owned\x07\x1b[2J" + "A" * 50_000
    path = str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"], "text": "x"}],
            evicted=["a"], compaction={"kind": "compact", "summary_id": "S",
                                       "unchecked": reason})]))
    text = CliRunner().invoke(app, ["audit", path, "--isolated"]).output
    assert "\x1b" not in text and "\x07" not in text and len(text) < 20_000
    assert "loss not checkable" in text and "(x\\n\\x1b]0;owned\\x07\\x1b[2J" in text
    page = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "html"]).output
    assert "losses not checkable (x\\n\\x1b]0;owned" in page  # its reason, not another
    assert "opaque summary" not in page and "A" * 2_000 not in page


def test_the_session_records_line_file_keys_are_checked(write_log: LogWriter,
                                                          tmp_path: Path) -> None:
    # adv38: a number in span_line_file_except was an internal error in every command;
    # a path in span_line_file was printed as the file of a line
    rounds = [rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}])]
    for key, value, said in [
            ("span_line_file_except", 5, "expected a list of span ids"),
            ("span_line_file_except", [{}], "span_line_file_except"),
            ("span_line_file", "../../.github/workflows/ci.yml", "not a path"),
            ("span_line_file_except_in", "/etc/passwd", "not a path")]:
        path = tmp_path / "t.jsonl"
        session = {"type": "session", "schema": "compaction-audit/1", key: value}
        path.write_text(json.dumps(session) + "\n" + "".join(
            json.dumps(r) + "\n" for r in rounds))
        out = CliRunner().invoke(app, ["audit", str(path), "--isolated"])
        assert out.exit_code == 2, (key, value, out.output)
        assert "internal error" not in out.output and said in out.output
        assert "t.jsonl:1: " in out.output and f"({key})" in out.output


def test_github_warns_where_the_gate_counts_an_unchecked_compaction(
        write_log: LogWriter) -> None:
    """usertest14: under --fail-on warning the job failed on an opaque compaction while
    its only annotation was a ::notice; at the default gate it stays a notice."""
    path = opaque_log(write_log)
    said = "compaction at round 1 could not be checked: opaque summary"
    out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "github",
                                   "--fail-on", "warning"])
    assert out.exit_code == 1
    lines = out.output.splitlines()
    assert lines[0] == f"::warning file={path},line=2,title=compaction not checked::{said}"
    assert not [x for x in lines if "title=compaction not checked" in x and "::warning" not in x]
    assert f"::notice file={path},line=2,title=compaction not checked::{said}" in run(
        path, "github").splitlines()
