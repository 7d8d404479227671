"""A Claude Code line naming a parent the file does not hold means lines may be
missing: a gap, said in every format a gate reads, that fails ``--fail-on warning``
(usertest76 F5).  Before, deleting a compaction's two lines (the boundary and its
summary) turned a failing transcript into ``PASS: ...; no compaction in this log``
under every gate, though the next line still named the deleted summary as its parent.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson

from compaction_audit.io.claude_parents import MissingParents
from tests.gate_app import run
from tests.logs import ROOT

CLAUDE = ROOT / "tests" / "fixtures" / "adapters" / "claude-session.jsonl"
"""Our Claude Code session (28 lines): compactions at lines 18-19 (boundary c-b1,
summary c-s1) and 26-27 (c-b2, c-s2), FAIL; lines 20 and 28 name the summaries."""

VERDICT = ("PASS (2 lines name a parent not in the file, the first line 18: lines may "
           "be missing): 0 error(s), 0 warning(s), 0 info; no compaction in this log")
"""The verdict of the session with both compactions' lines deleted: old line 20 is
line 18 there, old line 28 is line 24."""


def objects() -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in CLAUDE.read_bytes().splitlines()]


def write(tmp_path: Path, objs: list[dict[str, Any]], name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return str(path)


def deleted(tmp_path: Path) -> str:
    """The session without its compactions' four lines (18, 19, 26, 27)."""
    return write(tmp_path, [o for o in objects() if o.get("subtype") != "compact_boundary"
                            and o.get("isCompactSummary") is not True], "deleted.jsonl")


def test_deleted_compactions_leave_lines_naming_their_summaries(tmp_path: Path) -> None:
    path = deleted(tmp_path)
    quiet = run("audit", path, "-q")
    assert quiet.exit_code == 0, quiet.output  # the default gate: errors only
    assert quiet.output.splitlines()[0] == VERDICT
    warned = run("audit", path, "-q", "--fail-on", "warning")
    assert warned.exit_code == 1  # the hostile-log gate fails it (docs/ci.md)
    doc = json.loads(run("audit", path, "-f", "json").stdout)
    assert doc["parents_missing"] == 2
    assert doc["session"]["extra"]["parents_missing_line"] == 18
    assert doc["session"]["extra"]["reader_notes"] == [
        "2 lines name a parent line (parentUuid) that is not in the file, the first at "
        "line 18: lines may be missing before them"]


def test_the_intact_session_has_no_gap(tmp_path: Path) -> None:
    doc = json.loads(run("audit", str(CLAUDE), "-f", "json").stdout)
    assert doc["parents_missing"] == 0
    assert "parents_missing" not in doc["session"]["extra"]
    assert "lines may be missing" not in doc["verdict"]


def test_one_deleted_compaction_names_its_line(tmp_path: Path) -> None:
    objs = [o for o in objects() if o.get("uuid") not in ("c-b2", "c-s2")]
    out = run("audit", write(tmp_path, objs), "-q").output
    assert out.splitlines()[0] == (  # the first compaction kept its facts
        "PASS (line 26 names a parent not in the file: lines may be missing): 0 error(s), "
        "0 warning(s), 0 info; 1 compaction lost 0 fact(s)")


def test_a_file_cut_at_its_start_reads_as_a_resumed_session(tmp_path: Path) -> None:
    """Lines 2-4 gone: line 5's parent is no line of the file, but no line before it
    named one the file holds, as in a session resumed from another file."""
    objs = objects()
    out = run("audit", write(tmp_path, objs[:1] + objs[4:]), "-f", "json").stdout
    assert json.loads(out)["parents_missing"] == 0


def test_a_parent_written_later_in_the_file_is_no_gap(tmp_path: Path) -> None:
    objs = objects()
    early = {"type": "progress", "uuid": "p-early", "parentUuid": "c-a8",
             "sessionId": objs[1]["sessionId"], "data": {"type": "hook_progress"}}
    out = run("audit", write(tmp_path, [*objs[:20], early, *objs[20:]]), "-f", "json")
    assert json.loads(out.stdout)["parents_missing"] == 0


def test_github_junit_and_sarif_say_it_at_the_first_line(tmp_path: Path) -> None:
    path = deleted(tmp_path)
    github = run("audit", path, "-f", "github", "--fail-on", "warning").stdout.splitlines()
    assert github == [
        f"::warning file={path},line=18,title=lines may be missing::2 lines name a "
        "parent not in the file, the first line 18: lines may be missing, a compaction's "
        "perhaps, and were not checked (see the notes)",
        "exit 1: 1 trace(s), 1 reach --fail-on warning, 2 line(s) naming a parent not "
        "in the file"]
    suite = ET.fromstring(run("audit", path, "-f", "junit").stdout).find("testsuite")
    assert suite is not None
    [case] = [c for c in suite.iter("testcase") if c.get("name") == "lines present"]
    skipped = case.find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "2 lines naming a parent not in the file"
    assert skipped.text is not None and skipped.text.endswith("(line 18)")
    sarif = json.loads(run("audit", path, "-f", "sarif").stdout)
    [note] = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note"
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 18


def test_diff_fails_a_candidate_with_lines_missing(tmp_path: Path) -> None:
    doc = json.loads(run("diff", str(CLAUDE), deleted(tmp_path), "-f", "json",
                         "--fail-if-onset-earlier", "0").stdout)
    assert (doc["baseline"]["parents_missing"], doc["candidate"]["parents_missing"]) == (
        0, 2)
    assert doc["gates"]["passed"] is False
    assert doc["gates"]["reasons"][0].startswith(
        "the candidate could not be checked as fully as the baseline: 2 lines naming a "
        "parent not in the file (the baseline: 0)")


def test_missing_parents_counts_lines_once_the_chain_began() -> None:
    seen: set[str] = set()
    parents = MissingParents()
    for line, (uuid, parent) in enumerate([("a", "elsewhere"), ("b", "a"), ("c", "gone"),
                                           ("d", None), ("e", 12), ("f", "gone"),
                                           ("g", "later"), ("later", "b")], start=1):
        parents.see(line, parent, seen)
        seen.add(uuid)
    assert parents.found(seen) == (2, 3)  # "gone" twice; "elsewhere" came first
    assert MissingParents().found(seen) is None
