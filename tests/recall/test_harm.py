"""Reuse of a lost value by a later action (issue 10, point 4), on small tables."""

from __future__ import annotations

import polars as pl
import pytest

from compaction_audit.recall import harm
from compaction_audit.recall.harm import reuse

ROUNDS = pl.DataFrame({"ri": [0, 1, 2], "round": [10, 11, 12]})


def items(*rows: tuple[str, int, str | None, str]) -> pl.DataFrame:
    return pl.DataFrame([{"id": i, "kind": "span", "ri": ri, "source": src, "text": text}
                         for i, ri, src, text in rows],
                        schema={"id": pl.String, "kind": pl.String, "ri": pl.Int64,
                                "source": pl.String, "text": pl.String})


def test_the_first_destructive_action_wins_then_the_earliest_call() -> None:
    its = items(("a", 0, "assistant", "ORD-1 verified"),
                ("c", 1, "tool_call:Bash", "order show ORD-1"),
                ("d", 2, None, "order delete ORD-1 --cascade"),
                ("e", 2, "tool_call:Bash", "order show ORD-2"))
    occ = pl.DataFrame({"key": ["identifier:ord-1"] * 3 + ["identifier:ord-2"],
                        "id": ["a", "c", "d", "e"]})
    lost = pl.DataFrame({"key": ["identifier:ord-1", "identifier:ord-2"], "start": [1, 1],
                         "span": ["a", "x"]})
    got = reuse(lost, occ, its, ROUNDS).sort("key").rows()
    assert got == [("identifier:ord-1", 12, "d", True), ("identifier:ord-2", 12, "e", False)]


def test_before_the_loss_or_not_an_action_is_no_reuse() -> None:
    its = items(("a", 0, "assistant", "ORD-1 verified"),
                ("b", 0, "tool_call:Bash", "order delete ORD-1"),  # before the loss
                ("p", 2, "assistant", "ORD-1 looks fine"))  # prose, no command
    occ = pl.DataFrame({"key": ["identifier:ord-1"] * 3, "id": ["a", "b", "p"]})
    lost = pl.DataFrame({"key": ["identifier:ord-1"], "start": [1], "span": ["a"]})
    assert reuse(lost, occ, its, ROUNDS).height == 0
    # the loss round itself counts: spans of that round come after the fold
    lost0 = lost.with_columns(pl.lit(0, pl.Int64).alias("start"))
    assert reuse(lost0, occ, its, ROUNDS).rows() == [("identifier:ord-1", 10, "b", True)]


def test_asked_again_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    lost = pl.DataFrame({"key": ["identifier:ord-1"], "kind": ["identifier"],
                         "text": ["ORD-1"], "start": [0]})
    users = pl.DataFrame({"id": ["u"], "ri": [1], "round": [11], "text": ["is ORD-1 ok?"]})
    assert harm.asked_again(lost, users).rows() == [("identifier:ord-1", 0, "u", 1, 11)]
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 0)
    assert harm.asked_again(lost, users).height == 0
