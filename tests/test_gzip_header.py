"""A gzip member's header (file name, comment, extra field) is parsed in C, not a byte
per Python call (issue 11, class 5, adv11 F4): gzip.GzipFile read a 40 MB name field
one byte at a time (50 s); many empty members cost a copy of the pending input each.
Also: padding, several members, a cut or corrupt file read as before."""

from __future__ import annotations

import gzip
import io
import struct
import zlib
from pathlib import Path

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import lines

BODY = b'{"type": "round", "round": 0}\n{"type": "round", "round": 1}\n'


def member(body: bytes, name: bytes = b"") -> bytes:
    """One gzip member of ``body``, with a file name field when ``name`` is given."""
    flags = 0x08 if name else 0
    head = b"\x1f\x8b\x08" + bytes([flags]) + b"\0\0\0\0\0\xff" + (name + b"\0" if name else b"")
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return head + c.compress(body) + c.flush() + struct.pack("<II", zlib.crc32(body),
                                                             len(body))


class CountingReader(io.BytesIO):
    """A file whose reads are counted."""

    reads = 0

    def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        CountingReader.reads += 1
        return super().read(size)


def test_a_long_name_field_costs_few_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(member(BODY, name=b"n" * 200_000))
    real_open = Path.open
    CountingReader.reads = 0

    def counting_open(self: Path, *args: object, **kwargs: object) -> io.BytesIO:
        if self == path:
            with real_open(path, "rb") as fh:
                return CountingReader(fh.read())
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", counting_open)
    assert [n for n, _ in lines.iter_lines(str(path))] == [1, 2]
    assert CountingReader.reads < 100  # one a byte of the name: 200,000 before


@pytest.mark.parametrize("data", [
    member(BODY[:31]) + member(BODY[31:]),  # two members
    member(BODY) + b"\0" * 5000,  # zero padding after the member
    member(b"") * 3000 + member(BODY),  # many empty members first
])
def test_members_and_padding_read_as_gzip_does(tmp_path: Path, data: bytes) -> None:
    assert gzip.decompress(data) == BODY
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(data)
    assert [raw for _, raw in lines.iter_lines(str(path))] == BODY.splitlines(keepends=True)


def test_a_cut_or_corrupt_file_is_an_error_after_the_lines_before_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(member(BODY)[:-6])
    with pytest.raises(LogError, match="Compressed file ended before the end-of-stream"):
        list(lines.iter_lines(str(path)))
    path.write_bytes(member(BODY) + b"garbage")
    errors: list[LogError] = []
    read: list[bytes] = []
    with pytest.raises(LogError) as caught:  # corrupt, not cut: an error even lenient
        read.extend(raw for _, raw in lines.iter_lines(str(path), errors=errors))
    assert len(read) == 2 and errors == []  # the lines before it came first
    assert caught.value.line == 3 and "cannot read" in caught.value.message


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_plain_json_lines_named_compressed_says_so(tmp_path: Path, suffix: str) -> None:
    """adv94 #10: plain JSON Lines named x.jsonl.gz read "cannot read: Error -3 while
    decompressing data: incorrect header check"."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    path = tmp_path / f"t.jsonl{suffix}"
    path.write_text('\n {"type":"session","schema":"compaction-audit/1"}\n')
    result = CliRunner().invoke(app, ["audit", str(path)])
    name = {".gz": "gzip", ".zst": "zstd"}[suffix]
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"compaction-audit: {path}: named {suffix} but not {name} data: it starts as JSON "
        f"text; rename it without {suffix}, or compress it"]
    path.write_bytes(b"garbage")  # not JSON text: the decompressor's own error
    assert f"named {suffix} but" not in CliRunner().invoke(app, ["audit", str(path)]).output
