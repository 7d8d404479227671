"""Lazy plans collected together (issue 14, fleet audits: the fixed cost per trace).

Every eager Polars operation is a query of its own, planned and run: about 0.1 to
0.2 ms of CPU even on a frame of two rows (Polars 2.1, measured on the 2-core machine
of docs/performance.md), and a small trace runs a few hundred of them.  A chain of
operations written as one lazy plan is planned and run once; independent plans given
to :func:`collect` together are run by one ``pl.collect_all``.

The plans run as written, as eager code runs: on the ``in-memory`` engine (the one
Polars runs eager operations on; the default of a lazy ``collect``, ``auto``, costs
about twice as much on small frames) and without the optimizations eager code does
not get either (no filter moved below a join, no join reordered), so a plan gives the
rows, in the order, of the eager operations it replaces.  Subplans shared by the
plans of one :func:`collect` are run once.
"""

from __future__ import annotations

from typing import Final, Literal

import polars as pl

ENGINE: Final[Literal["in-memory"]] = "in-memory"
"""The engine every plan here is collected on (module docstring)."""


def _as_eager() -> pl.QueryOptFlags:
    """The optimizations eager operations get (expressions simplified), and shared
    subplans run once."""
    flags = pl.QueryOptFlags.none()
    flags.simplify_expression = True
    flags.comm_subplan_elim = True
    return flags


def collect(*plans: pl.LazyFrame) -> list[pl.DataFrame]:
    """The frames of ``plans``, in order: one ``collect`` for one plan, one
    ``pl.collect_all`` for several."""
    if len(plans) == 1:
        return [one(plans[0])]
    return pl.collect_all(plans, engine=ENGINE, optimizations=_as_eager())


def one(plan: pl.LazyFrame) -> pl.DataFrame:
    """The frame of one lazy ``plan`` (see :func:`collect`)."""
    return plan.collect(engine=ENGINE, optimizations=_as_eager())
