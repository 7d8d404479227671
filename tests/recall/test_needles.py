"""Needles an overlapping Aho-Corasick search lists, in groups none of whose needles
holds another (adv83: nested needles over a long run listed gigabytes of hits)."""

from __future__ import annotations

from compaction_audit.recall.needles import antichains


def test_needles_none_of_which_holds_another_are_one_group() -> None:
    assert antichains(["abc", "def", "bcd"]) == [["abc", "def", "bcd"]]
    assert antichains(["x"]) == [["x"]]
    assert antichains([]) == []


def test_nested_needles_are_peeled_in_layers_from_the_bottom() -> None:
    assert antichains(["11", "111", "ab"]) == [["11", "ab"], ["111"]]
    # a word inside a command inside a longer one: three layers, whatever the order
    assert antichains(["git push --force", "--force", "push --force", "rm -rf"]) == [
        ["--force", "rm -rf"], ["push --force"], ["git push --force"]]
    # held at the start, in the middle, at the end
    assert antichains(["abcd", "ab", "bc", "cd"]) == [["ab", "bc", "cd"], ["abcd"]]
    chain = ["1" * k for k in range(4, 12)]
    assert antichains(list(reversed(chain))) == [[n] for n in chain]
