"""A prohibition a summary keeps by keeping its object out of its act (adv126 #1): not
lost, never "stated reversed" (CA304); a sentence whose withholding verb has another
object, or that does the act, is no such sentence."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Discriminator, Kind, extract
from compaction_audit.recall.survival.check import flipped, survives
from compaction_audit.recall.survival.withheld import withheld_sentences


def _negation(rule: str) -> Discriminator:
    return next(d for d in extract(rule) if d.kind is Kind.NEGATION)


LOG = "Never log the Authorization header."
ENV = "Never commit the .env file."


@pytest.mark.parametrize(("rule", "summary", "kept", "reversed_"), [
    # kept: the object kept out of the act, passive, imperative or "keep ... out of"
    (LOG, "The Authorization header must always be redacted from logs.", True, False),
    (LOG, "The Authorization header is always stripped from the request logs.", True, False),
    ("Never log the refresh_token field.", "Always mask the refresh_token field in logs.",
     True, False),
    (ENV, "The .env file must always be kept out of commits.", True, False),
    (ENV, "Keep the .env file out of commits.", True, False),
    # adv127 s09, s10: a past report, a gerund after "before", a "should" rule
    (LOG, "The Authorization header was redacted from logs.", True, False),
    (LOG, "The Authorization header is redacted before logging.", True, False),
    (LOG, "The Authorization header should always be redacted from logs.", True, False),
    # adv127 #1: undone, narrowed or asked keeps nothing
    (LOG, "The user asked to stop redacting the Authorization header from logs.", False,
     True),
    (LOG, "The Authorization header is redacted from logs in production but logged in "
     "full in staging.", False, False),
    # the act done: reversed, as before
    (LOG, "Always log the Authorization header.", False, True),
    ("Never strip the debug symbols.", "Always strip the debug symbols from release builds.",
     False, True),
    # the withholding verb has another object: no keeping, the rule reversed
    (LOG, "Always log the Authorization header and strip whitespace from logs.", False, True),
    # kept out in one sentence, reversed in a later one: reversed
    (LOG, "The Authorization header is redacted from logs. Always log the Authorization "
     "header on errors.", False, True),
    # kept out of another act ("git" is no act of the rule): not kept, not reversed
    (ENV, "The .env file stays out of git.", False, False),
])
def test_a_rule_kept_by_keeping_its_object_out(rule: str, summary: str, kept: bool,
                                               reversed_: bool) -> None:
    d = _negation(rule)
    assert (survives(d, summary), flipped(d, summary)) == (kept, reversed_)


def test_only_a_negation_is_read() -> None:
    summary = "The Authorization header must always be redacted from logs."
    assert withheld_sentences(_negation(LOG), summary) == (
        "the authorization header must always be redacted from logs.",)
    assert withheld_sentences(_negation(LOG), "Should the Authorization header be redacted "
                              "from logs?") == ()
    others = extract("Always log the Authorization header.")
    assert others and all(withheld_sentences(d, summary) == () for d in others)
