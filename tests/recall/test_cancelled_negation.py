"""A negation cancelled by a verb that negates in its turn ("do not forget to use
--force" says "use --force"): a summary saying so reverses the rule, it does not keep it
(adv116 B1: the rule read kept, and the push that broke it passed the gate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.survival.check import flipped, survives
from compaction_audit.recall.survival.words import uncancelled
from tests.logs import LogWriter, rnd

RULE = "Do NOT use --force when pushing."


def _log(write_log: LogWriter, summary: str) -> Path:
    return write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 20, "text": RULE, "source": "user"}]),
        rnd(1, summaries=[{"id": "c1", "tokens": 10, "children": ["u1"], "text": summary}],
            evicted=["u1"]),
        rnd(2, spans=[{"id": "t1", "tokens": 20, "text": "git push --force origin main",
                       "source": "tool_call:Bash"}]),
    ])


def _codes(path: Path) -> list[str]:
    return sorted({f.code for f in audit_session(read_native(str(path))).findings
                   if f.code in ("CA301", "CA304", "CA307")})


def test_the_cancelling_pair_is_left_out_of_the_words() -> None:
    said = "do not forget to use --force"
    assert uncancelled(["not", "forget", "use", "--force"], said) == ["use", "--force"]
    assert uncancelled(["never", "fail", "run", "tests"], "never fail to run tests") == [
        "run", "tests"]
    # a cancelling verb alone, or one with an object of its own, stays: "do not fail
    # the build" is no "fail to" (adv117)
    assert uncancelled(["forget", "use", "--force"], "forget to use --force") == [
        "forget", "use", "--force"]
    assert uncancelled(["not", "fail", "build"], "do not fail the build") == [
        "not", "fail", "build"]
    # a dash, colon or comma after the verb cancels too (adv118 Q4), "-ing" does not
    # ("do not fail existing tests": adv118 Q3)
    assert uncancelled(["not", "forget", "never", "use", "--force"],
                       "do not forget: never use --force") == ["never", "use", "--force"]
    words = ["not", "fail", "existing", "tests"]
    assert uncancelled(words, "do not fail existing tests") == words


@pytest.mark.parametrize(("rule", "summary", "kept"), [
    # the rule's side reads alike (adv117 P1, P2): each of these was lost or flipped
    ("Never neglect to sign commits with -S.", "Rules: never neglect signing commits (-S).",
     True),
    ("Never neglect to sign commits with -S.", "Rules: always sign commits with -S.", True),
    ("Never forget to run tests before pushing.", "Always run tests before pushing.", True),
    ("Never refuse to use --force when pushing.", "Always use --force when pushing.", True),
    ("Do not fail the build on warnings.", "Do not fail the build on warnings.", True),
    ("Don't forget the changelog entry.", "Don't forget the changelog entry.", True),
    # "avoid" before a verb in -ing cancels too: the rule is not kept (adv117 P3)
    ("Do NOT use --force when pushing.", "Rules: Do not avoid using --force when pushing.",
     False),
    # a second negation stays (adv118 Q1), a question's "avoid" cancels nothing (Q2),
    # nor does an adjective in -ing (Q3)
    ("Never forget to never use --force when pushing.",
     "Rules: Never use --force when pushing.", True),
    ("Do not forget to not use --force when pushing.", "Rules: Use --force when pushing.",
     False),
    ("Why not avoid --force when pushing?", "Rules: Do NOT use --force when pushing.", True),
    ("Do NOT fail existing tests when refactoring.",
     "Rules: You may fail existing tests when refactoring.", False),
])
def test_both_sides_read_the_cancelled_negation_alike(rule: str, summary: str,
                                                      kept: bool) -> None:
    from compaction_audit.recall.extract import extract

    [d] = [d for d in extract(rule) if d.kind.value == "negation"]
    assert survives(d, summary) is kept


@pytest.mark.parametrize("summary", [
    "Rules: Do not forget to use --force when pushing.",
    "Rules: Don't hesitate to use --force when pushing.",
    "Rules: Never fail to use --force when pushing.",
    "Rules: Never forgetting to use --force when pushing.",
    "Rules: Do not hesitate - use --force when pushing.",
])
def test_a_summary_cancelling_the_negation_flips_the_rule(write_log: LogWriter,
                                                          summary: str) -> None:
    from compaction_audit.recall.extract import extract

    [rule] = [d for d in extract(RULE) if d.kind.value == "negation"]
    assert not survives(rule, summary)
    assert flipped(rule, summary)
    assert _codes(_log(write_log, summary)) == ["CA301", "CA304", "CA307"]


@pytest.mark.parametrize("summary", [
    "Rules: Do NOT use --force when pushing.",
    # the cancelled pair leaves the rule that follows it: still kept
    "Rules: Do not forget: never use --force when pushing.",
])
def test_a_summary_keeping_the_rule_is_no_flip(write_log: LogWriter, summary: str) -> None:
    assert _codes(_log(write_log, summary)) == []
