"""A last line without its newline is "truncated" only when it is JSON cut short; a
complete last line that is malformed is "bad JSON" (adv9 pass on issue 11, class 9:
many writers omit the final LF)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import openhands
from compaction_audit.io.jsonerrors import cut_short, json_error
from compaction_audit.io.tokens import decode_object

SESSION = b'{"type": "session", "schema": "compaction-audit/1"}\n'
ROUND = b'{"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 1}]}\n'


@pytest.mark.parametrize(("last", "word"), [
    (b'{"type": "round", "round": 1, "spans": [1,,2]}', "bad JSON"),  # complete
    (b'{"type": "round", "round": 1}}', "bad JSON"),  # content after the document
    (b'{"type": "round", "round": 1, "spans": [{"id": "b", "tok', "truncated last line"),
    (b'{"type": "round", "round": 1, ', "truncated last line"),  # cut after a blank
    (b'{"type": "round", "round": 1, "spans": [{"id": "\xc3', "truncated last line"),
    (b'{"type": "round", "round": 1, "spans": [1,,2]}\n', "bad JSON"),
])
def test_native_reader_words_the_last_line(tmp_path: Path, last: bytes, word: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(SESSION + ROUND + last)
    with pytest.raises(LogError, match=f":3: {word}: "):
        api.audit(str(path))
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2
    assert f":3: {word}: " in result.output


def test_adapters_decoding_lines_word_it_the_same(tmp_path: Path) -> None:
    say = b'{"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}}\n'
    for last, word in ((b'{"id": 2, "source": "agent",, "action": "message"}', "bad JSON"),
                       (b'{"id": 2, "source": "agent", "act', "truncated last line")):
        path = tmp_path / "oh.jsonl"
        path.write_bytes(say + last)
        with pytest.raises(LogError, match=f":2: {word}: "):
            list(openhands.records(str(path)))
        with pytest.raises(LogError, match=f":7: {word}: "):
            decode_object("x.jsonl", 7, last)


def test_cut_short_by_position_and_without_it() -> None:
    # orjson's offsets are characters: "é" is two bytes, one character
    assert cut_short('{"é": "xy'.encode(), "unexpected end of data", 9)
    assert not cut_short('{"é": 1,,'.encode(), "unexpected character", 8)
    assert cut_short(b'{"a": 1, ', "unexpected end of data", 9)
    assert not cut_short(b'{"a": 1, \n', "unexpected end of data", 9)  # has its LF
    # a character cut in two at the end; an invalid byte inside is not a cut
    assert cut_short(b'{"a": "\xe2\x82', "str is not valid UTF-8", 0)
    assert not cut_short(b'{"a": "\xff"}', "str is not valid UTF-8", 0)
    # no position (format detection): orjson's words decide
    assert cut_short(b'{"a": 1', "unexpected end of data")
    assert not cut_short(b"[[[1]]]", "depth limit exceeded")
    assert json_error(b"[1,,2]", "unexpected character", 3) == "bad JSON: unexpected character"
