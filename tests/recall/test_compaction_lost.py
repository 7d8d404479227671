"""The report's compactions with what each lost (recall/sections.py): the lost rows
assigned to all compactions by two joins (issue 11, class 5: it ran one Polars query
per compaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall.analysis import analyse
from compaction_audit.recall.sections import _lost_at, compaction_view, ranked_lost
from compaction_audit.series import build_series
from tests.logs import LogWriter, rnd
from tests.recall.querycount import counted_queries


def test_lost_rows_go_to_the_compaction_of_their_round_or_their_fold() -> None:
    lost = pl.DataFrame({"text": ["a", "b", "c", "d", "e"],
                         "lost_round": [1, 3, 3, 5, 7],
                         "fold": ["c1", "c1", "x", None, "c2"]})
    compactions: list[dict[str, Any]] = [
        {"round": 1, "summary_id": "c1"}, {"round": 3, "summary_id": "c2"},
        {"round": 3, "summary_id": None, "opaque": True}, {"round": 5},
        {"round": 9, "summary_id": 5}]  # a number names no fold
    got = [[d["text"] for d in rows] for rows in _lost_at(lost, compactions, False)]
    # b: by fold c1 and by round 3; e: by fold c2 only; the opaque one lists nothing
    assert got == [["a", "b"], ["b", "c", "e"], [], ["d"], []]
    assert _lost_at(lost, compactions, True) == [[], [], [], [], []]  # a redacted log


def _folds(write_log: LogWriter, n: int) -> Path:
    """n rounds, each a span with a TTL and a compaction whose summary loses it."""
    records: list[dict[str, Any]] = []
    for r in range(n):
        records.append(rnd(2 * r, spans=[{"id": f"u{r}", "tokens": 5, "source": "user",
                                          "text": f"Set TTL {r} to {900 + r} s."}]))
        records.append(rnd(2 * r + 1, summaries=[{"id": f"c{r}", "tokens": 2,
                                                  "text": "Working.", "children": [f"u{r}"]}],
                           evicted=[f"u{r}"],
                           compaction={"summary_id": f"c{r}", "tokens_before": 50,
                                       "summary_tokens": 2}))
    return write_log(records, name=f"folds-{n}.jsonl")


def test_the_queries_do_not_grow_with_the_compactions(write_log: LogWriter,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {}
    for n in (10, 20):
        session = read_native(str(_folds(write_log, n)))
        recall = analyse(session, build_series(session))
        ranked = ranked_lost(recall, session)
        with monkeypatch.context() as patch:
            seen = counted_queries(patch)
            view = compaction_view(session, recall, ranked)
        # each compaction lists the facts of its own span only (u10 states two)
        assert [{d["span"] for d in c["lost"]} for c in view] == [{f"u{r}"} for r in range(n)]
        # 5 folded tokens into a 2-token summary (tokens_before 50 is the prompt)
        assert [c["compression_ratio"] for c in view] == [2.5] * n
        counts[n] = len(seen)
    # before: one filter per compaction (10 -> 20 compactions added 10)
    assert counts[20] == counts[10]
