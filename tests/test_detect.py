"""Format detection, and every adapter's output against the format's invariants."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io.detect import ADAPTERS, detect_format, peek_format, sniff_objects
from compaction_audit.io.native import read_records
from tests.logs import CORPUS, corpus_logs

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"

NATIVE = (b'{"type":"session","schema":"compaction-audit/1"}\n'
          b'{"type":"round","round":0,"spans":[{"id":"a","tokens":3}]}\n')


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(("name", "expected"), [
    ("claude-session.jsonl", "claude-code"),
    ("claude-sdk-snake.jsonl", "claude-code"),
    ("codex-local.jsonl", "codex"),
    ("codex-remote.jsonl", "codex"),
])
def test_fixtures_are_detected(name: str, expected: str) -> None:
    assert detect_format(str(FIXTURES / name)) == expected


def test_native_is_detected_by_session_or_round(tmp_path: Path) -> None:
    assert detect_format(write(tmp_path, "n.jsonl", NATIVE)) == "native"
    rounds_only = NATIVE.split(b"\n", 1)[1]
    assert detect_format(write(tmp_path, "r.jsonl", rounds_only)) == "native"
    assert detect_format(write(tmp_path, "e.jsonl", b"\n\n")) == "native"


def test_compressed_input_is_detected(tmp_path: Path) -> None:
    data = gzip.compress((FIXTURES / "codex-remote.jsonl").read_bytes())
    assert detect_format(write(tmp_path, "c.jsonl.gz", data)) == "codex"


def test_only_the_first_lines_are_read(tmp_path: Path) -> None:
    filler = b'{"dialect":"note"}\n' * 60
    assert sniff_objects([{"dialect": "note"}]) is None
    with pytest.raises(LogError) as info:
        detect_format(write(tmp_path, "late.jsonl", filler + NATIVE))
    assert "unrecognized log format" in str(info.value)
    assert info.value.line == 1


def test_typed_records_of_no_known_product_go_to_the_native_reader(tmp_path: Path) -> None:
    from compaction_audit.io.load import load_session

    path = write(tmp_path, "typed.jsonl", b'{"type":"note"}\n' * 3)
    assert detect_format(path) == "native"
    with pytest.raises(LogError) as info:
        load_session(path)
    assert (info.value.line, info.value.field) == (1, "type")
    assert "unknown record type 'note'" in info.value.message


def test_bad_json_is_named_when_nothing_matches(tmp_path: Path) -> None:
    with pytest.raises(LogError) as info:
        detect_format(write(tmp_path, "bad.jsonl", b'{"type":"note"}\n{oops\n'))
    assert info.value.line == 2
    assert "bad JSON" in str(info.value)


def test_a_session_record_of_another_schema_is_named_by_the_native_reader(
        tmp_path: Path) -> None:
    from compaction_audit.io.load import load_session

    path = write(tmp_path, "other.jsonl", b'{"type":"session","schema":"other/2"}\n')
    with pytest.raises(LogError) as info:
        load_session(path)
    assert (info.value.line, info.value.field) == (1, "schema")


def test_peek_format_hands_back_every_line(tmp_path: Path) -> None:
    source = FIXTURES / "claude-session.jsonl"
    fmt, lines = peek_format(str(source))
    assert fmt == "claude-code"
    out = list(ADAPTERS[fmt](str(source), lines))
    assert out == list(ADAPTERS[fmt](str(source), None))


def check_invariants(out: list[tuple[int, dict[str, Any]]]) -> None:
    """The format's structural rules, checked independently of the native reader."""
    (first_line, session), rounds = out[0], out[1:]
    assert session["type"] == "session" and session["schema"] == "compaction-audit/1"
    assert all("retained" not in r for _, r in rounds)
    defined: set[str] = set()
    working: set[str] = set()
    previous_round, previous_line = -1, first_line
    for line, rnd in rounds:
        assert rnd["type"] == "round" and rnd["round"] > previous_round
        assert line >= previous_line
        previous_round, previous_line = rnd["round"], line
        for span in rnd["spans"]:
            assert span["id"] not in defined and span["tokens"] >= 0
            defined.add(span["id"])
        for summary in rnd.get("summaries", []):
            assert summary["id"] not in defined and summary["children"]
            assert set(summary["children"]) <= defined
            defined.add(summary["id"])
        working |= {s["id"] for s in rnd["spans"]} | {s["id"] for s in rnd.get("summaries", [])}
        assert set(rnd.get("evicted", [])) <= working
        working -= set(rnd.get("evicted", []))
        info = rnd.get("compaction")
        if info is not None:
            assert info["kind"] in ("compact", "microcompact")
            assert info["trigger"] in ("auto", "manual", None)


def all_inputs() -> list[Path]:
    found = sorted(FIXTURES.glob("*.jsonl"))
    if CORPUS.is_dir():
        found += corpus_logs()
    return found


@pytest.mark.parametrize("path", all_inputs(), ids=lambda p: p.name)
def test_every_input_converts_to_valid_records(path: Path) -> None:
    fmt = detect_format(str(path))
    assert fmt in ADAPTERS
    out = list(ADAPTERS[fmt](str(path), None))
    check_invariants(out)
    session = read_records(out, str(path))
    assert session.header.extra["source_format"] == fmt
    assert len(session.compactions) == sum("compaction" in r for _, r in out)


def test_the_corpus_is_covered_when_present() -> None:
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus is not available")
    assert len(corpus_logs()) >= 4


def test_detection_decodes_no_line_after_the_first_record_of_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 14: a round of 20,000 items is megabytes; the answer is "native" as soon as
    # one line is a record of ours (a bad line before it changes nothing)
    import orjson

    import compaction_audit.io.detect as detect

    decoded: list[bytes] = []

    class Counting:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(raw: bytes) -> Any:
            decoded.append(raw)
            return orjson.loads(raw)

    monkeypatch.setattr(detect, "orjson", Counting)
    path = write(tmp_path, "a.jsonl", b"not json\n" + NATIVE + b'{"type":"round","round":1}\n' * 3)
    assert detect_format(path) == "native"
    assert [raw.strip() for raw in decoded] == [
        b"not json", b'{"type":"session","schema":"compaction-audit/1"}']
