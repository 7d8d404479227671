"""-o may not name a file an adapter reads along with its input (issue 11, item 3).

Cline pairs a session file with its messages or compaction file (a manifest leads to
its messages file), Gemini CLI reads ``telemetry.log`` beside the recording, SQLite
reads a store's ``-wal`` file: each is an input, and an output that is one of them
(same device and inode) is refused with exit 2 before anything is written, for
audit, convert, baseline create and diff.  The sessions are written here.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from compaction_audit.errors import UsageError
from compaction_audit.io.companions import companion_files
from compaction_audit.outfile import refuse_same_file
from tests.fifos import fed_fifo, unblock
from tests.gate_app import run

SID = "ses-fold-check"


def cline_session(folder: Path) -> None:
    """A manifest, its messages file and a compaction file of one Cline session."""
    said = {"role": "user", "content": [{"type": "text", "text": "rename the flag"}]}
    folded = {"role": "user", "content": [{"type": "text", "text": "we renamed it"}],
              "metadata": {"kind": "compaction_summary"}}
    (folder / "s1.json").write_text(json.dumps(
        {"session_id": SID, "messages_path": "s1.messages.json"}))
    (folder / "s1.messages.json").write_text(json.dumps(
        {"version": 1, "sessionId": SID, "messages": [said]}))
    (folder / "s1.compaction.json").write_text(json.dumps(
        {"version": 1, "sessionId": SID, "messages": [folded]}))


def gemini_session(folder: Path) -> None:
    """A Gemini CLI recording (its metadata line) and the telemetry log beside it."""
    (folder / "chat.jsonl").write_text(json.dumps(
        {"sessionId": SID, "projectHash": "p0", "kind": "main"}) + "\n")
    (folder / "telemetry.log").write_text(json.dumps(
        {"attributes": {"event.name": "gemini_cli.chat_compression", "session.id": SID,
                        "tokens_before": 900, "tokens_after": 300}}))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    cline_session(tmp_path)
    gemini_session(tmp_path)
    return tmp_path


def test_each_adapter_names_the_files_it_reads(folder: Path) -> None:
    assert companion_files("s1.json") == ["s1.messages.json", "s1.compaction.json"]
    # and the manifest s1.json beside s1.messages.json (adv32 A5)
    assert companion_files("s1.compaction.json") == ["s1.messages.json", "s1.json"]
    assert companion_files("s1.messages.json") == ["s1.compaction.json", "s1.json"]
    assert companion_files("chat.jsonl") == ["telemetry.log"]
    assert companion_files("-") == []
    assert companion_files("missing.jsonl") == []


@pytest.mark.parametrize(("command", "read"), [
    (["audit", "s1.json", "-o", "s1.messages.json"], "s1.messages.json"),
    (["audit", "s1.json", "-o", "s1.compaction.json"], "s1.compaction.json"),
    (["audit", "s1.compaction.json", "--format", "json", "-o", "s1.messages.json"],
     "s1.messages.json"),
    (["convert", "chat.jsonl", "-o", "telemetry.log"], "telemetry.log"),
    (["audit", ".", "-o", "telemetry.log"], "telemetry.log"),
    (["baseline", "create", "s1.messages.json", "-o", "s1.compaction.json"],
     "s1.compaction.json"),
    (["diff", "chat.jsonl", "s1.json", "-o", "telemetry.log"], "telemetry.log"),
    (["diff", "chat.jsonl", "s1.json", "-o", "s1.messages.json"], "s1.messages.json"),
])
def test_output_onto_a_companion_is_refused(folder: Path, command: list[str],
                                            read: str) -> None:
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    result = run(*command)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert f"{read}: is {read}, read along with the input " in result.stderr
    assert "refusing to overwrite it" in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written


def test_a_link_to_a_companion_is_the_companion(folder: Path) -> None:
    os.link(folder / "telemetry.log", folder / "hard.log")
    (folder / "sym.log").symlink_to(folder / "s1.messages.json")
    with pytest.raises(UsageError, match=r"is telemetry\.log, read along with the input"):
        refuse_same_file("hard.log", ["chat.jsonl"])
    with pytest.raises(UsageError, match=r"is s1\.messages\.json, read along with the input"):
        refuse_same_file("sym.log", ["s1.json"])


def test_a_file_no_adapter_reads_may_be_written(folder: Path) -> None:
    (folder / "report.txt").write_text("old report\n")
    refuse_same_file("report.txt", ["s1.json", "chat.jsonl"])  # no error
    refuse_same_file("telemetry.log", ["s1.json"])  # a Cline session reads no telemetry


def test_an_sqlite_stores_wal_file_is_an_input(tmp_path: Path) -> None:
    store = tmp_path / "opencode.db"
    db = sqlite3.connect(store)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE session (id TEXT)")
    db.commit()
    wal = tmp_path / "opencode.db-wal"
    assert wal.is_file()  # still open: the log holds the table
    try:
        with pytest.raises(UsageError, match=r"opencode\.db-wal, read along with the input"):
            refuse_same_file(str(wal), [str(store)])
    finally:
        db.close()


def test_every_compaction_file_of_the_session_is_refused_when_none_pairs(
        folder: Path) -> None:
    """Two compaction files of the session beside a messages file: neither is paired
    (the report names both as unread), yet each is opened for its ``sessionId``; -o
    onto either replaced it (adv16 F1)."""
    (folder / "s1.compaction.json").rename(folder / "a.compaction.json")
    (folder / "b.compaction.json").write_bytes((folder / "a.compaction.json").read_bytes())
    assert companion_files("s1.messages.json") == ["a.compaction.json", "b.compaction.json",
                                                  "s1.json"]
    assert companion_files("s1.json") == [
        "s1.messages.json", "a.compaction.json", "b.compaction.json"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for command in (["audit", "s1.messages.json", "-o", "b.compaction.json"],
                    ["convert", "s1.messages.json", "-o", "a.compaction.json"],
                    ["baseline", "create", "s1.json", "-o", "b.compaction.json"]):
        result = run(*command)
        assert result.exit_code == 2, command
        assert "compaction.json, read along with the input " in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize(("command", "fed", "read"), [
    (["audit", "rec.jsonl", "-o", "telemetry.log"], "chat.jsonl", "telemetry.log"),
    (["convert", "rec.jsonl", "-o", "telemetry.log"], "chat.jsonl", "telemetry.log"),
    (["baseline", "create", "rec.jsonl", "-o", "telemetry.log"], "chat.jsonl",
     "telemetry.log"),
    (["diff", "rec.jsonl", "s1.json", "-o", "telemetry.log"], "chat.jsonl", "telemetry.log"),
    (["audit", "x.compaction.json", "-o", "s1.messages.json"], "s1.compaction.json",
     "s1.messages.json"),
])
def test_a_companion_of_a_fifo_input_is_refused(folder: Path, command: list[str], fed: str,
                                                read: str) -> None:
    """A FIFO input is read once, so its format is not detected before the run; its
    readers still open the files beside it (the recording's telemetry, the compaction
    file's messages file), and -o replaced them (adv30 F1): every file of those names
    is refused, and the FIFO is never opened for it."""
    fifo = folder / ("rec.jsonl" if "rec.jsonl" in command else "x.compaction.json")
    writer = fed_fifo(fifo, (folder / fed).read_bytes())
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p != fifo}
    try:
        result = run(*command)
    finally:
        unblock(fifo, writer)
    assert result.exit_code == 2
    assert result.stderr == (
        f"compaction-audit: {read}: is {read}, which may be read along with the input "
        f"{fifo.name} (it is read once, so what it holds is not looked at first); "
        "refusing to overwrite it (choose another output)\n")
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p != fifo} == before


def test_a_companion_of_a_dev_fd_input_is_refused(folder: Path) -> None:
    """``/dev/fd/N`` of a regular file is read once too; the Gemini reader takes the
    telemetry beside the file it names (its link target)."""
    fd = os.open(folder / "chat.jsonl", os.O_RDONLY)
    try:
        with pytest.raises(UsageError, match=r"is .*telemetry\.log, which may be read "
                                             r"along with the input /dev/fd/"):
            refuse_same_file("telemetry.log", [f"/dev/fd/{fd}"])
    finally:
        os.close(fd)
    refuse_same_file("report.txt", [f"/dev/fd/{fd}"])  # a new file: nothing to destroy


def test_a_fifo_manifest_is_followed_only_to_a_messages_file(folder: Path) -> None:
    """A manifest read from a FIFO that names ``notes.txt`` beside it: that name is
    no companion -o would refuse, so the reader does not open it (adv30 F1)."""
    from compaction_audit.errors import LogError
    from compaction_audit.io import cline

    (folder / "notes.txt").write_bytes((folder / "s1.messages.json").read_bytes())
    (folder / "s1.messages.json").unlink()
    fifo = folder / "m.json"
    writer = fed_fifo(fifo, json.dumps(
        {"session_id": "other", "messages_path": "notes.txt"}).encode())
    try:
        with pytest.raises(LogError, match="messages file is not found beside its manifest"):
            list(cline.records(str(fifo)))
    finally:
        unblock(fifo, writer)


def test_a_cline_manifest_beside_its_messages_file_is_not_overwritten(
        tmp_path: Path) -> None:
    """adv32 A5: a folder search counts a session's manifest ``<id>.json`` as read with
    its ``<id>.messages.json``, but ``-o`` could replace it, from the folder or the
    messages file."""
    fixtures = Path(__file__).parent / "fixtures" / "adapters" / "cline"
    for name in ("session.messages.json", "session.json"):
        (tmp_path / name).write_bytes((fixtures / name).read_bytes())
    before = (tmp_path / "session.json").read_bytes()
    for given in (tmp_path, tmp_path / "session.messages.json"):
        result = run("audit", str(given), "-q", "-o", str(tmp_path / "session.json"))
        assert result.exit_code == 2, result.stdout
        assert result.stderr == (
            f"compaction-audit: {tmp_path}/session.json: is {tmp_path}/session.json, read "
            f"along with the input {tmp_path}/session.messages.json; refusing to "
            "overwrite it (choose another output)\n")
    assert (tmp_path / "session.json").read_bytes() == before


def test_convert_from_protects_what_the_forced_reader_reads(folder: Path) -> None:
    """adv33 B2: the files -o may not name were those of the detected format; a
    recording detection does not know (its first lines Gemini CLI's ``$set``
    bookkeeping) read as ``--from gemini-cli`` still reads telemetry.log, which -o then
    replaced."""
    bookkeeping = json.dumps({"$set": {"lastUpdated": "2026-11-30T14:57:36.552Z"}}) + "\n"
    (folder / "rec.jsonl").write_text(bookkeeping * 60
                                      + (folder / "chat.jsonl").read_text())
    assert companion_files("rec.jsonl") == []  # not detected
    assert companion_files("rec.jsonl", "gemini-cli") == ["telemetry.log"]
    before = (folder / "telemetry.log").read_bytes()
    result = run("convert", "--from", "gemini-cli", "rec.jsonl", "-o", "telemetry.log")
    assert result.exit_code == 2
    assert result.stderr == ("compaction-audit: telemetry.log: is telemetry.log, read along "
                             "with the input rec.jsonl; refusing to overwrite it (choose "
                             "another output)\n")
    assert (folder / "telemetry.log").read_bytes() == before
    # and standard output appended to it ('>> telemetry.log')
    with open(folder / "telemetry.log", "ab") as out:
        appended = subprocess.run(
            [sys.executable, "-m", "compaction_audit", "convert", "--from", "gemini-cli",
             "rec.jsonl", "-o", "-"], stdout=out, stderr=subprocess.PIPE, check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert appended.returncode == 2
    assert b"standard output: is telemetry.log, read along with" in appended.stderr
    assert (folder / "telemetry.log").read_bytes() == before
