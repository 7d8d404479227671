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
# content stems in one question sentence, whatever its polarity.  "not crash liveview"
# has 2 content stems (crash, liveview): both are needed (more than half of 2).
# "not new service module required task" has 4 (new, servic, modul, task; "required"
# is a modal): 3 are needed, 2 are not enough.
@pytest.mark.parametrize(("norm", "question", "want"), [
    ("not crash liveview", "Should concurrent close operations crash LiveView?", True),
    ("not crash liveview", "Is it fine if LiveView crashes?", True),
    ("not crash liveview", "Did LiveView restart?", False),  # 1 of 2 stems
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
