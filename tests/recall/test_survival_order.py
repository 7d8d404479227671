"""An order survives a fold only in its own direction (usertest53 #2).

"Apply migration 0047 before the deploy of v4.2.1 to prod." folded into "the deploy of
v4.2.1 to prod goes before migration 0047" was kept: the summary held every
identifier-like word of the child's order and a "before", the direction not compared.
Which side is first follows from the marker (``after`` and ``preceded by`` put the
right side first); a summary clause reverses the order when more of the identifier-like
words it is matched by are on the other side than on their own.  An order of plain
words is matched by two shared stems, its direction not compared.  Each case is worked out by hand.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall import survival as sv
from compaction_audit.recall.extract import Kind
from compaction_audit.recall.survival.order import FIRST, SECOND, reversed_in, sides
from tests.conftest import LogWriter
from tests.logs import rnd
from tests.recall.test_survival_index import _one

MIGRATE = "Apply migration 0047 before the deploy of v4.2.1 to prod."


def test_sides_follow_the_marker() -> None:
    # "before": the left side first; "after": the right side first; a word on both
    # sides tells no order
    words = ("apply", "migration", "0047", ">", "deploy", "4.2.1")
    assert sides("Apply migration 0047 before deploy v4.2.1", words) == (
        {"apply", "migration", "0047"}, {"deploy", "4.2.1"})
    assert sides("Apply migration 0047 after deploy v4.2.1", words) == (
        {"deploy", "4.2.1"}, {"apply", "migration", "0047"})
    assert sides("Apply migration 0047, afterwards deploy v4.2.1", words)[0] == {
        "apply", "migration", "0047"}
    assert sides("x before y", ("db", ">", "db", "up")) == (frozenset(), {"up"})
    assert sides("no marker here", words) is None
    assert sides("before y", (">", "y")) is None  # one side only


def test_a_marker_that_opens_the_clause_puts_the_main_clause_first_or_second() -> None:
    """usertest54 #2: "Before X, Y" is Y first, "After X, Y" X first; the norm has every
    word on its right, and no side was read.  Without a comma no side is read."""
    words = (">", "migration", "0047", "deploy", "4.2.1")
    assert sides("Before migration 0047, deploy v4.2.1", words) == (
        {"deploy", "4.2.1"}, {"migration", "0047"})
    assert sides("After migration 0047, deploy v4.2.1", words) == (
        {"migration", "0047"}, {"deploy", "4.2.1"})
    assert sides("Before migration 0047 deploy v4.2.1", words) is None


def test_a_majority_of_the_words_decides() -> None:
    keys = (frozenset({"0047"}), frozenset({"4.2.1", "prod"}))
    f, s = FIRST, SECOND
    assert reversed_in(keys, frozenset({s + "0047", f + "4.2.1", f + "prod"}))
    # one word moved, two kept: the same order (a word can turn sides with the sentence)
    assert not reversed_in(keys, frozenset({f + "0047", f + "4.2.1", s + "prod"}))
    # one of each: no majority, kept
    assert not reversed_in(keys, frozenset({s + "0047", s + "4.2.1"}))


@pytest.mark.parametrize(("summary", "kept"), [
    ("Plan: the deploy of v4.2.1 to prod goes before migration 0047.", False),
    ("Deploy v4.2.1 to prod, then apply migration 0047.", False),
    ("Deploy v4.2.1 to prod after migration 0047.", True),
    ("Apply migration 0047, then deploy v4.2.1 to prod.", True),
    ("The deploy of v4.2.1 to prod is preceded by migration 0047.", True),
    # usertest54 #1: an "after" that points back is "afterwards"
    ("Apply migration 0047 and after that deploy v4.2.1 to prod.", True),
    ("Migration 0047 was applied, and after it the v4.2.1 deploy to prod went out.", True),
    # usertest55 #9: "after all" is no marker
    ("Migration 0047 is, after all, applied before the deploy of v4.2.1 to prod.", True),
    # usertest55 #7: "after that <word>" may be either: no side read, kept
    ("Deploy v4.2.1 to prod after that migration 0047 completes.", True),
    ("Apply migration 0047 after that deploy of v4.2.1 to prod completes.", True),
    # adv99 #5, #6: stated both ways, the last word decides
    (MIGRATE + " Apply migration 0047 after the deploy of v4.2.1 to prod.", False),
    ("Apply migration 0047 after the deploy of v4.2.1 to prod. " + MIGRATE, True),
    # usertest54 #2: a marker that opens the sentence
    ("Before migration 0047, deploy v4.2.1 to prod.", False),
    ("After the deploy of v4.2.1 to prod, apply migration 0047.", False),
    ("Before the deploy of v4.2.1 to prod, apply migration 0047.", True),
    ("After migration 0047, deploy v4.2.1 to prod.", True),
    # adv99 #7: control characters in the text are words, never side tags
    ("The deploy of v4.2.1 to prod goes before migration 0047 \x010047 \x014.2.1.", False),
])
def test_an_order_by_its_identifiers(summary: str, kept: bool) -> None:
    assert sv.survives(_one(MIGRATE, Kind.ORDERING), summary) is kept


@pytest.mark.parametrize(("child", "summary"), [
    # no identifier-like word: matched by two shared stems, its direction not compared
    # (a Cline session reordered these two buttons; its summary states the new order)
    ("The action (filter icon) is rendered before the text button.",
     "Sessions text button renders before the filter icon (action)."),
    ("Restart db after backup.", "Restart the db before the backup."),
    ("Run the linter before committing.", "Commit, then run the linter."),
])
def test_an_order_of_plain_words_keeps_no_direction(child: str, summary: str) -> None:
    assert sv.survives(_one(child, Kind.ORDERING), summary)


def test_a_reversed_order_is_a_lost_fact(write_log: LogWriter) -> None:
    log = [rnd(0, spans=[{"id": "u", "tokens": 20, "text": MIGRATE, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 12, "children": ["u"],
                              "text": "Plan: the deploy of v4.2.1 to prod goes before "
                                      "migration 0047."}], evicted=["u"])]
    report = audit(str(write_log(log)))
    lost = [d for d in report.extra["lost_discriminators"] if d["kind"] == "ordering"]
    assert [d["text"] for d in lost] == [MIGRATE.rstrip(".")]
