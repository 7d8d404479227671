"""Per-item cosines to the task query and the per-round ``query_cosine_rebuilt``.

``query_cosine_rebuilt`` at round t is the mean cosine to the task query of the
working-set items at t that carry a text (items without text are left out; null when
none has one, or the session has no task query).  The cosine of an item is fixed (its
text does not change), so the mean is an interval sum over working-set membership: no
per-round loop, and each distinct text is embedded once (issue 16, point 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from compaction_audit.cosine import embed
from compaction_audit.cosine.embed import cosine_column, method
from compaction_audit.cosine.query import TaskQuery, task_query
from compaction_audit.model import Session
from compaction_audit.reachability import interval_sum

ITEM_COSINE_SCHEMA = {"id": pl.String, "cosine": pl.Float64}
SERIES_SCHEMA = {"ri": pl.Int64, "query_cosine_rebuilt": pl.Float64}


@dataclass
class Rebuilt:
    """What the rebuild produced.

    ``items``: (``id``, ``cosine``) for every item with a text and a cosine.
    ``series``: (``ri``, ``query_cosine_rebuilt``), one row per round index.
    ``method``: the embedding used (``embed.MODEL_NAME`` or ``embed.LEXICAL_NAME``),
    None when nothing was rebuilt; ``reason`` then says why.  ``texts``: distinct texts
    embedded.
    """

    query: TaskQuery
    items: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ITEM_COSINE_SCHEMA))
    series: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SERIES_SCHEMA))
    method: str | None = None
    reason: str | None = None
    texts: int = 0

    @property
    def available(self) -> bool:
        """True when the per-round series has at least one known value."""
        return self.series["query_cosine_rebuilt"].is_not_null().any()

    def as_dict(self) -> dict[str, object]:
        """JSON-able description for reports (no per-item values)."""
        return {"method": self.method, "query": self.query.origin,
                "query_detail": self.query.describe(), "items": self.items.height,
                "distinct_texts": self.texts, "reason": self.reason}


def rebuild(session: Session) -> Rebuilt:
    """Rebuild the cosine series of ``session``.  Raises
    :class:`~compaction_audit.cosine.embed.ModelUnavailable` only when the model was
    required by the environment and is not installed."""
    n = session.n_rounds
    query = task_query(session)
    empty = pl.DataFrame({"ri": pl.int_range(0, n, eager=True, dtype=pl.Int64)}).with_columns(
        pl.lit(None, pl.Float64).alias("query_cosine_rebuilt"))
    texted = _texted(session)
    if query.text is None:
        return Rebuilt(query, series=empty, reason="no task query")
    if texted.height == 0:
        return Rebuilt(query, series=empty, reason="no span or summary carries a text")
    # Polars work first: it runs while a model still loading in the background finishes
    distinct = _distinct(texted)
    how = method()
    table = pl.DataFrame({"text": distinct,
                          "cosine": cosine_column(distinct, query.text, how)})
    items = (texted.select("id", "text").join(table, on="text", how="left")
             .filter(pl.col("cosine").is_not_null()).select("id", "cosine"))
    members = session.membership.join(items, on="id")
    total = _cosine_sums(members, n)
    count = interval_sum(members, n).rename({"value": "count"})
    series = (
        total.join(count, on="ri").sort("ri")
        .select("ri", pl.when(pl.col("count") > 0).then(pl.col("sum") / pl.col("count"))
                .otherwise(None).alias("query_cosine_rebuilt"))
    )
    return Rebuilt(query, items, series, how, None, len(distinct))


def _texted(session: Session) -> pl.DataFrame:
    return session.items.filter(
        pl.col("text").is_not_null() & (pl.col("text").str.strip_chars() != ""))


def _distinct(texted: pl.DataFrame) -> pl.Series:
    return texted.select("text").unique(maintain_order=True)["text"]


def prefetch(session: Session) -> bool:
    """Hand the session's distinct texts and task query to the embedding helper process
    as soon as the session is read, when the command started one
    (:func:`~compaction_audit.cosine.embed.prefetch`): it embeds them while this process
    goes on, and :func:`rebuild` collects the answer.  Only *where and when* the
    cosines are computed depends on it, never their values.  Returns True when sent."""
    if not embed.helper_waiting():
        return False
    query = task_query(session)
    if query.text is None:
        return False
    texted = _texted(session)
    return texted.height > 0 and embed.prefetch(_distinct(texted).to_list(), query.text)


def _cosine_sums(members: pl.DataFrame, n: int) -> pl.DataFrame:
    """Columns ``ri`` (0 .. n-1) and ``sum``: the sum of the cosines of the membership
    intervals ``[start, end)`` covering each round, added in one order fixed by the
    values alone, so the same trace gives the same floats in every run and process.

    Each interval adds its cosine at ``start`` and takes it away at ``end``; the
    changes, sorted by round and value, are summed in one sequential ``cum_sum``, and a
    round takes the running sum after its last change.  (Not ``interval_sum``: its
    ``group_by(...).sum()`` runs on Polars' threads, whose split of a group's rows, and
    so a float sum's last bits, changed from run to run on a busy machine; issue 11,
    class 8, fresh pass F9.  The membership rows' own order varies with Python's hash
    seed, hence the sort.)"""
    deltas = (
        pl.concat([members.select(pl.col("start").cast(pl.Int64).alias("ri"), "cosine"),
                   members.select(pl.col("end").cast(pl.Int64).alias("ri"),
                                  -pl.col("cosine"))])
        .filter((pl.col("ri") >= 0) & (pl.col("ri") < n))
        .sort("ri", "cosine", maintain_order=True)
        .with_columns(pl.col("cosine").cum_sum().alias("sum"))
        .group_by("ri", maintain_order=True).agg(pl.col("sum").last())
    )
    rounds = pl.DataFrame({"ri": pl.int_range(0, n, eager=True, dtype=pl.Int64)})
    return (rounds.join(deltas, on="ri", how="left").sort("ri")
            .with_columns(pl.col("sum").forward_fill().fill_null(0.0)))
