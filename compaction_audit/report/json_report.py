"""The JSON report: the whole report model as one documented JSON document.

Shape (see docs/ci.md, "Output formats" and "Output size"): for one trace, a
session object::

    {"tool": {...}, "config", "path", "format", "session": {...}, "settings": {...},
     "conditions": [...], "can_invert", "onsets": {...},
     "series_rounds": {"shown", "total", "all"}, "series": [{...}, ...],
     "findings": [{"rule", "code", "severity", "round", "line", "count", "rounds",
                   "last_round", "last_line", "message", "last_message", "action",
                   "entity", "entities", "values": {...}, "last_rehydrate"?}, ...],
     (a trace whose lines are in several files, a Cline compaction file given: a
     ``line_file`` beside each ``line`` of the findings, series, compactions, folded
     rounds and limits, and ``last_line_file`` beside ``last_line``)
     "findings_omitted": [{"code", "rule", "episodes", "findings", "first_round",
                           "last_round"}, ...],
     "not_evaluated": [...], "unjudged": {"CA203": "not applicable: ..."},
     "skipped": [...], "dependent": [...],
     "limits": [{"check", "cap", "unit", "at", "round", "line", "left", "left_unit",
                 "message"}, ...], "compactions": [...],
     "cosine": {...},
     "counts": {...}, "verdict": "..."}

``findings`` are in a fixed order, for scripts: by first round, then rule code
(severity never reorders them; docs/ci.md, "Order"), and for several traces
``{"tool", "config", "sessions": [<session object>...], "errors":
[...], "summary": {...}}``. By default the report is bounded (issue 14, section 3: a
tenth of the trace on every cell of the benchmark grid): a finding is an episode (one
rule over consecutive rounds, with its count and rounds), the series keeps its key
rounds, and every list is capped with a ``<key>_truncated`` sibling
(:mod:`compaction_audit.report.bounded`); ``--all`` writes everything. Series keys are
named exactly as in the log-format spec, plus ``line`` and ``query_cosine_rebuilt``
(issue 16; ``cosine`` says how it was made and which series each salience rule read).
orjson escapes every control character, so log text is inert; rows, a finding's values
and list items are written one per line. Every string but the numeric series goes
through :func:`clip_tree` (at most :data:`~compaction_audit.report.safe.MAX_TEXT`
characters, undecodable file-name bytes as ``\\xNN``) and :func:`json_safe` (invisible
characters as ``\\uXXXX``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import polars as pl

from compaction_audit import __version__
from compaction_audit.conditions import can_invert
from compaction_audit.errors import LogError
from compaction_audit.io.quiet_gc import paused_gc
from compaction_audit.report.bounded import (
    COMPACTION_KEYS,
    bounded_episodes,
    cap_keys,
    cap_lists,
    episode_dict,
    key_round_set,
)
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import clip_tree, json_safe
from compaction_audit.series import SPEC_COLUMNS

TOOL = {"name": "compaction-audit", "version": __version__, "report_schema": 2}
"""``report_schema`` 2: ``findings`` are episodes, bounded by default (issue 14); 1 had
one object per finding and every round of the series."""


def error_dict(err: LogError) -> dict[str, Any]:
    """A LogError as ``{"path", "line", "message", "field", "text"}`` (strings
    :func:`clip_tree` d), and ``trace`` when the error is in a file beside the trace
    that could not be audited (:func:`compaction_audit.errors.of_trace`)."""
    doc: dict[str, Any] = clip_tree({"path": err.path, "line": err.line,
                                     "message": err.message, "field": err.field,
                                     "text": str(err),
                                     **({"trace": err.trace} if err.trace else {})})
    return doc


def _capped_compaction(c: dict[str, Any]) -> dict[str, Any]:
    """One compaction with its free-form keys capped (:func:`cap_keys`, the auditor's
    own kept) and its ``lost`` entries whole: the auditor writes those, with a fixed
    set of keys (22 with the file names), which the cap of a log's objects cut."""
    lost = c.get("lost")
    capped: dict[str, Any] = cap_keys(c if not isinstance(lost, list) else {**c, "lost": []},
                                      keep=COMPACTION_KEYS)
    if isinstance(lost, list):
        capped["lost"] = lost
    return capped


def session_dict(r: SessionReport, show_all: bool = False,
                 fail_on: str | None = None) -> dict[str, Any]:
    """One session report as a JSON-able dict (see the module docstring); every
    part but the numeric ``series`` is :func:`clip_tree` d.  With ``fail_on`` (the
    run's ``--fail-on``), ``gate`` says whether this trace fails it: the verdict word
    does not always (a compaction that could not be checked, a warning under
    ``--fail-on warning``; usertest40 #2).

    Bounded unless ``show_all`` (``--all``; issue 14, section 3): ``findings`` are
    episodes (:func:`~compaction_audit.report.bounded.episode_dict`), at most
    :data:`~compaction_audit.report.bounded.EPISODES_PER_RULE` per rule (the rest
    counted in ``findings_omitted``); ``series`` keeps the key rounds
    (:func:`~compaction_audit.report.bounded.key_round_set`; ``series_rounds`` says
    how many of how many); every other list is capped
    (:func:`~compaction_audit.report.bounded.cap_lists`).  With ``show_all`` every
    finding is an episode of one, every round and every list item is there.
    """
    h = r.header
    rounds = r.series["round"]
    listed, omitted = bounded_episodes(r.findings, show_all)
    files = r.line_files  # the lines are in several files: say which beside each
    series = r.series.select(*SPEC_COLUMNS[:2], *(["line_file"] if files else []),
                             *SPEC_COLUMNS[2:])
    if not show_all:
        series = series.filter(pl.col("round").is_in(sorted(key_round_set(r, listed))))
    doc = {
        "path": r.path,
        "format": r.source_format,
        "session": {
            "session_id": h.session_id, "budget_tokens": h.budget_tokens,
            "max_depth": h.max_depth, "eviction": h.eviction, "scorer": h.scorer,
            "task_query": h.task_query, "recall_floor": h.recall_floor,
            "start_spans": h.start_spans, "rounds": r.n_rounds,
            "first_round": int(rounds[0]) if len(rounds) else None,
            "last_round": int(rounds[-1]) if len(rounds) else None,
            "extra": h.extra,
        },
        "settings": dataclasses.asdict(r.settings),
        "conditions": [dataclasses.asdict(c) for c in r.conditions],
        "can_invert": can_invert(r.conditions),
        "onsets": r.onsets,
        "series_rounds": {"shown": series.height, "total": r.n_rounds,
                          "all": series.height == r.n_rounds},
        "series": series.to_dicts(),
        "findings": [episode_dict(run, show_all, files) for run in listed],
        "findings_omitted": omitted,
        "not_evaluated": [{"rule": n.rule, "code": n.code, "reason": n.reason,
                           "rounds": n.rounds} for n in r.not_evaluated],
        "unjudged": r.unjudged_rules(),  # rules that judged no round: skipped, not passed
        "skipped": [error_dict(e) for e in r.skipped],
        "dependent": [error_dict(e) for e in r.dependent],
        "limits": [{**dataclasses.asdict(x),
                    **({"line_file": r.file_of_round(x.round)} if files else {}),
                    "message": x.message()} for x in r.limits],
        "compactions": r.compactions,
        "cosine": r.cosine,
        **r.extra,
        "counts": r.counts(),
        "compactions_not_checked": r.compactions_not_checked(),
        # beside it, as in diff's JSON (usertest29 #2: docs/ci.md named it, only
        # session.extra had it)
        "lines_not_read": r.lines_not_read(),
        "parents_missing": r.parents_missing(),  # lines may be missing (usertest76 F5)
        "verdict": r.verdict(),
        **({} if fail_on is None else {"gate": {"fail_on": fail_on,
                                                "fails": r.fails(fail_on)}}),
    }
    series_rows, episodes = doc.pop("series"), doc.pop("findings")
    if not show_all:  # free-form objects from the log: their first KEYS_CAP keys
        # under the session: a cut object gets a sibling "<key>_truncated"
        free = cap_keys({"scorer": h.scorer, "extra": h.extra})
        session: dict[str, Any] = {}
        for k, v in doc["session"].items():
            session[k] = free.get(k, v)
            if f"{k}_truncated" in free:
                session[f"{k}_truncated"] = free[f"{k}_truncated"]
        doc["session"] = session
        doc["compactions"] = [_capped_compaction(c) for c in r.compactions]
    rest = clip_tree(doc)
    if not show_all:
        rest = cap_lists(rest)  # adds a "<key>_truncated" after each list it cuts
    out: dict[str, Any] = {}
    for k, v in rest.items():
        if k == "series_rounds":
            out[k] = v
            out["series"] = [inline(row) for row in series_rows]
        elif k == "findings_omitted":  # episode_dict caps its own lists
            out["findings"] = [f | {"values": inline(f["values"])}
                               for f in clip_tree(episodes)]
            out[k] = v
        else:
            out[k] = ([inline(x) for x in v] if isinstance(v, list) and v
                      and all(isinstance(x, dict) for x in v) else v)
    return out


def inline(value: Any) -> orjson.Fragment:
    """``value`` serialized on one line, for an indented document: a series row, a
    finding's values, an item of a list section (half the bytes of indenting every
    nested key, and one line per row reads as a table)."""
    return orjson.Fragment(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def render_json(report: Report, single: bool, show_all: bool = False,
                fail_on: str = "error") -> bytes:
    """The report as JSON bytes (newline-terminated).

    ``single``: the user named exactly one trace; write the session object itself.
    ``show_all``: every finding, round and list item (see :func:`session_dict`).
    ``fail_on``: the run's gate; each session's ``gate`` says whether it fails it, and
    the document's (the session object's for one trace, ``summary`` for several) adds
    the exit code: the text, Markdown, JUnit and SARIF reports say it, and a job that
    reads the JSON could not tell (usertest40 #2).
    The cyclic GC is paused while the document is built: the report of a long session
    is millions of small objects, which its collections would re-scan.
    """
    with paused_gc():
        if single and len(report.sessions) == 1 and not report.errors:
            doc: dict[str, Any] = {"tool": TOOL, "config": clip_tree(report.config),
                                   **session_dict(report.sessions[0], show_all, fail_on)}
            doc["gate"]["exit_code"] = report.exit_code(fail_on)
        else:
            doc = {
                "tool": TOOL,
                "config": clip_tree(report.config),  # a folder's name may not be UTF-8
                "sessions": [session_dict(s, show_all, fail_on) for s in report.sessions],
                "errors": [error_dict(e) for e in report.errors],
                "summary": summary_dict(report, fail_on),
            }
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"
    return json_safe(data)  # ASCII or nothing to escape: one pass, the same bytes


def summary_dict(report: Report, fail_on: str = "error") -> dict[str, Any]:
    """Totals across traces: traces, unreadable, findings per severity, the
    compactions whose loss could not be checked (the text summary's count, usertest67
    #9), and the gate (``fail_on``, how many traces fail it, the run's exit code)."""
    totals = {"error": 0, "warning": 0, "info": 0}
    for s in report.sessions:
        for k, v in s.counts().items():
            totals[k] += v
    return {"traces": len(report.sessions) + len(report.errors),
            "unreadable": len(report.errors), "findings": totals,
            "compactions_not_checked": sum(s.compactions_not_checked()
                                           for s in report.sessions),
            "gate": {"fail_on": fail_on, "failing": sum(s.fails(fail_on)
                                                        for s in report.sessions),
                     "exit_code": report.exit_code(fail_on)}}
