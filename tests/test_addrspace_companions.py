"""Under an address-space limit the files read with an input are looked up without
decoding a large document in the command's own process (adv24 F2).

The output check (``-o``, a standard output that is a file) detected each input's
format in the command's own process: a one-line JSON document passed the check made
before it (8 bytes per byte) and took 33 (``[{},{},...]``), so the whole command was
one out of memory line and the other traces were not reported (or orjson faulted:
SIGSEGV, no line).  A large file, and a Cline file, is now looked up in a child with
the whole limit; when that child dies, the files that may be companions by name and
place are refused, saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from compaction_audit.errors import UsageError
from compaction_audit.io import companions
from compaction_audit.outfile import refuse_same_file
from compaction_audit.runtime import addrspace, isolated
from tests.test_outfile_companions import cline_session, gemini_session

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dicts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 MB of ``{},``: a one-line JSON document that decodes at 33 bytes per byte."""
    doc = tmp_path_factory.mktemp("dicts") / "dicts.json"
    n = (12 << 20) // 3
    doc.write_text("[" + "{}," * (n - 1) + "{}]")
    return doc


def _under_check(doc: Path, args: list[str], stdout: IO[bytes] | int
                 ) -> subprocess.CompletedProcess[bytes]:
    """The command under the limit the pre-detection check allows ``doc`` plus 2 MiB."""
    limit = addrspace.base_bytes() + 8 * doc.stat().st_size + (2 << 20)

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=REPO,
                          stdout=stdout, stderr=subprocess.PIPE, preexec_fn=cap,
                          timeout=120, check=False)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as on Linux")
def test_a_document_decoded_for_the_output_check_hides_no_trace(
        dicts: Path, tmp_path: Path) -> None:
    """On main (6280797) the output check decoded the document in the command's own
    process and the command was "out of memory: this command needs more than ...",
    small.jsonl's FAIL not reported."""
    doc = dicts
    small = tmp_path / "small.jsonl"
    small.write_bytes((REPO / "sample_logs" / "handwritten.jsonl").read_bytes())
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        done = _under_check(doc, ["audit", str(doc), str(small), "-q"], stdout)
    lines = out.read_text().splitlines()
    assert done.returncode == 2, done.stderr
    assert b"this command" not in done.stderr
    assert lines[0].startswith(f"{small}: FAIL: ")
    assert lines[1].startswith((f"error: {doc}: out of memory: ", f"error: {doc}: needs about "))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as on Linux")
def test_trace_of_a_document_too_large_for_the_limit_is_one_line(
        dicts: Path, tmp_path: Path) -> None:
    """trace read the log in the command's own process (and, its standard output a
    file, for the output check): "out of memory: this command" on main (6280797) here,
    and SIGSEGV with no line for a 63 MB Cline file of emoji in a window above the
    check.  It is read in a child: the log's one line, exit 2."""
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        done = _under_check(dicts, ["trace", str(dicts), "x"], stdout)
    assert (done.returncode, out.read_bytes()) == (2, b"")
    # the child's death, or the estimate's refusal before reading (as the test above
    # accepts): either way the log's one line naming the limit
    assert done.stderr.decode().startswith((f"compaction-audit: {dicts}: out of memory: ",
                                            f"compaction-audit: {dicts}: needs about "))
    assert b"address-space limit" in done.stderr
    assert done.stderr.count(b"\n") == 1


def test_trace_under_a_limit_writes_what_it_writes_without(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    import resource

    for args in (["s1"], ["45000", "-f", "json"]):
        argv = [sys.executable, "-m", "compaction_audit", "trace",
                "sample_logs/handwritten.jsonl", *args]
        free = subprocess.run(argv, capture_output=True, timeout=120, check=False)
        capped = subprocess.run(argv, capture_output=True, timeout=120, check=False,
                                preexec_fn=lambda: resource.setrlimit(
                                    resource.RLIMIT_AS, (3 << 30, 3 << 30)))
        assert (capped.returncode, capped.stdout, capped.stderr) == (
            free.returncode, free.stdout, free.stderr)
        assert free.returncode == 0 and free.stdout


def _limited(monkeypatch: pytest.MonkeyPatch, dies: bool = False) -> list[object]:
    """A limit set (as far as the lookup can tell) and the child calls recorded; with
    ``dies`` each child dies as of a fault."""
    called: list[object] = []
    real = isolated.call_in_child

    def spy(work: object, path: object, *args: object, **kwargs: object) -> object:
        called.append(path)
        if dies:
            raise isolated.ChildDied(-11, b"")
        return real(work, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(addrspace, "address_space_limit", lambda: 1 << 40)
    monkeypatch.setattr(isolated, "call_in_child", spy)
    return called


def test_under_a_limit_large_and_cline_files_are_looked_up_in_a_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cline_session(tmp_path)
    gemini_session(tmp_path)
    big = tmp_path / "big.jsonl"  # a Gemini CLI recording over IN_PROCESS_BYTES
    big.write_bytes((tmp_path / "chat.jsonl").read_bytes() + b"\n" * companions.IN_PROCESS_BYTES)
    names = ["s1.json", "s1.compaction.json", "chat.jsonl", "big.jsonl", "missing.jsonl"]
    free = [companions.companion_lookup(n) for n in names]
    called = _limited(monkeypatch)
    assert [companions.companion_lookup(n) for n in names] == free
    assert free[3] == ([str(Path("big.jsonl").with_name("telemetry.log"))], True)
    assert called == ["s1.json", "s1.compaction.json", "big.jsonl"]


def test_companions_not_looked_up_are_those_that_may_be_and_said_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that dies (the document too large for the limit): every Cline pair file
    of the folder, the telemetry log and a manifest's messages file may be read, and
    an output that is one of them is refused with a line that says why; another
    output is written."""
    monkeypatch.chdir(tmp_path)
    cline_session(tmp_path)
    gemini_session(tmp_path)
    os.rename("s1.messages.json", "held.json")  # a manifest's file of another name
    Path("s1.json").write_text('{"session_id": "x", "messages_path": "held.json"}')
    Path("report.txt").write_text("old")
    _limited(monkeypatch, dies=True)
    found, known = companions.companion_lookup("s1.json")
    assert not known
    assert set(found) >= {"s1.compaction.json", "telemetry.log", "held.json"}
    for output in ("s1.compaction.json", "telemetry.log", "held.json"):
        with pytest.raises(UsageError) as raised:
            refuse_same_file(output, ["s1.json"])
        assert str(raised.value).startswith(
            f"{output}: is ") and str(raised.value).endswith(
            ", which may be read along with the input s1.json (its files could not be "
            "looked up within the address-space limit of 1,048,576 MiB (ulimit -v, "
            "RLIMIT_AS)); refusing to overwrite it (choose another output)")
    refuse_same_file("report.txt", ["s1.json"])


def test_a_folder_search_pairs_cline_files_in_a_child_under_a_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which compaction files a messages file reads was found by decoding every
    messages file of the folder in the command's own process; under a limit it is
    found in a child, and when that child dies each compaction file is a trace of its
    own (none left out)."""
    import shutil

    from compaction_audit.discover import discover

    fixtures = REPO / "tests" / "fixtures" / "adapters" / "cline"
    folder = tmp_path / "s2"
    folder.mkdir()
    shutil.copy(fixtures / "session.messages.json", folder / "s2.messages.json")
    shutil.copy(fixtures / "basic.compaction.json", folder / "s2.compaction.json")
    free = discover([str(folder)])
    assert free == [f"{folder}/s2.messages.json"]
    called = _limited(monkeypatch)
    assert discover([str(folder)]) == free
    assert called == [[f"{folder}/s2.messages.json"]]
    _limited(monkeypatch, dies=True)
    assert discover([str(folder)]) == [f"{folder}/s2.compaction.json", *free]
