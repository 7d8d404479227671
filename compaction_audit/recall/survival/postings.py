"""Survival's lookup structures: word sets with an inverted index, and a bounded memo.

:class:`_Postings` lets a survival check test only the summary sets that share a word
with it (issue 11, item 5); :func:`_remember` bounds each summary's memo of answers.
Pure standard library.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator


class _Postings:
    """Word sets with an inverted index (word -> positions of the sets that hold it), so
    a lookup tests only the sets that share a word with the query instead of all of
    them (issue 11, item 5, adv8 F4: survival was O(lost items x summary items)).
    Duplicate sets are kept once, with the least tag given (the first sentence that
    states one): every test on them is an ``any`` or a least tag."""

    __slots__ = ("post", "sets", "tags")

    def __init__(self, sets: Iterable[frozenset[str]],
                 tags: Iterable[int] | None = None) -> None:
        first: dict[frozenset[str], int] = {}
        for words, tag in zip(sets, itertools.repeat(0) if tags is None else tags,
                              strict=False):
            first.setdefault(words, tag)
        self.sets: list[frozenset[str]] = list(first)
        self.tags: list[int] = list(first.values())
        self.post: dict[str, list[int]] = {}
        for i, words in enumerate(self.sets):
            for w in words:
                self.post.setdefault(w, []).append(i)

    def _ids(self, words: Iterable[str], some: int) -> Iterator[int]:
        post = self.post
        rarest = sorted((len(post.get(w, ())), w) for w in set(words))[:some]
        if len(rarest) == 1:
            yield from post.get(rarest[0][1], ())
            return
        seen: set[int] = set()
        for _, w in rarest:
            for i in post.get(w, ()):
                if i not in seen:
                    seen.add(i)
                    yield i

    def holding(self, words: Iterable[str], some: int) -> Iterator[frozenset[str]]:
        """The sets that hold at least one of the ``some`` rarest of ``words`` (each
        once): every set that holds ``len(words) - some + 1`` of them is among these
        (pigeonhole), the prefix filter of set-similarity joins.  ``some`` >= 1."""
        return (self.sets[i] for i in self._ids(words, some))

    def tagged(self, words: Iterable[str], some: int) -> Iterator[tuple[int, frozenset[str]]]:
        """:meth:`holding`, each set with its tag."""
        return ((self.tags[i], self.sets[i]) for i in self._ids(words, some))


def _remember(memo: dict[tuple[object, ...], bool], key: tuple[object, ...],
              answer: Callable[[], bool]) -> bool:
    """``memo[key]``, computed by ``answer`` the first time (at most :data:`_MEMO_MAX`
    answers, then it starts again)."""
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        hit = memo[key] = answer()
    return hit


_MEMO_MAX = 65536
"""Most answers one summary's memo holds (then it starts again): bounded memory."""
