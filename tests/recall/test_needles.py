"""Needles an overlapping Aho-Corasick search lists, in groups none of whose needles
holds another (adv83: nested needles over a long run listed gigabytes of hits)."""

from __future__ import annotations

import polars as pl

from compaction_audit.recall.needles import NEEDLES_PER_SEARCH, antichains, contains_any


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


def test_no_search_is_built_from_more_than_its_share_of_needles() -> None:
    """adv116 P1: Polars' automaton for 230,000 sequential ids (``k_1`` in ``k_10`` in
    ``k_100``) took minutes to build: a group of more than ``most`` needles is given
    in pieces of ``most``, in order, each still a group none of whose needles holds
    another."""
    assert antichains(["ab", "cd", "ef", "gh", "ij"], most=2) == [
        ["ab", "cd"], ["ef", "gh"], ["ij"]]
    # the layers first, then their pieces
    assert antichains(["11", "ab", "cd", "111", "1111"], most=2) == [
        ["11", "ab"], ["cd"], ["111"], ["1111"]]
    ids = [f"k_{i}" for i in range(120)]
    groups = antichains(ids, most=16)
    assert max(len(g) for g in groups) == 16
    assert sorted(n for g in groups for n in g) == sorted(ids)
    for group in groups:  # no needle of a group holds another
        assert not any(a != b and a in b for a in group for b in group)
    assert antichains(ids, most=16) != antichains(ids)  # the cap is what split them
    assert all(len(g) <= NEEDLES_PER_SEARCH for g in antichains(ids))


def test_contains_any_in_pieces_says_what_one_search_says() -> None:
    texts = pl.Series(["see k_17 here", "k_1", "nothing", "", "xk_99y", "k_"])
    needles = [f"k_{i}" for i in range(10, 100)]
    whole = texts.str.contains_any(needles).to_list()
    assert whole == [True, False, False, False, True, False]
    for most in (1, 7, 90, 1000):
        assert contains_any(texts, needles, most).to_list() == whole
        assert pl.DataFrame({"t": texts}).select(
            contains_any(pl.col("t"), needles, most))["t"].to_list() == whole
