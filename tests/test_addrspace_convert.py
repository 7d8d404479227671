"""``convert`` under an address-space limit: one line, exit 2, never a fault (adv24 F3).

convert read and wrote every line with orjson in its own process, which faults on an
allocation that fails: a valid line of emoji under ``ulimit -v`` ended it with SIGSEGV
(exit 139) or a Rust abort (134) and no line, or with "internal error: SystemError".
Under a limit the conversion now runs in a spawned child with the whole limit
(compaction_audit.runtime.isolated), whose death is the command's out of memory line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from compaction_audit.runtime import addrspace, isolated

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as on Linux")

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 120


def _cap(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _convert(limit: int | None, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "compaction_audit", "convert", *args],
                          cwd=REPO, capture_output=True, timeout=TIMEOUT, check=False,
                          preexec_fn=None if limit is None else lambda: _cap(limit))


@pytest.fixture(scope="module")
def emoji(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """handwritten.jsonl with 2 Mi emoji (8 MB) in one span's text: a valid line."""
    lines = (REPO / "sample_logs" / "handwritten.jsonl").read_bytes().splitlines()
    for i, raw in enumerate(lines):
        record = orjson.loads(raw)
        if record.get("type") == "round" and record.get("spans"):
            record["spans"][0]["text"] += " " + "\U0001F600" * (2 << 20)
            lines[i] = orjson.dumps(record)
            break
    path = tmp_path_factory.mktemp("convert") / "emoji.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("kib", [150_000, 160_000, 170_000])
def test_convert_short_of_memory_is_one_line(emoji: Path, kib: int, tmp_path: Path) -> None:
    """Measured on main (6280797): exit 139, 139 and 134 at these limits."""
    out = tmp_path / "out.jsonl"
    done = _convert(kib << 10, str(emoji), "-o", str(out))
    assert (done.returncode, done.stdout) == (2, b""), done.stderr[-2000:]
    assert done.stderr.decode() == (
        "compaction-audit: out of memory: this command needs more than the address-space "
        f"limit of {(kib << 10) / (1 << 20):,.0f} MiB (ulimit -v, RLIMIT_AS)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing, no .partial


def test_convert_under_a_limit_writes_what_it_writes_without(tmp_path: Path) -> None:
    """The child's output is the same bytes, to a file and to standard output, with the
    same line on standard error (the notes of a Cline file read without its pair)."""
    for source in ("sample_logs/handwritten.jsonl",
                   "tests/fixtures/adapters/cline/session.messages.json"):
        free = _convert(None, source, "-o", str(tmp_path / "free.jsonl"))
        capped = _convert(2 << 30, source, "-o", str(tmp_path / "capped.jsonl"))
        assert free.returncode == capped.returncode == 0, capped.stderr
        assert free.stderr.replace(b"free.jsonl", b"X") == \
            capped.stderr.replace(b"capped.jsonl", b"X")
        assert (tmp_path / "free.jsonl").read_bytes() == (tmp_path / "capped.jsonl").read_bytes()
        piped = _convert(2 << 30, source, "-o", "-")
        assert piped.returncode == 0 and piped.stdout == (tmp_path / "free.jsonl").read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "session", "schema": "compaction-audit/1"}\n{\n')
    done = _convert(2 << 30, str(bad), "-o", str(tmp_path / "x.jsonl"))
    assert done.returncode == 2 and done.stderr.decode().startswith(f"compaction-audit: {bad}:2: ")


def test_orjson_s_own_allocation_failure_is_out_of_memory_wherever_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """convert's writer decodes the line it wrote back: orjson's "Not enough memory"
    there was "internal error: JSONDecodeError" (adv24 F3); importing Polars' modules
    short of memory raised a SystemError without an exception set."""
    err = orjson.JSONDecodeError(addrspace.ORJSON_OUT_OF_MEMORY, "x", 0)
    assert addrspace.ran_out(err)
    assert not addrspace.ran_out(orjson.JSONDecodeError("unexpected end of data", "x", 0))
    system = SystemError(addrspace.NO_EXCEPTION_SET)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: None)
    assert not addrspace.ran_out(system)
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 30)
    assert addrspace.ran_out(system)
    assert isolated.ran_out(isolated.ChildDied(1, b"Traceback:\n  ...\nMemoryError\n"))
    assert not isolated.ran_out(isolated.ChildDied(1, b"Traceback:\nValueError: x\n"))
