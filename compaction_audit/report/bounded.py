"""Output proportional to what a person can act on (issue 14, section 3; issue 11, 5).

Shared by the machine formats (JSON, SARIF, JUnit):

* :func:`episode_dict`: the findings of one rule over consecutive rounds
  (:func:`compaction_audit.report.summary.episodes`) as one object with a count and
  the rounds, instead of one object per round;
* :func:`cap_lists`: every list inside a section or a finding's values cut to its
  first :data:`LIST_CAP` items (lists are in report order: lost facts by tier, so the
  first are the top-ranked), with a sibling ``<key>_truncated`` object that says how
  many there were and, for lost facts, how many of the rest fall in each tier;
* :func:`cap_keys`: every free-form object from the log (scorer, session extras,
  compaction extensions) cut to its first :data:`KEYS_CAP` keys, with a sibling
  ``<key>_truncated`` (or a last key ``_truncated``) that says how many were left out;
* :func:`key_round_set`: the rounds of the series a bounded report keeps.

``--all`` (``RenderOptions.show_all``) turns every bound off: every finding is its own
episode (count 1), every list whole, every round of the series.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from compaction_audit.report.advice import later_advice
from compaction_audit.report.model import SessionReport
from compaction_audit.report.summary import ends, episodes, said
from compaction_audit.rules.base import Finding

LIST_CAP = 10
"""Items a list inside a finding or a report section keeps before it is truncated
(``--all`` keeps every item); a list inside a list item keeps :data:`NESTED_CAP`.  With
:data:`EPISODES_PER_RULE` these bound the JSON report of every cell of the benchmark
grid below a tenth of the trace (docs/performance.md, "The grid"); the terminal shows
15 lost facts, the JSON report the first 10 (top-ranked) with the rest counted by tier."""

NESTED_CAP = 5
"""Items a list nested in a list item keeps (a fold's children, each child's dropped
facts: 10 x 5, not 10 x 10)."""

VALUES_CAP, VALUES_NESTED_CAP = 3, 3
"""The caps inside a finding's ``values`` (its message already says the most: a fold's
first children and their dropped facts, "and N more")."""

EPISODES_PER_RULE = 5
"""Episodes of one rule the machine formats list (the most severe, then the first ones
by round: :func:`most_severe`); the rest
are counted in ``findings_omitted`` (JSON) or a summary result (SARIF)."""

TIER_KEY = "tier"
"""The key of a lost fact's tier (:mod:`compaction_audit.recall.ranking`)."""


def _truncation(items: list[Any], cap: int, more: object = None) -> dict[str, Any]:
    """``{"truncated": true, "shown", "total"}`` plus, when the items are ranked lost
    facts, ``"rest_by_tier"``: how many of the items cut fall in each tier.  ``more``:
    the ``<key>_more`` beside the list, the items a finding's values left out already
    (:func:`compaction_audit.findingvalues.capped`): ``total`` counts them (ux5 F10: a fold of
    105 children said ``total: 50``)."""
    extra = more if type(more) is int and more > 0 else 0
    info: dict[str, Any] = {"truncated": True, "shown": cap, "total": len(items) + extra}
    rest = items[cap:]
    if rest and all(isinstance(d, dict) and TIER_KEY in d for d in rest):
        tiers = Counter(d[TIER_KEY] for d in rest)
        info["rest_by_tier"] = {str(k): tiers[k] for k in sorted(tiers, key=str)}
    return info


def cap_lists(value: Any, cap: int = LIST_CAP, nested: int = NESTED_CAP) -> Any:
    """``value`` (JSON-able) with every list longer than its cap cut to its first
    items, recursively: ``cap`` for a list not inside another list, ``nested`` for one
    inside a list's item.  A list under a dict key ``k`` gets a sibling
    ``k_truncated`` (see :func:`_truncation`); a list directly inside a list is cut
    and gets a last item ``{"truncated": true, "shown", "total"}``.  Returns new
    containers; the input is not changed."""
    def walk(v: Any, limit: int) -> Any:
        if isinstance(v, dict):
            out: dict[Any, Any] = {}
            for k, x in v.items():
                if isinstance(x, list) and len(x) > limit:
                    out[k] = [walk(y, nested) for y in x[:limit]]
                    out[f"{k}_truncated"] = _truncation(x, limit, v.get(f"{k}_more"))
                elif isinstance(x, list):
                    out[k] = [walk(y, nested) for y in x]
                else:
                    out[k] = walk(x, limit)
            return out
        if isinstance(v, list):
            kept = [walk(y, nested) for y in v[:limit]]
            if len(v) > limit:
                kept.append({"truncated": True, "shown": limit, "total": len(v)})
            return kept
        return v

    return walk(value, cap)


KEYS_CAP = 20
"""Keys a free-form object from the log keeps in the JSON report (the session's
``scorer`` and ``extra``, each compaction's extension fields and the objects inside
them, such as its ``trigger``); ``--all`` keeps every key.  A 50,000-key object was
copied whole: 4.4 MB of JSON from a 3 MB trace (issue 11, fresh pass, F11)."""

COMPACTION_KEYS = frozenset({
    "ri", "round", "line", "line_file", "folded_tokens", "compression_ratio", "lost",
    "lost_checked", "not_checked_reason", "transcript_reference", "summary_id", "summary_text"})
"""The keys the auditor itself sets on a compaction (reader and
:func:`compaction_audit.recall.sections.compaction_view`): always kept, not counted
against :data:`KEYS_CAP`."""


def _key_truncation(total: int, shown: int) -> dict[str, Any]:
    return {"truncated": True, "shown": shown, "total": total, "keys_omitted": total - shown}


def cap_keys(value: Any, cap: int = KEYS_CAP, keep: frozenset[str] = frozenset()) -> Any:
    """``value`` (JSON-able) with every object of more than ``cap`` keys cut to its
    first ``cap`` keys (plus those of ``keep``, at the top level only), recursively.
    An object under a key ``k`` gets a sibling ``k_truncated``, one directly in a list
    (or ``value`` itself) a last key ``_truncated``: ``{"truncated": true, "shown",
    "total", "keys_omitted"}``.  Returns new containers; the input is not changed."""
    def cut(d: dict[Any, Any], kept: frozenset[str]) -> dict[Any, Any] | None:
        """The kept part of ``d``, or None when nothing is cut."""
        if len(d) <= cap:
            return None
        out: dict[Any, Any] = {}
        free = 0
        for k, x in d.items():
            if k in kept:
                out[k] = x
            elif free < cap:
                out[k] = x
                free += 1
        return out if len(out) < len(d) else None

    def walk(v: Any, kept: frozenset[str] = frozenset()) -> tuple[Any, dict[str, Any] | None]:
        """(the capped value, its truncation note or None)."""
        if isinstance(v, list):
            return [item(x) for x in v], None
        if not isinstance(v, dict):
            return v, None
        part = cut(v, kept)
        out: dict[Any, Any] = {}
        for k, x in (v if part is None else part).items():
            out[k], note = walk(x)
            if note is not None:
                out[f"{k}_truncated"] = note
        return out, None if part is None else _key_truncation(len(v), len(part))

    def item(v: Any, kept: frozenset[str] = frozenset()) -> Any:
        out, note = walk(v, kept)
        if note is not None:
            out["_truncated"] = note
        return out

    return item(value, keep)


def runs(findings: list[Finding], show_all: bool) -> list[list[Finding]]:
    """The findings as episodes, by rule code then round; with ``show_all`` every
    finding alone, in report order."""
    if show_all:
        return [[f] for f in findings]
    return list(episodes(findings))


def episode_dict(run: list[Finding], show_all: bool = False,
                 files: bool = False) -> dict[str, Any]:
    """One episode as a JSON-able dict: the first finding's ``rule``, ``code``,
    ``round``, ``line``, ``message``, ``action``, ``entity`` and ``values`` (lists
    capped unless ``show_all``), the worst ``severity``, ``count`` (findings),
    ``rounds`` (distinct rounds), ``last_round``, ``last_line``, ``last_message`` (None
    when it is the first's; each message led by its severity where that is below the
    episode's: :func:`~compaction_audit.report.summary.said`), ``entities``
    (distinct, in order; capped) and, where the last round's rehydration advice differs
    from the first's (``values["rehydrate"]``), ``last_rehydrate``.  With
    ``files`` (the trace's lines are in several files:
    :attr:`~compaction_audit.report.model.SessionReport.line_files`), ``line_file`` and
    ``last_line_file`` after ``line`` and ``last_line``: the file each is a line of.
    Unless ``show_all``, lists are capped: :data:`LIST_CAP` for ``entities``,
    :data:`VALUES_CAP` and :data:`VALUES_NESTED_CAP` inside ``values``."""
    first, last = ends(run)
    severity = max((f.severity for f in run), key=lambda s: s.rank)
    entities = list(dict.fromkeys(f.entity for f in run if f.entity is not None))
    doc: dict[str, Any] = {
        "rule": first.rule, "code": first.code, "severity": severity.value,
        "round": first.round, "line": first.line,
        **({"line_file": first.line_file} if files else {}), "count": len(run),
        "rounds": len({f.round for f in run}), "last_round": last.round,
        "last_line": last.line, **({"last_line_file": last.line_file} if files else {}),
        "message": said(first, severity),
        "last_message": None if last.message == first.message else said(last, severity),
        "action": first.action, "entity": first.entity, "entities": entities,
        "values": first.values,
    }
    later = later_advice(first, last)
    if later is not None:
        doc["last_rehydrate"] = later
    if show_all:
        return doc
    bounded: dict[str, Any] = cap_lists({**doc, "values": None})
    bounded["values"] = without_derived_keys(cap_lists(first.values, VALUES_CAP,
                                                       VALUES_NESTED_CAP))
    return bounded


def without_derived_keys(value: Any) -> Any:
    """``value`` (JSON-able) with the ``key`` of each object left out where it is its
    ``kind`` and ``norm`` joined by ``:`` (a dropped fact's, which a reader rebuilds
    from the two): a finding's values repeat it for every fact (1.7 KB of the 40.6 KB
    bounded JSON report of the grid's 0.4 MB delta-mode text cell, which went over a
    tenth of its trace: issue 14, section 3).  ``--all`` keeps it.  Returns new
    containers."""
    if isinstance(value, list):
        return [without_derived_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: without_derived_keys(v) for k, v in value.items()}
    kind, norm, key = out.get("kind"), out.get("norm"), out.get("key")
    if isinstance(kind, str) and isinstance(norm, str) and key == f"{kind}:{norm}":
        del out["key"]
    return out


def most_severe(rule_runs: list[list[Finding]], limit: int
                ) -> tuple[list[list[Finding]], list[list[Finding]]]:
    """(the episodes of one rule to list, the rest), each in the order given (by
    round): the ``limit`` most severe, the earlier first among equals, so that a rule's
    one error is listed whatever warnings came before it (usertest71 #2: a summary's
    invented ticket, the rule's only error, was the 4th episode, cut for three
    warnings)."""
    if len(rule_runs) <= limit:
        return rule_runs, []
    order = sorted(range(len(rule_runs)),
                   key=lambda i: (-max(f.severity.rank for f in rule_runs[i]), i))
    keep = set(order[:limit])
    return ([run for i, run in enumerate(rule_runs) if i in keep],
            [run for i, run in enumerate(rule_runs) if i not in keep])


def bounded_episodes(findings: list[Finding], show_all: bool
                     ) -> tuple[list[list[Finding]], list[dict[str, Any]]]:
    """(the episodes to list, by first round then rule code; what was left out): at most
    :data:`EPISODES_PER_RULE` episodes per rule, the most severe
    (:func:`most_severe`; all with ``show_all``), and per rule with more, ``{"code",
    "rule", "episodes", "findings", "first_round", "last_round"}`` of the episodes not
    listed."""
    every = runs(findings, show_all)
    if show_all:
        return every, []
    by_rule: dict[str, list[list[Finding]]] = {}
    for run in every:
        by_rule.setdefault(run[0].code, []).append(run)
    listed: list[list[Finding]] = []
    omitted: list[dict[str, Any]] = []
    for code, rule_runs in by_rule.items():
        shown, rest = most_severe(rule_runs, EPISODES_PER_RULE)
        listed += shown
        if rest:
            omitted.append({"code": code, "rule": rest[0][0].rule, "episodes": len(rest),
                            "findings": sum(len(run) for run in rest),
                            "first_round": rest[0][0].round, "last_round": rest[-1][-1].round})
    listed.sort(key=lambda run: (run[0].round, run[0].code))  # report order
    return listed, omitted


def key_round_set(r: SessionReport, listed: list[list[Finding]]) -> set[int]:
    """The rounds a bounded series keeps: the first and the last, the onsets, and the
    first round of every listed episode."""
    rounds = r.series["round"]
    wanted: set[int] = set()
    if len(rounds):
        wanted |= {int(rounds[0]), int(rounds[-1])}
    for value in r.onsets.values():
        if isinstance(value, int) and not isinstance(value, bool):
            wanted.add(value)
    for run in listed:
        wanted.add(run[0].round)
    return wanted
