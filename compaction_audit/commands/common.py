"""Helpers shared by the commands: one-line errors, consoles, option types."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, NoReturn

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


def _width() -> int | None:
    """Columns for a console: ``COLUMNS`` when set, else rich's detection on a
    terminal, else 120 (a pipe or a file has no width of its own)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if sys.stdout.isatty() else 120


def _open_output(output: Path, mode: str) -> IO[Any]:
    """Open ``output`` for writing; an unwritable path is a usage error (exit 2)."""
    try:
        return output.open(mode, encoding=None if "b" in mode else "utf-8")
    except OSError as exc:
        fail(f"{output}: cannot open for writing: {exc.strerror or exc}")


def console_for(output: Path | None) -> Console:
    """A rich console writing to stdout or ``output``.

    Files get no colour; a pipe gets no colour (rich's own detection, which also
    honours ``NO_COLOR``).  Width: see :func:`_width`.
    """
    if output is None:
        return Console(highlight=False, soft_wrap=False, width=_width())
    return Console(file=_open_output(output, "w"), highlight=False, no_color=True,
                   width=_width() or 120, force_terminal=False)


def write_bytes(data: bytes, output: Path | None) -> None:
    """Write ``data`` to stdout or ``output`` (an unwritable path exits 2)."""
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with _open_output(output, "wb") as fh:
        fh.write(data)
