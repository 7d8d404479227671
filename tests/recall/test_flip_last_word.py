"""A summary that keeps a rule and then revokes it flips it (adv98 #2).

"Do not delete the prod-db-7 backups. Update from the user: delete the prod-db-7
backups." kept the rule (restated word for word), so no CA304, though the same
reversal alone is one: the summary's last word on the rule is the reversal.  A rule
restated after its reversal ("Correction: do not ...") keeps it.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import Discriminator, extract
from compaction_audit.recall.survival import flipped, survives
from tests.logs import LogWriter, rnd

RULE = "Do not delete the prod-db-7 backups."


def _rule() -> Discriminator:
    return next(d for d in extract(RULE) if d.kind.value == "negation")


@pytest.mark.parametrize(("summary", "kept"), [
    (RULE, True),
    ("Delete the prod-db-7 backups.", False),
    (RULE + " Update from the user: delete the prod-db-7 backups.", False),
    ("Delete the prod-db-7 backups. Correction: do not delete the prod-db-7 backups.",
     True),
    (RULE + " Delete the prod-db-7 backups. Later: do not delete the prod-db-7 backups.",
     True),
    # the reversal after a semicolon: a sentence of its own, the last word
    ("Do not delete the prod-db-7 backups; delete the prod-db-7 backups.", False),
])
def test_the_last_word_on_a_rule_decides(summary: str, kept: bool) -> None:
    d = _rule()
    assert survives(d, summary) is kept
    assert flipped(d, summary) is (not kept)


def test_a_revoked_rule_is_a_flip_finding(write_log: LogWriter) -> None:
    log = [rnd(0, spans=[{"id": "u", "tokens": 10, "text": RULE, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u"],
                              "text": RULE + " Update from the user: delete the "
                                             "prod-db-7 backups."}], evicted=["u"])]
    found = [f for f in audit(str(write_log(log))).findings if f.code == "CA304"]
    assert [f.severity.value for f in found] == ["error"]
    assert "Update from the user: delete the prod-db-7 backups." in found[0].message


def test_many_restated_and_reversed_rules_are_read_in_linear_time() -> None:
    """adv99 #3: each rule that a summary both restated and reversed indexed every
    sentence again (800 rules, 105 KB: 191 s).  Counted, not timed: the sentences
    indexed for 200 such rules are the summary's sentences, once."""
    from compaction_audit.recall.survival import flips as sflips
    from compaction_audit.recall.survival import index as sindex

    rules = [f"Do not delete the prod-db-{i} backups." for i in range(200)]
    summary = " ".join(rules) + " " + " ".join(
        f"Update: delete the prod-db-{i} backups." for i in range(200))
    calls = 0
    real = sindex._index.__wrapped__

    def counted(text: str) -> object:
        nonlocal calls
        calls += 1
        return real(text)

    sflips._sentence_lookup.cache_clear()
    sindex._index.cache_clear()
    found = [next(d for d in extract(r) if d.kind.value == "negation") for r in rules]
    sflips._index.__wrapped__ = counted  # type: ignore[attr-defined]
    try:
        assert [flipped(d, summary) for d in found] == [True] * 200
    finally:
        sflips._index.__wrapped__ = real  # type: ignore[attr-defined]
    assert calls == 400  # each of the 400 sentences once (was 200 x 400)


@pytest.mark.parametrize(("kids", "flip"), [
    # usertest54 #3: the person lifted the rule after stating it; the summary says so
    ([RULE, "The audit is done: you can delete the prod-db-7 backups now."], False),
    ([RULE, "You can now remove the prod-db-7 backups."], False),  # not worded as a rule
    ([RULE, "You can now delete the prod-db-8 backups."], True),  # another rule lifted
    # usertest55 #1: only the person lifts a rule, and not by a question
    ([RULE, ("assistant", "Delete the prod-db-7 backups.")], True),
    ([RULE, ("tool", "You can delete the prod-db-7 backups with cleanup.sh")], True),
    ([RULE, "Can I delete the prod-db-7 backups?"], True),
    # the lifting said before the rule: the rule stands, the summary reverses it
    (["You can delete the prod-db-7 backups now.", RULE], True),
    ([RULE, "Thanks, noted."], True),
    # adv100 #1: a question however it is cut or marked, a lifting reported or
    # contradicted, a conditional one: no lifting (the rule stands, the flip is an error)
    ([RULE, "Can I delete the prod-db-7 backups, e.g. the old ones?"], True),
    ([RULE, "Can I delete the prod-db-7 backups now\uff1f"], True),
    ([RULE, "Can I delete the prod-db-7 backups\nnow?"], True),
    ([RULE, "Can I delete the prod-db-7 backups (see docs/README.md)?"], True),
    ([RULE, "Alice says you can delete the prod-db-7 backups, but she is wrong."], True),
    ([RULE, "Delete the prod-db-7 backups only after I confirm."], True),
    ([RULE, "Can I delete the prod-db-7 backups. Or not?"], True),  # a question's words
    # adv101 #1, #2: the rule restated in other words, a condition, a report, a
    # retraction: no lifting
    ([RULE, "Nobody may delete the prod-db-7 backups."], True),
    ([RULE, "It is forbidden to delete the prod-db-7 backups."], True),
    ([RULE, "Stop deleting the prod-db-7 backups."], True),
    ([RULE, "Pls dont delete the prod-db-7 backups."], True),
    ([RULE, "Unless CI fails. You can delete the prod-db-7 backups."], True),
    ([RULE, "In case the disk fills, delete the prod-db-7 backups."], True),
    ([RULE, "Alice told me you can delete the prod-db-7 backups."], True),
    ([RULE, "Bob: delete the prod-db-7 backups."], True),
    ([RULE, "Delete the prod-db-7 backups. Just kidding."], True),
    # adv102: a retraction or prerequisite in a sentence of its own, a report, a quote,
    # markup, a permission of someone else's, a later one: no lifting
    ([RULE, "You can delete the prod-db-7 backups. Actually, no."], True),
    ([RULE, "Bob must sign off first. Then you can delete the prod-db-7 backups."], True),
    ([RULE, "Per Alice, you can delete the prod-db-7 backups."], True),
    ([RULE, 'Bob\'s email: "You can delete the prod-db-7 backups."'], True),
    ([RULE, "> You can delete the prod-db-7 backups."], True),
    ([RULE, "Alice can delete the prod-db-7 backups."], True),
    ([RULE, "I could delete the prod-db-7 backups myself."], True),
    ([RULE, "You can delete the prod-db-7 backups tomorrow."], True),
    ([RULE, "The prod-db-7 backups may be deleted by the retention job."], True),
    # ... and what lifts: a label, "OK,", "when you're ready", a rule on another name
    ([RULE, "Update: you can delete the prod-db-7 backups."], False),
    ([RULE, "OK, delete the prod-db-7 backups."], False),
    ([RULE, "Delete the prod-db-7 backups when you're ready."], False),
    ([RULE, "You can delete the prod-db-7 backups. Don't delete the prod-db-8 ones."], False),
    # usertest57 #3: a question elsewhere in the message, "if you want", a concession:
    # the lifting sentence stands
    ([RULE, "Thanks. You can delete the prod-db-7 backups now. Is the disk full?"], False),
    ([RULE, "Delete the prod-db-7 backups if you want."], False),
    ([RULE, "Although it is risky, you can delete the prod-db-7 backups now."], False),
])
def test_a_rule_a_later_child_lifted_is_no_flip(write_log: LogWriter,
                                                 kids: list[str | tuple[str, str]],
                                                 flip: bool) -> None:
    """usertest54 #3: no CA304 and no lost rule (CA301) where the person lifted it."""
    ids = [f"u{i}" for i in range(len(kids))]
    spoken = [k if isinstance(k, tuple) else ("user", k) for k in kids]
    log = [rnd(0, spans=[{"id": i, "tokens": 10, "text": t, "role": role}
                         for i, (role, t) in zip(ids, spoken, strict=True)]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ids,
                              "text": RULE + " Update from the user: delete the "
                                             "prod-db-7 backups."}], evicted=ids)]
    report = audit(str(write_log(log)))
    assert ("CA304" in {f.code for f in report.findings}) is flip
    lost = [d["text"] for d in report.extra["lost_discriminators"] if d["kind"] == "negation"]
    assert (lost == [RULE.rstrip(".")]) is flip


def test_a_lifting_born_before_the_rule_lifts_nothing(write_log: LogWriter) -> None:
    """usertest55 #5: "later" is by the round a child was born in, not by its place
    in the fold's list of children."""
    log = [rnd(0, spans=[{"id": "lift", "tokens": 10, "role": "user",
                          "text": "You can delete the prod-db-7 backups now."}]),
           rnd(1, spans=[{"id": "rule", "tokens": 10, "role": "user", "text": RULE}]),
           rnd(2, summaries=[{"id": "S", "tokens": 8, "children": ["rule", "lift"],
                              "text": RULE + " Update from the user: delete the "
                                             "prod-db-7 backups."}],
               evicted=["rule", "lift"])]
    assert "CA304" in {f.code for f in audit(str(write_log(log))).findings}


def test_later_is_the_logs_order_not_the_summarys_children(write_log: LogWriter) -> None:
    """adv100 #2: within one round, the lifting listed before the rule was read as
    later because the summary named the rule first among its children."""
    lift = {"id": "l", "tokens": 10, "role": "user",
            "text": "You can delete the prod-db-7 backups now."}
    rule = {"id": "r", "tokens": 10, "role": "user", "text": RULE}

    def flips(spans: list[dict[str, object]], children: list[str]) -> bool:
        log = [rnd(0, spans=spans),
               rnd(1, summaries=[{"id": "S", "tokens": 8, "children": children,
                                  "text": "Delete the prod-db-7 backups."}], evicted=children)]
        return "CA304" in {f.code for f in audit(str(write_log(log))).findings}

    assert flips([lift, rule], ["r", "l"]) and flips([lift, rule], ["l", "r"])
    assert not flips([rule, lift], ["r", "l"]) and not flips([rule, lift], ["l", "r"])


def test_the_lifting_check_reads_each_rule_against_the_children_holding_its_words(
        write_log: LogWriter) -> None:
    """adv100 #5: every dropped rule was tested against every later person child of its
    fold (4,000 rules, 50 s).  Counted, not timed: 300 rules of distinct words in one
    fold, each tested only against the children that hold its words (itself)."""
    from compaction_audit.recall.analysis import lifted

    words = [f"w{i}x" for i in range(300)]
    spans = [{"id": f"s{i}", "tokens": 5, "role": "user",
              "text": f"Do not delete the {w} cluster."} for i, w in enumerate(words)]
    ids = [s["id"] for s in spans]
    log = [rnd(0, spans=spans),
           rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ids,
                              "text": "Work went on."}], offloaded=ids)]
    calls = 0
    real = lifted.lifts

    def counted(rule: Discriminator, said: str) -> bool:
        nonlocal calls
        calls += 1
        return real(rule, said)

    lifted.lifts = counted  # type: ignore[assignment]
    try:
        audit(str(write_log(log)))
    finally:
        lifted.lifts = real  # type: ignore[assignment]
    assert calls <= 300  # was 300 x 299 / 2


def test_a_lifting_childs_permission_is_no_lost_finding(write_log: LogWriter) -> None:
    """usertest57 #4: the person's "Deleting the prod-db-7 backups is fine now." was
    read as a ruled-out finding, listed as lost and made a CA301 error, though the
    summary says the user allowed it: a permission closes no path."""
    log = [rnd(0, spans=[{"id": "u1", "tokens": 10, "role": "user", "text": RULE}]),
           rnd(1, spans=[{"id": "u2", "tokens": 10, "role": "user",
                          "text": "Deleting the prod-db-7 backups is fine now."}]),
           rnd(2, summaries=[{"id": "S", "tokens": 8, "children": ["u1", "u2"],
                              "text": "The user allowed deleting the prod-db-7 backups."}],
               evicted=["u1", "u2"])]
    report = audit(str(write_log(log)))
    assert {f.code for f in report.findings} & {"CA301", "CA302", "CA304"} == set()
    assert report.extra["lost_discriminators"] == []


@pytest.mark.parametrize(("rule", "lift", "flip"), [
    # adv123 #3: a flag rule's key was looked for without its dashes, and the "no" of
    # --no-verify read as a word of prohibition: the lifted rule was flipped and lost
    ("Never use --force on main.", "You can use --force on main now.", False),
    ("Never use --no-verify on main.", "You can use --no-verify on main now.", False),
    ("Never use --runslow on main.", "You can use --runslow on main now.", False),
    # someone else's word still lifts nothing
    ("Never use --no-verify on main.", "Alice says you can use --no-verify on main.", True),
])
def test_a_flag_rule_the_person_lifted_is_no_flip(write_log: LogWriter, rule: str,
                                                  lift: str, flip: bool) -> None:
    log = [rnd(0, spans=[{"id": "u0", "tokens": 10, "text": rule, "role": "user"},
                         {"id": "u1", "tokens": 10, "text": lift, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u0", "u1"],
                              "text": f"{rule} Update from the user: "
                                      f"{rule.split(' ', 1)[1]}"}], evicted=["u0", "u1"])]
    report = audit(str(write_log(log)))
    assert ("CA304" in {f.code for f in report.findings}) is flip
    lost = [d["text"] for d in report.extra["lost_discriminators"] if d["kind"] == "negation"]
    assert (lost == [rule.rstrip(".")]) is flip
