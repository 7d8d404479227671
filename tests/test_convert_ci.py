"""``convert`` output carries no CI workflow command and no invisible character, on
stdout and in -o files (plain and compressed), for Claude Code and Codex transcripts
whose text is hostile (issue 11, item 1; docs/security.md "What is neutralized
where"); the written log is valid JSON Lines that decodes to the same text.  Checked
with tests/ci_commands.py, which applies the runners' rules independently of
compaction_audit.report.safe."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from compaction_audit.io.writer import LogWriter, Span
from tests import ci_commands
from tests.gate_app import run
from tests.test_ci_injection import HOSTILE

TINY = "hi ##[add-mask]SECRET \u2028 \u202e \u0085 \ufeff ::error::x"
"""The adversarial tester's repro: the legacy command and four invisible characters."""


def claude_code(text: str) -> list[dict[str, Any]]:
    """A Claude Code transcript of one user turn with ``text``, an assistant reply and
    a tool result quoting it."""
    sid = "s"
    return [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid,
         "message": {"role": "user", "content": text}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid,
         "message": {"role": "assistant", "id": "m1", "content": [
             {"type": "text", "text": text},
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": text}}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": sid,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": text}]}},
    ]


def codex(text: str) -> list[dict[str, Any]]:
    """A Codex rollout of one user turn with ``text`` and an assistant reply."""
    return [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}},
        {"timestamp": "t", "type": "event_msg", "payload": {
            "type": "user_message", "message": text}},
        {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}},
    ]


SOURCES = {"claude-code": claude_code, "codex": codex}


def write_source(tmp_path: Path, fmt: str, text: str) -> Path:
    path = tmp_path / f"{fmt}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in SOURCES[fmt](text)),
                    encoding="utf-8")
    return path


def texts(output: str) -> list[str]:
    """Every span and summary text of a converted log, read as JSON Lines (split at
    LF only, as JSON Lines are)."""
    found = []
    for line in output.split("\n"):
        if line:
            record = json.loads(line)
            for item in record.get("spans", []) + record.get("summaries", []):
                if "text" in item:
                    found.append(item["text"])
    return found


def assert_clean_and_exact(output: str, text: str) -> None:
    assert ci_commands.clean(output) == [], output
    assert text in texts(output)  # the escapes decode to the very same text


@pytest.mark.parametrize("fmt", sorted(SOURCES))
@pytest.mark.parametrize("text", [TINY, HOSTILE], ids=["tiny", "hostile"])
def test_convert_to_stdout(tmp_path: Path, fmt: str, text: str) -> None:
    source = write_source(tmp_path, fmt, text)
    result = run("convert", str(source), "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert_clean_and_exact(result.stdout, text)
    assert ci_commands.clean(result.stderr) == []


@pytest.mark.parametrize("fmt", sorted(SOURCES))
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_convert_to_a_file(tmp_path: Path, fmt: str, suffix: str) -> None:
    source = write_source(tmp_path, fmt, HOSTILE)
    out = tmp_path / f"out{suffix}"
    result = run("convert", str(source), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    data = out.read_bytes()
    if suffix.endswith(".gz"):
        data = gzip.decompress(data)
    elif suffix.endswith(".zst"):
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    assert_clean_and_exact(data.decode("utf-8"), HOSTILE)
    audited = run("audit", str(out), "--format", "json")
    assert audited.exit_code in (0, 1), audited.stderr


def test_log_writer_escapes_what_it_writes(tmp_path: Path) -> None:
    """The library writer, used by convert and simulate, is where it happens: a log an
    agent writes with it is as safe."""
    path = tmp_path / "w.jsonl"
    with LogWriter(str(path)) as log:
        log.session(session_id=TINY)
        log.round(0, spans=[Span(TINY, 3, text=HOSTILE)])
    written = path.read_text(encoding="utf-8")
    assert ci_commands.clean(written) == [], written
    assert "\\u0023#[add-mask]" in written and "\\u2028" in written and "\\u0085" in written
    records = [json.loads(line) for line in written.split("\n") if line]
    assert records[0]["session_id"] == TINY
    assert records[1]["spans"][0] == {"id": TINY, "tokens": 3, "text": HOSTILE}
