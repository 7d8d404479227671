"""``compaction-audit audit``: the main job."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from compaction_audit.commands.common import FailOn, console_for, fail, write_bytes
from compaction_audit.errors import AuditError
from compaction_audit.report.model import Report


class Format(StrEnum):
    """Report formats."""

    text = "text"
    json = "json"


def emit(report: Report, fmt: Format, output: Path | None, single: bool) -> None:
    """Render ``report`` in ``fmt`` to stdout or ``output``."""
    if fmt is Format.json:
        from compaction_audit.report.json_report import render_json

        write_bytes(render_json(report, single), output)
        return
    from compaction_audit.report.terminal import report_renderable

    console = console_for(output)
    console.print(report_renderable(report))
    if output is not None:
        console.file.close()


def audit_command(
    paths: Annotated[list[str], typer.Argument(help="Log files to audit ('-' for stdin).",
                                               show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Report format.")]
    = Format.text,
    output: Annotated[Path | None, typer.Option("--output", "-o",
                                                help="Write the report to this file.")] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Lowest severity that exits 1.")]
    = FailOn.error,
    lenient: Annotated[bool, typer.Option(
        "--lenient", help="Skip bad records (counted and reported) instead of stopping.")]
    = False,
    window: Annotated[int | None, typer.Option(
        help="Compare round t with t-WINDOW for 'fell' and 'rose' [default: 1].")] = None,
    sustain: Annotated[int | None, typer.Option(
        help="Rounds a boundary condition must hold before it fires [default: 1].")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", "-s", metavar="NAME=VALUE",
        help="Override a threshold, e.g. --set raw_ratio_floor=0.2 (see "
             "'compaction-audit thresholds').")] = None,
) -> None:
    """Audit compaction logs: rebuild the per-round series, run every rule, report.

    Exit 0 when no finding reaches --fail-on, 1 when one does, 2 for bad input.
    """
    from compaction_audit.api import audit_paths
    from compaction_audit.settings import Settings, parse_assignments

    try:
        values: dict[str, object] = dict(parse_assignments(set_ or []))
        if window is not None:
            values["window"] = window
        if sustain is not None:
            values["sustain"] = sustain
        settings = Settings().with_values(values)
        report = audit_paths(paths, settings, lenient=lenient)
    except AuditError as exc:
        fail(str(exc))
    if report.errors and len(paths) == 1:
        fail(str(report.errors[0]))
    emit(report, fmt, output, single=len(paths) == 1)
    raise typer.Exit(report.exit_code(fail_on.value))


def thresholds_command() -> None:
    """List every threshold with its default and the seed section it comes from."""
    from rich.table import Table

    from compaction_audit.settings import describe

    table = Table("name", "default", "meaning", "source")
    for s in describe():
        table.add_row(s["name"], str(s["default"]), s["help"], s["source"])
    console_for(None).print(table)
