"""Suppressions: silence one item the team has judged, from the configuration file
(issue 13, section 4, "No way to silence one item").

Each ``[[suppress]]`` entry (``[[tool.compaction-audit.suppress]]`` in
``pyproject.toml``) names:

- ``rule`` (a code such as ``CA301`` or a name) and ``discriminator``, a glob pattern
  (as :func:`fnmatch.fnmatchcase`: ``*``, ``?``, ``[...]``; case-sensitive) over the text
  of a lost discriminator; a finding of that rule is suppressed when every
  discriminator it names as lost matches one of the rule's patterns (facts another
  span still holds aside; a fold that also lost a fact no pattern covers still
  fires); only the fold rules (:data:`FOLD_RULES`)
  name discriminators, so a pattern of another rule is refused; or
- ``fold``, a fold's (summary's) id, with an optional ``rule`` (one of
  :data:`FOLD_ENTRY_RULES`): the findings about that fold are suppressed;
- optionally ``reason``, shown by ``config show`` (for the reader of the file).

The lost lists drop the facts a suppression covers too: a discriminator whose text
matches an entry's pattern, lost to a fold that rule has a finding about, a fact
dropped by a suppressed fold (an entry with no
``rule``, or one whose rule's finding about the fold it suppressed; a compaction counts
them, ``lost_suppressed``, which the verdict and its line in the reports say); the Folds section
(``folded_rounds``) drops each fold whose fold finding was suppressed, with its counts.
Each session counts what was suppressed (``extra["suppressions"]``); an entry that matched nothing
in the whole run is returned so the command can say so (a stale entry, or a typo).
``audit``, ``baseline create`` and ``diff`` (both runs) apply them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fnmatch import translate
from typing import Any

from compaction_audit.errors import UsageError
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.rules import RULES
from compaction_audit.rules.base import Finding

KEYS = ("rule", "discriminator", "fold", "reason")

MAX_SUPPRESSIONS = 1000
"""Most ``[[suppress]]`` entries a configuration may hold: each lost fact a pattern
covers is compared with every pattern of its rule, so their number multiplies the
work (4,000 entries added 45 s to a 0.34 MB trace; adv19b F3).  A team silences a few
judged items, not thousands."""

MAX_PATTERN_CHARS = 200
"""Longest ``discriminator`` pattern (characters): compiling a glob costs about 16 µs
of CPU and 500 bytes of memory per character, twice (alone and joined), and 1,000
entries of 4 KB each took 114 s and 2.2 GB (adv21 F1).  A lost fact's glob is a few
words."""


@dataclass(frozen=True)
class Suppression:
    """One entry: ``rule`` is the rule's code (None: any rule, for ``fold`` only);
    exactly one of ``discriminator`` (a glob) and ``fold`` (an id) is set; ``where``
    names the entry in its file for messages (``pyproject.toml suppress[2]``)."""

    where: str
    rule: str | None = None
    discriminator: str | None = None
    fold: str | None = None
    reason: str = ""

    def describe(self) -> str:
        """The entry in a few words: ``rule CA301, discriminator '*staging*'``."""
        parts = [f"rule {self.rule}"] if self.rule else []
        if self.discriminator is not None:
            parts.append(f"discriminator {self.discriminator!r}")
        if self.fold is not None:
            parts.append(f"fold {self.fold!r}")
        return ", ".join(parts)


def parse(value: Any, where: str) -> tuple[Suppression, ...]:
    """The ``suppress`` key's value (an array of tables) as suppressions.  Raises
    :class:`UsageError` naming the entry for a bad shape, an unknown key or rule, a
    missing or doubled target, a discriminator without its rule, or with a rule whose
    findings name no discriminator (not in :data:`FOLD_RULES`), or a fold with a rule
    whose findings are not about one fold (not in :data:`FOLD_ENTRY_RULES`)."""
    if not isinstance(value, list):
        raise UsageError(f"{where}: suppress must be an array of tables ([[suppress]])")
    if len(value) > MAX_SUPPRESSIONS:
        raise UsageError(f"{where}: suppress has {len(value):,} entries, more than "
                         f"{MAX_SUPPRESSIONS:,} (MAX_SUPPRESSIONS)")
    codes = {**{c: c for c in RULES}, **{cls.name: c for c, cls in RULES.items()}}
    out = []
    for i, entry in enumerate(value):
        at = f"{where}: suppress[{i}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{at}: must be a table with rule and discriminator, or fold")
        unknown = sorted(set(entry) - set(KEYS))
        if unknown:
            raise UsageError(f"{at}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
        if any(not isinstance(v, str) or not v for v in entry.values()):
            raise UsageError(f"{at}: values must be non-empty strings")
        rule = entry.get("rule")
        code = None
        if rule is not None:
            code = codes.get(rule.upper() if rule.upper() in RULES else rule)
            if code is None:
                raise UsageError(f"{at}: unknown rule {rule!r}")
        pattern, fold = entry.get("discriminator"), entry.get("fold")
        if (pattern is None) == (fold is None):
            raise UsageError(f"{at}: give either discriminator (with rule) or fold")
        if pattern is not None and code is None:
            raise UsageError(f"{at}: a discriminator pattern needs its rule")
        if pattern is not None and code is not None and code not in FOLD_RULES:  # adv67 #2
            what = ("are about what a summary states or an action, not the facts a fold "
                    "lost" if code in FOLD_ENTRY_RULES else "name no lost discriminator")
            raise UsageError(  # usertest19 #6: fold = ID named for a per-round rule
                f"{at}: {code} {RULES[code].name} findings {what}, so a discriminator "
                "pattern cannot match them (patterns are for "
                f"{', '.join(f'{c} {RULES[c].name}' for c in FOLD_RULES)}); "
                + ("use fold = ID" if code in FOLD_ENTRY_RULES else "use ignore, or a "
                   "baseline"))
        if fold is not None and code is not None and code not in FOLD_ENTRY_RULES:
            raise UsageError(  # usertest18 #12: it matched nothing, whatever the id
                f"{at}: {code} {RULES[code].name} findings are about rounds, not one fold, "
                "so a fold entry cannot match them (fold entries are for "
                f"{', '.join(FOLD_ENTRY_RULES)}); use ignore, or a baseline")
        if pattern is not None and len(pattern) > MAX_PATTERN_CHARS:
            raise UsageError(f"{at}: discriminator pattern of {len(pattern):,} characters, "
                             f"more than {MAX_PATTERN_CHARS} (MAX_PATTERN_CHARS)")
        out.append(Suppression(f"{where} suppress[{i}]", code, pattern, fold,
                               entry.get("reason", "")))
    return tuple(out)


def named_discriminators(f: Finding) -> list[str]:
    """The texts of the discriminators a finding names as lost (a fold rule's
    ``children[].dropped[]`` with a place in the lost list, ``pos``: a fact another
    span still holds is not lost, and no report lists it, so a pattern need not cover
    it: usertest20 #2); all it dropped when none is lost; empty for a finding about
    no discriminator."""
    dropped = [d for child in f.values.get("children") or [] if isinstance(child, dict)
               for d in child.get("dropped") or []
               if isinstance(d, dict) and d.get("text") is not None]
    lost = [d for d in dropped if d.get("pos") is not None]
    return [str(d["text"]) for d in lost or dropped]


def _fold_of(f: Finding) -> str | None:
    fold = f.values.get("fold")
    return str(fold) if fold is not None else f.entity


class Patterns:
    """The discriminator patterns of ``entries``, compiled once (:func:`fnmatch.translate`)
    and joined per rule into one expression, so that a text no pattern covers (the
    common case) costs one match in C, and a text's entries are looked up once
    (adv19b F3: ``fnmatchcase`` for every entry and every lost fact)."""

    def __init__(self, entries: tuple[Suppression, ...]) -> None:
        self.entries = entries
        self.compiled = {i: re.compile(translate(s.discriminator))
                         for i, s in enumerate(entries) if s.discriminator is not None}
        self.any: dict[str | None, re.Pattern[str] | None] = {
            rule: _joined([s.discriminator for i, s in enumerate(entries)
                           if i in self.compiled and (rule is None or s.rule == rule)])
            for rule in {None, *(s.rule for s in entries)}}
        self._hits: dict[tuple[str | None, str], frozenset[int]] = {}

    def hits(self, rule: str | None, text: str) -> frozenset[int]:
        """The entries whose pattern matches ``text``, of ``rule`` (None: any rule)."""
        key = (rule, text)
        found = self._hits.get(key)
        if found is None:
            joined = self.any.get(rule)
            found = frozenset() if joined is None or not joined.match(text) else frozenset(
                i for i, rx in self.compiled.items()
                if (rule is None or self.entries[i].rule == rule) and rx.match(text))
            self._hits[key] = found
        return found


def _joined(patterns: list[str | None]) -> re.Pattern[str] | None:
    """One expression matching what any of ``patterns`` (globs) matches; None for none."""
    parts = sorted({translate(p) for p in patterns if p is not None})
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


def covering(patterns: Patterns, f: Finding) -> tuple[bool, set[int]]:
    """Whether the entries suppress finding ``f``, and the indexes of the entries that
    matched it or one of its discriminators (see the module docstring)."""
    folds = {i for i, s in enumerate(patterns.entries)
             if s.fold is not None and (s.rule is None or s.rule == f.code)
             and _fold_of(f) == s.fold}
    texts = named_discriminators(f)
    hits = [patterns.hits(f.code, t) for t in texts]
    used = folds.union(*hits) if hits else set(folds)
    return bool(folds) or (bool(texts) and all(hits)), used


def covered_fact(patterns: Patterns, d: dict[str, Any], fold: Any = None,
                 gone: frozenset[tuple[str, str]] = frozenset(),
                 fired: frozenset[tuple[str, str]] = frozenset()) -> set[int]:
    """The entries that hide the lost fact ``d`` from the lost lists: a fold entry
    naming its fold (``d["fold"]``, else ``fold``: the summary of the compaction whose
    list holds it) with no ``rule``, or whose rule's finding about that fold it
    suppressed (``gone``: the (code, fold) pairs of the fold findings suppressed; an
    entry of another rule leaves the facts listed, usertest16 #1), and a pattern
    matching its text whose rule has a finding about that fold (``fired``: the (code,
    fold) pairs of the fold findings, suppressed or not; adv68 #1: a CA302 pattern hid
    every fact of a fold whose CA301 error still fired)."""
    fold = d.get("fold", fold)
    if fold is None:
        return set()
    hit = {i for i, s in enumerate(patterns.entries)
           if s.fold is not None and str(fold) == s.fold
           and (s.rule is None or (s.rule, s.fold) in gone)}
    texts = patterns.hits(None, str(d.get("text", "")))
    return hit | {i for i in texts if (patterns.entries[i].rule, str(fold)) in fired}


FOLD_RULES = ("CA301", "CA302")
"""The rules with one finding per fold that dropped a fact (silent-discriminating-fold,
topic-only-fold): the report's Folds section counts the same facts."""

FOLD_ENTRY_RULES = ("CA301", "CA302", "CA304", "CA305", "CA306", "CA307")
"""The rules whose findings are each about one fold or summary (its ``fold`` value or
``entity``), which a ``fold`` entry can match: the fold rules, negation-flipped,
unsupported-summary-claim, stale-summary, lost-rule-violated.  The others judge a
round's working set (ungrounded-summary counts every ungrounded summary at a round)."""


def _unfolded(rounds: list[dict[str, Any]], gone: list[Finding]) -> list[dict[str, Any]]:
    """``folded_rounds`` without the folds whose finding a suppression removed: each
    such fold leaves its round's ``folds`` and its ``facts``, ``facts_lost`` (``lost``
    here) and drops (``lost`` of the finding, ``dropped`` here) leave its counts, so
    that the Folds section counts what the findings say; a round left with no fold is
    dropped."""
    by_round: dict[int, list[Finding]] = {}
    for f in gone:
        by_round.setdefault(f.round, []).append(f)
    out = []
    for row in rounds:
        mine = [f for f in by_round.get(row["round"], []) if _fold_of(f) in row["folds"]]
        if not mine:
            out.append(row)
            continue
        folds = [x for x in row["folds"] if x not in {_fold_of(f) for f in mine}]
        if folds:
            out.append({**row, "folds": folds,
                        "dropped": row["dropped"] - sum(int(f.values.get("lost") or 0)
                                                        for f in mine),
                        "facts": row["facts"] - sum(int(f.values.get("facts") or 0)
                                                    for f in mine),
                        "lost": row["lost"] - sum(int(f.values.get("facts_lost") or 0)
                                                  for f in mine)})
    return out


UNCOVERED_NAMED = 3
"""Facts no pattern covers that a fold finding still firing names (then "and N more")."""


def _uncovered(patterns: Patterns, f: Finding) -> Finding:
    """``f``, a fold finding some of whose lost facts the patterns cover, with the facts
    none covers named at the end of its message: they are why it still fires, and
    the lost lists no longer show the covered ones (usertest21 #3, usertest22 #3: the
    message led with suppressed facts, and the one left was "not listed")."""
    left = [t for t in dict.fromkeys(named_discriminators(f)) if not patterns.hits(f.code, t)]
    if not left:
        return f
    shown = ", ".join(repr(t[:120]) for t in left[:UNCOVERED_NAMED])
    more = f" and {len(left) - UNCOVERED_NAMED} more" if len(left) > UNCOVERED_NAMED else ""
    return replace(f, message=f"{f.message}; not covered by [[suppress]]: {shown}{more}")


def _session(r: SessionReport, patterns: Patterns, used: set[int]) -> SessionReport:
    kept: list[Finding] = []
    kept_ids: set[int] = set()  # of the findings as the engine made them
    folds_gone: set[tuple[str, str]] = set()
    fired = frozenset((f.code, fold) for f in r.findings
                      if f.code in FOLD_RULES and (fold := _fold_of(f)) is not None)
    for f in r.findings:
        gone, hit = covering(patterns, f)
        used.update(hit)
        if not gone:
            kept.append(_uncovered(patterns, f) if hit else f)
            kept_ids.add(id(f))
        elif f.code in FOLD_RULES and (fold := _fold_of(f)) is not None:
            folds_gone.add((f.code, fold))
    gone_pairs = frozenset(folds_gone)

    def facts(items: list[dict[str, Any]], fold: Any = None) -> list[dict[str, Any]]:
        out = []
        for d in items:
            hit = covered_fact(patterns, d, fold, gone_pairs, fired)
            used.update(hit)
            if not hit:
                out.append(d)
        return out

    extra = dict(r.extra)
    if extra.get("lost_discriminators"):
        extra["lost_discriminators"] = facts(extra["lost_discriminators"])
    if extra.get("folded_rounds"):
        removed = [f for f in r.findings if f.code in FOLD_RULES and id(f) not in kept_ids]
        extra["folded_rounds"] = _unfolded(extra["folded_rounds"], removed)
    compactions = []
    for c in r.compactions:
        if c.get("lost"):
            shown = facts(c["lost"], c.get("summary_id"))  # usertest15: fold = ID too
            c = {**c, "lost": shown, **({"lost_suppressed": n} if (
                n := len(c["lost"]) - len(shown)) else {})}
        compactions.append(c)
    extra["suppressions"] = {"findings": len(r.findings) - len(kept)}
    return replace(r, findings=kept, compactions=compactions, extra=extra)


def apply(report: Report, entries: tuple[Suppression, ...]
          ) -> tuple[Report, list[Suppression]]:
    """``report`` without what ``entries`` suppress, and the entries that matched
    nothing (no finding and no lost fact in any trace).  No entries: unchanged."""
    if not entries:
        return report, []
    used: set[int] = set()
    patterns = Patterns(entries)
    sessions = [_session(s, patterns, used) for s in report.sessions]
    unmatched = [s for i, s in enumerate(entries) if i not in used]
    return replace(report, sessions=sessions), unmatched
