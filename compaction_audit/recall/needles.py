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

Polars builds one automaton per search, and its building is quadratic in the needles
where many share a lead and hold one another's starts (``k_1``, ``k_10``, ``k_100``:
40,000 of them took 1.2 s to build, 2,000 a thousandth of that; adv116 P1: 230,000
sequential ids in one folded span, 1.96 MB, took 2 minutes): no search is given more
than :data:`NEEDLES_PER_SEARCH` needles.
"""

from __future__ import annotations

from typing import TypeVar

import polars as pl

__all__ = ["NEEDLES_PER_SEARCH", "antichains", "contains_any"]

T = TypeVar("T", pl.Expr, pl.Series)

NEEDLES_PER_SEARCH = 8192
"""The most needles one Aho-Corasick search is built from (:func:`antichains`,
:func:`contains_any`): about 0.05 s to build at worst (sequential ids), where the cost
of one search over all needles grows with their square."""


def _pieces(needles: list[str], most: int) -> list[list[str]]:
    return [needles[i:i + most] for i in range(0, len(needles), most)] or [needles]


def contains_any(text: T, needles: list[str], most: int = NEEDLES_PER_SEARCH) -> T:
    """``text.str.contains_any(needles)`` (an expression or a Series of strings), one
    search per ``most`` needles, or'ed: the same Booleans, built in time linear in the
    needles."""
    first, *rest = _pieces(needles, most)
    out = text.str.contains_any(first)
    for piece in rest:
        out = out | text.str.contains_any(piece)
    return out


def antichains(needles: list[str], most: int = NEEDLES_PER_SEARCH) -> list[list[str]]:
    """``needles`` as groups to search one at a time, in each of which no needle holds
    another: ``[needles]`` when none does (one search, as before), else layers peeled
    from the bottom, the needles that hold no other first, then those that hold only
    needles of the layers before, and so on (``["11", "111", "ab"]`` ->
    ``[["11", "ab"], ["111"]]``); the given order within a layer.  As many layers as
    the longest chain of needles each holding the next (a word inside a command is
    two; 250 nested numbers are 250).

    Each layer costs two searches over the needles left: a needle that holds another
    holds it in all of itself but its first character or in all but its last.  A group
    of more than ``most`` needles is given as groups of ``most`` (in order): no search
    is built from more (see the module's note).
    """
    layers: list[list[str]] = []
    left = needles
    while len(left) > 1:
        own = pl.Series(left, dtype=pl.String)
        held = (contains_any(own.str.slice(1), left, most)
                | contains_any(own.str.head(-1), left, most)).to_list()
        if not any(held):
            break
        layers.append([n for n, holds in zip(left, held, strict=True) if not holds])
        left = [n for n, holds in zip(left, held, strict=True) if holds]
    return [piece for layer in ([*layers, left] if left else layers)
            for piece in _pieces(layer, most)]
