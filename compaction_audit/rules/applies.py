"""Whether a trace holds anything a rule can judge.

A rule judges one kind of input (:attr:`compaction_audit.rules.base.Rule.judges`):
every round, the summaries, the folds, or the aggregates the agent logged itself.  A
trace with none of it is *not applicable* to the rule: the engine records that as a
note covering every round, and a selection of such rules only reads "PASS (no
selected rule could judge this trace)", never a plain pass (issue 11, class 2: adv22a
F2 for CA204, adv23 F4 for CA203 on every product's transcript).
"""

from __future__ import annotations

from compaction_audit.model import Session

JUDGES = ("rounds", "summaries", "folds", "logged")
"""The kinds of input a rule judges (:attr:`Rule.judges`)."""

NOT_APPLICABLE = {
    "summaries": "not applicable: no summary in this trace",
    "folds": "not applicable: no fold in this trace",
    "logged": "not applicable: the log records no aggregate of its own (logged)",
}
"""The note of a rule whose kind of input the trace lacks, by :data:`JUDGES` kind."""


def not_applicable(judges: str, session: Session) -> str | None:
    """The note for a rule judging ``judges`` (one of :data:`JUDGES`) when ``session``
    holds none of it, else None.

    ``summaries``: an item of kind ``summary``; ``folds``: a provenance edge (a summary
    and a child it folded); ``logged``: a round with a ``logged`` aggregate (log-format
    spec, "round": ``logged`` is optional).  ``rounds`` always applies to a trace with
    a round.  Raises ``ValueError`` for a kind not in :data:`JUDGES`.
    """
    if judges not in JUDGES:
        raise ValueError(f"unknown kind of input {judges!r}; one of {', '.join(JUDGES)}")
    if judges == "rounds":
        return None
    if judges == "summaries":  # a column's test, no query (a small trace's cost is its
        present = bool((session.items["kind"] == "summary").any())  # queries: test_plans)
    elif judges == "folds":
        present = session.edges.height > 0
    else:
        rounds = session.rounds
        present = any(rounds[c].null_count() < rounds.height
                      for c in rounds.columns if c.startswith("logged_"))
    return None if present else NOT_APPLICABLE[judges]
