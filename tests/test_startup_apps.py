"""The app of one command (``cli.app_for``, issue 14, item 4) answers as the whole app
does: the same help, the same usage errors, the same exit codes, for every command and
command group; and the command line builds only the command it runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from compaction_audit import cli
from tests.logs import SAMPLES

RUNS = [
    ["--help"], ["bogus-option-xyz"], ["--nonsense"], ["--version"],
    ["--format", "nope"], ["--frobnicate"],
]
"""Arguments after the command's name: help, a stray argument, an unknown option, the
root's option in the wrong place, a bad choice, another unknown option."""


def _subcommands(name: str) -> list[list[str]]:
    group = cli.COMMANDS[name]
    if not hasattr(group, "registered_commands"):
        return [[]]
    names = [c.name for c in group.registered_commands if c.name]  # type: ignore[union-attr]
    return [[], *([n] for n in names)]


CASES = [(name, [*sub, *run]) for name in cli.COMMANDS for sub in _subcommands(name)
         for run in RUNS]


@pytest.mark.parametrize(("name", "rest"), CASES)
def test_the_app_of_one_command_answers_as_the_whole_app(name: str, rest: list[str]) -> None:
    args = [name, *rest]
    one = cli.app_for(args)
    assert one is not cli.app
    assert [c.name for c in one.registered_commands] + \
        [g.name for g in one.registered_groups] == [name]
    whole = CliRunner().invoke(cli.app, args, prog_name="compaction-audit")
    alone = CliRunner().invoke(one, args, prog_name="compaction-audit")
    assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    assert whole.output  # the comparison saw what was printed


def test_an_audit_gives_the_same_report_through_the_app_of_its_command() -> None:
    args = ["audit", str(SAMPLES / "handwritten.jsonl"), "-f", "json", "--all"]
    whole = CliRunner().invoke(cli.app, args, prog_name="compaction-audit")
    alone = CliRunner().invoke(cli.app_for(args), args, prog_name="compaction-audit")
    assert whole.exit_code == 1 and '"findings"' in whole.output
    assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["audti", "x"],
                                  ["--version", "rules"]])
def test_no_command_or_a_misspelt_one_gets_the_whole_app(args: list[str]) -> None:
    assert cli.app_for(args) is cli.app
