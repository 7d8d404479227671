"""GitHub Actions workflow commands: annotations on the round records of the trace files.

One ``::error`` / ``::warning`` / ``::notice`` command per episode (a rule firing on
consecutive rounds), at ``file=`` the trace path and ``line=`` (``endLine=``) the lines
of its first (last) round record; GitHub shows only the first few annotations of a
step, so one per episode rather than per round keeps distinct problems visible.  An
unreadable trace is an ``::error`` at its file (and line, when known).  The last line
is the gate's result as plain log text.

Escaping follows GitHub's rules: in the message ``%`` -> ``%25``, CR -> ``%0D``,
LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.  Text is made
:func:`printable` first, so a control character cannot reach the log.
"""

from __future__ import annotations

from compaction_audit.baseline import trace_key
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.model import Report
from compaction_audit.report.safe import printable
from compaction_audit.report.summary import episodes, gate_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


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


def render_github(report: Report, opts: RenderOptions) -> bytes:
    """The report as workflow command lines (UTF-8 bytes)."""
    lines: list[str] = []
    for s in report.sessions:
        path = trace_key(s.path)
        for run in episodes(s.findings):
            first, last = run[0], run[-1]
            where = (f"round {first.round}" if len(run) == 1 else
                     f"rounds {first.round}-{last.round}")
            props: dict[str, object] = {"file": path, "line": first.line}
            if last.line != first.line:
                props["endLine"] = last.line
            props["title"] = f"{first.code} {first.rule} ({where})"
            lines.append(command(COMMANDS[first.severity.value],
                                 f"{first.message}. What to do: {first.action}", **props))
        for c in s.compactions:
            if c.get("lost_checked") is False:
                why = c.get("not_checked_reason") or "no summary text"
                lines.append(command("notice", f"compaction at round {c['round']} could not "
                                     f"be checked: {why} summary", file=path,
                                     line=c.get("line") or 1,
                                     title="compaction not checked"))
    for e in report.errors:
        props = {"file": trace_key(e.path), **({"line": e.line} if e.line else {}),
                 "title": "unreadable trace"}
        lines.append(command("error", str(e), **props))
    for s in report.sessions:
        for e in s.skipped:
            lines.append(command("warning", f"skipped (--lenient): {e.message}",
                                 file=trace_key(e.path), line=e.line,
                                 title="skipped record"))
    lines.append(gate_line(report, opts.fail_on))
    return ("\n".join(lines) + "\n").encode("utf-8")
