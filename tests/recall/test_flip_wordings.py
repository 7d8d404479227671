"""A rule reversed in the words a summary uses for it is a flip (adv98, adv99 #1).

"Then delete the backups", "Now delete ...", "Go ahead and delete ...", "It is OK to
delete ..." and "The user said to delete ..." reverse "Do not delete the backups" as
"Delete the backups" does; none was read as a rule, so none flipped it (no CA304).
Narrative ("Deleted the backups", "Now the backups are deleted") states no rule and
flips nothing; the same words under a negation keep the rule.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import extract
from compaction_audit.recall.survival import flipped, survives
from tests.logs import LogWriter, rnd

RULE = "Do not delete the prod-db-7 backups."


@pytest.mark.parametrize(("summary", "flip"), [
    ("Delete the prod-db-7 backups.", True),
    ("Then delete the prod-db-7 backups.", True),
    ("Now delete the prod-db-7 backups.", True),
    ("Go ahead and delete the prod-db-7 backups.", True),
    ("Feel free to delete the prod-db-7 backups.", True),
    ("It is OK to delete the prod-db-7 backups.", True),
    ("It's fine to delete the prod-db-7 backups.", True),
    ("The user said to delete the prod-db-7 backups.", True),
    ("The user told the agent to delete the prod-db-7 backups.", True),
    # adv100 #3: a permission in the passive, "is fine", "allowed"
    ("The prod-db-7 backups may now be deleted.", True),
    ("The prod-db-7 backups can now be deleted.", True),
    ("Deleting the prod-db-7 backups is fine now.", True),
    ("The firewall allowed the prod-db-7 backups to be deleted.", True),
    (RULE + " Update: the prod-db-7 backups may now be deleted.", True),
    ("The prod-db-7 backups may not be deleted.", False),
    ("Deleting the prod-db-7 backups is not allowed.", False),
    # usertest57 #2: a question, a condition or a hedge states no permission
    ("Is it OK to delete the prod-db-7 backups?", False),
    ("The user asked whether it is OK to delete the prod-db-7 backups.", False),
    ("We discussed whether the prod-db-7 backups may be deleted; they stay.", False),
    ("Pending: confirm it is OK to delete the prod-db-7 backups.", False),
    ("Unclear if it is OK to delete the prod-db-7 backups.", False),
    ("If the user agrees, then delete the prod-db-7 backups.", False),
    ("Is it OK to delete the prod-db-7 backups? Yes: delete the prod-db-7 backups.", True),
    # adv101 #3: "may be" alone is no permission; a belief reported, a quotation
    ("The prod-db-7 backups may be deleted by mistake, so keep a copy.", False),
    (RULE + " Deleting the prod-db-7 backups may be irreversible.", False),
    ("The assistant thought it was OK to delete the prod-db-7 backups, but the user "
     "said no.", False),
    ('Earlier the agent said "Now delete the prod-db-7 backups" and was stopped: do not '
     'delete the prod-db-7 backups.', False),
    # adv102 #4: an exception, a refusal, an instruction of someone else's
    ("The user is fine with anything except deleting the prod-db-7 backups.", False),
    ("The user was told to delete the prod-db-7 backups by the vendor, and refused.",
     False),
    ("Alice instructed Bob to delete the prod-db-7 backups; the user overruled her.",
     False),
    # the same words negated keep the rule
    ("It is not OK to delete the prod-db-7 backups.", False),
    ("The user said not to delete the prod-db-7 backups.", False),
    ("Then delete the logs. Do not delete the prod-db-7 backups.", False),
    # narrative states no rule
    ("Deleted the prod-db-7 backups.", False),
    ("Now the prod-db-7 backups are deleted.", False),
    # a leading word alone opens no imperative
    ("Then the prod-db-7 backups grew.", False),
])
def test_a_rule_reversed_in_other_words_is_flipped(summary: str, flip: bool) -> None:
    d = next(d for d in extract(RULE) if d.kind.value == "negation")
    assert flipped(d, summary) is flip
    if flip:
        assert survives(d, summary) is False


@pytest.mark.parametrize(("summary", "codes"), [
    ("It is OK to delete the prod-db-7 backups.", {"CA304"}),
    ("Then delete the prod-db-7 backups.", {"CA304"}),
    ("It is not OK to delete the prod-db-7 backups.", set()),
])
def test_the_reversal_is_a_flipped_rule_finding(write_log: LogWriter, summary: str,
                                                codes: set[str]) -> None:
    log = [rnd(0, spans=[{"id": "u", "tokens": 10, "text": RULE, "source": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u"], "text": summary}],
               evicted=["u"])]
    assert {f.code for f in audit(str(write_log(log))).findings} & {"CA304"} == codes
