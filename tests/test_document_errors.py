"""A JSON document that does not decode names its own error and line, and a UTF-16 or
UTF-32 file says so (adv14 F8, issue 11 class 9): an indented OpenHands trajectory or
opencode export with one bad escape said "FILE:1: bad JSON: unexpected end of data"
(the lone ``[`` of line 1: wrong line, and "cut" though it is not), and a UTF-16 file
"str is not valid UTF-8: surrogates not allowed"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import opencode, openhands
from compaction_audit.io.detect import detect_format
from tests.foreign import FIXTURES, Adapter, run_adapter

OPENHANDS = FIXTURES / "openhands" / "condensation.json"
OPENCODE = FIXTURES / "opencode" / "export.json"
SDK_EVENTS = FIXTURES / "openhands" / "sdk-events.jsonl"
NATIVE = (b'{"type": "session", "schema": "compaction-audit/1"}\n'
          b'{"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 1}]}\n')


def audit_error(path: Path) -> str:
    """The one line ``audit`` prints for ``path`` (exit code 2)."""
    result = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(("fixture", "key", "line"), [
    (OPENHANDS, '"content": "', 9), (OPENCODE, '"text": "', 33)])
def test_a_bad_escape_in_a_document_is_its_own_error_at_its_line(
        tmp_path: Path, fixture: Path, key: str, line: int) -> None:
    text = fixture.read_text()
    assert text.splitlines()[line - 1].lstrip().startswith(key)  # the first such line
    path = tmp_path / fixture.name
    path.write_text(text.replace(key, key + "\\q bad ", 1))  # (a lone \\ud800 is read)
    with pytest.raises(LogError) as err:
        detect_format(str(path))
    assert (err.value.line, err.value.message) == (
        line, "not a JSON document: invalid escaped sequence in string")
    assert audit_error(path).endswith(
        f"{path.name}:{line}: not a JSON document: invalid escaped sequence in string")


def test_the_line_is_right_after_non_ascii_text(tmp_path: Path) -> None:
    # orjson's position counts characters, not bytes: 400 bytes of "é" named line 9
    text = OPENHANDS.read_text().replace('"content": "', '"content": "' + "é" * 200, 1)
    path = tmp_path / "t.json"
    path.write_text(text.replace('"content": "Move', '"content": "\\q Move', 1))
    assert text.splitlines()[19].lstrip().startswith('"content": "Move')
    for read in (lambda: detect_format(str(path)),
                 lambda: run_adapter(openhands.records, path)):  # the adapter: line 9
        with pytest.raises(LogError) as err:
            read()
        assert (err.value.line, err.value.message) == (
            20, "not a JSON document: invalid escaped sequence in string")


def test_a_cut_indented_document_is_cut_at_its_last_line(tmp_path: Path) -> None:
    lines = OPENHANDS.read_text().splitlines(keepends=True)
    path = tmp_path / "cut.json"
    path.write_text("".join(lines[:40]))
    with pytest.raises(LogError) as err:
        detect_format(str(path))
    assert (err.value.line, err.value.message) == (
        40, "not a JSON document: unexpected end of data")


def test_json_lines_with_a_bad_first_line_still_name_that_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"  # lines of no known format: the first bad line is the error
    path.write_bytes(b'{"a": 1\n{"b": 2}\n{"c": 3}\n')
    with pytest.raises(LogError) as err:
        detect_format(str(path))
    assert err.value.line == 1 and err.value.message.startswith("bad JSON: ")


@pytest.mark.parametrize(("encoding", "name"), [
    ("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
    ("utf-32-be", "UTF-32"), ("utf-16-le/no-bom", "UTF-16"), ("utf-16-be/no-bom", "UTF-16"),
    ("utf-32-le/no-bom", "UTF-32"), ("utf-32-be/no-bom", "UTF-32")])
@pytest.mark.parametrize("source", ["openhands", "opencode", "sdk-events", "native"])
def test_a_utf16_or_utf32_file_says_so(tmp_path: Path, encoding: str, name: str,
                                       source: str) -> None:
    """Without a byte order mark too (adv33: "bad JSON: unexpected character")."""
    text = {"openhands": OPENHANDS.read_text(), "opencode": OPENCODE.read_text(),
            "sdk-events": SDK_EVENTS.read_text(), "native": NATIVE.decode()}[source]
    codec, _, bom = encoding.partition("/")
    data = text.encode(codec)
    if codec.endswith("-be") and not bom:  # Python writes a BOM only for the native
        data = "\ufeff".encode(codec) + data  # byte order
    path = tmp_path / "t.json"
    path.write_bytes(data)
    expected = f"{name} is not supported (convert to UTF-8)"
    with pytest.raises(LogError) as err:
        api.audit(str(path))
    assert (err.value.line, err.value.message) == (1, expected)
    assert audit_error(path).endswith(f"t.json:1: {expected}")


@pytest.mark.parametrize("records", [openhands.records, opencode.records])
def test_an_adapter_read_directly_says_utf16(tmp_path: Path, records: Adapter) -> None:
    # opencode decodes the whole file as one document (read_document), OpenHands a line
    path = tmp_path / "t.json"
    path.write_bytes(OPENCODE.read_text().encode("utf-16"))
    with pytest.raises(LogError) as err:
        run_adapter(records, path)
    assert (err.value.line, err.value.message) == (
        1, "UTF-16 is not supported (convert to UTF-8)")


def test_a_line_that_is_not_utf8_names_the_byte_and_where(tmp_path: Path) -> None:
    """orjson's words were "str is not valid UTF-8: surrogates not allowed"."""
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(NATIVE + b'{"type": "round", "round": 1, "spans": [{"id": "caf\xe9"}]}\n')
    assert audit_error(path) == (f"compaction-audit: {path}:3: bad JSON: not UTF-8 "
                                 "(byte 0xe9 at byte 52 of the line)")


def test_an_object_two_levels_down_in_an_element_is_no_part(tmp_path: Path) -> None:
    """adv30 F2: a ``"text"`` key two objects deep in an element (OpenHands
    ``extras.metadata.text``) was taken for a part's, before any parts array: the line
    finder raised KeyError, "internal error", and every other trace of the run was
    lost.  Now the trajectory is read as without that key."""
    import json

    events = json.loads(OPENHANDS.read_text())
    events[0]["extras"] = {"metadata": {"text": "a note"}}
    path = tmp_path / "noted.json"
    path.write_text(json.dumps(events, indent=2))
    plain = tmp_path / "plain.json"
    plain.write_text(OPENHANDS.read_text())
    for p in (path, plain):
        result = CliRunner().invoke(app, ["audit", "-q", str(p)])
        assert (result.exit_code, result.output) == (
            1, "FAIL: 1 error(s), 1 warning(s), 0 info; 2 compactions lost 2 fact(s), "
               "0 that matter\n")
    tiny = tmp_path / "tiny.json"
    tiny.write_text('[\n{"a": {"b": {"text": 1}}}\n]\n')
    assert audit_error(tiny).endswith(
        "tiny.json:1: unrecognized log format: a JSON document, but not a Cline or Gemini "
        "CLI session, an opencode export or an OpenHands trajectory")


def test_a_bug_on_one_trace_is_its_line_and_the_others_are_audited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv30 F2: an exception the code did not expect on one trace (a bug) ended the
    run with one "internal error" line and no verdict for the others; it is that
    trace's line now, and the run goes on."""
    from compaction_audit.io import load

    real = load.load_session

    def buggy(path: str, *args: object, **kwargs: object) -> object:
        if path.endswith("bad.jsonl"):
            raise KeyError(("messages", 0, "##[add-mask]parts"))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    from compaction_audit.runtime import isolated

    monkeypatch.setattr(api, "load_session", buggy)
    monkeypatch.setattr(isolated, "wanted", lambda path: False)  # here, under a limit too
    monkeypatch.delenv("COMPACTION_AUDIT_DEBUG", raising=False)
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_bytes(NATIVE)
    good.write_bytes(NATIVE)
    report = api.audit_paths([str(bad), str(good)], jobs=1)
    assert [s.path for s in report.sessions] == [str(good)]
    assert [str(e) for e in report.errors] == [
        f"{bad}: internal error: KeyError: ('messages', 0, '##[add-mask]parts') (a bug of "
        "compaction-audit, not of this trace; set COMPACTION_AUDIT_DEBUG=1 for a traceback)"]
    monkeypatch.setenv("COMPACTION_AUDIT_DEBUG", "1")
    with pytest.raises(KeyError):
        api.audit_paths([str(bad)], jobs=1)


def test_a_bug_in_detecting_one_trace_before_the_audit_does_not_end_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv30 F2: the command's own process detects each trace's format to look up the
    files read beside it (the ``-o`` and redirection checks); a bug there ended the
    run with one "internal error" line.  The look-up falls back to every file that
    may be a companion, and the trace's own audit names the bug."""
    from compaction_audit.io import companions, load

    def bug(path: str, *args: object, **kwargs: object) -> object:
        if path.endswith("bad.jsonl"):
            raise KeyError((None, 0, ""))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    from compaction_audit.runtime import addrspace

    real = load.load_session
    monkeypatch.setattr(addrspace, "address_space_limit", lambda: None)  # no children
    monkeypatch.setattr(api, "load_session", bug)
    monkeypatch.setattr(companions, "_detect", lambda path: bug(path) and "native")
    monkeypatch.delenv("COMPACTION_AUDIT_DEBUG", raising=False)
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_bytes(NATIVE)
    good.write_bytes(NATIVE)
    (tmp_path / "x.messages.json").write_text("[]")
    found, known = companions.companion_lookup(str(bad))
    assert known and str(tmp_path / "x.messages.json") in found
    result = CliRunner().invoke(app, ["audit", "-q", "-j", "1", str(bad), str(good)])
    assert result.exit_code == 2, result.output
    assert f"{bad}: internal error: KeyError: (None, 0, '')" in result.output
    assert f"{good}: PASS" in result.output
