"""Baselines: create, gate on new findings only, report entries that no longer occur."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction_audit.api import audit
from compaction_audit.baseline import entries, finding_keys, fingerprint, trace_key
from compaction_audit.report.model import Report
from compaction_audit.rules import Finding, Severity
from tests.gate_app import clean_records, drift_records, gained_records, run
from tests.logs import SAMPLES, dump
from tests.test_formats import check_schemas


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    dump(clean_records(), tmp_path / "traces" / "clean.jsonl")
    dump(drift_records(), tmp_path / "traces" / "drift.jsonl")
    return tmp_path


def test_create_then_gate(traces: Path) -> None:
    result = run("baseline", "create", "traces", "-o", "baseline.json", "--jobs", "1")
    assert result.exit_code == 0
    assert "baseline.json: 3 entries for 6 finding(s) in 1 of 2 trace(s)" in result.stderr
    doc = json.loads((traces / "baseline.json").read_text())
    assert doc["baseline_format"] == 1
    assert [(e["trace"], e["code"], e["key"]) for e in doc["findings"]] == [
        ("traces/drift.jsonl", "CA104", "episode:0"),
        ("traces/drift.jsonl", "CA105", "episode:0"),
        ("traces/drift.jsonl", "CA201", "episode:0"),
    ]
    assert doc["findings"][2]["fingerprint"] == fingerprint("traces/drift.jsonl", "CA201",
                                                            "episode:0")
    # unchanged traces: nothing new, exit 0
    result = run("audit", "traces", "--baseline", "baseline.json", "--jobs", "1")
    assert result.exit_code == 0
    # the gate line and JUnit say what the baseline held back (usertest63 #5)
    assert ("exit 0: 2 trace(s), 0 reach --fail-on error, 6 finding(s) in the baseline"
            in result.stdout)
    junit = run("audit", "traces", "--baseline", "baseline.json", "-f", "junit", "--jobs", "1")
    assert junit.stdout.count('<property name="baselined"') == 1
    assert '<property name="baselined" value="6 finding(s) in the baseline" />' in junit.stdout
    github = run("audit", "traces", "--baseline", "baseline.json", "-f", "github", "--jobs", "1")
    assert github.stdout.rstrip().endswith(", 6 finding(s) in the baseline")
    # -q says the PASS is over a baseline (usertest9: it said PASS and nothing more)
    quiet = run("audit", "traces", "--baseline", "baseline.json", "-q", "--jobs", "1")
    clean, drift = quiet.stdout.splitlines()[:2]
    assert "clean.jsonl: PASS: 0 error(s), 0 warning(s), 0 info; " in clean
    assert drift.endswith("drift.jsonl: PASS: 0 error(s), 0 warning(s), 0 info (6 in the baseline)")

    # --statistics says what the baseline held back (usertest58 #8: "No findings." alone)
    stats = run("audit", "traces", "--baseline", "baseline.json", "--statistics",
                "--jobs", "1")
    assert stats.exit_code == 0, stats.output
    assert "No findings (6 in the baseline)." in stats.stdout.splitlines()

    # the trace gains a finding: exit 1, and only the new one is reported
    dump(gained_records(), traces / "traces" / "drift.jsonl")
    stats = run("audit", "traces", "--baseline", "baseline.json", "--statistics",
                "--jobs", "1")
    assert stats.stdout.splitlines()[1:3] == [
        "1  CA201  ungrounded-summary  (1 episode, error)",
        "not counted above: 6 in the baseline"]
    result = run("audit", "traces", "--baseline", "baseline.json", "--format", "json",
                 "--jobs", "1")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    drift = doc["sessions"][1]
    assert [(f["code"], f["round"], f["line"]) for f in drift["findings"]] == [("CA201", 6, 8)]
    assert drift["baseline"] == {"file": "baseline.json", "suppressed": 6, "stale": [],
                                 "grown": []}
    sarif = json.loads(run("audit", "traces", "--baseline", "baseline.json", "--format",
                           "sarif", "--jobs", "1").stdout)
    states = [(r["ruleId"], r["properties"]["round"], r["baselineState"])
              for r in sarif["runs"][0]["results"]]
    # the held ones too, "unchanged": a result missing from an upload is closed as
    # fixed by code scanning (usertest61 B3)
    assert [x for x in states if x[2] != "unchanged"] == [("CA201", 6, "new")]
    assert sorted(x[:2] for x in states if x[2] == "unchanged") == [
        ("CA104", 4), ("CA105", 4), ("CA201", 1)]
    text = run("audit", "traces", "--baseline", "baseline.json", "--summary", "--jobs", "1")
    assert "baselined" in text.stdout and "exit 1: 2 trace(s), 1 reach" in text.stdout


def test_entries_that_no_longer_occur_are_reported(traces: Path) -> None:
    assert run("baseline", "create", "traces", "-o", "b.json", "--jobs", "1").exit_code == 0
    # every finding fixed, in the same session (a baseline of another session is not
    # applied, and its entries are not stale: test_baseline_facts.py)
    fixed = clean_records()
    fixed[0] = {**fixed[0], "session_id": drift_records()[0]["session_id"]}
    dump(fixed, traces / "traces" / "drift.jsonl")
    result = run("audit", "traces", "--baseline", "b.json", "--jobs", "1")
    assert result.exit_code == 0
    assert ("baseline entry no longer occurs: traces/drift.jsonl CA201 ungrounded-summary "
            "episode:0") in result.stdout
    markdown = run("audit", "traces", "--baseline", "b.json", "--format", "markdown",
                   "--jobs", "1").stdout
    assert "baseline entry no longer occurs: traces/drift\\.jsonl CA104" in markdown


def test_a_trace_named_by_another_path_than_in_the_baseline_is_pointed_out(
        traces: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Created from the parent folder, audited from inside it: the same file is
    'traces/drift.jsonl' in the baseline and 'drift.jsonl' in the run, so no entry
    matches; the run says which path the baseline has for that file name."""
    assert run("baseline", "create", "traces", "-o", "b.json", "--jobs", "1").exit_code == 0
    monkeypatch.chdir(traces / "traces")
    result = run("audit", "drift.jsonl", "clean.jsonl", "--baseline", "../b.json",
                 "--jobs", "1")
    assert result.exit_code == 1  # nothing baselined: the drift findings gate
    assert ("baseline has no entry for drift.jsonl but has for traces/drift.jsonl: if "
            "that is the same file, name it as when the baseline was made (docs/ci.md)"
            ) in " ".join(result.stdout.split())  # wrapped under its indent
    assert "for clean.jsonl" not in result.stdout  # it has no finding in the baseline
    # usertest33 #7: the trace's header says it too, where the 0 is read
    assert ("baseline 0 finding(s) in ../b.json, not shown; it has no entry under this "
            "trace's path, but has for traces/drift.jsonl (named otherwise when the "
            "baseline was made?)") in " ".join(result.stdout.split())
    doc = json.loads(run("audit", "drift.jsonl", "--baseline", "../b.json", "-f", "json",
                         "--jobs", "1").stdout)
    assert doc["baseline"]["other_path"] == ["traces/drift.jsonl"]
    # usertest32 #5: the github format (a line of its log) and -q (on stderr) say it too
    hint = ("baseline has no entry for drift.jsonl but has for traces/drift.jsonl: if that "
            "is the same file, name it as when the baseline was made (docs/ci.md)")
    github = run("audit", "drift.jsonl", "--baseline", "../b.json", "-f", "github",
                 "--jobs", "1").stdout.splitlines()
    assert github[-2:] == [hint, "exit 1: 1 trace(s), 1 reach --fail-on error"]
    quiet = run("audit", "drift.jsonl", "--baseline", "../b.json", "-q", "--jobs", "1")
    assert quiet.stdout == "FAIL: 4 error(s), 1 warning(s), 1 info\n"
    assert quiet.stderr == f"compaction-audit: {hint}\n"
    # named as in the baseline: matched, no pointer
    monkeypatch.chdir(traces)
    same = run("audit", "traces/drift.jsonl", "--baseline", "b.json", "--jobs", "1")
    assert same.exit_code == 0 and "baseline has no entry" not in same.stdout


def test_fingerprints_ignore_line_numbers_and_values(traces: Path) -> None:
    before = entries(Report([audit("traces/drift.jsonl")]))
    text = (traces / "traces" / "drift.jsonl").read_text()
    (traces / "traces" / "drift.jsonl").write_text("\n\n" + text.replace("\n", "\n\n"))
    after_report = audit("traces/drift.jsonl")
    assert after_report.findings[0].line != 3  # lines moved
    assert entries(Report([after_report])) == before


def test_finding_keys_are_entities_or_episodes() -> None:
    def f(code: str, rnd: int, entity: str | None = None) -> Finding:
        return Finding("r", code, Severity.ERROR, rnd, rnd + 2, "m", "a", {}, entity)

    findings = [f("CA101", 1), f("CA101", 2), f("CA102", 2), f("CA101", 5), f("CA301", 5, "s7"),
                f("CA101", 6), f("CA101", 9)]
    assert finding_keys(findings) == ["episode:0", "episode:0", "episode:0", "episode:1",
                                      "entity:s7", "episode:1", "episode:2"]


def test_trace_key_is_relative_and_normalized(traces: Path) -> None:
    assert trace_key("./traces//drift.jsonl") == "traces/drift.jsonl"
    assert trace_key(str(traces / "traces" / "drift.jsonl")) == "traces/drift.jsonl"
    assert trace_key("-") == "-"
    # an object storage URL is kept as given: its key is no path (adv66 #5: the
    # SARIF uri and github file= of s3://b/h/a/../x.jsonl named s3:/b/h/x.jsonl)
    for url in ("s3://b/h/a/../x.jsonl", "s3://b/a//b.jsonl", "gs://b/./c.jsonl",
                "az://c/t.jsonl/"):
        assert trace_key(url) == url
    from compaction_audit.report.sarif import artifact_uri

    assert artifact_uri("s3://b/h/a/../x y.jsonl") == "s3://b/h/a/../x%20y.jsonl"
    assert trace_key("s3:/b/x.jsonl") == "s3:/b/x.jsonl" != trace_key("s3://b/x.jsonl")


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read"),
    ("{", "bad JSON"),
    # orjson's "str is not valid UTF-8: surrogates not allowed" named no byte, no place
    (b'{"baseline_format": 1,\n "findings": ["\xff"]}',
     "bad JSON: not UTF-8 (byte 0xff at line 2, byte 16)"),
    (b"\xff\xfe{\x00}\x00", "bad JSON: UTF-16 is not supported (convert to UTF-8)"),
    ('{"findings": []}', "not a compaction-audit baseline"),
    # adv49: true == 1 and 1.0 == 1 in Python; the format is the integer 1
    ('{"baseline_format": true, "findings": []}', "not a compaction-audit baseline"),
    ('{"baseline_format": 1.0, "findings": []}', "not a compaction-audit baseline"),
    ('{"baseline_format": 1, "findings": [{"trace": "t"}]}', "findings[0] needs trace"),
    # adv10 F2: str() of a 1,000-deep array raised RecursionError ("internal error")
    ('{"baseline_format": 1, "findings": [{"trace": ' + "[" * 1000 + "]" * 1000
     + ', "code": "c", "key": "k", "rule": "r", "fingerprint": "f"}]}',
     "findings[0] needs trace"),
    ('{"baseline_format": 1, "findings": [{"trace": "t", "code": {"a": 1}, "key": "k", '
     '"rule": "r", "fingerprint": "f"}]}', "findings[0] needs trace"),
])
def test_bad_baseline_is_a_usage_error(traces: Path, content: str | bytes | None,
                                      message: str) -> None:
    if isinstance(content, bytes):
        (traces / "b.json").write_bytes(content)
    elif content is not None:
        (traces / "b.json").write_text(content)
    result = run("audit", "traces", "--baseline", "b.json", "--jobs", "1")
    assert result.exit_code == 2
    assert message in result.stderr


def test_create_to_standard_output(traces: Path) -> None:
    """``-o -`` is standard output, as for convert and simulate; it wrote a file
    named ``-`` in the working directory (adv16)."""
    result = run("baseline", "create", "traces", "-o", "-", "--jobs", "1")
    assert result.exit_code == 0
    assert result.stderr == ("compaction-audit: baseline (standard output): 3 entries for "
                             "6 finding(s) in 1 of 2 trace(s)\n")
    doc = json.loads(result.stdout)
    assert [e["code"] for e in doc["findings"]] == ["CA104", "CA105", "CA201"]
    assert not (traces / "-").exists()


def test_create_refuses_an_incomplete_run(traces: Path) -> None:
    result = run("baseline", "create", "traces", "traces/missing.jsonl", "-o", "b.json",
                 "--jobs", "1")
    assert result.exit_code == 2
    assert "baseline not written" in result.stderr
    assert not (traces / "b.json").exists()


@pytest.mark.skipif(not any(SAMPLES.glob("*.jsonl*")), reason="no sample logs yet")
def test_sample_logs_pass_against_their_own_baseline(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SAMPLES.parent)
    target = tmp_path / "baseline.json"
    assert run("baseline", "create", "sample_logs", "-o", str(target)).exit_code == 0
    result = run("audit", "sample_logs", "--baseline", str(target), "--summary")
    assert result.exit_code == 0


def test_the_baseline_is_read_once_whatever_the_number_of_traces(traces: Path) -> None:
    """adv19b F6: each trace scanned every entry (400 traces x 400,000 entries: 9 s).
    The entries are grouped by trace in one pass; the stale ones are still found."""
    from compaction_audit.baseline import Entry, apply

    class Counted(dict[str, Entry]):
        scans = 0

        def items(self):  # type: ignore[override]
            Counted.scans += 1
            return super().items()

    sessions = [audit(str(traces / "traces" / name)) for name in ("clean.jsonl",
                                                                  "drift.jsonl")] * 5
    baseline = Counted({e.fingerprint: e for e in entries(Report(sessions[:2]))})
    gone = Entry("traces/drift.jsonl", "CA102", "episode:0", "provenance-floor",
                 fingerprint("traces/drift.jsonl", "CA102", "episode:0"))
    baseline[gone.fingerprint] = gone
    out = apply(Report(sessions), baseline, "b.json")
    assert Counted.scans == 1
    assert [s.extra["baseline"]["suppressed"] for s in out.sessions] == [0, 6] * 5
    assert [len(s.extra["baseline"]["stale"]) for s in out.sessions] == [0, 1] * 5


def test_prune_drops_what_no_longer_occurs_and_adds_nothing(traces: Path) -> None:
    """usertest17 #7: the only way to drop a fixed finding's entry was to make the
    baseline again, which accepted every new finding with it."""
    assert run("baseline", "create", "traces", "-o", "b.json", "--jobs", "1").exit_code == 0
    # drift.jsonl's CA104 and CA105 are fixed (the trace now ends at round 3: only the
    # ungrounded summary is left), and a new trace fails
    dump(drift_records()[:4], traces / "traces" / "drift.jsonl")
    dump(gained_records(), traces / "traces" / "gained.jsonl")
    before = run("audit", "traces", "--baseline", "b.json", "-f", "json", "--jobs", "1")
    stale = [(e["code"], e["key"]) for s in json.loads(before.stdout)["sessions"]
             for e in s["baseline"]["stale"]]
    assert stale == [("CA104", "episode:0"), ("CA105", "episode:0")]
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "--jobs", "1")
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stderr.startswith(
        "compaction-audit: baseline p.json: 2 of 3 entries dropped (no longer occur), 1 "
        "kept; ")
    assert "finding(s) the baseline does not hold were not added" in pruned.stderr
    doc = json.loads((traces / "p.json").read_text())
    assert [(e["trace"], e["code"], e["key"]) for e in doc["findings"]] == [
        ("traces/drift.jsonl", "CA201", "episode:0")]
    old = {e["fingerprint"]: e for e in json.loads((traces / "b.json").read_text())["findings"]}
    assert all(old[e["fingerprint"]] == e for e in doc["findings"])  # kept as they were
    # the new trace still fails against the pruned baseline; the fixed ones are gone
    after = run("audit", "traces", "--baseline", "p.json", "-f", "json", "--jobs", "1")
    assert after.exit_code == 1
    assert all(not s["baseline"]["stale"] for s in json.loads(after.stdout)["sessions"])
    # SARIF says which entries no longer occur too (usertest17: only text did)
    sarif = json.loads(run("audit", "traces", "--baseline", "b.json", "-f", "sarif",
                           "--jobs", "1").stdout)
    check_schemas(sarif)
    notes = [n["message"]["text"] for n in
             sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert ("baseline entry no longer occurs: traces/drift.jsonl CA104 compaction-drift "
            "episode:0") in notes
    # the baseline itself is no output
    same = run("baseline", "prune", "b.json", "traces", "-o", "b.json")
    assert same.exit_code == 2


def test_entries_of_rules_not_run_are_neither_stale_nor_pruned(traces: Path) -> None:
    """usertest18 #1, adv67: under --select/--ignore the entries of rules that did not
    run were listed as "no longer occur" and ``prune`` dropped them."""
    assert run("baseline", "create", "traces", "-o", "b.json", "--jobs", "1").exit_code == 0
    only = run("audit", "traces", "--baseline", "b.json", "--select", "CA201", "-f", "json",
               "--jobs", "1")
    assert only.exit_code == 0, only.output
    assert [s["baseline"]["stale"] for s in json.loads(only.stdout)["sessions"]] == [[], []]
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "--ignore",
                 "CA104", "--jobs", "1")
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stderr == ("compaction-audit: baseline p.json: 0 of 3 entries dropped "
                             "(no longer occur), 3 kept (1 of rules this run did not "
                             "select)\n")
    doc = json.loads((traces / "p.json").read_text())
    assert [e["code"] for e in doc["findings"]] == ["CA104", "CA105", "CA201"]
    # a rule that ran and no longer fires is still stale beside one that did not run
    dump(drift_records()[:4], traces / "traces" / "drift.jsonl")
    fixed = run("baseline", "prune", "b.json", "traces", "-o", "q.json", "--ignore",
                "CA104", "--jobs", "1")
    assert fixed.stderr.startswith("compaction-audit: baseline q.json: 1 of 3 entries "
                                   "dropped (no longer occur), 2 kept (1 of rules this "
                                   "run did not select)")
    doc = json.loads((traces / "q.json").read_text())
    assert [e["code"] for e in doc["findings"]] == ["CA104", "CA201"]


def test_an_episode_whose_number_moved_is_still_the_baseline_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest32 #4: the handwritten sample's CA203 at round 3 is ``episode:0`` in the
    baseline; a new CA203 at round 1 made it ``episode:1``, and the run said the entry
    "no longer occurs" (prune dropped it) while reporting the same round-3 finding as
    new.  It is the entry's episode: held, not stale; the round-1 one alone is new."""
    monkeypatch.chdir(tmp_path)
    records = [json.loads(ln) for ln in
               (SAMPLES / "handwritten.jsonl").read_text().splitlines() if ln.strip()]
    dump(records, tmp_path / "t.jsonl")
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    held = {(e["code"], e["key"]): e.get("rounds") for e in json.loads(
        (tmp_path / "b.json").read_text())["findings"]}
    assert held[("CA203", "episode:0")] == [3, 3]
    records[2]["summaries"][0].pop("accounting")  # round 1: s1 evicted, not offloaded,
    records[2]["evicted"], records[2]["offloaded"] = ["s1", "s2"], []  # so 3 spans, 4 logged
    records[5]["evicted"] = []
    dump(records, tmp_path / "t.jsonl")
    doc = json.loads(run("audit", "t.jsonl", "--baseline", "b.json", "-f", "json").stdout)
    assert [(f["code"], f["round"]) for f in doc["findings"] if f["code"] == "CA203"] == [
        ("CA203", 1)]
    assert not [e for e in doc["baseline"]["stale"] if e["code"] == "CA203"]
    pruned = run("baseline", "prune", "b.json", "t.jsonl", "-o", "p.json")
    assert pruned.exit_code == 0
    kept = {(e["code"], e["key"]) for e in json.loads(
        (tmp_path / "p.json").read_text())["findings"]}
    assert ("CA203", "episode:0") in kept
