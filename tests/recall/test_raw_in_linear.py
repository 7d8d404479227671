"""``scheck._raw_in`` compares only where the rarest word of a lost item starts
(issue 11, class 5): it searched the whole summary once per lost item whose words all
occur in it, so n hyphenated identifiers ("alpha7-beta7") against a summary stating
each word alone ("alpha7 and beta7") cost n x the summary (28 s at 696 KB).

The work is counted (characters a search reads), never timed; a seeded comparison
with the old code checks the answers are the same.
"""

from __future__ import annotations

import random
from typing import Any

from compaction_audit.recall.survival import check as scheck
from compaction_audit.recall.survival import index as sindex
from compaction_audit.recall.survival import words as swords
from tests.recall.test_survival_index import _old_raw_in as _old_scan


class _Low(str):
    """A summary text that counts the characters its searches read."""

    read = 0

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:
        at = str.find(self, sub, start, end)
        _Low.read += (len(self) if at < 0 else at + len(sub)) - (start or 0)
        return at

    def startswith(self, prefix: Any, start: Any = None, end: Any = None) -> bool:
        _Low.read += len(prefix) if isinstance(prefix, str) else 1
        return str.startswith(self, prefix, start, end)


def _old_raw_in(norm: str, idx: Any) -> bool:
    """``_raw_in`` before the fix: a search of the whole summary."""
    if any(w not in idx.lookup.words for w in swords._WORD_RE.findall(norm)):
        return False
    return _old_scan(norm, idx.low)


def _read(n: int) -> int:
    summary = " ".join(f"alpha{i} and beta{i} done." for i in range(n))
    idx = sindex._index.__wrapped__(summary)  # a fresh one: its own word starts
    idx.low = _Low(idx.low)
    _Low.read = 0
    assert not any(scheck._raw_in(f"alpha{i}-beta{i}", idx) for i in range(n))
    assert scheck._raw_in(f"beta{n - 1} done", idx)
    return _Low.read


def test_the_search_reads_a_bounded_amount_per_lost_item() -> None:
    small, large = _read(500), _read(1000)
    # each item: one place (its rarest word occurs once) of about 12 characters; the
    # old code read the whole summary (about 12,000 and 24,000 characters) per item
    assert large <= 2.2 * small
    assert large < 30 * 1000


_ALPHABET = "ab_-. 1\u00e9"


def test_same_answers_as_the_old_search() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        summary = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))
        idx = sindex._index(summary)
        for _ in range(5):
            norm = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 6)))
            if rng.random() < 0.5 and len(idx.low) > 2:  # a piece of the summary
                i = rng.randrange(len(idx.low) - 1)
                norm = idx.low[i:i + rng.randint(1, 6)]
            assert scheck._raw_in(norm, idx) == _old_raw_in(norm, idx), (summary, norm)
