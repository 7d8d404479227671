"""A folder of many Cline sessions of one ``sessionId`` (issue 11, class 5, adv13 F1):
discovery, pairing and settling cost linear work in the number of files, and the notes
and ``compaction_files_unread`` name at most five files, counting the rest."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.discover import discover
from compaction_audit.io import cline, cline_folder, documents
from compaction_audit.model import SessionHeader
from compaction_audit.report.model import SessionReport, reader_notes, settle_unread
from compaction_audit.settings import Settings
from tests.foreign import write_json

MESSAGE = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}]}
HEAD_KEYS = ("reader_notes", "compaction_files_unread", "compaction_files_unread_truncated")


def _folder(folder: Path, n: int) -> Path:
    """The adversary's folder: n messages files ``m{i}`` and n compaction files ``c{i}``
    (other stems), all of ``sessionId`` S."""
    folder.mkdir()
    for i in range(n):
        write_json(folder / f"m{i}.messages.json",
                   {"version": 1, "sessionId": "S", "messages": [MESSAGE]})
        write_json(folder / f"c{i}.compaction.json", {
            "version": 1, "sessionId": "S",
            "messages": [{**MESSAGE, "metadata": {"kind": "compaction", "reason": "auto"}}]})
    return folder


def _session(path: str) -> SessionReport:
    """The trace's session record through the adapter, as a report without rounds
    (what :func:`settle_unread` reads)."""
    head = next(cline.records(path))[1]
    extra = {k: head[k] for k in HEAD_KEYS if k in head}
    return SessionReport(path, SessionHeader(session_id=head.get("session_id"), extra=extra),
                         Settings(), pl.DataFrame(), [], [], {})


def _work(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str],
                                                                   list[SessionReport]]:
    """Calls to the costly steps while the folder is discovered, each trace converted
    and the run settled: resolved paths, folder listings, documents read."""
    calls: Counter[str] = Counter()

    def counting(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    with monkeypatch.context() as m:
        m.setattr(os.path, "realpath", counting("realpath", os.path.realpath))
        m.setattr(os, "listdir", counting("listdir", os.listdir))
        read = counting("read", documents.read_document)
        for module in (cline, cline_folder):
            m.setattr(module, "read_document", read, raising=False)
        traces = discover([str(folder)])
        sessions = [_session(t) for t in traces]
        settle_unread(sessions)
    return calls, sessions


def test_a_folder_of_one_session_costs_linear_work(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    small, _ = _work(_folder(tmp_path / "n50", 50), monkeypatch)
    large, sessions = _work(_folder(tmp_path / "n100", 100), monkeypatch)
    # was quadratic: each messages file listed the folder (2n names) and resolved
    # every compaction file of the session; realpath 12,900 -> 50,800 calls and 150 ->
    # 300 listings for n = 50 -> 100; now 550 -> 1,100, one listing per folder
    assert small["listdir"] == large["listdir"] == 1, (small, large)
    for step in ("realpath", "read"):
        assert large[step] <= 2 * small[step] + 10, (step, small, large)
    # each compaction file a trace of its own: none is left unread after the run
    assert len(sessions) == 200
    m0 = next(s for s in sessions if s.path.endswith("/m0.messages.json"))
    assert m0.header.extra["compaction_files_unread"] == []
    assert "compaction_files_unread_truncated" not in m0.header.extra
    assert m0.compactions_not_checked() == 0
    assert reader_notes(m0) == [  # the reader's "not read" note is gone with them (ux7)
        "audited in this run as traces of their own: c0.compaction.json, "
        "c1.compaction.json, c10.compaction.json, c11.compaction.json, "
        "c12.compaction.json and 95 more"]


def test_the_unread_compaction_files_are_counted_past_five(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "s", 7)
    head = next(cline.records(str(folder / "m0.messages.json")))[1]
    assert head["reader_notes"] == [
        "7 compaction files of this session beside m0.messages.json are not read: "
        "c0.compaction.json, c1.compaction.json, c2.compaction.json, c3.compaction.json, "
        "c4.compaction.json and 2 more; audit each of them by name (or the folder) to "
        "check its compaction"]
    assert head["compaction_files_unread"] == [f"c{i}.compaction.json" for i in range(5)]
    assert head["compaction_files_unread_truncated"] == {
        "truncated": True, "shown": 5, "total": 7}
    # the verdict and the header count all seven, not the five named
    result = CliRunner().invoke(app, ["audit", str(folder / "m0.messages.json")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "PASS (7 compactions could not be checked)" in result.output
    assert ("7 compaction files beside it not read (audit the folder, or each file by "
            "name, to check them)") in result.output
    # six of them audited in the run: the seventh is still unread, named alone
    sessions = [_session(str(folder / n)) for n in (
        "m0.messages.json", *(f"c{i}.compaction.json" for i in range(6)))]
    settle_unread(sessions)
    extra = sessions[0].header.extra
    assert extra["compaction_files_unread"] == ["c6.compaction.json"]
    assert "compaction_files_unread_truncated" not in extra
    assert sessions[0].compactions_not_checked() == 1
    assert extra["reader_notes"] == [
        "1 compaction file of this session beside m0.messages.json is not read: "
        "c6.compaction.json; audit each of them by name (or the folder) to check its "
        "compaction", "audited in this run as traces of their own: c0.compaction.json, "
        "c1.compaction.json, c2.compaction.json, c3.compaction.json, "
        "c4.compaction.json and 1 more"]
