"""``compaction-audit audit``: the main job, and the options it shares with ``baseline``
and ``config show`` (configuration layers, rule selection)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from compaction_audit.commands.common import (
    FailOn,
    console_for,
    fail,
    local_file,
    output_console,
    output_path,
    say,
    say_some,
    stdout_or,
    write_bytes,
)
from compaction_audit.errors import NOT_A_LOG, AuditError, LogError, UsageError

if TYPE_CHECKING:  # the auditor (Polars, the readers, the rules) loads when a run needs it
    from compaction_audit.config import Effective
    from compaction_audit.discover import Discovery
    from compaction_audit.report.formats import RenderOptions
    from compaction_audit.report.model import Report


class AuditFormat(StrEnum):
    """``audit --format`` choices: the names of :data:`report.formats.FORMATS`."""

    text = "text"
    json = "json"
    markdown = "markdown"
    junit = "junit"
    sarif = "sarif"
    github = "github"
    html = "html"


NAMED_FORMATS = {".json": "json", ".sarif": "sarif", ".xml": "junit", ".html": "html",
                 ".htm": "html", ".md": "markdown"}
"""The format an ``-o`` name's ending says (before ``.gz`` or ``.zst``)."""


def format_note(output: Path | None, fmt: str,
                formats: Iterable[str] = tuple(AuditFormat)) -> str | None:
    """The usage error when the ``-o`` name says another format than the report's
    (``report.json.gz`` with no ``--format``: a text report in a file every reader
    takes for JSON; usertest17 #8; adv84: a warning, and the file written anyway, where
    ``-o r.bz2`` is refused), else None.  The report is what ``--format`` says: the
    name is not read as an option.  ``formats``: those the command writes (the
    note names ``--format`` only for one of them: ``diff`` has no SARIF, usertest18
    #2).  A SARIF report is JSON (``results.json`` needs no note) and
    ``x.sarif.json`` says SARIF (usertest18 #4)."""
    if output is None:
        return None
    name = Path(output.name.lower().removesuffix(".gz").removesuffix(".zst"))
    said = "sarif" if name.name.endswith(".sarif.json") else NAMED_FORMATS.get(name.suffix)
    if said is None or said == fmt or (said, fmt) == ("json", "sarif"):
        return None
    ending = ".sarif.json" if said == "sarif" and name.suffix == ".json" else name.suffix
    head = f"-o/--output: a {ending} name says {said}"
    if said not in formats:
        return (f"{head}, a format this command does not write; name the file for the "
                f"{fmt} report (--format {fmt})")
    return f"{head}, not the {fmt} report (--format {fmt}); add --format {said}"


# readable=False: click's own check of a Path is a 4-line usage error; the file is
# opened by config.load_config / baseline.load, whose error is one line (issue 11, F7).
ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", metavar="FILE", readable=False, parser=local_file,
    help="Read options from this file (compaction-audit.toml or a pyproject.toml with a "
    "tool.compaction-audit table) instead of the one found by walking up from the working "
    "directory.")]
IsolatedOpt = Annotated[bool, typer.Option(
    "--isolated", help="Ignore every configuration file.")]
FailOnOpt = Annotated[FailOn | None, typer.Option(
    help="Lowest severity that exits 1 (default: error, or the config file's). "
         "Lines not read, compactions not checked, checks stopped at their limit "
         "and --lenient skips count as warning: use 'warning' to gate untrusted "
         "logs.")]
# read as text and converted as --set's values are: ASCII digits only (adv96 #6: typer
# read "--sustain 1_0" as 10, which --set sustain=1_0 refuses)
WindowOpt = Annotated[str | None, typer.Option(
    metavar="INTEGER",
    help="Compare round t with t-WINDOW for 'fell' and 'rose' (default: 1).")]
SustainOpt = Annotated[str | None, typer.Option(
    metavar="INTEGER",
    help="Rounds a boundary condition must hold before it fires (default: 1).")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", "-s", metavar="NAME=VALUE", help="Override a threshold, e.g. --set "
    "raw_ratio_floor=0.2 (see 'compaction-audit thresholds').")]
SelectOpt = Annotated[list[str] | None, typer.Option(
    metavar="RULES", help="Run only these rules: codes, code prefixes (CA1) or names, "
    "comma-separated; replaces the config file's select.")]
IgnoreOpt = Annotated[list[str] | None, typer.Option(
    metavar="RULES", help="Do not run these rules (codes, prefixes or names).")]
ExtendSelectOpt = Annotated[list[str] | None, typer.Option(
    metavar="RULES", help="Run these rules in addition to the selected ones.")]
SeverityOpt = Annotated[list[str] | None, typer.Option(
    metavar="RULE=LEVEL", help="Change a rule's severity, e.g. --severity "
    "compaction-drift=error (repeatable).")]
LenientOpt = Annotated[bool, typer.Option(
    "--lenient", help="Skip bad records (counted and reported) instead of stopping.")]
_JOBS_HELP = ("Worker processes when auditing several traces (default: 2; never more "
              "than the traces or the cores available; under ulimit -v one at a time, "
              "each in its own process")
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, help=f"{_JOBS_HELP}).")]
AuditJobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, help=f"{_JOBS_HELP}; with --engine ray: workers on the "
    "cluster, default one per CPU).")]


class Engine(StrEnum):
    """``audit --engine`` choices: where the traces are audited."""

    local = "local"
    ray = "ray"


ExcludeOpt = Annotated[list[str] | None, typer.Option(
    "--exclude", metavar="PATTERN", help="Leave out what a directory, glob or object "
    "storage prefix or pattern yields when PATTERN matches a file or directory name in "
    "its path below it ('labels', '*.items.jsonl'), or the whole path or URL when "
    "PATTERN has a '/'. Repeatable; files and objects named are kept.")]
EngineOpt = Annotated[Engine, typer.Option(
    "--engine", help="local: a pool of -j processes here; ray: a Ray cluster, one trace "
    "per task on long-lived workers, largest first (pip install 'compaction-audit[ray]'; "
    "docs/performance.md, Fleet).")]
RayAddressOpt = Annotated[str | None, typer.Option(
    "--ray-address", metavar="ADDRESS", help="The cluster for --engine ray: auto, local, "
    "HOST:PORT or ray://HOST:PORT (default: start a local one); connecting may take "
    "60 s, or COMPACTION_AUDIT_RAY_CONNECT_TIMEOUT seconds.")]


def effective_options(config: Path | None = None, isolated: bool = False,
                      fail_on: FailOn | None = None, window: str | int | None = None,
                      sustain: str | int | None = None, set_: list[str] | None = None,
                      select: list[str] | None = None, ignore: list[str] | None = None,
                      extend_select: list[str] | None = None,
                      severity: list[str] | None = None) -> Effective:
    """The run's options: defaults <- config file <- these command-line values.

    Raises :class:`~compaction_audit.errors.UsageError` for a bad file or value.
    """
    from compaction_audit.config import cli_layer, load_config, resolve
    from compaction_audit.settings import parse_assignments

    passed: list[str] = []
    file_layer, path = load_config(config, isolated, passed=passed)
    for message in passed:  # a file another user could plant: said, never used quietly
        say(message)
    values: dict[str, object] = dict(parse_assignments(set_ or []))
    for option, value in (("window", window), ("sustain", sustain)):
        if value is None:
            continue
        if option in values:  # adv62: `--set window=3 --window 5` took 5 without a word
            raise UsageError(f"--{option} and --set {option}=... both set {option}: "
                             "give one")
        values[option] = value
    cli = cli_layer(values, fail_on.value if fail_on is not None else None, select,
                    ignore or (), extend_select or (), severity or ())
    return resolve([layer for layer in (file_layer, cli) if layer is not None], path)


def config_shown(eff: Effective) -> str | None:
    """The configuration file ``eff`` came from, as shown to the user (None: none)."""
    from compaction_audit.config import display_path

    return None if eff.config_path is None else display_path(eff.config_path)


def require_rules(eff: Effective) -> None:
    """Raise :class:`UsageError` when ``eff`` selects no rule: an audit that checks
    nothing must not pass (issue 11, item 2)."""
    if eff.rules:
        return
    where = "; ".join(f"{key} = {eff.values[key]!r} from {eff.sources[key]}"
                      for key in ("select", "ignore", "extend-select")
                      if eff.sources[key] != "default")
    raise UsageError(f"no rule is selected ({where or 'the defaults'}): the audit would "
                     "check nothing; select at least one rule")


NAMED_IDLE = 5
"""``--exclude`` patterns that matched nothing named on the note's line at most."""


def found_traces(paths: list[str], exclude: list[str] | None = None,
                 own: Iterable[Path | None] = (), writes: Path | None = None) -> Discovery:
    """:func:`~compaction_audit.discover.find_traces` (``exclude``: the ``--exclude``
    patterns), with one stderr line per non-regular file it skipped and per link to a
    directory it did not follow (:func:`say_some`: at most 20 each, then a count), one
    naming the hidden directories it did not search, and the count of traces
    ``--exclude`` left out.  ``own``: the other files the command reads (the
    baseline), which a folder or pattern search neither audits nor names as a file
    not searched (usertest12: the baseline in the audited folder was listed as a log
    left unread; usertest13: a ``cab.jsonl`` baseline was audited, an unreadable
    trace); a file named on the command line is still a trace.  ``writes``: the
    output, never named as a file not searched; a trace it would write over is still
    a trace, and the write is refused (the file may be a hard link to a trace).
    Raises :class:`UsageError` as it does."""
    from compaction_audit.discover import excludes, find_traces

    found = find_traces(paths, exclude or ())
    ours = [p for p in own if p is not None]
    if ours:
        named = set(paths)
        found.traces = [t for t in found.traces
                        if t in named or not any(_same_file(t, q) for q in ours)]
    ours += [writes] if writes is not None else []
    found.not_searched = [p for p in found.not_searched
                          if not any(_same_file(p, q) for q in ours)]
    say_some(found.skipped, "non-regular files skipped")
    say_some(found.links, "links to directories not followed")
    if found.hidden:  # .claude, .codex: where agents keep their sessions (adv24 F4)
        from compaction_audit.discover import hidden_phrase

        say(hidden_phrase(found.hidden))
    if found.hidden_files:  # '**/*.jsonl' and .failing.jsonl (adv26 E2)
        from compaction_audit.discover import hidden_files_phrase

        say(hidden_files_phrase(found.hidden_files))
    if found.not_searched:  # an opencode export.json beside a .jsonl (adv31 N9)
        from compaction_audit.discover import others_phrase

        say(others_phrase(found.not_searched))
    if found.excluded:  # chosen once in CI, matched against names the checkout brings
        say(f"{found.excluded:,} trace(s) left out by --exclude")  # (adv23 F3)
    idle = [p for i, p in enumerate(found.exclude) if i not in found.exclude_used]
    files = [os.path.normpath(a) for a in paths if os.path.isfile(a)]
    given = [p for p in idle if any(excludes(p, a) for a in files)]  # audited anyway
    idle = [p for p in idle if p not in given]
    for patterns, what in ((given, "matched only files named on the command line, which "
                                   "are audited whatever the patterns say"),
                           (idle, "matched no file the directories and patterns yielded")):
        if patterns:  # a mistyped pattern leaves nothing out (adv62)
            listed = ", ".join(f"'{p}'" for p in patterns[:NAMED_IDLE])  # say escapes them
            say(f"--exclude {listed}" + (f" and {len(patterns) - NAMED_IDLE} more"
                                         if len(patterns) > NAMED_IDLE else "") + f" {what}")
    return found


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def say_not_logs(errors: list[LogError], paths: list[str]) -> None:
    """One stderr line when files a folder or pattern search found (not ``paths``
    themselves) are not logs at all: labels or notes beside the traces make the run
    exit 2, and ``--exclude`` leaves them out (a CI engineer's test)."""
    not_logs = [e.path for e in errors
                if e.message.startswith(NOT_A_LOG) and e.path not in paths]
    if not_logs:
        from pathlib import PurePath

        first = PurePath(not_logs[0])
        given = {PurePath(p) for p in paths}
        # the folder that holds it, unless that is a folder given: then the file
        # (usertest37 #4: 'audit dd4' suggested --exclude 'dd4', which matched nothing)
        name = first.name if first.parent in given or not first.parent.name \
            else first.parent.name
        example = f"--exclude '{name}'" if name else "--exclude NAME"
        say(f"{len(not_logs):,} file(s) a folder or pattern search found are not logs "
            f"(first: {not_logs[0]}): leave such files out with --exclude, a file or "
            f"folder name ({example}); the run fails on them otherwise")


def run_audit(traces: list[str], eff: Effective, lenient: bool, jobs: int | None,
              unreadable: list[LogError] | None = None,
              engine: Callable[..., Report] | None = None) -> Report:
    """Audit ``traces`` with ``eff``; a progress bar on stderr when it is a terminal:
    traces done when there are several, bytes read of a single large one
    (:mod:`compaction_audit.commands.progress`).  ``unreadable``: errors found before reading (a
    directory that could not be listed), reported first as unreadable traces.
    ``engine``: called like :func:`~compaction_audit.api.audit_paths` instead of it
    (``--engine ray``)."""
    from compaction_audit.runtime.startup import loading, one_trace

    with loading():  # already done by 'audit'; 'baseline create' loads the auditor here
        from compaction_audit.api import Progress, audit_paths
        from compaction_audit.report.model import Report

    require_rules(eff)
    if len(traces) == 1:
        one_trace()

    def go(progress: Progress | None = None) -> Report:
        report = ((engine or audit_paths)(traces, eff.settings, lenient, eff.rules,
                                          eff.severity, jobs=jobs, progress=progress)
                  if traces else Report([]))
        report = Report(report.sessions, [*(unreadable or []), *report.errors])
        report.config = config_shown(eff)
        return suppressed(report, eff)

    from compaction_audit.commands.progress import single_trace_progress, wanted
    from compaction_audit.runtime.procs import Terminated, exit_process
    from compaction_audit.runtime.stopline import say_stopped

    try:
        size = wanted(traces)
        if size is not None:
            with single_trace_progress(traces[0], size):
                return go()
        if len(traces) < 2 or not sys.stderr.isatty():
            return go()
        from rich.console import Console
        from rich.progress import Progress as Bar

        with Bar(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("auditing traces", total=len(traces))
            return go(lambda done, _total, _path: bar.update(task, completed=done))
    except Terminated as exc:  # SIGTERM: the workers are gone; 128 + the signal number
        say_stopped(exc.signum)
        exit_process(128 + exc.signum)
    except KeyboardInterrupt:  # Ctrl-C: handled here, before typer turns it into an
        say_stopped()  # exit that would join the torn-down pool's threads
        exit_process(130)


def suppressed(report: Report, eff: Effective) -> Report:
    """``report`` without what the configuration's ``suppress`` entries silence
    (:mod:`compaction_audit.suppress`), with one stderr line per entry that matched
    nothing in the run (:func:`say_some`: at most 20, then a count)."""
    from compaction_audit.suppress import apply

    report, unmatched = apply(report, eff.suppressions)
    say_some([f"{e.where} ({e.describe()}) matched nothing in this run" for e in unmatched],
             "suppress entries matched nothing in this run")
    return report


def emit(report: Report, fmt: str, output: Path | None, opts: RenderOptions,
         inputs: list[str] | tuple[str, ...] = ()) -> None:
    """Render ``report`` in format ``fmt`` (a :data:`FORMATS` name) to stdout or
    ``output``, which must not be one of ``inputs`` (the traces, baseline and config
    file read: see :mod:`compaction_audit.outfile`)."""
    from compaction_audit.report.formats import FORMATS
    from compaction_audit.runtime.isolated import render_in_child

    spec = FORMATS[fmt]
    if spec.render is not None:  # in a child under a limit (adv22b F10)
        data = render_in_child(spec.render, report, opts)
        write_bytes(data, output, spec.escapes, inputs)
        return
    assert spec.rich is not None
    with output_console(output, inputs) as console:
        console.print(spec.rich(report, opts), crop=False)


def step_summary(report: Report, opts: RenderOptions,
                 inputs: list[str] | tuple[str, ...] = ()) -> None:
    """With ``--format github`` in a GitHub Actions job (``GITHUB_STEP_SUMMARY`` set),
    append the Markdown report to the job summary: the annotations are capped per
    file, the summary lists everything.  Appended, never replaced (the file is the
    runner's and other steps write to it); the same escapes and CI-command
    neutralization as ``--format markdown``; a file that is an input, or cannot be
    written, gets a line on stderr and the gate goes on."""
    import os
    from dataclasses import replace

    from compaction_audit.outfile import refuse_same_file
    from compaction_audit.report.formats import FORMATS
    from compaction_audit.report.github import STEP_SUMMARY
    from compaction_audit.report.safe import neutralize_bytes
    from compaction_audit.runtime.isolated import render_in_child

    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return
    spec = FORMATS["markdown"]
    assert spec.render is not None
    try:
        refuse_same_file(target, inputs)
        data = neutralize_bytes(render_in_child(spec.render, report,
                                                replace(opts, job_summary=True)),
                                spec.escapes)
        with open(target, "ab") as fh:
            fh.write(data)
    except AuditError as exc:
        say(f"{STEP_SUMMARY}: {exc}")
    except OSError as exc:
        say(f"{STEP_SUMMARY}: {target}: cannot append the job summary: "
            f"{exc.strerror or exc}")


def on_ray(address: str | None, sizes: dict[str, int]) -> Callable[..., Report]:
    """The ``engine`` of :func:`run_audit` for ``--engine ray``."""
    from functools import partial

    from compaction_audit.fleet.ray_engine import audit_on_ray

    return partial(audit_on_ray, address=address, sizes=sizes)


def input_files(traces: list[str], *others: Path | None) -> list[str]:
    """The files a run read: its traces and the other files given (baseline, config),
    for :func:`~compaction_audit.outfile.refuse_same_file`."""
    return [*traces, *(str(p) for p in others if p is not None)]


def audit_command(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH",
        help="Trace files, directories (searched recursively for *.jsonl, *.jsonl.gz, "
             "*.jsonl.zst in any letter case, Cline's *.messages.json and any "
             "*.compaction.json no messages file there reads), glob patterns, or s3://, gs://, "
             "az:// URLs (an object, a prefix ending in '/', or a pattern over keys: pip install "
             "'compaction-audit[cloud]'); '-' for stdin.", show_default=False)],
    fmt: Annotated[AuditFormat, typer.Option(
        "--format", "-f", help="Report format (html needs the html extra: pip install "
        "'compaction-audit[html]').")] = AuditFormat.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", parser=output_path,
                                                help="Write the report to this file "
                                                "(.gz/.zst compress; - is stdout).")] = None,
    summary: Annotated[bool, typer.Option(
        "--summary", help="Only the summary across traces (text and markdown).")] = False,
    all_: Annotated[bool, typer.Option(
        "--all", help="List everything: every lost fact, not only the tiers that matter "
        "(the low tiers are otherwise counted), and in the text report every episode, "
        "compaction and folded round, where lists otherwise stop at 'N more (--all)'. "
        "JSON, SARIF and JUnit: every finding on its own (else one episode per rule and "
        "run of rounds, with its count, a broken or reversed rule's findings each their "
        "own, CA304 and CA307; at most 5 per rule, the most severe), every round of the series "
        "(else the key rounds) and every list item (else the first 10, 5 in a list's "
        "item, 3 in a finding's values, with a '<key>_truncated' count of all: "
        "docs/ci.md, Output size).  HTML: tables stop at 200 rows, the rest counted "
        "(docs/html.md).  GitHub annotations are the same with or without it (10 of "
        "each kind).")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Print the verdict only (text format): one line per trace, "
        "then the gate's line when there are several, or when the verdict's word does "
        "not say the exit (FAIL with --fail-on never).")] = False,
    statistics: Annotated[bool, typer.Option(
        "--statistics", help="Print the number of findings per rule (and episodes), "
        "most first, instead of the reports (text format).")] = False,
    baseline: Annotated[Path | None, typer.Option(
        metavar="FILE", readable=False, parser=local_file,
        help="Fail only on findings not in this baseline (see 'compaction-audit baseline "
        "create'); report entries that no longer occur.")] = None,
    fail_on: FailOnOpt = None,
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
    jobs: AuditJobsOpt = None,
    exclude: ExcludeOpt = None,
    engine: EngineOpt = Engine.local,
    ray_address: RayAddressOpt = None,
) -> None:
    """Audit compaction logs: rebuild the per-round series, run the rules, report.

    Exit 0 when no finding reaches --fail-on, 1 when one does, 2 for bad usage or input.

    An unreadable trace is reported and counted, the others are still audited; exit 2.
    """
    from compaction_audit.runtime.startup import embed_early, loading, text_early

    if engine is Engine.local:
        embed_early(paths)  # the embedding model loads in a helper while we import
    with loading():  # the auditor: Polars, the readers, the rules, the report
        if engine is Engine.local:
            text_early(paths)  # and the recall analysis's text helper, at low priority
        from compaction_audit import api  # noqa: F401 - loaded here, used by run_audit
        from compaction_audit.discover import names_one_file
        from compaction_audit.outfile import (
            refuse_same_file,
            refuse_same_stderr,
            refuse_same_stdout,
        )
        from compaction_audit.report.formats import RenderOptions

    output = stdout_or(output)
    try:
        if (quiet or statistics) and fmt is not AuditFormat.text:
            raise UsageError("--quiet and --statistics apply to --format text")
        if summary and fmt not in (AuditFormat.text, AuditFormat.markdown):
            # usertest46 #7: with json, html, ... the whole report was written, silently
            raise UsageError("--summary applies to --format text and markdown")
        if fmt is AuditFormat.html:
            from compaction_audit.report.html import require_extra

            require_extra()
        if ray_address is not None and engine is not Engine.ray:
            raise UsageError("--ray-address applies to --engine ray")
        if engine is Engine.ray:
            from compaction_audit.fleet.ray_engine import import_ray

            import_ray()  # a missing extra is a usage error before any work
        eff = effective_options(config, isolated, fail_on, window, sustain, set_, select,
                                ignore, extend_select, severity)
        traces = found_traces(paths, exclude, own=(baseline,), writes=output)
        inputs = input_files(traces.traces, baseline, eff.config_path)
        if output is not None:  # before the work, so a refused run costs nothing
            refuse_same_file(str(output), inputs)
            refuse_same_stderr(inputs)
        else:
            refuse_same_stdout(inputs)
        if (note := format_note(output, fmt.value)) is not None:
            raise UsageError(note)  # before the work, as -o r.bz2 is refused
        report = run_audit(traces.traces, eff, lenient, jobs, traces.unreadable,
                           on_ray(ray_address, traces.sizes) if engine is Engine.ray else None)
        if baseline is not None:
            from compaction_audit import baseline as bl

            held = bl.load(baseline)
            report = bl.apply(report, held, str(baseline))
            if (other := bl.cosine_mismatch(held, report, str(baseline))) is not None:
                say(other)  # usertest61 B1: findings of another method, with no word
            from compaction_audit.baseline.gone import gone_line, gone_traces

            if (line := gone_line(gone_traces(held, report, paths), str(baseline))):
                say(line)  # usertest67 #7: a deleted trace's entries, never named
    except AuditError as exc:
        fail(str(exc))
    single = names_one_file(paths)
    if report.errors and single:
        if fmt not in _CI_FILES:
            fail(str(report.errors[0]))
        # a CI step reads the file whatever the exit (usertest47 #2: a SARIF upload
        # with if: always() failed again on a missing file): the error is said, and
        # written into the report as a folder's unreadable trace is (exit 2)
        say(str(report.errors[0]))
        single = False
    if len(report.errors) == 1 and not report.sessions and fmt is AuditFormat.text:
        # one unreadable trace and nothing else: a text report would be that error
        # alone (then "config: none"), on stdout; it is said on stderr, as for a trace
        # named alone (adv84: 'audit labels/', its one .jsonl no log)
        say(report.errors[0].named())
        say_not_logs(report.errors, paths)
        raise typer.Exit(2)
    say_not_logs(report.errors, paths)
    opts = RenderOptions(single, summary, eff.fail_on, tuple(eff.rules), show_all=all_,
                         quiet=quiet, statistics=statistics)
    emit(report, fmt.value, output, opts, inputs)
    if fmt is AuditFormat.github:
        step_summary(report, opts, inputs)
    if baseline is not None and (quiet or statistics):  # the verdicts only: why the
        from compaction_audit.report.summary import baseline_held_nothing  # baseline
        say_some([ln for s in report.sessions for ln in baseline_held_nothing(s)],  # held
                 "baseline lines")  # nothing back, on stderr (usertest32 #5, usertest71 #4)
    raise typer.Exit(report.exit_code(eff.fail_on))


_CI_FILES = frozenset({AuditFormat.sarif, AuditFormat.junit, AuditFormat.github})
"""Formats a CI step reads after the audit whatever its exit: a trace named alone that
cannot be read is written into them as an unreadable trace, besides the error line."""


def thresholds_command() -> None:
    """List every threshold with its default and the seed section it comes from."""
    from rich.console import Group, RenderableType
    from rich.table import Table
    from rich.text import Text

    from compaction_audit.report.terminal_text import ByWidth, hang
    from compaction_audit.settings import describe

    rows = describe()

    def table() -> Table:
        tab = Table("name", "default", "meaning", "source")
        for s in rows:
            tab.add_row(s["name"], str(s["default"]), s["help"], s["source"])
        return tab

    def listing() -> Group:  # a narrow terminal: one entry per threshold
        parts: list[RenderableType] = []
        for s in rows:
            parts.append(Text(f"{s['name']} = {s['default']}", style="bold"))
            parts.append(hang("", f"{s['help']}; source: {s['source']}"))
        return Group(*parts)

    console_for().print(ByWidth(table, listing))
