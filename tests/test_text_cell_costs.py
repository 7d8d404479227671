"""Costs of the text cells (issue 14, point 2) that change no result: the support
vocabularies of unsupported-summary-claim are let go once no parent needs them, and
the rules that read the recall analysis are evaluated last (its text work runs in a
helper meanwhile) while notes keep the rules' order."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace
from typing import Any

import polars as pl

from compaction_audit.engine import run_rules
from compaction_audit.recall.claims import _Vocab, bag
from compaction_audit.rules.base import Outcome, Rule, Severity


def _dag() -> tuple[dict[str, tuple[Any, ...]], dict[str, list[str]]]:
    """a, b folded into s1; s1 and c folded into s2 (kind, text, ri, line)."""
    info = {"a": ("span", "alpha 10", 0, 1), "b": ("span", "beta 20", 0, 1),
            "c": ("span", "gamma 30", 1, 2), "s1": ("summary", "x", 1, 2),
            "s2": ("summary", "y", 2, 3)}
    return info, {"s1": ["a", "b"], "s2": ["s1", "c"]}


def test_a_vocabulary_is_held_until_its_parent_is_built_and_it_is_checked() -> None:
    info, children = _dag()
    vocab = _Vocab(info, children, {"s1", "s2"})
    lower = vocab.of("s1")
    assert lower is not None and lower[0] == bag("alpha 10")[0] | bag("beta 20")[0]
    assert set(vocab.memo) == {"s1"}  # the leaves went once s1 held them
    vocab.done("s1")
    assert set(vocab.memo) == {"s1"}  # s2 still needs it
    upper = vocab.of("s2")
    assert upper is not None
    assert upper[0] == lower[0] | bag("gamma 30")[0]
    assert upper[1] == lower[1] | bag("gamma 30")[1]
    assert set(vocab.memo) == {"s2"}  # s1 went with its one parent built
    vocab.done("s2")
    assert vocab.memo == {}


def test_a_node_still_to_be_checked_is_kept_after_its_parent_is_built() -> None:
    info, children = _dag()
    vocab = _Vocab(info, children, {"s1", "s2"})
    vocab.of("s2")  # builds s1 on the way
    assert set(vocab.memo) == {"s1", "s2"}
    assert vocab.of("s1") is vocab.memo["s1"]
    vocab.done("s1")
    assert set(vocab.memo) == {"s2"}


def test_a_node_with_two_parents_stays_until_both_are_built() -> None:
    info = {"a": ("span", "alpha", 0, 1), "p": ("summary", "x", 1, 2),
            "q": ("summary", "y", 1, 2)}
    vocab = _Vocab(info, {"p": ["a"], "q": ["a"]}, {"p", "q"})
    vocab.of("p")
    assert "a" in vocab.memo
    vocab.of("q")
    assert "a" not in vocab.memo


def _rule(code: str, recall: bool, seen: list[str]) -> Rule:
    class Probe(Rule):
        name = f"probe-{code}"
        severity = Severity.INFO
        summary = action = example = ""
        reads_recall = recall

        def evaluate(self, ctx: Any) -> Outcome:
            seen.append(self.code)
            fired = pl.DataFrame({"ri": [0]}, schema={"ri": pl.Int64})
            return Outcome(fired, {f"why {self.code}": 1})

        def message(self, values: dict[str, Any], ctx: Any) -> str:
            return self.code

    Probe.code = code
    return Probe()


def test_recall_readers_run_last_and_notes_and_findings_keep_the_rules_order() -> None:
    seen: list[str] = []
    rules = [_rule("CA101", False, seen), _rule("CA301", True, seen),
             _rule("CA302", True, seen), _rule("CA305", False, seen)]
    frame = pl.DataFrame({"ri": [0], "round": [7], "line": [3]})
    ctx = SimpleNamespace(series=SimpleNamespace(frame=frame), session=None,
                          settings=None)
    findings, notes, _ = run_rules(ctx, rules)  # type: ignore[arg-type]
    assert seen == ["CA101", "CA305", "CA301", "CA302"]
    assert [n.code for n in notes] == ["CA101", "CA301", "CA302", "CA305"]
    assert [(f.code, f.round, f.line, f.message) for f in findings] == [
        ("CA101", 7, 3, "CA101"), ("CA301", 7, 3, "CA301"), ("CA302", 7, 3, "CA302"),
        ("CA305", 7, 3, "CA305")]


def test_small_sessions_keep_the_text_caches_until_the_last_rule(monkeypatch: Any) -> None:
    import compaction_audit.engine as engine
    from compaction_audit.recall import caches

    calls: list[int] = []
    monkeypatch.setattr(engine, "forget_text_caches", lambda: calls.append(1) or 0)
    frame = pl.DataFrame({"ri": [0], "round": [7], "line": [3]})
    ctx = SimpleNamespace(series=SimpleNamespace(frame=frame), session=None,
                          settings=None)
    rules = [_rule(code, False, []) for code in ("CA101", "CA102", "CA301")]
    kept = run_rules(ctx, rules, keep_caches=True)  # type: ignore[arg-type]
    assert len(calls) == 1  # once, after the last rule
    calls.clear()
    cleared = run_rules(ctx, rules)  # type: ignore[arg-type]
    assert len(calls) == 3  # after each rule
    assert [f.code for f in kept[0]] == [f.code for f in cleared[0]] == [
        "CA101", "CA102", "CA301"]
    assert caches.keeps(caches.KEEP_CACHES_CHARS)
    assert not caches.keeps(caches.KEEP_CACHES_CHARS + 1)
    assert caches.keeps(468_783)  # the 2.8 MB transcript of benchmarks/startup.py


def test_the_rules_that_read_the_recall_analysis_say_so() -> None:
    from compaction_audit.engine import select_rules

    readers = sorted(r.code for r in select_rules() if r.reads_recall)
    assert readers == ["CA301", "CA302", "CA303", "CA304", "CA307"]


def test_forget_clears_the_recall_text_caches_and_results_stay_the_same() -> None:
    from compaction_audit.recall import caches
    from compaction_audit.recall.extract import extract, extract_cached
    from compaction_audit.recall.spantypes import span_type

    text = "Do not raise read_timeout_ms above 45000 ms on prod."
    first = extract(text, "prose")
    kind = span_type("user", text)
    assert extract_cached.cache_info().currsize >= 1
    assert span_type.cache_info().currsize >= 1
    assert caches.forget() >= 2
    assert extract_cached.cache_info().currsize == 0
    assert span_type.cache_info().currsize == 0
    assert extract(text, "prose") == first and span_type("user", text) == kind


def test_person_spans_counts_every_span_of_a_repeated_text() -> None:
    from compaction_audit.model import Session, SessionHeader
    from compaction_audit.recall.sections import person_spans

    items = pl.DataFrame({"id": ["u1", "u2", "u3", "a1", "h1"],
                          "kind": ["span"] * 5,
                          "source": ["user", "user", "user:queued", "assistant", "user"],
                          "text": ["fix it", "fix it", "and the tests", "done",
                                   "<command-name>/clear</command-name>"]})
    empty = pl.DataFrame()
    session = Session("x", SessionHeader(), empty, items, empty, empty, empty)
    assert person_spans(session) == 3  # u1, u2 (same text), u3; not a1, not harness h1


def test_clip_tree_clips_at_any_depth_and_keeps_plain_values() -> None:
    from enum import StrEnum

    from compaction_audit.report.safe import MAX_TEXT, clip, clip_tree, unsurrogate

    class Tag(StrEnum):
        LONG = "t" * (MAX_TEXT + 1)

    long = "a" * (MAX_TEXT + 5)
    out = clip_tree({"k": [long, "\u00e9\ud800", 1, 2.5, None, True, "ok", Tag.LONG],
                     long: {"x": (long, "ok")}, 3: "y"})
    assert out["k"] == [clip(long), unsurrogate("\u00e9\ud800"), 1, 2.5, None, True, "ok",
                        clip(Tag.LONG)]
    assert len(out["k"][0]) == MAX_TEXT and out["k"][1] == "\u00e9\\ud800"
    assert out[clip(long)] == {"x": [clip(long), "ok"]}  # tuples become lists
    assert out[3] == "y" and list(out) == ["k", clip(long), 3]


def test_values_are_those_of_to_list_at_any_depth() -> None:
    from compaction_audit.findingvalues import frame_rows
    from compaction_audit.pyvalues import values

    inner = pl.Struct({"kind": pl.String, "rank": pl.Int64, "kept": pl.Boolean,
                       "big": pl.UInt64, "share": pl.Float64})
    children = pl.Series("children", [
        [{"child": "s1", "dropped": [{"kind": "quantity", "rank": -5, "kept": True,
                                      "big": 2**64 - 1, "share": 0.1}, None]},
         {"child": "s\u2028\"2\\\n\x00\u00e9", "dropped": []}],
        None, [], [None], [{"child": None, "dropped": None}]],
        dtype=pl.List(pl.Struct({"child": pl.String, "dropped": pl.List(inner)})))
    rows = values(children)
    assert rows == children.to_list()
    assert rows[0][0]["dropped"][0]["share"] == 0.1
    first, second = rows[0]
    assert next(iter(first)) is next(iter(second))  # keys shared, not one per dict
    floats = pl.Series("f", [{"x": float("nan")}, None], dtype=pl.Struct({"x": pl.Float64}))
    got = values(floats)
    assert len(got) == 2 and got[0]["x"] != got[0]["x"] and got[1] is None  # NaN kept
    dates = pl.Series("d", [[{"on": date(2026, 12, 4)}], None],
                      dtype=pl.List(pl.Struct({"on": pl.Date})))
    assert values(dates) == dates.to_list()
    for plain in (pl.Series("s", ["a", None, "a"]), pl.Series("i", [1, None]),
                  pl.Series("l", [["x", None], None, []], dtype=pl.List(pl.String)),
                  pl.Series("e", [], dtype=pl.List(pl.Struct({"x": pl.String})))):
        assert values(plain) == plain.to_list()
    frame = pl.DataFrame({"ri": [1, 2, 3, 4, 5], "children": children})
    assert list(frame_rows(frame)) == frame.to_dicts()


def test_findings_share_equal_strings_across_rows_at_any_depth() -> None:
    from compaction_audit.findingvalues import frame_rows
    from compaction_audit.pyvalues import values

    dropped = pl.Struct({"kind": pl.String, "norm": pl.String})
    column = pl.Series("children", [
        [{"child": "span-1", "dropped": [{"kind": "quantity", "norm": "63000"}]}],
        [{"child": "span-1", "dropped": [{"kind": "quantity", "norm": "63000"}]},
         {"child": "span-2", "dropped": [{"kind": "identifier", "norm": "63000"}]}],
    ], dtype=pl.List(pl.Struct({"child": pl.String, "dropped": pl.List(dropped)})))
    shared: dict[str, str] = {}
    first, second = values(column, shared)
    assert [first, second] == column.to_list()
    a, b, c = first[0], second[0], second[1]
    assert a["child"] is b["child"] and a["child"] is not c["child"]
    assert a["dropped"][0]["kind"] is b["dropped"][0]["kind"]
    assert a["dropped"][0]["norm"] is c["dropped"][0]["norm"]  # across fields too
    assert set(shared) == {"span-1", "span-2", "quantity", "identifier", "63000"}
    # without ``shared``, strings are shared within the call only
    one, two = values(column)
    assert one == first and one[0]["child"] is two[0]["child"]
    assert one[0]["child"] is not first[0]["child"]
    # _rows shares across its chunks of rows (512 each)
    frame = pl.DataFrame({"ri": list(range(600)), "children": [column[0]] * 600},
                         schema={"ri": pl.Int64, "children": column.dtype})
    rows = list(frame_rows(frame))
    assert rows[0]["children"][0]["child"] is rows[599]["children"][0]["child"]


def test_rows_are_converted_a_bounded_number_of_list_elements_at_a_time() -> None:
    """adv75 #1: 300 fold findings of 5,000 dropped facts each were converted at once
    (1.5 M dicts) before any was capped.  A chunk ends before CHUNK_VALUES elements
    (its first row whatever its size), and before CHUNK_ROWS rows."""
    from compaction_audit.findingvalues import CHUNK_ROWS, CHUNK_VALUES, chunks, frame_rows

    inner = pl.List(pl.Struct({"kind": pl.String, "tags": pl.List(pl.String)}))
    big = [{"kind": "k", "tags": ["a", "b"]}] * (CHUNK_VALUES // 3)  # 3 elements each
    frame = pl.DataFrame({"ri": [1, 2, 3, 4],
                          "children": [big, big, [], [{"kind": "k", "tags": None}]]},
                         schema={"ri": pl.Int64, "children": inner})
    assert frame.select(pl.col("children").list.len())["children"].to_list()[0] * 3 \
        == CHUNK_VALUES - CHUNK_VALUES % 3
    assert chunks(frame) == [(0, 1), (1, 3)]  # 2 x (n + 2n) is past the bound
    assert list(frame_rows(frame)) == frame.to_dicts()
    plain = pl.DataFrame({"ri": list(range(CHUNK_ROWS + 1))})
    assert chunks(plain) == [(0, CHUNK_ROWS), (CHUNK_ROWS, CHUNK_ROWS)]
    rows = pl.DataFrame({"ri": list(range(CHUNK_ROWS + 1)),
                         "ids": [["x"]] * (CHUNK_ROWS + 1)})
    assert chunks(rows) == [(0, CHUNK_ROWS), (CHUNK_ROWS, 1)]
