"""A rule's fired rows as the values of its findings (issue 11, item 5; issue 14).

:func:`frame_rows` turns a rule's frame into one dict per row, a bounded number of
list elements at a time (:func:`chunks`), with equal strings shared
(:func:`compaction_audit.pyvalues.values`); :func:`capped` cuts every list of a
finding's values to :data:`VALUES_LIST_CAP` elements once its message is written, and
:func:`over_cap` finds, in Polars, the rows that need it.  The engine
(:func:`compaction_audit.engine.run_rules`) calls them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from compaction_audit.pyvalues import values as python_values

__all__ = ["CHUNK_ROWS", "CHUNK_VALUES", "VALUES_LIST_CAP", "capped", "chunks", "frame_rows",
           "over_cap"]


VALUES_LIST_CAP = 50
"""Most elements a list in a finding's values keeps (at any depth); the message is
written from the whole list first.  Keeps output proportional to what a person can act
on (issue 11, item 5: a 2.3 MB trace gave a 976 MB JSON report)."""


def capped(value: Any, cap: int = VALUES_LIST_CAP) -> Any:
    """``value`` with every list cut to ``cap`` elements, recursively.

    A list cut inside an object (``{"children": [...]}``) gets a sibling key
    ``children_more`` with the number of elements left out; the object's other keys are
    kept.  Shapes: dicts, lists and scalars as in a finding's values.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, list):
                out[key] = _capped_list(item, cap)
                if len(item) > cap:
                    out[f"{key}_more"] = len(item) - cap
            else:
                out[key] = capped(item, cap) if isinstance(item, dict) else item
        return out
    if isinstance(value, list):
        return _capped_list(value, cap)
    return value


def _capped_list(items: list[Any], cap: int) -> list[Any]:
    """The first ``cap`` of ``items``, each :func:`capped` (scalars as they are, without
    a call: a fold finding holds thousands of them)."""
    return [capped(item, cap) if isinstance(item, dict | list) else item
            for item in items[:cap]]


def _longest(expr: pl.Expr, dtype: Any) -> pl.Expr | None:
    """Per row, the longest list anywhere inside ``expr`` (of type ``dtype``); None
    when the type holds no list (``dtype``: a Polars data type)."""
    if isinstance(dtype, pl.List):
        inner = _longest(pl.element(), dtype.inner)
        own = expr.list.len()
        if inner is None:
            return own
        return pl.max_horizontal(own, expr.list.eval(inner).list.max())
    if isinstance(dtype, pl.Struct):
        parts = [part for f in dtype.fields
                 if (part := _longest(expr.struct.field(f.name), f.dtype)) is not None]
        return pl.max_horizontal(parts) if parts else None
    if dtype.is_nested():  # another nested type: assume the worst
        return pl.lit(1 << 62, pl.Int64)
    return None


def over_cap(frame: pl.DataFrame, cap: int) -> pl.Series:
    """Per row: does a list anywhere in it hold more than ``cap`` elements?  Computed
    in Polars, so that :func:`capped` (which copies) walks only the rows it changes."""
    parts = [part for name, dtype in frame.schema.items()
             if (part := _longest(pl.col(name), dtype)) is not None]
    if not parts:
        return pl.Series([False] * frame.height, dtype=pl.Boolean)
    return frame.select((pl.max_horizontal(parts).fill_null(0) > cap).alias("over"))["over"]


CHUNK_ROWS = 512
CHUNK_VALUES = 50_000
"""Most list elements (at any depth) :func:`frame_rows` converts at a time: a chunk ends
before :data:`CHUNK_ROWS` rows when its rows hold more (adv75 #1: 300 folds of 100
children with 50 dropped facts each were converted at once, 1.5 M dicts, before any
row was capped)."""


def _weight(expr: pl.Expr, dtype: Any) -> pl.Expr | None:
    """Per row, the number of list elements anywhere inside ``expr`` (of type
    ``dtype``); None when the type holds no list."""
    if isinstance(dtype, pl.List):
        inner = _weight(pl.element(), dtype.inner)
        own = expr.list.len().fill_null(0)
        if inner is None:
            return own
        return own + expr.list.eval(inner).list.sum().fill_null(0)
    if isinstance(dtype, pl.Struct):
        parts = [part for f in dtype.fields
                 if (part := _weight(expr.struct.field(f.name), f.dtype)) is not None]
        return pl.sum_horizontal(parts) if parts else None
    return None


def chunks(frame: pl.DataFrame) -> list[tuple[int, int]]:
    """(start, length) of the chunks :func:`frame_rows` converts: at most
    :data:`CHUNK_ROWS` rows and, past its first row, :data:`CHUNK_VALUES` list
    elements each."""
    parts = [part for name, dtype in frame.schema.items()
             if (part := _weight(pl.col(name), dtype)) is not None]
    if not parts:
        return [(start, CHUNK_ROWS) for start in range(0, frame.height, CHUNK_ROWS)]
    weights = frame.select(pl.sum_horizontal(parts).alias("w"))["w"].to_list()
    out: list[tuple[int, int]] = []
    start = total = 0
    for k, w in enumerate(weights):
        if k > start and (k - start >= CHUNK_ROWS or total + w > CHUNK_VALUES):
            out.append((start, k - start))
            start, total = k, 0
        total += w
    if start < frame.height:
        out.append((start, frame.height - start))
    return out


def frame_rows(frame: pl.DataFrame) -> Iterator[dict[str, Any]]:
    """``frame.iter_rows(named=True)``, converted a column and a chunk at a time.

    Strings inside list and struct columns (the summaries of an ungrounded-summary
    finding, one list per round; a fold finding's children and their dropped
    discriminators) are shared across the frame: an id listed at many rounds is one
    Python string, not one per round, which keeps the findings of a long session to
    pointers.
    """
    names = frame.columns
    shared: dict[str, str] = {}
    for start, length in chunks(frame):
        chunk = frame.slice(start, length)
        columns: list[list[Any]] = []
        for name in names:
            column = chunk[name]
            columns.append(python_values(column, shared))  # keys, strings shared (issue 14)
        for row in zip(*columns, strict=True):
            yield dict(zip(names, row, strict=True))
