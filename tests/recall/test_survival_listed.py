"""An order a summary keeps as a numbered list, an inline "(1) ... (2) ..." list or an
arrow chain of values (adv126 #5): kept only with every identifier-like word of the
child's order on its own side of one cut of the chain."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import Kind, extract
from compaction_audit.recall.survival.check import survives
from compaction_audit.recall.survival.listed import MAX_CHAINS, MAX_STEPS, listed_orders
from compaction_audit.recall.survival.order import FIRST, LISTED, SECOND

MIGRATION = "Apply migration 0047 before deploying v4.2.1 of the billing service."
ROLLOUT = "Roll out 5% of traffic first, then 25%, then 100%."


def _order(child: str) -> object:
    (found,) = [d for d in extract(child) if d.kind is Kind.ORDERING]
    return found


@pytest.mark.parametrize(("summary", "kept"), [
    ("Problem Solving:\n   1. Snapshot backup of billing-db-prod\n   2. Apply migration "
     "0047\n   3. Deploy billing 4.2.1\n", True),
    ("Steps:\n1) Apply migration 0047\n2) Deploy billing 4.2.1\n", True),
    ("Plan: (1) apply migration 0047, (2) deploy billing 4.2.1.", True),
    ("Plan: apply migration 0047 -> deploy billing 4.2.1", True),
    # the other way round
    ("Steps:\n1) Deploy billing 4.2.1\n2) Apply migration 0047\n", False),
    ("Plan: deploy billing 4.2.1 -> apply migration 0047", False),
    # no chain: numbers not consecutive, other indentation, bullets, code
    ("Steps:\n1. Apply migration 0047\n3. Deploy billing 4.2.1\n", False),
    ("1. Apply migration 0047\n   2. Deploy billing 4.2.1\n", False),
    ("- Apply migration 0047\n- Deploy billing 4.2.1\n", False),
    ("Notes: `f(x) -> 0047` and deploy 4.2.1", False),
])
def test_an_order_kept_as_a_list(summary: str, kept: bool) -> None:
    assert survives(_order(MIGRATION), summary) is kept


@pytest.mark.parametrize(("summary", "kept"), [
    ("Rollout: 5% -> 25% -> 100%, 30 minutes between steps.", True),
    ("Rollout:\n1. 5%\n2. 25%\n3. 100%\n", True),
    ("Rollout: 25% -> 5% -> 100%.", False),  # one step moved: no cut has all three
    ("Rollout: 25% -> 100% -> 5%.", False),
    # the child's order has two sides, 5% then the rest: the rest's order is not read
    ("Rollout: 5% -> 100% -> 25%.", True),
    ("Rollout: 5% -> 25%.", False),  # 100% is in no step
])
def test_a_chain_of_values(summary: str, kept: bool) -> None:
    assert survives(_order(ROLLOUT), summary) is kept


def test_a_list_keeps_no_order_of_plain_words() -> None:
    """Two plain words in two items say too little: such an order is matched by
    shared stems in a sentence's clauses only, never by a list."""
    child = _order("Restart the database before the nightly backup.")
    assert survives(child, "Tasks:\n1. Restart the database\n2. Nightly backup\n") is False


def test_listed_orders_cuts_each_chain_at_each_step() -> None:
    sets = listed_orders("1. alpha_one\n2. beta_two\n3. gamma_three\n")
    assert len(sets) == 2
    first, second = sets
    assert LISTED in first and FIRST + "alpha_one" in first
    assert SECOND + "beta_two" in first and SECOND + "gamma_three" in first
    assert FIRST + "beta_two" in second and SECOND + "gamma_three" in second
    assert listed_orders("No list here, no arrow.") == ()


def test_a_long_list_is_read_to_its_cap() -> None:
    text = "".join(f"{n}. step_{n}\n" for n in range(1, 40))
    sets = listed_orders(text)
    assert len(sets) == MAX_STEPS - 1
    assert all(f"step_{MAX_STEPS + 1}" not in s for s in sets)


def test_a_summary_of_many_lists_is_read_to_its_cap() -> None:
    text = "\n\n".join(f"1. first_{n}\n2. second_{n}" for n in range(MAX_CHAINS + 50))
    sets = listed_orders(text)
    assert len(sets) == MAX_CHAINS
    assert any(FIRST + f"first_{MAX_CHAINS - 1}" in s for s in sets)
    assert not any(f"first_{MAX_CHAINS}" in s for s in sets)
