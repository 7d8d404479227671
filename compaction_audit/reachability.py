"""Provenance closure and reachability as interval arithmetic in Polars.

Definitions (log-format spec, "Derived quantities"; seed 000, "Operational Effect"):

- ``leaves(x)``: a raw span's leaves are itself; a summary's are the union of its
  children's, through summaries of summaries.
- resolvable at round t: a raw span in the working set, or offloaded and not evicted
  since.  A span is resolvable on ``[created, gone)`` in round indices, where ``gone``
  is the round it was evicted (or silently dropped outside the store).
- reachable leaves at t: resolvable raw spans in ``leaves(x)`` for some working-set
  item ``x``.  A leaf is *covered* while any item whose leaves include it is in the
  working set; covered intervals are cut to the leaf's resolvable one and merged.

Nothing here loops over rounds: every step is a join, a sort, a gather or a cumulative
sum, so the work grows with membership changes and provenance size, not rounds times
working-set size.  Items are named by their row in ``session.items`` (UInt32) from the
closure on: integer joins, gathers and sorts instead of string ones (issue 14).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import polars as pl

from compaction_audit.errors import LogError
from compaction_audit.model import Session


def max_int(column: pl.Series) -> int:
    """The largest value of an integer column, 0 when it is empty or all null."""
    value = column.max()
    return int(value) if isinstance(value, int) else 0


MAX_CLOSURE_PAIRS = 2_000_000
"""Most (item, leaf) provenance pairs an audit builds (issue 11, item 5; documented in
``docs/performance.md``, "Limits").  The recall analysis checks each pair's leaf text
against the summary's text, so its work grows with the pairs, and the pairs can grow
with the square of the input: N compactions that each fold the previous summary and
new spans hold about N x spans pairs.  Past this bound (about 1,400 such Claude Code
compactions of two spans each; the 1 GB benchmark trace holds about 950,000 pairs) the
audit stops with a one-line error naming the summary that crossed it (exit 2)."""

MAX_LEVELS = 32
"""Most distinct summary depths whose closure is built a depth at a time in Polars (one
join per depth, so cost grows with depths times pairs); a deeper log (a chain of
compactions, each folding the previous summary) is walked summary by summary in
Python, where a summary with one child shares its child's leaf set."""

_ROW = pl.UInt32
_PAIR_SCHEMA = {"item": _ROW, "leaf": _ROW}


@dataclass
class Closure:
    """The provenance closure as rows of ``session.items``.

    ``pairs``: one row per distinct (``item``, ``leaf``) pair (UInt32 row indices); the
    first ``spans`` rows are the raw spans, each its own leaf, in item order, then the
    summaries' pairs sorted by item and leaf.  ``ids``: ``session.items["id"]``, to
    name rows.  :attr:`frame` is the same closure with ids (String columns ``item``,
    ``leaf``), built on first use.
    """

    pairs: pl.DataFrame
    spans: int
    ids: pl.Series
    _frame: pl.DataFrame | None = field(default=None, repr=False)

    @property
    def summary_pairs(self) -> pl.DataFrame:
        """The pairs whose item is a summary."""
        return self.pairs.slice(self.spans)

    @property
    def frame(self) -> pl.DataFrame:
        """Columns ``item`` and ``leaf`` (String): the closure named by ids."""
        if self._frame is None:
            self._frame = pl.DataFrame({"item": self.ids.gather(self.pairs["item"]),
                                        "leaf": self.ids.gather(self.pairs["leaf"])})
        return self._frame


def leaves(session: Session, limit: int = MAX_CLOSURE_PAIRS) -> pl.DataFrame:
    """The provenance closure: one row per (``item``, ``leaf``) pair, deduplicated.

    Shape: columns ``item`` and ``leaf`` (String); a raw span is its own leaf (one row
    each), then the summaries' pairs.  Raises :class:`LogError` at the line of the
    first summary (in order of depth, then of the log) whose leaves take the closure
    past ``limit`` pairs.  See :func:`closure`.
    """
    return closure(session, limit).frame


def closure(session: Session, limit: int = MAX_CLOSURE_PAIRS) -> Closure:
    """The provenance closure of ``session`` as a :class:`Closure`.

    Each summary's leaf set is the union of its children's.  Up to :data:`MAX_LEVELS`
    distinct depths the sets are built a depth at a time (children first: a child is
    always shallower than its parent), one join per depth; past that, or when a depth
    could take the closure past ``limit``, summary by summary (:func:`_walk`), which
    finds the summary that crosses the limit.  Raises :class:`LogError` there.
    """
    items = session.items
    ids = items["id"]
    is_span = items["kind"] == "span"
    span_rows = is_span.arg_true().cast(_ROW)
    spans = pl.DataFrame({"item": span_rows, "leaf": span_rows})
    built = _by_depth(session, span_rows.len(), limit)
    if built is None:
        built = _walk(session, span_rows.len(), limit)
    return Closure(pl.concat([spans, built]), span_rows.len(), ids)


def _edge_rows(session: Session) -> pl.DataFrame:
    """Edges as item rows: ``p``, ``c`` (UInt32), the parent's depth ``d``, the
    child's ``cd`` (0 for a span) and ``span`` (the child is a raw span).  Edges whose
    parent is not a summary of the items table, or whose child is not an item, are
    left out (as the walk skips them)."""
    idx = session.items.select("id", "kind", "depth").with_row_index("i")
    return (
        session.edges.select("parent", "child")
        .join(idx.filter(pl.col("kind") == "summary")
              .select(pl.col("id").alias("parent"), pl.col("i").alias("p"),
                      pl.col("depth").alias("d")), on="parent")
        .join(idx.select(pl.col("id").alias("child"), pl.col("i").alias("c"),
                         pl.col("depth").fill_null(0).alias("cd"),
                         (pl.col("kind") == "span").alias("span")), on="child")
        .select("p", "c", "d", "cd", "span")
    )


_HIGH = 1 << 32


def _pair_key(item: str, leaf: str) -> pl.Expr:
    """One UInt64 per (item, leaf) pair: sorting it sorts by item, then leaf."""
    return (pl.col(item).cast(pl.UInt64) * _HIGH + pl.col(leaf)).alias("key")


def _pairs_of(keys: pl.Series) -> pl.DataFrame:
    """(``item``, ``leaf``) UInt32 columns of sorted pair keys (:func:`_pair_key`)."""
    return pl.DataFrame({"item": (keys // _HIGH).cast(_ROW), "leaf": (keys % _HIGH).cast(_ROW)})


def _by_depth(session: Session, spans: int, limit: int) -> pl.DataFrame | None:
    """The summaries' pairs built one depth at a time, or None when the walk must do
    it: more than :data:`MAX_LEVELS` depths, a child not shallower than its parent, or
    a depth whose pairs could take the closure past ``limit`` (an upper bound: the sum
    of its children's set sizes, counted before any set is built).  Pairs are kept as
    one sorted UInt64 key each (a single-column sort is several times faster than a
    sort on two)."""
    edges = _edge_rows(session)
    depths = edges["d"].unique().sort().to_list()
    if (len(depths) > MAX_LEVELS or None in depths
            or edges.filter(~pl.col("span") & (pl.col("cd") >= pl.col("d"))).height):
        return None
    done: list[pl.DataFrame] = []
    keys: list[pl.Series] = []
    sizes: list[pl.DataFrame] = []
    total = spans
    for depth in depths:
        level = edges.filter(pl.col("d") == depth)
        direct = level.filter(pl.col("span")).select(_pair_key("p", "c"))
        via = level.filter(~pl.col("span")).select("p", "c")
        bound = direct.height
        if via.height:
            bound += int(via.join(pl.concat(sizes), left_on="c", right_on="item")["n"].sum())
        if total + bound > limit:
            return None
        if via.height:
            joined = via.join(pl.concat(done), left_on="c", right_on="item")
            direct = pl.concat([direct, joined.select(_pair_key("p", "leaf"))])
        got = direct["key"].sort()
        got = got.filter((got != got.shift(1)).fill_null(True))  # a leaf reached twice
        total += got.len()
        keys.append(got)
        pairs = _pairs_of(got)
        done.append(pairs)
        sizes.append(pairs.group_by("item").agg(pl.len().alias("n")))
    if not keys:
        return pl.DataFrame(schema=_PAIR_SCHEMA)
    return _pairs_of(pl.concat(keys).sort())


def _walk(session: Session, spans: int, limit: int) -> pl.DataFrame:
    """The summaries' pairs, summary by summary in order of depth then of the log; a
    summary with one child shares its child's set, so the work is proportional to the
    pairs written, never to depth times pairs.  Raises :class:`LogError` at the first
    summary that takes the closure past ``limit`` pairs."""
    items = session.items
    summaries = (items.with_row_index("i").filter(pl.col("kind") != "span")
                 .select("i", "id", "depth", "line").sort("depth", "i", maintain_order=True))
    edges = _edge_rows(session)
    children = dict(edges.group_by("p", maintain_order=True).agg("c").iter_rows())
    of: dict[int, frozenset[int]] = {}
    order: list[int] = []
    total = spans
    for i, item, depth, line in summaries.iter_rows():
        kids = children.get(i, ())
        if len(kids) == 1 and kids[0] in of:
            found = of[kids[0]]
        else:
            found = frozenset().union(*(of.get(k, (k,)) for k in kids))
        total += len(found)
        if total > limit:
            raise LogError(session.path, line or 0,
                           f"provenance too large: summary {item!r} (depth {depth}) takes "
                           f"the closure past {limit:,} (item, leaf) pairs; see "
                           "docs/performance.md (limits)", "summaries")
        of[i] = found
        order.append(i)
    sets = [of[i] for i in order]
    item_rows = (pl.DataFrame({"i": order, "n": [len(x) for x in sets]},
                              schema={"i": _ROW, "n": pl.UInt32})
                 .select(pl.col("i").repeat_by("n").explode().drop_nulls())["i"])
    leaf_rows = pl.Series("l", list(chain.from_iterable(sets)), dtype=_ROW)
    return _pairs_of(pl.DataFrame({"item": item_rows, "leaf": leaf_rows})
                     .select(_pair_key("item", "leaf"))["key"].sort())


def resolvable_end(session: Session) -> pl.Expr:
    """Expression for the end (exclusive round index) of an item's resolvable span."""
    return pl.col("gone_ri").fill_null(session.n_rounds)


def reachable_intervals(session: Session, links: Closure, members: pl.DataFrame
                        ) -> pl.DataFrame:
    """Half-open round-index intervals ``[start, end)`` during which each leaf is reachable.

    ``members``: the working-set membership with each item's row ``i`` (UInt32),
    ``kind``, ``start`` and ``end``.  Each (member, leaf) interval is cut to the leaf's resolvable
    span, then the intervals of a leaf are merged.  The merge is one sort and one
    cumulative max over the whole table, not a window per leaf: the leaf's row times
    (rounds + 1) is added to every bound, so the leaves' intervals never overlap.
    Shape: columns ``leaf`` (UInt32 item row), ``start``, ``end`` (Int64); intervals
    of one leaf are disjoint and not adjacent.
    """
    n = session.n_rounds
    is_span = pl.col("kind") == "span"
    covered = pl.concat([  # a raw span is its own only leaf: no join for those rows
        members.filter(is_span).select(pl.col("i").alias("leaf"), "start", "end"),
        members.filter(~is_span).select("i", "start", "end")
        .join(links.summary_pairs, left_on="i", right_on="item").select("leaf", "start", "end"),
    ])
    leaf = covered["leaf"]
    born = session.items["ri"].gather(leaf)
    gone = session.items["gone_ri"].fill_null(n).gather(leaf)
    lead = pl.col("leaf").cast(pl.Int64) * (n + 1)
    cut = (
        covered.with_columns(pl.max_horizontal(pl.col("start"), born).alias("start"),
                             pl.min_horizontal(pl.col("end"), gone).alias("end"))
        .filter(pl.col("start") < pl.col("end"))
        .with_columns((lead + pl.col("start")).alias("key"), (lead + pl.col("end")).alias("to"))
        .sort("key")
        .with_columns(pl.col("to").cum_max().alias("to"))
    )
    new = (pl.col("key") > pl.col("to").shift(1)).fill_null(True)
    flags = cut.select(new.alias("new"), new.shift(-1).fill_null(True).alias("last"))
    starts = cut.filter(flags["new"]).select("leaf", "start")
    ends = cut.filter(flags["last"]).select((pl.col("to") - lead).alias("end"))
    return starts.hstack(ends)


def ungrounded_intervals(session: Session, links: Closure, members: pl.DataFrame
                         ) -> pl.DataFrame:
    """Intervals during which a working-set summary has no reachable leaf.

    A summary's leaves all exist when it is created, and a leaf that stops being
    resolvable never comes back, so a summary is grounded until the last of its leaves
    goes.  ``members`` as for :func:`reachable_intervals`, with ``id``.
    Shape: columns ``id``, ``start``, ``end`` (round indices, half-open).
    """
    pairs = links.summary_pairs
    gone = session.items["gone_ri"].fill_null(session.n_rounds).gather(pairs["leaf"])
    last_leaf = (pairs.select("item").with_columns(gone.alias("gone"))
                 .group_by("item").agg(pl.col("gone").max().alias("grounded_until")))
    return (
        members.filter(pl.col("kind") == "summary")
        .join(last_leaf, left_on="i", right_on="item", how="left")
        .select(
            "id",
            pl.max_horizontal("start", pl.col("grounded_until").fill_null(0)).alias("start"),
            "end",
        )
        .filter(pl.col("start") < pl.col("end"))
    )


def interval_sums(intervals: pl.DataFrame, n_rounds: int,
                  values: dict[str, pl.Expr]) -> pl.DataFrame:
    """Several :func:`interval_sum` at once: columns ``ri`` (0 .. n_rounds-1) and one
    per entry of ``values`` (name -> value expression), from one pass over the
    intervals.  Each interval ``[start, end)`` adds its value at ``start`` and takes it
    away at ``end``; the per-round changes are summed, scattered over the rounds and
    summed cumulatively."""
    names = list(values)
    up = intervals.select(pl.col("start").cast(pl.Int64).alias("ri"),
                          *(v.alias(k) for k, v in values.items()))
    down = intervals.select(pl.col("end").cast(pl.Int64).alias("ri"),
                            *((-v).alias(k) for k, v in values.items()))
    deltas = (pl.concat([up, down]).group_by("ri").agg(pl.col(names).sum())
              .filter((pl.col("ri") >= 0) & (pl.col("ri") < n_rounds)))
    at = deltas["ri"]
    columns = [pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")]
    for name in names:
        column = deltas[name]
        columns.append(pl.zeros(n_rounds, column.dtype, eager=True)
                       .scatter(at, column).cum_sum().alias(name))
    return pl.DataFrame(columns)


def interval_sum(intervals: pl.DataFrame, n_rounds: int, value: pl.Expr | None = None,
                 by: str | None = None) -> pl.DataFrame:
    """Sum ``value`` (default 1) over the intervals covering each round index.

    Each interval ``[start, end)`` contributes +value at ``start`` and -value at
    ``end``; a cumulative sum over round indices gives the total.  Returns columns
    ``ri`` (0 .. n_rounds-1), optionally ``by``, and ``value`` (Int64 or Float64).
    """
    val = value if value is not None else pl.lit(1, pl.Int64)
    if by is None:
        return interval_sums(intervals, n_rounds, {"value": val})
    val = val.alias("value")
    up = intervals.select(by, pl.col("start").cast(pl.Int64).alias("ri"), val)
    down = intervals.select(by, pl.col("end").cast(pl.Int64).alias("ri"), -val)
    deltas = pl.concat([up, down]).group_by(by, "ri").agg(pl.col("value").sum())
    grid = pl.DataFrame({"ri": pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64)})
    grid = grid.join(deltas.select(by).unique(), how="cross")
    return (
        grid.join(deltas, on=[by, "ri"], how="left")
        .with_columns(pl.col("value").fill_null(0))
        .sort(by, "ri")
        .with_columns(pl.col("value").cum_sum().over(by))
    )
def interval_max(intervals: pl.DataFrame, n_rounds: int, value: str) -> pl.DataFrame:
    """The largest ``value`` among the intervals ``[start, end)`` covering each round.

    Linear in the intervals and rounds up to a log factor, whatever the number of
    distinct values (a sum grouped by value would take rounds times values: a chain of
    N folds has N depths).  Each interval is split into the O(log n) aligned blocks of
    a segment tree over the round indices (the bottom-up walk: a block ``l`` or
    ``r - 1`` is taken when ``l`` or ``r`` is odd, then both halve), every block keeps
    the largest value put on it, and a round's answer is the largest over the blocks
    that contain it (its leaf and that leaf's ancestors).  Returns columns ``ri`` and
    ``value`` for the rounds that some interval covers.
    """
    size = 1 << max(n_rounds - 1, 1).bit_length()
    level = intervals.select((pl.col("start") + size).cast(pl.Int64).alias("l"),
                             (pl.col("end") + size).cast(pl.Int64).alias("r"),
                             pl.col(value).alias("value"))
    blocks = []
    while True:
        level = level.filter(pl.col("l") < pl.col("r"))
        if level.height == 0:
            break
        blocks.append(level.filter(pl.col("l") % 2 == 1).select(
            pl.col("l").alias("node"), "value"))
        blocks.append(level.filter(pl.col("r") % 2 == 1).select(
            (pl.col("r") - 1).alias("node"), "value"))
        level = level.select(((pl.col("l") + 1) // 2).alias("l"), (pl.col("r") // 2).alias("r"),
                             "value")
    if not blocks:
        return pl.DataFrame(schema={"ri": pl.Int64, "value": intervals.schema[value]})
    best = pl.concat(blocks).group_by("node").agg(pl.col("value").max())
    rounds = pl.int_range(0, n_rounds, eager=True, dtype=pl.Int64).alias("ri")
    paths = pl.concat([pl.DataFrame({"ri": rounds, "node": (rounds + size) // (1 << k)})
                       for k in range(size.bit_length())])
    return (paths.join(best, on="node").group_by("ri").agg(pl.col("value").max())
            .sort("ri"))
