"""Suppressions: silence one item the team has judged, from the configuration file
(issue 13, section 4, "No way to silence one item").

Each ``[[suppress]]`` entry (``[[tool.compaction-audit.suppress]]`` in
``pyproject.toml``) names:

- ``rule`` (a code such as ``CA301`` or a name) and ``discriminator``, a glob pattern
  (:func:`fnmatch.fnmatchcase`: ``*``, ``?``, ``[...]``; case-sensitive) over the text
  of a lost discriminator; a finding of that rule is suppressed when every
  discriminator it names matches one of the rule's patterns (a fold that also dropped
  a fact no pattern covers still fires; a finding that names none is not
  suppressed); or
- ``fold``, a fold's (summary's) id, with an optional ``rule``: the findings about
  that fold are suppressed;
- optionally ``reason``, shown by ``config show`` (for the reader of the file).

The lost lists drop the facts a suppression covers too: a discriminator whose text
matches an entry's pattern, a fact dropped by a suppressed fold; the Folds section
(``folded_rounds``) drops each fold whose fold finding was suppressed, with its counts.
Each session counts what was suppressed (``extra["suppressions"]``); an entry that matched nothing
in the whole run is returned so the command can say so (a stale entry, or a typo).
``audit``, ``baseline create`` and ``diff`` (both runs) apply them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any

from compaction_audit.errors import UsageError
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.rules import RULES
from compaction_audit.rules.base import Finding

KEYS = ("rule", "discriminator", "fold", "reason")


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
    missing or doubled target, or a discriminator without its rule."""
    if not isinstance(value, list):
        raise UsageError(f"{where}: suppress must be an array of tables ([[suppress]])")
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
        out.append(Suppression(f"{where} suppress[{i}]", code, pattern, fold,
                               entry.get("reason", "")))
    return tuple(out)


def named_discriminators(f: Finding) -> list[str]:
    """The texts of the discriminators a finding names (a fold rule's
    ``children[].dropped[].text``); empty for a finding about no discriminator."""
    out: list[str] = []
    for child in f.values.get("children") or []:
        if isinstance(child, dict):
            out += [str(d.get("text")) for d in child.get("dropped") or []
                    if isinstance(d, dict) and d.get("text") is not None]
    return out


def _fold_of(f: Finding) -> str | None:
    fold = f.values.get("fold")
    return str(fold) if fold is not None else f.entity


def covering(entries: tuple[Suppression, ...], f: Finding) -> tuple[bool, set[int]]:
    """Whether ``entries`` suppress finding ``f``, and the indexes of the entries that
    matched it or one of its discriminators (see the module docstring)."""
    mine = [(i, s) for i, s in enumerate(entries) if s.rule is None or s.rule == f.code]
    folds = {i for i, s in mine if s.fold is not None and _fold_of(f) == s.fold}
    texts = named_discriminators(f)
    patterns = [(i, s.discriminator) for i, s in mine if s.discriminator is not None]
    hits = [{i for i, p in patterns if fnmatchcase(t, p or "")} for t in texts]
    used = folds.union(*hits) if hits else set(folds)
    return bool(folds) or (bool(texts) and all(hits)), used


def covers_fact(s: Suppression, d: dict[str, Any]) -> bool:
    """True when ``s`` hides the lost fact ``d`` from the lost lists."""
    if s.fold is not None:
        return d.get("fold") is not None and str(d.get("fold")) == s.fold
    return fnmatchcase(str(d.get("text", "")), s.discriminator or "")


FOLD_RULES = ("CA301", "CA302")
"""The rules with one finding per fold that dropped a fact (silent-discriminating-fold,
topic-only-fold): the report's Folds section counts the same facts."""


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


def _session(r: SessionReport, entries: tuple[Suppression, ...], used: set[int]
             ) -> SessionReport:
    kept: list[Finding] = []
    for f in r.findings:
        gone, hit = covering(entries, f)
        used.update(hit)
        if not gone:
            kept.append(f)

    def facts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for d in items:
            hit = [i for i, s in enumerate(entries) if covers_fact(s, d)]
            used.update(hit)
            if not hit:
                out.append(d)
        return out

    extra = dict(r.extra)
    if extra.get("lost_discriminators"):
        extra["lost_discriminators"] = facts(extra["lost_discriminators"])
    if extra.get("folded_rounds"):
        still = {id(f) for f in kept}
        removed = [f for f in r.findings if f.code in FOLD_RULES and id(f) not in still]
        extra["folded_rounds"] = _unfolded(extra["folded_rounds"], removed)
    compactions = [{**c, "lost": facts(c["lost"])} if c.get("lost") else c
                   for c in r.compactions]
    extra["suppressions"] = {"findings": len(r.findings) - len(kept)}
    return replace(r, findings=kept, compactions=compactions, extra=extra)


def apply(report: Report, entries: tuple[Suppression, ...]
          ) -> tuple[Report, list[Suppression]]:
    """``report`` without what ``entries`` suppress, and the entries that matched
    nothing (no finding and no lost fact in any trace).  No entries: unchanged."""
    if not entries:
        return report, []
    used: set[int] = set()
    sessions = [_session(s, entries, used) for s in report.sessions]
    unmatched = [s for i, s in enumerate(entries) if i not in used]
    return replace(report, sessions=sessions), unmatched
