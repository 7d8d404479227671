"""``compaction-audit diff``: did the inversion onset move between two runs?"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from compaction_audit.commands.audit import (
    ConfigOpt,
    IsolatedOpt,
    LenientOpt,
    SetOpt,
    SustainOpt,
    WindowOpt,
    effective_options,
    format_note,
    require_rules,
)
from compaction_audit.commands.common import (
    fail,
    output_console,
    output_path,
    stdout_or,
    write_bytes,
)
from compaction_audit.errors import AuditError, UsageError
from compaction_audit.report.safe import JSON, XML
from compaction_audit.runtime.isolated import render_in_child


class Format(StrEnum):
    """``diff --format`` choices."""

    text = "text"
    json = "json"
    html = "html"


class NewSeverity(StrEnum):
    """Lowest severity of a new finding that fails ``--fail-on-new``."""

    error = "error"
    warning = "warning"
    info = "info"


def diff_command(
    baseline: Annotated[str, typer.Argument(
        metavar="BASELINE", help="The reference run's log ('-' for stdin).",
        show_default=False)],
    candidate: Annotated[str, typer.Argument(
        metavar="CANDIDATE", help="The run to compare with it.", show_default=False)],
    fmt: Annotated[Format, typer.Option(
        "--format", "-f", help="Report format (html needs the html extra: pip install "
        "'compaction-audit[html]').")] = Format.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", parser=output_path,
                                                help="Write the report to this file "
                                                "(.gz/.zst compress; - is stdout).")] = None,
    fail_if_onset_earlier: Annotated[int | None, typer.Option(
        min=0, metavar="N",
        help="Exit 1 when the candidate's inversion onset is earlier than the baseline's "
             "by more than N rounds, or appears where the baseline had none; also when "
             "the candidate was checked less than the baseline (see --fail-on-new).")
    ] = None,
    fail_on_new: Annotated[NewSeverity | None, typer.Option(
        help="Exit 1 when a new finding is at or above this severity, or a "
             "persisting one rose to it; also when the "
             "candidate was checked less than the baseline (more compactions that could "
             "not be checked, more lines not read, more checks stopped at a limit, or a "
             "larger share of rounds salience-inversion could not judge for want of "
             "salience or tokens, or of rounds with a fold whose folds had no summary "
             "text to compare): what "
             "it resolves may be unread.")
    ] = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Print the verdict only (text format): the report's last "
                              "line, one line whatever the width.")] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help="List every finding unit (else, per status and rule, the first 3 "
                      "in the text report and the first 10 in JSON, with a count of the "
                      "rest).")] = False,
    lenient: LenientOpt = False,
    window: WindowOpt = None,
    sustain: SustainOpt = None,
    set_: SetOpt = None,
    config: ConfigOpt = None,
    isolated: IsolatedOpt = False,
) -> None:
    """Compare two runs: onsets side by side, the series aligned by round, and the
    findings that are new, resolved, persisting or not reached (a round one run has
    and the other never ran whole: the candidate ended before it, or starts after it).

    Exit 0 when no gate fails, 1 when one does, 2 for bad input or usage.  The
    verdict says when either run could not be fully checked.
    """
    from compaction_audit.runtime.startup import loading

    with loading():  # the auditor (compaction_audit.runtime.startup)
        from compaction_audit.api import audit_or_isolated, audited
        from compaction_audit.diff import diff_reports, gate
        from compaction_audit.outfile import (
            refuse_same_file,
            refuse_same_stderr,
            refuse_same_stdout,
        )
        from compaction_audit.runtime.streams import reads_stdin, same_stream

    output = stdout_or(output)
    try:
        if reads_stdin(baseline) and reads_stdin(candidate):  # adv86 #7: - /dev/stdin
            raise UsageError("baseline and candidate cannot both be standard input")
        if same_stream(baseline, candidate):  # adv87 #4: a FIFO twice hung
            raise UsageError(f"baseline and candidate are one stream ({baseline}), which "
                             "can be read once: give two files")
        if quiet and fmt is not Format.text:
            raise UsageError("--quiet applies to --format text")
        if fmt is Format.html:
            from compaction_audit.report.html import require_extra

            require_extra()
        eff = effective_options(config, isolated, None, window, sustain, set_)
        require_rules(eff)
        inputs = [baseline, candidate, *([str(eff.config_path)] if eff.config_path else [])]
        if output is not None:
            refuse_same_file(str(output), inputs)
            refuse_same_stderr(inputs)
        else:
            refuse_same_stdout(inputs)
        if (note := format_note(output, fmt.value, tuple(Format))) is not None:
            raise UsageError(note)  # the name says another format (usertest17 #8, adv84)
        base, cand = (audited(audit_or_isolated(path, eff.settings, lenient, eff.rules,
                                                eff.severity))
                      for path in (baseline, candidate))  # a child each under ulimit -v
    except AuditError as exc:
        fail(str(exc))
    if eff.suppressions:  # the configuration's [[suppress]] entries hold in both runs
        from compaction_audit.commands.audit import suppressed
        from compaction_audit.report.model import Report

        base, cand = suppressed(Report([base, cand]), eff).sessions
    diff = diff_reports(base, cand)
    from compaction_audit.commands.audit import config_shown

    diff.config = config_shown(eff)  # named, as audit's reports name it (adv25 N2)
    new = fail_on_new.value if fail_on_new is not None else None
    reasons = gate(diff, fail_if_onset_earlier, new)
    gates = {"fail_if_onset_earlier": fail_if_onset_earlier, "fail_on_new": new}
    if fmt is Format.json:
        from compaction_audit.report.diff_render import render_diff_json

        write_bytes(render_in_child(render_diff_json, diff, gates, reasons, show_all),
                    output, JSON, inputs)
    elif fmt is Format.html:
        from compaction_audit.report.html.diff_page import render_diff_html

        write_bytes(render_in_child(render_diff_html, diff, gates, reasons), output, XML,
                    inputs)
    else:
        from compaction_audit.report.diff_render import diff_renderable, verdict_text

        with output_console(output, inputs) as console:
            if not quiet:  # -q: the last line alone (usertest34 #14: audit has -q)
                console.print(diff_renderable(diff, gates, reasons, show_all), crop=False)
            console.print(verdict_text(diff, reasons, gates), soft_wrap=True)
    raise typer.Exit(1 if reasons else 0)
