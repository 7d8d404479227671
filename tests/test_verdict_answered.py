"""The verdict of a product's log counts the lost facts a person asked for again and
the assistant answered without reading them again, with the lines of the answers
(usertest72: the line that matters most was under the list, while the verdict counted
it with the trivia)."""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit.report.model import ANSWER_LINES, answered_phrase


def fact(answered: int | None, where: str | None = None) -> dict[str, Any]:
    return {"tier": 1, "answered_line": answered, "answered_file": where}


@pytest.mark.parametrize(("lost", "said"), [
    ([], ""),
    ([fact(None), fact(None)], ""),  # asked again, or not, but no answer from the summary
    ([fact(22), fact(22), fact(None)], ", 2 of them answered from the summary (line 22)"),
    ([fact(22), fact(9, "s.messages.json")],
     ", 2 of them answered from the summary (line 22, s.messages.json:9)"),
    ([fact(n) for n in (5, 6, 7, 8, 9)],
     ", 5 of them answered from the summary (line 5, line 6, line 7 and 2 more)"),
])
def test_the_answers_from_the_summary(lost: list[dict[str, Any]], said: str) -> None:
    assert ANSWER_LINES == 3
    assert answered_phrase(lost) == said
