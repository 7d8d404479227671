"""Malformed product records are named by their field, never by a Python exception
(adv91 #4): a Gemini CLI ``$set.messages`` element without ``id`` read "unexpected
record shape: KeyError: 'id'"; a Cline text part without ``text`` read "TypeError: a
text part's 'text' is not a string", and is now an empty part (null is not given).
Small logs written here in the products' shapes (docs/adapters.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app

GEMINI_HEAD = ('{"sessionId":"s1","projectHash":"p","startTime":"t","lastUpdated":"t",'
               '"kind":"main"}\n'
               '{"id":"m1","timestamp":"t","type":"user",'
               '"content":[{"text":"The staging port is 8443."}]}\n')


def _audit(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", str(path)])
    return result.exit_code, result.output


@pytest.mark.parametrize("element", [
    '{"timestamp":"t","type":"user","content":[{"text":"The staging port is 8443."}]}',
    '{"id":"","timestamp":"t","type":"gemini","content":[{"text":"Noted."}]}',
    '{"id":7,"timestamp":"t","type":"user","content":[{"text":"Port 8443."}]}',
])
def test_a_gemini_rewrite_without_a_message_id_names_it(tmp_path: Path, element: str) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(GEMINI_HEAD + '{"$set":{"messages":[' + element + "]}}\n")
    assert _audit(path) == (2, f"compaction-audit: {path}:3: expected a non-empty string "
                               "($set.messages[0].id)\n")


def test_a_gemini_rewrite_of_an_info_message_needs_no_id(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(GEMINI_HEAD + '{"$set":{"messages":[{"id":"m1","timestamp":"t",'
                    '"type":"user","content":[{"text":"The staging port is 8443."}]},'
                    '{"timestamp":"t","type":"info","content":"Saved."}]}}\n')
    code, out = _audit(path)
    assert code in (0, 1) and "unexpected record shape" not in out


@pytest.mark.parametrize("part", ['{"type":"text"}', '{"type":"text","text":null}'])
def test_a_cline_text_part_without_text_is_an_empty_part(tmp_path: Path, part: str) -> None:
    """A text part with no text, or null (what every adapter reads as not given), holds
    nothing: read as an empty part, as in a compaction file, where it read "TypeError: a
    text part's 'text' is not a string" in a messages file; a text of another type is
    named (tests/test_adapter_texts.py)."""
    path = tmp_path / "task.messages.json"
    path.write_text('{"version":1,"sessionId":"x1","messages":[\n'
                    ' {"id":"u1","role":"user","content":[{"type":"text","text":"Keep 8443."}]},\n'
                    ' {"id":"a1","role":"assistant","content":[' + part + ']}\n]}\n')
    code, out = _audit(path)
    assert code in (0, 1), out
    assert "unexpected record shape" not in out and "Error" not in out
    bad = tmp_path / "bad.messages.json"
    bad.write_text(path.read_text().replace(part, '{"type":"text","text":7}'))
    assert _audit(bad) == (2, f"compaction-audit: {bad}:3: expected a string "
                              "(messages[1].content[0].text)\n")
