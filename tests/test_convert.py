"""``compaction-audit convert``: converted logs audit like the originals; exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.commands.convert import convert, convert_command
from compaction_audit.errors import LogError, UsageError
from compaction_audit.io.native import read_native
from compaction_audit.report.model import SessionReport

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "adapters"
CORPUS = ROOT.parent / "shared" / "corpus"
CORPUS_FILES = ["claude-code/agentlogs-manual-compact.jsonl",
                "claude-code/spotter-auto-compact.jsonl",
                "codex/synthetic-local-compaction.jsonl",
                "codex/synthetic-remote-compaction.jsonl"]
CODEX_FILE = FIXTURES / "codex-local.jsonl"

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.callback()
def _root() -> None:
    """A root, so that ``convert`` is a subcommand as in the real CLI."""


app.command("convert")(convert_command)
RUNNER = CliRunner()


def run(*args: str, input: bytes | None = None) -> Any:
    return RUNNER.invoke(app, ["convert", *args], input=input)


def corpus(name: str) -> Path:
    path = CORPUS / name
    if not path.exists():
        pytest.skip(f"corpus file {name} not available")
    return path


def findings(report: SessionReport, named: str = "") -> list[tuple[Any, ...]]:
    """Each finding's rule, severity, round and message; ``named``: the file the
    converted trace's fact lines count in, dropped from them ("line 660 of X")."""
    return [(f.rule, f.code, f.severity, f.round,
             f.message.replace(f" of {named}", "") if named else f.message)
            for f in report.findings]


LINE_KEYS = {"span_line", "span_file", "reread_file", "answered_file", "asked_again_file"}


def without_lines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows without ``line``, and their ``lost`` entries without ``span_line`` and
    the files lines count in."""
    return [{k: ([{i: w for i, w in d.items() if i not in LINE_KEYS} for d in v]
                 if k == "lost" else v) for k, v in row.items() if k != "line"}
            for row in rows]


def assert_audits_alike(original: Path, converted: Path) -> None:
    """Same findings, series and compactions; only line numbers may differ (a fact's
    line stays the original's, which the converted trace names)."""
    a, b = api.audit(str(original)), api.audit(str(converted))
    named = b.header.extra.get("span_line_file")
    assert named in (a.header.extra.get("span_line_file"), original.name)
    assert findings(a, named) == findings(b, named)
    assert a.series.drop("line").equals(b.series.drop("line"))
    assert without_lines(a.compactions) == without_lines(b.compactions)
    assert a.header.session_id == b.header.session_id


def check_conversion(source: Path, tmp_path: Path, suffix: str = ".jsonl") -> Path:
    out = tmp_path / f"{source.stem}.converted{suffix}"
    done = convert(str(source), str(out))
    assert done.records == done.rounds + 1  # the session record, then the rounds
    assert_audits_alike(source, out)
    assert read_native(str(out)).header.extra["source_format"] == done.format
    return out


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_files_convert_to_logs_that_audit_alike(name: str, tmp_path: Path) -> None:
    check_conversion(corpus(name), tmp_path, ".jsonl.zst")


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name)
def test_fixtures_convert_to_logs_that_audit_alike(path: Path, tmp_path: Path) -> None:
    check_conversion(path, tmp_path)


def test_compactions_are_kept_and_reported_from_the_converted_file(tmp_path: Path) -> None:
    out = check_conversion(CODEX_FILE, tmp_path)
    original = api.audit(str(CODEX_FILE)).compactions
    converted = api.audit(str(out)).compactions
    assert converted and len(converted) == len(original)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert [c["line"] for c in converted] == [i + 1 for i, r in enumerate(records)
                                              if "compaction" in r]


def test_a_native_log_is_rewritten_and_checked(tmp_path: Path) -> None:
    source = tmp_path / "native.jsonl"
    source.write_text('\n{"type":"round","round":0,"spans":[{"id":"a","tokens":3}]}\n\n'
                      '{"type": "round", "round": 1, "evicted": ["a"]}\n')
    out = tmp_path / "out.jsonl"
    assert convert(str(source), str(out)) == ("native", 2, 2)
    assert out.read_text() == ('{"type":"round","round":0,"spans":[{"id":"a","tokens":3}]}\n'
                               '{"type":"round","round":1,"evicted":["a"]}\n')
    assert_audits_alike(source, out)


def test_forced_format_gives_the_same_output_as_detection(tmp_path: Path) -> None:
    detected, forced = tmp_path / "d.jsonl", tmp_path / "f.jsonl"
    convert(str(CODEX_FILE), str(detected))
    convert(str(CODEX_FILE), str(forced), "codex")
    assert detected.read_bytes() == forced.read_bytes()
    with pytest.raises(UsageError):
        convert(str(CODEX_FILE), str(forced), "gemini")


def test_a_bad_record_names_the_input_line_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text('{"type":"round","round":0,"spans":[{"id":"a","tokens":3}]}\n\n'
                      '{"type":"round","round":1,"summaries":[{"id":"s","tokens":1,'
                      '"children":["zz"]}]}\n')
    out = tmp_path / "out.jsonl.gz"
    with pytest.raises(LogError) as caught:
        convert(str(source), str(out))
    assert (caught.value.path, caught.value.line) == (str(source), 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"]


# -- the command: exit codes and messages ---------------------------------------------------

def test_command_converts_and_says_what_it_did(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl.zst"
    result = run(str(CODEX_FILE), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert "(codex)" in result.stderr and "rounds" in result.stderr
    assert_audits_alike(CODEX_FILE, out)


def test_a_folder_is_named_as_one_with_what_to_give_instead(tmp_path: Path) -> None:
    # audit takes folders; convert reads one log: the error says so, not the OS's
    # "Is a directory", and nothing is written
    (tmp_path / "task").mkdir()
    out = tmp_path / "out.jsonl"
    result = run(str(tmp_path / "task"), "-o", str(out))
    assert result.exit_code == 2
    assert result.stderr == (f"compaction-audit: {tmp_path / 'task'}: is a folder: convert "
                             "reads one log file (of a Cline task, its messages file); "
                             "'audit' takes folders\n")
    assert not out.exists()


def test_a_name_too_long_to_look_up_is_the_open_error_not_an_internal_one(
        tmp_path: Path) -> None:
    # telling a folder apart must not turn the OS's error into "internal error"
    name = str(tmp_path / ("x" * 300))
    result = run(name, "-o", str(tmp_path / "out.jsonl"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"compaction-audit: {name}: cannot open: ")
    assert "internal error" not in result.stderr


def test_command_reads_stdin_and_writes_stdout(tmp_path: Path) -> None:
    result = run("-", "-o", "-", input=CODEX_FILE.read_bytes())
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out.jsonl"
    out.write_bytes(result.stdout_bytes)
    assert_audits_alike(CODEX_FILE, out)


@pytest.mark.parametrize(("content", "args"), [
    (None, ["--from", "codex"]),                      # input file missing
    (b"not json at all\n", []),                       # unrecognized format
    (b'{"type":"round","round":0}\n{"type":"round","round":0}\n', []),  # invalid record
    (b'{"uuid":"x","type":"user","message":"hi"}\n', ["--from", "claude-code"]),  # adapter
    (b'{"uuid":"x","type":"user","message":{"role":"user","content":"hi"}', []),  # truncated
    # adv103 #4: a native line that is no object was an internal error
    (b'{"type":"session","schema":"compaction-audit/1"}\n5\n', []),
    (b'{"type":"session","schema":"compaction-audit/1"}\n[]\n', []),
    (b'[]', ["--from", "native"]),
])
def test_command_bad_input_is_one_line_and_exit_2(tmp_path: Path, content: bytes | None,
                                                   args: list[str]) -> None:
    source = tmp_path / "in.jsonl"
    if content is not None:
        source.write_bytes(content)
    result = run(str(source), "-o", str(tmp_path / "out.jsonl"), *args)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("compaction-audit: ") and result.stderr.count("\n") == 1
    assert str(source) in result.stderr and "internal error" not in result.stderr
    assert not (tmp_path / "out.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == (["in.jsonl"] if content else [])


def test_command_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run(str(CODEX_FILE)).exit_code == 2  # -o is required
    assert run(str(CODEX_FILE), "-o", str(tmp_path / "o"), "--from", "gemini").exit_code == 2
    unwritable = run(str(CODEX_FILE), "-o", str(tmp_path / "no" / "o.jsonl"))
    assert unwritable.exit_code == 2
    assert "cannot open for writing" in unwritable.stderr
    assert str(tmp_path / "no" / "o.jsonl") in unwritable.stderr


def test_help_points_to_the_mapping() -> None:
    result = RUNNER.invoke(app, ["convert", "--help"])
    assert result.exit_code == 0
    assert "docs/adapters.md" in result.stdout
