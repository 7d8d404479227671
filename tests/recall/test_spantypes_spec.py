"""The spec test runs only on texts that hold a requirement word (issue 14, item 4):
:data:`~compaction_audit.recall.spantypes.SPEC_WORDS` matches every spec text, in
Python and in Polars alike, and the typed items are the same with and without it."""

from __future__ import annotations

import random
import re
import sys

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import spantypes
from compaction_audit.recall.analysis import items as items_module
from compaction_audit.recall.spantypes import SPEC_WORDS, is_spec_text, span_type
from tests.logs import LogWriter, rnd

SPECS = [
    "Add a close button.\n\nEdge cases:\n- Concurrent close\n- Already closed\n",
    "     1→## Constraints\n     2→- no new module\n",
    "**Definition of Done**\n1. tests pass\n",
    "- Render requirements:\n  - fast\n",
    "## NO-GOS\n* never touch prod\n",
    "Dos and Don'ts\n\n- keep it short\n",
    "## Out of scope\n+ billing\n",
    "ACCEPTANCE CRITERIA:\n• green build\n",
    "Invariants\n- x > 0\n",
    # the Kelvin sign and the long s fold to k and s in both engines
    "Edge ca\u017fes:\n- one\n",
    "Mu\u017ft-haves:\n- one\n",
    "## Requ\u0130rements\n- one\n",  # Python's (?i) takes the Turkish capital I for i
]


@pytest.mark.parametrize("text", SPECS)
def test_every_spec_text_holds_a_requirement_word_in_both_engines(text: str) -> None:
    assert is_spec_text(text)
    assert re.search(SPEC_WORDS, text)
    assert pl.Series([text]).str.contains(SPEC_WORDS).item()


WORDS = ["requirements", "constraints", "no-gos", "non goals", "edge-cases",
         "definition of done", "acceptance criteria", "must-haves", "invariants",
         "guardrails", "restrictions", "limitations", "dod", "rules", "out of scope",
         "don'ts", "dos and don'ts"]


def test_the_engines_find_every_spelling_python_folds() -> None:
    """Every spelling of a requirement word that Python's case-insensitive matching
    takes (each letter replaced by each character that matches it: U+0130 and U+0131
    for ``i``, the long s U+017F for ``s``), Polars' finds too."""
    python = re.compile(f"(?i)(?:{spantypes._REQ_WORDS})")
    letters = "".join(sorted({c for word in WORDS for c in word if c.isalpha()}))
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    near = re.findall(f"(?i)[{letters}]", every)  # each character one of them takes
    folds = {letter: [c for c in near if re.fullmatch(f"(?i){letter}", c)]
             for letter in letters}
    spellings = []
    for word in WORDS:
        assert python.fullmatch(word)
        for at, letter in enumerate(word):
            for c in folds.get(letter, []):
                spelling = word[:at] + c + word[at + 1:]
                assert python.fullmatch(spelling)
                spellings.append(spelling)
    assert "requ\u0130rements" in spellings and "rule\u017f" in spellings
    found = pl.Series(spellings).str.contains(SPEC_WORDS)
    assert found.all(), [w for w, ok in zip(spellings, found, strict=True) if not ok]


def test_random_headings_are_specs_only_with_a_word() -> None:
    rng = random.Random(7)
    words = ["Requirements", "Edge-cases", "rules", "Notes", "Plan", "Constraint", "TODO",
             "Non goals", "dod", "Steps"]
    for _ in range(300):
        head = rng.choice(words)
        text = f"{rng.choice(['', '## ', '**', '- '])}{head}{rng.choice([':', '', '**'])}\n" \
               f"{rng.choice(['- a', '* b', '1. c', 'plain'])}\n"
        if is_spec_text(text):
            assert re.search(SPEC_WORDS, text) and \
                pl.Series([text]).str.contains(SPEC_WORDS).item(), text


def test_typed_items_are_the_same_without_the_word_filter(write_log: LogWriter) -> None:
    """typed_items, which tests only the texts Polars finds a word in, gives the types
    span_type gives alone."""
    texts = [("user", "please add it"), ("tool_result:Read", SPECS[1]),
             ("tool_result:Bash", "Edge cases: none found.\nok"), ("assistant", SPECS[0]),
             ("tool_call:Edit", "x = 1  # the rules\n- a"), ("user", SPECS[-1])]
    log = [rnd(0, spans=[{"id": f"s{i}", "tokens": 5, "source": src, "text": text}
                         for i, (src, text) in enumerate(texts)])]
    session = read_native(str(write_log(log)))
    typed = items_module.typed_items(session).filter(pl.col("kind") == "span")
    assert typed["stype"].to_list() == [span_type(src, text) for src, text in texts] \
        == ["prose", "spec", "tool_output", "spec", "code", "spec"]
