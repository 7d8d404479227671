"""The size of every join the code under test makes, eager or inside a lazy plan
(issue 11, class 5: a join's output is what a later filter, sort or group hides from
the result, and what runs the process out of memory).

Lazy plans (:mod:`compaction_audit.plans`, ``pl.collect_all``) run their joins inside
Polars, where a patch of ``pl.DataFrame.join`` does not see them: here every lazy join
(``join``, ``join_asof``, ``join_where``) is collected on the spot, with the engine and
optimizations of :mod:`compaction_audit.plans`, its size recorded, and the collected
frame handed on as a lazy frame, so that the plan gives the same rows.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from compaction_audit import plans

JOINS = ("join", "join_asof", "join_where")
"""The joining methods watched, on both ``pl.DataFrame`` and ``pl.LazyFrame``."""


def joined_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch every join of :data:`JOINS` to record the estimated size (bytes) of the
    frame it makes; returns the list the sizes are appended to, in order."""
    sizes: list[int] = []
    for name in JOINS:
        monkeypatch.setattr(pl.DataFrame, name, _eager(getattr(pl.DataFrame, name), sizes))
        monkeypatch.setattr(pl.LazyFrame, name, _lazy(getattr(pl.LazyFrame, name), sizes))
    return sizes


def _eager(join: Any, sizes: list[int]) -> Any:
    def recorded(self: pl.DataFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        out = join(self, *args, **kwargs)
        sizes.append(out.estimated_size())
        return out
    return recorded


def _lazy(join: Any, sizes: list[int]) -> Any:
    def recorded(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.LazyFrame:
        out = plans.one(join(self, *args, **kwargs))
        sizes.append(out.estimated_size())
        return out.lazy()
    return recorded
