"""Count the Polars queries a piece of code runs: a test of work per item that is not a
timed test (issue 11, class 5: no Polars query per rule, per summary or per span)."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

QUERIES = ("filter", "join", "join_asof", "join_where", "sort", "head", "select",
           "with_columns", "to_dicts")


def counted_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Patch the DataFrame methods in :data:`QUERIES` to record their name on each call;
    returns the (growing) list of names.  Eager DataFrame methods do not go through
    ``LazyFrame.collect``, so they are counted where they are called."""
    seen: list[str] = []
    for name in QUERIES:
        real = getattr(pl.DataFrame, name)

        def counted(self: pl.DataFrame, *args: Any, _real: Any = real, _name: str = name,
                    **kwargs: Any) -> Any:
            seen.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(pl.DataFrame, name, counted)
    return seen
