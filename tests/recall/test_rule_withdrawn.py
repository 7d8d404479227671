"""A summary that restates a rule and marks it withdrawn does not keep it (adv108 #4;
too broad at first: adv109 #1-#5, adv110 #1-#6, adv111 #1-#4).

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
    "Do NOT use --force when pushing. That rule was later lifted.",  # adv109: missed
    "Do NOT use --force when pushing. This restriction no longer applies.",
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
    # adv109 #1: a bullet list, the next bullet about something else
    "Constraints:\n- Do NOT use --force when pushing\n- Lifted: the deploy freeze",
    "- Do NOT use --force when pushing\n- Superseded approach: rebasing",
    "- Do NOT use --force when pushing\n\nRevoked credentials: rotated",
    # adv109 #3: a negated label
    "User rule (not superseded): Do NOT use --force when pushing.",
    "Never lifted: Do NOT use --force when pushing.",
    "Still in force (not revoked): Do NOT use --force when pushing.",
    # adv109 #4: another thing lifted, or a partial lift, right after it
    "Do NOT use --force when pushing (lifted only for the release branch on Friday; "
    "still applies to main)",
    "Do NOT use --force when pushing, but since lifted the restriction on rebasing.",
    "Do NOT use --force when pushing, then lifted the rate limit on CI.",
    'User rule: "Do NOT use --force when pushing" (revoked access tokens were rotated).',
    "Do NOT use --force when pushing, but lifted? No - still in force.",
    # adv109 #5: a heading that is no label, "~~" for "about"
    "## Superseded decisions: none\nDo NOT use --force when pushing.",
    "Build takes ~~30s now. Do NOT use --force when pushing. Tests take ~~2 min.",
    "Do NOT use --force when pushing. It is obsolete.",  # "it": maybe --force itself
    "Do NOT use --force when pushing. The freeze was lifted.",
    # adv110 #1, #2, #5: more after "later" or "by the user", a comma, a question
    "- Do NOT use --force when pushing (was lifted later for the tags branch only)",
    "- Do NOT use --force when pushing (rule lifted by the user for release/* only)",
    "- Do NOT use --force when pushing (this was revoked later and then reinstated)",
    "- Do NOT use --force when pushing (rule was lifted, then reinstated by the user)",
    "- Do NOT use --force when pushing (rule lifted? no, still in force)",
    # adv110 #3, #4: a label over another sentence, a noun's bracket
    "## Rules\nRetracted: none. Do NOT use --force when pushing.",
    "- Git (obsolete): Do NOT use --force when pushing",
    "Legacy flow [superseded]: Do NOT use --force when pushing.",
    # adv110 #6: "~~" inside code spans strikes nothing
    "- Use `~~/bin` paths. Do NOT use --force when pushing. Keep `dir~~` backups",
    # adv111 #1-#4: withdrawn, then put back
    "- Do NOT use --force when pushing (was lifted; reinstated by the user in turn 14)",
    "- Do NOT use --force when pushing (rule revoked) - reinstated after the CI incident",
    "Do NOT use --force when pushing. That rule was lifted later; the user reinstated it.",
    "- Revoked, reinstated: Do NOT use --force when pushing",
])
def test_a_rule_restated_plainly_is_kept(summary: str) -> None:
    assert survives(_rule(), summary) is True


def test_without_struck_blanks_each_pair_in_order() -> None:
    assert without_struck("a ~~b~~ c ~~d") == "a       c ~~d"
    assert without_struck("~~30s now, ~~2 min") == "~~30s now, ~~2 min"  # no closer
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


@pytest.mark.parametrize(("child", "summary"), [
    # adv109 #2: the bracket says why the thing is forbidden, not that the rule is gone
    ("Never use the v1 API; it is obsolete.", "Never use the v1 API (obsolete)."),
    ("Don't run migrate_v2.py, it was replaced.",
     "Don't run migrate_v2.py (superseded by migrate_v3.py)."),
])
def test_a_reason_in_brackets_keeps_the_rule(child: str, summary: str) -> None:
    [d] = [d for d in extract(child) if d.kind.value == "negation"]
    assert survives(d, summary) is True
