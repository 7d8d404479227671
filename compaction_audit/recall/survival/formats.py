"""Other spellings a summary keeps a value in: what the extractor does not read as the
value's own token, read on the summary's side only (adv126 #7).

A fold that rewrites "2026-03-15 at 17:00" as "March 15 at 5pm", "#412" as "issue
412" or "a 2s timeout" as "a 2-second timeout" keeps each value; each was listed lost
(and ranked "typed by a person").  :func:`spelled_values` reads these forms of a summary
into the comparison forms survival already uses:

* a quantity with its unit after a hyphen ("2-second", "5-minute", "30-day", "10-MB"):
  ``("2", "s")`` among the summary's quantities;
* a clock time on a 12-hour dial ("5pm", "5 PM", "5:30 p.m.", "12 am"): ``"17:00"``,
  the extractor's norm of "17:00" (hour unpadded), among the summary's keys;
* an issue, pull or merge request, ticket or bug by number ("issue 412", "PR #412",
  "pull request 412"; singular, the number ending its phrase: "bug 3 days ago" is
  none): ``"#412"``, the norm of "#412", among the keys;
* a date in words, the month capitalized ("March 15", "15 Mar 2026", "March 15th,
  2026"; "May" only with its year): ``"2026-03-15"``, the ISO norm, among the scopes
  when the year is written or the summary writes a year elsewhere (each such year);
  ``"--03-15"`` when it writes none (a child's date then survives by its month and
  day: :func:`month_day`).

The raw side is left as it is: a child's "5pm" or "5-minute" is no discriminator (a
new token kind there would change every lost list); a summary's value in a form read
here only keeps what its own child wrote.  Numbers are never compared by value across
forms other than these (a "3/15" is a fraction, a path or a date: not read).  Pure
standard library, one pass of three regular expressions per summary, behind a cheap
test for a digit.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.extract import canonical_unit

__all__ = ["month_day", "spelled_values"]

_HYPHEN_UNITS = ("ms", "millisecond", "second", "sec", "minute", "min", "hour", "hr", "day",
                 "week", "byte", "kb", "mb", "gb", "tb", "percent", "token")
"""A unit spelled after a number and a hyphen, as an adjective ("a 2-second timeout",
singular); compared in the extractor's canonical form
(:func:`~compaction_audit.recall.extract.canonical_unit`)."""
_HYPHENATED_RE = re.compile(
    r"(\d(?<![\w.,-]\d)\d*(?:\.\d+)?)-(" + "|".join(_HYPHEN_UNITS) + r")s?(?![\w-])")
"""A number (no word, ".", "," or "-" before it), a hyphen, a unit.  Each expression
here starts with a digit, its look-behind after it, so the matcher skips to digits."""
_CLOCK_RE = re.compile(r"(\d(?<![\w:.]\d)\d?)(?::([0-5]\d))?\s?([ap])\.?m\b\.?(?!\w)")
"""An hour (1 to 12: checked after the match), its minutes, am or pm."""
_ISSUE_RE = re.compile(r"\b(?:issue|pr|pull\s+request|merge\s+request|mr|ticket|bug)\s+#?"
                       r"(\d+)(?=[ \t]*(?:[).,;:!?\]]|$))", re.MULTILINE)
"""An issue by its word and number, singular ("PRs 12 hours old" counts, it names no
PR), the number ending its phrase ("(issue 412)", "see PR 412."): "bug 3 days ago",
"will issue 3 requests", "the PR 2 reviewers" name none (adv129 #5, adv130 #6: a list
of units after the number was never complete)."""
_ISSUE_WORDS = ("issue", "pr ", "pr #", "pull", "merge", "mr ", "mr #", "ticket", "bug")
"""What a text must hold for :data:`_ISSUE_RE` to be tried."""
_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
           "july": 7, "august": 8, "september": 9, "october": 10, "november": 11,
           "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
           "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"([12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"
_MONTH_STEMS = tuple({m[:3] for m in _MONTHS})
"""What a text must hold for :data:`_DATE_RE` to be tried (substring tests in C: the
expression alone was about 18 us per 70-character summary)."""
_DATE_RE = re.compile(rf"\b(?:{_MONTH}\s+{_DAY}{_YEAR}|{_DAY}\s+{_MONTH}{_YEAR})(?![\w:])",
                      re.IGNORECASE)


@lru_cache(maxsize=4096)
def spelled_values(summary: str
                   ) -> tuple[frozenset[tuple[str, str]], frozenset[str], frozenset[str]]:
    """(quantities, keys, scopes) ``summary`` states in the forms of the module
    docstring: quantities as ``(number, canonical unit)``, keys as ``"17:00"`` and
    ``"#412"``, scopes as ``"2026-03-15"`` or ``"--03-15"``.  Empty sets for a text
    without a digit; cached (the summary's token half and its offered quantities both
    read it).  A month needs its capital ("you may 2", "dec 5 for the precision" are
    no dates), and "May" its year; a date without its year is of a year the summary
    writes elsewhere, or of any year when it writes none."""
    quantities: set[tuple[str, str]] = set()
    keys: set[str] = set()
    scopes: set[str] = set()
    if not any(c.isdigit() for c in summary):
        return frozenset(), frozenset(), frozenset()
    low = summary.lower()
    for m in _HYPHENATED_RE.finditer(low):
        quantities.add((m[1], canonical_unit(m[2])))
    for m in _CLOCK_RE.finditer(low):
        if not 1 <= int(m[1]) <= 12:
            continue
        hour = int(m[1]) % 12 + (12 if m[3] == "p" else 0)
        keys.add(f"{hour}:{m[2] or '00'}")
    if any(w in low for w in _ISSUE_WORDS):
        keys.update("#" + m[1] for m in _ISSUE_RE.finditer(low))
    written: list[str] | None = None  # the summary's years, read once (at its first date)
    for m in (_DATE_RE.finditer(summary) if any(a in low for a in _MONTH_STEMS) else ()):
        month_word = m[1] or m[5]
        year = m[3] or m[6]
        if not month_word[0].isupper() or (month_word.lower() == "may" and not year):
            continue  # "dec 5", "sep 2 spaces"; "May 2 workers share one GPU?" (adv130)
        month, day = _MONTHS[month_word.lower()], int(m[2] or m[4])
        if not year and written is None:
            written = _years(summary)
        years = [year] if year else written
        if years:
            scopes.update(f"{y}-{month:02d}-{day:02d}" for y in years)
        else:
            scopes.add(f"--{month:02d}-{day:02d}")
    return frozenset(quantities), frozenset(keys), frozenset(scopes)


_YEAR_RE = re.compile(r"(?:(?<=FY)|(?<![\w.]))(?:199\d|20[0-4]\d)(?!\w)(?!\.\d)"
                      r"|(?:(?<=FY)|(?<=\W'))(\d\d)\b|\b(?:next|last|previous|following)\s+year\b")
"""A year, 1990 to 2049, also of an ISO date ("2027-03-15"), at a sentence's end ("in
2025."), after "FY" ("FY2027", "FY27") or an apostrophe ("'27"), or a year named
relatively ("next year": a year not known, "????"), not of a version or a name (adv130
#2, #3: each such summary's date without its year was of any year); a number such as
"2048 MB" may be read as one: its date then keeps less, never more."""


def _years(summary: str) -> list[str]:
    """The years ``summary`` writes apart from a date ("the 2025 outage"): a date in
    words without its year is then of one of them (adv129 #5: "The 2025 outage happened
    on March 15" kept 2026-03-15); none: of any year."""
    years = []
    for m in _YEAR_RE.finditer(summary):
        short = m.group(1)
        years.append(("20" + short) if short else m[0] if m[0][0].isdigit() else "????")
    return list(dict.fromkeys(years))


def month_day(norm: str) -> str | None:
    """``"--03-15"`` for the ISO date norm ``"2026-03-15"``: the scope a summary's
    "March 15" states (:func:`spelled_values`), by which the date survives; None for any
    other norm."""
    if len(norm) == 10 and norm[4] == "-" and norm[7] == "-" and norm[:4].isdigit():
        return f"--{norm[5:]}"
    return None
