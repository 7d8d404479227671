"""Lazy plans collected together (issue 14, fleet audits: the fixed cost per trace).

Every eager Polars operation is a query of its own, planned and run: about 0.1 to
0.2 ms of CPU even on a frame of two rows (Polars 2.1, measured on the 2-core machine
of docs/performance.md), and a small trace runs a few hundred of them.  A chain of
operations written as one lazy plan is planned and run once; independent plans given
to :func:`collect` together are run by one ``pl.collect_all``.

The engine is ``in-memory``, the one Polars runs eager operations on: the same kernels
as the eager code these plans replace, so the same rows in the same order.  (Polars'
default for a lazy ``collect`` is ``auto``, about twice the fixed cost on small
frames.)
"""

from __future__ import annotations

from typing import Final, Literal

import polars as pl

ENGINE: Final[Literal["in-memory"]] = "in-memory"
"""The engine every plan here is collected on (module docstring)."""


def collect(*plans: pl.LazyFrame) -> list[pl.DataFrame]:
    """The frames of ``plans``, in order: one ``collect`` for one plan, one
    ``pl.collect_all`` for several (the subplans they share are run once)."""
    if len(plans) == 1:
        return [plans[0].collect(engine=ENGINE)]
    return pl.collect_all(plans, engine=ENGINE)


def one(plan: pl.LazyFrame) -> pl.DataFrame:
    """The frame of one lazy ``plan`` (see :func:`collect`)."""
    return plan.collect(engine=ENGINE)
