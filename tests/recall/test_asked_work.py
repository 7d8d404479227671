"""A question naming many facts is judged in work linear in its span's text (adv88 #3):
:func:`~compaction_audit.recall.stance.asked` searched the text less its questions once
per discriminator asked (16,000 names in one question over 1.3 MB took 10 s; the
native log of that span, folded, 11 s to audit and 37 s at twice the size).  It now
searches it once for all the distinct texts, with the same answers as ``in``.

The work is a deterministic count (characters searched, Python line events) at n and
2n; never a duration.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from compaction_audit.recall import literals, stance
from compaction_audit.recall.extract import extract
from compaction_audit.recall.kinds import Discriminator
from tests.workcount import lines_run_in


def by_search(cleaned: str, found: Sequence[Discriminator]) -> list[bool]:
    """What :func:`stance.asked` answers, by its definition: in a question, no value,
    and its text not inside the text less its questions (one ``in`` per discriminator)."""
    bounds = stance.question_bounds(cleaned) if "?" in cleaned else []
    cuts = [0, *(x for s, e in bounds for x in (s, e + 1)), len(cleaned)]
    rest = " ".join(cleaned[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True))
    return [d.kind not in stance.VALUE_KINDS and any(s <= d.start < e for s, e in bounds)
            and d.text not in rest for d in found]


def many_names(n: int, restated: str = "") -> str:
    """One question naming mod_0 .. mod_<n-1>, then ``restated`` and 4 n words."""
    return ("Which of " + " ".join(f"mod_{i}" for i in range(n)) + " did we pin? "
            + restated + "lorem ipsum dolor " * (4 * n))


TEXTS = [
    "Which version of lib2 did we pin again?",
    "Was it port 8443?",
    "Which lib2 did we pin? lib2 stays at 1.2.0.",
    "Add `allow_nil? false` to `source_id`.",
    "Should we not use --force? Use release.sh now.",
    "Should we not use --force? We should not use --force here.",  # the clause restated
    "Is cfg_a or cfg_ab set? Only cfg_abc is.",  # inside a longer name: held, as `in` says
    "No question here: lib2 and release.sh.",
    many_names(300, "mod_1 and mod_22 stay. "),  # mod_2 is inside mod_22
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("direct", [True, False])
def test_the_answers_are_those_of_one_search_per_discriminator(
        text: str, direct: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # direct: each text with `in` (a few texts); else the automaton, however few
    if not direct:
        monkeypatch.setattr(stance, "_DIRECT_TEXTS", 0, raising=False)
    found = extract(text)
    assert stance.asked(text, found) == by_search(text, found)


def test_a_restated_name_is_not_asked_as_in_says() -> None:
    text = many_names(300, "mod_1 and mod_22 stay. ")
    found = extract(text)
    asked = {d.text for d, a in zip(found, stance.asked(text, found), strict=True) if a}
    # held again: mod_1, mod_10..mod_19, mod_100..mod_199 (texts inside "mod_1 "? no:
    # the rest holds "mod_1" and "mod_22", and a name is held when its text is inside)
    assert {f"mod_{i}" for i in range(300)} - asked == {"mod_1", "mod_2", "mod_22"}


def test_many_names_in_one_question_search_the_rest_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    searched = [0]  # characters of the text less its questions searched
    found_in = literals.Literals.found_in

    def counted(self: literals.Literals, text: str) -> set[str]:
        searched[0] += len(text)
        return found_in(self, text)

    monkeypatch.setattr(literals.Literals, "found_in", counted)
    work, lines = {}, {}
    for n in (1000, 2000):
        searched[0] = 0
        text = many_names(n)
        found = extract(text)
        out, lines[n] = lines_run_in((stance, literals), lambda t=text, f=found: stance.asked(t, f))
        work[n] = searched[0]
        assert out == [True] * n  # every name asked, none restated
    # the rest once: the join's space, the one after the mark and the 4 n words (18
    # characters each); before: once per name (n x 72 n characters, no automaton: 0 here)
    assert work == {1000: 2 + 72_000, 2000: 2 + 144_000}
    assert lines[2000] < 2.5 * lines[1000], lines
