"""The command line: parse options, call the core, pick a renderer, set the exit code."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True)


def main() -> None:
    """Entry point of the ``compaction-audit`` console script."""
    app()
