"""Work linear (or n log n) in the input where an adapter kept things sorted (issue
11, class 5, adv9 pass: F4 and the minor notes).

Each test checks values computed by hand and a deterministic count of work at n and
2n (linear work doubles, quadratic work quadruples); never a duration.  Work done in C
(``sorted``, list inserts and deletes) is not a Python line event, so it is counted
where it happens: the elements a sort is given, the elements a list insert or delete
moves.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.io import event_ranges, opencode, openhands
from compaction_audit.io.tokens import RoundAssembler
from tests.foreign import run_adapter, without_lines, write_json
from tests.test_adapters_opencode import build_store
from tests.workcount import lines_run


class MovesList(list[Any]):
    """A list that counts the elements its inserts, deletes and sorts move (a sort
    of k elements counts k x bit_length(k)): the C work a line count does not see."""

    moved = 0

    def insert(self, index: Any, value: Any) -> None:
        MovesList.moved += max(len(self) - index, 0)
        super().insert(index, value)

    def __delitem__(self, index: Any) -> None:
        if isinstance(index, slice):
            _, stop, _ = index.indices(len(self))
            MovesList.moved += len(self) - stop
        else:
            MovesList.moved += len(self) - (index % len(self)) - 1
        super().__delitem__(index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            MovesList.moved += len(self)
        super().__setitem__(index, value)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        MovesList.moved += len(self) * max(len(self).bit_length(), 1)
        super().sort(*args, **kwargs)


# -- opencode: pending prune times -----------------------------------------------

def _tool_message(i: int, created: float, pruned: float | None) -> dict[str, Any]:
    state: dict[str, Any] = {"status": "completed", "output": f"out {i}",
                             "input": {"cmd": f"run {i}"}}
    if pruned is not None:
        state["time"] = {"compacted": pruned}
    return {"info": {"id": f"m{i}", "role": "assistant", "time": {"created": created}},
            "parts": [{"id": f"p{i}", "type": "tool", "tool": "bash", "callID": f"c{i}",
                       "state": state}]}


def _export(messages: list[dict[str, Any]]) -> dict[str, Any]:
    user = {"info": {"id": "u", "role": "user", "time": {"created": 1000}},
            "parts": [{"id": "pu", "type": "text", "text": "Keep the port at 8080."}]}
    return {"info": {"id": "ses", "version": "1.1.0", "time": {"created": 1, "updated": 2}},
            "messages": [user, *messages]}


def _evictions(out: list[tuple[int, dict[str, Any]]]) -> list[list[str]]:
    return [r["evicted"] for _, r in out[1:] if "evicted" in r]


def test_opencode_prunes_in_time_order_when_each_message_reaches_them(
        tmp_path: Path) -> None:
    # m0..m4 created at 2000..2004; prunes: m0 at 2003.5, m1 and m2 at 2001.5 (m2's
    # after the first 2001.5 was reached), m3 none, m4 at 2000 (before every later
    # message: only the end of the session reaches it)
    doc = _export([_tool_message(0, 2000, 2003.5), _tool_message(1, 2001, 2001.5),
                   _tool_message(2, 2002, 2001.5), _tool_message(3, 2003, None),
                   _tool_message(4, 2004, 2000)])
    out = run_adapter(opencode.records, write_json(tmp_path / "e.json", doc))
    # m2 reaches 2001.5 (m1's result), m3 reaches m2's 2001.5, m4 reaches 2003.5
    assert _evictions(out) == [["c1:result"], ["c2:result"], ["c0:result"], ["c4:result"]]
    kinds = [r["compaction"]["kind"] for _, r in out[1:] if "compaction" in r]
    assert kinds == ["microcompact"] * 4
    store = build_store(tmp_path / "s.db", [doc])
    assert without_lines(run_adapter(opencode.records, store)) == without_lines(out)


def test_opencode_pending_prune_times_cost_n_log_n_not_n_squared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sorted_items = [0]

    def counted_sorted(items: Any, **kwargs: Any) -> list[Any]:
        out = sorted(items, **kwargs)
        sorted_items[0] += len(out)
        return out

    monkeypatch.setattr(opencode, "sorted", counted_sorted, raising=False)
    work = {}
    for n in (1000, 2000):
        # every prune time lies after every message: all stay pending to the end,
        # which prunes them earliest first (times in a shuffled order: i * 7 mod n)
        doc = _export([_tool_message(i, 2000 + i, 10**12 + (i * 7) % n) for i in range(n)])
        path = write_json(tmp_path / f"prune-{n}.json", doc)
        sorted_items[0] = 0
        out, lines = lines_run(opencode, lambda p=path: list(opencode.records(str(p))))
        by_time = sorted(range(n), key=lambda i: (i * 7) % n)
        assert _evictions(out) == [[f"c{i}:result"] for i in by_time]
        work[n] = lines + sorted_items[0]
    # before: each message sorted every pending time (n x n elements)
    assert work[2000] < 2.5 * work[1000]


# -- RoundAssembler: one fold of n lines -------------------------------------------

def test_a_fold_of_n_lines_moves_the_line_index_linearly() -> None:
    moved = {}
    for n in (2000, 4000):
        asm = RoundAssembler()
        asm._lines = MovesList()
        asm.turn(1)
        for i in range(n):
            asm.span(i + 2, f"s{i}", "user", "x", 1)
        fold = asm.fold_outside(None, set(), None)
        # the even spans folded (one a line): the index keeps exactly the lines
        # that still hold an item
        fold = [s for s in fold if int(s[1:]) % 2 == 0]
        MovesList.moved = 0
        asm.compaction(n + 5, fold=fold, fallback_children=[], base_id="c", text="sum",
                       tokens=1, info={})
        moved[n] = MovesList.moved
        assert list(asm.working) == [f"s{i}" for i in range(1, n, 2)] + ["c"]
        assert list(asm._lines) == [i + 2 for i in range(1, n, 2)] + [n + 5]
        assert asm.fold_outside(None, set(), (n + 1) // 2) == [
            f"s{i}" for i in range(1, n // 2 - 1, 2)]  # lines up to n / 2: spans below
    # before: each emptied line was deleted on its own (n / 2 deletes of O(n) each)
    assert moved[4000] < 2.5 * moved[2000]


def test_fold_outside_gives_entry_order_after_an_eviction() -> None:
    asm = RoundAssembler()
    asm.turn(1)
    for i, name in enumerate("abc"):
        asm.span(i + 2, name, "user", name, 1)
    asm.compaction(5, fold=["a", "b"], fallback_children=[], base_id="S", text="sum",
                   tokens=1, info={})
    asm.span(6, "d", "user", "d", 1)
    # entry order: c (line 4), then the summary S (line 5), then d; was [S, c, d]:
    # S took the entry number of a (the count of ids left), d tied with c
    assert asm.fold_outside(None, set(), None) == ["c", "S", "d"]
    assert asm.fold_outside((5, 5), set(), None) == ["c", "d"]


# -- OpenHands: event ids arriving in decreasing order, ranges at the front ---------

def _counted_ranges(monkeypatch: pytest.MonkeyPatch) -> openhands.EventRanges:
    """An index whose lists count the elements they move (``MovesList.moved`` at 0)."""
    monkeypatch.setattr(event_ranges.EventRanges, "list_type", MovesList)
    MovesList.moved = 0
    return openhands.EventRanges()


def test_event_ranges_index_decreasing_ids_in_n_log_n(
        monkeypatch: pytest.MonkeyPatch) -> None:
    moved = {}
    for n in (2000, 4000):
        ranges = _counted_ranges(monkeypatch)
        for i in reversed(range(n)):
            ranges.add(str(i))
        ranges.add("7")  # indexed already: nothing changes
        # a range takes the ids inside it in first-seen order (decreasing here)
        assert ranges.take(10, 19) == [str(i) for i in range(19, 9, -1)]
        assert ranges.take(0, n) == [str(i) for i in reversed(range(n)) if not 10 <= i <= 19]
        assert ranges.take(0, n) == []
        ranges.add("12")  # back after it was taken
        assert ranges.take(12, 12) == ["12"]
        moved[n] = MovesList.moved
    # adv9: each id was inserted at the front of one sorted list (n x n moves)
    assert 0 < moved[4000] < 2.5 * moved[2000]


def test_event_ranges_small_ids_below_live_ones_cost_no_resort(
        monkeypatch: pytest.MonkeyPatch) -> None:
    moved = {}
    for n in (2000, 4000):
        ranges = _counted_ranges(monkeypatch)
        big = [str(10**7 + i) for i in range(n)]
        for eid in big:
            ranges.add(eid)
        # n times: an id below every live one, then a range naming just that id
        for i in range(1, n + 1):
            ranges.add(str(i))
            assert ranges.take(i, i) == [str(i)]
        assert ranges.take(0, 10**6) == []
        moved[n] = MovesList.moved
        assert ranges.take(0, 2 * 10**7) == big  # every live id still there, in order
        assert ranges.visited == 2 * n
    # adv14 F3: each take sorted the n live ids again and deleted at the front of one
    # list: 48,022,000 moves at n = 2000, 208,048,000 at 4000 (now 2,048,002 and
    # 4,096,006: an insert into the first block of at most 2 x LOAD keys each)
    assert 0 < moved[4000] < 2.5 * moved[2000]


@pytest.mark.parametrize("seed", range(6))
def test_event_ranges_take_what_a_plain_scan_takes(
        monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.setattr(event_ranges, "LOAD", 2)  # blocks of 2 to 4 keys: many splits
    rng = random.Random(seed)
    ranges = openhands.EventRanges()
    live: dict[str, None] = {}  # the ids a range may name, in first-seen order
    seen: list[str] = []
    for _ in range(3000):
        if rng.random() < 0.7:
            eid = str(rng.randrange(200)).zfill(rng.choice((1, 1, 1, 3)))
            ranges.add(eid)
            seen.append(eid)
            live[eid] = None
        else:
            start = rng.randrange(200)
            end = start + rng.choice((0, 0, 1, 5, 40, 300))
            first = list(dict.fromkeys(seen))
            want = sorted((e for e in live if start <= int(e) <= end), key=first.index)
            assert ranges.take(start, end) == want
            for eid in want:
                del live[eid]
    blocks = ranges._blocks
    assert all(blocks) and [b[-1] for b in blocks] == ranges._maxes
    assert [k for b in blocks for k in b] == sorted(k for b in blocks for k in b)
