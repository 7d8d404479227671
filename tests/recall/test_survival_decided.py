"""Survival decided by the summary's own discriminators, without its index (issue 14).

A quantity with a unit, and a causal, ordering or ruled-out clause, survive or not by
the summary's quantities and clauses alone (``survival._decided``): the asked-again
check compared two lost items with about 2,600 user texts on the 254 MB 10,000 x 2,000
text cell of the benchmark grid and built an index of each (0.8 s of the audit
process's CPU).  The answers must be those of the index: compared on seeded random
texts, on hand-computed cases, and the index must not be built for them.
"""

from __future__ import annotations

import pytest

from compaction_audit.recall import survival as sv
from compaction_audit.recall.extract import Kind
from compaction_audit.recall.survival import check as scheck
from compaction_audit.recall.survival import index as sindex
from tests.recall.test_survival_index import _one, _pairs, old_survives


@pytest.mark.parametrize(("shape", "seed"), [
    ("clause", 11), ("clause", 12), ("mixed", 13), ("mixed", 14), ("path", 15)])
def test_decided_answers_as_the_index_does(shape: str, seed: int) -> None:
    decided = {True: 0, False: 0}
    kinds = set()
    for d, summary in _pairs(shape, 400, seed):
        quick = scheck._decided(d, summary)
        full = scheck._survives_in(d, sindex._index(summary))
        assert full == old_survives(d, summary), (d, summary)
        assert sv.survives(d, summary) == full, (d, summary)
        if quick is not None:
            assert quick == full, (d, summary)
            decided[quick] += 1
            kinds.add(d.kind)
    if shape != "path":  # the random texts exercise both answers, by both kinds
        assert decided[True] > 0 and decided[False] > 0, decided
        assert {Kind.QUANTITY, Kind.CAUSAL} <= kinds or {Kind.QUANTITY, Kind.ORDERING} <= kinds


def test_quantity_with_a_unit_by_the_summary_quantities_only() -> None:
    q = _one("the timeout is 45 s now", Kind.QUANTITY)
    assert q.norm == "45 s"
    assert scheck._decided(q, "raised the timeout to 45000 ms") is True  # the same measure
    assert scheck._decided(q, "the timeout is 45 seconds") is True  # the same unit
    assert scheck._decided(q, "the timeout is 45 ms") is False
    assert scheck._decided(q, "the timeout is 45") is False  # a bare number: not a unit
    bare = _one("retry 4500 times", Kind.QUANTITY)
    assert bare.norm == "4500" and scheck._decided(bare, "retry 4500 times") is None


def test_causal_and_ordering_by_the_summary_clauses_only() -> None:
    cause = _one("the job failed because the quota hit 725 GB", Kind.CAUSAL)
    assert scheck._decided(cause, "It failed because the quota hit 725 GB.") is True
    assert scheck._decided(cause, "The quota hit 725 GB and the job failed.") is False
    assert scheck._decided(cause, "It failed because the disk hit 725 GB.") is True  # the keys
    assert scheck._decided(cause, "It failed because the quota hit 800 GB.") is False
    order = _one("Paint the wall before the door.", Kind.ORDERING)
    assert scheck._decided(order, "Paint the wall, then the door.") is True
    assert scheck._decided(order, "Paint the wall and the door.") is False
    # kinds that may be paraphrased or flipped still need the index
    neg = _one("Do not run the migration on prod.", Kind.NEGATION)
    assert scheck._decided(neg, "Ran nothing.") is None


def test_a_text_compared_only_with_decided_items_is_not_indexed() -> None:
    cause = _one("the job failed because the quota hit 725 GB", Kind.CAUSAL)
    size = _one("the quota hit 725 GB", Kind.QUANTITY)
    sindex._index.cache_clear()
    users = [f"Please look at shard {i} again, the dashboard shows 725 GB." for i in range(50)]
    answers = [(sv.survives(cause, u), sv.survives(size, u)) for u in users]
    assert answers == [(False, True)] * 50
    assert sindex._index.cache_info().currsize == 0  # was 50: one index per user text
    assert [(old_survives(cause, u), old_survives(size, u)) for u in users] == answers
