"""GitHub Actions workflow commands: annotations on the round records of the trace files.

One ``::error`` / ``::warning`` / ``::notice`` command per episode: a rule firing on
consecutive rounds of one trace, whatever item each finding is about (a fold rule
firing on ten folds over three rounds is one annotation), at ``file=`` the trace path
and ``line=`` (``endLine=``) the lines of its first (last) round record; when that line
is one of another file read for the trace (a Cline compaction file given: ``line_file``),
``file=`` is that file (no ``endLine=`` when the last line is in another file).

GitHub shows at most 10 annotations of each kind (error, warning, notice) per step.
So a run writes at most :data:`PER_STEP` of each kind, all traces together
(:func:`_allotted`): each trace's first in turn, then each one's second (within a
trace every rule's first episode before any rule's second, the most severe rules
first), and when more remain, the last slot is one summary annotation counting the
rest by rule; the failing traces left with no annotation are named in one plain line.
Skipped records (``--lenient``) and checks stopped at their cap are warnings within
the same budget.  The whole report
goes to the job summary (:func:`step_summary`).  An unreadable trace is an
``::error`` at its file (and line, when known).  A compaction that could not be checked
is a ``::notice`` titled ``compaction not checked`` at its line, and lines the reader did
not read one titled ``lines not read`` at the trace (:mod:`compaction_audit.report.gaps`);
both are ``::warning`` where ``--fail-on warning`` (or ``info``) counts them against the
gate.
The last line is the gate's result as plain log text.

Escaping follows GitHub's rules: in the message ``%`` -> ``%25``, CR -> ``%0D``,
LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.  Text is made
:func:`printable` first, so a control character cannot reach the log.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, NamedTuple

from compaction_audit.baseline import grown_findings, trace_key
from compaction_audit.report.advice import what_to_do
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.gaps import LINES, gaps, gaps_fail
from compaction_audit.report.lines import fact_line, line_path
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import neutralize, printable
from compaction_audit.report.summary import (
    ends,
    episodes,
    gate_line,
    grown_prefix,
    said,
    stale_lines,
)
from compaction_audit.rules.base import Finding

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
PER_STEP = 10
"""Annotations of one kind per step, all traces together: GitHub displays 10 errors,
10 warnings and 10 notices per step (docs.github.com, "Workflow commands", annotation
limits)."""
NAMED = 20
"""Failing traces without an annotation named in the plain line under them."""
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
    rule's first episode of that severity before any rule's second (usertest71 #2: a
    rule's one error after three of its warnings came after every other rule's second
    error, and got no slot), then the rules whose findings are
    acts to undo (a rule broken or reversed: not :attr:`~compaction_audit.rules.base.
    Rule.episodic`) before the others (usertest63 #4: compaction drift, "continue and
    monitor", took a slot a broken rule did not get), then code and round."""
    from compaction_audit.rules.base import episodic

    nth: Counter[tuple[str, int]] = Counter()
    keyed = []
    for run in runs:
        first = run[0]
        rank = max(f.severity.rank for f in run)
        keyed.append((-rank, nth[first.code, rank], episodic(first.code), first.code,
                      first.round, run))
        nth[first.code, rank] += 1
    return [k[-1] for k in sorted(keyed, key=lambda k: k[:5])]


def _episode_command(path: str, run: list[Finding],
                     grown: dict[int, dict[str, Any]] | None = None) -> str:
    """An episode's annotation; one the baseline holds that now loses more facts
    (``grown``: :func:`~compaction_audit.baseline.grown_findings`) says first what is
    new (usertest16 #6)."""
    first, last = ends(run)
    rounds = len({f.round for f in run})
    where = (f"round {first.round}" if rounds == 1 else
             f"rounds {first.round}-{last.round}")
    items = f", {len(run)} findings" if len(run) > 1 else ""  # as the verdict counts
    props: dict[str, object] = {"file": line_path(path, first.line_file), "line": first.line}
    if last.line != first.line and last.line_file == first.line_file:
        props["endLine"] = last.line
    props["title"] = f"{first.code} {first.rule} ({where}{items})"
    top = max((f.severity for f in run), key=lambda v: v.rank)
    return command(worst(run), f"{grown_prefix(grown or {}, first)}{said(first, top)}. What to do: "
                   f"{what_to_do(first, last)}", **props)


ANSWERED = "answered from the summary"
"""The title of an answer's notice (:func:`_answer_notes`), and what the summary of
the annotations left out counts it as."""


class _Note(NamedTuple):
    """One annotation that may get a slot: its command line, what the summary of the
    rest counts it as (a rule code, or a gap's title), whether it is an episode, and
    where it points (the summary annotation names the file of the first one left out
    when all are of one trace)."""

    line: str
    counted: str
    episode: bool
    file: str
    at: int


def _rest_command(kind: str, first: _Note, rest: list[_Note], traces: int) -> str:
    """The summary annotation of the annotations of one kind that got no slot: at the
    file of ``first`` (the first of them in the turn order) when they are of one trace,
    at no file and no line when they are of several."""
    by_what = Counter(n.counted for n in rest)
    counted = ", ".join(f"{what} x{n}" for what, n in sorted(by_what.items()))
    noun = "episode(s)" if all(n.episode for n in rest) else "annotation(s)"
    where = "this trace" if traces == 1 else f"{traces} traces"
    # on one trace: its file, no line; on several: no file (usertest17 #9: pinned to
    # the first one left out, it read in a pull request as a finding on that line)
    place = {"file": first.file} if traces == 1 else {}
    # SARIF holds findings and gaps, not the answers from the summary (adv145 F6)
    lists = ("the text, JSON or Markdown reports list them" if any(
        n.counted == ANSWERED for n in rest) else
        "the job summary and the text, JSON or SARIF reports list them")
    return command(kind, f"{len(rest)} more {kind} {noun} in {where}: {counted}; {lists}",
                   **place, title=f"{len(rest)} more {kind} {noun}")


def _gap_notes(path: str, s: SessionReport, kind: str = "notice") -> list[_Note]:
    """The annotations (``kind``: ``notice``, or ``warning`` where the gate counts them)
    of what the audit of ``s`` could not cover
    (:func:`~compaction_audit.report.gaps.gaps`): the lines not read first (adv29 F2),
    then each compaction that could not be checked."""
    found = sorted(gaps(s), key=lambda g: g.case != LINES[1])  # a stable sort
    return [_Note(command(kind, g.message, file=line_path(path, g.line_file),
                          **({"line": g.line} if g.line > 0 else {}), title=g.title),
                  g.title, False, line_path(path, g.line_file), g.line) for g in found]


def _answer_notes(path: str, s: SessionReport) -> list[_Note]:
    """A notice at each line where the assistant answered a question about lost facts
    without reading them again (``answered_line`` of the lost lists: an answer from the
    summary, the verdict's "answered from the summary (line 22)"), naming the first
    fact, where it was lost and where the person asked: the line to check in a pull
    request, not only the compaction's (usertest75 F8)."""
    by_line: dict[tuple[str | None, int], list[tuple[dict[str, Any], Any]]] = {}
    for c in s.compactions:
        for d in c.get("lost") or []:
            if isinstance(d, dict) and isinstance(d.get("answered_line"), int):
                by_line.setdefault((d.get("answered_file"), d["answered_line"]),
                                   []).append((d, c.get("line")))
    out = []
    for (file, line), facts in by_line.items():
        d, lost_at = facts[0]
        asked = d.get("asked_again_line")
        more = f" and {len(facts) - 1} more lost fact(s)" if len(facts) > 1 else ""
        where = line_path(path, file)
        # lines of other files than the annotated one are named with their file
        lost_where = fact_line(lost_at, os.path.basename(path) if file else None)
        asked_where = fact_line(asked, d.get("asked_again_file"))
        message = (f"answered from the summary without reading it again: {d.get('kind')} "
                   f"{str(d.get('text'))[:200]!r}{more}, lost at the compaction"
                   + (f" at {lost_where}" if lost_where else "")
                   + (f", asked again at {asked_where}" if asked_where else "")
                   + "; check this answer against the fact")
        out.append(_Note(command("notice", message, file=where, line=line,
                                 title=ANSWERED), ANSWERED, False, where, line))
    return out


def session_notes(s: SessionReport, fail_on: str = "error") -> dict[str, list[_Note]]:
    """The annotations of one trace by kind, each kind in the order its slots go: every
    rule's first episode before any rule's second (the most severe first); the
    notices what could not be covered (its lines not read, then the answers from the
    summary, :func:`_answer_notes`, then its first notice episode, then its unchecked
    compactions, then the other notice episodes).  Where
    ``fail_on`` counts what could not be covered (``warning`` or ``info``: it fails the
    gate, :meth:`SessionReport.fails`), those are warnings, ahead of the others: a red
    job shows why (usertest14: a ``::notice`` and "PASS" above an exit 1)."""
    path = trace_key(s.path)
    out: dict[str, list[_Note]] = {k: [] for k in COMMANDS.values()}
    grown = grown_findings(s)
    for run in _priority(list(episodes(s.findings))):
        first = run[0]
        out[worst(run)].append(_Note(_episode_command(path, run, grown), first.code, True,
                                     line_path(path, first.line_file), first.line))
    counted = gaps_fail(fail_on)
    gap = _gap_notes(path, s, "warning" if counted else "notice")
    answers = _answer_notes(path, s)
    if not counted:
        lines = [n for n in gap if n.counted == LINES[0]]
        out["notice"] = (lines + answers + out["notice"][:1]
                         + [n for n in gap if n.counted != LINES[0]] + out["notice"][1:])
    else:
        out["notice"] = answers + out["notice"]
    out["warning"] = ((gap if counted else []) + _limit_notes(path, s) + out["warning"][:1]
                      + _skipped_notes(s) + out["warning"][1:])
    return out


def _limit_notes(path: str, s: SessionReport) -> list[_Note]:
    """A warning per check that stopped at its cap (issue 11, class 5)."""
    out = []
    for x in s.limits:
        where = line_path(path, s.file_of_round(x.round))
        out.append(_Note(command("warning", x.message(), file=where, line=x.line or 1,
                                 title="check stopped early"),
                         "check stopped early", False, where, x.line or 1))
    return out


def _skipped_notes(s: SessionReport) -> list[_Note]:
    """A warning per record ``--lenient`` skipped; past :data:`PER_STEP` (no trace
    gets more slots) only counted, without a command line."""
    return [_Note(command("warning", f"skipped (--lenient): {e.message}",
                          file=trace_key(e.path), line=e.line, title="skipped record")
                  if k < PER_STEP else "", "skipped record", False, trace_key(e.path), e.line)
            for k, e in enumerate(s.skipped)]


def _allotted(kind: str, groups: list[list[_Note]], cap: int = PER_STEP
              ) -> tuple[list[str], set[int]]:
    """At most ``cap`` annotations of ``kind`` for the whole step, shared across the
    traces (``groups``, one list each, in report order): each trace's first, then each
    one's second, and so on; when more remain, the last slot counts them.  Also the
    indices of the groups that got a slot (those whose first one is shown)."""
    room = cap if sum(map(len, groups)) <= cap else cap - 1
    turns: list[_Note] = []  # the turn order, as far as the first one left out
    for rank in range(cap):
        turns += [group[rank] for group in groups if rank < len(group)]
        if len(turns) > room:
            break
    kept = set(map(id, turns[:room]))
    # shown in each trace's own order: a trace's annotations stay together
    lines = [n.line for group in groups for n in group[:cap] if id(n) in kept]
    got = {i for i, group in enumerate(groups) if group and id(group[0]) in kept}
    if len(turns) <= room:
        return lines, got
    left = [[n for n in group if id(n) not in kept] for group in groups]
    rest = [n for group in left for n in group]
    return [*lines, _rest_command(kind, turns[room], rest, sum(map(bool, left)))], got


def render_github(report: Report, opts: RenderOptions) -> bytes:
    """The report as workflow command lines (UTF-8 bytes): each kind's annotations
    shared across the traces (:func:`_allotted`), an unreadable trace's error first."""
    unreadable = [[_Note(command("error", str(e), file=trace_key(e.path),
                                 **({"line": e.line} if e.line else {}),
                                 title="unreadable trace"),
                         "unreadable trace", False, trace_key(e.path), e.line)]
                  for e in report.errors]
    notes = [session_notes(s, opts.fail_on) for s in report.sessions]
    lines: list[str] = []
    seen: set[int] = set()  # traces with an annotation: unreadable ones, then sessions
    for kind in COMMANDS.values():
        first = unreadable if kind == "error" else [[] for _ in unreadable]
        shown, got = _allotted(kind, first + [n[kind] for n in notes])
        lines += shown
        seen |= got
    failing = [trace_key(e.path) for i, e in enumerate(report.errors) if i not in seen]
    failing += [trace_key(s.path) for i, s in enumerate(report.sessions, len(unreadable))
                if i not in seen and s.fails(opts.fail_on)]
    if failing:  # named in the log, plainly: no annotation slot was left for them
        lines.append(neutralize(printable(
            f"not annotated (GitHub shows 10 of each kind per step): {len(failing)} "
            f"failing trace(s): {', '.join(failing[:NAMED])}"
            + (f" and {len(failing) - NAMED} more" if len(failing) > NAMED else "")
            + "; the job summary lists every one")))
    if report.config is not None:  # a checkout's fail-on = "never" is said (adv24 F5)
        lines.append(f"config: {printable(report.config)}")
    # the baseline's lines, as the text report says them: a trace named otherwise than
    # when the baseline was made brought every accepted finding back, and the gate
    # format said nothing of why (usertest32 #5)
    lines += [neutralize(printable(line)) for line in stale_lines(report, opts.show_all)]
    lines.append(gate_line(report, opts.fail_on))
    return ("\n".join(lines) + "\n").encode("utf-8")
