"""The JUnit XML report: one test suite per trace, one test case per trace and rule.

A test case fails when the rule has a finding at or above ``--fail-on`` in that trace;
the ``<failure>`` lists its findings as episodes (issue 14, section 3: a rule over
consecutive rounds is one entry with its rounds, lines and count; at most
:data:`~compaction_audit.report.bounded.EPISODES_PER_RULE`, then "and N more episodes";
``--all``: every finding).  Findings below the threshold go to the case's
``<system-out>``, the same way.  An unreadable trace
is a suite with one ``read`` case in error.  A trace with compactions that could not
be checked has a skipped case ``compactions checked``, one whose reader left lines
unread a skipped case ``lines read`` (:mod:`compaction_audit.report.gaps`), failed
cases when ``--fail-on`` reaches a warning (the gate counts them as one).  Test case
names are ``CODE name``, class names the trace path, and ``file`` the trace path (GitLab
shows it).

Text goes through :func:`printable` (XML 1.0 cannot carry most control characters,
even escaped) and then ElementTree, which escapes markup.  Untrusted text never keeps a
newline (``\\n``): the only line breaks in element text are the report's own, between
findings, so no line of the file starts with log text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

from compaction_audit.baseline import grown_findings
from compaction_audit.errors import LogError
from compaction_audit.report.advice import what_to_do
from compaction_audit.report.bounded import EPISODES_PER_RULE, most_severe
from compaction_audit.report.formats import RenderOptions, rules_of
from compaction_audit.report.gaps import gap_cases, gaps_fail
from compaction_audit.report.lines import line_at, lines_span
from compaction_audit.report.model import Report, SessionReport, fails
from compaction_audit.report.safe import printable
from compaction_audit.report.summary import ends, episodes, grown_prefix
from compaction_audit.report.summary import said as said_in_episode
from compaction_audit.rules.base import Finding, Rule


def xml_text(text: object) -> str:
    """Untrusted text as one line valid in XML 1.0 (newlines and controls made
    visible, bounded: :func:`printable`)."""
    return printable(text).replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")


def xml_lines(lines: Iterable[object]) -> str:
    """Untrusted lines, each made :func:`xml_text`, joined by newlines."""
    return "\n".join(xml_text(line) for line in lines)


def _episode_text(run: list[Finding], grown: dict[int, dict[str, Any]] | None = None) -> str:
    """One episode: where (rounds, lines, findings), severity, the first message (and
    the last one when it differs), the action; a baselined finding that now loses more
    (``grown``: :func:`~compaction_audit.baseline.grown_findings`) says that first."""
    f, last = ends(run)
    rounds = len({x.round for x in run})
    several = f", {len(run)} findings" if len(run) > 1 else ""
    lines_of = lines_span(f.line, f.line_file, last.line, last.line_file, str)
    where = (f"round {f.round} ({line_at(f.line, f.line_file, str)}{several})" if rounds == 1
             else f"rounds {f.round}-{last.round} ({lines_of}{several})")
    lines = [f"{where} {f.severity.value}: {grown_prefix(grown or {}, f)}{f.message}"]
    if last.message != f.message:
        top = max((x.severity for x in run), key=lambda s: s.rank)
        lines.append(f"  last: {said_in_episode(last, top)}")
    return xml_lines([*lines, f"  action: {what_to_do(f, last)}"])


def _episodes_text(found: list[Finding], show_all: bool,
                   grown: dict[int, dict[str, Any]]) -> str:
    """The episodes of ``found`` (one rule's findings), at most
    :data:`~compaction_audit.report.bounded.EPISODES_PER_RULE`, the most severe
    (:func:`~compaction_audit.report.bounded.most_severe`), unless ``show_all``."""
    runs = list(episodes(found)) if not show_all else [[f] for f in found]
    shown = runs if show_all else most_severe(runs, EPISODES_PER_RULE)[0]
    text = [_episode_text(run, grown) for run in shown]
    if len(runs) > len(shown):
        text.append(f"and {len(runs) - len(shown)} more episodes (--all lists them)")
    return "\n".join(text)


def _case(parent: ET.Element, s: SessionReport, code: str, name: str, found: list[Finding],
          fail_on: str, show_all: bool, unjudged: str | None = None,
          grown: dict[int, dict[str, Any]] | None = None) -> bool:
    """The test case of rule ``code`` in trace ``s``: a failure for its findings
    ``found`` at or above ``fail_on``, skipped when it judged nothing (``unjudged``, the
    reason: :meth:`SessionReport.unjudged_reasons`), else passed.  Returns whether it
    failed.  Linear in ``found`` (adv33: the findings below ``fail_on`` were those not
    in the list of failing ones, found x failing comparisons: 104 s for 10,000)."""
    path = xml_text(s.path)
    case = ET.SubElement(parent, "testcase", classname=path, name=f"{code} {name}",
                         file=path)
    failing = [f for f in found if fails(f.severity, fail_on)]
    rest = [f for f in found if not fails(f.severity, fail_on)]
    if failing:
        runs = list(dict.fromkeys(  # each round or range once: a broken rule's
            # findings are episodes of their own, several at one round (adv120 #6)
            str(run[0].round) if run[0].round == run[-1].round  # two folds at one round
            else f"{run[0].round}-{run[-1].round}"  # read "35-35" (usertest25 #2)
            for run in episodes(failing)))
        rounds = ", ".join(runs[:10])
        more = f" and {len(runs) - 10} more" if len(runs) > 10 else ""
        failure = ET.SubElement(case, "failure", type=failing[0].severity.value,
                                message=f"{len(failing)} finding(s) of {name} at "
                                        f"round(s) {rounds}{more}")
        failure.text = _episodes_text(failing, show_all, grown or {})
    if rest:
        ET.SubElement(case, "system-out").text = _episodes_text(rest, show_all, grown or {})
    if not found and unjudged:  # a rule that judged no round is skipped, not passed
        ET.SubElement(case, "skipped", message=xml_text(unjudged))
    return bool(failing)


def _session_suite(root: ET.Element, s: SessionReport, rules: list[Rule], fail_on: str,
                   show_all: bool, config: str | None = None) -> tuple[int, int, int]:
    suite = ET.SubElement(root, "testsuite", name=xml_text(s.path))
    if s.cosine or config is not None or s.suppressed() or s.baselined():
        props = ET.SubElement(suite, "properties")
        if config is not None:  # the configuration file used (adv24 F5)
            ET.SubElement(props, "property", name="config", value=xml_text(config))
        if s.suppressed():  # silenced by [[suppress]]: said where CI reads (adv31 N6)
            ET.SubElement(props, "property", name="suppressed",
                          value=f"{s.suppressed()} finding(s) suppressed by [[suppress]]")
        if s.baselined():  # held back by --baseline: the debt a clean suite carries
            ET.SubElement(props, "property", name="baselined",  # (usertest63 #5)
                          value=f"{s.baselined()} finding(s) in the baseline")
        if s.cosine:  # which salience series each rule read (issue 16)
            ET.SubElement(props, "property", name="cosine", value=xml_text(s.cosine_line()))
    cases = {r.code: r.name for r in rules}
    for f in s.findings:  # a finding of a rule not listed still gets its case
        cases.setdefault(f.code, f.rule)
    unjudged = s.unjudged_reasons()
    by_code: dict[str, list[Finding]] = {}
    for f in s.findings:
        by_code.setdefault(f.code, []).append(f)
    grown = grown_findings(s)  # baselined fold findings that now lose more (usertest17)
    failures = sum(_case(suite, s, code, name, by_code.get(code, []), fail_on, show_all,
                         unjudged.get(code), grown)
                   for code, name in cases.items())
    if s.skipped:  # --lenient: the records it skipped, as one errored case
        case = ET.SubElement(suite, "testcase", classname=xml_text(s.path),
                             name="skipped records (--lenient)", file=xml_text(s.path))
        error = ET.SubElement(case, "error", type="skipped",
                              message=f"{len(s.skipped)} bad record(s) skipped")
        error.text = xml_lines(s.skipped)
    cases_of_gaps = gap_cases(s)
    # a gap counts as a warning for the gate (SessionReport.fails): a failed case when
    # --fail-on reaches it, as the exit code says (adv38), else skipped, never green
    gap_fails = gaps_fail(fail_on)
    for name, said, found in cases_of_gaps:
        case = ET.SubElement(suite, "testcase", classname=xml_text(s.path),  # (docs/ci.md;
                             name=name, file=xml_text(s.path))  # lines not read: adv29 F2)
        skip = (ET.SubElement(case, "failure", type="not checked", message=said) if gap_fails
                else ET.SubElement(case, "skipped", message=said))
        failures += gap_fails
        skip.text = "\n".join(xml_text(g.message + (f" ({line_at(g.line, g.line_file)})"
                                                    if g.line > 0 else ""))
                              for g in found)
    if s.limits:  # checks that stopped at their cap (issue 11, class 5)
        ET.SubElement(suite, "system-out").text = "\n".join(
            xml_text(x.message()) for x in s.limits)
    tests = len(cases) + bool(s.skipped) + len(cases_of_gaps)
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(int(bool(s.skipped))))
    suite.set("skipped", str(len(suite.findall("testcase/skipped"))))
    return tests, failures, int(bool(s.skipped))


def _error_suite(root: ET.Element, err: LogError) -> None:
    path = xml_text(err.path)
    suite = ET.SubElement(root, "testsuite", name=path, tests="1", failures="0",
                          errors="1", skipped="0")
    case = ET.SubElement(suite, "testcase", classname=path, name="read", file=path)
    error = ET.SubElement(case, "error", type="unreadable", message=xml_text(err.message))
    error.text = xml_text(str(err))


def render_junit(report: Report, opts: RenderOptions) -> bytes:
    """The report as a JUnit XML document (UTF-8 bytes with an XML declaration)."""
    root = ET.Element("testsuites", name="compaction-audit")
    rules = rules_of(opts)
    tests = failures = errors = 0
    for s in report.sessions:
        n, f, e = _session_suite(root, s, rules, opts.fail_on, opts.show_all,
                                 report.config)
        tests, failures, errors = tests + n, failures + f, errors + e
    for err in report.errors:
        _error_suite(root, err)
    root.set("tests", str(tests + len(report.errors)))
    root.set("failures", str(failures))
    root.set("errors", str(errors + len(report.errors)))
    root.set("skipped", str(len(root.findall("testsuite/testcase/skipped"))))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
