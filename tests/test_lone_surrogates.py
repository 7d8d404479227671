"""A lone surrogate escape ("\\ud83d" with no low half) in a log's JSON: Node products
write one where a tool output was cut inside an emoji, and orjson refused the line,
stopping the whole trace (adv67 #6).  It is read with U+FFFD in its place, by every
reader path: native (alone and with the decoding helpers), the adapters' lines and
documents."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from compaction_audit.api import audit
from compaction_audit.io import parallel
from compaction_audit.io.load import load_session
from compaction_audit.io.native import read_native
from compaction_audit.io.surrogates import NOT_SURROGATES, loads_lone_surrogates
from tests.logs import SAMPLES

ADAPTERS = Path(__file__).parent / "fixtures" / "adapters"
LONE = rb"\ud83d"  # the escape as it is written in the file: six bytes


def _error(raw: bytes) -> orjson.JSONDecodeError:
    with pytest.raises(orjson.JSONDecodeError) as info:
        orjson.loads(raw)
    return info.value


@pytest.mark.parametrize(("raw", "value"), [
    (b'{"a": "x' + LONE + b'"}', {"a": "x\ufffd"}),
    (rb'{"a": "\udc00y"}', {"a": "\ufffdy"}),  # a low half alone
    (rb'{"a": "\ud83d\u0041"}', {"a": "\ufffdA"}),  # a high half before no low one
    (rb'{"\ud83d": ["\ud83d\ude00", 1]}', {"\ufffd": ["\U0001f600", 1]}),  # key; a pair
])
def test_a_lone_half_becomes_the_replacement_character(raw: bytes, value: object) -> None:
    assert loads_lone_surrogates(raw, _error(raw)) == value


@pytest.mark.parametrize("raw", [
    b'{"a": 1,}',  # another error: orjson's stands
    b'{"a": "' + LONE + b'", "b": NaN}',  # the standard library would read NaN
    b'{"a": "' + LONE + b'"',  # cut short
    '{"a": "\\ud83d"}'.encode("utf-16"),  # UTF-16: the standard library reads it
    b'{"a": "\xed\xa0\xbd"}',  # a surrogate's bytes (CESU-8), no escape
])
def test_other_bad_json_is_not_read(raw: bytes) -> None:
    assert loads_lone_surrogates(raw, _error(raw)) is NOT_SURROGATES


def _with_lone(source: Path, target: Path, marker: bytes) -> Path:
    data = source.read_bytes()
    assert data.count(marker) >= 1
    target.write_bytes(data.replace(marker, marker + LONE, 1))
    return target


def _findings(path: Path) -> list[tuple[str, int]]:
    return [(f.code, f.round) for f in audit(str(path)).findings]


def test_native_logs_read_alone_and_by_the_decoding_helpers(tmp_path: Path) -> None:
    source = SAMPLES / "handwritten.jsonl"
    path = _with_lone(source, tmp_path / "lone.jsonl", b'"text": "')
    alone = read_native(str(path))
    helped = parallel.read_parallel(str(path), False)
    for session in (alone, helped):
        texts = session.items["text"].drop_nulls().to_list()
        assert sum(t.startswith("\ufffd") for t in texts) == 1
    assert _findings(path) == _findings(source)


@pytest.mark.parametrize(("name", "marker"), [
    ("claude-session.jsonl", b'"text":"'),  # a JSONL adapter's line
    ("cline/session.messages.json", b'"text": "'),  # a JSON document
])
def test_adapters_read_it(tmp_path: Path, name: str, marker: bytes) -> None:
    source = ADAPTERS / name
    if source.parent.name == "cline":  # the task's files travel together
        shutil.copytree(source.parent, tmp_path / "cline")
        path = _with_lone(source, tmp_path / "cline" / source.name, marker)
    else:
        path = _with_lone(source, tmp_path / source.name, marker)
    session, _ = load_session(str(path))
    texts = session.items["text"].drop_nulls().to_list()
    assert sum("\ufffd" in t for t in texts) == 1
    assert _findings(path) == _findings(source)


@pytest.mark.parametrize(("name", "marker", "added"), [
    ("opencode/export.json", '"info": {', '"x\\ud83d": 1,\n  "info": {'),  # a top key
    ("openhands/condensation.json", '"args": {', '"k\\udc00": [{"q": 1}],\n    "args": {'),
])
def test_a_key_of_a_document_holding_one_is_read(tmp_path: Path, name: str, marker: str,
                                                 added: str) -> None:
    """adv71 #1: the document was read, then its keys decoded again one by one, without
    the fallback: an internal error."""
    source = ADAPTERS / name
    path = tmp_path / source.name
    path.write_text(source.read_text().replace(marker, added, 1))
    assert _findings(path) == _findings(source)


def test_convert_reads_a_native_log_holding_one(tmp_path: Path) -> None:
    """adv71 #2: convert said "bad JSON: no low surrogate" of a line audit reads."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    path = _with_lone(SAMPLES / "handwritten.jsonl", tmp_path / "lone.jsonl", b'"text": "')
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "\ufffd" in out.read_text(encoding="utf-8")
