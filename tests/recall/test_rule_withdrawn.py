"""A summary that restates a rule and marks it withdrawn does not keep it (adv108 #4).

"The user said 'Do NOT use --force when pushing' but later retracted it" holds every
word of the rule, so it was kept, and a later ``git push --force`` passed the gate at
``--fail-on warning``.  The person never lifted it (a rule the person lifts is set aside
before survival: tests of ``without_lifted``); a summary saying so has lost it.  A
marker elsewhere in the sentence (another thing lifted) keeps the rule.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import Discriminator, extract
from compaction_audit.recall.survival import survives
from compaction_audit.recall.survival.withdrawn import without_struck
from tests.logs import LogWriter, rnd

RULE = "Do NOT use --force when pushing."


def _rule() -> Discriminator:
    return next(d for d in extract(RULE) if d.kind.value == "negation")


@pytest.mark.parametrize("summary", [
    "The user said 'Do NOT use --force when pushing' but later retracted it.",
    'The rule "Do NOT use --force when pushing" was lifted.',
    "Do NOT use --force when pushing (rule lifted later; --force is OK now).",
    "Do NOT use --force when pushing, but the user later revoked it.",
    "Do NOT use --force when pushing: no longer applies.",
    "Obsolete, ignore: Do NOT use --force when pushing.",
    "Retracted: 'Do NOT use --force when pushing'.",
    "~~Do NOT use --force when pushing.~~ Pin libfoo==4.2.1.",
    "Notes:\n~~Do NOT use --force\nwhen pushing~~\nShip it.",
])
def test_a_rule_marked_withdrawn_is_not_kept(summary: str) -> None:
    assert survives(_rule(), summary) is False


@pytest.mark.parametrize("summary", [
    RULE,
    "Freeze lifted, but do NOT use --force when pushing.",  # another thing lifted
    "Do NOT use --force when pushing, even though the freeze was lifted.",
    "The rule 'Do NOT use --force when pushing' was not lifted.",  # negated
    "Do NOT use --force when pushing, and dropped it from the CI script.",
    "~~Use --force.~~ Do NOT use --force when pushing.",  # another text struck
    "Do NOT use --force when pushing. ~~old note~~",
    "Superseded: the v1 deploy notes. Do NOT use --force when pushing.",  # its own sentence
    "a ~~ b: Do NOT use --force when pushing.",  # one mark strikes nothing
])
def test_a_rule_restated_plainly_is_kept(summary: str) -> None:
    assert survives(_rule(), summary) is True


def test_without_struck_blanks_each_pair_in_order() -> None:
    assert without_struck("a ~~b~~ c ~~d") == "a       c ~~d"
    assert without_struck("plain") == "plain"
    assert len(without_struck("~~x~~" * 1000)) == 5000


def _log(write_log: LogWriter, summary: str) -> str:
    return str(write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 20, "role": "user", "text": RULE},
                      {"id": "a1", "tokens": 20, "role": "assistant",
                       "text": "Looked at the release notes."}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 20, "children": ["u1", "a1"],
                           "text": summary}], evicted=["u1", "a1"]),
        rnd(2, spans=[{"id": "t1", "tokens": 10, "role": "assistant",
                       "source": "tool_call:Bash", "text": "git push --force origin main"}]),
    ], name="withdrawn.jsonl"))


def test_a_withdrawn_rule_fails_the_gate(write_log: LogWriter) -> None:
    report = audit(_log(write_log, "The user said 'Do NOT use --force when pushing' but "
                                   "later retracted it; pushing is allowed."))
    codes = {(f.code, f.severity.value) for f in report.findings}
    assert ("CA301", "error") in codes and ("CA307", "error") in codes
    kept = audit(_log(write_log, "Freeze lifted, but do NOT use --force when pushing."))
    assert not {f.code for f in kept.findings} & {"CA301", "CA307"}
