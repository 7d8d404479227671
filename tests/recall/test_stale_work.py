"""stale-summary's newer raw work found for all repeated summaries at once (issue 11,
class 5: it ran three Polars queries per summary), and its predecessor chosen by a
total order (class 8: round, line, then order in the summary's children)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall.analysis import typed_items
from compaction_audit.recall.stale import stale
from tests.logs import LogWriter, rnd
from tests.recall.querycount import counted_queries

_SAME = ("The user wants the orders release shipped today. The proxy config on staging "
         "is next in line. We ruled out the DNS and TLS causes.")


def _span(i: str, text: str) -> dict[str, Any]:
    return {"id": i, "tokens": 5, "text": text, "source": "user"}


def _chain(write_log: LogWriter, n: int) -> Path:
    """n summaries in a chain, each folding its predecessor and one new span, each with
    the same three sentences: every one after the first repeats its predecessor."""
    records: list[dict[str, Any]] = [rnd(0, spans=[_span("u0", "Set TTL 0 to 900 s.")])]
    prev = "u0"
    for r in range(1, n + 1):
        records.append(rnd(2 * r - 1, spans=[_span(f"u{r}", f"Set TTL {r} to {900 + r} s.")]))
        kids = [prev, f"u{r}"]
        records.append(rnd(2 * r, summaries=[{"id": f"c{r}", "tokens": 5, "text": _SAME,
                                              "children": kids}], evicted=kids))
        prev = f"c{r}"
    return write_log(records, name=f"chain-{n}.jsonl")


def _stale(path: Path) -> Any:
    session = read_native(str(path))
    return stale(session, typed_items(session))


def test_each_repeat_names_the_one_new_span_it_lost(write_log: LogWriter) -> None:
    out = _stale(_chain(write_log, 3))
    # c2 repeats c1 and drops u2 (born at round 3, folded at 4); c3 likewise for u3
    assert out.select("ri", "summary", "previous", "repeated", "newer").rows() == [
        (4, "c2", "c1", 1.0, 1), (6, "c3", "c2", 1.0, 1)]
    assert out["unreached"].to_list() == [["u2"], ["u3"]]


def test_the_queries_do_not_grow_with_the_summaries(write_log: LogWriter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {}
    for n in (10, 20):
        session = read_native(str(_chain(write_log, n)))
        items = typed_items(session)
        with monkeypatch.context() as patch:
            seen = counted_queries(patch)
            out = stale(session, items)
        assert out["summary"].to_list() == [f"c{r}" for r in range(2, n + 1)]
        counts[n] = len(seen)
    # before: three queries per repeated summary (10 -> 20 summaries added 30)
    assert counts[20] == counts[10]


@pytest.mark.parametrize("kids", [["c1", "c2"], ["c2", "c1"]])
def test_of_two_summaries_on_one_line_the_later_child_is_the_predecessor(
        write_log: LogWriter, kids: list[str]) -> None:
    path = write_log([
        rnd(0, spans=[_span("u1", "Set TTL 1 to 901 s."), _span("u2", "Set TTL 2 to 902 s.")]),
        rnd(1, summaries=[{"id": "c1", "tokens": 5, "text": _SAME, "children": ["u1"]},
                          {"id": "c2", "tokens": 5, "text": _SAME, "children": ["u2"]}],
            evicted=["u1", "u2"]),
        rnd(2, spans=[_span("u3", "Set TTL 3 to 903 s.")]),
        rnd(3, summaries=[{"id": "c3", "tokens": 5, "text": _SAME,
                           "children": [*kids, "u3"]}], evicted=["c1", "c2", "u3"]),
    ])
    out = _stale(path)
    # c1 and c2: same round, same line; the tie goes to the later in c3's children
    assert out.select("summary", "previous", "newer").rows() == [("c3", kids[1], 1)]
    assert out["unreached"].to_list() == [["u3"]]
