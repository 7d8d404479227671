"""Configuration: file discovery, validation, layering, and its effect on the audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction_audit.config import cli_layer, find_config, load_config, read_config, resolve
from compaction_audit.errors import UsageError
from compaction_audit.rules import RULES, Severity
from tests.gate_app import drift_records, run
from tests.logs import dump

PYPROJECT = """\
[project]
name = "demo"

[tool.compaction-audit]
raw-ratio-floor = 0.1
ignore = ["ungrounded-summary"]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with the drift trace in traces/ and the working directory in traces/."""
    (tmp_path / "traces").mkdir()
    dump(drift_records(), tmp_path / "traces" / "drift.jsonl")
    monkeypatch.chdir(tmp_path / "traces")
    return tmp_path


def findings(*args: str) -> tuple[int, list[tuple[str, int, str]]]:
    result = run("audit", "drift.jsonl", "--format", "json", *args)
    doc = json.loads(result.stdout)
    return result.exit_code, [(f["code"], f["round"], f["severity"]) for f in doc["findings"]]


def test_config_file_changes_a_threshold_and_ignores_a_rule(project: Path) -> None:
    code, before = findings()
    assert code == 1
    assert ("CA201", 1, "error") in before and ("CA104", 4, "warning") in before
    (project / "pyproject.toml").write_text(PYPROJECT)
    code, after = findings()
    # raw_ratio 0.143 is no longer under the floor, and ungrounded-summary does not run
    assert (code, after) == (0, [("CA105", 4, "info")])
    doc = json.loads(run("audit", "drift.jsonl", "--format", "json").stdout)
    assert doc["settings"]["raw_ratio_floor"] == 0.1


def test_config_show_names_the_file_and_each_source(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT)
    result = run("config", "show", "--set", "window=2", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["config_file"] == str(project / "pyproject.toml")
    options = {o["key"]: (o["value"], o["source"]) for o in doc["options"]}
    file_source = f"{project / 'pyproject.toml'} [tool.compaction-audit]"
    assert options["raw-ratio-floor"] == (0.1, file_source)
    assert options["ignore"] == (["ungrounded-summary"], file_source)
    assert options["window"] == (2, "command line")
    assert options["sustain"] == (1, "default")
    assert options["fail-on"] == ("error", "default")
    assert "CA201" not in doc["rules"] and "CA101" in doc["rules"]
    table = run("config", "show").stdout
    assert f"config file: {project / 'pyproject.toml'}" in table


def test_command_line_wins_over_the_file(project: Path) -> None:
    (project / "compaction-audit.toml").write_text(
        'raw-ratio-floor = 0.1\nfail-on = "info"\nselect = ["CA1"]\n')
    code, found = findings()
    assert (code, found) == (1, [("CA105", 4, "info")])  # fail-on info from the file
    code, found = findings("--fail-on", "error", "--set", "raw_ratio_floor=0.25",
                           "--select", "CA104,ungrounded-summary")
    assert code == 1
    # CA201 at rounds 1 to 4 is one episode (issue 14, section 3); --all lists each
    assert sorted(found) == [("CA104", 4, "warning"), ("CA201", 1, "error")]
    _, every = findings("--fail-on", "error", "--set", "raw_ratio_floor=0.25",
                        "--select", "CA104,ungrounded-summary", "--all")
    assert sorted(every) == [("CA104", 4, "warning"), ("CA201", 1, "error"),
                             ("CA201", 2, "error"), ("CA201", 3, "error"),
                             ("CA201", 4, "error")]


def test_severity_overrides_from_file_and_command_line(project: Path) -> None:
    (project / "compaction-audit.toml").write_text(
        'ignore = ["CA2"]\n[severity]\ncompaction-drift = "error"\nCA105 = "warning"\n')
    code, found = findings()
    assert (code, found) == (1, [("CA104", 4, "error"), ("CA105", 4, "warning")])
    code, found = findings("--severity", "CA104=info")
    assert (code, found) == (0, [("CA104", 4, "info"), ("CA105", 4, "warning")])


def test_isolated_and_explicit_config(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT)
    assert findings("--isolated")[0] == 1
    other = tmp_path / "elsewhere.toml"
    other.write_text('ignore = ["ALL"]\nextend-select = ["CA104"]\n')
    assert findings("--config", str(other)) == (0, [("CA104", 4, "warning")])


@pytest.mark.parametrize(("text", "message"), [
    ("raw-ratio-flor = 0.2\n", "unknown key 'raw-ratio-flor' (did you mean 'raw-ratio-floor'?)"),
    ('raw-ratio-floor = "low"\n', "raw-ratio-floor must be a number, got 'low'"),
    ("raw-ratio-floor = 1.5\n", "raw_ratio_floor must be <= 0.999, got 1.5"),
    ("window = 0\n", "window must be >= 1, got 0"),
    ('fail-on = "sometimes"\n', "fail-on must be one of error, warning, info, never"),
    ('select = ["CA9"]\n', "select: 'CA9' matches no rule"),
    ('ignore = "CA101"\n', "ignore must be a list"),
    ('[severity]\nsalience-inverson = "info"\n', "unknown rule 'salience-inverson'"),
    ('[severity]\nCA101 = "fatal"\n', "CA101 must be error, warning or info, got 'fatal'"),
    ("raw-ratio-floor = \n", "invalid TOML"),
    ("raw-ratio-floor = 0.2\nraw_ratio_floor = 0.3\n", "raw-ratio-floor is given twice"),
    ('severity = {salience-inversion = "error", CA101 = "info"}\n',  # adv62
     "severity: salience-inversion is given twice ('salience-inversion' and 'CA101')"),
    ('[tool.compaction-audit]\nfail-on = "warning"\n',  # copied from a pyproject.toml
     "unknown key 'tool' (in compaction-audit.toml the keys go at the top level, "
     "without [tool.compaction-audit])"),
    ('[tool.other]\nx = 1\n', "unknown key 'tool'\n"),
])
def test_bad_config_is_a_clear_usage_error(project: Path, text: str, message: str) -> None:
    (project / "compaction-audit.toml").write_text(text)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 2
    assert result.stderr.startswith("compaction-audit: ")
    assert message in result.stderr
    assert "compaction-audit.toml" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("data", "message"), [
    (b"\xef\xbb\xbfwindow = 2\n", "invalid TOML: Invalid statement (at line 1, column 1) "
     "(the file starts with a byte order mark, which TOML does not allow)"),
    (b"window = 2\rsustain = 1\r", "(lines end with a lone CR, classic Mac line endings: "
     "TOML needs LF)"),
    (b"window = 2\n# \xff\n", "invalid TOML: not UTF-8 (byte 0xff at line 2)"),
    (b"window = 1979-05-27T07:32:00Z\n", "window must be a number, got a date-time"),
    (b"window = [1, 2]\n", "window must be a number, got an array"),
    # adv28 F7: the other keys and TOML types too
    (b"window = true\n", "window must be a number, got true"),
    (b"raw-ratio-floor = 07:32:00\n", "raw-ratio-floor must be a number, got a time"),
    (b"fail-on = 1979-05-27\n", "fail-on must be one of error, warning, info, never, "
     "got a date"),
    (b"[severity]\nCA101 = {a = 1}\n", "CA101 must be error, warning or info, got a table"),
])
def test_a_config_file_s_own_fault_is_said_in_its_terms(project: Path, data: bytes,
                                                        message: str) -> None:
    # adv26 E5: a BOM, CR-only lines and a stray byte gave tomllib's or Python's
    # words ("Invalid statement", "'utf-8' codec can't decode byte 0xff in position
    # 11"), and a date-time threshold Python's repr
    (project / "compaction-audit.toml").write_bytes(data)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("compaction-audit: ") and "compaction-audit.toml" in line
    assert line.endswith(message)


def test_a_misspelt_threshold_in_set_gets_the_config_file_s_hint(project: Path) -> None:
    # ux7: the same typo in a config file said "did you mean", in --set it did not
    result = run("audit", "drift.jsonl", "--set", "raw_ratio_flor=0.2")
    assert result.exit_code == 2
    assert result.stderr.startswith("compaction-audit: unknown threshold 'raw_ratio_flor' "
                                    "(did you mean 'raw_ratio_floor'? known: depth_pin_rounds, ")
    assert "did you mean" not in run("audit", "drift.jsonl", "--set", "zzz=1").stderr


def test_bad_command_line_selection_is_a_usage_error(project: Path) -> None:
    for args in (["--select", "nope"], ["--severity", "CA101"], ["--severity", "CA101=big"],
                 ["--config", "missing.toml"]):
        result = run("audit", "drift.jsonl", *args)
        assert result.exit_code == 2, args


def test_find_config_walks_up_and_prefers_the_tool_file(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    found = find_config(deep)  # nothing in the project (a file above tmp_path may exist)
    assert found is None or not found.is_relative_to(tmp_path)
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no table
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    assert find_config(deep) == tmp_path / "pyproject.toml"
    (tmp_path / "a" / "compaction-audit.toml").write_text("sustain = 2\n")
    assert find_config(deep) == tmp_path / "a" / "compaction-audit.toml"
    (tmp_path / "a" / "pyproject.toml").write_text(PYPROJECT)
    assert find_config(tmp_path / "a") == tmp_path / "a" / "compaction-audit.toml"
    layer, path = load_config(cwd=deep)
    assert path == tmp_path / "a" / "compaction-audit.toml"
    assert layer is not None and layer.values == {"sustain": 2}
    assert load_config(isolated=True, cwd=deep) == (None, None)


def test_a_named_pyproject_needs_the_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[project]\nname = 'x'\n")
    with pytest.raises(UsageError, match=r"no \[tool.compaction-audit\] table"):
        read_config(path, tmp_path)


def test_rule_selection_layers_like_ruff(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('select = ["CA1"]\nignore = ["CA105"]\nextend-select = ["CA201"]\n')
    file_layer = read_config(path, tmp_path)
    eff = resolve([file_layer])
    assert [r.code for r in eff.rules] == ["CA101", "CA102", "CA103", "CA104", "CA201"]
    # the command line's select replaces the set; its ignore applies on top
    eff = resolve([file_layer, cli_layer({}, select=["CA2"], ignore=["silent-drop"])])
    assert [r.code for r in eff.rules] == sorted(c for c in RULES
                                                 if c.startswith("CA2") and c != "CA202")
    eff = resolve([file_layer, cli_layer({}, severity=["ca101=warning"], fail_on="never")])
    assert eff.severity == {"salience-inversion": Severity.WARNING}
    assert eff.fail_on == "never" and eff.sources["fail-on"] == "command line"
    assert eff.sources["select"] == "t.toml"



def _doc_example(doc: str) -> tuple[str, list[str]]:
    """(the TOML, the output lines) of the ``config show`` example in
    docs/configuration.md: the TOML block just before the console block."""
    head, _, rest = doc.partition("$ compaction-audit config show\n")
    toml = head.rsplit("```toml\n", 1)[1].split("```", 1)[0]
    return toml, rest.split("```", 1)[0].splitlines()


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("│ \n").split("│")]


def test_the_config_show_example_in_the_docs_is_current(project: Path) -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(
        encoding="utf-8")
    toml, lines = _doc_example(doc)
    (project / "traces" / "pyproject.toml").write_text(toml)
    out = run("config", "show").stdout
    rows = [_cells(line) for line in out.splitlines() if line.startswith("│")]
    assert lines[0] == "config file: pyproject.toml" and out.startswith(lines[0] + "\n")
    shown = [line for line in lines if line.startswith("│")]
    assert len(shown) >= 5
    assert [_cells(line) for line in shown] == rows[:len(shown)]
    rules_doc = " ".join(line for line in lines if line.startswith(("rules run:", " ")))
    rules_out = out.split("\n┏", 1)[0].split("\n", 1)[1]
    assert rules_doc.split() == rules_out.split()


@pytest.mark.parametrize(("args", "message"), [
    (["--severity", "CA101=info", "--severity", "salience-inversion=error"],
     "--severity: salience-inversion is given twice ('CA101' and 'salience-inversion')"),
    (["--set", "window=3", "--window", "5"],
     "--window and --set window=... both set window: give one"),
    (["--set", "raw_ratio_floor=0.2", "--set", "raw-ratio-floor=0.3"],
     "--set: raw_ratio_floor is given twice ('raw_ratio_floor=0.2' and "
     "'raw-ratio-floor=0.3')")])
def test_a_setting_given_twice_on_the_command_line_is_refused(
        project: Path, args: list[str], message: str) -> None:
    """adv62: the last of two values won without a word; one of each is fine."""
    result = run("audit", "drift.jsonl", *args)
    assert (result.exit_code, result.stderr) == (
        2, f"compaction-audit: {message}\n")
    assert run("audit", "drift.jsonl", *args[:2]).exit_code == 1
    assert run("audit", "drift.jsonl", *args[2:]).exit_code == 1


@pytest.mark.parametrize(("value", "message"), [
    ("window=1_0", "window must be an integer in ASCII digits, got '1_0'"),
    ("sustain=\u0663", "sustain must be an integer in ASCII digits, got '\u0663'"),
    ("raw_ratio_floor=0_3", "raw_ratio_floor must be a number in ASCII digits, got '0_3'"),
    ("raw_ratio_floor=\u0660.\u0663",
     "raw_ratio_floor must be a number in ASCII digits, got '\u0660.\u0663'"),
    ("window=1e1", "window must be an integer in ASCII digits, got '1e1'"),
])
def test_a_number_in_set_is_written_in_ascii_digits(project: Path, value: str,
                                                    message: str) -> None:
    """adv80 #1: Python's int and float read "1_0" as 10 and Arabic-Indic digits as
    theirs; "0_3" was refused as "must be <= 0.999", a number nobody typed."""
    result = run("audit", "drift.jsonl", "--set", value)
    assert (result.exit_code, result.stderr) == (2, f"compaction-audit: {message}\n")


def test_numbers_in_set_as_people_write_them() -> None:
    from compaction_audit.settings import Settings

    got = Settings().with_values({"window": " 12", "sustain": "+3",
                                  "raw_ratio_floor": ".3"})
    assert (got.window, got.sustain, got.raw_ratio_floor) == (12, 3, 0.3)
    assert Settings().with_values({"raw_ratio_floor": "3e-1"}).raw_ratio_floor == 0.3
    with pytest.raises(UsageError, match="must be a finite number, got 'nan'"):
        Settings().with_values({"raw_ratio_floor": "nan"})


def test_a_report_with_a_baseline_names_the_config_file(project: Path) -> None:
    """usertest32 #1: with --baseline every format said "config none" (JSON null)
    while the configuration decided the exit code."""
    (project / "pyproject.toml").write_text(PYPROJECT)
    shown = str(project / "pyproject.toml")
    assert run("baseline", "create", "drift.jsonl", "-o", "base.json").exit_code == 0
    for args in ([], ["--baseline", "base.json"]):
        doc = json.loads(run("audit", "drift.jsonl", "--format", "json", *args).stdout)
        assert doc["config"] == shown, args
        text = run("audit", "drift.jsonl", *args).stdout
        assert f"  config     {shown}\n" in text, args
        sarif = json.loads(run("audit", "drift.jsonl", "--format", "sarif", *args).stdout)
        assert sarif["runs"][0]["invocations"][0]["properties"] == {"config": shown}, args


def test_config_show_keeps_a_long_key_whole_at_80_columns(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # usertest34 #12: "severity.silent-discrimi…" at 80 columns
    monkeypatch.setenv("COLUMNS", "80")
    (project / "traces" / "compaction-audit.toml").write_text(
        '[severity]\nsilent-discriminating-fold = "warning"\n[[suppress]]\n'
        'rule = "CA301"\ndiscriminator = "*45000*"\nreason = "a known loss of the test"\n')
    out = run("config", "show").stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    # too narrow for the table with that key whole: one entry per key (usertest35 #3:
    # the key was folded mid-word across two rows)
    assert "  severity.silent-discriminating-fold: warning  compaction-audit.toml" in (
        out.splitlines())
    assert not any(line.startswith("│") for line in out.splitlines())
    monkeypatch.setenv("COLUMNS", "100")  # wide enough: the table, the key on one row
    wide = run("config", "show").stdout
    rows = [_cells(line) for line in wide.splitlines() if line.startswith("│")]
    assert ["severity.silent-discriminating-fold", "warning", "compaction-audit.toml"] in rows


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--window", "1_0", "window must be an integer in ASCII digits, got '1_0'"),
    ("--sustain", "1_0", "sustain must be an integer in ASCII digits, got '1_0'"),
    ("--sustain", "\u0663", "sustain must be an integer in ASCII digits, got '\u0663'"),
    ("--window", "0", "window must be >= 1, got '0'"),
])
def test_window_and_sustain_are_read_as_set_reads_them(project: Path, option: str,
                                                       value: str, message: str) -> None:
    """adv96 #6: typer read "--sustain 1_0" as 10, where --set sustain=1_0 is refused."""
    result = run("audit", "drift.jsonl", option, value)
    assert (result.exit_code, result.stderr) == (2, f"compaction-audit: {message}\n")
    assert run("audit", "drift.jsonl", option, "3").exit_code in (0, 1)


def test_a_number_of_thousands_of_digits_is_past_the_bound(project: Path) -> None:
    """adv96 #8: 5,000 ASCII digits read "must be an integer in ASCII digits"."""
    result = run("audit", "drift.jsonl", "--set", "window=" + "9" * 5000)
    assert result.exit_code == 2
    assert result.stderr.startswith("compaction-audit: window must be <= 1e+07, got '999")
    result = run("audit", "drift.jsonl", "--sustain", "-" + "9" * 40)
    assert result.stderr.startswith("compaction-audit: sustain must be >= 1, got '-999")
