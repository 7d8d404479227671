"""``compaction-audit baseline create`` (record today's findings for ``audit --baseline``)
and ``baseline prune`` (drop the entries that no longer occur)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from compaction_audit.commands.audit import (
    ConfigOpt,
    Engine,
    EngineOpt,
    ExcludeOpt,
    ExtendSelectOpt,
    IgnoreOpt,
    IsolatedOpt,
    JobsOpt,
    LenientOpt,
    RayAddressOpt,
    SelectOpt,
    SetOpt,
    SeverityOpt,
    SustainOpt,
    WindowOpt,
    effective_options,
    found_traces,
    input_files,
    on_ray,
    run_audit,
    say_not_logs,
)
from compaction_audit.commands.common import fail, output_path, say, write_bytes
from compaction_audit.errors import AuditError, UsageError
from compaction_audit.report.safe import JSON

if TYPE_CHECKING:
    from compaction_audit.baseline import Loaded
    from compaction_audit.report.model import Report

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
    engine: EngineOpt = Engine.local,
    ray_address: RayAddressOpt = None,
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

    eff = _options(config, isolated, window, sustain, set_, select, ignore, extend_select,
                   severity)
    report, inputs, _ = _audited(paths, output, None, eff, lenient, jobs, exclude,
                                 (engine, ray_address))
    entries = bl.entries(report)
    shown = _write(bl.dumps(entries, bl.cosine_methods(report)), output, inputs)
    findings = sum(len(s.findings) for s in report.sessions)
    holding = sum(1 for s in report.sessions if s.findings)
    say(f"baseline {shown}: {len(entries)} entries for {findings} finding(s) in "
        f"{holding} of {len(report.sessions)} trace(s)")


def _options(*given: Any) -> Any:
    """:func:`effective_options` of a ``baseline`` command's options (in its order:
    config, isolated, window, sustain, set, select, ignore, extend-select, severity),
    a usage error its one line."""
    config, isolated, *rest = given
    try:
        return effective_options(config, isolated, None, *rest)
    except AuditError as exc:
        fail(str(exc))


def _audited(paths: list[str], output: Path, baseline: Path | None, eff: Any,
             lenient: bool, jobs: int | None, exclude: list[str] | None,
             where: tuple[Engine, str | None] = (Engine.local, None)
             ) -> tuple[Report, list[str], Loaded]:
    """The traces of ``paths`` audited as 'audit' does (against ``baseline`` when
    given; ``where``: the engine and Ray address, usertest67 #2: a fleet's baseline
    could not be made on Ray), the files the run read, which ``output`` may not name,
    and the baseline's entries (empty without one).  Exits 2 with
    one line for a usage error or an unreadable trace: a baseline of an incomplete run
    would hide findings."""
    from compaction_audit import baseline as bl
    from compaction_audit.outfile import refuse_same_file, refuse_same_stderr, refuse_same_stdout

    engine, ray_address = where
    try:
        if ray_address is not None and engine is not Engine.ray:
            raise UsageError("--ray-address applies to --engine ray")
        if engine is Engine.ray:
            from compaction_audit.fleet.ray_engine import import_ray

            import_ray()  # a missing extra is a usage error before any work
        traces = found_traces(paths, exclude, own=(baseline,),
                              writes=None if str(output) == "-" else output)
        inputs = input_files(traces.traces, baseline, eff.config_path)
        if str(output) != "-":
            refuse_same_file(str(output), inputs)
            refuse_same_stderr(inputs)
        else:
            refuse_same_stdout(inputs)
        old = bl.load(baseline) if baseline is not None else bl.Loaded()
        report = run_audit(traces.traces, eff, lenient, jobs, traces.unreadable,
                           on_ray(ray_address, traces.sizes) if engine is Engine.ray
                           else None)
        if baseline is not None:
            report = bl.apply(report, old, str(baseline))
    except AuditError as exc:
        fail(str(exc))
    if report.errors:
        say_not_logs(report.errors, paths)
        fail(f"{report.errors[0]} (baseline not written; {len(report.errors)} unreadable "
             "trace(s))")
    return report, inputs, old


def _write(data: bytes, output: Path, inputs: list[str]) -> str:
    """Write the baseline ``data`` to ``output`` ('-': standard output, as for convert
    and simulate: adv16, a file named -); returns how to name it in the stderr line."""
    to_stdout = str(output) == "-"
    write_bytes(data, None if to_stdout else output, JSON, inputs)
    return "(standard output)" if to_stdout else str(output)


@baseline_app.command("prune")
def baseline_prune(
    baseline: Annotated[Path, typer.Argument(
        metavar="BASELINE", help="The baseline file to prune.", show_default=False)],
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", help="Trace files, directories or glob patterns, as given to 'audit'.",
        show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", parser=output_path,
                                         help="Where to write the pruned baseline (JSON); "
                                              "- for standard output.")],
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
    engine: EngineOpt = Engine.local,
    ray_address: RayAddressOpt = None,
) -> None:
    """Audit the traces against BASELINE with the same options as 'audit' and write
    BASELINE less the entries that no longer occur (fixed findings) to the --output FILE
    ('-': standard output): a finding BASELINE does not hold is not added, and an
    entry is kept as it was, as is an entry of a rule not run (--select, --ignore).
    The entries of a trace under a directory or prefix given that no longer exists
    are dropped too; those of traces not under a PATH are kept.
    One line on standard error says how many entries were dropped.  The output may
    not be BASELINE itself: write another file and replace it in the commit that
    drops them.

    Exit 0 when written; 2 when a trace is unreadable, and nothing is written.
    """
    from compaction_audit import baseline as bl

    eff = _options(config, isolated, window, sustain, set_, select, ignore, extend_select,
                   severity)
    report, inputs, old = _audited(paths, output, baseline, eff, lenient, jobs, exclude,
                                   (engine, ray_address))
    if (other := bl.cosine_mismatch(old, report, str(baseline))) is not None:
        say(other)  # entries dropped under another method (adv113 #8)
    from compaction_audit.baseline.gone import gone_traces

    gone = gone_traces(old, report, paths)  # usertest67 #7: deleted traces' entries
    fixed = bl.pruned(report, old)
    kept = [e for e in fixed if e.trace not in gone]
    shown = _write(bl.dumps(kept, old.cosine), output, inputs)
    new = sum(len(s.findings) for s in report.sessions)
    ran = {c for s in report.sessions for c in s.rules_run}
    unrun = sum(e.code not in ran for e in kept)
    of_gone = (f"; {len(fixed) - len(kept)} of {len(gone)} trace(s) that no longer exist"
               if gone else "")
    say(f"baseline {shown}: {len(old) - len(kept)} of {len(old)} entries dropped (no "
        f"longer occur{of_gone}), {len(kept)} kept" + (
            f" ({unrun} of rules this run did not select)" if unrun else "") + (
            f"; {new} finding(s) the baseline does not hold were not added (audit "
            "--baseline lists them)" if new else ""))
