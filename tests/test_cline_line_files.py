"""A Cline trace's lines are lines of two files: every format names the file of each
line it shows (``line_file``), and the Folds section counts a fold's dropped facts as
its finding does ("N fact(s) dropped: L lost, H still held"), suppressions included.

The session is written here, one message per line, so every line is known by hand:

``t1.messages.json``: line 1 the header, 2 ``u1`` (user: staging, version v4.2.1),
3 ``a1`` (assistant: port 8443, timeout 45000 ms, v4.2.1, do NOT enable --force, a
cause), 4 ``u2`` (user: restates 8443 and 45000 ms), 5 ``a2``.
``t1.compaction.json`` (the basic strategy): line 2 ``u2`` kept, with the compaction
marker and its notice, 3 ``a2`` kept.

Rounds: 0 at line 2 of the messages file (u1), 1 at line 4 of it (u2), 2 at line 2 of
the compaction file (the marker).  The compaction folds u1 and a1 (fold ``line-2``):
the facts they state, each once, are staging, v4.2.1 (stated by both: one fact, two
drops), 8443, 45000 ms, "do NOT enable --force", "--force" and "because the cache would
be lost": 7 facts, 8 drops; 8443 and 45000 ms are still held by u2, which the
compaction kept, so 5 are lost and 2 still held.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io import cline
from tests.foreign import run_adapter

NOTICE = {"type": "text", "text": "<SYSTEM_NOTICE>Earlier messages were removed.</SYSTEM_NOTICE>"}


def msg(mid: str, role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": [{"type": "text", "text": text}], **extra}


def write_session(path: Path, messages: list[dict[str, Any]]) -> Path:
    """A Cline session file with its header on line 1 and message i on line i + 2."""
    body = ",\n".join(json.dumps(m) for m in messages)
    path.write_text('{"version": 1, "sessionId": "t1", "messages": [\n' + body + "\n]}\n")
    return path


def folder(where: Path, stem: str = "t1", restate: str = "port 8443 with the timeout at "
           "45000 ms") -> Path:
    """The session of the module docstring in ``where``; returns the compaction file."""
    where.mkdir(exist_ok=True)
    u2 = msg("u2", "user", f"Now run the tests against {restate}.")
    a2 = msg("a2", "assistant", "The tests passed on the first run.")
    write_session(where / f"{stem}.messages.json", [
        msg("u1", "user", "Deploy the billing service to staging with version v4.2.1."),
        msg("a1", "assistant", "Set the port to 8443, the timeout to 45000 ms and retries "
            "to 7; pin version v4.2.1; do NOT enable --force because the cache would be "
            "lost."),
        u2, a2])
    marker = {**u2, "content": [*u2["content"], NOTICE],
              "metadata": {"kind": "compaction", "messagesRemoved": 2, "reason": "auto"}}
    return write_session(where / f"{stem}.compaction.json", [marker, a2])


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def given(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return folder(tmp_path_factory.mktemp("cline") / "s")


@pytest.fixture(scope="module")
def outputs(given: Path) -> dict[str, str]:
    """The audit of the compaction file in every format (exit 1: CA301 is an error)."""
    out = {}
    for fmt in ("text", "json", "sarif", "github", "markdown", "junit", "html"):
        result = invoke("audit", str(given), "--format", fmt)
        assert result.exit_code == 1, result.output
        out[fmt] = result.stdout
    return out


# -- the reader --------------------------------------------------------------------

def test_each_round_names_the_file_its_line_is_in(given: Path) -> None:
    rounds = [(line, r.get("line_file")) for line, r in run_adapter(cline.records, given)
              if r["type"] == "round"]
    assert rounds == [(2, "t1.messages.json"), (4, "t1.messages.json"),
                      (2, "t1.compaction.json")]


def test_the_messages_file_given_names_the_compaction_file(given: Path) -> None:
    # paired with the compaction file beside it: the compaction round's line is its
    out = run_adapter(cline.records, given.with_name("t1.messages.json"))
    assert [(line, r.get("line_file")) for line, r in out if r["type"] == "round"] == [
        (2, "t1.messages.json"), (4, "t1.messages.json"), (2, "t1.compaction.json")]


def test_a_trace_read_from_one_file_names_none(given: Path, tmp_path: Path) -> None:
    alone = tmp_path / "t1.messages.json"
    alone.write_bytes(given.with_name("t1.messages.json").read_bytes())
    out = run_adapter(cline.records, alone)
    rounds = [r for _, r in out if r["type"] == "round"]
    assert [r["round"] for r in rounds] == [0, 1]
    assert all("line_file" not in r for r in rounds)


# -- every format --------------------------------------------------------------------

def test_text_says_line_of_file(outputs: dict[str, str]) -> None:
    text = outputs["text"]
    assert "round 2 (line 2 of t1.compaction.json): compact (basic, 2 removed)" in text
    finding = text[text.index("CA301"):text.index("action:")]
    assert "round 2 (line 2 of t1.compaction.json)" in finding
    # the rounds table: a column with the file beside the line
    rows = [re.split(r"\s*│\s*", ln.strip()) for ln in text.splitlines() if "│" in ln]
    assert [r[:3] for r in rows] == [["0", "2", "t1.messages.json"],
                                     ["2", "2", "t1.compaction.json"]]
    assert "of file" in text


def test_json_adds_line_file_beside_each_line(outputs: dict[str, str]) -> None:
    doc = json.loads(outputs["json"])
    ca301 = next(f for f in doc["findings"] if f["code"] == "CA301")
    assert (ca301["line"], ca301["line_file"], ca301["last_line"],
            ca301["last_line_file"]) == (2, "t1.compaction.json", 2, "t1.compaction.json")
    assert [(s["round"], s["line"], s["line_file"]) for s in doc["series"]] == [
        (0, 2, "t1.messages.json"), (2, 2, "t1.compaction.json")]
    (c,) = doc["compactions"]
    assert (c["round"], c["line"], c["line_file"]) == (2, 2, "t1.compaction.json")
    assert list(doc["series"][0])[:3] == ["round", "line", "line_file"]


def test_sarif_and_github_locate_the_real_file(outputs: dict[str, str],
                                               given: Path) -> None:
    run = json.loads(outputs["sarif"])["runs"][0]
    where = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in run["results"]}
    assert where["CA301"]["artifactLocation"]["uri"].endswith("/s/t1.compaction.json")
    assert where["CA301"]["region"] == {"startLine": 2}
    github = [ln for ln in outputs["github"].splitlines() if "CA301" in ln]
    assert len(github) == 1 and f"file={given},line=2," in github[0]


def test_markdown_junit_html_name_the_file(outputs: dict[str, str]) -> None:
    md = outputs["markdown"]
    assert r"| 2 of t1\.compaction\.json |" in md
    assert r"Lost at the compaction of round 2 (line 2 of t1\.compaction\.json)" in md
    suite = ET.fromstring(outputs["junit"])
    failure = suite.find(".//testcase[@name='CA301 silent-discriminating-fold']/failure")
    assert failure is not None and "round 2 (line 2 of t1.compaction.json" in (failure.text or "")
    assert "round 2 (line 2 of t1.compaction.json)" in outputs["html"]


def test_a_run_of_rounds_over_two_files_names_both() -> None:
    from compaction_audit.report.lines import line_at, lines_span

    assert line_at(7, None) == "line 7"
    assert line_at(7, "a\x1bb.json") == "line 7 of a\\x1bb.json"  # escaped
    assert lines_span(3, None, 9, None) == "lines 3-9"
    assert lines_span(3, "a.json", 9, "a.json") == "lines 3-9 of a.json"
    assert lines_span(712, "m.json", 7, "c.json") == "line 712 of m.json to line 7 of c.json"


def test_a_file_name_with_a_control_character_is_escaped(tmp_path: Path) -> None:
    given = folder(tmp_path / "e", stem="t\x1b1")
    text = invoke("audit", str(given)).stdout
    assert "\x1b" not in text
    assert "line 2 of t\\x1b1.compaction.json" in text
    assert "t\\x1b1.messages.json" in text


def test_convert_drops_the_stale_line_file(given: Path, tmp_path: Path) -> None:
    out = tmp_path / "t1.jsonl"
    assert invoke("convert", str(given), "-o", str(out)).exit_code == 0
    records = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert [r["type"] for r in records] == ["session", "round", "round", "round"]
    assert all("line_file" not in r for r in records)
    # its rounds are lines of the converted file, named as nothing else
    text = invoke("audit", str(out)).stdout
    assert "round 2 (line 4): compact (basic, 2 removed)" in text
    # only the spans' own lines name the messages file (the lost list, CA301's facts)
    assert " of t1." not in (text.replace("(assistant, t1.", "").replace("(user, t1.", "")
                             .replace(" of t1.messages.json)", ")"))
    assert "(line 2 of t1.messages.json)" in text


def test_native_logs_gain_no_key(tmp_path: Path) -> None:
    log = Path(__file__).resolve().parent.parent / "sample_logs" / "handwritten.jsonl"
    doc = json.loads(invoke("audit", str(log), "--format", "json").stdout)
    assert "line_file" not in json.dumps(doc)


# -- the Folds section counts what the finding counts -------------------------------------

def test_folds_section_counts_facts_as_the_finding(outputs: dict[str, str]) -> None:
    text = outputs["text"]
    assert ("fold line-2 silently dropped: 5 lost facts (2 more still held by another "
            "span) from 2 of its children") in text
    # was "8 drop(s) by line-2": v4.2.1 is one fact dropped from two children
    assert ("round 2 (line 2 of t1.compaction.json): 7 fact(s) dropped by line-2: 5 lost, "
            "2 still held") in text
    doc = json.loads(outputs["json"])
    assert doc["folded_rounds"] == [{"round": 2, "line": 2, "line_file": "t1.compaction.json",
                                     "folds": ["line-2"], "dropped": 8, "facts": 7,
                                     "lost": 5}]
    ca301 = next(f for f in doc["findings"] if f["code"] == "CA301")["values"]
    assert (ca301["facts"], ca301["facts_lost"], ca301["lost"]) == (7, 5, 8)


def test_a_fold_whose_facts_are_all_held_says_none_lost(tmp_path: Path) -> None:
    # u2 (kept) restates all of a1: nothing a1 said is lost; u1 states nothing
    where = tmp_path / "h"
    given = folder(where, restate="port 8443, the timeout 45000 ms, version v4.2.1; do NOT "
                   "enable --force because the cache would be lost")
    write_session(where / "t1.messages.json", [
        msg("u1", "user", "Deploy the billing service."),
        *json.loads((where / "t1.messages.json").read_text())["messages"][1:]])
    text = invoke("audit", str(given)).stdout
    # was "6 lost facts of 1 child": the finding called held facts lost
    assert ("dropped, but lost nothing: 6 facts, all still recoverable, from 1 of its "
            "children") in text
    assert "6 fact(s) dropped by line-2: 0 lost, 6 still held" in text


def _config(tmp_path: Path, entry: str) -> str:
    path = tmp_path / "compaction-audit.toml"
    path.write_text(f"[[suppress]]\n{entry}\n")
    return str(path)


def test_a_suppressed_fold_leaves_the_folds_section(given: Path, tmp_path: Path) -> None:
    result = invoke("audit", str(given), "--format", "json", "--config",
                    _config(tmp_path, 'fold = "line-2"'))
    doc = json.loads(result.stdout)
    assert not [f for f in doc["findings"] if f["code"] == "CA301"]
    assert doc["folded_rounds"] == []  # was still counted: 8 drops by line-2


def test_a_partly_suppressed_fold_keeps_its_counts(given: Path, tmp_path: Path) -> None:
    # one pattern covers staging only: the finding fires with all 7 facts, and so
    # does the Folds section
    result = invoke("audit", str(given), "--format", "json", "--config",
                    _config(tmp_path, 'rule = "CA301"\ndiscriminator = "staging"'))
    doc = json.loads(result.stdout)
    ca301 = next(f for f in doc["findings"] if f["code"] == "CA301")
    assert "5 lost facts (2 more still held" in ca301["message"]
    assert [(r["facts"], r["lost"]) for r in doc["folded_rounds"]] == [(7, 5)]


def test_an_episode_over_two_files_is_located_at_its_first_line() -> None:
    from compaction_audit.report import github, junit, sarif
    from compaction_audit.report.lines import line_path
    from compaction_audit.rules.base import Finding, Severity

    run = [Finding("compaction-drift", "CA104", Severity.WARNING, 4, 712, "m", "a",
                   line_file="t1.messages.json"),
           Finding("compaction-drift", "CA104", Severity.WARNING, 5, 7, "m", "a",
                   line_file="t1.compaction.json")]
    cmd = github._episode_command("d/t1.compaction.json", run)
    # the first line's file; no endLine: line 7 is a line of the other file
    assert "::warning file=d/t1.messages.json,line=712,title=" in cmd
    assert "endLine" not in cmd
    assert junit._episode_text(run).startswith(
        "rounds 4-5 (line 712 of t1.messages.json to line 7 of t1.compaction.json, "
        "2 findings)")
    assert line_path("d/t1.compaction.json", "t1.compaction.json") == "d/t1.compaction.json"
    assert line_path("d/t1.compaction.json", None) == "d/t1.compaction.json"
    assert sarif.location(line_path("d/t1.compaction.json", "t1.messages.json"), 712) == {
        "physicalLocation": {"artifactLocation": {"uri": "d/t1.messages.json"},
                             "region": {"startLine": 712}}}


def test_a_line_file_that_is_not_text_is_a_one_line_error(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps({"type": "session", "schema": "compaction-audit/1",
                               "source_format": "cline"}) + "\n"
                   + json.dumps({"type": "round", "round": 0, "line_file": 5}) + "\n")
    result = invoke("audit", str(log))
    assert result.exit_code == 2
    assert f"{log}:2: expected a string, got an integer (line_file)" in result.output
    assert "Traceback" not in result.output


def test_trace_names_the_file_of_each_line(given: Path) -> None:
    text = invoke("trace", str(given), "staging").stdout
    assert "span u1 (round 0, line 2 of t1.messages.json; now evicted at round 2)" in text
    assert "LOST at fold line-2 (depth 1, round 2, line 2 of t1.compaction.json)" in text
    tree = json.loads(invoke("trace", str(given), "staging", "--format", "json").stdout)
    (span,) = tree["children"]
    assert (span["line"], span["line_file"]) == (2, "t1.messages.json")
    assert (span["children"][0]["line"], span["children"][0]["line_file"]) == (
        2, "t1.compaction.json")
    summary = invoke("trace", str(given), "line-2").stdout
    assert "span a1 (depth 0, round 0, line 3 of t1.messages.json): evicted at round 2" \
        in summary


def test_diff_names_the_file_of_each_line(given: Path) -> None:
    text = invoke("diff", str(given), str(given)).stdout
    assert ("baseline round 2 (line 2 of t1.compaction.json), candidate round 2 (line 2 of "
            "t1.compaction.json)") in " ".join(text.split())
    doc = json.loads(invoke("diff", str(given), str(given), "--format", "json").stdout)
    occurrences = [u["baseline"] for u in doc["findings"]["persisting"]]
    assert occurrences and all(o["line_file"] == "t1.compaction.json" for o in occurrences)


def test_rounds_that_matter_never_split_a_file_name(tmp_path: Path) -> None:
    """At 100 columns the table with an "of file" column split
    'session.messages.json' over two rows ("session.message" / "s.json"): the table
    is drawn only where its file names fit whole, the list below that."""
    given = folder(tmp_path / "n", stem="a-long-session-name")
    names = ("a-long-session-name.messages.json", "a-long-session-name.compaction.json")
    for width in (100, 200):
        text = CliRunner().invoke(app, ["audit", str(given)],
                                  env={"COLUMNS": str(width)}).stdout
        section = text[text.index("Rounds that matter"):text.index("Notes")]
        assert all(n in section for n in names), (width, section)
        if width == 100:  # the list: each round's line with its file, whole
            assert "round 0 (line 2 of a-long-session-name.messages.json): raw " in section
        else:
            assert "┃ of file" in section
