"""A baseline written to a ``.gz`` or ``.zst`` name is compressed (reports and logs go
by the suffix: adv56) and ``--baseline`` reads it back, bounded once decompressed."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import zstandard

from compaction_audit.errors import UsageError
from compaction_audit.smallfile import unpacked
from tests.gate_app import drift_records, run
from tests.logs import dump


@pytest.mark.parametrize("name", ["b.json.gz", "b.json.zst"])
def test_a_compressed_baseline_is_read_back(tmp_path: Path, name: str) -> None:
    trace = str(dump(drift_records(), tmp_path / "t.jsonl"))
    made = run("baseline", "create", trace, "-o", str(tmp_path / name))
    assert made.exit_code == 0, made.output
    assert (tmp_path / name).read_bytes()[:1] in (b"\x1f", b"\x28")  # compressed
    gated = run("audit", trace, "--baseline", str(tmp_path / name))
    assert gated.exit_code == 0, gated.output
    assert "are in the baseline: nothing new" in gated.stdout


def test_unpacked_is_bounded_and_names_bad_data() -> None:
    assert unpacked(b'{"a": 1}', "baseline 'b'", 100) == b'{"a": 1}'
    assert unpacked(gzip.compress(b"x" * 100), "baseline 'b'", 100) == b"x" * 100
    with pytest.raises(UsageError, match="baseline 'b': larger than 100 bytes decompressed"):
        unpacked(gzip.compress(b"x" * 101), "baseline 'b'", 100)
    with pytest.raises(UsageError, match="baseline 'b': bad gzip data"):
        unpacked(b"\x1f\x8bnot gzip at all", "baseline 'b'", 100)


def test_every_member_is_read_and_a_cut_or_a_tail_is_named() -> None:
    """adv57: a second gzip member or zstd frame was left out ("bad JSON"), bytes after
    the data passed unsaid, and data cut short read as empty JSON."""
    import zstandard

    zst = zstandard.ZstdCompressor().compress
    label = "baseline 'b'"
    for pack, name in ((lambda b: gzip.compress(b, mtime=0), "gzip"), (zst, "zstd")):
        assert unpacked(pack(b'{"a": ') + pack(b"1}"), label, 100) == b'{"a": 1}'
        whole = pack(b'{"a": 1}' * 5)
        with pytest.raises(UsageError, match=f"^{label}: the {name} data is cut short$"):
            unpacked(whole[:len(whole) // 2], label, 100)
        with pytest.raises(UsageError, match=f"^{label}: (7 byte\\(s\\) after the {name} "
                                             f"data|bad {name} data: .*)$"):
            unpacked(whole + b"garbage", label, 100)


def test_skippable_zstd_frames_are_passed_over() -> None:
    """adv58: `pzstd` opens its output with a skippable frame; such a baseline was
    "bad JSON", where the log reader reads the same file."""
    import zstandard

    skip = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"meta"
    body = zstandard.ZstdCompressor().compress(b'{"a": 1}')
    assert unpacked(skip + body, "baseline 'b'", 100) == b'{"a": 1}'
    assert unpacked(body + skip, "baseline 'b'", 100) == b'{"a": 1}'


def test_a_baseline_from_standard_input_is_refused_saying_why(tmp_path: Path) -> None:
    """adv58: `--baseline -` said "'-': cannot read: No such file or directory"."""
    trace = str(dump(drift_records(), tmp_path / "t.jsonl"))
    result = run("audit", trace, "--baseline", "-")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("compaction-audit: baseline '-': a baseline is read "
                                     "from a file, not standard input")


def test_a_baseline_of_more_values_than_one_per_16_bytes_is_refused_before_decoding(
        tmp_path: Path) -> None:
    """adv72 #2: a 65 KB .gz of 64 MiB of ``{},`` was decoded whole (3.8 GB, 26 s)
    before its first field error; the check counts commas, so the edge is exact."""
    from compaction_audit.baseline.file import BYTES_PER_VALUE, DENSE_FROM, _dense_enough

    head, tail = b'{"baseline_format":1,"findings":[', b"]}"
    pad = DENSE_FROM - len(head) - len(tail)
    # exactly one value per 16 bytes: 1 MiB of bytes, 65,536 values (65,535 commas,
    # one of them in the head)
    commas = DENSE_FROM // BYTES_PER_VALUE - 2
    body = b"0," * commas + b"0" + b" " * (pad - 2 * commas - 1)
    at_edge = head + body + tail
    assert len(at_edge) == DENSE_FROM
    _dense_enough(at_edge, "baseline 'b'")  # not more than one per 16 bytes: read
    over = at_edge[:-4] + b",0]}"  # one value more, same size
    with pytest.raises(UsageError, match=r"baseline 'b': 65,537 JSON values in "
                                         r"1,048,576 bytes, more than one per 16 bytes"):
        _dense_enough(over, "baseline 'b'")
    _dense_enough(b"0," * 1000 + b"0", "baseline 'b'")  # a small file: not checked
    bomb = tmp_path / "b.json"  # (compressed, adv72's .gz now expands past the ratio)
    bomb.write_bytes(head + b"{}," * 700_000 + b"{}" + tail)
    trace = str(dump(drift_records(), tmp_path / "t.jsonl"))
    gated = run("audit", trace, "--baseline", str(bomb))
    assert gated.exit_code == 2
    assert "700,002 JSON values in 2,100,037 bytes" in gated.output  # 33 + 2,100,004


def test_a_baseline_expanding_more_than_the_ratio_is_refused_before_decoding(
        tmp_path: Path) -> None:
    """adv86 #1: a 22 KB .zst of a real baseline's entries repeated to 250 MiB (one
    value per 40 bytes: dense enough) took 1.9 GB and 17 s to decode; adv87 #2: at
    1,000x, a skippable frame bought the ratio for a 262 KB file.  A compressed
    baseline may expand 50 times (``baseline create``'s output compresses about 6
    times), and to 1 MiB whatever its size; the bounds are exact."""
    def packed(n: int) -> bytes:
        return gzip.compress(b"a" * n, mtime=0)

    assert unpacked(packed(5000), "b", 10**6, 1, 5000) == b"a" * 5000  # the floor
    with pytest.raises(UsageError, match=r"^b: the gzip data expands more than 1x"):
        unpacked(packed(5001), "b", 10**6, 1, 5000)
    assert len(packed(240)) == 24  # 240 bytes from 24: exactly 10x
    assert len(unpacked(packed(240), "b", 10**6, 10, 0)) == 240
    with pytest.raises(UsageError, match=r"expands more than 9x \(24 bytes\)"):
        unpacked(packed(240), "b", 10**6, 9, 0)
    entry = (b'{"fingerprint":"' + b"0" * 64 + b'","trace":"t.jsonl","code":"CA101",'
             b'"rule":"salience-inversion","key":"episode:0"},')
    bomb = tmp_path / "b.json.zst"
    bomb.write_bytes(zstandard.ZstdCompressor(level=19).compress(
        b'{"baseline_format":1,"findings":[' + entry * 40_000 + entry[:-1] + b"]}"))
    assert len(bomb.read_bytes()) * 1000 < 40_001 * len(entry)  # dense enough, but 1000x+
    padded = tmp_path / "p.json.zst"  # a skippable frame of 20 KB in front: under 1000x
    padded.write_bytes(b"\x50\x2a\x4d\x18" + (20_000).to_bytes(4, "little")
                       + bytes(20_000) + bomb.read_bytes())
    assert len(padded.read_bytes()) * 50 < 40_001 * len(entry) < len(padded.read_bytes()) * 1000
    trace = str(dump(drift_records(), tmp_path / "t.jsonl"))
    for given in (bomb, padded):
        gated = run("audit", trace, "--baseline", str(given))
        assert gated.exit_code == 2
        assert "the zstd data expands more than 50x" in gated.output
    fine = tmp_path / "real.json.zst"  # a baseline as 'baseline create' writes it
    assert run("baseline", "create", trace, "-o", str(fine)).exit_code == 0
    assert run("audit", trace, "--baseline", str(fine)).exit_code == 0
