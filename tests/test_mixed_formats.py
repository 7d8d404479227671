"""A file holding records of two log formats is an error, never one format read with
the other's records dropped (issue 11, item 2; ninth adversarial pass F10: two Codex
lines in front of a failing Claude Code transcript made it a passing Codex rollout).

Every line adapter skips the lines it does not know; ``detect.line_checker`` makes the
ones that are another format's records an error naming the first of them, in strict
and lenient mode alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import detect

FIXTURES = Path(__file__).parent / "fixtures" / "adapters"
CLAUDE = (FIXTURES / "claude-session.jsonl").read_text()
CODEX = (FIXTURES / "codex-local.jsonl").read_text()
GEMINI = (FIXTURES / "gemini-cli" / "compression.jsonl").read_text()
OPENHANDS = (FIXTURES / "openhands" / "sdk-events.jsonl").read_text()

CODEX_HEAD = "".join(json.dumps(x) + "\n" for x in [
    {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}},
    {"timestamp": "t", "type": "response_item", "payload": {
        "type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "hello"}]}},
])
GEMINI_HEAD = "".join(json.dumps(x) + "\n" for x in [
    {"sessionId": "g", "projectHash": "h", "kind": "main"},
    {"id": "m1", "type": "user", "content": [{"text": "hello"}]},
])


def _audit(tmp_path: Path, text: str, *args: str) -> Any:
    path = tmp_path / "mixed.jsonl"
    path.write_text(text)
    return CliRunner().invoke(app, ["audit", str(path), "-q", *args]), str(path)


def _first_line(text: str, test: str) -> int:
    """The 1-based number of the first line of ``text`` that passes ``LINE_TESTS[test]``."""
    return next(i for i, line in enumerate(text.splitlines(), 1)
                if line.strip() and detect.LINE_TESTS[test](json.loads(line)))


def test_the_transcript_alone_fails_and_the_rollout_alone_reads() -> None:
    # the premise: the Claude Code fixture fails the gate, the Codex one reads
    failing = CliRunner().invoke(app, ["audit", str(FIXTURES / "claude-session.jsonl"), "-q"])
    assert failing.exit_code == 1
    assert CliRunner().invoke(app, ["audit", str(FIXTURES / "codex-local.jsonl"),
                                    "-q"]).exit_code in (0, 1)


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize(("head", "read_as"), [(CODEX_HEAD, "codex"),
                                               (GEMINI_HEAD, "gemini-cli")])
def test_foreign_lines_in_front_of_a_failing_transcript_are_an_error(
        tmp_path: Path, head: str, read_as: str, lenient: bool) -> None:
    result, path = _audit(tmp_path, head + CLAUDE, *(["--lenient"] if lenient else []))
    # before: read as the first lines' format, every Claude Code line dropped: PASS, 0
    assert result.exit_code == 2
    line = 2 + _first_line(CLAUDE, "claude-code")
    assert result.stderr == (f"compaction-audit: {path}:{line}: a claude-code record in a "
                             f"file read as {read_as}: one file holds two log formats "
                             "(type)\n")


def test_one_foreign_line_before_a_rollout_is_named(tmp_path: Path) -> None:
    claude_line = next(line for line in CLAUDE.splitlines()
                       if detect.LINE_TESTS["claude-code"](json.loads(line)))
    result, path = _audit(tmp_path, claude_line + "\n" + CODEX)
    assert result.exit_code == 2
    assert result.stderr == (f"compaction-audit: {path}:1: a claude-code record in a file "
                             "read as codex: one file holds two log formats (type)\n")


@pytest.mark.parametrize(("body", "fmt", "foreign", "other"), [
    (CLAUDE, "claude-code", CODEX_HEAD.splitlines()[0], "codex"),
    (CODEX, "codex", GEMINI_HEAD.splitlines()[0], "gemini-cli"),
    (OPENHANDS, "openhands", CODEX_HEAD.splitlines()[1], "codex"),
    (GEMINI, "gemini-cli", json.dumps({"type": "round", "round": 0, "spans": []}), "native"),
])
def test_a_foreign_line_after_sixty_own_lines_is_named(
        tmp_path: Path, body: str, fmt: str, foreign: str, other: str) -> None:
    # beyond the 50 lines detection reads: only the adapter sees it
    lines = body.splitlines()
    own = [line for line in lines if line.strip()]
    padded = (own * (60 // len(own) + 1))[:max(60, len(own))]
    if fmt == "openhands":  # its event ids are unique (adv73): each line its own
        padded = [json.dumps({**json.loads(x), "id": f"p{i}"}) for i, x in enumerate(padded)]
    text = "\n".join([*padded, foreign, *own]) + "\n"
    path = tmp_path / "late.jsonl"
    path.write_text(text)
    assert detect.detect_format(str(path)) == fmt
    with pytest.raises(LogError) as err:
        list(detect.ADAPTERS[fmt](str(path), None))
    assert str(err.value) == (f"{path}:{len(padded) + 1}: a {other} record in a file read "
                              f"as {fmt}: one file holds two log formats (type)")


def test_a_line_of_no_known_format_is_still_skipped(tmp_path: Path) -> None:
    # only records another adapter would read make a file two formats
    plain, _ = _audit(tmp_path, CODEX)
    extra, _ = _audit(tmp_path, CODEX + json.dumps({"type": "future_line", "x": 1}) + "\n")
    # skipped, not a second format; counted as a line not read (adv27 F2)
    assert extra.exit_code == plain.exit_code and "two log formats" not in extra.output
    head = plain.stdout.split(":", 1)[0]  # FAIL or WARN, by the fixture's findings
    assert extra.stdout == plain.stdout.replace(f"{head}: ", f"{head} (1 line not read, "
                                                "see the notes): ", 1)


def test_a_whole_file_of_the_wrong_format_keeps_its_hint(tmp_path: Path) -> None:
    # no record of the format asked for: the convert hint, not the mixed-file error
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", "--from", "codex",
                                      str(FIXTURES / "claude-session.jsonl"), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert "it looks like claude-code: try --from claude-code" in result.stderr


def test_line_checker_names_the_first_foreign_line_once_both_are_seen() -> None:
    check = detect.line_checker("f", "codex")
    codex_line = json.loads(CODEX_HEAD.splitlines()[0])
    claude_line = {"type": "user", "uuid": "u", "message": {"role": "user", "content": "x"}}
    assert check(1, claude_line) is None  # no codex record yet
    assert check(2, {"type": "other"}) is None
    assert check(3, {"type": "assistant", "sessionId": "s"}) is None  # a second foreign one
    err = check(4, codex_line)
    assert err is not None and str(err) == ("f:1: a claude-code record in a file read as "
                                            "codex: one file holds two log formats (type)")


NATIVE_HEAD = "".join(json.dumps(x) + "\n" for x in [
    {"type": "session", "schema": "compaction-audit/1", "session_id": "ours"},
    {"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 5, "text": "hi"}]},
])


@pytest.mark.parametrize("lenient", [False, True])
@pytest.mark.parametrize("where", ["front", "end"])
def test_native_records_with_a_failing_transcript_are_an_error(
        tmp_path: Path, lenient: bool, where: str) -> None:
    # adv10 F3: a native record among the first 50 lines makes the file native; under
    # --lenient every Claude Code line was then a bad record skipped: WARN, exit 0
    body = NATIVE_HEAD + CLAUDE if where == "front" else CLAUDE + NATIVE_HEAD.splitlines()[1]
    result, path = _audit(tmp_path, body + "\n", *(["--lenient"] if lenient else []))
    assert result.exit_code == 2
    line = (2 if where == "front" else 0) + _first_line(CLAUDE, "claude-code")
    assert result.stderr == (f"compaction-audit: {path}:{line}: a claude-code record in a "
                             "file read as native: one file holds two log formats (type)\n")


@pytest.mark.parametrize("lenient", [False, True])
def test_a_native_record_of_an_unknown_type_is_still_a_bad_record(
        tmp_path: Path, lenient: bool) -> None:
    # a type of no format: strict names it, lenient skips and counts it as before
    result, path = _audit(tmp_path, NATIVE_HEAD + json.dumps({"type": "banana"}) + "\n",
                          *(["--lenient"] if lenient else []))
    if lenient:
        assert result.exit_code == 0 and "1 bad record(s) skipped" in result.stdout
    else:
        assert result.exit_code == 2
        assert result.stderr == (f"compaction-audit: {path}:3: unknown record type "
                                 "'banana' (type)\n")


def test_the_error_says_an_openhands_record() -> None:
    """The article follows the format's name (it said "a openhands record")."""
    assert str(detect.two_formats("f", 3, "openhands", "codex")) == (
        "f:3: an openhands record in a file read as codex: one file holds two log formats "
        "(type)")
    assert str(detect.two_formats("f", 3, "codex", "openhands")).startswith("f:3: a codex ")
