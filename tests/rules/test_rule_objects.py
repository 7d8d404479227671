"""A lost rule that names several objects ("Do NOT use --no-verify or --force") is
broken by any of them (CA307), each a finding of its own, so a baseline that holds one
still fails a new one (adv112 #3: only the first object was looked for, and a later
``git push --force`` broke the rule unseen, under a baseline and in diff alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.forbids import forbidden_all
from tests.logs import LogWriter, rnd

RULE = "Do NOT use --no-verify or --force when pushing to main."
KEY = "u1#negation:not use --no-verify --force when pushing main"


@pytest.mark.parametrize(("text", "objects"), [
    (RULE, ["--no-verify", "--force"]),
    ("Never use --force, --no-verify, or --amend.", ["--force", "--no-verify", "--amend"]),
    ("Do not run `make deploy` or `make release` here.", ["make deploy", "make release"]),
    ("Never commit *.pyc or build/* files.", ["*.pyc", "build/*"]),
    ("Never use foo_bar nor baz.qux here.", ["foo_bar", "baz.qux"]),
    # adv113 #6: a comma alone lists nothing, and an alternative said to be allowed is
    # no object; nor is a short flag, which every command has
    ("Don't use --force, --force-with-lease is fine.", ["--force"]),
    ("Do not run `make deploy`, `make test` is fine.", ["make deploy"]),
    ("Do not run `pytest -x`, `pytest -q` is what CI uses.", ["pytest -x"]),
    ("Do not use --force or --force-with-lease is fine.", ["--force"]),
    ("Never commit *.pyc, build/* files.", ["*.pyc"]),
    ("Never use --force or -f.", ["--force"]),
    # adv114 #4: the list ends at its "or" item; a comma after it goes on to another
    # clause; allowed, preferred or working alternatives are none; a short flag in a
    # code span is none either
    ("Do NOT use --force or --no-verify, --force-with-lease instead.",
     ["--force", "--no-verify"]),
    ("Never run `npm publish` or `npm version`, `npm test` runs in CI.",
     ["npm publish", "npm version"]),
    ("Never use `pip`, `uv` and `pixi` are fine.", ["pip"]),
    ("Never use `npm` or `pnpm` is preferred.", ["npm"]),
    ("Never use `npm` or `yarn`, `uv` works better.", ["npm", "yarn"]),
    ("Never use `--force` or `-f` when pushing to main.", ["--force"]),
    # adv115 #2, #3, #5: "instead of" allows nothing; a short flag is skipped, the list
    # goes on; a short command is one; ", or" before another clause lists nothing
    ("Do not use --no-verify or --force instead of fixing the failing hook.",
     ["--no-verify", "--force"]),
    ("Never pass `--no-verify`, `--force`, or `-n` to git.", ["--no-verify", "--force"]),
    ("Never use `--force`, `-f`, or `--no-verify` here.", ["--force", "--no-verify"]),
    ("Never run `mkfs` or `dd` against /dev/sda.", ["mkfs", "dd"]),
    ("Never use `git push --force`, or origin/main loses commits.", ["git push --force"]),
    # one object: what follows is no identifier, or not listed with it
    ("Do NOT use --force when pushing.", ["--force"]),
    ("Never use sudo or root here.", ["sudo"]),
    ("Do not run `pytest` or anything else.", ["pytest"]),
    ("Do not run `pytest` and then deploy.", ["pytest"]),
    ("I ran --force or not.", []),
])
def test_the_objects_a_rule_names(text: str, objects: list[str]) -> None:
    assert [o for o, *_ in forbidden_all(text)] == objects


def _span(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def _log(write_log: LogWriter, calls: list[str]) -> Path:
    return write_log([
        rnd(0, spans=[_span("u1", RULE), _span("a1", "Working on the export.", "assistant")]),
        rnd(1, summaries=[{"id": "c1", "tokens": 10, "children": ["u1", "a1"],
                           "text": "Working on the export."}], evicted=["u1", "a1"]),
        *(rnd(2 + i, spans=[_span(f"t{i}", call, "tool_call:Bash")])
          for i, call in enumerate(calls))])


def _ca307(path: Path) -> list[tuple[int, str, str]]:
    return sorted((f.round, f.values["object"], f.entity)
                  for f in audit_session(read_native(str(path))).findings if f.code == "CA307")


def test_each_object_broken_is_a_finding(write_log: LogWriter) -> None:
    path = _log(write_log, ["git commit --no-verify -m wip", "git push --force origin main"])
    assert _ca307(path) == [(2, "--no-verify", KEY), (3, "--force", f"{KEY}#--force")]


def test_an_object_broken_alone_is_found(write_log: LogWriter) -> None:
    path = _log(write_log, ["git push -f origin main"])  # spelled short: --force
    assert _ca307(path) == [(2, "--force", f"{KEY}#--force")]


def test_no_object_broken_no_finding(write_log: LogWriter) -> None:
    assert _ca307(_log(write_log, ["git push origin main"])) == []


def test_a_baseline_holding_one_object_fails_the_other(write_log: LogWriter,
                                                       tmp_path: Path) -> None:
    day1 = _log(write_log, ["git commit --no-verify -m wip"])
    baseline = tmp_path / "baseline.json"
    made = CliRunner().invoke(app, ["baseline", "create", str(day1), "-o", str(baseline)])
    assert made.exit_code == 0, made.output
    day1.write_text(_log(write_log, ["git commit --no-verify -m wip",
                                     "git push --force origin main"]).read_text())
    result = CliRunner().invoke(app, ["audit", "-q", str(day1), "--baseline", str(baseline)])
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("FAIL: 1 error(s)"), result.stdout
