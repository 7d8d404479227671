"""--lenient without cascades (issue 11, item 2): only records bad in themselves are
skipped, what they defined is quarantined, later references to it are dependent
rejects, and a trace with skipped records never passes silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io import parallel
from compaction_audit.io.native import read_native
from tests.logs import SAMPLES, LogWriter, rnd, spans

A_B = rnd(0, spans=spans(("a", 10), ("b", 5)), retained=[["a", 0.5], ["b", 0.4]])
BAD_ROUND = rnd(1, spans=[{"id": "c", "tokens": -1}, {"id": "d", "tokens": 3}],
                retained=[["a", 0.5], ["b", 0.4], ["c", 0.1], ["d", 0.2]])


def test_a_later_record_keeps_all_but_its_references_to_the_skipped_record(
        write_log: LogWriter) -> None:
    path = write_log([
        A_B, BAD_ROUND,
        rnd(2, summaries=[{"id": "f", "tokens": 2, "children": ["d"]}],
            retained=[["a", 0.5], ["c", 0.3], ["f", 0.9]], offloaded=["b"]),
        rnd(3, evicted=["b"]),
    ])
    s = read_native(str(path), lenient=True)
    assert [(e.line, e.field) for e in s.skipped] == [(2, "spans[0].tokens")]
    assert [(e.line, e.field) for e in s.dependent] == [
        (3, "summaries[0].children[0]"), (3, "retained[1]")]
    assert "summary 'f' dropped (dependent reject): its child 'd' is defined by the " \
           "skipped record at line 2" in s.dependent[0].message
    assert s.dependent[1].message == (
        "2 reference(s) dropped from retained (dependent reject): 'c', 'f', defined by the "
        "skipped record at line 2")
    assert s.rounds["round"].to_list() == [0, 2, 3]
    assert s.items["id"].to_list() == ["a", "b"]
    assert s.events.select("id", "action").rows() == [("b", "offloaded"), ("b", "evicted")]
    key = ["id", "start", "end"]
    assert s.membership.sort(key).rows() == [("a", 0, 3), ("b", 0, 1)]


def test_what_a_skipped_round_may_have_removed_is_quarantined_not_dropped(
        write_log: LogWriter) -> None:
    # the skipped round 1 may have offloaded b; round 2 no longer lists it
    path = write_log([A_B, rnd(1, retained=[["a", "high"]], offloaded=["b"]),
                      rnd(2, retained=[["a", 0.5]]), rnd(3, evicted=["b"])])
    s = read_native(str(path), lenient=True)
    assert [e.line for e in s.skipped] == [2]
    assert s.events.height == 0  # no silent drop of b at round 2
    assert [(e.line, e.field) for e in s.dependent] == [(4, "evicted[0]")]
    assert s.rounds["round"].to_list() == [0, 2, 3]


def test_a_record_bad_in_itself_is_still_skipped_when_it_names_quarantined_ids(
        write_log: LogWriter) -> None:
    path = write_log([A_B, BAD_ROUND,
                      rnd(2, retained=[["a", 0.5], ["c", 0.1], ["c", 0.1]]),
                      rnd(3, retained=[["a", 0.5]], evicted=["d"], offloaded=["d"])])
    s = read_native(str(path), lenient=True)
    assert [(e.line, e.field) for e in s.skipped] == [
        (2, "spans[0].tokens"), (3, "retained[2].id"), (4, "offloaded")]
    assert "listed twice" in s.skipped[1].message
    assert s.dependent == []


def _one_bad_key(tmp_path: Path) -> Path:
    lines = (SAMPLES / "research-decay.jsonl").read_bytes().splitlines(keepends=True)
    first = orjson.loads(lines[1])
    first["spans"][0]["tokens"] = -1
    lines[1] = orjson.dumps(first) + b"\n"
    path = tmp_path / "one-bad-key.jsonl"
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize("helpers", [False, True])
def test_one_bad_key_skips_one_round_of_forty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: bool) -> None:
    path = _one_bad_key(tmp_path)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0 if helpers else 1 << 62)
    assert parallel.wanted(str(path)) == helpers
    s = read_native(str(path), lenient=True)
    assert [(e.line, e.field) for e in s.skipped] == [(2, "spans[0].tokens")]
    assert s.n_rounds == 39
    assert s.dependent and all(e.line > 2 for e in s.dependent)


def test_a_trace_with_skipped_records_never_passes_silently(tmp_path: Path) -> None:
    path = _one_bad_key(tmp_path)
    result = CliRunner().invoke(app, ["audit", str(path), "--lenient", "-f", "json"])
    doc = json.loads(result.output)
    assert doc["session"]["rounds"] == 39
    assert len(doc["skipped"]) == 1
    assert "1 bad record(s) skipped and" in doc["verdict"]
    assert not doc["verdict"].startswith("PASS")
    text = CliRunner().invoke(app, ["audit", str(path), "--lenient"]).output
    assert "1 bad record(s) skipped" in text
    assert "dependent " in text


@pytest.mark.parametrize("table", ['select = []', 'ignore = ["ALL"]'])
def test_a_configuration_that_selects_no_rule_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> None:
    # the file is in a parent directory, found by walking up
    (tmp_path / "pyproject.toml").write_text(f"[tool.compaction-audit]\n{table}\n")
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    trace = str(SAMPLES / "handwritten.jsonl")
    for command in (["audit", trace], ["baseline", "create", trace, "-o", "base.json"],
                    ["diff", trace, trace]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 2, command
        assert result.output.startswith("compaction-audit: no rule is selected (")
        assert f"from {tmp_path / 'pyproject.toml'} [tool.compaction-audit]" in result.output
        assert len(result.output.splitlines()) == 1
    assert not (work / "base.json").exists()


def test_the_report_names_the_config_file(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "compaction-audit.toml").write_text('fail-on = "never"\n')
    monkeypatch.chdir(tmp_path)
    trace = str(SAMPLES / "handwritten.jsonl")
    doc = json.loads(CliRunner().invoke(app, ["audit", trace, "-f", "json"]).output)
    assert doc["config"] == "compaction-audit.toml"
    text = CliRunner().invoke(app, ["audit", trace]).output
    # in the header, as pytest's; the verdict stays the last line (issue 13, section 2)
    assert "  config     compaction-audit.toml" in text.splitlines()
    many = json.loads(CliRunner().invoke(app, ["audit", trace, trace, "-f", "json",
                                               "--isolated"]).output)
    assert many["config"] is None


def test_what_an_unreadable_line_may_have_removed_is_quarantined_too(
        write_log: LogWriter) -> None:
    path = write_log([A_B, '{"type": "round", "round": 1, "offloaded": ["b"]',
                      rnd(2, retained=[["a", 0.5]]), rnd(3, evicted=["b"])])
    s = read_native(str(path), lenient=True)
    assert [e.line for e in s.skipped] == [2]
    assert s.events.height == 0
    assert [(e.line, e.field) for e in s.dependent] == [(4, "evicted[0]")]


def test_rounds_without_retained_leave_a_skipped_round_pending(write_log: LogWriter) -> None:
    """adv25 O1: the skipped round 1 may have offloaded b; round 2 has no ``retained``
    list (delta mode) and cannot tell, so round 3, which no longer lists b, settles
    it: b is quarantined, not a silent drop, and its eviction from the store at round
    4 is a dependent reject, not a second skipped record ("no longer resolvable")."""
    path = write_log([A_B, rnd(1, retained=[["a", "high"]], offloaded=["b"]),
                      rnd(2, spans=spans(("e", 4))),
                      rnd(3, retained=[["a", 0.5], ["e", 0.2]]), rnd(4, evicted=["b"])])
    s = read_native(str(path), lenient=True)
    assert [e.line for e in s.skipped] == [2]
    assert s.events.height == 0  # no silent drop of b at round 3
    assert [(e.line, e.field) for e in s.dependent] == [(5, "evicted[0]")]
    assert s.dependent[0].message == (
        "1 reference(s) dropped from evicted (dependent reject): 'b', defined by the "
        "skipped record at line 2")
    assert s.rounds["round"].to_list() == [0, 2, 3, 4]


def test_an_offload_of_what_a_skipped_round_may_have_brought_back_is_dependent(
        write_log: LogWriter) -> None:
    """adv25 O1: round 1 offloads b to the store; the skipped round 2 lists b in
    ``retained`` (a rehydration); round 3 offloads b again.  That offload may be
    right: a dependent reject, not "offloaded id 'b' is not in the working set"."""
    path = write_log([A_B, rnd(1, retained=[["a", 0.5]], offloaded=["b"]),
                      rnd(2, retained=[["a", "high"], ["b", 0.4]]),
                      rnd(3, retained=[["a", 0.5]], offloaded=["b"])])
    s = read_native(str(path), lenient=True)
    assert [(e.line, e.field) for e in s.skipped] == [(3, "retained[0].salience")]
    assert [(e.line, e.field) for e in s.dependent] == [(4, "offloaded[0]")]
    assert s.dependent[0].message == (
        "1 reference(s) dropped from offloaded (dependent reject): 'b', in the store: "
        "the skipped round at line 3 may have brought them back")
    assert s.events.select("id", "action").rows() == [("b", "offloaded")]
    assert s.rounds["round"].to_list() == [0, 1, 3]


def _corrupted(record: dict[str, Any], how: int) -> dict[str, Any]:
    """``record`` made bad in itself in one of four ways, keeping every id it defines."""
    out = json.loads(json.dumps(record))
    if how == 0 and out.get("spans"):
        out["spans"][0]["tokens"] = -1
    elif how == 1:
        out["round"] = "x"
    elif how == 2 and out.get("retained"):
        out["retained"] = [{"id": None}, *out["retained"]]
    else:
        out["evicted"] = [*(out.get("evicted") or []), None]
    return out


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.glob("*.jsonl")))
def test_one_bad_round_anywhere_is_one_skipped_record(tmp_path: Path, sample: str) -> None:
    """adv25 O1, as a class: each round of each sample log, made bad in itself (each
    round in turn one of four ways), is exactly one skipped record; what follows from
    it is dependent rejects, never more skips."""
    lines = (SAMPLES / sample).read_text().splitlines()
    path = tmp_path / sample
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") != "round":
            continue
        path.write_text("\n".join([*lines[:i], json.dumps(_corrupted(record, i % 4)),
                                   *lines[i + 1:]]) + "\n")
        s = read_native(str(path), lenient=True)
        assert [e.line for e in s.skipped] == [i + 1], (i, [str(e) for e in s.skipped])


def test_the_verdict_counts_no_dependent_reject_when_there_is_none(tmp_path: Path) -> None:
    # ux7: "1 bad record(s) skipped and 0 dependent reject(s)" was noise
    lines = (SAMPLES / "handwritten.jsonl").read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines) + "\n" + lines[-1][:40])  # a truncated last line
    doc = json.loads(CliRunner().invoke(app, ["audit", str(path), "--lenient", "-f", "json"]
                                        ).stdout)
    assert len(doc["skipped"]) == 1 and doc["dependent"] == []
    assert doc["verdict"] == "FAIL: 6 error(s), 2 warning(s), 0 info; 1 bad record(s) " \
        "skipped (--lenient)"
    text = CliRunner().invoke(app, ["audit", str(path), "--lenient"]).output
    assert "  skipped    1 bad record(s) skipped (--lenient)" in text.splitlines()


@pytest.mark.parametrize(("how", "skipped"), [
    # adv28 F1: a summary bad in itself, with a quarantined child, was only a
    # "dependent reject": two bad records counted as one
    ("two_bad", [3, 5]),
    # adv28 F2: a bad or missing "type" did not leave the working set pending
    ("type_number", [3]), ("type_missing", [3]), ("type_unknown", [3]),
    # adv28 F3: a span whose id cannot be read may have defined anything
    ("span_id_null", [2]),
    # a span that repeats an id defined before: its own id is unknown too
    ("span_id_again", [2]),
    # a summary that names itself as a child, after a skipped record: a cycle
    ("self_child", [3, 5]),
])
def test_one_bad_record_is_one_skip_whatever_is_wrong_with_it(
        tmp_path: Path, how: str, skipped: list[int]) -> None:
    records = [json.loads(x) for x in (SAMPLES / "handwritten.jsonl").read_text().splitlines()]
    if how == "two_bad":
        records[2]["round"] = "x"
        records[4]["summaries"][0]["text"] = 5
    elif how == "type_number":
        records[2]["type"] = 5
    elif how == "type_missing":
        del records[2]["type"]
    elif how == "type_unknown":
        records[2]["type"] = "rounds"
    elif how == "span_id_null":
        records[1]["spans"][0]["id"] = None
    elif how == "self_child":
        records[2]["round"] = "x"
        records[4]["summaries"][0]["children"].append("r1")
    else:
        records[1]["spans"][1]["id"] = records[1]["spans"][0]["id"]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    s = read_native(str(path), lenient=True)
    assert [e.line for e in s.skipped] == skipped, [str(e) for e in s.skipped]
