"""Helpers shared by the commands: one-line errors, consoles, option types."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console

from compaction_audit.report.safe import printable


class FailOn(StrEnum):
    """Lowest severity that makes the exit code 1."""

    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


def fail(message: str) -> NoReturn:
    """Print a one-line error to stderr and exit 2."""
    sys.stderr.write(f"compaction-audit: {printable(message)}\n")
    raise typer.Exit(2)


def console_for(output: Path | None) -> Console:
    """A rich console writing to stdout or ``output``.

    Files get no colour; a pipe gets no colour and 120 columns (rich's own detection,
    which also honours ``NO_COLOR``).
    """
    if output is None:
        width = None if sys.stdout.isatty() else 120
        return Console(highlight=False, soft_wrap=False, width=width)
    return Console(file=output.open("w", encoding="utf-8"), highlight=False, no_color=True,
                   width=120, force_terminal=False)


def write_bytes(data: bytes, output: Path | None) -> None:
    """Write ``data`` to stdout or ``output``."""
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        output.write_bytes(data)
