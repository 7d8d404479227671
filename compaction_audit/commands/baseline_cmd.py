"""``compaction-audit baseline create``: record today's findings for ``audit --baseline``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from compaction_audit.commands.audit import (
    ConfigOpt,
    ExcludeOpt,
    ExtendSelectOpt,
    IgnoreOpt,
    IsolatedOpt,
    JobsOpt,
    LenientOpt,
    SelectOpt,
    SetOpt,
    SeverityOpt,
    SustainOpt,
    WindowOpt,
    effective_options,
    found_traces,
    input_files,
    run_audit,
    say_not_logs,
)
from compaction_audit.commands.common import fail, output_path, say, write_bytes
from compaction_audit.errors import AuditError
from compaction_audit.report.safe import JSON

baseline_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                            help="Record the current findings so "
                           "that 'audit --baseline FILE' fails only on new ones.")


@baseline_app.command("create")
def baseline_create(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", help="Trace files, directories or glob patterns, as given to 'audit'.",
        show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", parser=output_path,
                                         help="Where to write the baseline (JSON); - for "
                                              "standard output.")],
    lenient: LenientOpt = False,
    window: WindowOpt = None,
    sustain: SustainOpt = None,
    set_: SetOpt = None,
    config: ConfigOpt = None,
    isolated: IsolatedOpt = False,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    extend_select: ExtendSelectOpt = None,
    severity: SeverityOpt = None,
    jobs: JobsOpt = None,
    exclude: ExcludeOpt = None,
) -> None:
    """Audit the traces with the same options as 'audit' and write every finding's
    fingerprint (trace path as given + rule code + entity or episode index) to the
    --output FILE ('-': standard output), with, for a fold, a digest of each fact it
    lost: the fold stays baselined only while it loses no other fact; one line on
    standard error says how many entries were written.

    Name the traces as CI will (same paths, same directory): the path is fingerprinted.

    Exit 0 when written; 2 when a trace is unreadable, and nothing is written.
    """
    from compaction_audit import baseline as bl
    from compaction_audit.outfile import refuse_same_file, refuse_same_stderr, refuse_same_stdout

    try:
        eff = effective_options(config, isolated, None, window, sustain, set_, select,
                                ignore, extend_select, severity)
        traces = found_traces(paths, exclude,
                              writes=None if str(output) == "-" else output)
        inputs = input_files(traces.traces, eff.config_path)
        if str(output) != "-":
            refuse_same_file(str(output), inputs)
            refuse_same_stderr(inputs)
        else:
            refuse_same_stdout(inputs)
        report = run_audit(traces.traces, eff, lenient, jobs, traces.unreadable)
    except AuditError as exc:
        fail(str(exc))
    if report.errors:
        say_not_logs(report.errors, paths)
        fail(f"{report.errors[0]} (baseline not written; {len(report.errors)} unreadable "
             "trace(s))")
    entries = bl.entries(report)
    to_stdout = str(output) == "-"  # as for convert and simulate (adv16: a file named -)
    write_bytes(bl.dumps(entries), None if to_stdout else output, JSON, inputs)
    findings = sum(len(s.findings) for s in report.sessions)
    shown = "(standard output)" if to_stdout else output
    holding = sum(1 for s in report.sessions if s.findings)
    say(f"baseline {shown}: {len(entries)} entries for {findings} finding(s) in "
        f"{holding} of {len(report.sessions)} trace(s)")
