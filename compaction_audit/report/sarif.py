"""The SARIF 2.1.0 report, for code scanning (GitHub upload-sarif and other consumers).

One run.  The driver lists the rules that ran, each with its documentation from
:mod:`compaction_audit.ruledoc` (id = code, name, short and full description, help in
text and Markdown, default level).  Each finding is one result located at the trace
file (``artifactLocation.uri``: the path as given, relative to the working directory,
percent-encoded) and the line of its round record (``region.startLine``); when that
line is one of another file read for the trace (``line_file``: a Cline compaction file
given, its earlier rounds are lines of the messages file beside it), the location is
that file (:func:`~compaction_audit.report.lines.line_path`).  Its
``partialFingerprints["compactionAudit/v2"]`` hashes the baseline identity (trace, rule,
entity or episode) with the round number, so that every result has its own, and what a
fold lost or a summary states (the baseline entry's ``facts``), so that a result whose
fold now loses another fact is another result (adv103 #3: an alert dismissed on a fold
that lost a port matched the same fold losing "Never run ... --force"; v1 left them
out); the
baseline fingerprint, the round and the values are in ``properties``.  Findings that
repeat round after round are one result (issue 14, section 3): an episode
(:func:`~compaction_audit.report.bounded.episode_dict`) located at its first round,
with ``count``, ``rounds`` and ``lastRound`` in ``properties`` (and ``lastRehydrate``,
the last round's rehydration advice where it differs from the first's; the message
ends with it after the action: :func:`~compaction_audit.report.advice.what_to_do`); at most
:data:`~compaction_audit.report.bounded.EPISODES_PER_RULE` per rule and trace, the rest
counted in a ``note`` notification of the invocation; ``--all``: one result per finding.
Under ``--baseline`` each result has a ``baselineState``: "new", "updated" (a baselined
fold that now loses more) or "unchanged" (a finding the baseline holds back: listed, so
that code scanning does not close its alert as fixed).
Results are ordered errors first, then warnings, then notes (within a level by first
round, then rule code), as a reader of a viewer that keeps the file's order wants them.  Unreadable
traces are error notifications of the invocation, which is then not successful; a
compaction that could not be checked, and lines the reader did not read, are ``note``
notifications (:mod:`compaction_audit.report.gaps`).
Severities map info -> ``note``.

Log text is made :func:`printable` (bounded, invisible characters escaped) or
:func:`clip_tree` d, and serialized by orjson (JSON-escaped); a file name's undecodable
bytes are percent-encoded in the URI as themselves.  Every ``message.text`` is a plain
text message (:func:`plain`): its ``[`` and ``]`` are escaped with a backslash, as
SARIF 2.1.0 section 3.11.6 asks of literal brackets (and so is a backslash before
one), so that a span id or text written ``[Details](https://...)`` is no embedded link
a viewer renders (adv108 #3).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from compaction_audit import __version__
from compaction_audit.baseline import (
    fingerprint,
    grown_findings,
    session_entries,
    trace_key,
)
from compaction_audit.report.advice import what_to_do
from compaction_audit.report.bounded import bounded_episodes, episode_dict
from compaction_audit.report.formats import RenderOptions, rules_of
from compaction_audit.report.gaps import gaps, gaps_fail
from compaction_audit.report.lines import line_path
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import clip_tree, json_safe, printable
from compaction_audit.report.summary import ends, grown_prefix, said, stale_lines, worst_first
from compaction_audit.ruledoc import help_text, rule_doc, rule_markdown
from compaction_audit.rules.base import Rule

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "compactionAudit/v2"


def plain(text: object) -> str:
    """``text`` :func:`printable`, with ``[`` and ``]`` escaped by a backslash, and each
    backslash of a run that ends at one (a ``\\x1b`` that :func:`printable` wrote stays
    as it is): a SARIF plain text message in which log text forms no embedded link
    (module docstring)."""
    return _BRACKETS.sub(r"\\\g<0>", printable(text))


_BRACKETS = re.compile(r"\\(?=\\*[\[\]])|[\[\]]")


def artifact_uri(path: str) -> str:
    """The SARIF ``uri`` of a trace: a relative, percent-encoded reference with ``/``,
    a ``file://`` URI for a path outside the working directory, or an object storage
    URL as given, absolute (adv66 #5: ``s3:/b/k`` read as a path in the checkout)."""
    from compaction_audit.io.remote import is_url

    if is_url(path):
        return quote(path, safe=":/%@")  # spaces and non-ASCII encoded, % as given
    key = trace_key(path)
    if Path(key).is_absolute():
        return Path(key).as_uri()
    return quote(os.fsencode(key), safe="/")  # a name's undecodable bytes as themselves


def _n(count: int, noun: str) -> str:
    """``1 more episode``, ``2 more episodes``: a count with its noun in its number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _rounds(first: object, last: object) -> str:
    """``round 38`` or ``rounds 31-38``."""
    return f"round {first}" if first == last else f"rounds {first}-{last}"


def location(path: str, line: int) -> dict[str, Any]:
    """A SARIF location: the trace file and, when known (> 0), the line."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(path)}}
    if line > 0:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


RELATED = 10
"""Lines a fold finding's result points at besides its own (``relatedLocations``)."""


def stated_at(s: SessionReport, fold: object, only: tuple[Any, Any] | None = None
              ) -> list[dict[str, Any]]:
    """The ``relatedLocations`` of a finding about ``fold``: where the first
    :data:`RELATED` facts it lost were stated (facts that matter first), so that code
    scanning links each to its line (usertest14: the lines were only in the message);
    ``only`` (kind, text): that fact alone (CA307: the rule the call broke, not the
    fold's other losses, usertest76 F4)."""
    if fold is None:
        return []
    facts = [d for d in s.extra.get("lost_discriminators") or ()  # in report order
             if isinstance(d, dict) and d.get("fold") == fold  # (usertest16 #2: not
             and type(d.get("span_line")) is int and d["span_line"] > 0  # re-sorted)
             and (only is None or (d.get("kind"), d.get("text")) == only)]
    return [{"id": i, **location(line_path(s.path, d.get("span_file")), d["span_line"]),
             "message": {"text": plain(f"lost: {d.get('kind')} {d.get('text')!r}")}}
            for i, d in enumerate(facts[:RELATED])]


def descriptor(rule_cls: type[Rule]) -> dict[str, Any]:
    """The ``reportingDescriptor`` of a rule class (see the module docstring)."""
    doc = rule_doc(rule_cls)
    return {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.what},
        "help": {"text": help_text(doc), "markdown": rule_markdown(doc, level=3)},
        "defaultConfiguration": {"level": LEVELS[doc.severity]},
        "properties": {"tags": ["compaction", doc.family]},
    }


_LEVEL_ORDER = {"error": 0, "warning": 1, "note": 2, "none": 3}


def _results(s: SessionReport, opts: RenderOptions, index: dict[str, int],
             results: list[dict[str, Any]], held: bool) -> list[dict[str, Any]]:
    """Append the results of ``s.findings`` (episodes, as the module docstring says) of
    trace ``s`` to ``results``; returns the notifications of the episodes not listed.
    ``held``: the findings a baseline holds back (``audit --baseline``), each result's
    ``baselineState`` "unchanged", so that code scanning keeps their alerts open (a
    result missing from an upload is closed as fixed: usertest61 B3); the others are
    "new" or "updated" under a baseline, without one they have none."""
    baselined = "baseline" in s.extra
    omitted_all: list[dict[str, Any]] = []
    grown = grown_findings(s)
    entries = {id(f): entry for f, entry in session_entries(s)}
    listed, omitted = bounded_episodes(s.findings, opts.show_all)
    omitted_all += [{"level": "note", "message": {"text": plain(
        f"{_n(o['episodes'], 'more episode')} of {o['code']} {o['rule']} "
        f"({_n(o['findings'], 'finding')}, {_rounds(o['first_round'], o['last_round'])})"
        " not listed (--all lists them)")}, "locations": [location(s.path, 0)]}
        for o in omitted]
    for found in worst_first(listed):  # errors first, then by round and rule
        # the finding the episode stands for, as every format shows it: the worst of
        # its first round (usertest45 #1: the first in round order led an error's
        # result with "fold t3.86 ... lost nothing" beside t3.87's values)
        f, last = ends(found)
        entry = entries[id(f)]
        # what every fold of the episode lost, not its first one's alone (adv104 #5)
        facts = sorted({d for x in found for d in (entries[id(x)].facts or ())})
        ep = episode_dict(found, opts.show_all)
        top = max((x.severity for x in found), key=lambda v: v.rank)
        where = ("" if ep["count"] == 1 else
                 f" ({ep['count']} findings over rounds {f.round}-{ep['last_round']})")
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": LEVELS[ep["severity"]],
            "message": {"text": plain(f"{grown_prefix(grown, f)}{said(f, top)}{where}. "
                                          f"What to do: {what_to_do(f, last)}")},
            "locations": [location(line_path(s.path, f.line_file), f.line)],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(
                entry.trace, f.code, f"{entry.key}@round:{f.round}"
                + (f"@facts:{','.join(facts)}" if facts else ""))},
            "properties": {"round": f.round, "rule": f.rule,
                           "baselineFingerprint": entry.fingerprint,
                           "count": ep["count"], "rounds": ep["rounds"],
                           "lastRound": ep["last_round"],
                           "values": clip_tree(ep["values"])},
        }
        if "last_rehydrate" in ep:  # the advice at the episode's last round
            result["properties"]["lastRehydrate"] = clip_tree(ep["last_rehydrate"])
        series = s.cosine.get("used_by", {}).get(f.rule)
        if series:  # the salience series the rule read (issue 16)
            result["properties"]["salienceSeries"] = series
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        only = (f.values.get("kind"), f.values.get("text")) if f.code == "CA307" else None
        if related := stated_at(s, f.values.get("fold"), only):
            result["relatedLocations"] = related
        if held:
            result["baselineState"] = "unchanged"
        elif baselined:  # a baselined fold finding that now loses more: "updated"
            result["baselineState"] = "updated" if id(f) in grown else "new"
        results.append(result)
    return omitted_all


def render_sarif(report: Report, opts: RenderOptions) -> bytes:
    """The report as a SARIF 2.1.0 log (UTF-8 JSON bytes, newline-terminated)."""
    rules = [type(r) for r in rules_of(opts)]
    index = {cls.code: i for i, cls in enumerate(rules)}
    results: list[dict[str, Any]] = []
    omitted_all: list[dict[str, Any]] = []  # notifications
    for s in report.sessions:
        omitted_all += _results(s, opts, index, results, held=False)
        if s.held_back:  # still there: "unchanged", not missing (usertest61 B3)
            omitted_all += _results(replace(s, findings=s.held_back), opts, index, results,
                                    held=True)
    # across traces too: errors first (a stable sort keeps each trace's order of
    # rounds and rules within a level; usertest32 #8: a trace's note came before
    # another trace's 53 errors)
    results.sort(key=lambda r: _LEVEL_ORDER[r["level"]])
    notifications = [{"level": "error", "message": {"text": plain(str(e))},
                      "locations": [location(e.path, e.line)]} for e in report.errors]
    notifications += [{"level": "warning",
                       "message": {"text": plain(f"skipped (--lenient): {e}")},
                       "locations": [location(e.path, e.line)]}
                      for s in report.sessions for e in s.skipped]
    notifications += [{"level": "warning", "message": {"text": plain(x.message())},
                       "locations": [location(line_path(s.path, s.file_of_round(x.round)),
                                              x.line or 1)]}
                      for s in report.sessions for x in s.limits]  # capped checks
    # a gap counts as a warning for the gate: at "warning" when --fail-on reaches it
    gap_level = "warning" if gaps_fail(opts.fail_on) else "note"  # (adv38)
    notifications += [{"level": gap_level, "message": {"text": plain(g.message)},
                       "locations": [location(line_path(s.path, g.line_file), g.line)]}
                      for s in report.sessions  # never a pass in disguise (docs/ci.md):
                      for g in gaps(s)]  # unchecked compactions, lines not read (adv29 F2)
    notifications += [{"level": "note",  # adv23 F6: the one format that said nothing
                       "message": {"text": "no selected rule could judge this trace"},
                       "locations": [location(s.path, 0)]}
                      for s in report.sessions if s.judged_nothing()]
    notifications += [{"level": "note",  # silenced by [[suppress]] (adv31 N6)
                       "message": {"text": plain(f"{s.suppressed()} finding(s) suppressed "
                                                 "by [[suppress]] of the configuration")},
                       "locations": [location(s.path, 0)]}
                      for s in report.sessions if s.suppressed()]
    notifications += [{"level": "note", "message": {"text": plain(line)}}  # the
                      for line in stale_lines(report, opts.show_all)]  # baseline's (usertest17)
    notifications += omitted_all  # episodes beyond EPISODES_PER_RULE, counted
    run = {
        "tool": {"driver": {"name": "compaction-audit", "version": __version__,
                            "rules": [descriptor(cls) for cls in rules]}},
        "invocations": [{"executionSuccessful": not report.errors,
                         "toolExecutionNotifications": notifications,
                         # the configuration file used (adv24 F5)
                         **({"properties": {"config": clip_tree(report.config)}}
                            if report.config is not None else {})}],
        "results": results,
    }
    doc = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json_safe(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
                     + b"\n")
