"""The log writer for agent authors: output, validation as written, compression, the guide."""

from __future__ import annotations

import io
import json
import re
import runpy
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from compaction_audit.io.native import read_native
from compaction_audit.io.writer import LogWriter, Span, Summary, write_log
from compaction_audit.schema import record_schema

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "writing-logs.md"
VALIDATOR = jsonschema.Draft202012Validator(record_schema())


def three_rounds(log: LogWriter) -> None:
    """A session worked out by hand (tokens in comments)."""
    log.session(session_id="hand", budget_tokens=1000, max_depth=2, eviction="continuous")
    # round 0: a(100) b(50) c(30) arrive; all retained -> raw 180, leaves {a, b, c}
    log.round(0, spans=[Span("a", 100, text="alpha"), {"id": "b", "tokens": 50}, Span("c", 30)],
              retained={"a": 0.9, "b": 0.5, "c": 0.1})
    # round 2: d(40) arrives; s1(20) folds b, c; c evicted, b offloaded (resolvable)
    # -> raw a+d = 140, summary 20; leaves a, d, b (c is gone) = 3
    log.round(2, spans=[Span("d", 40)], summaries=[Summary("s1", 20, ["b", "c"])],
              evicted=["c"], offloaded=["b"], retained=[("a", 0.8), ("d", 0.4), ("s1", 0.3)])
    # round 5: s2(10) folds s1 and a; s1 evicted, a offloaded, b purged from the store
    # -> raw d = 40, summary 10; leaves d, a (b and c are gone) = 2
    log.round(5, summaries=[Summary("s2", 10, ["s1", "a"], accounting="kept topic only")],
              evicted=["s1", "b"], offloaded=["a"], retained={"d": 0.4, "s2": 0.8})


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_audit_of_a_written_session_matches_the_hand_computed_values(tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    with LogWriter(path) as log:
        three_rounds(log)
        assert log.working_set == {"d", "s2"}
        assert log.lines == 4
    series = api.audit(str(path)).series
    assert series["round"].to_list() == [0, 2, 5]
    assert series["line"].to_list() == [2, 3, 4]
    assert series["raw_tokens"].to_list() == [180, 140, 40]
    assert series["summary_tokens"].to_list() == [0, 20, 10]
    assert series["distinct_source_spans"].to_list() == [3, 3, 2]
    assert series["raw_ratio"].to_list() == pytest.approx([1.0, 140 / 160, 40 / 50])
    assert series["summary_depth_max"].to_list() == [0, 1, 2]
    assert series["query_cosine_retained"].to_list() == pytest.approx([0.5, 0.5, 0.6])


def test_output_is_compact_json_lines_in_pair_form(tmp_path: Path) -> None:
    path = tmp_path / "hand.jsonl"
    with LogWriter(path) as log:
        three_rounds(log)
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and b"\n\n" not in raw and b": " not in raw
    records = lines(path)
    for record in records:
        VALIDATOR.validate(record)
    assert records[0] == {"type": "session", "schema": "compaction-audit/1", "session_id": "hand",
                          "budget_tokens": 1000, "max_depth": 2, "eviction": "continuous"}
    assert records[1]["spans"] == [{"id": "a", "tokens": 100, "text": "alpha"},
                                   {"id": "b", "tokens": 50}, {"id": "c", "tokens": 30}]
    assert records[2]["retained"] == [["a", 0.8], ["d", 0.4], ["s1", 0.3]]
    assert "spans" not in records[3] and "budget_tokens" not in records[3]
    assert records[3]["summaries"] == [{"id": "s2", "tokens": 10, "children": ["s1", "a"],
                                        "accounting": "kept topic only"}]


@pytest.mark.parametrize(("bad", "field"), [
    ({"summaries": [Summary("s9", 5, ["a", "never"])]}, "summaries[0].children[1]"),
    ({"evicted": ["a"], "retained": {"a": 0.1, "b": 0.2}}, "retained[0]"),
    ({"offloaded": ["b"], "retained": [("a", 0.1), ("b", 0.2)]}, "retained[1]"),
    ({"number": 1}, "round"),
    ({"number": 0}, "round"),
    ({"spans": [Span("a", 3)]}, "spans[0].id"),
    ({"spans": [Span("x", -1)]}, "spans[0].tokens"),
    ({"evicted": "a"}, "evicted"),
])
def test_an_invalid_round_raises_and_is_not_written(tmp_path: Path, bad: dict[str, Any],
                                                    field: str) -> None:
    path = tmp_path / "bad.jsonl"
    number = bad.pop("number", 2)
    with LogWriter(path) as log:
        log.session(budget_tokens=100)
        log.round(1, spans=[Span("a", 10), Span("b", 20)], retained={"a": 0.5, "b": 0.5})
        with pytest.raises(LogError) as caught:
            log.round(number, **bad)
        assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 3, field)
        log.round(3, spans=[Span("c", 1)])  # the writer goes on from the state before
    records = lines(path)
    assert [r.get("round") for r in records] == [None, 1, 3]
    assert api.audit(str(path)).series["raw_tokens"].to_list() == [30, 31]


def test_unencodable_values_and_misuse(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    with LogWriter(path) as log:
        with pytest.raises(LogError, match="cannot encode as JSON"):
            log.round(0, logged={"raw_ratio": object()})
        log.round(0, spans=[Span("a", 1)])
        with pytest.raises(LogError, match="must be the first record"):
            log.session()
        with pytest.raises(TypeError, match="'type'"):
            log.round(1, type="checkpoint")
        log.round(1, retained={"a": float("nan")})  # no NaN in JSON: written as null
    assert path.read_text() == ('{"type":"round","round":0,"spans":[{"id":"a","tokens":1}]}\n'
                                '{"type":"round","round":1,"retained":[["a",null]]}\n')
    with pytest.raises(ValueError, match="closed"):
        log.round(2)


def test_retained_forms_and_empty_working_set(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with LogWriter(path) as log:
        log.round(0, spans=[Span("a", 1), Span("b", 2)], retained=["a", ("b", 0.5)])
        log.round(1, retained=[{"id": "a", "salience": 0.1}, ["b", None]])
        log.round(2, evicted=["a", "b"], retained={})
        assert log.working_set == frozenset()
    records = lines(path)
    assert records[0]["retained"] == [["a", None], ["b", 0.5]]
    assert records[1]["retained"] == [{"id": "a", "salience": 0.1}, ["b", None]]
    assert records[2]["retained"] == []


def test_write_log_validates_dict_records(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    good = {"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 1}]}
    assert write_log(path, [good]) == 1
    bad = {"type": "round", "round": 1, "summaries": [{"id": "s", "tokens": 1,
                                                        "children": ["zz"]}]}
    with pytest.raises(LogError, match=r"d\.jsonl:2: child id 'zz'"):
        write_log(path, [good, bad, good])
    assert lines(path) == [good]
    with pytest.raises(LogError, match="unknown record type"):
        write_log(tmp_path / "e.jsonl", [{"type": "checkpoint"}])


def test_binary_file_object_is_flushed_not_closed() -> None:
    buffer = io.BytesIO()
    with LogWriter(buffer) as log:
        log.round(0, spans=[Span("a", 1)])
    assert not buffer.closed
    assert buffer.getvalue() == b'{"type":"round","round":0,"spans":[{"id":"a","tokens":1}]}\n'


@pytest.mark.parametrize(("suffix", "magic"), [(".gz", b"\x1f\x8b"),
                                                (".zst", b"\x28\xb5\x2f\xfd")])
def test_compressed_output_round_trips_through_the_reader(tmp_path: Path, suffix: str,
                                                          magic: bytes) -> None:
    plain, packed = tmp_path / "p.jsonl", tmp_path / f"p.jsonl{suffix}"
    for path in (plain, packed):
        with LogWriter(str(path)) as log:
            three_rounds(log)
    assert packed.read_bytes()[:len(magic)] == magic
    a, b = read_native(str(plain)), read_native(str(packed))
    assert a.header == b.header
    for table in ("rounds", "items", "edges", "membership", "events"):
        assert getattr(a, table).equals(getattr(b, table)), table


def test_an_unwritable_path_is_a_log_error(tmp_path: Path) -> None:
    with pytest.raises(LogError, match="cannot open for writing"):
        LogWriter(tmp_path / "missing" / "x.jsonl")


# -- the guide: its example must run and audit as it says ---------------------------------

def guide_example() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"<!-- example: toy-loop[^>]*-->\s*```python\n(.*?)```", text, re.S)
    assert found, "the toy-loop example block is missing from docs/writing-logs.md"
    return found.group(1)


def run_example(code: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = where / "example.py"
    script.write_text(code, encoding="utf-8")
    monkeypatch.chdir(where)
    runpy.run_path(str(script), run_name="__main__")
    return where / "toy-run.jsonl"


def test_the_guide_example_runs_and_audits_as_described(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = api.audit(str(run_example(guide_example(), tmp_path, monkeypatch)))
    assert report.n_rounds == 10
    assert report.series["summary_depth_max"].max() == 3
    assert report.series["silent_drops"].sum() == 0
    assert report.series["recall_debt"].max() == 0
    codes = {(f.code, f.severity.value) for f in report.findings}
    assert codes == {("CA302", "warning"), ("CA105", "info")}
    assert {f.entity for f in report.findings if f.code == "CA302"} == {"s6", "s10", "s12"}


def test_the_guide_round_sample_is_what_the_example_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = run_example(guide_example(), tmp_path, monkeypatch)
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"```json\n(\{\"type\":\"round\".*?)```", text, re.S)
    assert found, "the sample round is missing from docs/writing-logs.md"
    sample = json.loads(found[1])
    written = next(r for r in lines(path) if r.get("round") == sample["round"])
    for record in (sample, written):
        for item in record["spans"] + record["summaries"]:
            item.pop("text", None)
    assert sample == written


def test_the_guide_variant_without_offload_or_accounting_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = guide_example()
    variant = (code.replace("offloaded.append(child)", "evicted.append(child)")
               .replace('{"dropped_values": sorted(lost)} if lost else None', "None"))
    assert variant.count("evicted.append(child)") == 2 and "dropped_values" not in variant
    report = api.audit(str(run_example(variant, tmp_path, monkeypatch)))
    codes = {f.code for f in report.findings if f.severity.value == "error"}
    assert codes == {"CA301", "CA303", "CA201"}
    # 5, was 6: "not the default" (one content word) is a fragment now (issue 10, point 2)
    assert report.series["recall_debt"].max() == 5


def test_a_span_says_who_wrote_it(tmp_path: Path) -> None:
    """usertest38 #8: ``Span`` had no ``role`` (``Span('x', 1, role='user')`` raised
    TypeError), so a person's pin written with it was read as prose: its fold was a
    warning and "asked again" was not judged.  ``role`` is written only when set."""
    pin = "Pin lib2==1.2.0 for the payments service."
    path = tmp_path / "role.jsonl"
    with LogWriter(path) as log:
        log.round(0, spans=[Span("u1", 12, text=pin, source="msg-1", role="user"),
                            Span("a1", 3, role="assistant"), Span("n1", 2)])
        log.round(1, summaries=[Summary("c1", 5, ["u1"], text="Dependencies discussed.")],
                  evicted=["u1"])
        log.round(2, spans=[Span("u2", 9, text="Which lib2 version did I pin? 1.2.0?",
                                 role="user")])
        with pytest.raises(LogError, match=r"got 'person' \(spans\[0\]\.role\)"):
            log.round(3, spans=[Span("u3", 1, role="person")])
    records = lines(path)
    assert records[0]["spans"] == [
        {"id": "u1", "tokens": 12, "text": pin, "source": "msg-1", "role": "user"},
        {"id": "a1", "tokens": 3, "role": "assistant"}, {"id": "n1", "tokens": 2}]
    assert len(records) == 3  # the bad role was not written
    report = api.audit(str(path))
    # the pin is a person's: its loss is an error, and u2 asked for it again
    assert {f.code: f.severity.value for f in report.findings
            if f.code in ("CA301", "CA303")} == {"CA301": "error", "CA303": "error"}
    assert report.extra["person_spans"] == 2
    lost = {(d["text"], d["tier_name"]) for d in report.extra["lost_discriminators"]}
    assert lost == {("lib2==1.2.0", "asked again"), ("lib2", "asked again")}  # a bound
    # value's text starts at its name (usertest38 #3)
