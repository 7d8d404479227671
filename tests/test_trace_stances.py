"""``trace`` reads a rule's object and a question as the audit does (usertest38 #4): the
call that breaks a lost rule does not hold the rule's object, a question does not
hold what it asks for, and a fold that states a rule reversed "flipped" the query
whatever form it takes (the rule, a flag inside it, a word of it)."""

from __future__ import annotations

from typing import Any

from compaction_audit.io.native import read_native
from compaction_audit.trace import trace
from tests.logs import LogWriter, rnd
from tests.recall.test_stances import RULE


def span(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def test_the_call_that_breaks_a_lost_rule_is_named_as_not_holding_it(
        write_log: LogWriter) -> None:
    path = str(write_log(RULE))
    root = trace(read_native(path), "--force")
    # it read "after the loss it is stated again: span t (tool:t, round 3)"
    assert root.label == (
        "discriminator '--force': 3 spans: 2 lost, 1 in context; not held by span t "
        "(tool:t, round 3, line 4), which names it only outside the rule it belongs to")
    t = root.children[-1]
    assert (t.data["span"], t.data["fate"], t.data["holds"]) == ("t", "in context", False)
    assert t.label == ("span t (round 3, line 4; now retained): in context (outside the "
                       "rule it belongs to); identifier '--force'")
    assert root.data["not_held"] == {"span": "t", "source": "tool:t", "spans": 1,
                                     "why": "outside the rule it belongs to"}
    assert root.data["held"] is None
    # deploy.sh, which a stated plainly, is a fact of its own: t holds it again
    again = trace(read_native(path), "deploy.sh")
    assert again.label == (
        "discriminator 'deploy.sh': 3 spans: 2 lost, 1 in context; after the loss it is "
        "stated again: span t (tool:t, round 3, line 4)")
    assert "holds" not in again.children[-1].data


def test_a_question_is_named_as_not_holding_what_it_asks_for(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("u", "Set read_timeout_ms to 45000 on staging.")]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"],
                           "text": "Adjusted the config."}], evicted=["u"]),
        rnd(2, spans=[span("q", "Which value of read_timeout_ms did we use?", "assistant")]),
    ]))
    # it read "after the loss it is stated again: span q (assistant, round 2)"
    assert trace(read_native(path), "read_timeout_ms").label == (
        "discriminator 'read_timeout_ms': 2 spans: 1 lost, 1 in context; not held by "
        "span q (assistant, round 2, line 3), which asks for it")


def flip_log(write_log: LogWriter, summary: str, name: str) -> str:
    return str(write_log([
        rnd(0, spans=[span("u", "Never use --force when pushing to main.")]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"], "text": summary}],
            evicted=["u"]),
        rnd(2, spans=[span("t", "$ git push --force origin main", "tool:t")]),
    ], name))


def test_a_reversed_rule_is_flipped_whatever_form_the_query_takes(
        write_log: LogWriter) -> None:
    path = flip_log(write_log, "Use --force when pushing to main.", "flip.jsonl")
    fold = ("flipped at fold F (depth 1, round 1, line 2): 'Use --force when pushing to "
            "main.'")
    # --force read "carried by fold F" and "Never use --force" "LOST at fold F"
    for query in ("--force", "Never use --force", "force", "Never use --force when "
                  "pushing to main"):
        root = trace(read_native(path), query)
        u = root.children[0]
        assert (u.data["span"], u.data["fate"]) == ("u", "flipped"), query
        assert [c.label for c in u.children] == [fold], query
    root = trace(read_native(path), "--force")
    assert root.label == (
        "discriminator '--force': 2 spans: 1 flipped, 1 in context; not held by span t "
        "(tool:t, round 2, line 3), which names it only outside the rule it belongs to")


def test_a_rule_kept_or_dropped_is_not_called_flipped(write_log: LogWriter) -> None:
    kept = flip_log(write_log, "Never use --force when pushing to main.", "kept.jsonl")
    root = trace(read_native(kept), "--force")
    assert [n.data["fate"] for n in root.children] == ["carried", "in context"]
    assert root.label == "discriminator '--force': 2 spans: 1 carried, 1 in context"
    gone = flip_log(write_log, "Pushed the hotfix branch.", "gone.jsonl")
    root = trace(read_native(gone), "Never use --force")
    assert [(n.data["span"], n.data["fate"]) for n in root.children] == [("u", "lost")]
