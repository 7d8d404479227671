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


def values(column: pl.Series) -> list[Any]:
    """``column.to_list()``; through NDJSON and orjson when it holds structs that
    :func:`exact_in_json` allows (the dicts then share their keys)."""
    if not (_holds_struct(column.dtype) and exact_in_json(column.dtype)):
        return column.to_list()
    text = column.alias("v").to_frame().write_ndjson()
    return [orjson.loads(line)["v"] for line in text.split("\n") if line]
