"""-o never destroys a file (issue 11, item 3): an output that is an input is refused,
regular files are replaced atomically, devices, FIFOs and symlinks are written through.

No test writes to /dev/null or any other device of the machine: the device case is
checked by :func:`writes_through` (a stat) and by FIFOs, which take the same path."""

from __future__ import annotations

import os
import select
import shutil
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.gate_app import drift_records, run
from tests.logs import SAMPLES, dump


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return dump(drift_records(), tmp_path / "t.jsonl")


def unchanged(path: Path, before: bytes) -> bool:
    return path.is_file() and not path.is_symlink() and path.read_bytes() == before


@pytest.mark.parametrize("command", [
    ["convert", "t.jsonl", "-o", "t.jsonl"],
    ["audit", "t.jsonl", "-o", "t.jsonl"],
    ["audit", "t.jsonl", "--format", "json", "-o", "t.jsonl"],
    ["baseline", "create", "t.jsonl", "-o", "t.jsonl"],
    ["diff", "t.jsonl", "t.jsonl", "-o", "t.jsonl"],
])
def test_output_that_is_the_input_is_refused(trace: Path, command: list[str]) -> None:
    before = trace.read_bytes()
    result = run(*command)
    assert result.exit_code == 2
    assert "is the input t.jsonl; refusing to overwrite it" in result.stderr
    assert unchanged(trace, before)
    assert sorted(p.name for p in trace.parent.iterdir()) == ["t.jsonl"]  # no temp left


@pytest.mark.parametrize("output", ["pyproject.toml", "../pyproject.toml",
                                    "compaction-audit.toml"])
@pytest.mark.parametrize("command", [
    ["audit", "t.jsonl"], ["baseline", "create", "t.jsonl"], ["convert", "t.jsonl"],
    ["diff", "t.jsonl", "t.jsonl"]])
def test_output_onto_a_file_the_config_search_reads_is_refused(
        trace: Path, monkeypatch: pytest.MonkeyPatch, output: str, command: list[str]) -> None:
    """adv33 B5: the search reads every pyproject.toml from here up, one without our
    table too (the project's packaging file); -o replaced it."""
    work = trace.parent / "work"
    work.mkdir()
    os.replace(trace, work / "t.jsonl")
    monkeypatch.chdir(work)
    (trace.parent / "pyproject.toml").write_text('[project]\nname = "x"\n')
    for name in ("pyproject.toml", "compaction-audit.toml"):  # no table: read, not used
        (work / name).write_text("# nothing for us\n" if name.endswith("audit.toml")
                                 else '[project]\nname = "x"\n')
    target = (work / output).resolve()
    before = target.read_bytes()
    result = run(*command, "-o", output)
    assert result.exit_code == 2
    said = (f"compaction-audit: {output}: is {target}, which the configuration search "
            "reads; refusing to overwrite it (choose another output)\n")
    if output == "compaction-audit.toml" and command[0] != "convert":  # the config used:
        said = (f"compaction-audit: {output}: is the input {target}; refusing to "  # an input
                "overwrite it (choose another output)\n")
    assert result.stderr == said
    assert unchanged(target, before)


def test_same_file_by_symlink_hard_link_and_other_inputs(trace: Path) -> None:
    before = trace.read_bytes()
    (trace.parent / "link.jsonl").symlink_to(trace)
    os.link(trace, trace.parent / "hard.jsonl")
    for out in ("link.jsonl", "hard.jsonl", "./t.jsonl"):
        result = run("audit", "t.jsonl", "-o", out)
        assert result.exit_code == 2 and "refusing to overwrite" in result.stderr, out
    # a trace found in a directory, and the baseline file, are inputs too
    assert run("audit", ".", "-o", "hard.jsonl").exit_code == 2
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    baseline = (trace.parent / "b.json").read_bytes()
    result = run("audit", "t.jsonl", "--baseline", "b.json", "-o", "b.json")
    assert result.exit_code == 2 and "is the input b.json" in result.stderr
    assert (trace.parent / "b.json").read_bytes() == baseline
    assert unchanged(trace, before)


def test_symlink_output_writes_its_target_and_keeps_the_link(trace: Path) -> None:
    target = trace.parent / "real.txt"
    target.write_text("old")
    link = trace.parent / "report.txt"
    link.symlink_to(target)
    assert run("audit", "t.jsonl", "-o", str(link)).exit_code == 1
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "ungrounded-summary" in target.read_text()
    dangling = trace.parent / "dangling.json"
    dangling.symlink_to(trace.parent / "new.json")
    assert run("audit", "t.jsonl", "-f", "json", "-o", str(dangling)).exit_code == 1
    assert dangling.is_symlink() and (trace.parent / "new.json").is_file()
    converted = trace.parent / "conv.jsonl"
    converted.symlink_to(trace.parent / "conv-target.jsonl")
    assert run("convert", "t.jsonl", "-o", str(converted)).exit_code == 0
    assert converted.is_symlink() and (trace.parent / "conv-target.jsonl").is_file()


@pytest.mark.parametrize("command", [
    ["audit", "t.jsonl"], ["convert", "t.jsonl"], ["baseline", "create", "t.jsonl"],
    ["diff", "t.jsonl", "t.jsonl"],
])
def test_a_symlink_that_loops_is_refused_and_stays(trace: Path, command: list[str]) -> None:
    """adv78 #6: a link to itself, or two links to each other, were replaced by a
    regular file holding the report."""
    (trace.parent / "one").symlink_to("two")
    (trace.parent / "two").symlink_to("one")
    (trace.parent / "self").symlink_to("self")
    for name in ("one", "self"):
        result = run(*command, "-o", name)
        assert result.exit_code == 2
        assert result.stderr == (f"compaction-audit: {name}: cannot open for writing: a "
                                 "symbolic link that loops (Too many levels of symbolic "
                                 "links)\n")
    assert [os.readlink(trace.parent / n) for n in ("one", "two", "self")] == [
        "two", "one", "self"]


def test_existing_file_keeps_its_mode_and_a_failed_run_leaves_it(trace: Path) -> None:
    out = trace.parent / "report.json"
    out.write_text("previous")
    out.chmod(0o640)
    assert run("audit", "t.jsonl", "-f", "json", "-o", str(out)).exit_code == 1
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text().startswith("{")
    bad = dump([{"type": "round", "round": 0}, "{oops"], trace.parent / "bad.jsonl")
    converted = trace.parent / "c.jsonl"
    converted.write_text("keep me")
    assert run("convert", str(bad), "-o", str(converted)).exit_code == 2
    assert converted.read_text() == "keep me"
    assert not [p for p in trace.parent.iterdir() if ".partial" in p.name]


def test_directory_output_is_a_usage_error(trace: Path) -> None:
    (trace.parent / "sub").mkdir()
    for command in (["audit", "t.jsonl", "-o", "sub"], ["convert", "t.jsonl", "-o", "sub"]):
        result = run(*command)
        assert result.exit_code == 2 and "is a directory" in result.stderr
    for command in (["audit", "t.jsonl", "-o", "."], ["convert", "t.jsonl", "-o", "."]):
        result = run(*command)  # refused by its spelling, before any work (adv70 #3)
        assert result.exit_code == 2 and "'.' names a folder" in result.stderr


def read_fifo_while(fifo: Path, command: list[str]) -> tuple[bytes, Any]:
    """Run ``command`` in a thread while reading ``fifo``; never blocks for long, even
    when the command replaces the FIFO instead of writing it (the old behaviour)."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    results: list[Any] = []
    writer = threading.Thread(target=lambda: results.append(run(*command)), daemon=True)
    writer.start()
    data, deadline = b"", time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            chunk = os.read(fd, 65536) if ready else b""
            data += chunk
            if not chunk and not writer.is_alive():
                break
        data += drain(fd)  # the writer may finish between the select and the check
    finally:
        os.close(fd)
    writer.join(5)
    return data, results[0] if results else None


def drain(fd: int) -> bytes:
    """Whatever is left in the non-blocking ``fd`` now, up to end of file."""
    data = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return data
        if not chunk:
            return data
        data += chunk


@pytest.mark.parametrize(("command", "expect"), [
    (["convert", "t.jsonl", "-o", "{out}"], b'"compaction-audit/1"'),
    (["audit", "t.jsonl", "-f", "json", "-o", "{out}"], b'"ungrounded-summary"'),
    (["audit", "t.jsonl", "-o", "{out}"], b"ungrounded-summary"),
])
def test_fifo_output_is_written_through(trace: Path, command: list[str],
                                        expect: bytes) -> None:
    fifo = trace.parent / "out.fifo"
    os.mkfifo(fifo)
    data, result = read_fifo_while(fifo, [c.format(out=fifo) for c in command])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert result is not None and result.exit_code in (0, 1), result
    assert expect in data


def test_devices_and_pseudo_paths_are_written_through() -> None:
    from compaction_audit.outfile import output_target, writes_through

    assert writes_through("/dev/null") and writes_through("/dev/stdout")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with output_target("/dev/null") as path:  # nothing is written
        assert path == "/dev/null"
    assert not writes_through("no-such-file.json")


@pytest.mark.parametrize("command", [["audit", "{t}", "-f", "html"], ["convert", "{t}"],
                                     ["baseline", "create", "{t}"],
                                     ["diff", "{t}", "{t}", "-f", "json"]])
def test_an_output_in_a_missing_folder_is_refused_before_the_work(
        tmp_path: Path, command: list[str]) -> None:
    """New user trial: `-o newdir/sub/report.html` ran the whole audit, then failed to
    open the file. The missing folder is a usage error (exit 2), checked with the
    other output checks before the audit, and nothing is created."""
    trace = dump(drift_records(), tmp_path / "t.jsonl")
    target = tmp_path / "newdir" / "sub" / "out.x"
    result = run(*[a.replace("{t}", str(trace)) for a in command], "-o", str(target))
    assert result.exit_code == 2, result.output
    assert (f"{target}: cannot open for writing: no folder {target.parent} (create it "
            "first)") in result.stderr
    assert not (tmp_path / "newdir").exists()
    # adv56: under a file, the file is named as what is wrong
    inside = trace / "sub" / "out.x"
    result = run(*[a.replace("{t}", str(trace)) for a in command], "-o", str(inside))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().endswith(
        f"{inside}: cannot open for writing: {trace} is a file, not a folder")
    # adv57: a link to nothing, or a device, is no file either
    (tmp_path / "dl").symlink_to(tmp_path / "nowhere" / "dir")
    for under, what in ((tmp_path / "dl", "a symbolic link to nothing, not a folder"),
                        (Path("/dev/null"), "not a folder")):
        result = run(*[a.replace("{t}", str(trace)) for a in command], "-o",
                     str(under / "x"))
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().endswith(
            f"{under / 'x'}: cannot open for writing: {under} is {what}")


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_report_named_gz_or_zst_is_compressed(tmp_path: Path, fmt: str) -> None:
    """adv56: `audit -f json -o r.json.gz` wrote plain JSON under a compressed name;
    `convert` and the readers go by the suffix, and so do reports now."""
    import gzip

    import zstandard

    trace = dump(drift_records(), tmp_path / "t.jsonl")
    plain = run("audit", str(trace), "-f", fmt, "-o", str(tmp_path / "r"))
    assert plain.exit_code == 1, plain.output
    expected = (tmp_path / "r").read_bytes()
    for name, unpack in (("r.gz", gzip.decompress), ("R.GZ", gzip.decompress),
                         ("r.zst", zstandard.ZstdDecompressor().decompressobj().decompress)):
        result = run("audit", str(trace), "-f", fmt, "-o", str(tmp_path / name))
        assert result.exit_code == 1, result.output
        data = (tmp_path / name).read_bytes()
        assert data != expected and unpack(data) == expected
    again = tmp_path / "again.gz"
    run("audit", str(trace), "-f", fmt, "-o", str(again))
    assert again.read_bytes() == (tmp_path / "r.gz").read_bytes()  # no time stamp


@pytest.mark.parametrize("command", [["audit", "{log}", "-f", "json"],
                                     ["diff", "{log}", "{log}", "-f", "json"]])
def test_dash_output_is_standard_output_in_every_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    # adv61: audit and diff wrote a file named '-' where convert, simulate and baseline
    # create write standard output; './-' is still that file
    monkeypatch.chdir(tmp_path)
    log = str(dump(drift_records(), tmp_path / "t.jsonl"))
    args = [a.replace("{log}", log) for a in command]
    result = run(*args, "-o", "-")
    assert result.stdout.startswith("{") and not (tmp_path / "-").exists()
    run(*args, "-o", "./-")
    assert (tmp_path / "-").read_text().startswith("{")


@pytest.mark.parametrize(("args", "error"), [
    (["audit", "T", "-o", "r.json.gz", "-q"],
     "compaction-audit: -o/--output: a .json name says json, not the text report "
     "(--format text); add --format json\n"),
    (["audit", "T", "-o", "r.html", "-f", "sarif"],
     "compaction-audit: -o/--output: a .html name says html, not the sarif report "
     "(--format sarif); add --format html\n"),
    (["audit", "T", "-o", "r.html"],  # adv84: a text report written into r.html
     "compaction-audit: -o/--output: a .html name says html, not the text report "
     "(--format text); add --format html\n"),
    (["diff", "T", "T", "-o", "d.json"],
     "compaction-audit: -o/--output: a .json name says json, not the text report "
     "(--format text); add --format json\n"),
    (["audit", "T", "-o", "r.sarif.zst", "-f", "sarif"], ""),
    (["audit", "T", "-o", "report", "-q"], ""),
    # usertest18 #2: diff writes no SARIF, Markdown or JUnit: no --format to suggest
    (["diff", "T", "T", "-o", "d.sarif"],
     "compaction-audit: -o/--output: a .sarif name says sarif, a format this command "
     "does not write; name the file for the text report (--format text)\n"),
    (["diff", "T", "T", "-o", "d.md", "-f", "json"],
     "compaction-audit: -o/--output: a .md name says markdown, a format this command "
     "does not write; name the file for the json report (--format json)\n"),
    # usertest18 #4: SARIF is JSON, and x.sarif.json says SARIF
    (["audit", "T", "-o", "results.json", "-f", "sarif"], ""),
    (["audit", "T", "-o", "r.sarif.json", "-f", "sarif"], ""),
    (["audit", "T", "-o", "r.sarif.json", "-f", "json"],
     "compaction-audit: -o/--output: a .sarif.json name says sarif, not the json report "
     "(--format json); add --format sarif\n"),
])
def test_an_output_named_for_another_format_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], error: str) -> None:
    """usertest17 #8: -o report.json.gz with no --format wrote a gzipped text report,
    with no word; adv84: then with a warning, where -o r.bz2 was refused (exit 2)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "t.jsonl")
    result = run(*[("t.jsonl" if a == "T" else a) for a in args])
    assert result.stderr == error
    written = Path(args[args.index("-o") + 1]).exists()
    assert (result.exit_code == 2, written) == ((True, False) if error else (False, True))


@pytest.mark.parametrize("args", [
    ["audit", "T", "-o", "r.json.bz2", "-f", "json"],
    ["audit", "T", "-o", "R.JSON.XZ"],
    ["diff", "T", "T", "-o", "d.txt.lz4"],
    ["convert", "T", "-o", "t.jsonl.zip"],
    ["baseline", "create", "T", "-o", "b.json.7z"],
    ["audit", "T", "-o", "r.tgz"],  # adv70: .tgz, .gzip and .zstd were written plain
    ["audit", "T", "-o", "r.json.gzip"],
    ["convert", "T", "-o", "t.jsonl.zstd"],
    ["audit", "T", "-o", "r.tbz2"],  # adv71 #3: and the other tar spellings
    ["simulate", "--rounds", "2", "-o", "s.txz"],
    ["audit", "T", "-o", "r.rar"],
    ["audit", "T", "-o", "r.tar.gz"],  # usertest22 #5: a gzip JSON, no tar, as .tgz
])
def test_an_output_named_for_a_compression_not_written_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """adv67 #7: -o r.json.bz2 (or .xz) wrote plain JSON under a compressed name."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "t.jsonl")
    result = run(*[("t.jsonl" if a == "T" else a) for a in args])
    assert result.exit_code == 2, result.output
    name = args[args.index("-o") + 1].lower()
    ending = ".tar.gz" if name.endswith(".tar.gz") else Path(name).suffix
    assert result.stderr == (
        f"compaction-audit: -o/--output: a {ending} name says a compression this tool does "
        "not write (it writes .gz and .zst); name the file without it\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


@pytest.mark.parametrize(("args", "magic"), [
    (["convert", "T", "-o", "cv.jsonl.ZST"], b"\x28\xb5\x2f\xfd"),
    (["convert", "T", "-o", "cv.jsonl.Gz"], b"\x1f\x8b"),
    (["simulate", "--rounds", "2", "-o", "sim.jsonl.GZ"], b"\x1f\x8b"),
])
def test_a_log_writer_compresses_whatever_the_case_of_the_ending(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], magic: bytes) -> None:
    """adv68 #4: convert and simulate wrote plain NDJSON under a .GZ or .ZST name (the
    report writers compress whatever the case, adv59)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "t.jsonl")
    result = run(*[("t.jsonl" if a == "T" else a) for a in args])
    assert result.exit_code == 0, result.output
    out = tmp_path / args[args.index("-o") + 1]
    assert out.read_bytes().startswith(magic)
    assert run("audit", str(out), "-q").exit_code in (0, 1)


def test_a_large_compressed_log_under_another_name_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip log named .GZ or with no compression suffix, large enough for the
    decoding helpers, was handed to them as plain bytes: an internal error ("fileno")."""
    import gzip

    from compaction_audit.io import parallel
    from compaction_audit.io.native import read_native

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    data = gzip.compress((SAMPLES / "handwritten.jsonl").read_bytes())
    for name in ("h.jsonl.GZ", "h.jsonl"):
        (tmp_path / name).write_bytes(data)
        assert not parallel.wanted(str(tmp_path / name))
        assert read_native(str(tmp_path / name)).n_rounds == 5
    assert parallel.wanted(str(SAMPLES / "handwritten.jsonl"))


@pytest.mark.parametrize("args", [
    ["simulate", "--preset", "delta-text", "--rounds", "3", "-o", "{out}"],
    ["convert", str(SAMPLES / "handwritten.jsonl"), "-o", "{out}"],
])
def test_a_gzip_log_is_the_same_bytes_each_time_and_names_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """usertest20 #3: simulate and convert to a .gz name wrote a time stamp and the
    temporary file's name (".sim.jsonl.gz.cv0o0yey.partial") into the gzip header."""
    monkeypatch.chdir(tmp_path)
    made = []
    for name in ("a.jsonl.gz", "b.jsonl.GZ"):
        result = run(*[a.replace("{out}", name) for a in args])
        assert result.exit_code == 0, result.output
        made.append((tmp_path / name).read_bytes())
    assert made[0] == made[1]
    assert made[0][:2] == b"\x1f\x8b" and made[0][3] & 0x08 == 0  # FNAME not set
    assert made[0][4:8] == b"\0\0\0\0"  # no time stamp


@pytest.mark.parametrize("args", [
    ["audit", "T", "-f", "json", "-o", "keep.json/"],
    ["simulate", "--rounds", "2", "-o", "keep.json/"],
    ["convert", "T", "-o", "newdir/"],
    ["baseline", "create", "T", "-o", "newdir/"],
    ["diff", "T", "T", "-o", "newdir/"],
    ["audit", "T", "-f", "json", "-o", "keep.json/."],  # adv70 #3: Path() drops "/."
    ["audit", "T", "-o", "keep.json//."],
    ["simulate", "--rounds", "2", "-o", "sim/."],
    ["convert", "T", "-o", "keep.json/.."],
])
def test_an_output_named_as_a_folder_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """adv69 #2: -o keep.json/ replaced the regular file keep.json (a shell's > refuses
    a name ending in /), and -o newdir/ wrote a file named newdir."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", "t.jsonl")
    (tmp_path / "keep.json").write_text("{}")
    result = run(*[("t.jsonl" if a == "T" else a) for a in args])
    assert result.exit_code == 2, result.output
    name = args[-1]
    assert result.stderr == (f"compaction-audit: -o/--output: '{name}' names a folder; name "
                             "a file to write\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json", "t.jsonl"]
    assert (tmp_path / "keep.json").read_text() == "{}"


@pytest.mark.parametrize(("command", "device"), [
    (["audit", "{t}", "-q"], "/dev/stdout"), (["audit", "{t}", "-f", "markdown"], "/dev/stdout"),
    (["audit", "{t}", "-f", "json"], "/dev/stderr"), (["convert", "{t}"], "/dev/stdout")])
def test_a_stream_redirected_to_a_file_is_appended_to(
        tmp_path: Path, command: list[str], device: str) -> None:
    """adv140 #1: ``-o /dev/stdout >> log`` opened the file ``log`` for writing, which
    truncated it: ``audit -f markdown -o /dev/stdout >> "$GITHUB_STEP_SUMMARY"`` erased
    what earlier steps wrote.  A file written through is opened for appending."""
    import subprocess
    import sys

    trace = dump(drift_records(), tmp_path / "t.jsonl")
    log = tmp_path / "log.txt"
    log.write_bytes(b"an earlier step\n")
    args = [a.replace("{t}", str(trace)) for a in command]
    with log.open("ab") as sink:
        stream = {"stdout": sink} if device == "/dev/stdout" else {"stderr": sink}
        subprocess.run([sys.executable, "-m", "compaction_audit", *args, "-o", device],
                       check=False, timeout=300, **stream)
    written = log.read_bytes()
    assert written.startswith(b"an earlier step\n")
    assert len(written) > len(b"an earlier step\n") + 20


def test_a_regular_file_under_dev_is_written_anew_each_time(tmp_path: Path) -> None:
    """adv141 #4: opened for appending, a report written twice to /dev/shm/r.json was
    two JSON documents; only a stream's name is written through its descriptor."""
    import json
    import subprocess
    import sys

    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm here")
    trace = dump(drift_records(), tmp_path / "t.jsonl")
    out = f"/dev/shm/compaction-audit-test-{os.getpid()}.json"
    try:
        for _ in range(2):
            subprocess.run([sys.executable, "-m", "compaction_audit", "audit", str(trace),
                            "-f", "json", "-o", out], check=False, timeout=300,
                           capture_output=True)
        assert json.loads(Path(out).read_bytes())["tool"]["name"] == "compaction-audit"
    finally:
        if os.path.exists(out):
            os.unlink(out)


def test_a_link_to_a_stream_writes_where_the_shell_sent_it(tmp_path: Path) -> None:
    """adv141 #7: a symbolic link to /dev/stdout resolved to the file behind it, which
    the report then replaced; adv141 #5: at the offset of ``1<>``, as ``-o -``."""
    import subprocess
    import sys

    from compaction_audit.outfile import stream_descriptor

    trace = dump(drift_records(), tmp_path / "t.jsonl")
    link = tmp_path / "out.txt"
    link.symlink_to("/dev/stdout")
    assert stream_descriptor(str(link)) == 1 and stream_descriptor("/proc/self/fd/2") == 2
    assert stream_descriptor(str(trace)) is None
    assert stream_descriptor(f"/proc/{os.getpid() + 1}/fd/1") is None  # not ours
    acc = tmp_path / "acc.txt"
    acc.write_bytes(b"an earlier step\n")
    with acc.open("ab") as sink:
        subprocess.run([sys.executable, "-m", "compaction_audit", "audit", str(trace), "-q",
                        "-o", str(link)], check=False, timeout=300, stdout=sink)
    assert link.is_symlink()
    written = acc.read_bytes()
    assert written.startswith(b"an earlier step\n") and written[16:20] in (b"WARN", b"FAIL")
    rw = tmp_path / "rw.txt"
    rw.write_bytes(b"x" * 200)
    fd = os.open(rw, os.O_RDWR)  # the shell's 1<> rw.txt: no truncation, offset 0
    try:
        subprocess.run([sys.executable, "-m", "compaction_audit", "audit", str(trace), "-q",
                        "-o", "/dev/stdout"], check=False, timeout=300, stdout=fd)
    finally:
        os.close(fd)
    data = rw.read_bytes()
    assert len(data) == 200 and data.rstrip(b"x").endswith(b"\n")
    assert data[:4] in (b"WARN", b"FAIL", b"PASS")
