"""A Cline messages file beside a compaction file no messages file pairs with (adv32
A6): renamed, its ``sessionId`` changed, it left the messages file named alone a plain
PASS.  It is named as a compaction file not read, counted in the verdict, settled by a
folder audit that audits it, and may not be an output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app

CLINE = Path(__file__).parent / "fixtures" / "adapters" / "cline"
NOTE = ("1 compaction file paired with no messages file (it may be this session's) beside "
        "session.messages.json is not read: x.compaction.json; audit each of them by name "
        "(or the folder) to check its compaction")


def _folder(tmp_path: Path, session_id: str) -> Path:
    """Our synthetic session's messages file and its agentic compaction (which loses a
    fact the later turn needs) as ``x.compaction.json`` of ``session_id``."""
    folder = tmp_path / "s"
    folder.mkdir()
    shutil.copy(CLINE / "session.messages.json", folder / "session.messages.json")
    doc = json.loads((CLINE / "agentic.compaction.json").read_text(encoding="utf-8"))
    doc["sessionId"] = session_id
    (folder / "x.compaction.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return folder


def _json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["audit", *args, "--format", "json"])
    return json.loads(result.stdout)


def test_a_messages_file_alone_names_the_unpaired_compaction_file(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "renamed-session")
    trace = str(folder / "session.messages.json")
    result = CliRunner().invoke(app, ["audit", trace])
    assert result.exit_code == 0, result.output
    assert "PASS (1 compaction could not be checked)" in result.output
    session = _json(trace)["session"]["extra"]
    assert session["reader_notes"] == [NOTE]
    assert session["compaction_files_unread"] == ["x.compaction.json"]
    # the gate for untrusted logs fails it
    gated = CliRunner().invoke(app, ["audit", trace, "--fail-on", "warning", "-q"])
    assert gated.exit_code == 1, gated.output


def test_a_compaction_file_of_another_session_with_its_messages_file_is_not_named(
        tmp_path: Path) -> None:
    folder = _folder(tmp_path, "other")
    shutil.copy(CLINE / "session.messages.json", folder / "x.messages.json")  # its pair
    result = CliRunner().invoke(app, ["audit", str(folder / "session.messages.json")])
    assert result.exit_code == 0, result.output
    assert "PASS: 0 error(s)" in result.output
    session = _json(str(folder / "session.messages.json"))["session"]["extra"]
    assert "compaction_files_unread" not in session
    # nor one of a sessionId some messages file of the folder has
    (folder / "x.messages.json").rename(folder / "y.messages.json")
    shutil.copy(folder / "y.messages.json", folder / "z.messages.json")
    doc = json.loads((folder / "z.messages.json").read_text(encoding="utf-8"))
    (folder / "z.messages.json").write_text(json.dumps({**doc, "sessionId": "other"}),
                                            encoding="utf-8")
    session = _json(str(folder / "session.messages.json"))["session"]["extra"]
    assert "compaction_files_unread" not in session


def test_a_folder_audit_checks_it_and_settles_the_note(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "renamed-session")
    result = CliRunner().invoke(app, ["audit", str(folder), "-q"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1].endswith(  # the file read alone, not checked
        "x.compaction.json: PASS (1 compaction could not be checked): 0 error(s), "
        "0 warning(s), 0 info; this loop can drift but not invert")
    report = _json(str(folder))
    by_name = {Path(s["path"]).name: s["session"]["extra"] for s in report["sessions"]}
    assert by_name["session.messages.json"]["reader_notes"] == [
        "audited in this run as a trace of its own: x.compaction.json"]
    assert by_name["session.messages.json"]["compaction_files_unread"] == []


@pytest.mark.parametrize("command", ["audit", "baseline"])
def test_output_onto_the_unpaired_compaction_file_is_refused(tmp_path: Path,
                                                             command: str) -> None:
    folder = _folder(tmp_path, "renamed-session")
    before = (folder / "x.compaction.json").read_bytes()
    args = (["audit", str(folder / "session.messages.json")] if command == "audit"
            else ["baseline", "create", str(folder / "session.messages.json")])
    result = CliRunner().invoke(app, [*args, "-o", str(folder / "x.compaction.json")])
    assert result.exit_code == 2, result.output
    assert "read along with the input" in result.output
    assert (folder / "x.compaction.json").read_bytes() == before
