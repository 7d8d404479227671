"""A person asking about a lost value's subject is asked-again (tier 1) as a person
restating the value is (usertest68 #5: "What version of requests did we pin?", after a
summary dropped ``requests==2.32.3``, and the assistant answered 2.31.0 from the
summary).  A package's name must come with a word of versions in the question (its
name may be a plain word: "requests"); a setting's name must be more than a plain word
("read_timeout_ms", not "port"); a statement asks nothing."""

from __future__ import annotations

import polars as pl
import pytest

from compaction_audit.recall.harm import asked_again
from compaction_audit.recall.survival.words import stem


def asked(kind: str, text: str, norm: str, question: str) -> bool:
    lost = pl.DataFrame({"key": [f"{kind}:{norm}"], "kind": [kind], "text": [text],
                         "start": [1]})
    users = pl.DataFrame({"id": ["u2"], "ri": [2], "round": [2], "text": [question]})
    return asked_again(lost, users).height == 1


@pytest.mark.parametrize(("question", "want"), [
    ("What version of requests did we pin?", True),
    ("Which Requests release are we on?", True),
    ("Did we bump requests? I forget.", True),
    ("How many requests per second do we serve?", False),  # no word of versions
    ("We pinned the version of requests.", False),  # a statement, no question
    ("What version of httpx did we pin?", False),  # another package
    ("Is requests-toolbelt pinned to a version?", False),  # another name
    ("Which version is pinned? requests works fine.", False),  # not in the question
])
def test_a_package_asked_about(question: str, want: bool) -> None:
    assert asked("version", "requests==2.32.3", "2.32.3", question) is want


@pytest.mark.parametrize(("text", "norm", "question", "want"), [
    ("read_timeout_ms: 45000", "45000", "What was read_timeout_ms set to?", True),
    ("read_timeout_ms: 45000", "45000", "What is the read timeout?", False),
    ("port: 8080", "8080", "Which port do we use?", False),  # a plain word
])
def test_a_setting_asked_about(text: str, norm: str, question: str, want: bool) -> None:
    assert asked("quantity", text, norm, question) is want


def test_a_value_stated_alone_has_no_subject() -> None:
    assert not asked("version", "2.32.3", "2.32.3", "Which version did we pin?")


# A question about a lost rule takes no side (usertest75 #5): most of the clause's
# content stems in one question sentence, whatever its polarity, with two of them next
# to each other as in the clause (adv145 F2).  "Concurrent close operations should not
# crash LiveView" has 5 content stems, its subject's and its norm's (concurrent, clo,
# oper, crash, liveview): 3 are needed.  "no new service module required for this
# task" has 4 (new, servic, modul, task; "required" is a modal): 3 are needed, 2 are
# not enough.
@pytest.mark.parametrize(("norm", "question", "want"), [
    ("not crash liveview", "Should concurrent close operations crash LiveView?", True),
    ("not crash liveview", "Can LiveView crash on concurrent close operations?", True),
    ("not crash liveview", "Is it fine if LiveView crashes?", False),  # 2 of 5
    # all 5 stems, but in another order: no phrase of the clause (a miss we accept)
    ("not crash liveview", "Can LiveView crash when operations close concurrently?", False),
    ("not crash liveview", "Did LiveView restart?", False),  # 1 of 5 stems
    ("not crash liveview", "Concurrent closes crash LiveView.", False),  # no question
    ("not new service module required task",
     "Do we need a new service module for closing the review session?", True),  # 3 of 4
    ("not new service module required task",
     "Should the module be new?", False),  # 2 of 4: not more than half
    ("not new service module required task",
     "Is a new service fine? The module is done for this task.", False),  # 2 in the question
])
def test_a_rule_asked_about_without_its_polarity(norm: str, question: str, want: bool) -> None:
    text = {"not crash liveview": "Concurrent close operations should not crash LiveView",
            "not new service module required task":
                "no new service module required for this task"}[norm]
    assert asked("negation", text, norm, question) is want


def test_a_rule_of_one_content_stem_is_never_asked_by_a_question() -> None:
    assert not asked("negation", "never force", "not force", "Should we force it?")


# adv145 F2: words in common are not a question about the clause.  Each question holds
# more than half of the clause's stems (or all of them), but no two next to each other
# in the clause's order: another file, another volume, the tests and the run reversed.
@pytest.mark.parametrize(("kind", "text", "norm", "question"), [
    ("negation", "Never make changes to the schema file", "not make changes schema file",
     "What changes did you make to the README file?"),
    ("negation", "Never write to the shared volume", "not write shared volume",
     "Who writes the volume label on the shared drive?"),
    ("causal", "because the disk was full", "because disk full",
     "Is the full test suite on disk now?"),
    ("ordering", "run the tests before the deploy", "sequence run tests > deploy",
     "Did the tests run?"),
])
def test_shared_words_without_a_phrase_of_the_clause_ask_nothing(
        kind: str, text: str, norm: str, question: str) -> None:
    assert not asked(kind, text, norm, question)


@pytest.mark.parametrize(("kind", "text", "norm", "question"), [
    ("negation", "Never make changes to the schema file", "not make changes schema file",
     "Can I make changes to the schema file now?"),
    ("negation", "Never write to the shared volume", "not write shared volume",
     "May we write to the shared volume today?"),
    ("ordering", "run the tests before the deploy", "sequence run tests > deploy",
     "Do we run the tests or deploy first?"),
    # a name needs no phrase: read_timeout_ms and 30000 are no common words
    ("ordering", "Reverted read_timeout_ms to 30000", "revert > read_timeout_ms 30000",
     "Was read_timeout_ms on staging ever raised above 30000?"),
    # the subject counts (adv145 F3): "the API" is no word of the norm
    ("negation", "The API must not return nulls", "not return nulls",
     "Can the API return nulls here?"),
])
def test_a_phrase_and_most_of_the_clause_ask_about_it(
        kind: str, text: str, norm: str, question: str) -> None:
    assert asked(kind, text, norm, question)


def test_a_name_alone_is_not_most_of_the_clause() -> None:
    # read_timeout_ms is 1 of the 3 stems of the clause: not more than half
    assert not asked("ordering", "Reverted read_timeout_ms to 30000",
                     "revert > read_timeout_ms 30000", "What is read_timeout_ms for?")


@pytest.mark.parametrize("end", ["?", "?!", "??", "\uff1f", "?\U0001f642", "?!\u2026"])
def test_a_question_ends_at_any_run_of_marks(end: str) -> None:
    # adv145 F3: "?!", a full-width mark and "?" before an emoji ended no question
    question = f"Should concurrent close operations crash LiveView{end}"
    assert asked("negation", "Concurrent close operations should not crash LiveView",
                 "not crash liveview", question)


def test_a_mark_inside_a_word_or_url_ends_no_question() -> None:
    for text in ("See https://x.test/close?operations=crash&liveview=1 for concurrent use.",
                 "The concurrent close operations?crash LiveView."):
        assert not asked("negation", "Concurrent close operations should not crash LiveView",
                         "not crash liveview", text)


def test_each_user_text_is_read_for_questions_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # adv145 F1: the question stems were read again for every lost item (an eager
    # setdefault argument): 41 s on a long question text with 300 lost rules
    from compaction_audit.recall import harm

    calls: list[str] = []
    real = harm.question_stems
    monkeypatch.setattr(harm, "question_stems", lambda body: calls.append(body) or real(body))
    rules = [f"Never touch widget{i} gadget{i}" for i in range(20)]
    lost = pl.DataFrame({"key": [f"negation:not touch widget{i} gadget{i}" for i in range(20)]
                         + ["identifier:ORD-5501"],
                         "kind": ["negation"] * 20 + ["identifier"],
                         "text": [*rules, "ORD-5501"], "start": [1] * 21})
    body = "Is thing1 okay? Is thing2 okay?"
    users = pl.DataFrame({"id": ["u2", "u3"], "ri": [2, 3], "round": [2, 3],
                          "text": [body, body]})
    assert asked_again(lost, users).height == 0
    assert calls == [body]  # once for the text, not per rule; never for the identifier


# adv146 F4: the phrase is there, but the question puts its own word where the rule
# has one it lacks: another object, another place, another time.
@pytest.mark.parametrize(("text", "norm", "question"), [
    ("Never make changes to the schema file", "not make changes schema file",
     "Can you make changes to the README file?"),
    ("Never enable debug logging in production", "not enable debug logging prod",
     "Should we enable debug logging in staging?"),
    ("Do not run the tests before the deploy", "not run tests before deploy",
     "Did you run the tests before lunch?"),
])
def test_a_word_of_its_own_in_the_rules_place_asks_nothing(
        text: str, norm: str, question: str) -> None:
    assert not asked("negation", text, norm, question)
    # the rule's own word there: asked
    own = question.replace("README", "schema").replace("staging", "production").replace(
        "lunch", "the deploy")
    assert asked("negation", text, norm, own)


# adv146 F5: the subject counts toward the share of the words after the marker, not
# in what is needed (4 of 6 stems were needed; the question holds 3); passive and
# active forms share a stem ("skipped", "skip": the doubled consonant undone).
def test_a_question_about_the_subject_and_the_act_asks_about_the_rule() -> None:
    assert asked("negation", "The staging cluster must not be restarted during business "
                 "hours", "not restarted during business hours",
                 "Can I restart the staging cluster now?")
    assert not asked("negation", "The staging cluster must not be restarted during "
                     "business hours", "not restarted during business hours",
                     "Is the cluster up?")


@pytest.mark.parametrize(("word", "want"), [
    ("skipped", "skip"), ("skipping", "skip"), ("skips", "skip"),  # adv146 F5
    ("logging", "log"), ("pinned", "pin"), ("committed", "commit"),
    # a double of the word's own, or a stem of three letters: kept
    ("installed", "install"), ("passed", "pass"), ("sniffed", "sniff"),
    ("added", "add"), ("agreed", "agr"), ("agree", "agr"),
])
def test_a_doubled_final_consonant_is_undone_before_ed_and_ing(word: str, want: str) -> None:
    assert stem(word) == want
