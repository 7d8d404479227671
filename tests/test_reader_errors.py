"""Every reader error of the spec: message names the line and field; exit 2 via CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io.native import read_native
from tests.logs import LogWriter, dump, rnd, session, spans

OK0 = rnd(0, spans=spans(("a", 10), ("b", 5)), retained=[["a", 0.5], ["b", 0.4]])

CASES: list[tuple[str, list[Any], int, str, str]] = [
    # (name, records, line, message fragment, field)
    ("bad json", [OK0, "{not json}"], 2, "bad JSON", ""),
    ("not an object", [OK0, "[1, 2]"], 2, "a record must be a JSON object", ""),
    ("missing type", [{"round": 1}], 1, "missing field", "type"),
    ("unknown type", [OK0, {"type": "banana"}], 2, "unknown record type 'banana'", "type"),
    ("session not first", [OK0, session()], 2, "must be the first record", "type"),
    ("bad schema", [{"type": "session", "schema": "other/2"}], 1,
     "expected 'compaction-audit/1', got 'other/2'", "schema"),
    # adv131: a missing schema read "got None"; a long one is clipped, another type named
    ("missing schema", [{"type": "session"}], 1, "missing field", "schema"),
    ("long schema", [{"type": "session", "schema": "x" * 5000}], 1,
     f"got '{'x' * 40}'...", "schema"),
    ("schema list", [{"type": "session", "schema": ["compaction-audit/1"]}], 1,
     "got a list", "schema"),
    ("bad eviction", [session(eviction="sometimes")], 1, "must be 'continuous'", "eviction"),
    ("budget zero", [session(budget_tokens=0)], 1, "must be >= 1", "budget_tokens"),
    ("round missing", [{"type": "round"}], 1, "missing field", "round"),
    ("round not int", [rnd("1")], 1, "expected an integer, got a string", "round"),
    ("round not increasing", [OK0, rnd(0)], 2, "does not increase", "round"),
    ("negative tokens", [rnd(0, spans=[{"id": "a", "tokens": -1}])], 1, "must be >= 0",
     "spans[0].tokens"),
    ("tokens float", [rnd(0, spans=[{"id": "a", "tokens": 1.5}])], 1,
     "expected an integer", "spans[0].tokens"),
    ("tokens bool", [rnd(0, spans=[{"id": "a", "tokens": True}])], 1,
     "got a boolean", "spans[0].tokens"),
    ("span id list", [rnd(0, spans=[{"id": [1], "tokens": 1}])], 1,
     "id must be a string or an integer", "spans[0].id"),
    ("duplicate id same round", [rnd(0, spans=spans(("a", 1), ("a", 2)))], 1,
     "duplicate id 'a'", "spans[1].id"),
    ("duplicate id later round", [OK0, rnd(1, spans=spans(("b", 1)))], 2,
     "duplicate id 'b'", "spans[0].id"),
    ("child never defined", [OK0, rnd(1, summaries=[
        {"id": "S", "tokens": 1, "children": ["a", "zz"]}])], 2,
     "child id 'zz' is never defined", "summaries[0].children[1]"),
    ("empty children", [OK0, rnd(1, summaries=[{"id": "S", "tokens": 1, "children": []}])], 2,
     "at least one child", "summaries[0].children"),
    ("self cycle", [OK0, rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["S"]}])], 2,
     "provenance cycle", "summaries[0].children[0]"),
    ("two-summary cycle", [OK0, rnd(1, summaries=[
        {"id": "S", "tokens": 1, "children": ["T"]},
        {"id": "T", "tokens": 1, "children": ["S"]}])], 2,
     "provenance cycle through 'T'", "summaries[0].children[0]"),
    ("declared depth wrong", [OK0, rnd(1, summaries=[
        {"id": "S", "tokens": 1, "children": ["a"], "depth": 2}])], 2,
     "declared depth 2 differs from the derived depth 1", "summaries[0].depth"),
    ("retained never defined", [OK0, rnd(1, retained=[["a", 0.1], ["q", 0.2]])], 2,
     "id 'q' is never defined", "retained[1]"),
    ("retained twice", [rnd(0, spans=spans(("a", 1)), retained=[["a", 0.1], ["a", 0.2]])], 1,
     "listed twice", "retained[1].id"),
    ("retained bad salience", [rnd(0, spans=spans(("a", 1)), retained=[["a", "high"]])], 1,
     "salience must be a number or null", "retained[0].salience"),
    ("retained bad pair", [rnd(0, spans=spans(("a", 1)), retained=[["a"]])], 1,
     "a pair must be [id, salience]", "retained[0]"),
    ("retained and evicted", [OK0, rnd(1, evicted=["a"], retained=[["a", 0.1], ["b", 0.1]])],
     2, "retained and also evicted or offloaded", "retained[0]"),
    ("evicted neither in ws nor store", [OK0, rnd(1, evicted=["a"]), rnd(2, evicted=["a"])], 3,
     "no longer resolvable (evicted at round 1)", "evicted[0]"),
    ("evicted never defined", [OK0, rnd(1, evicted=["nope"])], 2, "never defined",
     "evicted[0]"),
    ("offloaded not in ws", [OK0, rnd(1, offloaded=["a"]), rnd(2, offloaded=["a"])], 3,
     "offloaded id 'a' is not in the working set", "offloaded[0]"),
    ("evicted and offloaded", [OK0, rnd(1, evicted=["a"], offloaded=["a"])], 2,
     "both evicted and offloaded", "offloaded"),
    ("retained after eviction", [OK0, rnd(1, evicted=["a"]), rnd(2, retained=[["a", 0.1]])],
     3, "no longer resolvable", "retained[0]"),
    ("evicted listed twice", [OK0, rnd(1, evicted=["a", "a"])], 2, "listed twice",
     "evicted[1]"),
    # adv72 #1: each copy of a child counted its lost facts again
    ("child listed twice", [OK0, rnd(1, summaries=[
        {"id": "S", "tokens": 1, "children": ["a", "a"]}])], 2, "id 'a' listed twice",
     "summaries[0].children[1]"),
    ("child listed twice as a number and a string",
     [rnd(0, spans=[{"id": 3, "tokens": 1}]), rnd(1, summaries=[
         {"id": "S", "tokens": 1, "children": [3, "3"]}])], 2, "id '3' listed twice",
     "summaries[0].children[1]"),
    ("logged wrong type", [rnd(0, logged={"raw_ratio": "0.5"})], 1, "expected a number",
     "logged.raw_ratio"),
    ("salience class", [rnd(0, spans=[{"id": "a", "tokens": 1, "salience_class": "x"}])], 1,
     "must be 'discriminating' or 'narrative'", "spans[0].salience_class"),
    ("tokens too large", [rnd(0, spans=[{"id": "a", "tokens": 2**63 - 1}])], 1,
     "must be <= 1000000000000", "spans[0].tokens"),
    ("round too large", [rnd(2**64 - 1)], 1, "must be <= 9007199254740991", "round"),
    # the compaction keys the reports read (adv61: "opaque": "false" changed the verdict,
    # -5 tokens and a Python repr were printed, an undefined summary judged without it)
    ("compaction flag", [rnd(0, compaction={"opaque": "false"})], 1,
     "expected true, false or null, got a string", "compaction.opaque"),
    ("compaction count", [rnd(0, compaction={"tokens_before": -5})], 1, "must be >= 0",
     "compaction.tokens_before"),
    ("compaction count bool", [rnd(0, compaction={"summary_tokens": True})], 1,
     "expected an integer, got a boolean", "compaction.summary_tokens"),
    ("compaction word", [rnd(0, compaction={"kind": {"a": 1}})], 1,
     "expected a string or null, got an object", "compaction.kind"),
    ("compaction summary undefined", [rnd(0, spans=[{"id": "a", "tokens": 1}],
                                          compaction={"summary_id": "nope"})], 1,
     "summary 'nope' is not defined", "compaction.summary_id"),
    # past 64 bits orjson reads a float: still out of bounds, not "not an integer" (adv60)
    ("round past 64 bits", [rnd(2**64)], 1,
     "must be <= 9007199254740991, got 1.845e+19", "round"),
    ("tokens past 64 bits", [rnd(0, spans=[{"id": "a", "tokens": -(10**30)}])], 1,
     "must be >= 0, got -1e+30", "spans[0].tokens"),
    ("saliences overflow", [rnd(0, spans=spans(("a", 1), ("b", 1)),
                                retained=[["a", 1e308], ["b", 1e308]])], 1,
     "their sum is not finite", "retained"),
    ("source nested too deeply", [rnd(0, spans=[{"id": "a", "tokens": 1,
                                                 "source": json.loads("[" * 300 + "]" * 300)}])],
     1,
     "nested too deeply", "spans[0].source"),
    ("eviction not a string", [session(eviction=[1])], 1, "must be 'continuous'", "eviction"),
    # adv45: the scorer is free-form, but its depth_penalty decides condition 2
    ("depth penalty a string", [session(scorer={"depth_penalty": "1"})], 1,
     "expected a number", "scorer.depth_penalty"),
    ("depth penalty a boolean", [session(scorer={"name": "s", "depth_penalty": True})], 1,
     "expected a number", "scorer.depth_penalty"),
]


@pytest.mark.parametrize(("name", "records", "line", "fragment", "field"), CASES,
                         ids=[c[0] for c in CASES])
def test_reader_error(write_log: LogWriter, name: str, records: list[Any], line: int,
                      fragment: str, field: str) -> None:
    path = write_log(records)
    with pytest.raises(LogError) as info:
        read_native(str(path))
    err = info.value
    assert err.line == line
    assert fragment in err.message
    assert err.field == field
    assert str(err).startswith(f"{path}:{line}: ")


def test_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(OK0) + "\n" + '{"type": "round", "rou')
    with pytest.raises(LogError, match=r":2: truncated last line"):
        read_native(str(path))


def test_a_string_open_at_the_end_of_a_line_is_unterminated(tmp_path: Path) -> None:
    """adv56: `{"bad` and its newline read "unexpected control character in string"
    (the newline); a control character inside a string still reads as one."""
    for lines, at in (([json.dumps(OK0), '{"type": "round", "round": 1, "spans": [{"id": "a'],
                       2), (['{"bad'], 1)):
        path = tmp_path / "t.jsonl"
        path.write_text("\n".join(lines) + "\n")
        result = CliRunner().invoke(app, ["audit", str(path)])
        assert result.exit_code == 2
        assert result.stderr.strip() == (f"compaction-audit: {path}:{at}: bad JSON: unterminated "
                                         "string (a quote is missing before the line ends)")
    path.write_text(json.dumps(OK0) + '\n{"type": "round", "round": 1, "x": "a\x01b"}\n')
    with pytest.raises(LogError, match=r":2: bad JSON: unexpected control character in string"):
        read_native(str(path))


@pytest.mark.parametrize(("value", "word", "field"), [
    ('[["a", NaN]]', "NaN", "retained"),
    ('[["a", Infinity]]', "Infinity", "retained"),
    ('[["a", -Infinity]]', "-Infinity", "retained"),
    ('[{"id": "a", "salience": NaN}]', "NaN", "salience"),
    # the key whose value holds it, not the last key before it (adv139 #7)
    ('[{"id": "a", "source": "x"}, NaN]', "NaN", "retained"),
    ('[["\u00e9\u20ac", 0.5], ["b", NaN]]', "NaN", "retained"),
])
def test_nan_names_itself_and_its_field(tmp_path: Path, value: str, word: str,
                                        field: str) -> None:
    """usertest71 #10: what Python's json.dumps writes for a float('nan') read
    "unexpected character, expected a JSON value", no field named."""
    path, stderr = _retained_error(tmp_path, value)
    assert stderr == (
        f"compaction-audit: {path}:2: bad JSON: {word} is not JSON (write null for no "
        f"value: Python's json.dumps writes {word} unless allow_nan=False), in field "
        f"'{field}'")


def _retained_error(tmp_path: Path, value: str) -> tuple[Path, str]:
    """Audit a log whose round 0 has ``retained`` = ``value``: its path and the
    one-line error (exit 2 asserted)."""
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(OK0) + '\n{"type": "round", "round": 0, "spans": [{"id": "a",'
                    ' "tokens": 5}], "retained": ' + value + "}\n")
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    return path, result.stderr.strip()


@pytest.mark.parametrize(("value", "number", "past", "field"), [
    ('[["a", 1e400]]', "1e400", "past the largest double (about 1.8e308)", "retained"),
    ('[{"id": "a", "salience": -2.5E+999}]', "-2.5E+999",
     "below the lowest double (about -1.8e308)", "salience"),
    # adv145 F7: cut to 32 characters without a mark, it read as 1e31
    ('[["a", 1' + "0" * 400 + "]]", "1" + "0" * 23 + "... (401 characters)",
     "past the largest double (about 1.8e308)", "retained"),
    # adv145 F7: past the first MiB of the line the number read as empty
    ('[["' + "b" * (1 << 20) + '", 1], ["a", 1e400]]', "1e400",
     "past the largest double (about 1.8e308)", None),
    # adv146 F7: after 600,000 two-byte characters (fewer than 1 MiB of characters, more
    # than 1 MiB of bytes) it read as empty, "in field 'text'"
    ('[["' + "\u00e9" * 600_000 + '", 1], ["a", 1e400]]', "1e400",
     "past the largest double (about 1.8e308)", "retained"),
])
def test_a_number_past_the_largest_double_names_its_field(
        tmp_path: Path, value: str, number: str, past: str, field: str | None) -> None:
    """adv144 F8: ``1e400`` read "number is infinity when parsed as double", no field."""
    path, stderr = _retained_error(tmp_path, value)
    assert stderr == (f"compaction-audit: {path}:2: bad JSON: number {number} is {past}"
                      + (f", in field '{field}'" if field else ""))


def test_cli_error_is_one_line_exit_2(write_log: LogWriter) -> None:
    path = write_log([OK0, rnd(1, evicted=["nope"])])
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [f"compaction-audit: {path}:2: id 'nope' is never defined (evicted[0])"]
    assert "Traceback" not in result.output


def test_missing_file_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2
    assert "cannot open" in result.output


def test_lenient_skips_and_counts(write_log: LogWriter) -> None:
    # the unreadable line 2 may have defined 'nope': line 3's reference to it is a
    # dependent reject (dropped, reported), not a second bad record (issue 11)
    path = write_log([OK0, "{bad", rnd(1, evicted=["nope"]), rnd(2, evicted=["a"])])
    s = read_native(str(path), lenient=True)
    assert [e.line for e in s.skipped] == [2]
    assert [(e.line, e.field) for e in s.dependent] == [(3, "evicted[0]")]
    assert s.rounds["round"].to_list() == [0, 1, 2]
    result = CliRunner().invoke(app, ["audit", str(path), "--lenient", "-f", "json"])
    doc = json.loads(result.output)
    assert [e["line"] for e in doc["skipped"]] == [2]
    assert [e["line"] for e in doc["dependent"]] == [3]
    assert doc["verdict"].startswith("WARN: ")
    assert "1 bad record(s) skipped and 1 dependent reject(s) (--lenient)" in doc["verdict"]
    assert result.exit_code == 0
    gate = CliRunner().invoke(app, ["audit", str(path), "--lenient", "--fail-on", "warning"])
    assert gate.exit_code == 1


def _records() -> list[dict[str, Any]]:
    return [OK0, rnd(1, evicted=["a"])]


def test_gzip_and_zstd_and_stdin(tmp_path: Path) -> None:
    text = "".join(json.dumps(r) + "\n" for r in _records()).encode()
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(text))
    zst = tmp_path / "t.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(text))
    plain = dump(_records(), tmp_path / "t.jsonl")
    expected = read_native(str(plain)).rounds
    assert read_native(str(gz)).rounds.equals(expected)
    assert read_native(str(zst)).rounds.equals(expected)
    result = CliRunner().invoke(app, ["audit", "-", "-f", "json"], input=text)
    assert result.exit_code == 0
    assert [r["raw_tokens"] for r in json.loads(result.output)["series"]] == [15, 5]


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(LogError, match="cannot read"):
        read_native(str(gz))


def test_int_ids_read_as_strings(write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=spans((7, 10)), retained=[[7, 0.5]]),
                      rnd(1, summaries=[{"id": 8, "tokens": 2, "children": ["7"]}],
                          evicted=[7])])
    s = read_native(str(path))
    assert s.items["id"].to_list() == ["7", "8"]
    assert s.edges["child"].to_list() == ["7"]


def test_blank_lines_ignored_and_line_numbers_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n" + json.dumps(OK0) + "\n\n" + json.dumps(rnd(1)) + "\n")
    s = read_native(str(path))
    assert s.rounds["line"].to_list() == [2, 4]


def test_unknown_extra_fields_are_kept_and_ignored(write_log: LogWriter) -> None:
    path = write_log([session(vendor="x"), {**OK0, "vendor_field": {"a": 1}}])
    s = read_native(str(path))
    assert s.header.extra == {"vendor": "x"}
    assert s.n_rounds == 1


def test_empty_trace_is_an_input_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    result = CliRunner().invoke(app, ["audit", str(empty)])
    assert result.exit_code == 2
    assert result.output.strip() == f"compaction-audit: {empty}: no round records: nothing to audit"
    only_session = dump([session()], tmp_path / "session.jsonl")
    assert CliRunner().invoke(app, ["audit", str(only_session)]).exit_code == 2
    all_bad = tmp_path / "bad.jsonl"
    all_bad.write_text("{oops\n")
    result = CliRunner().invoke(app, ["audit", str(all_bad), "--lenient"])
    assert result.exit_code == 2
    assert "no round records (1 bad record(s) skipped)" in result.output


def test_truncated_zstd_is_an_input_error(tmp_path: Path) -> None:
    text = "".join(json.dumps(r) + "\n" for r in _records() * 1).encode() * 1
    whole = zstandard.ZstdCompressor().compress(text)
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(whole[:-4])
    with pytest.raises(LogError, match="truncated zstd stream"):
        read_native(str(cut))
    frames = tmp_path / "frames.jsonl.zst"
    half = text.index(b"\n") + 1
    frames.write_bytes(zstandard.ZstdCompressor().compress(text[:half])
                       + zstandard.ZstdCompressor().compress(text[half:]))
    assert read_native(str(frames)).n_rounds == 2


def _corrupt_trailer(kind: str, tmp_path: Path) -> Path:
    """The drift trace in two members (frames): the second's gzip CRC (or zstd
    checksum) has one bit flipped; its data decompresses, its trailer does not check."""
    from tests.gate_app import drift_records

    lines = [json.dumps(r).encode() + b"\n" for r in drift_records()]
    head, tail = b"".join(lines[:2]), b"".join(lines[2:])
    if kind == "gz":
        second = bytearray(gzip.compress(tail))
        second[-8] ^= 1  # the CRC32 trailer
        data = gzip.compress(head) + bytes(second)
    else:
        zc = zstandard.ZstdCompressor(write_checksum=True)
        second = bytearray(zc.compress(tail))
        second[-1] ^= 1  # the frame's content checksum
        data = zc.compress(head) + bytes(second)
    path = tmp_path / f"drift.jsonl.{'gz' if kind == 'gz' else 'zst'}"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_corrupt_member_is_an_error_even_lenient(tmp_path: Path, kind: str) -> None:
    """adv17 F2: the decoder drops a member whose trailer does not check, so under
    --lenient the drift trace's failing rounds vanished as "1 bad record(s) skipped":
    WARN, exit 0.  Corrupt is not cut short: exit 2, strict or lenient."""
    path = _corrupt_trailer(kind, tmp_path)
    for lenient in ([], ["--lenient"]):
        result = CliRunner().invoke(app, ["audit", str(path), *lenient])
        assert result.exit_code == 2, (lenient, result.output)
        assert f"{path}:3: cannot read: " in result.output


def test_a_cut_member_is_still_kept_and_counted_lenient(tmp_path: Path) -> None:
    from tests.gate_app import drift_records

    data = b"".join(json.dumps(r).encode() + b"\n" for r in drift_records())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(data)[:-6])
    assert CliRunner().invoke(app, ["audit", str(cut)]).exit_code == 2
    result = CliRunner().invoke(app, ["audit", str(cut), "--lenient", "-f", "json"])
    assert result.exit_code in (0, 1)
    doc = json.loads(result.output)
    assert "1 bad record(s) skipped" in doc["verdict"] and len(doc["skipped"]) == 1


@pytest.mark.parametrize("kind", ["gz", "zst", "zst-skippable"])
def test_compressed_without_its_suffix_is_told_by_its_bytes(tmp_path: Path, kind: str
                                                            ) -> None:
    """A gzip file named ``t.jsonl`` said "lines end with a lone CR", and a zstd
    stream opening with a skippable frame failed as bad JSON from standard input,
    where a file named ``.zst`` read (adv17 F4): the bytes decide, as for stdin."""
    import os
    import subprocess
    import sys

    from tests.gate_app import drift_records
    from tests.logs import ROOT

    data = b"".join(json.dumps(r).encode() + b"\n" for r in drift_records())
    if kind == "gz":
        packed = gzip.compress(data)
    else:
        packed = zstandard.ZstdCompressor().compress(data)
        if kind == "zst-skippable":  # magic 0x184D2A50, little-endian; length; payload
            packed = b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc" + packed
    named = tmp_path / "t.jsonl"
    named.write_bytes(packed)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, stdin in (([str(named)], None), (["-"], packed)):
        run = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-q", *args],
                             input=stdin, capture_output=True, env=env, timeout=120)
        assert (run.returncode, run.stdout) == (
            1, b"FAIL: 4 error(s), 1 warning(s), 1 info\n"), run.stderr


def test_an_error_behind_a_long_path_keeps_its_reason() -> None:
    """adv22a observation 3: lines are cut at 1,024 characters, and a 3,000-character
    path left no room for the reason."""
    from compaction_audit.errors import LogError
    from compaction_audit.report.safe import printable

    err = LogError("/" + "d" * 3000 + "/t.jsonl", 7, "cannot open: No such file or directory")
    line = printable(str(err))
    assert line.endswith(":7: cannot open: No such file or directory")
    assert "...[3009 chars, sha256 " in line and len(line) < 1024


@pytest.mark.parametrize(("name", "packer"), [("t.jsonl.zst", "gz"), ("t.jsonl.gz", "zst")])
def test_compressed_under_the_other_suffix_is_told_by_its_bytes(
        tmp_path: Path, name: str, packer: str) -> None:
    """adv66 #4: gzip bytes named ``.zst`` were "zstd decompressor error" here and read
    from object storage (by their bytes): one trace, two exit codes."""
    from tests.gate_app import drift_records, run

    data = b"".join(json.dumps(r).encode() + b"\n" for r in drift_records())
    packed = (gzip.compress(data) if packer == "gz"
              else zstandard.ZstdCompressor().compress(data))
    (tmp_path / name).write_bytes(packed)
    result = run("audit", "-q", str(tmp_path / name))
    assert (result.exit_code, result.stdout) == (1, "FAIL: 4 error(s), 1 warning(s), 1 info\n")


def test_nan_after_a_long_key_or_in_no_object_names_what_holds_it() -> None:
    """adv139 #7: a key of more than 64 characters was skipped for an earlier one; a
    NaN in no object's value names no field."""
    from compaction_audit.io.jsonerrors import json_error

    long_key = "k" * 100
    line = ('{"round": 1, "' + long_key + '": NaN}\n').encode()
    assert json_error(line, "unexpected character", line.index(b"NaN")).endswith(
        f"in field '{'k' * 64}'")
    bare = b"[1, NaN]\n"
    assert json_error(bare, "unexpected character", 4) == (
        "bad JSON: NaN is not JSON (write null for no value: Python's json.dumps writes "
        "NaN unless allow_nan=False)")
