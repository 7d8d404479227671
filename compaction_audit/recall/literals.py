"""Many literal strings searched in a text at once (Aho-Corasick): whether a text holds
any of them, or which of them it holds, in one pass over the text.

``any(p in text for p in patterns)`` per text costs patterns x text; over many texts
and many patterns that is quadratic in the input (issue 11, class 5, eighth adversarial
pass F5 and F6: a summary sentence tested against every unsupported discriminator, a
user message searched for every lost item's words).  The automaton costs the total
length of the patterns to build and one step per character of a text to search; the
answers are those of Python's ``in`` on the same strings (case-sensitive, overlapping
matches found, the empty pattern held by every text).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["Literals"]


class Literals:
    """An automaton over ``patterns`` (strings; duplicates are kept once, in order).

    ``patterns``: the distinct patterns, by id (position).  Memory: one node per
    distinct prefix of the patterns.
    """

    def __init__(self, patterns: Iterable[str], max_nodes: int | None = None) -> None:
        """Raises OverflowError when the patterns need more than ``max_nodes`` nodes
        (about 240 bytes each) and ``max_nodes`` is not None."""
        self.patterns: list[str] = list(dict.fromkeys(patterns))
        self._goto: list[dict[str, int]] = [{}]
        self._word: list[int] = [-1]  # the id of the pattern ending at a node, or -1
        for pid, pattern in enumerate(self.patterns):
            node = 0
            for ch in pattern:
                nxt = self._goto[node].get(ch)
                if nxt is None:
                    nxt = len(self._goto)
                    if max_nodes is not None and nxt > max_nodes:
                        raise OverflowError(f"more than {max_nodes:,} automaton nodes")
                    self._goto[node][ch] = nxt
                    self._goto.append({})
                    self._word.append(-1)
                node = nxt
            self._word[node] = pid
        # fail: the node of the longest proper suffix that is a prefix of a pattern;
        # out: the nearest node on the fail chain (not itself) where a pattern ends
        self._fail = [0] * len(self._goto)
        self._out = [-1] * len(self._goto)
        queue = deque(self._goto[0].values())
        while queue:
            node = queue.popleft()
            for ch, child in self._goto[node].items():
                queue.append(child)
                f = self._fail[node]
                while f and ch not in self._goto[f]:
                    f = self._fail[f]
                target = self._goto[f].get(ch, 0)
                self._fail[child] = target
                self._out[child] = target if self._word[target] >= 0 else self._out[target]

    def _step(self, node: int, ch: str) -> int:
        goto, fail = self._goto, self._fail
        while True:
            nxt = goto[node].get(ch)
            if nxt is not None:
                return nxt
            if not node:
                return 0
            node = fail[node]

    def any_in(self, text: str) -> bool:
        """Whether ``text`` holds one of the patterns (``any(p in text for p in
        patterns)``); stops at the first."""
        if not self.patterns:
            return False
        if self._word[0] >= 0:  # the empty pattern
            return True
        word, out, step, node = self._word, self._out, self._step, 0
        for ch in text:
            node = step(node, ch)
            if word[node] >= 0 or out[node] >= 0:
                return True
        return False

    def found_in(self, text: str) -> set[str]:
        """The patterns ``text`` holds (``{p for p in patterns if p in text}``).  Each
        node's chain of shorter matches is walked once per text, so the work is the
        text's length plus the number of nodes, however the patterns overlap."""
        word, out, step = self._word, self._out, self._step
        found = {self.patterns[word[0]]} if self.patterns and word[0] >= 0 else set()
        seen: set[int] = set()
        node = 0
        for ch in text:
            node = step(node, ch)
            at = node
            while at > 0 and at not in seen:
                seen.add(at)
                if word[at] >= 0:
                    found.add(self.patterns[word[at]])
                at = out[at]
        return found
