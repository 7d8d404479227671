"""Hostile log text and file names reach no CI runner as a command and no terminal as
a control, in every format, on stdout, on stderr and in -o files (issue 11, items 1, 6
and 9).  The rules checked are those of tests/ci_commands.py, written from the runners'
documentation, not from compaction_audit.report.safe."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compaction_audit.commands.audit import AuditFormat
from compaction_audit.report.safe import (
    GITHUB,
    JSON,
    MAX_TEXT,
    TEXT,
    XML,
    clip,
    neutralize,
    printable,
)
from compaction_audit.report.sarif import plain as sarif_plain
from tests import ci_commands
from tests.gate_app import drift_records, run
from tests.logs import dump, rnd, session, spans

HOSTILE = ("pad " * 28 + "::error title=pwned::owned ::stop-commands::tok ##[add-mask]secret "
           "##[set-output name=x;]y ##vso[task.setvariable variable=v]1 ##teamcity[x]\n"
           "::warning::lf\r::notice::cr \x1b[31mred\x1b[0m \x1b]0;title\x07 "
           "section_start:1:pwn\r\x1b[0Kx \u200e\u200f\u061c\u200b\ufeff\u2028\u2029\u202e"
           "\x85 end")
"""Every attack of issue 11 item 1 and 9 in one string: a long run of words so that a
wrapping renderer puts ``::error`` at the start of a continuation line, both command
forms, Azure and TeamCity prefixes, LF, CR, ANSI and OSC escapes, a GitLab section
marker, the bidi and invisible marks, NEL."""

FILE_NAME = "::error::name ##[add-mask]n\n::warning::x.jsonl"
"""A trace file name that is itself an attack (LF is valid in a POSIX name)."""
BAD_NAME = "##[add-mask]bad\r::error::y.jsonl"
"""An unreadable trace whose name, in the error line, is an attack."""
OWN = {"github"}


def hostile_records() -> list[dict[str, object]]:
    """A session whose id and one summary id are :data:`HOSTILE`: CA201 names it."""
    return [session(session_id=HOSTILE),
            rnd(0, spans=spans(("a", 10), ("b", 10))),
            rnd(1, summaries=[{"id": HOSTILE, "tokens": 5, "children": ["a"]}],
                evicted=["a"])]


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """traces/ with the hostile trace, a drift trace under a hostile name and an
    unreadable trace under another; the working directory; a narrow terminal."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "60")
    (tmp_path / "traces").mkdir()
    dump(hostile_records(), tmp_path / "traces" / "hostile.jsonl")
    dump(drift_records(), tmp_path / "traces" / FILE_NAME)
    (tmp_path / "traces" / BAD_NAME).write_text('{"type": "round", "round": 0}\n{oops\n')
    return tmp_path


def assert_clean(text: str, own: bool = False) -> None:
    assert ci_commands.clean(text, own) == [], text


@pytest.mark.parametrize("fmt", [f.value for f in AuditFormat])
def test_every_format_on_stdout_and_stderr(hostile: Path, fmt: str) -> None:
    result = run("audit", "traces", "--format", fmt, "--jobs", "1")
    assert result.exit_code == 2  # the unreadable trace
    assert "title=pwned" in result.stdout  # the text is shown, made inert
    assert_clean(result.stdout, own=fmt in OWN)
    assert_clean(result.stderr)


@pytest.mark.parametrize("fmt", [f.value for f in AuditFormat])
def test_every_format_in_an_output_file(hostile: Path, fmt: str) -> None:
    out = hostile / f"report.{fmt}"
    result = run("audit", "traces", "--format", fmt, "--jobs", "1", "-o", str(out))
    assert result.exit_code == 2 and result.stdout == ""
    assert_clean(out.read_text(encoding="utf-8"), own=fmt in OWN)


def test_one_line_errors_on_stderr(hostile: Path) -> None:
    result = run("audit", f"traces/{BAD_NAME}")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "cannot" not in result.stderr
    assert_clean(result.stderr)
    undefined = dump([session(), rnd(0, spans=spans(("a", 1))), rnd(1, evicted=[HOSTILE])],
                     hostile / "undefined.jsonl")
    result = run("audit", str(undefined))
    assert result.exit_code == 2 and "is never defined" in result.stderr
    assert result.stderr.count("\n") == 1
    assert_clean(result.stderr)
    lenient = run("audit", str(undefined), "--lenient", "--format", "github")
    assert "skipped record" in lenient.stdout
    assert_clean(lenient.stdout, own=True)


@pytest.mark.parametrize("argv", [
    ["audit", "--fail-on", HOSTILE, "t.jsonl"],
    ["audit", "--format", HOSTILE, "t.jsonl"],
    ["audit", "--format", HOSTILE * 20, "t.jsonl"],  # 6,860 characters typed
    ["audit", "--##[add-mask]secret" + HOSTILE, "t.jsonl"],
    [HOSTILE],
    ["baseline", HOSTILE],
])
def test_usage_errors_echo_what_was_typed_safely(argv: list[str],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """click's usage errors quote the value typed (a CI job may take it from a branch
    name): the console script's own entry point makes them safe (issue 11, class 1)."""
    from compaction_audit.cli import main

    monkeypatch.setattr("sys.argv", ["compaction-audit", *argv])
    with pytest.raises(SystemExit) as stop:
        main()
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""
    assert err.startswith("compaction-audit: ") and err.count("\n") == 1  # one line
    assert "--help'" in err  # where to look next
    assert "\\x23#[add-mask]secret" in err  # the value is named, escaped
    assert_clean(err)
    assert max(len(line) for line in err.split("\n")) < 2 * MAX_TEXT  # bounded (escapes
    # added after the cut at MAX_TEXT characters may lengthen a line a little)


def test_paths_echoed_after_o_are_escaped(hostile: Path) -> None:
    target = hostile / "::error::out ##[add-mask]o\u202e\n.jsonl"
    result = run("convert", "traces/hostile.jsonl", "-o", str(target))
    assert result.exit_code == 0 and target.exists()
    assert "converted" in result.stderr and result.stderr.count("\n") == 1
    assert_clean(result.stderr)
    baseline = hostile / "::error::base\n##[set-output name=b;]x.json"
    result = run("baseline", "create", "traces/hostile.jsonl", "-o", str(baseline))
    assert result.exit_code == 0 and result.stderr.count("\n") == 1
    assert_clean(result.stderr)
    assert_clean(baseline.read_text(encoding="utf-8"))


def test_text_report_wraps_log_text_only_under_our_indent(hostile: Path) -> None:
    """At 60 columns the long hostile message wraps (issue 13, section 2), but every
    physical line holding log text starts with at least two spaces of ours, and a
    continuation line that the runner would trim to ``::error`` is escaped by the
    stream layer."""
    out = run("audit", "traces/hostile.jsonl").stdout
    held = [line for line in out.splitlines() if "pad pad" in line or "title=pwned" in line]
    assert len(held) >= 2  # it wrapped
    assert all(line.startswith("  ") for line in held), held
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert_clean(out)


def test_json_keeps_the_text_exact_and_sarif_junit_parse(hostile: Path) -> None:
    doc = json.loads(run("audit", "traces/hostile.jsonl", "--format", "json").stdout)
    assert doc["session"]["session_id"] == HOSTILE  # escapes decode to the same text
    assert any(HOSTILE in f["message"] for f in doc["findings"])
    sarif = json.loads(run("audit", "traces", "--format", "sarif", "--jobs", "1").stdout)
    # a plain text message: brackets escaped, no embedded link (adv108 #3)
    assert any(sarif_plain(HOSTILE) in r["message"]["text"]
               for r in sarif["runs"][0]["results"])
    root = ET.fromstring(run("audit", "traces", "--format", "junit", "--jobs", "1").stdout)
    texts = [e.text or "" for e in root.iter("failure")]
    assert any("title=pwned" in t for t in texts)
    # JUnit keeps no newline of log text: the file name's LF is shown as \n
    assert {s.get("name") for s in root.iter("testsuite")} >= {
        "traces/::error::name ##[add-mask]n\\n::warning::x.jsonl"}


def test_neutralize_rules() -> None:
    assert neutralize("::error::x") == "\\x3a:error::x"
    assert neutralize("  \t::stop-commands::tok") == "  \t\\x3a:stop-commands::tok"
    assert neutralize("a\r::warning::b\r\n \u3000::c::d") == \
        "a\r\\x3a:warning::b\r\n \u3000\\x3a:c::d"
    assert neutralize("\x1b[31m::error::x") == "\x1b[31m\\x3a:error::x"
    assert neutralize("x ##[add-mask]s ###[y] ##vso[t] ##TeamCity[m]") == \
        "x \\x23#[add-mask]s #\\x23#[y] \\x23#vso[t] \\x23#TeamCity[m]"
    assert neutralize("a :: b ## c # [d]") == "a :: b ## c # [d]"  # not commands
    assert neutralize('  "::x::y" ##[z]', JSON) == '  "::x::y" \\u0023#[z]'
    assert neutralize("::a::b\n##[c]", XML) == "&#58;:a::b\n&#35;#[c]"
    assert neutralize("::error file=a::m ##[add-mask]x", GITHUB) == \
        "::error file=a::m \\x23#[add-mask]x"
    for text in (HOSTILE, "::" * 5, "#" * 5 + "[", "\n::x::\r##[y]"):
        for escapes in (TEXT, JSON, XML):
            assert ci_commands.commands(neutralize(text, escapes)) == []


def test_printable_escapes_invisible_marks_and_bounds_length() -> None:
    assert printable("a\u200eb\u200fc\u061cd\u200be\ufefff\u2028g\u2029h") == \
        "a\\u200eb\\u200fc\\u061cd\\u200be\\ufefff\\u2028g\\u2029h"
    assert printable("bad\udcff\udc1b") == "bad\\xff\\udc1b"
    assert ci_commands.hidden(printable(HOSTILE)) == []
    long = "x" * 5000 + "tail"
    cut = clip(long)
    assert len(cut) == MAX_TEXT and cut.startswith("x" * 900)
    assert cut.endswith("...[5004 chars, sha256 " + __import__("hashlib").sha256(
        long.encode()).hexdigest()[:12] + "]")
    assert clip("y" * MAX_TEXT) == "y" * MAX_TEXT  # the boundary is kept whole
    assert clip(long) != clip("x" * 5000 + "tale")  # the hash tells them apart


def test_long_untrusted_strings_are_bounded_in_every_format(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    huge = "::error::" + "h" * 200_000
    dump([session(session_id=huge), rnd(0, spans=spans(("a", 10), ("b", 10))),
          rnd(1, summaries=[{"id": huge, "tokens": 5, "children": ["a"]}], evicted=["a"])],
         tmp_path / "big.jsonl")
    for fmt in [f.value for f in AuditFormat]:
        out = run("audit", "big.jsonl", "--format", fmt).stdout
        runs = re.findall(f"h{{{MAX_TEXT},}}", out)  # the page's own code has short runs
        assert sum(map(len, runs)) < 5 * MAX_TEXT, fmt
        assert "sha256" in out, fmt
        assert_clean(out, own=fmt in OWN)


NON_UTF8 = os.fsdecode(b"bad\xff\x1b[2J\xe2\x80\xae.jsonl")
"""A file name with an undecodable byte, an ANSI clear-screen and an RLO override."""


@pytest.mark.parametrize("fmt", [f.value for f in AuditFormat])
def test_non_utf8_file_name_in_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           fmt: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    dump(drift_records(), tmp_path / "t" / NON_UTF8)
    dump(drift_records(), tmp_path / "t" / "plain.jsonl")
    result = run("audit", "t", "--format", fmt, "--jobs", "1")
    assert result.exit_code == 1, result.stderr  # findings, not an internal error
    out = result.stdout
    assert "internal error" not in result.stderr
    assert_clean(out, own=fmt in OWN)
    if fmt == "json":
        paths = {s["path"] for s in json.loads(out)["sessions"]}
        assert paths == {"t/plain.jsonl", "t/bad\\xff\x1b[2J\u202e.jsonl"}
    elif fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(out)["runs"][0]["results"]}
        assert uris == {"t/plain.jsonl", "t/bad%FF%1B%5B2J%E2%80%AE.jsonl"}
    else:
        if fmt == "junit":
            ET.fromstring(out)
        assert "bad\\xff\\x1b[2J\\u202e.jsonl" in out.replace("\\[", "[")


def test_non_utf8_file_name_in_a_baseline(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    dump(drift_records(), tmp_path / NON_UTF8)
    result = run("baseline", "create", NON_UTF8, "-o", "b.json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert {e["trace"] for e in doc["findings"]} == {"bad\\xff\x1b[2J\u202e.jsonl"}
    assert_clean(result.stderr)
    again = run("audit", NON_UTF8, "--baseline", "b.json")
    assert again.exit_code == 0, again.stdout  # every finding is in the baseline


@pytest.mark.parametrize("args", [
    ["diff", "traces/hostile.jsonl", f"traces/{FILE_NAME}"],
    ["diff", "traces/hostile.jsonl", f"traces/{FILE_NAME}", "--format", "json"],
    ["trace", "traces/hostile.jsonl", HOSTILE],
    ["trace", "traces/hostile.jsonl", HOSTILE, "--json"],
])
def test_diff_and_trace_outputs(hostile: Path, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code in (0, 1), result.stderr
    assert ("pad pad" if args[0] == "trace" else "hostile.jsonl") in result.stdout
    assert_clean(result.stdout)
    assert_clean(result.stderr)


TOKENS = [":", "::", "#", "##", "[", "]", " ", "\t", "\n", "\r", "\r\n", "\u3000", "\xa0",
          "\x1b[1m", "a", "vso", "teamcity", "error", "add-mask", '"', "<", "&"]


def test_neutralize_on_random_token_strings() -> None:
    """A seeded mutator over the characters the rules turn on: no output line is a
    command, and the JSON and XML escapes give back the same text when parsed."""
    import random

    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 24)))
        for escapes in (TEXT, JSON, XML):
            assert ci_commands.commands(neutralize(text, escapes)) == [], (text, escapes)
        encoded = json.dumps({"k": text}, indent=1)
        assert json.loads(neutralize(encoded, JSON)) == {"k": text}
        if "\x1b" in text:  # not a valid XML 1.0 character (JUnit never holds one)
            continue
        element = ET.Element("e", a=text)
        element.text = text
        parsed = ET.fromstring(neutralize(ET.tostring(element, encoding="unicode"), XML))
        assert (parsed.text or "").replace("\r\n", "\n") == \
            text.replace("\r\n", "\n").replace("\r", "\n")
        assert parsed.get("a") == text


def test_a_panic_below_exception_is_an_internal_error(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A Rust panic in Polars reaches Python as pyo3's PanicException, a BaseException:
    it printed a traceback and exited 1 (a findings code); it is one line and exit 2."""
    import compaction_audit.cli as cli

    class PanicException(BaseException):
        pass

    def panic() -> int:
        raise PanicException("PyObject pointer is null ##[add-mask]x")

    monkeypatch.delenv("COMPACTION_AUDIT_DEBUG", raising=False)
    monkeypatch.setattr(cli, "_invoke", panic)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith("compaction-audit: internal error: PanicException: PyObject")
    assert_clean(err)


@pytest.mark.parametrize(("argv", "line"), [
    (["audit", "t.jsonl", "--fail-on", "bogus"],
     "compaction-audit: Invalid value for '--fail-on': 'bogus' is not one of 'error', 'warning', "
     "'info', 'never'; see 'compaction-audit audit --help'\n"),
    (["simulate", "-o", "x.jsonl", "--rounds", "0"],
     "compaction-audit: Invalid value for --rounds: rounds: value 0 is out of range "
     "(1 to 100,000); see 'compaction-audit simulate --help'\n"),
    # a lower bound says its range too (usertest16 #9: "value -1.0 is out of range")
    (["simulate", "-o", "x.jsonl", "--recency-decay", "-1"],
     "compaction-audit: Invalid value for --recency-decay: recency_decay: value -1.0 is out "
     "of range (a finite number >= 0); see 'compaction-audit simulate --help'\n"),
    (["diff"], "compaction-audit: Missing argument 'BASELINE'; see 'compaction-audit diff "
               "--help'\n"),
    (["audit", "-j"], "compaction-audit: Option '-j' requires an argument; see "
                      "'compaction-audit audit --help'\n"),
])
def test_a_usage_error_is_one_line(argv: list[str], line: str,
                                   monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """README, exit code 2: one line on stderr, the option named (usertest10: click's
    usage, a hint and a blank line came first, and typer's coercion said "Value
    error,")."""
    from compaction_audit.cli import main

    monkeypatch.setattr("sys.argv", ["compaction-audit", *argv])
    with pytest.raises(SystemExit) as stop:
        main()
    out, err = capsys.readouterr()
    # click names the program from pytest's own argv
    program = re.sub(r"; see '.*?compaction-audit ", "; see 'compaction-audit ", err)
    assert (stop.value.code, out, program) == (2, "", line)


def test_a_group_without_a_command_shows_its_help(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`compaction-audit baseline` alone is asking what the group does: its help, not an
    error line."""
    from compaction_audit.cli import main

    monkeypatch.setattr("sys.argv", ["compaction-audit", "baseline"])
    with pytest.raises(SystemExit):
        main()
    err = capsys.readouterr().err
    assert err.startswith("Usage: ") and " baseline [OPTIONS] COMMAND" in err
    assert "create" in err
