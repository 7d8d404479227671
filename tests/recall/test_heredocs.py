"""Here-documents found in one pass (adv128 #2): the same ones as the regular
expression they replace (kept here as the reference), on hand cases and seeded random
command texts; and a rule's double negation read within its bound (adv128 #1)."""

from __future__ import annotations

import random
import re

import pytest

from compaction_audit.recall.callwords import unquoted
from compaction_audit.recall.heredocs import heredocs, replace_heredocs
from compaction_audit.recall.survival.words import _double_negative

_REFERENCE = re.compile(r"(?m)^(?P<head>[^\n]*<<-?[ \t]*(?P<q>['\"]?)(?P<tag>\w+)(?P=q)"
                        r"[^\n]*)\n(?P<body>(?s:.*?))^[ \t]*(?P=tag)[ \t]*$")
"""The expression :mod:`compaction_audit.recall.heredocs` replaces (quadratic on
unclosed openers)."""


def _marked(head: str, tag: str, whole: str) -> str:
    return f"[{head}|{tag}|{len(whole)}]"


def _reference(text: str) -> str:
    return _REFERENCE.sub(lambda m: _marked(m["head"], m["tag"], m[0]), text)


@pytest.mark.parametrize(("text", "found"), [
    ("cat <<EOF > notes.md\nhello\nEOF\n", [(0, 20, 30, "EOF")]),  # 20 + 1 + 5 + 1 + 3
    ("cat <<'A'\n  A  \nrest", [(0, 9, 15, "A")]),  # spaces around the closing tag
    ("cat <<EOF\nnever closed\n", []),
    ("x <<A <<B\nB\nA\n", [(0, 9, 11, "B")]),  # the line's last opener that closes
    ("x <<A <<B\nA\n", [(0, 9, 11, "A")]),  # ... or an earlier one
    ("cat <<EOF", []),  # no newline after the opening line
    ("a <<EOF\nEOF\nb <<EOF\nEOF", [(0, 7, 11, "EOF"), (12, 19, 23, "EOF")]),
])
def test_heredocs(text: str, found: list[tuple[int, int, int, str]]) -> None:
    assert list(heredocs(text)) == found


def test_the_same_as_the_regular_expression_on_random_texts() -> None:
    pieces = ["cat <<EOF", "EOF", "  EOF  ", "x <<-'A' y", "A", "<<B", "B", "echo hi", "<<<C",
              "C", '<< "EOF"', "tee f <<EOF <<A", "", "\t", "<<", "EOFX", "a <<EOF b <<A"]
    rng = random.Random(7)
    for _ in range(5000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        text += "\n" * rng.randint(0, 1)
        assert replace_heredocs(text, _marked) == _reference(text), text


def test_unclosed_openers_hide_no_command() -> None:
    text = "cat <<EOF\n" * 3000 + "git push --force origin main"
    assert unquoted(text) == text  # no here-document: every line may run


@pytest.mark.parametrize(("text", "double"), [
    ("never run the release without a confirmation step", True),
    ("Never run `make > build.log` unless asked.", True),
    ("never do X. Do it without Y", False),  # another sentence
    ("never " + "x " * 160 + "without Y", False),  # past 300 characters: not read
    ("never " + "x " * 140 + "without Y", True),
])
def test_a_double_negation_within_its_bound(text: str, double: bool) -> None:
    assert _double_negative(text) is double
