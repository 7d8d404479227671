"""Values a summary keeps in another common spelling (adv126 #7): a unit after a
hyphen, a 12-hour clock time, an issue by its word and a date in words.  Each form keeps
only the same value, and none read in another role keeps anything (adv129 #5)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import dropped, survives
from compaction_audit.recall.survival.formats import month_day, spelled_values


def _one(child: str, kind: Kind) -> object:
    (found,) = [d for d in extract(child) if d.kind is kind]
    return found


@pytest.mark.parametrize(("summary", "kept"), [
    ("Use a 2-second context timeout.", True),
    ("Use a 2-seconds context timeout.", True),
    ("Use a 2000-ms context timeout.", True),  # the same measure in another unit
    ("Use a 3-second context timeout.", False),
    ("Use a 2-step context timeout.", False),  # not a unit
    ("Use a v2-second context timeout.", False),  # glued to a word: no number
])
def test_a_unit_after_a_hyphen_is_the_quantity(summary: str, kept: bool) -> None:
    assert survives(_one("Use a 2s context timeout.", Kind.QUANTITY), summary) is kept


@pytest.mark.parametrize(("summary", "kept"), [
    ("The freeze starts at 5pm CET.", True),
    ("The freeze starts at 5 PM CET.", True),
    ("The freeze starts at 5 p.m. CET.", True),
    ("The freeze starts at 5:00pm CET.", True),
    ("The freeze starts at 7pm CET.", False),
    ("The freeze starts at 5am CET.", False),  # 5:00, not 17:00
    ("The freeze starts at 5 CET.", False),
])
def test_a_twelve_hour_clock_time_is_the_time(summary: str, kept: bool) -> None:
    assert survives(_one("The freeze starts at 17:00 CET.", Kind.QUANTITY), summary) is kept


@pytest.mark.parametrize(("child", "summary", "kept"), [
    ("Cleanup runs at 0:30.", "Cleanup runs at 12:30 am.", True),
    ("Cleanup runs at 12:00.", "Cleanup runs at 12pm.", True),
    ("Cleanup runs at 12:00.", "Cleanup runs at 12am.", False),
])
def test_noon_and_midnight_on_a_twelve_hour_clock(child: str, summary: str,
                                                  kept: bool) -> None:
    assert survives(_one(child, Kind.QUANTITY), summary) is kept


@pytest.mark.parametrize(("summary", "kept"), [
    ("Windows stays in the matrix (issue 412).", True),
    ("Windows stays in the matrix, see PR 412.", True),
    ("Windows stays in the matrix, see PR 412 merged.", False),  # a phrase goes on
    ("Windows stays in the matrix, see pull request #412.", True),
    ("Windows stays in the matrix, see ticket 412.", True),
    ("Windows stays in the matrix (issue 413).", False),
    ("Windows stays in the matrix (issue 4120).", False),
    ("Windows stays in the matrix for 412 ms.", False),  # a number is no issue
])
def test_an_issue_by_its_word_is_the_issue(summary: str, kept: bool) -> None:
    assert survives(_one("Windows stays in the matrix for #412.", Kind.IDENTIFIER),
                    summary) is kept


@pytest.mark.parametrize(("summary", "kept"), [
    ("The freeze starts March 15.", True),
    ("The freeze starts Mar. 15th.", True),
    ("The freeze starts 15 March 2026.", True),
    ("The freeze starts on March 15, 2026.", True),
    ("The freeze starts March 16.", False),
    ("The freeze starts April 15.", False),
    ("The freeze starts March 15, 2025.", False),  # a year written must be the year
    ("The freeze starts on 3/15.", False),  # a fraction, a path or a date: not read
])
def test_a_date_in_words_is_the_date(summary: str, kept: bool) -> None:
    assert survives(_one("The freeze starts 2026-03-15.", Kind.SCOPE), summary) is kept


@pytest.mark.parametrize(("summary", "kept"), [
    ("Review lands May 4, 2026.", True),
    ("Review lands May 4.", False),  # "May 2 workers share one GPU?": no date (adv130 #6)
    ("Review lands may 4.", False),  # "may" the verb: no month
])
def test_may_is_a_month_with_its_capital_and_its_year(summary: str, kept: bool) -> None:
    assert survives(_one("Review lands 2026-05-04.", Kind.SCOPE), summary) is kept


@pytest.mark.parametrize(("summary", "lost"), [
    ("Access tokens expire after 15 min.", []),
    # the order's words are compared as written: a false loss, left (adv129 #2: reading
    # a delay as its quantity alone kept "before 2 hours" for "after 2 hours")
    ("Access tokens expire after 900 seconds.",
     ["sequence access tokens expire > 15 minutes"]),
])
def test_a_delay_after_after_stays_an_order(summary: str, lost: list[str]) -> None:
    child = "Access tokens expire after 15 minutes."
    assert [d.norm for d in dropped(child, summary)] == lost
    assert survives(_one("Run the cleanup job after 2 hours.", Kind.ORDERING),
                    "Run the cleanup job before 2 hours.") is False


@pytest.mark.parametrize(("child", "summary"), [
    ("Do not close #3 until QA signs off.", "Fixed the login bug 3 days ago; QA pending."),
    ("Review #12 before Friday.", "There are 3 open PRs 12 hours old."),
    ("Ship on 2026-12-05.", "Use dec 5 for the decimal precision."),
    ("Launch on 2026-09-02.", "Fields are sep 2 spaces apart."),
    ("The cert expires on 2026-03-15.", "The 2025 outage happened on March 15."),
    # adv130 #2, #3: a year at a sentence's end, or of an ISO date, is a year written
    ("The cert expires on 2026-03-15.", "The outage happened on March 15 in 2025."),
    ("The cert expires on 2026-03-15.", "Ship on 2027-03-15 (March 15)."),
    ("The cert expires on 2026-03-15.", "Cert expires March 15. Budget for 2027."),
    ("The cert expires on 2026-03-15.", "The cert expires March 15 (FY2027)."),
    ("The cert expires on 2026-03-15.", "The cert expires March 15 '27."),
    ("The cert expires on 2026-03-15.", "The cert expires March 15 of next year."),
    # adv130 #6: the number must end the issue's phrase
    ("Windows stays for #3.", "The client will issue 3 requests per second."),
    ("Windows stays for #2.", "The PR 2 reviewers approved it."),
    ("Windows stays for #12.", "PR 12 hrs old."),
])
def test_a_value_in_another_role_keeps_nothing(child: str, summary: str) -> None:
    """adv129 #5: a count after a word ("bug 3 days"), a plural ("PRs 12"), a
    lowercase month abbreviation and a date of another year the summary writes."""
    (value,) = [d for d in extract(child) if d.kind in (Kind.IDENTIFIER, Kind.SCOPE)]
    assert survives(value, summary) is False


def test_a_date_without_its_year_is_of_a_year_the_summary_writes() -> None:
    date = _one("The cert expires on 2026-03-15.", Kind.SCOPE)
    assert survives(date, "The cert (renewed in 2026) expires March 15.") is True
    assert survives(date, "The cert expires March 15.") is True
    assert survives(date, "The cert expires March 15 (FY26).") is True


def test_spelled_values_reads_each_form() -> None:
    quantities, keys, scopes = spelled_values(
        "A 5-minute TTL, deploy at 9 pm after PR #77, freeze on Dec 1, 2026 and June 3.")
    assert quantities == {("5", "min")}
    assert keys == {"21:00", "#77"}
    assert scopes == {"2026-12-01", "2026-06-03"}  # June 3: of the year written
    assert spelled_values("Freeze on June 3.")[2] == {"--06-03"}  # no year: any
    assert spelled_values("no digit here: March, PR, five-minute, noon pm") == (set(), set(), set())


@pytest.mark.parametrize(("norm", "day"), [
    ("2026-03-15", "--03-15"),
    ("prod", None),
    ("2026-3-15", None),
])
def test_month_day(norm: str, day: str | None) -> None:
    assert month_day(norm) == day


def test_a_summary_of_many_dates_reads_its_years_once() -> None:
    """The years a summary writes are read once, at its first date without a year (a
    read per date was quadratic: 32,000 dates in 0.6 MB)."""
    quantities, keys, scopes = spelled_values("March 15 and 2025. " * 20000)
    assert (quantities, keys, scopes) == (set(), set(), {"2025-03-15"})
