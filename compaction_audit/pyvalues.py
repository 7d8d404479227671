"""Polars values as Python values with shared strings and dict keys (issue 14).

``Series.to_list`` makes a fresh key string for every struct value it turns into a
dict and a fresh string for every string value: on the 254 MB 10,000 x 2,000 text
cell of the benchmark grid, the fold findings' children and dropped discriminators
held tens of MB of copies of the same few keys and strings.  :func:`values` gives the
same values with the keys and equal strings shared.
"""

from __future__ import annotations

from itertools import accumulate, repeat
from typing import Any

import polars as pl

__all__ = ["values"]


def values(column: pl.Series, shared: dict[str, str] | None = None) -> list[Any]:
    """``column.to_list()``, built a field and a list level at a time, with equal
    strings (at any depth) made one object and each struct's keys one set of objects.

    ``shared``: the strings already seen, kept across calls (``setdefault``: the first
    seen is the one kept); without it, strings are shared within this call only.
    ``Series.to_list`` makes a fresh key string for every struct value it turns into a
    dict and a fresh string for every value: the fold findings of the grid's 254 MB
    text cell repeat a few thousand distinct strings (discriminators, span ids, tier
    names) in about 100,000 dicts (issue 14, memory).  Here each struct field and each
    list's flattened values are converted as one column (C-level ``map`` and ``zip``,
    no bytecode per value; an earlier version went through NDJSON and orjson and then
    walked the result in Python, about 0.5 s of that cell).  Values are those of
    ``to_list`` (tests/test_text_cell_costs.py compares them)."""
    return _values(column, (shared if shared is not None else {}).setdefault)


def _values(column: pl.Series, share: Any) -> list[Any]:
    dtype = column.dtype
    if isinstance(dtype, pl.Struct):
        keys = [f.name for f in dtype.fields]
        if not keys:
            return column.to_list()
        fields = [_values(column.struct.field(k), share) for k in keys]
        out: list[Any] = list(map(dict, map(zip, repeat(keys), zip(*fields, strict=True))))
        return _nulls_back(column, out)
    if isinstance(dtype, pl.List):
        lengths = column.list.len().fill_null(0)
        flat = (pl.DataFrame({"v": column, "n": lengths}).explode("v")
                .filter(pl.col("n") > 0)["v"])  # an empty or null list explodes to a null
        inner = _values(flat, share)
        ends = list(accumulate(lengths.to_list()))
        out = [inner[end - n:end] for end, n in zip(ends, lengths.to_list(), strict=True)]
        return _nulls_back(column, out)
    if dtype == pl.String:
        got = column.to_list()
        return list(map(share, got, got)) if column.null_count() == 0 else [
            None if v is None else share(v, v) for v in got]
    return column.to_list()


def _nulls_back(column: pl.Series, out: list[Any]) -> list[Any]:
    """``out`` with None where ``column`` is null (a null struct or list)."""
    if column.null_count() == 0:
        return out
    return [None if null else v for v, null in zip(out, column.is_null().to_list(), strict=True)]
