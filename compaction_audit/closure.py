"""The provenance closure: every (item, leaf) pair, as rows of ``session.items``.

``leaves(x)`` (log-format spec, "Derived quantities"): a raw span's leaves are itself;
a summary's are the union of its children's, through summaries of summaries.  The
closure is what reachability, grounding and the recall analysis read
(:mod:`compaction_audit.reachability`, :mod:`compaction_audit.recall.analysis`); items
are named by their row (UInt32) so that its joins and sorts are on integers (issue 14).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import polars as pl

from compaction_audit.errors import LogError
from compaction_audit.model import Session
from compaction_audit.plans import one
from compaction_audit.runtime import addrspace

MAX_CLOSURE_PAIRS = 2_000_000
"""Most (item, leaf) provenance pairs an audit builds (issue 11, item 5; documented in
``docs/performance.md``, "Limits").  The recall analysis checks each pair's leaf text
against the summary's text, so its work grows with the pairs, and the pairs can grow
with the square of the input: N compactions that each fold the previous summary and
new spans hold about N x spans pairs.  Past this bound (about 1,400 such Claude Code
compactions of two spans each; the 1 GB benchmark trace holds about 950,000 pairs) the
audit stops with a one-line error naming the summary that crossed it (exit 2)."""

MAX_CLOSURE_ID_BYTES = 256 * 2**20
"""Most bytes of ids the closure's pairs name (the item's id plus the leaf's, summed
over the pairs; issue 11, class 5).  The recall analysis and the rehydration advice
join the pairs by id, so their memory grows with pairs x id length as well as with
the pairs: 1,000,000 pairs under 1,000-character summary ids (a 3.2 MB trace, half
the pair limit) asked Polars for a 1 GB buffer and aborted (eighth adversarial pass,
F8).  256 MiB is 2,000,000 pairs of 64-byte ids each side; past it the audit stops
with a one-line error naming the summary that crossed it (exit 2)."""

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
    _check_id_bytes(session, built, MAX_CLOSURE_ID_BYTES)
    addrspace.check_closure(session.path, built.height)  # before the work it grows
    return Closure(pl.concat([spans, built]), span_rows.len(), ids)


def _short(item: str, keep: int = 80) -> str:
    """``item`` quoted, cut to ``keep`` characters with its length when longer: an
    error about long ids must still say what it is about within one line."""
    return repr(item) if len(item) <= keep else f"{item[:keep]!r}... ({len(item):,} chars)"


def _check_id_bytes(session: Session, pairs: pl.DataFrame,
                    limit: int = MAX_CLOSURE_ID_BYTES) -> None:
    """Raise :class:`LogError` at the line of the first summary (in item order) whose
    pairs take the bytes of ids they name past ``limit``
    (:data:`MAX_CLOSURE_ID_BYTES`).  ``pairs``: the summaries' (``item``, ``leaf``)
    rows, sorted by item; integer work only, no id is copied."""
    if pairs.height == 0:
        return
    size = session.items["id"].str.len_bytes().cast(pl.Int64)
    bytes_ = size.gather(pairs["item"]) + size.gather(pairs["leaf"])
    if int(bytes_.sum()) <= limit:
        return
    first = int((bytes_.cum_sum() > limit).arg_true()[0])
    row = session.items.row(int(pairs["item"][first]), named=True)
    raise LogError(session.path, row["line"] or 0,
                   f"provenance too large: summary {_short(row['id'])} (depth {row['depth']}) "
                   f"takes the ids its closure names past {limit:,} bytes (item id plus "
                   "leaf id over every (item, leaf) pair); see docs/performance.md "
                   "(limits)", "summaries")


def _edge_rows(session: Session) -> pl.DataFrame:
    """Edges as item rows: ``p``, ``c`` (UInt32), the parent's depth ``d``, the
    child's ``cd`` (0 for a span) and ``span`` (the child is a raw span).  Edges whose
    parent is not a summary of the items table, or whose child is not an item, are
    left out (as the walk skips them)."""
    idx = session.items.lazy().select("id", "kind", "depth").with_row_index("i")
    return one(  # one plan (issue 14, fleet audits)
        session.edges.lazy().select("parent", "child")
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
                           f"provenance too large: summary {_short(item)} (depth {depth}) takes "
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
