"""The JUnit XML report: one test suite per trace, one test case per trace and rule.

A test case fails when the rule has a finding at or above ``--fail-on`` in that trace;
the ``<failure>`` lists every finding (round, line, severity, message, action).
Findings below the threshold go to the case's ``<system-out>``.  An unreadable trace
is a suite with one ``read`` case in error.  Test case names are ``CODE name``,
class names the trace path, and ``file`` the trace path (GitLab shows it).

Text goes through :func:`printable` (XML 1.0 cannot carry most control characters,
even escaped) and then ElementTree, which escapes markup.  Untrusted text never keeps a
newline (``\\n``): the only line breaks in element text are the report's own, between
findings, so no line of the file starts with log text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from compaction_audit.errors import LogError
from compaction_audit.report.formats import RenderOptions, rules_of
from compaction_audit.report.model import Report, SessionReport, fails
from compaction_audit.report.safe import printable
from compaction_audit.rules.base import Finding, Rule


def xml_text(text: object) -> str:
    """Untrusted text as one line valid in XML 1.0 (newlines and controls made
    visible, bounded: :func:`printable`)."""
    return printable(text).replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")


def xml_lines(lines: Iterable[object]) -> str:
    """Untrusted lines, each made :func:`xml_text`, joined by newlines."""
    return "\n".join(xml_text(line) for line in lines)


def _finding_text(f: Finding) -> str:
    return xml_lines([f"round {f.round} (line {f.line}) {f.severity.value}: {f.message}",
                      f"  action: {f.action}"])


def _case(parent: ET.Element, s: SessionReport, code: str, name: str, fail_on: str) -> bool:
    found = [f for f in s.findings if f.code == code]
    path = xml_text(s.path)
    case = ET.SubElement(parent, "testcase", classname=path, name=f"{code} {name}",
                         file=path)
    failing = [f for f in found if fails(f.severity, fail_on)]
    if failing:
        rounds = ", ".join(str(f.round) for f in failing[:10])
        more = f" and {len(failing) - 10} more" if len(failing) > 10 else ""
        failure = ET.SubElement(case, "failure", type=failing[0].severity.value,
                                message=f"{len(failing)} finding(s) of {name} at "
                                        f"round(s) {rounds}{more}")
        failure.text = "\n".join(_finding_text(f) for f in failing)
    rest = [f for f in found if f not in failing]
    if rest:
        ET.SubElement(case, "system-out").text = "\n".join(_finding_text(f) for f in rest)
    return bool(failing)


def _session_suite(root: ET.Element, s: SessionReport, rules: list[Rule], fail_on: str
                   ) -> tuple[int, int, int]:
    suite = ET.SubElement(root, "testsuite", name=xml_text(s.path))
    if s.cosine:  # which salience series each rule read (issue 16)
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="cosine",
                      value=xml_text(s.cosine_line()))
    cases = {r.code: r.name for r in rules}
    for f in s.findings:  # a finding of a rule not listed still gets its case
        cases.setdefault(f.code, f.rule)
    failures = sum(_case(suite, s, code, name, fail_on) for code, name in cases.items())
    if s.skipped:  # --lenient: the records it skipped, as one errored case
        case = ET.SubElement(suite, "testcase", classname=xml_text(s.path),
                             name="skipped records (--lenient)", file=xml_text(s.path))
        error = ET.SubElement(case, "error", type="skipped",
                              message=f"{len(s.skipped)} bad record(s) skipped")
        error.text = xml_lines(s.skipped)
    suite.set("tests", str(len(cases) + bool(s.skipped)))
    suite.set("failures", str(failures))
    suite.set("errors", str(int(bool(s.skipped))))
    suite.set("skipped", "0")
    return len(cases) + bool(s.skipped), failures, int(bool(s.skipped))


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
        n, f, e = _session_suite(root, s, rules, opts.fail_on)
        tests, failures, errors = tests + n, failures + f, errors + e
    for err in report.errors:
        _error_suite(root, err)
    root.set("tests", str(tests + len(report.errors)))
    root.set("failures", str(failures))
    root.set("errors", str(errors + len(report.errors)))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
