"""A Cline session file named alone whose partner is looked for in its folder by
``sessionId`` (issue 11, class 2, adv14 F2): a folder that cannot be listed, or a file
of the suffix looked for that cannot be opened, makes the trace unreadable (exit 2),
never a PASS that did not check the session's compaction."""

from __future__ import annotations

import builtins
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.io import cline_folder
from tests.gate_app import run

FIXTURE = Path(__file__).parent / "fixtures" / "adapters" / "cline"
UNOPENED = ("a/agentic.compaction.json: cannot open: Permission denied; a .compaction.json "
            "file beside session.messages.json that may be of its session, which is then "
            "not checked")
UNLISTED = ("a: cannot list directory: Permission denied; the files of "
            "session.messages.json's session in it cannot be looked for, so its "
            "compaction is not checked")
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="root may open and list anything")
NOT_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                              reason="root may open and list anything")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """a/: the session's messages file, manifest and one compaction file
    (agentic.compaction.json, another stem: found by ``sessionId``), which fails."""
    shutil.copytree(FIXTURE, tmp_path / "a")
    for name in ("README.md", "basic.compaction.json"):
        (tmp_path / "a" / name).unlink()
    monkeypatch.chdir(tmp_path)
    return tmp_path / "a"


def _errors(given: str) -> tuple[int, list[str]]:
    """The exit code and the one-line errors of auditing ``given`` alone."""
    result = run("audit", given, "--jobs", "1", "--format", "json")
    if result.exit_code != 2:  # the compaction file was read with it and checked
        doc = json.loads(result.stdout)
        assert (len(doc["compactions"]), doc["compactions_not_checked"]) == (1, 0)
    return result.exit_code, [line.removeprefix("compaction-audit: ")
                              for line in result.stderr.splitlines()]


def test_the_session_is_checked_when_its_files_can_be_read(folder: Path) -> None:
    assert _errors("a/session.messages.json") == (1, [])
    # a JSON document of the suffix without a sessionId is not a Cline file: no session
    (folder / "empty.compaction.json").write_text("{}")
    (folder / "other.compaction.json").write_text('{"sessionId": "another"}')
    assert _errors("a/session.messages.json") == (1, [])


def test_a_compaction_file_cut_short_beside_it_fails_the_trace(folder: Path) -> None:
    """adv15 F1: the session's compaction file cut 40 bytes before its end (a crashed
    writer) was read as 'of no session': the messages file passed, exit 0."""
    path = folder / "agentic.compaction.json"
    path.write_bytes(path.read_bytes()[:-40])
    lines = path.read_text().count("\n") + 1
    assert _errors("a/session.messages.json") == (2, [
        f"a/agentic.compaction.json: cannot read: line {lines}: not a JSON document: "
        "unexpected end of data; a .compaction.json file beside session.messages.json "
        "that may be of its session, which is then not checked"])
    path.write_text("not json")  # any file of the suffix that is no JSON document
    code, [line] = _errors("a/session.messages.json")
    assert code == 2 and line.startswith("a/agentic.compaction.json: cannot read: ")


@pytest.mark.parametrize("given", ["a/session.messages.json", "a/session.json"])
def test_an_unopened_compaction_file_beside_it_is_an_error(
        folder: Path, monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    real = builtins.open

    def fake(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).endswith("agentic.compaction.json"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cline_folder, "open", fake, raising=False)
    assert _errors(given) == (2, [UNOPENED])


def test_a_folder_that_cannot_be_listed_is_an_error(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.listdir

    def listdir(path: Any = ".") -> Any:
        if os.path.basename(os.fspath(path)) == "a":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    assert _errors("a/session.messages.json") == (2, [UNLISTED])
    # its partner of the same stem needs no listing: the session is checked
    (folder / "agentic.compaction.json").rename(folder / "session.compaction.json")
    assert _errors("a/session.messages.json") == (1, [])


@NOT_ROOT
def test_real_permissions(folder: Path) -> None:
    compaction = folder / "agentic.compaction.json"
    compaction.chmod(0o000)
    try:
        assert _errors("a/session.messages.json") == (2, [UNOPENED])
    finally:
        compaction.chmod(0o644)
    folder.chmod(0o311)  # searchable, not listable
    try:
        assert _errors("a/session.messages.json") == (2, [UNLISTED])
    finally:
        folder.chmod(0o755)


@AS_ROOT
def test_root_reads_them(folder: Path) -> None:
    (folder / "agentic.compaction.json").chmod(0o000)
    folder.chmod(0o311)
    assert _errors("a/session.messages.json") == (1, [])


def test_a_broken_compaction_file_names_the_trace_it_kept_from_being_audited(
        tmp_path: Path) -> None:
    """adv51: a folder whose agentic.compaction.json is not JSON listed it UNREADABLE
    twice in the summary (once as itself, once for the messages file it broke), and
    never named session.messages.json."""
    from compaction_audit import api
    from compaction_audit.report.summary import summary_rows

    for name in ("session.messages.json", "basic.compaction.json"):
        shutil.copy(Path(__file__).parent / "fixtures" / "adapters" / "cline" / name,
                    tmp_path / name)
    (tmp_path / "agentic.compaction.json").write_text("{bad\n")
    report = api.audit_paths([str(tmp_path / n) for n in (
        "agentic.compaction.json", "basic.compaction.json", "session.messages.json")], jobs=1)
    assert [(e.path.rsplit("/", 1)[-1], (e.trace or "").rsplit("/", 1)[-1])
            for e in report.errors] == [("agentic.compaction.json", ""),
                                        ("agentic.compaction.json", "session.messages.json")]
    # -q and the text report put the trace first (adv52)
    quiet = run("audit", *(str(tmp_path / n) for n in (
        "agentic.compaction.json", "basic.compaction.json", "session.messages.json")), "-q")
    assert [ln.split(": ", 2)[1].rsplit("/", 1)[-1] for ln in quiet.stdout.splitlines()
            if ln.startswith("error: ")] == ["agentic.compaction.json:1",
                                             "session.messages.json"]
    assert [(r.trace.rsplit("/", 1)[-1], r.verdict) for r in summary_rows(report)] == [
        ("basic.compaction.json", "WARN"), ("agentic.compaction.json", "UNREADABLE"),
        ("session.messages.json", "UNREADABLE")]


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: p.symlink_to("/nonexistent/compaction.json"), "a link to nothing"),
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: p.symlink_to("/dev/null"), "a character device")])
def test_a_compaction_file_that_is_no_regular_file_is_not_checked(
        tmp_path: Path, make: Any, kind: str) -> None:
    """adv62: beside a dangling `.compaction.json` link (or a FIFO, a directory, a
    device) the messages file passed as "no compaction", exit 0 under --fail-on
    warning, where a readable compaction file fails it."""
    shutil.copy(FIXTURE / "session.messages.json", tmp_path / "session.messages.json")
    make(tmp_path / "session.compaction.json")
    messages = str(tmp_path / "session.messages.json")
    result = run("audit", messages, "--fail-on", "warning", "-q")
    assert result.exit_code == 1
    assert result.stdout.startswith("PASS (1 compaction could not be checked): ")
    doc = json.loads(run("audit", messages, "-f", "json").stdout)
    assert doc["compactions_not_checked"] == 1
    assert (f"session.compaction.json beside session.messages.json is {kind}, not a "
            "regular file: its compaction is not read, so not checked"
            ) in doc["session"]["extra"]["reader_notes"]


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """p/s.messages.json and p/s.compaction.json: the fixture's basic pair (read
    together, its compaction is checked: it loses 2 facts)."""
    (tmp_path / "p").mkdir()
    shutil.copy(FIXTURE / "session.messages.json", tmp_path / "p" / "s.messages.json")
    shutil.copy(FIXTURE / "basic.compaction.json", tmp_path / "p" / "s.compaction.json")
    monkeypatch.chdir(tmp_path)
    assert run("audit", "p/s.messages.json", "-q").stdout == (
        "WARN: 0 error(s), 1 warning(s), 1 info; 1 compaction lost 2 fact(s), 0 that matter\n")
    return tmp_path / "p"


def _edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_a_partner_that_is_no_cline_file_leaves_the_compaction_unchecked(pair: Path) -> None:
    """adv64 #1: a compaction file of the messages file's name that this version does
    not read as Cline (its first message had an ``info`` key) was passed over without
    a word: the session passed, exit 0, even under --fail-on warning."""
    _edit(pair / "s.compaction.json", lambda d: d["messages"][0].update(info={}))
    quiet = run("audit", "p/s.messages.json", "-q")
    assert quiet.stdout.startswith("PASS (1 compaction could not be checked): ")
    assert quiet.exit_code == 0
    text = " ".join(run("audit", "p/s.messages.json").stdout.split())
    assert ("note: s.compaction.json beside s.messages.json is not a Cline file this "
            "version reads (no sessionId, agent or system_prompt, or its first message "
            "is not {role, content}): its compaction is not read, so not checked") in text
    assert run("audit", "p/s.messages.json", "--fail-on", "warning").exit_code == 1


def test_a_messages_file_without_messages_leaves_the_compaction_unchecked(
        pair: Path) -> None:
    """adv64 #1: the compaction file said its messages file "was not found" when it
    was there but held no list of messages; #4: a messages file holding no message
    made up a second compaction (0 removed) that the real one then folded."""
    _edit(pair / "s.messages.json", lambda d: d.update(messages="5"))
    text = " ".join(run("audit", "p/s.compaction.json").stdout.split())
    assert ("note: s.compaction.json: the session's messages file s.messages.json has no "
            "list of messages (messages), so its compaction is not checked") in text
    assert "unchecked 1 compaction could not be checked: messages file not read" in text
    _edit(pair / "s.messages.json", lambda d: d.update(messages=[]))
    text = " ".join(run("audit", "p/s.compaction.json").stdout.split())
    assert ("the session's messages file s.messages.json holds no message, so its "
            "compaction is not checked") in text
    assert "Compactions (1)" in text
    alone = run("audit", "p/s.messages.json")
    assert alone.exit_code == 2
    assert alone.stderr == ("compaction-audit: p/s.messages.json: no round records: "
                            "nothing to audit\n")


def test_a_partner_of_another_session_is_not_read_as_this_one(pair: Path) -> None:
    """adv84 #2: a compaction file of another session (another sessionId) beside a
    messages file of the same name was paired by its name alone, and its numbers
    ("1 compaction lost 54 fact(s)") reported as this session's."""
    _edit(pair / "s.compaction.json", lambda d: d.update(sessionId="9999_other"))
    quiet = run("audit", "p/s.messages.json", "-q")
    assert quiet.stdout == ("PASS: 0 error(s), 0 warning(s), 0 info; no compaction in "
                            "this log\n")
    text = " ".join(run("audit", "p/s.messages.json").stdout.split())
    assert ("note: s.compaction.json beside s.messages.json has sessionId '9999_other', "
            "not s.messages.json's '1795512345678_wxq7k': another session's compaction, "
            "not read") in text
    # given by name, the compaction file says its messages file is another session's
    text = " ".join(run("audit", "p/s.compaction.json").stdout.split())
    assert ("note: s.compaction.json: the messages file s.messages.json has sessionId "
            "'1795512345678_wxq7k', not s.compaction.json's '9999_other', so its "
            "compaction is not checked") in text
    assert "unchecked 1 compaction could not be checked: messages file of another session" \
        in text


@pytest.mark.parametrize(("theirs", "shown"), [(12345, "12345"), (None, "null"),
                                               (["x"], '["x"]'), ("a" * 90, "'" + "a" * 79 + "…")])
def test_a_partner_s_sessionid_of_another_type_is_another_session(
        pair: Path, theirs: Any, shown: str) -> None:
    """adv85 #3: a sessionId that is no string (12345, null, a list) was not compared,
    and the partner paired by its name; #4: a long id is cut with an ellipsis."""
    _edit(pair / "s.compaction.json", lambda d: d.update(sessionId=theirs))
    assert run("audit", "p/s.messages.json", "-q").stdout.startswith(
        "PASS: 0 error(s), 0 warning(s), 0 info; no compaction in this log")
    text = " ".join(run("audit", "p/s.messages.json").stdout.split())
    assert (f"note: s.compaction.json beside s.messages.json has sessionId {shown}, not "
            "s.messages.json's '1795512345678_wxq7k': another session's compaction, "
            "not read") in text
