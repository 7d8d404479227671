"""Paraphrase classes of issue 10, point 3 (recall/paraphrase.py), both ways."""

from __future__ import annotations

from compaction_audit.recall import paraphrase as para
from compaction_audit.recall.extract import Discriminator, Kind, extract
from compaction_audit.recall.survival import stem, survives


def one(text: str, kind: Kind, span_type: str = "prose") -> Discriminator:
    hits = [d for d in extract(text, span_type) if d.kind is kind]
    assert len(hits) == 1, hits
    return hits[0]


def spec(bullet: str) -> Discriminator:
    return one(f"## Constraints\n- {bullet}\n", Kind.REQUIREMENT, "spec")


# complementary scope ----------------------------------------------------------------

def test_a_changing_act_on_the_complementary_set_keeps_the_unchanged_set() -> None:
    d = spec("Already-closed tickets must remain unchanged")
    assert not survives(d, "The sweep job runs nightly.")
    assert survives(d, "The sweep job closes all open tickets of the queue.")
    rows = spec("Existing rows must not be modified by the migration")
    assert survives(rows, "The migration backfills new rows only.")


def test_complement_needs_the_act_before_the_set_the_same_object_and_a_positive_sentence(
) -> None:
    d = spec("Already-closed tickets must remain unchanged")
    assert not survives(d, "The page shows open tickets.")  # no changing act
    assert not survives(d, "All open tickets get closed.")  # the act after the set
    assert not survives(d, "The sweep job closes all open issues.")  # another object
    assert not survives(d, "The sweep job never closes open tickets.")  # negative
    assert not survives(d, "The sweep job closes all closed tickets.")  # the same set


def test_complement_needs_a_clause_that_keeps_a_qualified_set() -> None:
    low = "the sweep job closes all open tickets."
    assert para.kept_by_complement("Closed tickets must remain unchanged", low, stem)
    assert not para.kept_by_complement("Closed tickets are listed last", low, stem)
    assert not para.kept_by_complement("Tickets must remain unchanged", low, stem)


# resolved state ---------------------------------------------------------------------

def test_a_missing_thing_reported_added_is_kept() -> None:
    d = one("The root layout doesn't render flash messages.", Kind.NEGATION)
    assert not survives(d, "Wrote the close handler and its tests.")
    assert survives(d, "Added a flash message display to the page.")
    tests = one("The suite has no tests for the empty path.", Kind.NEGATION)
    assert survives(tests, "Added tests for the empty path.")
    assert not survives(tests, "Ran the tests of the empty path.")


def test_a_prohibition_is_never_resolved_by_doing_it() -> None:
    d = one("Do not render flash messages in the layout.", Kind.NEGATION)
    assert not survives(d, "Added a flash message display to the layout.")
    never = one("The layout must not render flash messages.", Kind.NEGATION)
    assert not survives(never, "Added a flash message display to the layout.")
    assert not para.kept_as_resolved("We don't render flash messages", True,
                                     "added a flash message display.", stem)


def test_resolved_needs_a_supplying_act_and_every_word_in_a_positive_sentence() -> None:
    text = "The root layout doesn't render flash messages"
    assert para.kept_as_resolved(text, True, "added a flash message display.", stem)
    assert not para.kept_as_resolved(text, True, "the page shows flash messages.", stem)
    assert not para.kept_as_resolved(text, True, "added a flash banner.", stem)  # no render
    assert not para.kept_as_resolved(text, True, "no flash message display was added.",
                                     stem)
    assert not para.kept_as_resolved(text, False, "added a flash message display.", stem)


# check names ------------------------------------------------------------------------

def test_a_check_name_over_the_rule_objects_keeps_a_restriction() -> None:
    d = one("Keep only messages belonging to the current session.", Kind.CONSTRAINT)
    assert not survives(d, "Added `create_message_refs/2`, a private function.")
    assert survives(d, "Added `validate_session_message_ids/2`, a private function.")
    camel = spec("Invalid message IDs must be ignored (session-scoped filtering)")
    assert survives(camel, "The hook calls filterSessionMessages before saving.")


def test_a_check_name_needs_a_checking_verb_every_object_and_a_restriction() -> None:
    d = one("Keep only messages belonging to the current session.", Kind.CONSTRAINT)
    assert not survives(d, "Added `load_session_message_ids/2`.")  # no checking verb
    assert not survives(d, "Added `validate_user_message_ids/2`.")  # user: not its object
    shown = spec("Session messages are listed in order")
    assert not survives(shown, "Added `validate_session_message_ids/2`.")  # no restriction
    names = para.summary_names("Calls validate_ids_list and check_token.", stem)
    assert names.checks == ()  # fewer than two object words
