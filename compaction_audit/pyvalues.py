"""Polars values as Python values with shared dict keys (issue 14).

``Series.to_list`` makes fresh key strings for every struct value it turns into a
dict: on the 254 MB 10,000 x 2,000 text cell of the benchmark grid, the fold
findings' children and dropped discriminators held tens of MB of copies of the same
few keys.  Where every value reads back from JSON exactly (strings, booleans,
integers and nulls, nested in lists and structs: no float, no temporal type), the
column is written as NDJSON by Polars and read with orjson, whose key cache shares
the keys; the values are the same.
"""

from __future__ import annotations

from typing import Any

import orjson
import polars as pl

__all__ = ["exact_in_json", "values"]

_LEAVES = (pl.String, pl.Boolean, pl.Null, pl.Int8, pl.Int16, pl.Int32, pl.Int64,
           pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def exact_in_json(dtype: Any) -> bool:
    """True when every leaf of ``dtype`` (through lists, arrays and structs) is a
    string, a boolean, an integer or null: values of it read back from JSON exactly."""
    if isinstance(dtype, pl.List | pl.Array):
        return exact_in_json(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return all(exact_in_json(f.dtype) for f in dtype.fields)
    return any(dtype == leaf for leaf in _LEAVES)


def _holds_struct(dtype: Any) -> bool:
    if isinstance(dtype, pl.List | pl.Array):
        return _holds_struct(dtype.inner)
    return isinstance(dtype, pl.Struct)


def values(column: pl.Series, shared: dict[str, str] | None = None) -> list[Any]:
    """``column.to_list()``; through NDJSON and orjson when it holds structs that
    :func:`exact_in_json` allows (the dicts then share their keys).

    ``shared``: on that path, equal strings at any depth become one object, the first
    seen, kept in ``shared`` across calls.  orjson makes a new string for every value:
    the fold findings of the grid's 254 MB text cell repeat a few thousand distinct
    strings (discriminators, span ids, tier names) in about 100,000 dicts, and sharing
    them lowers the audit's peak by about 25 MB for about 0.1 s (issue 14, memory).
    """
    if not (_holds_struct(column.dtype) and exact_in_json(column.dtype)):
        return column.to_list()
    text = column.alias("v").to_frame().write_ndjson()
    out = [orjson.loads(line)["v"] for line in text.split("\n") if line]
    if shared is not None:
        _share_strings(out, shared.setdefault)
    return out


def _share_strings(tree: Any, share: Any) -> None:
    """Replace, in place, each string in ``tree`` (lists and dicts, at any depth) by
    ``share(s, s)``."""
    pairs = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for key, item in list(pairs):
        kind = item.__class__
        if kind is str:
            tree[key] = share(item, item)
        elif kind is dict or kind is list:
            _share_strings(item, share)
