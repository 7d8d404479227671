"""Clause extraction rules of issue 10, point 2, on the issue's own examples."""

from __future__ import annotations

from compaction_audit.recall.extract import Kind, extract


def clauses(text: str, span_type: str = "prose") -> list[tuple[str, str]]:
    return [(d.kind.value, d.text) for d in extract(text, span_type)
            if d.kind.value in ("negation", "constraint", "causal", "ordering", "condition",
                                "requirement")]


def test_a_clause_ends_at_its_sentence_not_at_a_colon_in_code() -> None:
    text = "Never add a `Co-Authored-By: name` trailer to commits. Push after review."
    assert clauses(text)[0] == ("negation", "Never add a `Co-Authored-By: name` trailer to commits")
    # a list's commas stay in the clause; a comma before a new subject ends it
    assert clauses("No extra state values, review entities, or reopen workflow.") == [
        ("negation", "No extra state values, review entities, or reopen workflow")]
    assert clauses("We don't restart prod, it is risky.") == [
        ("negation", "don't restart prod")]


def test_nested_markers_join_the_clause() -> None:
    ds = extract("You must not introduce a reopen workflow.")
    assert [(d.kind, d.norm, d.text) for d in ds] == [
        (Kind.NEGATION, "not introduce reopen workflow", "must not introduce a reopen workflow")]
    assert [(d.kind.value, d.norm) for d in extract("No new service module required.")] == [
        ("negation", "not new service module required")]


def test_a_negation_keeps_the_order_or_case_it_forbids() -> None:
    # usertest36: the negation was cut at "after"/"before", left too short to keep, and
    # the ordering after it read as the opposite instruction ("deploy after 17:00")
    assert clauses("Never deploy after 17:00 on Fridays.") == [
        ("negation", "Never deploy after 17:00 on Fridays")]
    assert [(d.kind.value, d.norm) for d in extract(
        "Do NOT retry it before the lock table is vacuumed.")] == [
        ("negation", "not retry before lock table vacuumed")]
    assert clauses("Don't restart the worker before the queue drains.") == [
        ("negation", "Don't restart the worker before the queue drains")]
    assert clauses("Do not revert the migration.") == [
        ("negation", "Do not revert the migration")]
    assert clauses("Do not deploy if the tests fail.") == [
        ("negation", "Do not deploy if the tests fail")]
    # a cause stays a clause of its own
    assert clauses("We must not bump numpy past 1.26 because the ABI changed.") == [
        ("negation", "must not bump numpy past 1.26"), ("causal", "because the ABI changed")]
    # after a comma the next step is an ordering, without the forbidden words
    assert clauses("Do not use --force, then rerun the migration.") == [
        ("negation", "Do not use --force"), ("ordering", "then rerun the migration")]
    # usertest37 #2: a comma after an aside or a lone word is no step boundary
    assert clauses("Never, ever deploy after 17:00 on Fridays.") == [
        ("negation", "Never, ever deploy after 17:00 on Fridays")]
    assert clauses("Do not, under any circumstances, revert the migration.") == [
        ("negation", "Do not, under any circumstances, revert the migration")]
    assert clauses("Do not deploy, after 17:00 on Fridays.") == [
        ("negation", "Do not deploy, after 17:00 on Fridays")]
    # an ordering with no negation before it is unchanged
    assert clauses("Restart the worker before the queue drains.") == [
        ("ordering", "Restart the worker before the queue drains")]


def test_fragments_are_dropped() -> None:
    assert clauses("It must add `") == []  # open backtick, nothing after it
    assert clauses("This always returns `") == []
    assert clauses("It is not NULL.") == []  # one content word
    assert clauses("Run it and never") == []
    # a dangling conjunction is trimmed from the text
    assert clauses("Do not touch the cache and") == [("negation", "Do not touch the cache")]


def test_imperatives_without_must_or_not() -> None:
    found = {(d.kind.value, d.norm) for d in extract(
        "Keep status codes exactly.\nAvoid global state in handlers.\n"
        "- Preserve the public API of the client.\nEnsure retries are idempotent.\n"
        "Prefer small pure functions.")}
    assert ("constraint", "must status codes exactly") in found
    assert ("negation", "not global state handlers") in found
    assert ("constraint", "must public api client") in found
    assert ("constraint", "must retries idempotent") in found
    assert ("constraint", "prefer small pure functions") in found
    assert clauses("We keep going.") == []  # not sentence-initial


def test_instead_of_rather_than_and_exact_from_the_left() -> None:
    assert [(d.kind.value, d.norm) for d in extract("Use jq instead of python here.")] == [
        ("constraint", "instead use jq > python")]
    assert ("constraint", "instead poll > push updates") in {
        (d.kind.value, d.norm) for d in extract("Poll rather than push updates.")}
    assert [(d.kind.value, d.text) for d in extract("The response body stays unchanged.")] \
        == [("constraint", "The response body stays unchanged")]
    assert [d.norm for d in extract("Render the empty state copy exactly: `None yet.`")
            if d.kind is Kind.CONSTRAINT] == ["exact render empty state copy"]


def test_condition_kind() -> None:
    found = {(d.kind.value, d.norm) for d in extract(
        "Subscribe only when connected. Retry if the lock is still held. "
        "Skip unless the cache is warm. Runs only in review mode.")}
    assert ("condition", "if subscribe connected") in found
    assert ("condition", "if lock still held") in found
    assert ("condition", "if cache warm") in found
    assert ("condition", "if runs review mode") in found
    assert clauses("Use it if.") == []  # nothing after it


def test_if_after_a_verb_of_checking_asks_and_sets_no_condition() -> None:
    # "check if X" (an indirect question: the assistant is about to look) states no
    # condition; the same "if" after anything else does
    assert clauses("Let me check if the layout handles flash already.") == []
    assert clauses("We verified again if the index rebuilt cleanly.") == []
    assert clauses("First find out if the quota resets nightly.") == []
    assert clauses("The migration will fail on SQLite if rows exist.") == [
        ("condition", "if rows exist")]
    assert clauses("Run the backfill only if the quota is below 80 GB.") == [
        ("condition", "Run the backfill only if the quota is below 80 GB")]
    # the verb must stand right before it (a word between makes it a condition again)
    assert clauses("Check the logs if the deploy fails twice.") == [
        ("condition", "if the deploy fails twice")]
    # as a verb: a noun of checking keeps the condition, "sure" only when not sure
    assert clauses("Skip the smoke test if staging is down.") == [
        ("condition", "if staging is down")]
    assert ("condition", "if the lock table is empty") in clauses(
        "Only run the migration check if the lock table is empty.")
    assert clauses("Check if the lock is still held.") == []
    assert clauses("I want to see if the retry budget holds.") == []
    assert clauses("I am sure if we deploy now the cache warms.") == [
        ("condition", "if we deploy now the cache warms")]


def test_since_is_causal_only_before_a_clause() -> None:
    assert ("causal", "because cache stale") in {
        (d.kind.value, d.norm) for d in extract("Rebuild it since the cache is stale.")}
    assert clauses("It has worked since v1.2 shipped to everyone.") == []
    assert clauses("Nothing new since the meeting.")[0][0] == "negation"
    assert all(k != "causal" for k, _ in clauses("Nothing new since the meeting."))


def test_requirement_units_under_spec_headings() -> None:
    spec = ("Technical specs:\n- add a button\n\nEdge cases:\n"
            "- Concurrent close operations should not crash the page.\n"
            "- Long text is truncated\n  deterministically in the builder.\n\n"
            "Definition of Done:\n- Tests cover the empty case.\n\nNotes\nnothing else\n")
    units = [(d.text, d.norm) for d in extract(spec, "spec") if d.kind is Kind.REQUIREMENT]
    assert units == [
        ("Concurrent close operations should not crash the page",
         "req concurrent close operations not crash page"),
        ("Long text is truncated deterministically in the builder",
         "req long text truncated deterministically builder"),
        ("Tests cover the empty case", "req tests cover empty case")]
    # the clause inside a unit is not reported again
    assert not [d for d in extract(spec, "spec") if d.kind is Kind.NEGATION]
    # the same text as prose has no units
    assert not [d for d in extract(spec, "prose") if d.kind is Kind.REQUIREMENT]


def test_nested_requirement_heading_bullet() -> None:
    spec = ("- Render requirements:\n  - show the comment text.\n  - show the source badge."
            "\n- other")
    assert [d.text for d in extract(spec, "spec") if d.kind is Kind.REQUIREMENT] == [
        "show the comment text", "show the source badge"]
    deps = "## Requirements\n- Python 3.11+\n- No network access\n"
    assert [d.text for d in extract(deps, "spec") if d.kind is Kind.REQUIREMENT] == [
        "No network access"]


def test_arrow_is_an_ordering_only_between_prose_words() -> None:
    assert ("ordering", "sequence build > deploy") in {
        (d.kind.value, d.norm) for d in extract("build -> deploy")}
    assert clauses("fn record -> map") == []
    assert clauses("def f(x) -> int: return x") == []
    assert clauses("<span 12 → 14") == []


def test_required_only_as_a_predicate() -> None:
    assert clauses("It passes required env vars for hook mode.") == []
    assert [(d.kind.value, d.norm) for d in extract(
        "One-time token + TTL required for safety.")] == [
        ("constraint", "must one-time token ttl safety")]


def test_issue_examples_of_facts_that_matter() -> None:
    assert [(d.kind.value, d.norm) for d in extract("No migrations, no route changes.")] == [
        ("negation", "not migrations route changes")]
    assert clauses("Don't touch the migrations, and keep the API response shape exactly.") == [
        ("negation", "Don't touch the migrations"),
        ("constraint", "keep the API response shape exactly")]
    rules = "## Rules\n- Never push to main\n- Always run the tests first\n"
    assert [d.norm for d in extract(rules, "spec")] == ["req never push main",
                                                        "req always run tests first"]


def test_the_text_starts_at_the_subject_the_norm_does_not() -> None:
    d, _ = extract("Existing tests with only `uuid` continue passing.")
    assert (d.text, d.norm) == ("Existing tests with only `uuid` continue passing",
                                "only uuid continue passing")
    (d,) = extract("The root layout doesn't render flash messages.")
    assert (d.text, d.norm) == ("The root layout doesn't render flash messages",
                                "not render flash messages")


def test_an_ordering_may_lean_on_the_previous_clause() -> None:
    found = {(d.kind.value, d.norm) for d in extract("Migration 0104 must run before 0105.")}
    assert ("ordering", "sequence run > 0105") in found
    # a word order needs one side only; an arrow needs both
    assert ("ordering", "sequence > failed migration") in {
        (d.kind.value, d.norm) for d in extract("It was rolled back after a failed migration.")}
    assert clauses("-> deploy now") == []


def test_a_subject_stops_at_the_previous_clause() -> None:
    text = "Raise the timeout from 30000 to 45000, and do NOT run the prod migration."
    assert [d.text for d in extract(text) if d.kind is Kind.NEGATION] == [
        "do NOT run the prod migration"]


def test_the_left_side_runs_through_a_short_aside_to_its_subject() -> None:
    # usertest31 #1: the ")" of "(filter icon)" cut the subject off the ordering
    (d,) = [d for d in extract("Currently the `action` (filter icon) is rendered before "
                               "the text button.") if d.kind is Kind.ORDERING]
    assert (d.text, d.norm) == ("`action` (filter icon) is rendered before the text button",
                                "sequence action filter icon rendered > text button")
    # an aside of 40 characters is short (the brackets count); one of 41 ends the left side
    aside = "(" + "x" * 38 + ")"
    assert clauses(f"The cache {aside} is warmed after the deploy.") == [
        ("ordering", f"cache {aside} is warmed after the deploy")]
    assert clauses(f"The cache {aside[:-1]}y) is warmed after the deploy.") == [
        ("ordering", "is warmed after the deploy")]
    # a marker inside the brackets: the left side starts at the "("
    assert clauses("Deploy the build (verify the checksums before the upload).") == [
        ("ordering", "verify the checksums before the upload")]


def test_a_chain_of_orderings_is_one_clause() -> None:
    # usertest31 #1: "X, then text after the gap" gave "X, then text" and "text after
    # icon+gap", two orderings (one a fragment) of one sentence
    assert clauses("The buttons have their icon at `px-3` (12px), then text after "
                   "icon+gap.") == [
        ("ordering", "The buttons have their icon at `px-3` (12px), then text after icon+gap")]
    assert clauses("Run migrations then deploy before noon.") == [
        ("ordering", "Run migrations then deploy before noon")]
    # two content words between the markers: two orderings
    assert clauses("Build staging, then deploy prod after the review.") == [
        ("ordering", "Build staging, then deploy prod"),
        ("ordering", "deploy prod after the review")]
