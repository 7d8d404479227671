"""Text wrapped at a fixed width (a pasted e-mail, a spec, a bullet's continuation line)
keeps its sentences whole: a clause runs on over a soft line break, on the rule's side
and on the summary's (adv116 B5: "Do NOT" ended one line and "use --force" opened the
next; the rule was no clause, and the push that broke it passed as no CA307; a summary
that kept such a rule, wrapped, read as flipping it, a CA304 error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.clauses import unwrapped
from compaction_audit.recall.extract import extract
from tests.logs import LogWriter, rnd

HEAD = "Please remember for the rest of this session that you must"  # 58 characters
ONE_LINE = f"{HEAD} NOT use --force on the release branch, because others pulled it."
WRAPPED = f"{HEAD} NOT\nuse --force on the release branch, because others pulled it."
PUSH = "git push --force origin release"


def _negations(text: str) -> list[tuple[str, str]]:
    return [(d.text, d.norm) for d in extract(text) if d.kind.value == "negation"]


def _log(write_log: LogWriter, rule: str, summary: str) -> Path:
    return write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 20, "text": rule, "source": "user"}]),
        rnd(1, summaries=[{"id": "c1", "tokens": 10, "children": ["u1"], "text": summary}],
            evicted=["u1"]),
        rnd(2, spans=[{"id": "t1", "tokens": 20, "text": PUSH, "source": "tool_call:Bash"}]),
    ])


def _codes(path: Path) -> list[str]:
    return sorted({f.code for f in audit_session(read_native(str(path))).findings
                   if f.code in ("CA301", "CA304", "CA307")})


@pytest.mark.parametrize("wrapped", [
    WRAPPED,
    f"{HEAD}\nNOT use --force on the release branch, because others pulled it.",
    f"{HEAD} NOT use\n--force on the release branch, because others pulled it.",
    f"- {HEAD} not use\n  --force on the release branch, because others pulled it.",
])
def test_a_clause_runs_on_over_a_soft_line_break(wrapped: str) -> None:
    text = f"{HEAD} NOT use --force on the release branch"
    norm = "not use --force release branch"
    [(shown, got)] = _negations(wrapped)
    assert got == norm
    assert " ".join(shown.split()) == shown  # shown on one line, as typed
    assert shown.lower().endswith(text.lower()[len(HEAD) - 4:])
    assert _negations(ONE_LINE) == [(text, norm)]


def test_a_short_line_or_a_line_ending_a_sentence_still_ends_the_clause() -> None:
    # a line of 49 characters is no wrap, one of 50 is (_WRAP_WIDTH)
    line49, line50 = "x" * 45 + " not", "x" * 46 + " not"
    assert len(line49) == 49 and len(line50) == 50
    assert unwrapped(f"{line49}\nuse it", f"{line49}\nuse it") == f"{line49}\nuse it"
    assert unwrapped(f"{line50}\nuse it", f"{line50}\nuse it") == f"{line50} use it"
    # ends in punctuation, or the next line opens a bullet or a capitalised word
    for text in (f"{HEAD} rest.\nnever use it", f"{HEAD} rest\n- never use it",
                 f"{HEAD} rest\nNever use it"):
        assert unwrapped(text, text) == text
    # a short heading above an unpunctuated rule (the adversarial "Do NOT\nuse --force"
    # too) reads as two lines
    assert _negations("Rules\nnever use --force when pushing") == [
        ("never use --force when pushing", "not use --force when pushing")]
    assert _negations("Do NOT\nuse --force when pushing.") == []


def test_the_push_that_breaks_a_wrapped_rule_is_found(write_log: LogWriter) -> None:
    path = _log(write_log, WRAPPED, "Summary: worked on the release push.")
    assert _codes(path) == ["CA301", "CA307"]
    [found] = [f for f in audit_session(read_native(str(path))).findings
               if f.code == "CA307"]
    assert f"{HEAD} NOT use --force on the release branch" in found.message


@pytest.mark.parametrize("rule", [ONE_LINE, WRAPPED])
def test_a_summary_keeping_the_rule_wrapped_does_not_flip_it(write_log: LogWriter,
                                                             rule: str) -> None:
    kept = ("Summary of the work on the release branch and the rules the user gave: you "
            "must NOT\nuse --force on the release branch, because others pulled it.")
    assert _codes(_log(write_log, rule, kept)) == []
    # a summary that drops the negation over the same wrap does flip it
    flipped = kept.replace("must NOT\n", "must\n")
    assert _codes(_log(write_log, rule, flipped)) == ["CA301", "CA304", "CA307"]
