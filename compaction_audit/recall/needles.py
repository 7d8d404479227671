"""Literal needles for Polars' Aho-Corasick searches with ``overlapping=True``.

An overlapping search lists every needle found at every position of a text before
anything can cap the list.  Where one needle holds another (``1111`` in ``11111``, a
run of dots in a longer run), a long text can hold most of them at every position:
a list of text length x nested needles x their length, 7.6 GB for a 255 KB log of
250 nested numbers over a run of digits, 3.8 GB for 180 KB of nested code-span
objects over a tool call (adv83).  :func:`antichains` splits such needles into
groups searched one at a time, in each of which no needle holds another: then at most
one needle of a group starts at any position (two that start at one position: the
shorter is held by the longer), and a search lists at most one hit per character.
"""

from __future__ import annotations

import polars as pl

__all__ = ["antichains"]


def antichains(needles: list[str]) -> list[list[str]]:
    """``needles`` as groups to search one at a time, in each of which no needle holds
    another: ``[needles]`` when none does (one search, as before), else layers peeled
    from the bottom, the needles that hold no other first, then those that hold only
    needles of the layers before, and so on (``["11", "111", "ab"]`` ->
    ``[["11", "ab"], ["111"]]``); the given order within a layer.  As many layers as
    the longest chain of needles each holding the next (a word inside a command is
    two; 250 nested numbers are 250).

    Each layer costs two searches over the needles left: a needle that holds another
    holds it in all of itself but its first character or in all but its last.
    """
    layers: list[list[str]] = []
    left = needles
    while len(left) > 1:
        own = pl.Series(left, dtype=pl.String)
        inner = (own.str.slice(1).str.contains_any(left)
                 | own.str.head(-1).str.contains_any(left)).to_list()
        if not any(inner):
            break
        layers.append([n for n, holds in zip(left, inner, strict=True) if not holds])
        left = [n for n, holds in zip(left, inner, strict=True) if holds]
    return [*layers, left] if left else layers
