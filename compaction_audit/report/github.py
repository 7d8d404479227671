"""GitHub Actions workflow commands: annotations on the round records of the trace files.

One ``::error`` / ``::warning`` / ``::notice`` command per episode: a rule firing on
consecutive rounds of one trace, whatever item each finding is about (a fold rule
firing on ten folds over three rounds is one annotation), at ``file=`` the trace path
and ``line=`` (``endLine=``) the lines of its first (last) round record; when that line
is one of another file read for the trace (a Cline compaction file given: ``line_file``),
``file=`` is that file (no ``endLine=`` when the last line is in another file).

GitHub shows at most 10 annotations of each kind (error, warning, notice) per step.
So each file gets at most :data:`PER_FILE` of each kind: every rule's first episode
before any rule's second (the most severe rules first), and when more remain, the
last slot is one summary annotation counting the rest by rule.  The whole report
goes to the job summary (:func:`step_summary`).  An unreadable trace is an
``::error`` at its file (and line, when known).  A compaction that could not be checked
is a ``::notice`` titled ``compaction not checked`` at its line, and lines the reader did
not read one titled ``lines not read`` at the trace (:mod:`compaction_audit.report.gaps`).
The last line is the gate's result as plain log text.

Escaping follows GitHub's rules: in the message ``%`` -> ``%25``, CR -> ``%0D``,
LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.  Text is made
:func:`printable` first, so a control character cannot reach the log.
"""

from __future__ import annotations

from collections import Counter

from compaction_audit.baseline import trace_key
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.gaps import LINES, gaps
from compaction_audit.report.model import Report, SessionReport, line_path
from compaction_audit.report.safe import printable
from compaction_audit.report.summary import episodes, gate_line
from compaction_audit.rules.base import Finding

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
PER_FILE = 10
"""Annotations of one kind per trace file: GitHub displays 10 errors, 10 warnings and
10 notices per step (docs.github.com, "Workflow commands", annotation limits)."""
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
"""The environment variable naming the job-summary file the runner renders."""


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: object) -> str:
    """One workflow command line, ``::kind k=v,...::message``; values and message are
    untrusted text (made printable, then escaped)."""
    args = ",".join(f"{k}={escape_property(printable(v))}" for k, v in props.items())
    return f"::{kind}{' ' + args if args else ''}::{escape_data(printable(message))}"


def worst(run: list[Finding]) -> str:
    """The kind of an episode: the command of its most severe finding."""
    return COMMANDS[max((f.severity for f in run), key=lambda v: v.rank).value]


def _priority(runs: list[list[Finding]]) -> list[list[Finding]]:
    """Episodes in the order they get a slot: by severity (worst first), then each
    rule's first episode before any rule's second, then code and round."""
    nth: Counter[str] = Counter()
    keyed = []
    for run in runs:
        first = run[0]
        rank = max(f.severity.rank for f in run)
        keyed.append((-rank, nth[first.code], first.code, first.round, run))
        nth[first.code] += 1
    return [k[-1] for k in sorted(keyed, key=lambda k: k[:4])]


def _episode_command(path: str, run: list[Finding]) -> str:
    first, last = run[0], run[-1]
    rounds = len({f.round for f in run})
    where = (f"round {first.round}" if rounds == 1 else
             f"rounds {first.round}-{last.round}")
    items = f", {len(run)} findings" if len(run) > 1 else ""  # as the verdict counts
    props: dict[str, object] = {"file": line_path(path, first.line_file), "line": first.line}
    if last.line != first.line and last.line_file == first.line_file:
        props["endLine"] = last.line
    props["title"] = f"{first.code} {first.rule} ({where}{items})"
    return command(worst(run), f"{first.message}. What to do: {first.action}", **props)


def _rest_command(kind: str, path: str, rest: list[list[Finding]]) -> str:
    """The summary annotation of the episodes of one kind that got no slot."""
    by_rule = Counter(run[0].code for run in rest)
    counted = ", ".join(f"{code} x{n}" for code, n in sorted(by_rule.items()))
    first = min(rest, key=lambda run: run[0].round)[0]
    return command(kind, f"{len(rest)} more {kind} episode(s) in this trace: {counted}; "
                   "the job summary and the text, JSON or SARIF reports list them",
                   file=line_path(path, first.line_file), line=first.line,
                   title=f"{len(rest)} more {kind} episode(s)")


def _gap_notices(path: str, s: SessionReport, cap: int) -> list[str]:
    """The notices of what the audit of ``s`` could not cover
    (:func:`~compaction_audit.report.gaps.gaps`), at most ``cap``: the lines not read
    first (one notice at the trace, never cut), then each compaction that could not be
    checked, the last slot counting the rest (12 opaque compactions cut the notice of
    lines not read, and took an episode's slot: adv29 F2)."""
    found = sorted(gaps(s), key=lambda g: g.case != LINES[1])  # a stable sort
    if len(found) > cap:
        rest = found[cap - 1:]
        first = rest[0]
        summary = command("notice", f"{len(rest)} more compaction(s) in this trace could "
                          "not be checked; the job summary and the text, JSON or SARIF "
                          "reports list them", file=line_path(path, first.line_file),
                          **({"line": first.line} if first.line > 0 else {}),
                          title=f"{len(rest)} more compaction(s) not checked")
        found = found[:cap - 1]
    else:
        summary = None
    return [command("notice", g.message, file=line_path(path, g.line_file),
                    **({"line": g.line} if g.line > 0 else {}), title=g.title)
            for g in found] + ([summary] if summary else [])


def session_commands(s: SessionReport) -> list[str]:
    """The annotations of one trace: its episodes, at most :data:`PER_FILE` of each
    kind (the last slot summarizing the rest), then what could not be covered (its
    lines not read and unchecked compactions: :func:`_gap_notices`), as notices within
    the same limit, one slot left for the notice episodes when there are any."""
    path = trace_key(s.path)
    by_kind: dict[str, list[list[Finding]]] = {k: [] for k in COMMANDS.values()}
    for run in _priority(list(episodes(s.findings))):
        by_kind[worst(run)].append(run)
    notices = _gap_notices(path, s, PER_FILE - bool(by_kind["notice"]))
    lines: list[str] = []
    for kind, runs in by_kind.items():
        extra = notices if kind == "notice" else []
        room = PER_FILE - len(extra)
        if len(runs) > room:
            lines += [_episode_command(path, run) for run in runs[:room - 1]]
            lines.append(_rest_command(kind, path, runs[room - 1:]))
        else:
            lines += [_episode_command(path, run) for run in runs]
        lines += extra
    return lines


def render_github(report: Report, opts: RenderOptions) -> bytes:
    """The report as workflow command lines (UTF-8 bytes)."""
    lines: list[str] = []
    for s in report.sessions:
        lines += session_commands(s)
    for e in report.errors:
        props = {"file": trace_key(e.path), **({"line": e.line} if e.line else {}),
                 "title": "unreadable trace"}
        lines.append(command("error", str(e), **props))
    for s in report.sessions:
        for e in s.skipped[:PER_FILE]:
            lines.append(command("warning", f"skipped (--lenient): {e.message}",
                                 file=trace_key(e.path), line=e.line,
                                 title="skipped record"))
        for x in s.limits:  # a check that stopped at its cap (issue 11, class 5)
            where = line_path(trace_key(s.path), s.file_of_round(x.round))
            lines.append(command("warning", x.message(), file=where,
                                 line=x.line or 1, title="check stopped early"))
        if len(s.skipped) > PER_FILE:
            lines.append(command("warning", f"{len(s.skipped) - PER_FILE} more skipped "
                                 "record(s)", file=trace_key(s.path),
                                 title="skipped records"))
    if report.config is not None:  # a checkout's fail-on = "never" is said (adv24 F5)
        lines.append(f"config: {printable(report.config)}")
    lines.append(gate_line(report, opts.fail_on))
    return ("\n".join(lines) + "\n").encode("utf-8")
