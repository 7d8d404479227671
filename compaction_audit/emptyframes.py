"""Results of frame functions on empty input, computed once per process (issue 14,
fleet audits: every trace paid about 0.1 s of CPU whatever its size).

A pure Polars pipeline run over a frame with no rows gives a frame with no rows whose
schema depends only on the input's schema and the other arguments.  Planning and
running that pipeline still costs milliseconds (regexes, long ``when`` chains), and a
small trace reaches many such pipelines with nothing in them.  :func:`when_empty`
keeps the result per (schema, arguments) and hands out a copy.  Polars only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import polars as pl

__all__ = ["kept_for_schemas", "when_empty"]

F = TypeVar("F", bound=Callable[..., pl.DataFrame])

_MAX_ENTRIES = 64
"""Most results kept per function; past it the oldest goes (schemas of one build of
the auditor are few: this bounds memory, it is not expected to be reached)."""


def when_empty(fn: F) -> F:
    """Decorate ``fn(frame, *args, **kwargs) -> DataFrame``, pure in its arguments:
    when ``frame`` has no rows, return a clone of the result kept for the same
    ``frame`` schema and (hashable) other arguments, computing it on the first call.
    Frames with rows, and unhashable arguments, always call ``fn``."""
    kept: dict[Any, pl.DataFrame] = {}

    @functools.wraps(fn)
    def wrapper(frame: pl.DataFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        if frame.height:
            return fn(frame, *args, **kwargs)
        key = (tuple(frame.schema.items()), args, tuple(sorted(kwargs.items())))
        try:
            hit = kept.get(key)
        except TypeError:  # an unhashable argument
            return fn(frame, *args, **kwargs)
        if hit is None:
            hit = fn(frame, *args, **kwargs)
            if len(kept) >= _MAX_ENTRIES:
                del kept[next(iter(kept))]
            kept[key] = hit
        return hit.clone()

    return wrapper  # type: ignore[return-value]


_KEPT: dict[Any, pl.DataFrame] = {}


def kept_for_schemas(name: str, frames: tuple[pl.DataFrame, ...],
                     compute: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """A clone of ``compute()`` kept under ``name`` and the schemas of ``frames``: for
    a caller that knows its result has no rows and depends only on those schemas (an
    input with no rows that every output row needs, and no other state read).  At most
    :data:`_MAX_ENTRIES` results per process, the oldest dropped first."""
    key = (name, *(tuple(f.schema.items()) for f in frames))
    hit = _KEPT.get(key)
    if hit is None:
        hit = compute()
        if len(_KEPT) >= _MAX_ENTRIES:
            del _KEPT[next(iter(_KEPT))]
        _KEPT[key] = hit
    return hit.clone()
