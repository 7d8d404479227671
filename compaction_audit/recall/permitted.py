"""Acts the person allowed: a later call that does what a lost rule forbade is no
violation when the person granted that act in between (adv123 #2).

A person says "Never use --force on this branch", then "Actually, --force is fine now,
go ahead and push it" (before the compaction, or after it: "You can force push
feature/api now"), and the agent pushes with ``--force``: lost-rule-violated (CA307)
read the rule as in force.  :func:`without_permitted` drops a violation when a span of
the person's (:func:`~compaction_audit.recall.ranking.person_source`) born after the
rule's span and before the call grants the act: a sentence of its that lifts
(:func:`~compaction_audit.recall.analysis.lifted.statements`: a permission or an
imperative, no question, condition, report, hedge or word of prohibition) names the
violation's object as the rule's matching does (a whole word or phrase), a flag's
common verb form counted ("force push", "force-push" name ``--force``), and not to
refuse or replace it ("push main without --force", "use --force-with-lease instead");
the grant's scope (a branch, a path, a program it names) must be the call's, a later
message naming the act takes it back, and a grant for one act is spent by the first
call (adv124 #1, #2: each hid a true violation).

Only spans holding an object's words are read in Python, once each: a few rows after
the violations are found, none when there is no violation.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl

from compaction_audit.recall.analysis.lifted import statements
from compaction_audit.recall.ranking import person_source

__all__ = ["without_permitted"]

_ALIASES = {"--force": re.compile(r"(?i)\bforce[- ]?push(?:es|ed|ing)?\b")}
"""A flag the person names by its verb form ("force push it", "you can force-push")."""
_REFUSING_RE = re.compile(r"(?i)\b(?:without|instead|rather|skip\w*|except|avoid\w*"
                          r"|in\s+place\s+of|not|no|never|don'?t|stop|drop|remove)\b")
"""Words that name an act to refuse or replace it ("push main without --force", "use
--force-with-lease instead of --force", "skip --force": adv124 #1)."""
_SCOPE_RE = re.compile(r"(?i)\b(?:on|to|for|with|in|into|onto)\s+(?:(?:a|an|the|my|our|your)"
                       r"\s+)?([\w./@:-]+)")
"""A scope a grant names after a preposition ("on feature/x", "with npm install", "on
a new branch": adv125 #5)."""
_IDENTISH_RE = re.compile(r"[\w.@:-]*[/._\d][\w./@:-]*")
"""An identifier-like word (a branch, a path, a version) a grant names."""
_SCOPE_SKIP = frozenset({"it", "them", "this", "that", "now", "me", "you", "us", "the",
                         "a", "an", "go", "do", "be", "push", "run", "use", "everyone",
                         "everybody", "all", "both", "here", "there", "end", "side"})
"""Words after a preposition that name no scope ("for now", "to it", "fine on my end":
adv125 #10)."""
_ONCE_RE = re.compile(r"(?i)\b(?:once|(?:this|one)\s+(?:one\s+)?time)\b")
"""A grant for one act ("force push main this one time"): spent by the first call."""
_TAKEN_BACK_RE = re.compile(r"(?i)\b(?:don'?t\s+do\s+(?:that|it)|scratch\s+that|never\s*mind"
                            r"|changed\s+my\s+mind|cancel\s+that|hold\s+off|take\s+that\s+back"
                            r"|actually,?\s+(?:no|don'?t))\b")
"""A later message that takes a grant back without naming the act ("scratch that":
adv125 #5)."""
_ONCE = "\x00once"
"""The scope mark of a grant for one act (:data:`_ONCE_RE`)."""


def _grant(sentence: str, obj: str, pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The scope words a person's lifting ``sentence`` grants ``obj`` under (each must
    be in the call: a branch, a path, a program named after "on", "with", ...), None
    when it grants nothing of ``obj``: it does not name it (``pattern``, or its verb
    form: :data:`_ALIASES`), names it to refuse or replace it (:data:`_REFUSING_RE`), or
    names a longer flag it starts ("--force-with-lease" is not "--force")."""
    low = sentence.lower()
    flag = obj.split()[-1].lower() if obj.split() else ""
    if _REFUSING_RE.search(low) or (flag.startswith("-") and f"{flag}-" in low):
        return None
    if not _names_act(sentence, obj, pattern):
        return None
    named = set(obj.lower().split())
    words = {m.group(1).rstrip(".,:;") for m in _SCOPE_RE.finditer(low)}
    words |= {w for t in _IDENTISH_RE.findall(low)
              if re.search(r"[/_\d]|\.\w", w := t.rstrip(".,:;"))}
    scope = frozenset(w for w in words if w and w not in named and w not in _SCOPE_SKIP
                      and not w.isdigit())
    return scope | {_ONCE} if _ONCE_RE.search(low) else scope


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n", text) if s.strip()]


def without_permitted(found: pl.DataFrame, items: pl.DataFrame,
                      pattern: Callable[[str], str], gone: pl.Series | None = None
                      ) -> pl.DataFrame:
    """``found`` (violations: ``span``, ``object``, ``violated_span`` and more) without the
    rows whose act a person granted between the rule's span and the call, in the order
    of :func:`~compaction_audit.recall.violations.violations`' calls: the round, the
    line, then the items table's order. A grant counts for a call that holds every scope
    word it names (:func:`_grant`: "you can force push feature/x" is no grant to push
    main), and only until a later message of the person's names the act again to take it
    back ("I changed my mind about the force push", "don't force push"), and a grant for
    one act ("this one time") until a call does it (adv124 #2). ``items``: ``id``,
    ``ri``, ``line``, ``source``, ``text``; ``pattern``: an object's regex as the rule's
    matching reads a text for it (a whole word or phrase); ``gone``: the ids the person
    took back (:func:`~compaction_audit.takeback.taken_back`), whose grants grant nothing
    (usertest69 #2: a rewound "you can force push" hid a violation). The same frame when
    no row is dropped."""
    if not found.height:
        return found
    order = (items.select("id", "ri", "line", "source", "text").with_row_index("_p")
             .sort("ri", "line", "_p").with_row_index("_pos"))
    rows = (found.with_row_index("_row")
            .join(order.select(pl.col("id").alias("span"), pl.col("_pos").alias("_rule")),
                  on="span", how="left")
            .join(order.select(pl.col("id").alias("violated_span"),
                               pl.col("_pos").alias("_call"),
                               pl.col("text").fill_null("").str.to_lowercase()
                               .alias("_said")), on="violated_span", how="left"))
    objects = {o: re.compile(pattern(o)) for o in rows["object"].unique().to_list() if o}
    words = sorted({w.lower() for o in objects for w in o.split()}
                   | {"force" for o in objects if o.split()[-1].lower() in _ALIASES})
    first, last = rows["_rule"].min(), rows["_call"].max()
    if first is None or last is None:
        return found
    people = (order
              .filter(person_source(pl.col("source")) & pl.col("text").is_not_null()
                      & (pl.col("_pos") > first) & (pl.col("_pos") < last)
                      & ~pl.col("id").is_in((gone if gone is not None else
                                             pl.Series([], dtype=pl.String)).implode())
                      & (pl.col("text").str.to_lowercase().str.contains_any(words)
                         | pl.col("text").str.contains(_TAKEN_BACK_RE.pattern)))
              .select("_pos", "text").rows())
    calls = (order.filter(pl.col("source").fill_null("").str.starts_with("tool_call:")
                          & (pl.col("_pos") > first) & (pl.col("_pos") < last)
                          & pl.col("text").str.to_lowercase().str.contains_any(words))
             .select("_pos", "text").rows())
    grants: dict[str, list[tuple[int, frozenset[str]]]] = {}
    revokes: dict[str, list[int]] = {}
    for pos, text in people:
        said = statements(text)
        for obj, regex in objects.items():
            scopes = [g for s in _sentences(said) if (g := _grant(s, obj, regex)) is not None]
            if scopes:
                grants.setdefault(obj, []).extend((pos, g) for g in scopes)
            elif _TAKEN_BACK_RE.search(text) or (_names_act(text, obj, regex)
                                                 and _REFUSING_RE.search(text)):
                revokes.setdefault(obj, []).append(pos)  # taken back, or refused again
    if not grants:
        return found
    used = {obj: [pos for pos, text in calls if _names_act(text, obj, regex)]
            for obj, regex in objects.items() if any(_ONCE in g for _, g in grants.get(obj, ()))}

    def holds(obj: str, rule: int, call: int, call_text: str) -> bool:
        return any(
            rule < pos < call and all(re.search(rf"(?<![\w/.-]){re.escape(w)}(?![\w/-])",
                                                call_text) for w in scope - {_ONCE})
            and not any(pos < r < call for r in revokes.get(obj, ()))
            and not (_ONCE in scope and any(pos < u < call for u in used.get(obj, ())))
            for pos, scope in grants.get(obj, ()))

    allowed = [row for row, obj, rule, call, call_text in rows.select(
        "_row", "object", "_rule", "_call", "_said").iter_rows()
        if rule is not None and call is not None and holds(obj, rule, call, call_text)]
    if not allowed:
        return found
    return (found.with_row_index("_row")
            .filter(~pl.col("_row").is_in(allowed)).drop("_row"))


def _names_act(text: str, obj: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``text`` names ``obj`` (or its verb form) at all."""
    alias = _ALIASES.get(obj.split()[-1].lower()) if obj.split() else None
    return bool(pattern.search(text) or (alias is not None and alias.search(text)))
