"""Output formats: format name -> renderer, each its own module over the one report model.

A format renders either bytes (machine formats, Markdown) or a rich renderable (the
terminal report, printed through a console so that colour follows the terminal).
Renderer modules are imported when used, so choosing one format loads only that one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.text import Text

from compaction_audit.report.model import Report
from compaction_audit.report.safe import GITHUB, JSON, TEXT, XML, Escapes
from compaction_audit.rules.base import Rule


@dataclass(frozen=True)
class RenderOptions:
    """What a renderer needs besides the report.

    ``single``: exactly one trace was named (JSON writes the session object itself);
    ``summary_only``: only the across-traces summary (text, Markdown); ``fail_on``: the
    gate's threshold (JUnit failures, summaries); ``rules``: the rules that ran (JUnit
    test cases, SARIF rule descriptors); empty means every registered rule;
    ``show_all``: list every lost fact (text and Markdown), not only the top tiers;
    in JSON, SARIF and JUnit, every finding, round and list item (issue 14, section 3:
    bounded by default, see :mod:`compaction_audit.report.bounded`);
    ``quiet``: the text report prints the verdict only; ``statistics``: the text
    report prints the findings per rule instead of the per-trace reports;
    ``job_summary``: the Markdown report is for a GitHub Actions job summary (1 MiB a
    step), not a pull-request comment (65,536 characters).
    """

    single: bool = False
    summary_only: bool = False
    fail_on: str = "error"
    rules: tuple[Rule, ...] = field(default_factory=tuple)
    show_all: bool = False
    quiet: bool = False
    statistics: bool = False
    job_summary: bool = False

    def shows_summary(self, report: Report) -> bool:
        """True when the summary table belongs in a human report: asked for, more than
        one trace, or a baseline in play."""
        return (self.summary_only or len(report.sessions) + len(report.errors) > 1
                or any("baseline" in s.extra for s in report.sessions))


BytesRenderer = Callable[[Report, RenderOptions], bytes]
RichRenderer = Callable[[Report, RenderOptions], RenderableType]


@dataclass(frozen=True)
class OutputFormat:
    """A registered format: exactly one of ``render`` (bytes) or ``rich`` is set;
    ``escapes``: how the output sink breaks a CI command in it
    (:func:`~compaction_audit.report.safe.neutralize`)."""

    name: str
    help: str
    render: BytesRenderer | None = None
    rich: RichRenderer | None = None
    escapes: Escapes = TEXT


def _text(report: Report, opts: RenderOptions) -> RenderableType:
    from compaction_audit.report.summary import gate_line, summary_renderable
    from compaction_audit.report.terminal import (
        quiet_renderable,
        report_renderable,
        statistics_renderable,
        t,
        verdict_line,
    )
    from compaction_audit.report.terminal_text import Hanging, hanging, line

    several = len(report.sessions) + len(report.errors) > 1
    first = [hanging((tally(report, opts.fail_on), "dim"))] if several else []
    if opts.quiet or opts.statistics:
        parts = [*([] if opts.quiet else first), statistics_renderable(report)] \
            if opts.statistics else []
        if opts.statistics and not opts.quiet:  # each unreadable trace named, as -q
            parts += [line(("error: ", "bold red"), t(e.named()))  # does (adv28 F8)
                      for e in report.errors]
        if opts.quiet or not several:
            parts.append(quiet_renderable(report, opts.fail_on) if opts.quiet or not report.sessions
                         else Hanging(verdict_line(report.sessions[0])))
        if several or gate_differs(report, opts.fail_on):
            parts.append(hanging(gate_line(report, opts.fail_on)))
        return Group(*parts)
    parts = []
    if opts.summary_only:  # the gate's tally first (usertest32 #7)
        parts += first
    else:
        if several and opts.shows_summary(report):  # the answer is at the end: say so
            parts.append(hanging((f"{tally(report, opts.fail_on)}: a report for each, "
                                  "then the summary at the end (--summary: the summary "
                                  "alone; -q: a line each)", "dim")))  # (usertest9)
        parts.append(report_renderable(report, opts.show_all))
        if opts.shows_summary(report):  # apart from the last trace's verdict (usertest16)
            parts.append(Text(""))
    if opts.shows_summary(report):
        parts.append(summary_renderable(report, opts.fail_on, opts.show_all))
    elif gate_differs(report, opts.fail_on):
        parts.append(hanging(gate_line(report, opts.fail_on)))
    return Group(*parts)


def tally(report: Report, fail_on: str) -> str:
    """``3 traces, 2 reach --fail-on error, 1 unreadable (exit 2)``: the gate's answer
    on the first line of a text report of several traces (usertest31 #5, usertest32
    #7: a folder's first screen showed one trace, the answer was on its last line)."""
    n = len(report.sessions) + len(report.errors)
    failing = sum(s.fails(fail_on) for s in report.sessions)
    unread = f", {len(report.errors)} unreadable" if report.errors else ""
    return f"{n} traces, {failing} reach --fail-on {fail_on}{unread} (exit " \
           f"{report.exit_code(fail_on)})"


def gate_differs(report: Report, fail_on: str) -> bool:
    """True when a trace's verdict word does not say its exit: FAIL where ``fail_on``
    lets it pass (``--fail-on never``), or PASS/WARN where it fails it (``--fail-on
    info``).  The text report then ends with the gate's line (``exit 0: 1 trace(s), 0
    reach --fail-on never``), as it does for several traces: a CI log showed FAIL
    beside a green step and said nothing more (ux5 F11)."""
    return any((s.verdict_head() == "FAIL") != s.fails(fail_on) for s in report.sessions)


def _json(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.json_report import render_json

    return render_json(report, opts.single, opts.show_all, opts.fail_on)


def _markdown(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.markdown import render_markdown

    return render_markdown(report, opts)


def _junit(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.junit import render_junit

    return render_junit(report, opts)


def _sarif(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.sarif import render_sarif

    return render_sarif(report, opts)


def _github(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.github import render_github

    return render_github(report, opts)


def _html(report: Report, opts: RenderOptions) -> bytes:
    from compaction_audit.report.html.audit_page import render_html

    return render_html(report, opts)


FORMATS: dict[str, OutputFormat] = {f.name: f for f in (
    OutputFormat("text", "the terminal report (rich), then the summary across traces",
                 rich=_text),
    OutputFormat("json", "the whole report model as JSON", render=_json,
                 escapes=JSON),
    OutputFormat("markdown", "a pull-request comment: summary and findings per trace",
                 render=_markdown, escapes=XML),
    OutputFormat("junit", "JUnit XML: one test case per trace and rule", render=_junit,
                 escapes=XML),
    OutputFormat("sarif", "SARIF 2.1.0 for code scanning, located at the round's line",
                 render=_sarif, escapes=JSON),
    OutputFormat("github", "GitHub Actions workflow commands annotating the round's line",
                 render=_github, escapes=GITHUB),
    OutputFormat("html", "one self-contained HTML page with charts (the [html] extra)",
                 render=_html, escapes=XML),
)}
"""Every output format by name, in the order ``--help`` lists them."""


def rules_of(opts: RenderOptions) -> list[Rule]:
    """The rules that ran: ``opts.rules``, else every registered rule by code."""
    if opts.rules:
        return list(opts.rules)
    from compaction_audit.engine import select_rules

    return select_rules()
