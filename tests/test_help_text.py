"""Every command's --help is plain text: no reStructuredText markup of the docstrings
it is made from (ux5 F11: "FILE (``-``: standard output)" in 'baseline create')."""

from __future__ import annotations

from collections.abc import Iterator

import click
import typer.main

from compaction_audit.cli import app


def helps(command: click.Command, name: str) -> Iterator[tuple[str, str]]:
    yield name, command.get_help(click.Context(command, info_name=name))
    for sub in getattr(command, "commands", {}).values():
        yield from helps(sub, f"{name} {sub.name}")


def test_no_help_shows_rest_markup() -> None:
    texts = dict(helps(typer.main.get_command(app), "compaction-audit"))
    assert "compaction-audit baseline create" in texts
    assert {name: [ln for ln in text.splitlines() if "``" in ln or ":func:" in ln
                   or ":class:" in ln] for name, text in texts.items()
            if "``" in text or ":func:" in text or ":class:" in text} == {}
    assert "--output FILE ('-': standard output)" in " ".join(
        texts["compaction-audit baseline create"].split())


def commands(command: click.Command, name: str) -> Iterator[tuple[str, click.Command]]:
    yield name, command
    for sub in getattr(command, "commands", {}).values():
        yield from commands(sub, f"{name} {sub.name}")


def test_an_options_help_names_only_options_of_its_own_command() -> None:
    """usertest11: 'baseline create --help' said "with --engine ray" under -j, an option
    it shares with 'audit'; 'baseline create' has no --engine."""
    import re
    wrong = {}
    # 'config show' previews audit's options: its --fail-on says what audit's --lenient
    # counts as
    elsewhere = {"compaction-audit config show --fail-on": {"--lenient"}}
    for name, command in commands(typer.main.get_command(app), "compaction-audit"):
        own = {opt for p in command.params for opt in [*p.opts, *p.secondary_opts]}
        for p in command.params:
            if p.param_type_name != "option":  # an argument's example value (--force)
                continue
            own |= elsewhere.get(f"{name} {p.opts[0]}", set())
            named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", getattr(p, "help", "") or ""))
            if named - own:
                wrong[f"{name} {p.opts[0]}"] = sorted(named - own)
    assert wrong == {}
