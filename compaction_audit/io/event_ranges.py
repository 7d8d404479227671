"""The numeric OpenHands event ids a range condensation may still name.

A condensation given as ``forgotten_events_start_id .. forgotten_events_end_id``
forgets the indexed ids inside that inclusive range (:meth:`EventRanges.take`).  The
ids live in a sorted list cut into blocks of :data:`LOAD` to ``2 * LOAD`` keys (fewer
once a range has taken some), with the last key of each block in ``_maxes``: an add
or a take bisects ``_maxes``, then moves at most ``2 * LOAD`` keys in each of one or
two blocks.  The list of blocks changes only when a block splits (``LOAD`` adds into
it at least) or a range empties it, so each operation costs O(log n + LOAD) plus
O(blocks / LOAD) amortized, whatever order the ids come in.  One sorted list cost
O(n) per out-of-order id: an insert at the front (adv9), then a sort at the next take
and a delete at the front (adv14 F3: n live ids above k condensations of one small
id each took 76 s of CPU at n = k = 32,000).
"""

from __future__ import annotations

import bisect
from typing import Any

Key = tuple[int, int, str]  # (the id's number, first-seen order, the id)

LOAD = 512
"""Keys of a block after a split (keys, not bytes); a block splits past ``2 * LOAD``."""


class EventRanges:
    """The numeric event ids with spans, for condensations given as a range.

    A range ``start .. end`` takes the ids inside it out of the index (their spans are
    folded or evicted by that condensation, so a later range would find none of them in
    the working set); an id comes back when its event gets a new span.  Each id is
    visited once per span it gets, so n condensations over n events cost O(n log n),
    not O(n²) (issue 11, class 5).  ``visited`` counts the ids :meth:`take` returned.
    """

    list_type: type[list[Any]] = list
    """The list class of the blocks and of the block index (a test counts moves)."""

    def __init__(self) -> None:
        self._blocks: list[list[Key]] = self.list_type()  # sorted; none empty
        self._maxes: list[Key] = self.list_type()  # the last key of each block
        self._live: set[str] = set()
        self._order: dict[str, int] = {}
        self.visited = 0

    def add(self, eid: str) -> None:
        """Index ``eid`` if it is a non-negative integer's digits and not indexed yet."""
        if eid in self._live or not eid.isdigit():
            return
        try:
            number = int(eid)
        except ValueError:  # digits int() does not read (e.g. superscripts): never inside
            return
        key = (number, self._order.setdefault(eid, len(self._order)), eid)
        self._live.add(eid)
        blocks, maxes = self._blocks, self._maxes
        if not blocks:
            blocks.append(self.list_type([key]))
            maxes.append(key)
            return
        i = min(bisect.bisect_left(maxes, key), len(maxes) - 1)
        block = blocks[i]
        if key > maxes[i]:  # past every key: the last block's end
            block.append(key)
            maxes[i] = key
        else:
            bisect.insort(block, key)
        if len(block) > 2 * LOAD:
            blocks.insert(i + 1, self.list_type(block[LOAD:]))
            maxes.insert(i, block[LOAD - 1])
            del block[LOAD:]

    def take(self, start: int, end: int) -> list[str]:
        """The indexed ids ``start <= int(id) <= end`` in first-seen order, removed."""
        blocks, maxes = self._blocks, self._maxes
        low, high = (start,), (end + 1,)
        first = j = bisect.bisect_left(maxes, low)  # the first block with an id >= start
        inside: list[Key] = []
        while j < len(blocks) and blocks[j][0] < high:
            block = blocks[j]
            lo, hi = bisect.bisect_left(block, low), bisect.bisect_left(block, high)
            inside += block[lo:hi]
            del block[lo:hi]
            if block:
                maxes[j] = block[-1]
            j += 1
        # the emptied blocks are those between the first and last touched, and either
        # end when the range took all of it: deleted in one slice
        gone_from = first + (first < j and bool(blocks[first]))
        gone_to = j - (j - 1 > first and bool(blocks[j - 1]))
        if gone_from < gone_to:
            del blocks[gone_from:gone_to]
            del maxes[gone_from:gone_to]
        self.visited += len(inside)
        self._live.difference_update(eid for _, _, eid in inside)
        return [eid for _, _, eid in sorted(inside, key=lambda key: key[1])]
