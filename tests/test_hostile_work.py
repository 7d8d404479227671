"""Work linear in the input on the shapes of the fresh adversarial pass (issue 11,
class 5): a list joined onto every round, and adapters that walked what they had seen
once per message.

Each test checks values computed by hand and a deterministic measure of work or size
at n and 2n (linear work doubles, quadratic work quadruples); never a duration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.rules.base import Context, ids_per_round
from compaction_audit.rules.recall import RecallFloor
from compaction_audit.series import build_series
from compaction_audit.settings import Settings
from tests.logs import LogWriter, rnd


def _fold_all_then_quiet(write_log: LogWriter, n: int) -> Path:
    """n spans with text at round 0, one summary folding and evicting them all at
    round 1, then n rounds where nothing happens."""
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": f"m{i}", "tokens": 1, "text": f"t{i}"} for i in range(n)]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": [f"m{i}" for i in range(n)]}],
            evicted=[f"m{i}" for i in range(n)]),
    ]
    records += [rnd(r) for r in range(2, n + 2)]
    return write_log(records, name=f"fold-all-{n}.jsonl")


def _largest_join(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the estimated size (bytes) of every frame a DataFrame.join makes; the
    size of an intermediate frame is what a later sort or fill hides from the result."""
    sizes: list[int] = []
    join = pl.DataFrame.join

    def recorded(self: pl.DataFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        out = join(self, *args, **kwargs)
        sizes.append(out.estimated_size())
        return out

    monkeypatch.setattr(pl.DataFrame, "join", recorded)
    return sizes


def test_recall_floor_names_new_spans_once_not_once_per_round(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    largest = {}
    for n in (1000, 2000):
        session = read_native(str(_fold_all_then_quiet(write_log, n)))
        ctx = Context(session, build_series(session), Settings())
        RecallFloor().evaluate(ctx)  # the analysis it reads is cached on the context
        with monkeypatch.context() as patch:
            sizes = _largest_join(patch)
            fired = RecallFloor().evaluate(ctx).fired
        # every span is under the floor from round 1 (folded and evicted: the summary
        # "S" keeps none of their text) to the last round; they are new at round 1 only
        assert fired["ri"].to_list() == list(range(1, n + 2))
        assert fired["below_floor"].to_list() == [n] * (n + 1)
        assert fired["new_spans"][0].to_list() == sorted(f"m{i}" for i in range(n))
        assert fired["new_spans"].list.len().to_list() == [n] + [0] * n
        largest[n] = max(sizes)
    # before: a join copied the list of n ids into each of the n + 1 rounds (10,000 x
    # 10,000 asked for 8 GB and aborted the process); now every frame is linear in n
    assert largest[2000] < 2.5 * largest[1000]


def test_ids_per_round_copies_the_ids_of_one_round_once() -> None:
    rounds = pl.DataFrame({"ri": [3, 1, 2, 4], "n": [30, 10, 20, 40]})
    pairs = pl.DataFrame({"ri": [2, 2, 4, 9], "id": ["b", "a", "c", "z"]})
    out = ids_per_round(rounds, pairs, "names")
    # rounds in order, ids sorted, none where the round has none, round 9 not a row
    assert out.to_dicts() == [{"ri": 1, "n": 10, "names": []},
                              {"ri": 2, "n": 20, "names": ["a", "b"]},
                              {"ri": 3, "n": 30, "names": []},
                              {"ri": 4, "n": 40, "names": ["c"]}]
    assert out.schema["names"] == pl.List(pl.String)
    size = {}
    for n in (2000, 4000):
        many = pl.DataFrame({"ri": list(range(n))})
        one = pl.DataFrame({"ri": [0] * n, "id": [f"id{i}" for i in range(n)]})
        out = ids_per_round(many, one, "names")
        assert out["names"].list.len().to_list() == [n] + [0] * (n - 1)
        size[n] = out["names"].estimated_size()
    assert size[4000] < 2.5 * size[2000]
