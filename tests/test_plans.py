"""Fewer, larger Polars plans (issue 14, fleet audits): a small trace's fixed cost is
its number of queries, each planned and run (:mod:`compaction_audit.plans`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit import api, plans
from tests.recall.querycount import counted_queries

TINY = (
    '{"type": "session", "schema": "compaction-audit/1", "session_id": "tiny", '
    '"budget_tokens": 1000}\n'
    '{"type": "round", "round": 0, "spans": [{"id": "s1", "tokens": 20, "text": "a"}]}\n'
    '{"type": "round", "round": 1, "spans": [{"id": "s2", "tokens": 20, "text": "b"}]}\n'
)
"""``benchmarks/tiny_traces.py``'s native trace: two rounds, no fold, no fact."""


def _queries(monkeypatch: pytest.MonkeyPatch, path: Path) -> int:
    """Eager DataFrame queries plus lazy collects of one audit of ``path``."""
    api.audit(str(path))  # what is kept per process (emptyframes) is made here
    seen = counted_queries(monkeypatch)
    for owner, name in ((pl.LazyFrame, "collect"), (pl, "collect_all")):
        real = getattr(owner, name)

        def counted(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            seen.append("collect")
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    api.audit(str(path))
    return len(seen)


def test_a_tiny_trace_runs_few_queries(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "tiny.jsonl"
    log.write_text(TINY, encoding="utf-8")
    # counted this way (filter, join, select, with_columns, sort, head, to_dicts and
    # collects): 212 before the plans, 78 with them (263 and 87 counting every eager
    # operation); the Codex fixture 548 and 313; 91 since a fact's holders read their
    # stance and a bound value its name (usertest38 #3, #4): a bound of 95
    assert _queries(monkeypatch, log) <= 95


def test_plans_keep_the_rows_and_order_of_the_eager_steps() -> None:
    left = pl.DataFrame({"k": [3, 1, 2, 1, 3], "v": ["a", "b", "c", "d", "e"]})
    right = pl.DataFrame({"k": [1, 3, 9], "w": [10, 30, 90]})
    eager = left.join(right, on="k", how="left").filter(pl.col("w").is_not_null())
    first, second = plans.collect(
        left.lazy().join(right.lazy(), on="k", how="left").filter(pl.col("w").is_not_null()),
        left.lazy().select(pl.col("v").str.to_uppercase()))
    assert first.equals(eager)
    assert first["v"].to_list() == ["a", "b", "d", "e"]
    assert second["v"].to_list() == ["A", "B", "C", "D", "E"]
    assert plans.one(left.lazy().sort("k", maintain_order=True))["v"].to_list() == \
        ["b", "d", "c", "a", "e"]
