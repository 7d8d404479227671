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
