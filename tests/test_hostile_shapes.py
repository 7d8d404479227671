"""Valid inputs of hostile shapes run in time linear in their size (issue 11, item 5).

Each test runs a shape at a moderate size and checks values that can be computed by
hand; the time and memory figures are in docs/performance.md, measured by
benchmarks/shapes_hostile.py (a test asserts correctness, never a duration).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from typer.testing import CliRunner

from benchmarks.shapes_hostile import SHAPES, write
from compaction_audit.cli import app
from compaction_audit.engine import audit_session
from compaction_audit.errors import LogError
from compaction_audit.findingvalues import VALUES_LIST_CAP, capped
from compaction_audit.io import claude_code, codex, openhands
from compaction_audit.io.native import read_native, read_records
from compaction_audit.io.tokens import RoundAssembler, estimate_tokens
from compaction_audit.reachability import MAX_CLOSURE_PAIRS, interval_max, leaves
from compaction_audit.rehydrate import suggestions
from compaction_audit.series import build_series
from compaction_audit.trace import MAX_LEVELS, MAX_NODES, trace
from tests.logs import LogWriter, rnd, spans


def shape(tmp_path: Path, name: str, n: int) -> str:
    path = tmp_path / f"{name}-{n}.jsonl"
    write(name, n, path)
    return str(path)


def test_chain_of_3000_single_child_folds(tmp_path: Path) -> None:
    # s0, then f1 folds s0, f2 folds f1, ... f3000; each fold evicts its child
    session = read_native(shape(tmp_path, "fold-chain", 3000))
    series = build_series(session)
    frame = series.frame
    assert frame["summary_depth_max"].to_list() == list(range(3001))
    assert frame["distinct_source_spans"].to_list() == [1] + [0] * 3000  # s0 evicted at 1
    assert frame["ungrounded_summaries"].to_list() == [0] + [1] * 3000
    assert frame["rounds_at_max_depth"].to_list() == [0] * 3000 + [1]  # cap: depth 3000
    # every summary's only leaf is s0: 3,001 closure pairs, not 4.5 million
    assert series.closure.height == 3001
    assert series.closure.filter(pl.col("item") == "f3000")["leaf"].to_list() == ["s0"]
    report = audit_session(session)
    ungrounded = [f for f in report.findings if f.code == "CA201"]
    assert len(ungrounded) == 3000
    assert ungrounded[1499].values == {"summaries": ["f1500"], "ungrounded_summaries": 1,
                                       "new_summaries": 1}
    pick = suggestions(session, series, [2999], 0.3)[2999]
    assert (pick["summary"], pick["depth"], pick["fan_out"], pick["leaves_to_read"]) == (
        "f2999", 2999, 1, 0)


def test_closure_past_the_limit_is_a_one_line_error(tmp_path: Path) -> None:
    # 1,500 spans folded by f1, then a chain of single-child folds over f1: each fold
    # has the 1,500 leaves, so the 1,333rd fold takes the closure past 2,000,000 pairs
    first = rnd(0, spans=spans(*((f"s{i}", 1) for i in range(1500))))
    records: list[dict[str, Any]] = [
        first, rnd(1, summaries=[{"id": "f1", "tokens": 1,
                                  "children": [f"s{i}" for i in range(1500)]}])]
    for i in range(2, 1400):
        records.append(rnd(i, summaries=[{"id": f"f{i}", "tokens": 1,
                                          "children": [f"f{i - 1}"]}],
                           evicted=[f"f{i - 1}"]))
    path = tmp_path / "broom.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert MAX_CLOSURE_PAIRS == 2_000_000
    with pytest.raises(LogError) as info:
        leaves(read_native(str(path)))
    # 1,500 span rows + 1,500 x 1,333 = 2,001,000 > 2,000,000 at f1333 (line 1334);
    # at f1332 the closure holds 1,999,500
    assert info.value.line == 1334
    assert "'f1333' (depth 1333)" in info.value.message
    result = CliRunner().invoke(app, ["audit", str(path), "--isolated"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "provenance too large" in lines[0]
    # trace refuses it with the same line (adv91 #3: it walked the 1,398 folds above
    # each span it read, quadratic in the chain, where the audit stopped at the bound)
    traced = CliRunner().invoke(app, ["trace", str(path), "s7"])
    assert (traced.exit_code, traced.output) == (2, result.output)


def test_closure_limit_boundary(write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=spans(("a", 1), ("b", 1))),
                      rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a", "b"]}]),
                      rnd(2, summaries=[{"id": "T", "tokens": 1, "children": ["S"]}])])
    session = read_native(str(path))
    assert leaves(session, limit=6).height == 6  # a, b, (S, a), (S, b), (T, a), (T, b)
    with pytest.raises(LogError) as info:
        leaves(session, limit=5)
    assert (info.value.line, info.value.field) == (3, "summaries")


def test_claude_code_transcript_of_300_compactions(tmp_path: Path) -> None:
    path = shape(tmp_path, "cc-compacts", 300)
    out = list(claude_code.records(path))
    session = read_records(out, path)
    # each summary s_k folds s_(k-1), u_k and a_k: depth k + 1, leaves u_0..u_k, a_0..a_k
    depth = dict(zip(session.items["id"], session.items["depth"], strict=True))
    assert (depth["s0"], depth["s299"]) == (1, 300)
    series = build_series(session)
    # 600 spans, plus sum over k of 2 (k + 1) = 300 x 301 summary pairs
    assert series.closure.height == 600 + 300 * 301
    assert series.frame["summary_depth_max"].to_list()[-1] == 300


def test_codex_rollout_of_3000_repeated_user_messages(tmp_path: Path) -> None:
    path = shape(tmp_path, "codex-repeat", 3000)
    out = list(codex.records(path))
    read_records(out, path)
    rounds = out[1:]
    assert len(rounds) == 3001  # one turn per message, then the compaction
    ids = [s["id"] for _, r in rounds[:-1] for s in r["spans"]]
    assert ids == ["msg_same"] + [f"msg_same#{k}" for k in range(2, 3001)]
    # the replacement history carries all 3,000 over: each matched once, in order;
    # nothing is folded, so the summary's children are the kept messages
    (summary,) = rounds[-1][1]["summaries"]
    assert summary["children"] == ids
    assert "evicted" not in rounds[-1][1]


def test_ungrounded_summaries_are_named_once(tmp_path: Path) -> None:
    # 300 summaries lose their leaves at round 1 and stay for 300 more rounds
    session = read_native(shape(tmp_path, "ungrounded", 300))
    found = [f for f in audit_session(session).findings if f.code == "CA201"]
    assert [f.round for f in found] == list(range(1, 302))
    assert found[0].values["ungrounded_summaries"] == 300
    assert found[0].values["new_summaries"] == 300
    assert len(found[0].values["summaries"]) == 20
    assert found[0].message.endswith("and 280 more")
    assert all(f.values["summaries"] == [] and f.values["ungrounded_summaries"] == 300
               for f in found[1:])


def test_interval_max_small_case() -> None:
    intervals = pl.DataFrame({"start": [0, 2, 3, 6], "end": [4, 5, 4, 7],
                              "depth": [1, 3, 7, 2]})
    out = interval_max(intervals, 8, "depth")
    # round: 0 1 2 3 4 5 6 7  ->  1 1 3 7 3 - 2 -
    assert dict(zip(out["ri"], out["value"], strict=True)) == {
        0: 1, 1: 1, 2: 3, 3: 7, 4: 3, 6: 2}


def test_interval_max_matches_a_direct_count() -> None:
    rng = random.Random(11)
    for n in (1, 2, 3, 17, 64, 65, 300):
        rows = []
        for _ in range(rng.randint(0, 60)):
            a, b = sorted((rng.randrange(n + 1), rng.randrange(n + 1)))
            rows.append((a, b, rng.randrange(1000)))
        frame = pl.DataFrame(rows, schema={"start": pl.Int64, "end": pl.Int64,
                                           "value": pl.Int64}, orient="row")
        expected = {}
        for ri in range(n):
            covering = [v for a, b, v in rows if a <= ri < b]
            if covering:
                expected[ri] = max(covering)
        out = interval_max(frame, n, "value")
        assert dict(zip(out["ri"], out["value"], strict=True)) == expected, n


def test_rehydrate_choice_changes_when_a_leaf_goes(write_log: LogWriter) -> None:
    # A (a 10, b 20) and B (c 5, d 5): depth 1 and fan-out 2 each, so leaf tokens decide
    path = write_log([
        rnd(0, spans=spans(("a", 10), ("b", 20), ("c", 5), ("d", 5))),
        rnd(1, summaries=[{"id": "A", "tokens": 1, "children": ["a", "b"]},
                          {"id": "B", "tokens": 1, "children": ["c", "d"]}],
            offloaded=["a", "b", "c", "d"]),
        rnd(2, evicted=["b"]),  # A 10, B 10: a tie, the id decides
        rnd(3, evicted=["a"]),  # A 0
    ])
    session = read_native(str(path))
    picks = suggestions(session, build_series(session), [0, 1, 2, 3], 0.3)
    assert picks[0]["summary"] is None
    assert [(picks[r]["summary"], picks[r]["leaves_to_read"],
             picks[r]["leaf_tokens_to_read"]) for r in (1, 2, 3)] == [
        ("A", 2, 30), ("A", 1, 10), ("B", 2, 10)]


def test_a_leaf_back_in_the_working_set_is_no_leaf_to_read_again(
        write_log: LogWriter) -> None:
    """usertest65 #1: a leaf read back into the working set counted as one to read
    again ("1 resolvable leaves = 24 tokens" where expanding read nothing back).  A
    folds a (10) and b (20), both offloaded; a is read back at round 2 (``retained``),
    offloaded again at round 3, b evicted at round 4."""
    path = write_log([
        rnd(0, spans=spans(("a", 10), ("b", 20), ("c", 5))),
        rnd(1, summaries=[{"id": "A", "tokens": 1, "children": ["a", "b"]}],
            offloaded=["a", "b"]),
        rnd(2, retained=[["c", 0.5], ["A", 0.5], ["a", 0.5]]),
        rnd(3, offloaded=["a"]),
        rnd(4, evicted=["b"]),
    ])
    session = read_native(str(path))
    picks = suggestions(session, build_series(session), [1, 2, 3, 4], 0.3)
    assert [(picks[r]["summary"], picks[r]["leaves_to_read"],
             picks[r]["leaf_tokens_to_read"]) for r in (1, 2, 3, 4)] == [
        ("A", 2, 30), ("A", 1, 20), ("A", 2, 30), ("A", 1, 10)]


def test_rehydrate_names_a_summary_with_a_leaf_to_read_again(write_log: LogWriter) -> None:
    """usertest56 #4: the lowest-depth summary with the highest fan-out (E, depth 1)
    had no leaf left to read, and was named over H (depth 2), whose offloaded leaves
    could be read again.  Where no summary has one, the seed's choice is named."""
    path = write_log([
        rnd(0, spans=spans(("a", 10), ("b", 10), ("c", 10), ("x", 20), ("y", 20))),
        rnd(1, summaries=[{"id": "E", "tokens": 1, "children": ["a", "b", "c"]},
                          {"id": "G", "tokens": 1, "children": ["x", "y"]}],
            evicted=["a", "b", "c"], offloaded=["x", "y"]),
        rnd(2, summaries=[{"id": "H", "tokens": 1, "children": ["G"]}], evicted=["G"]),
        rnd(3, evicted=["x", "y"]),
    ])
    session = read_native(str(path))
    picks = suggestions(session, build_series(session), [1, 2, 3], 0.3)
    assert [(picks[r]["summary"], picks[r]["depth"], picks[r]["leaf_tokens_to_read"])
            for r in (1, 2, 3)] == [("G", 1, 40), ("H", 2, 40), ("E", 1, 0)]


def test_finding_values_keep_at_most_the_cap() -> None:
    values = {"ids": list(range(VALUES_LIST_CAP + 7)), "n": 3,
              "children": [{"dropped": list(range(60))}]}
    out = capped(values)
    assert out["ids"] == list(range(VALUES_LIST_CAP))
    assert out["ids_more"] == 7
    assert out["children"][0]["dropped_more"] == 60 - VALUES_LIST_CAP
    assert "children_more" not in out and out["n"] == 3
    assert capped({"ids": [1, 2]}) == {"ids": [1, 2]}


def test_every_shape_writes_valid_records(tmp_path: Path) -> None:
    for name in SHAPES:
        path = shape(tmp_path, name, 5)
        assert Path(path).stat().st_size > 0


def test_trace_of_a_deep_chain_is_cut_at_max_levels(tmp_path: Path) -> None:
    session = read_native(shape(tmp_path, "fold-chain", 3000))
    node = trace(session, "f3000")
    levels = 0
    while node.children:
        (node,) = node.children
        levels += 1
    # f3000 .. f2984 are the 17 levels shown (0..16); f2984's child and the 2,983
    # levels below it are one node
    assert levels == MAX_LEVELS + 1
    assert node.data == {"not_shown": 1}
    assert node.label == "... 1 child(ren) and the 2,983 level(s) below not shown"
    up = trace(session, "s0")
    assert len(str(up.to_dict())) < 20_000  # the span's 3,000 folds: 16 shown
    result = CliRunner().invoke(app, ["trace", str(tmp_path / "fold-chain-3000.jsonl"),
                                      "f3000"])
    assert result.exit_code == 0 and "2,983 level(s) below" in result.output


def test_trace_of_a_shared_dag_stops_at_max_nodes(write_log: LogWriter) -> None:
    # each level folds the previous one twice over (two summaries with the same two
    # children): the tree of the top would have 2^30 nodes
    records = [rnd(0, spans=spans(("a", 1), ("b", 1)))]
    below = ["a", "b"]
    for i in range(1, 31):
        records.append(rnd(i, summaries=[
            {"id": f"L{i}x", "tokens": 1, "children": below},
            {"id": f"L{i}y", "tokens": 1, "children": below}]))
        below = [f"L{i}x", f"L{i}y"]
    session = read_native(str(write_log(records)))
    root = trace(session, "L30x")

    def count(node: Any) -> int:
        return 1 + sum(count(c) for c in node.children)

    # the budgeted nodes, the root, and one "more" node per open level when it ran out
    assert count(root) <= 1 + MAX_NODES + MAX_LEVELS + 1


# -- work counters: no pass over the whole working set per compaction (issue 11, class 5)
# Each test counts deterministic work (items visited, calls made) at n and 2n: linear
# work doubles, work quadratic in n quadruples.

def _converted_with(monkeypatch: pytest.MonkeyPatch, module: Any, name: str,
                    path: str) -> tuple[list[tuple[int, dict[str, Any]]], list[Any]]:
    """Convert ``path`` with ``module.records``, recording every ``module.<name>`` made."""
    made: list[Any] = []
    base = getattr(module, name)

    class Recorded(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(module, name, Recorded)
    return list(module.records(path)), made


def test_claude_code_preserved_segment_visits_only_what_it_folds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    visited = {}
    for n in (400, 800):
        out, (asm,) = _converted_with(monkeypatch, claude_code, "RoundAssembler",
                                      shape(tmp_path, "cc-preserved", n))
        visited[n] = asm.visited
        rounds = [r for _, r in out[1:]]
        # everything is preserved at every boundary: nothing folded, nothing evicted;
        # each summary (no summary line: opaque) is a raw span of its own
        assert len(rounds) == 2 * n
        assert not any("evicted" in r or "summaries" in r for r in rounds)
        assert [s["source"] for s in rounds[-1]["spans"]] == ["harness:summary"]
        assert rounds[-1]["compaction"]["summary_id"] == f"b{n - 1}"
    # before: every boundary walked the whole working set (2 n items at the end)
    assert visited == {400: 0, 800: 0}


def test_fold_outside_keeps_entry_order_and_skips_the_kept_range() -> None:
    asm = RoundAssembler()
    asm.turn(1)
    for line in (5, 2, 8, 3, 9):  # entered out of line order (deferred spans do that)
        asm.span(line, f"x{line}", "user", "t")
    # keep lines 3..8, cut at line 9: x2 and x9 fold, in entry order (x2 entered first)
    assert asm.fold_outside((3, 8), set(), None) == ["x2", "x9"]
    assert asm.visited == 2 + 2  # the lines 2 and 9, then their two ids
    assert asm.fold_outside((3, 8), {9}, 8) == ["x2"]  # line 9 kept and past the cut
    assert asm.fold_outside(None, {5}, 5) == ["x2", "x3"]
    assert asm.fold_outside((9, 2), set(), 2) == ["x2"]  # an empty range keeps nothing
    asm.compaction(10, fold=["x2", "x9"], fallback_children=[], base_id="c", text="s",
                   tokens=1, info={})
    assert asm.fold_outside(None, set(), None) == ["x5", "x8", "x3", "c"]  # entry order


def test_openhands_range_condensations_visit_each_event_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    visited = {}
    for n in (500, 1000):
        out, (ranges,) = _converted_with(monkeypatch, openhands, "EventRanges",
                                         shape(tmp_path, "oh-range", n))
        visited[n] = ranges.visited
        rounds = [r for _, r in out[1:]]
        # each condensation folds exactly the message before it
        assert [r["summaries"][0]["children"] for r in rounds[1::2]] == [
            [str(2 * i)] for i in range(n)]
        assert [r["evicted"] for r in rounds[1::2]] == [[str(2 * i)] for i in range(n)]
    # before: every condensation scanned every event seen (n (n + 1) / 2 in all)
    assert visited == {500: 500, 1000: 1000}


def test_openhands_ranges_below_every_live_id_take_only_that_id(tmp_path: Path) -> None:
    out = list(openhands.records(shape(tmp_path, "oh-below", 300)))
    rounds = [r for _, r in out[1:]]
    forgets = [r["compaction"] for r in rounds if "compaction" in r]
    assert [f["kind"] for f in forgets] == ["forget"] * 300
    assert [f["messages_removed"] for f in forgets] == [1] * 300
    # each condensation evicts the small-id event before it; the 300 large ids stay
    assert [r["evicted"] for r in rounds if "compaction" in r] == [
        [str(i)] for i in range(1, 301)]


def test_event_ranges_take_in_first_seen_order() -> None:
    ranges = openhands.EventRanges()
    for eid in ("10", "3", "x", "7", "²", "03", "12"):
        ranges.add(eid)
    assert ranges.take(3, 10) == ["10", "3", "7", "03"]  # first-seen order, not numeric
    assert ranges.take(0, 100) == ["12"]  # taken ids are gone
    ranges.add("7")  # a new span of event 7: it can be named again
    assert ranges.take(7, 7) == ["7"]
    assert ranges.visited == 6


def test_codex_compactions_estimate_each_user_turn_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[int, int] = {}
    count = [0]

    def counted(text: str) -> int:
        count[0] += 1
        return estimate_tokens(text)

    monkeypatch.setattr(codex, "estimate_tokens", counted)
    for n in (300, 600):
        path = shape(tmp_path, "codex-compacts", n)
        count[0] = 0
        rounds = [r for _, r in codex.records(path)][1:]
        calls[n] = count[0]
        # Codex keeps every user turn (they fit in KEEP_USER_TOKENS): each summary folds
        # only the previous summary, the first folds nothing and keeps turn 0
        assert rounds[1]["summaries"][0]["children"] == ["line-2"]
        assert rounds[-1]["summaries"][0]["children"] == [f"line-{2 * n - 1}"]
        assert rounds[-1]["evicted"] == [f"line-{2 * n - 1}"]
    # three estimates per turn (the span, the turn's size, the summary); before: also
    # one per kept turn per compaction, n (n + 1) / 2 more
    assert calls == {300: 900, 600: 1800}


def test_growing_delta_trace_reports_in_bounded_json(tmp_path: Path) -> None:
    path = shape(tmp_path, "growing-delta", 4000)
    report = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["audit", path, "-f", "json", "-o", str(report),
                                      "--isolated"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(report.read_bytes())
    assert data is not None
    # the per-round series is not copied into the report: far smaller than the trace
    assert report.stat().st_size < Path(path).stat().st_size // 10


def test_claude_code_tool_input_past_the_nesting_limit_names_the_limit(
        tmp_path: Path) -> None:
    deep: dict[str, Any] = {}
    for _ in range(300):
        deep = {"a": deep}
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s", "parentUuid": None,
         "message": {"role": "user", "content": "run it"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "parentUuid": "u1",
         "message": {"role": "assistant", "id": "m1", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": deep}]}},
    ]
    path = tmp_path / "deep.jsonl"
    # the standard library writes it (orjson itself stops at 254 levels)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(LogError) as err:
        list(claude_code.records(str(path)))
    assert str(err.value) == (
        f"{path}:2: a value is nested more than 254 levels deep (objects and lists), "
        "the JSON nesting depth limit (message.content[0].input)")


def test_openhands_event_named_twice_is_forgotten_once(tmp_path: Path) -> None:
    path = tmp_path / "twice.jsonl"
    path.write_text(
        '{"id": 0, "source": "user", "action": "message", "args": {"content": "port 1000"}}\n'
        '{"id": 1, "source": "agent", "action": "condensation",'
        ' "args": {"forgotten_event_ids": [0, "0"], "summary": "s"}}\n')
    (_, last) = list(openhands.records(str(path)))[-1]
    # was: "unexpected record shape: KeyError: '0'" (the id evicted twice)
    assert (last["summaries"][0]["children"], last["evicted"]) == (["0"], ["0"])
    assert last["compaction"]["messages_removed"] == 1


@pytest.mark.parametrize("name", ["wrapped-negation", "open-heredocs"])
def test_a_rule_broken_after_a_hostile_wrap_or_here_documents(tmp_path: Path,
                                                              name: str) -> None:
    """adv128 #1, #2: a rule soft-wrapped over thousands of lines ending in "not", and a
    call of thousands of unclosed here-documents, were each read quadratically (20,000
    and 24,000 lines: about 2 minutes); the rule is lost and the push breaks it."""
    report = audit_session(read_native(shape(tmp_path, name, 4000)))
    (broken,) = [f for f in report.findings if f.code == "CA307"]
    assert (broken.values["object"], broken.values["violated_span"],
            broken.values["violated_round"]) == ("--force", "c", 2)
