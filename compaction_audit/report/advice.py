"""The rehydration advice of an episode, in words, for every format that writes words.

CA101 (salience-inversion) findings carry
``values["rehydrate"]`` (:func:`compaction_audit.rehydrate.suggestions`, seed 000,
"Operational Effect": expand the lowest-depth summary with the highest provenance
fan-out).  An episode of several rounds acts on its last round's advice, the first
round's summary having maybe been evicted since (usertest49 #3); the terminal, GitHub,
SARIF, JUnit, Markdown and HTML reports all say it with :func:`episode_advice`.
"""

from __future__ import annotations

from typing import Any

from compaction_audit.rules.base import Finding


def later_advice(first: Finding, last: Finding) -> dict[str, Any] | None:
    """The rehydration advice (``values["rehydrate"]``) of an episode's last finding
    where it differs from its first's, else None: the summary to expand at the last
    round, the first round's having maybe been evicted since (usertest49 #3, usertest50
    #4)."""
    later = last.values.get("rehydrate")
    return later if later and later != first.values.get("rehydrate") else None


def _leaves(n: int) -> str:
    return f"{n:,} lea{'f' if n == 1 else 'ves'}"


def rehydrate_words(s: dict[str, Any]) -> str:
    """The rehydration advice of a CA101 finding (``values["rehydrate"]``), in
    words: its leaves to read again (offloaded, out of the working set) and their
    tokens; where no leaf of the summary can be read again, that rehydrating it
    restores nothing (usertest43 #4: "0 resolvable leaves = 0 tokens; raw tokens needed
    ...: 26" read as advice to follow; usertest65 #1: a leaf back in the working set
    counted).  Token counts are tokens."""
    if s.get("summary") is None:
        return f"rehydrate: no summary in the working set; restore {s['tokens_needed']:,} " \
               "raw tokens"
    if not s.get("leaves_to_read"):
        return (f"rehydrate {s['summary']} (depth {s['depth']}, fan-out {s['fan_out']}): "
                "none of its leaves can be read again (each evicted or already in the "
                f"working set), so it cannot restore the {s['tokens_needed']:,} raw tokens "
                "the target raw_ratio needs")
    over = s.get("over_budget")
    past = (f" (with them the working set exceeds the budget by {over:,} "
            f"token{'' if over == 1 else 's'}, every summary kept)"
            if isinstance(over, int) and over > 0 else "")
    return (f"rehydrate {s['summary']} (depth {s['depth']}, fan-out {s['fan_out']}, "
            f"{_leaves(s['leaves_to_read'])} to read again = "
            f"{s['leaf_tokens_to_read']:,} tokens); raw tokens needed for the target "
            f"raw_ratio: {s['tokens_needed']:,}"
            + past)


def episode_advice(first: Finding, last: Finding) -> str | None:
    """The advice an episode (from ``first`` to ``last`` finding) ends with: its last
    round's rehydration, ``"at round 19: rehydrate t1.111 (...)"`` when it differs from
    the first round's, else the first round's without a round; None for a finding
    without ``values["rehydrate"]`` (every rule but CA101; provenance-floor, CA102,
    counts the offloaded spans to read back in its message instead: usertest65 #6)."""
    later = later_advice(first, last)
    advice = later or first.values.get("rehydrate")
    if not isinstance(advice, dict):
        return None
    at = f"at round {last.round}: " if later and last.round != first.round else ""
    return at + rehydrate_words(advice)


def what_to_do(first: Finding, last: Finding) -> str:
    """An episode's action (the rule's, seed section in its docstring) followed by its
    rehydration advice (:func:`episode_advice`) where it has one: the words after
    "What to do:" in the GitHub and SARIF messages and "action:" in JUnit."""
    advice = episode_advice(first, last)
    return f"{first.action}; {advice}" if advice else first.action
