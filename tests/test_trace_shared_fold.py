"""``trace`` reads each fold's text once per query, however many spans it folds (issue
11, class 5, adv10 F5).

A word held by n spans that one summary of L characters folds: every span asked the
same question of the same text (a lowered copy and a word search of the whole of
it), n x L; 8,000 spans under a 240 KB summary took 76 s where the audit took 3 s.
"""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit import trace as tr
from compaction_audit.io.native import read_native
from compaction_audit.recall.survival import check as surv  # survives' home
from compaction_audit.trace.query import _Follow
from tests.logs import LogWriter, rnd, spans


def _log(write_log: LogWriter, n: int, summary: str) -> str:
    ids = [f"s{i}" for i in range(n)]
    records = [rnd(0, spans=[{**s, "text": f"zebra pen {i} on port 8080"}
                             for i, s in enumerate(spans(*((x, 1) for x in ids)))]),
               rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ids, "text": summary}],
                   evicted=ids)]
    return str(write_log(records))


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    calls = [0]
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("n", [10, 20])
def test_a_word_is_looked_for_once_per_fold(write_log: LogWriter,
                                            monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    session = read_native(_log(write_log, n, "The pens were moved; nothing about animals."))
    at = _count(monkeypatch, _Follow, "at")
    kept = _count(monkeypatch, surv, "survives")
    root = tr.trace(session, "zebra")
    # every span: the word lost at fold S; the port, a companion, dropped there too
    assert root.label.startswith(f"word 'zebra': {n} spans: {n} lost")
    assert len(root.children) == n
    first = root.children[0]
    assert first.children[0].label.startswith("LOST at fold S (depth 1, round 1")
    assert at[0] == 1  # one fold, one question: n before the fix
    assert kept[0] <= 2  # the companions (port 8080, ...) once each, not once per span


def test_a_carried_word_is_carried_for_every_span(write_log: LogWriter) -> None:
    session = read_native(_log(write_log, 20, "Zebra pens on port 8080 were kept."))
    root = tr.trace(session, "zebra")
    assert root.label.startswith("word 'zebra': 20 spans: 20 carried")
    assert all(c.children[0].label.startswith("carried by fold S")
               for c in root.children if c.children)
