"""The vectorized pre-filter (issue 14): a text its pattern does not match holds no
discriminator, for any span type; the analysis gives the same tables with and without it."""

from __future__ import annotations

import random
import re

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import analysis, textwork
from compaction_audit.recall.clauses import _MARKERS
from compaction_audit.recall.extract import extract
from compaction_audit.recall.prefilter import _PLAIN, MAY_HOLD, _literal, may_hold
from compaction_audit.series import build_series
from tests.logs import LogWriter, rnd

TYPES = ("prose", "spec", "code", "tool_output", "harness")


def holds_nothing(text: str) -> bool:
    return all(extract(text, t) == [] for t in TYPES)


@pytest.mark.parametrize("text", [
    "Moved the notes into the new folder.",
    "Nobody knew what the normal answer was (and the node went quiet).",
    "The team talked it over, again and again!",
    "Note the token, the book and the hook.",  # "no", "ok" inside words are no markers
    "Is it done? Yes.\nWe went home.",
    "",
])
def test_plain_text_without_a_marker_is_skipped_and_holds_nothing(text: str) -> None:
    assert not may_hold(text)
    assert holds_nothing(text)


@pytest.mark.parametrize(("text", "kind"), [
    ("Set the timeout to 45000 ms.", "quantity"),  # a digit
    ("Read the config file now.", None),  # plain, no trigger: checked below
    ("Edited lib_a and moved on.", "identifier"),  # "_"
    ("Called parseConfig twice.", "identifier"),  # a letter, then a capital
    ("Opened the file notes.txt there.", "identifier"),  # "." then a letter
    ("Deploy it on prod today.", "scope"),  # a scope word
    ("Do not restart the billing workers.", "negation"),  # a marker word
    ("We will restart whenever the queue drains.", "condition"),  # a marker's beginning
    ("It didn't restart the billing workers.", "negation"),  # n't
    ("Keep the replicas warm for the batch.", "constraint"),  # an imperative
    ("We ruled out the proxy layer entirely.", "ruled-out"),  # rul
    ("The cache layer is fine after all.", "ruled-out"),  # be + fine
])
def test_each_trigger_lets_its_text_through(text: str, kind: str | None) -> None:
    kinds = {d.kind.value for d in extract(text)}
    if kind is None:
        assert not may_hold(text) and not kinds
    else:
        assert may_hold(text) and kind in kinds


def test_every_marker_has_a_literal_beginning_or_starts_outside_the_plain_alphabet() -> None:
    # a marker without one would add the empty alternative (every word a candidate)
    for _, _, pattern in _MARKERS:
        assert _literal(pattern) or re.fullmatch(_PLAIN, pattern[0]), pattern
    assert "||" not in MAY_HOLD and "(?:|" not in MAY_HOLD and "|)" not in MAY_HOLD
    assert _literal(r"no(?!\s+(?:more|less|fewer)\s+than)(?=\s+\w)") == r"no\b"
    assert _literal(r"when(?:ever)?") == "when"
    assert _literal(r"no\s+longer") == r"no\s+longer\b"
    assert _literal("->") == ""


WORDS = ("the", "a", "we", "moved", "notes", "node", "nobody", "known", "book", "token",
         "reason", "issue", "fine", "problem", "is", "was", "looks", "then", "thenkeep",
         "andkeep", "whenever", "when", "if", "iffy", "as", "is", "at", "most", "least",
         "no", "not", "never", "longer", "only", "on", "account", "roll", "back",
         "rollbacks", "reverted", "Production", "PROD", "prods", "staging", "devs", "dev",
         "qa", "UAT", "rule", "ruled", "out", "since", "before", "after", "keep", "avoid",
         "prefer", "must", "Must", "required", "exactly", "because", "due", "to", "root",
         "cause", "span", "spans", "migration", "e", "g", "i", "Ok", "okay", "healthy",
         "x", "Abc", "ABC", "iPhone", "sure", "make", "caused", "by", "result", "of",
         "instead", "rather", "than", "more", "less", "fewer", "maximum", "minimum")
SEPARATORS = (" ", " ", " ", ", ", ". ", "! ", "? ", "\n", " (", ") ", "'", ".", "(")


def test_random_plain_texts_the_pattern_skips_hold_nothing() -> None:
    rng = random.Random(14)
    skipped = kept = 0
    for _ in range(3000):
        parts = []
        for _ in range(rng.randrange(1, 14)):
            parts.append(rng.choice(WORDS))
            parts.append(rng.choice(SEPARATORS))
        text = "".join(parts)
        if may_hold(text):
            kept += 1
        else:
            skipped += 1
            assert holds_nothing(text), text
    assert skipped > 300 and kept > 300  # both sides are exercised


def test_polars_and_python_read_the_pattern_alike() -> None:
    texts = ["Moved on.", "No way", "Deploy to PROD now", "x.y", "aB", "ruled", "okay",
             "The db is healthy", "s\u00e9ance", "\u2192 then", "none", "nonesuch"]
    assert pl.Series(texts).str.contains(MAY_HOLD).to_list() == [may_hold(t) for t in texts]


def span(i: str, text: str) -> dict[str, object]:
    return {"id": i, "tokens": 20, "text": text, "source": "assistant"}


def test_the_analysis_is_the_same_without_the_pre_filter(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    log = [rnd(0, spans=[span("a", "Moved the notes into the new folder."),
                         span("b", "Set the timeout to 45000 ms on prod."),
                         span("c", "We talked it over.")]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a", "b", "c"],
                              "text": "Moved notes and talked."}], evicted=["a", "b", "c"])]
    session = read_native(str(write_log(log)))
    series = build_series(session)
    filtered = analysis.analyse(session, series)
    monkeypatch.setattr(textwork, "MAY_HOLD", "")  # every text a candidate
    unfiltered = analysis.analyse(session, series)
    for table in ("folds", "debt", "lost", "floor"):
        assert getattr(filtered, table).equals(getattr(unfiltered, table)), table
    dropped = {d["text"] for row in filtered.folds["dropped"].to_list() for d in row}
    assert dropped == {"45000 ms", "prod"}
