"""A wrong JSON type in any id or text field of a native record is a one-line
``FILE:LINE: ... (field)`` error, exit 2, and a skipped record under ``--lenient``
(issue 11, class 9): a ``compaction`` object whose ``summary_id`` was a number, a list
or an object was "internal error: InvalidOperationError" from a Polars join.

Ids take a string or an integer (read as its decimal string, as everywhere in the
format; ``session_id`` too); text fields a string; ``null`` is accepted where the field
is optional.  A span's ``source`` takes any JSON value (written back as JSON text).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io.native import read_native
from tests.gate_app import run
from tests.logs import dump, rnd, session

_Set = Callable[[list[dict[str, Any]], Any], None]


def _records() -> list[dict[str, Any]]:
    return [
        session(session_id="ids", task_query="ship it"),
        rnd(0, spans=[{"id": "a", "tokens": 5, "text": "port 45000 ms", "source": "user"},
                      {"id": "b", "tokens": 5, "text": "b"}]),
        rnd(1, summaries=[{"id": "S", "tokens": 2, "text": "port 45000 ms kept",
                           "children": ["a"]}],
            evicted=["a"], offloaded=["b"], retained=[{"id": "S", "salience": 0.5}],
            compaction={"summary_id": "S"}),
        rnd(2, spans=[{"id": "c", "tokens": 5}], retained=[["S", 0.5], ["c", 0.1]]),
    ]


def _at(*path: Any) -> _Set:
    def put(records: list[dict[str, Any]], value: Any) -> None:
        node: Any = records
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return put


# (where, setter, line, field in the error, an id field: takes an integer, optional:
# takes null)
FIELDS: list[tuple[str, _Set, int, str, bool, bool]] = [
    ("session_id", _at(0, "session_id"), 1, "session_id", True, True),
    ("task_query", _at(0, "task_query"), 1, "session.task_query", False, True),
    ("span id", _at(1, "spans", 1, "id"), 2, "spans[1].id", True, False),
    ("span text", _at(1, "spans", 0, "text"), 2, "spans[0].text", False, True),
    ("summary id", _at(2, "summaries", 0, "id"), 3, "summaries[0].id", True, False),
    ("summary text", _at(2, "summaries", 0, "text"), 3, "summaries[0].text", False, True),
    ("child", _at(2, "summaries", 0, "children", 0), 3, "summaries[0].children[0]", True,
     False),
    ("evicted", _at(2, "evicted", 0), 3, "evicted[0]", True, False),
    ("offloaded", _at(2, "offloaded", 0), 3, "offloaded[0]", True, False),
    ("retained object id", _at(2, "retained", 0, "id"), 3, "retained[0]", True, False),
    ("retained pair id", _at(3, "retained", 0, 0), 4, "retained[0]", True, False),
    ("compaction summary_id", _at(2, "compaction", "summary_id"), 3,
     "compaction.summary_id", True, True),
]
WRONG: dict[str, Any] = {"float": 1.5, "bool": True, "list": ["S"], "object": {"id": "S"},
                         "null": None, "integer": 7}


def _cases() -> list[Any]:
    cases = []
    for name, put, line, field, is_id, optional in FIELDS:
        for kind, value in WRONG.items():
            if (kind == "integer" and is_id) or (kind == "null" and optional):
                continue  # accepted: see the module docstring
            cases.append(pytest.param(put, value, line, field, id=f"{name}-{kind}"))
    return cases


@pytest.mark.parametrize(("put", "value", "line", "field"), _cases())
def test_a_wrong_type_is_a_field_error(tmp_path: Path, put: _Set, value: Any, line: int,
                                       field: str) -> None:
    records = copy.deepcopy(_records())
    put(records, value)
    path = dump(records, tmp_path / "t.jsonl")
    with pytest.raises(LogError) as info:
        read_native(str(path))
    assert info.value.line == line
    assert info.value.field.startswith(field), info.value
    lenient = read_native(str(path), lenient=True)
    assert lenient.skipped[0].line == line and lenient.skipped[0].field == info.value.field


@pytest.mark.parametrize("value", [1.5, True, ["S"], {"id": "S"}])
def test_the_command_gives_one_line_and_exit_2(tmp_path: Path, value: Any) -> None:
    records = _records()
    records[2]["compaction"]["summary_id"] = value
    path = dump(records, tmp_path / "t.jsonl")
    result = run("audit", str(path), "-q")
    assert result.exit_code == 2
    kind = {float: "a number", bool: "a boolean", list: "a list", dict: "an object"}
    assert result.stderr.splitlines() == [
        f"compaction-audit: {path}:3: id must be a string or an integer, got "
        f"{kind[type(value)]} (compaction.summary_id)"]
    assert run("audit", str(path), "--lenient", "-q").exit_code in (0, 1)


def test_an_integer_summary_id_names_the_summary_of_that_id(tmp_path: Path) -> None:
    records = _records()
    records[2]["summaries"][0]["id"] = 7
    records[2]["retained"][0]["id"] = 7
    records[3]["retained"][0][0] = 7
    records[2]["compaction"]["summary_id"] = 7
    session = read_native(str(dump(records, tmp_path / "t.jsonl")))
    assert [c["summary_id"] for c in session.compactions] == ["7"]
    assert run("audit", str(tmp_path / "t.jsonl"), "-q").exit_code in (0, 1)


@pytest.mark.parametrize(("written", "said"), [
    ("18446744073709551616", "got a number too large to read exactly (an integer past "
                             "64 bits: write it as a string)"),
    ("-9223372036854775809", "got a number too large to read exactly (an integer past "
                             "64 bits: write it as a string)"),
    ("1.5", "got a number"),
])
def test_an_id_past_64_bits_is_named_so(tmp_path: Path, written: str, said: str) -> None:
    """adv94 #5: orjson reads an integer past 64 bits as a float, so the id
    18446744073709551616 read "got a number", as if no integer had been written."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"session","schema":"compaction-audit/1"}\n'
                    f'{{"type":"round","round":0,"spans":[{{"id":{written},"tokens":1}}]}}\n')
    result = run("audit", str(path), "-q")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"compaction-audit: {path}:2: id must be a string or an integer, {said} "
        "(spans[0].id)"]
    path.write_text('{"type":"session","schema":"compaction-audit/1"}\n'
                    '{"type":"round","round":0,"spans":[{"id":18446744073709551615,'
                    '"tokens":1}]}\n')  # the largest integer read exactly
    assert run("audit", str(path), "-q").exit_code == 0


def test_a_session_id_past_64_bits_is_named_so(tmp_path: Path) -> None:
    """usertest48 #7: it read "expected a string", where integer session ids are read."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"session","schema":"compaction-audit/1",'
                    '"session_id":18446744073709551616}\n'
                    '{"type":"round","round":0,"spans":[{"id":"a","tokens":1}]}\n')
    result = run("audit", str(path), "-q")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"compaction-audit: {path}:1: expected a string or an integer, got a number too "
        "large to read exactly (an integer past 64 bits: write it as a string) (session_id)"]


@pytest.mark.parametrize(("value", "got"), [("[\"a\"]", "a list"), ("{}", "an object"),
                                            ("true", "a boolean"), ("1.5", "a number")])
def test_a_session_id_of_another_type_says_what_it_got(tmp_path: Path, value: str,
                                                       got: str) -> None:
    """usertest65 #9: "expected a string (session_id)" alone, where every other type
    error says what it got (and an integer is read)."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"session","schema":"compaction-audit/1",'
                    f'"session_id":{value}}}\n'
                    '{"type":"round","round":0,"spans":[{"id":"a","tokens":1}]}\n')
    result = run("audit", str(path), "-q")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"compaction-audit: {path}:1: expected a string or an integer, got {got} (session_id)"]
