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
