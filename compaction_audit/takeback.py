"""What a product took out of the context without a compaction: a take-back.

A person's rewind or rollback (Claude Code's ``/rewind``, Codex's
``thread_rolled_back``, Gemini CLI's ``$rewindTo``) takes turns out of the context
with no summary; the adapters evict them in a round without a ``compaction`` record
(docs/adapters.md).  Nothing folds them, so no fold rule reads them as lost; the rules
that read a person's other words read them as never said: a grant taken back permits
nothing (CA307), and work taken back is no newer work a summary failed to reach
(CA306) (usertest69 #1, #2).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.model import Session


def product_trace(session: Session) -> bool:
    """Whether ``session`` is a product's log read by an adapter (or converted from
    one: its session record names a ``source_format``), not a native log that carries
    ``compaction`` records of its own (adv132 #4: such a log lost its provenance-floor
    error to the exemption for products' compactions)."""
    return session.header.extra.get("source_format") not in (None, "native")


TAKING_BACK = frozenset({"claude-code", "codex", "gemini-cli"})
"""The adapters whose traces evict with no compaction only where a person took turns
back (docs/adapters.md: Claude Code's rewinds, Codex's rollbacks, Gemini CLI's
``$rewindTo``).  Another log naming a ``source_format`` (a native loop's own name, an
extra key the format keeps) evicts under its budget (adv135 #3)."""


def taken_back(session: Session) -> pl.Series:
    """The ids (String) of a trace of :data:`TAKING_BACK` evicted in a round with no
    compaction and folded by no summary: what a person's rewind or rollback took out
    of the context.  Empty for any other log, whose evictions without a fold are the
    loop's own (under a token budget)."""
    empty = pl.Series("id", [], dtype=pl.String)
    if session.header.extra.get("source_format") not in TAKING_BACK:
        return empty
    compacted = [int(c["ri"]) for c in session.compactions if c.get("ri") is not None]
    return (session.membership
            .filter((pl.col("end") < session.n_rounds) & ~pl.col("end").is_in(compacted)
                    & ~pl.col("id").is_in(session.edges.get_column("child").implode()))
            .get_column("id").unique(maintain_order=True))
