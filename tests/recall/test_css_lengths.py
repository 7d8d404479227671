"""CSS lengths are quantities in prose, not in code or tool output (usertest72 #5: the
assistant's "the Sessions text sat at 20px" and "(12px)" were no fact, so a summary
that dropped them dropped nothing; a style sheet read by a tool states a length on
every line, so there they stay out, as bare numbers do)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import extract


def _quantities(text: str, span_type: str = "prose") -> list[tuple[str, str]]:
    return [(d.text, d.norm) for d in extract(text, span_type) if d.kind.value == "quantity"]


@pytest.mark.parametrize(("text", "found"), [
    ("The Sessions text sat at 20px.", [("20px", "20 px")]),
    ("Icons start at px-3 (12px) from the edge.", [("12px", "12 px")]),
    ("The gap is 8 px.", [("8 px", "8 px")]),
    ("Use 0.75rem for the label and 1.5em for the title.",
     [("0.75rem", "0.75 rem"), ("1.5em", "1.5 em")]),
    ("Fill 100vh, not 100vw.", [("100vh", "100 vh"), ("100vw", "100 vw")]),
    ("Indent it by 12 pixels.", [("12 pixels", "12 px")]),  # the same fact as 12px
])
def test_a_css_length_in_prose_is_a_quantity(text: str, found: list[tuple[str, str]]) -> None:
    assert _quantities(text) == found


@pytest.mark.parametrize(("text", "found"), [
    ("Add 10 em dashes.", [("10", "10")]),  # em, rem, vh, vw only glued to the number
    ("Log 4 REM cycles a night.", []),  # lower case only: REM sleep, 12PX
    ("Meet at 9PT; the story is 3pt.", []),  # pt: Pacific time, a story's points
    ("Print 12 pt labels.", [("12", "12")]),
    ("Move 3 px.", [("3 px", "3 px")]),  # px after a space too
])
def test_other_words_are_no_length(text: str, found: list[tuple[str, str]]) -> None:
    """adv141 #3: "9PT", "3pt" and "4 REM cycles" were read as lengths."""
    assert _quantities(text) == found


def test_a_length_in_pixels_keeps_the_length() -> None:
    """adv141 #3: a person's 12px, kept by the summary as "12 pixels", was lost."""
    from compaction_audit.recall.survival import survives

    [d] = extract("Indent the text by 12px.")
    assert survives(d, "Indented it by 12 pixels.") and survives(d, "Indented by 12 px")
    assert not survives(d, "Indented by 13px")


@pytest.mark.parametrize("span_type", ["code", "tool_output"])
def test_code_and_tool_output_keep_no_css_length(span_type: str) -> None:
    sheet = ".nav { padding: 0.5rem; width: 1200px; margin: 2em }\nDone in 3.2s"
    assert _quantities(sheet, span_type) == [("3.2s", "3.2 s")]
