"""``trace`` of a rule the person lifted says "lifted", as the audit reads it.

A person says "Do not delete the prod-db-7 backups", later "you can delete the
prod-db-7 backups now"; the summary of both says the rule was lifted.  The audit
finds no loss and no flipped rule there (``recall.analysis.lifted``); ``trace`` said
"flipped at fold S" and counted the span as flipped (note 37, left alone then).
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.io.native import read_native
from compaction_audit.trace import trace
from tests.logs import LogWriter, rnd

RULE = "Do not delete the prod-db-7 backups."
SUMMARY = RULE + " Update from the user: delete the prod-db-7 backups."


def _log(write_log: LogWriter, kids: list[tuple[str, str]], rounds: list[int] | None = None,
         summary: str = SUMMARY) -> str:
    ids = [f"u{i}" for i in range(len(kids))]
    born = rounds or [0] * len(kids)
    records = [rnd(r, spans=[{"id": i, "tokens": 10, "text": t, "source": who}
                             for i, (who, t), b in zip(ids, kids, born, strict=True) if b == r])
               for r in sorted(set(born))]
    records.append(rnd(max(born) + 1, evicted=ids, summaries=[
        {"id": "S", "tokens": 8, "children": ids, "text": summary}]))
    return str(write_log(records))


def test_the_trace_of_a_lifted_rule_says_who_lifted_it(write_log: LogWriter) -> None:
    path = _log(write_log, [("user", RULE),
                            ("user", "The audit is done: you can delete the prod-db-7 "
                                     "backups now.")])
    tree = trace(read_native(path), "Do not delete the prod-db-7 backups")
    assert tree.label == "discriminator 'Do not delete the prod-db-7 backups': 1 span: 1 lifted"
    [node] = tree.children[0].children
    assert node.label == ("lifted at fold S (depth 1, round 1, line 2): the person lifted "
                          "the rule in span u1 (round 0, line 1)")
    assert (node.data["result"], node.data["lifted_by"]) == ("lifted", "u1")


def test_the_rule_lifted_is_not_also_dropped_beside_its_object(write_log: LogWriter) -> None:
    """The identifier the rule is about: lifted too, and the rule is not listed as
    "also dropped" at the fold."""
    path = _log(write_log, [("user", RULE), ("user", "You can now delete the prod-db-7 "
                                                     "backups.")])
    span = next(c for c in trace(read_native(path), "prod-db-7").children
                if c.data["span"] == "u0")
    assert span.data["fate"] == "lifted"
    assert span.children[0].data["also_dropped"] == []


@pytest.mark.parametrize(("kids", "rounds", "lifted"), [
    ([("user", RULE), ("user", "You can now delete the prod-db-7 backups.")], None, True),
    ([("user", RULE), ("user", "You can now delete the prod-db-8 backups.")], None, False),
    ([("user", RULE), ("assistant", "Delete the prod-db-7 backups.")], None, False),
    ([("user", RULE), ("user", "Can I delete the prod-db-7 backups?")], None, False),
    # said before the rule, in an earlier round, though listed after it
    ([("user", RULE), ("user", "You can delete the prod-db-7 backups now.")], [1, 0], False),
])
def test_trace_and_audit_agree_on_a_lifted_rule(write_log: LogWriter,
                                                kids: list[tuple[str, str]],
                                                rounds: list[int] | None,
                                                lifted: bool) -> None:
    path = _log(write_log, kids, rounds)
    fate = trace(read_native(path), "Do not delete the prod-db-7 backups").children[0]
    assert fate.data["fate"] == ("lifted" if lifted else "flipped")
    flips = {f.code for f in audit(path).findings} & {"CA304"}
    assert flips == (set() if lifted else {"CA304"})
