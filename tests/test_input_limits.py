"""Bounded input (issue 11, items 4 and 9): line, size and ratio limits with a
``FILE:LINE`` error and exit 2, blank runs, CR-only endings, gzip on stdin, truncated
compressed files under --lenient, and any TOML failure as ``invalid TOML``."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import lines as lines_mod
from compaction_audit.io.lines import Limits, iter_lines
from compaction_audit.io.native import read_native
from compaction_audit.settings import Settings
from tests.logs import ROOT, dump, rnd, spans

OK0 = rnd(0, spans=spans(("a", 10), ("b", 5)), retained=[["a", 0.5], ["b", 0.4]])
TEXT = (json.dumps(OK0) + "\n" + json.dumps(rnd(1, evicted=["a"])) + "\n").encode()


def _naive(data: bytes) -> list[tuple[int, bytes]]:
    """What iter_lines must yield: non-blank physical lines with their numbers."""
    parts = data.split(b"\n")
    out = [(i + 1, p + b"\n") for i, p in enumerate(parts[:-1]) if p.strip()]
    if parts[-1].strip():
        out.append((len(parts), parts[-1]))
    return out


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_line_splitting_matches_the_naive_split_at_any_chunk_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(lines_mod, "_CHUNK", chunk)
    rng = random.Random(chunk)
    path = tmp_path / "t.jsonl"
    for _ in range(30):
        data = bytes(rng.choice(b"ab \n\n\t\r") for _ in range(rng.randrange(0, 60)))
        path.write_bytes(data)
        assert list(iter_lines(str(path))) == _naive(data), data


def test_a_long_blank_run_keeps_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n" * 3_000_000 + TEXT)
    s = read_native(str(path))
    assert s.rounds["line"].to_list() == [3_000_001, 3_000_002]


def test_a_line_over_the_limit_is_a_file_line_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(TEXT + b"x" * 5000 + b"\n")
    with pytest.raises(LogError) as info:
        read_native(str(path), limits=Limits(max_line_bytes=4096))
    assert str(info.value) == f"{path}:3: line longer than 4096 bytes (max_line_bytes)"
    # the same line without its newline, and a line exactly at the limit
    path.write_bytes(TEXT + b"x" * 5000)
    with pytest.raises(LogError, match=":3: line longer than 4096"):
        read_native(str(path), limits=Limits(max_line_bytes=4096))
    path.write_bytes(TEXT + b" " * (4096 - len(TEXT.split(b"\n")[0]) - 1)
                     + TEXT.split(b"\n")[0] + b"\n")
    assert read_native(str(path), lenient=True,
                       limits=Limits(max_line_bytes=4096)).skipped[0].line == 3


def test_a_zstd_bomb_stops_at_the_line_limit_with_exit_2(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl.zst"
    compressor = zstandard.ZstdCompressor().compressobj()
    bomb.write_bytes(compressor.compress(b"x" * (8 << 20)) + compressor.flush())
    assert bomb.stat().st_size < 4096
    result = CliRunner().invoke(app, ["audit", str(bomb), "--set", "max_line_bytes=1048576"])
    assert result.exit_code == 2
    assert result.output == (f"compaction-audit: {bomb}:1: line longer than 1048576 bytes "
                             "(max_line_bytes)\n")


def test_a_gzip_of_blank_lines_hits_the_ratio_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines_mod, "RATIO_FLOOR", 1 << 16)
    blank = tmp_path / "blank.jsonl.gz"
    blank.write_bytes(gzip.compress(b"\n" * (4 << 20)))
    result = CliRunner().invoke(app, ["audit", str(blank)])
    assert result.exit_code == 2
    assert "expands more than 1000x (max_decompression_ratio)" in result.output
    assert len(result.output.splitlines()) == 1
    # allowed a larger ratio, the blank lines are skipped and the trace is empty
    result = CliRunner().invoke(app, ["audit", str(blank), "--set",
                                      "max_decompression_ratio=100000"])
    assert result.output.endswith(": no round records: nothing to audit\n")


def test_an_endless_stdin_stops_at_the_input_limit() -> None:
    result = CliRunner().invoke(app, ["audit", "-", "--set", "max_input_bytes=100000"],
                                input=b"\n" * 200_000)
    assert result.exit_code == 2
    assert result.output == ("compaction-audit: -:100001: input longer than 100000 bytes "
                             "(max_input_bytes)\n")


def test_limit_defaults_agree_and_bad_values_are_usage_errors() -> None:
    assert Limits.of(Settings()) == Limits()
    result = CliRunner().invoke(app, ["audit", "x.jsonl", "--set", "max_line_bytes=10"])
    assert result.exit_code == 2
    assert "max_line_bytes must be >= 1024" in result.output


def test_cr_only_line_endings_are_named(tmp_path: Path) -> None:
    path = tmp_path / "mac.jsonl"
    path.write_bytes(TEXT.replace(b"\n", b"\r"))
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    assert "lines end with a lone CR (classic Mac line endings); use LF or CRLF" in result.output
    crlf = tmp_path / "dos.jsonl"
    crlf.write_bytes(TEXT.replace(b"\n", b"\r\n"))
    assert read_native(str(crlf)).n_rounds == 2
    # text that is not UTF-8 with lone CRs is still told its line endings
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"type": "session", "a": "caf\xe9"}\r{"x": 1}\r')
    assert "lines end with a lone CR" in CliRunner().invoke(app, ["audit", str(latin)]).output


@pytest.mark.parametrize("name", ["openhands/condensation.json", "opencode/export.json",
                                  "cline/session.messages.json"])
def test_a_json_document_whose_lines_end_with_a_lone_cr_is_named(
        tmp_path: Path, name: str) -> None:
    """adv86 #5: a JSON document (OpenHands, opencode, Cline) with lone-CR line endings
    was read as one line, every finding at "line 1", where JSON Lines are refused;
    with CRLF its findings keep their lines."""
    original = ROOT / "tests" / "fixtures" / "adapters" / name
    data = original.read_bytes()
    assert b"\r" not in data and data.count(b"\n") > 10
    mac = tmp_path / ("mac-" + Path(name).name)
    mac.write_bytes(data.replace(b"\n", b"\r"))
    result = CliRunner().invoke(app, ["audit", str(mac)])
    assert (result.exit_code, result.output) == (2, (
        f"compaction-audit: {mac}:1: lines end with a lone CR (classic Mac line endings); "
        "use LF or CRLF\n"))
    dos = tmp_path / Path(name).name
    dos.write_bytes(data.replace(b"\n", b"\r\n"))
    as_is, crlf = (CliRunner().invoke(app, ["audit", str(p), "-f", "json"])
                   for p in (original, dos))
    assert crlf.exit_code == as_is.exit_code in (0, 1)
    lines = [re.findall(r'"line": ?(\d+)', r.stdout) for r in (as_is, crlf)]
    assert lines[0] == lines[1] and len(set(lines[0])) > 1
    # adv87 #6: LF lines with a stray CR, CR CR LF endings, a final CR: the line
    # numbers hold, the document is read as the original is
    for odd in (data.replace(b"\n", b"\r\n", 1).replace(b"\r\n", b"\r \n", 1),
                data.replace(b"\n", b"\r\r\n"), data.rstrip(b"\n") + b"\r"):
        dos.write_bytes(odd)
        result = CliRunner().invoke(app, ["audit", str(dos), "-f", "json"])
        assert re.findall(r'"line": ?(\d+)', result.stdout) == lines[0], result.output
    # adv88 #5: LF and lone-CR lines alternating (as many of each) were read, every
    # address moved (line 7 read 4); one lone CR before text is enough
    parts = data.split(b"\n")
    mixed = b"".join(p + (b"\n" if k % 2 else b"\r") for k, p in enumerate(parts[:-1]))
    seventh = b"\n".join(parts[:6]) + b"\n" + parts[6] + b"\r" + b"\n".join(parts[7:])
    for odd, line in ((mixed + parts[-1], 1), (data.replace(b"\n", b"\r", 1), 1),
                      (seventh, 7)):  # usertest42 C: named at the line that holds it
        dos.write_bytes(odd)
        result = CliRunner().invoke(app, ["audit", str(dos)])
        assert (result.exit_code, result.output) == (2, (
            f"compaction-audit: {dos}:{line}: lines end with a lone CR (classic Mac line "
            "endings); use LF or CRLF\n"))


@pytest.mark.parametrize("data", [
    gzip.compress(gzip.compress(TEXT), mtime=0),  # a gzip inside a gzip, read once
    b"\x7fELF\x02\x01\x01\x00\r" + bytes(range(0x80, 0x100)) + b"\r\n",  # an executable
])
def test_binary_data_is_not_blamed_on_line_endings(tmp_path: Path, data: bytes) -> None:
    """adv78 #7: both read "lines end with a lone CR (classic Mac line endings)"."""
    path = tmp_path / "t.jsonl.gz" if data[:2] == b"\x1f\x8b" else tmp_path / "t.jsonl"
    path.write_bytes(data)
    result = CliRunner().invoke(app, ["audit", str(path)])
    assert result.exit_code == 2
    assert "classic Mac" not in result.output
    assert result.output.endswith(": binary data, not text (compressed twice? an "
                                  "executable?)\n")
    assert f"{path}:1: bad JSON: not UTF-8 (byte 0x" in result.output


@pytest.mark.parametrize("compress", [gzip.compress, zstandard.ZstdCompressor().compress])
def test_compressed_stdin_is_read(compress: object) -> None:
    assert callable(compress)
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-", "-f", "json"],
                          input=compress(TEXT), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert [r["raw_tokens"] for r in json.loads(done.stdout)["series"]] == [15, 5]


def test_lenient_reads_a_truncated_gz_as_it_reads_a_truncated_plain_file(
        tmp_path: Path) -> None:
    records = [OK0, *(rnd(i, spans=spans((f"s{i}", i)), evicted=[]) for i in range(1, 400))]
    plain = dump(records, tmp_path / "whole.jsonl")
    data = plain.read_bytes()
    cut = len(data) * 2 // 3
    short = tmp_path / "short.jsonl"
    short.write_bytes(data[:cut])
    packed = gzip.compress(data, compresslevel=1)
    short_gz = tmp_path / "short.jsonl.gz"
    short_gz.write_bytes(packed[:len(packed) * 2 // 3])
    for path in (short, short_gz):
        with pytest.raises(LogError):
            read_native(str(path))
    a = read_native(str(short), lenient=True)
    b = read_native(str(short_gz), lenient=True)
    assert len(a.skipped) == len(b.skipped) == 1
    assert a.n_rounds > 100 and b.n_rounds > 100
    assert b.skipped[0].line == b.n_rounds + 1
    assert "cannot read" in b.skipped[0].message
    result = CliRunner().invoke(app, ["audit", str(short_gz), "--lenient"])
    assert result.exit_code in (0, 1)


def test_any_toml_failure_is_invalid_toml(tmp_path: Path) -> None:
    deep = tmp_path / "pyproject.toml"
    deep.write_text("[other]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    log = dump([OK0], tmp_path / "t.jsonl")
    result = CliRunner().invoke(app, ["audit", str(log), "--config", str(deep)])
    assert result.exit_code == 2
    assert result.output == f"compaction-audit: {deep}: invalid TOML: nested too deeply\n"


@pytest.mark.parametrize("helpers", [False, True])
def test_blank_runs_read_the_same_with_and_without_helper_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: bool) -> None:
    from compaction_audit.io import parallel

    records = [json.dumps(r).encode() for r in
               (OK0, rnd(1, evicted=["a"]), rnd(2), rnd(3, evicted=["b"]))]
    # blank runs longer than a read buffer; a record after 100 KB of leading blanks
    data = (records[0] + b"\n" + b"\n" * 300_000 + b" \t \n" * 1000
            + b" " * 100_000 + records[1] + b"\n" + b"\r\n" * 200_000
            + records[2] + b"\n\n" + records[3] + b"\n" + b"\n" * 70_000)
    path = tmp_path / "blank.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0 if helpers else 1 << 62)
    assert parallel.wanted(str(path)) == helpers
    s = read_native(str(path))
    assert s.rounds["line"].to_list() == [1, 301_002, 501_003, 501_005]


def test_a_closed_stdin_is_an_input_error() -> None:
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-"],
                          stdin=None, capture_output=True, check=False,
                          preexec_fn=lambda: os.close(0))
    assert done.returncode == 2
    assert done.stderr == b"compaction-audit: -: cannot open: standard input is closed\n"


def test_a_gzip_bomb_on_stdin_hits_the_ratio_limit() -> None:
    bomb = gzip.compress(b"\n" * (80 << 20), compresslevel=9)
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-"],
                          input=bomb, capture_output=True, check=False)
    assert done.returncode == 2
    assert done.stderr.endswith(b"expands more than 1000x (max_decompression_ratio): a "
                                b"decompression bomb?\n")
    assert done.stderr.count(b"\n") == 1


def test_the_helper_reader_keeps_the_limits(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.io import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    path = tmp_path / "t.jsonl"
    path.write_bytes(TEXT + b"x" * 5000 + b"\n" + b"\n" * 20_000)  # split in the blanks
    assert parallel.wanted(str(path))
    with pytest.raises(LogError, match=r":3: line longer than 4096 bytes"):
        read_native(str(path), limits=Limits(max_line_bytes=4096))
    with pytest.raises(LogError, match=r"input longer than 2048 bytes \(max_input_bytes\)"):
        read_native(str(path), limits=Limits(max_input_bytes=2048))


def test_an_integer_too_long_for_python_is_invalid_toml(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv19a F3: tomllib lets int()'s digit limit (4,300) through as a bare ValueError,
    which was "internal error", from any table of a pyproject.toml found by the search."""
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = " + "7" * 4301 + "\n")
    log = dump([OK0], tmp_path / "t.jsonl")
    monkeypatch.chdir(tmp_path)  # the search starts here
    for args in (["audit", str(log)], ["config", "show"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.output == (f"compaction-audit: {tmp_path / 'pyproject.toml'}: invalid "
                                 "TOML: an integer of more than 4,300 digits\n")
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = " + "7" * 4300 + "\n")
    assert CliRunner().invoke(app, ["audit", str(log)]).exit_code == 0


def test_a_gzip_of_short_lines_weighs_each_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv19b F7: a gzip of '{}' lines expands under 1000x in bytes, but each line
    costs the reader microseconds: 4,000,000 of them from 13 KB took 32 s.  Each line
    weighs LINE_WEIGHT (256) bytes toward the ratio; blank lines weigh nothing."""
    monkeypatch.setattr(lines_mod, "RATIO_FLOOR", 1 << 16)
    short = tmp_path / "short.jsonl.gz"
    short.write_bytes(gzip.compress(b"{}\n" * 1_000_000, compresslevel=9))
    packed = short.stat().st_size
    ratio = 2 * (3_000_000 // packed + 1)  # twice the ratio in bytes alone
    with pytest.raises(LogError) as caught:
        list(iter_lines(str(short), Limits(max_decompression_ratio=ratio)))
    # checked as each chunk is read: the first one held 349,525 lines
    total = int(str(caught.value).split("): ")[1].split(" bytes")[0].replace(",", ""))
    assert 349_525 * 3 < total <= 2 * lines_mod._CHUNK  # and the next chunk
    assert str(caught.value) == (
        f"{short}:349526: the compressed input expands more than {ratio}x, each line "
        f"weighing 256 bytes (max_decompression_ratio): {total:,} bytes in 349,525 lines "
        "so far, a decompression bomb?")
    # the same lines, allowed their weight: read to the end
    weighed = 1_000_000 * (3 + lines_mod.LINE_WEIGHT)
    assert sum(1 for _ in iter_lines(str(short), Limits(
        max_decompression_ratio=weighed // packed + 1))) == 1_000_000


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_empty_members_are_bounded(tmp_path: Path, kind: str) -> None:
    """adv27 F6: empty gzip members or zstd frames decompress to nothing, so no ratio
    weighs them, and each cost about 30 us: 10 MB of them took 13 s for a 6-line
    trace.  At most ``MAX_EMPTY_MEMBERS`` (10,000) are read; one more is an error."""
    cap = lines_mod.MAX_EMPTY_MEMBERS
    assert cap == 10_000
    trace = dump([rnd(0, spans=spans(("a", 1)))], tmp_path / "t.jsonl").read_bytes()
    pack = ((lambda b: gzip.compress(b, mtime=0)) if kind == "gz"
            else zstandard.ZstdCompressor().compress)
    for extra, fails in ((cap, False), (cap + 1, True)):
        path = tmp_path / f"t{extra}.jsonl.{kind}"
        path.write_bytes(pack(trace) + pack(b"") * extra)
        if not fails:
            assert [n for n, _ in iter_lines(str(path))] == [1]
            continue
        with pytest.raises(LogError) as caught:
            list(iter_lines(str(path)))
        assert str(caught.value) == (f"{path}:2: cannot read: more than 10,000 empty gzip "
                                     "members or zstd frames: no log is written so")


def test_the_early_text_peek_reads_a_bounded_start_of_a_gz(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv27 F6: ``gzip.open(...).read(64 KB)`` went on through every empty member
    until 64 KB came out: the hint that starts the embedding helper early read 10 MB
    of empty members (20 s) before the audit began.  It now reads 64 KB of the file."""
    import builtins

    from compaction_audit.cosine import server

    texted = b'{"type": "round", "round": 0, "spans": [{"id": "a", "text": "x"}]}\n'
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n", mtime=0) * 3 + gzip.compress(texted, mtime=0))
    assert server.texted_file([str(path)])
    path.write_bytes(gzip.compress(b"", mtime=0) * 200_000 + gzip.compress(texted, mtime=0))
    read: list[int] = []
    real_open = builtins.open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        handle = real_open(*args, **kwargs)
        real_read = handle.read

        def counted(*a: Any) -> Any:
            data = real_read(*a)
            read.append(len(data))
            return data

        handle.read = counted
        return handle

    monkeypatch.setattr(builtins, "open", counting_open)
    assert not server.texted_file([str(path)])  # the text is past the peek
    monkeypatch.undo()
    assert 0 < sum(read) <= server.PEEK_BYTES


@pytest.mark.parametrize("fixture", ["claude-session.jsonl", "codex-local.jsonl"])
def test_lenient_names_an_over_long_line_among_the_first_lines_of_a_foreign_log(
        tmp_path: Path, fixture: str) -> None:
    """adv32 A3: the line limit met while the format was being told made --lenient
    fall back to the native reader, which said "one file holds two log formats"."""
    lines = (Path(__file__).parent / "fixtures" / "adapters" / fixture).read_bytes()
    first, rest = lines.split(b"\n", 1)
    path = tmp_path / fixture
    path.write_bytes(first + b"\n" + b'{"note": "' + b"x" * 5000 + b'"}\n' + rest)
    result = CliRunner().invoke(app, ["audit", str(path), "--lenient",
                                      "--set", "max_line_bytes=4096"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"compaction-audit: {path}:2: line longer than 4096 bytes (max_line_bytes)"]


@pytest.mark.parametrize(("lines", "found"), [
    ([b"{" + b"\r" * 100_000 + b"\n", b"}\n"], None),  # CRs with nothing after: read
    ([b"{" + b"\r " * 100_000 + b"\n", b"}\n"], None),
    ([b"{\n", b'"a": 1' + b"\r" * 100_000 + b", \"b\": 2\n", b"}\n"], 1),  # text after
    ([b"{}\r"], None),  # a final CR
])
def test_lone_crs_are_found_in_one_pass(lines: list[bytes], found: int | None) -> None:
    """adv89 #1: a regular expression restarted at every CR of a run (80,000 CRs in a
    Cline file: 52 s); the lines are now searched once each."""
    from compaction_audit.io.documents import _cr_lines

    assert _cr_lines(lines) == found
