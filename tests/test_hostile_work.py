"""Work linear in the input on the shapes of the fresh adversarial pass (issue 11,
class 5): a list joined onto every round, and adapters that walked what they had seen
once per message.

Each test checks values computed by hand and a deterministic measure of work or size
at n and 2n (linear work doubles, quadratic work quadruples); never a duration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import cline, gemini_cli, openhands
from compaction_audit.io.native import read_native
from compaction_audit.rules.base import Context, ids_per_round
from compaction_audit.rules.recall import RecallFloor
from compaction_audit.series import build_series
from compaction_audit.settings import Settings
from tests.joinsize import joined_sizes
from tests.logs import LogWriter, rnd
from tests.workcount import lines_run


def _fold_all_then_quiet(write_log: LogWriter, n: int) -> Path:
    """n spans with text at round 0, one summary folding and evicting them all at
    round 1, then n rounds where nothing happens."""
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": f"m{i}", "tokens": 1, "text": f"t{i}"} for i in range(n)]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": [f"m{i}" for i in range(n)]}],
            evicted=[f"m{i}" for i in range(n)]),
    ]
    records += [rnd(r) for r in range(2, n + 2)]
    return write_log(records, name=f"fold-all-{n}.jsonl")


def test_recall_floor_names_new_spans_once_not_once_per_round(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    largest = {}
    for n in (1000, 2000):
        session = read_native(str(_fold_all_then_quiet(write_log, n)))
        ctx = Context(session, build_series(session), Settings())
        RecallFloor().evaluate(ctx)  # the analysis it reads is cached on the context
        with monkeypatch.context() as patch:
            sizes = joined_sizes(patch)
            fired = RecallFloor().evaluate(ctx).fired
        # every span is under the floor from round 1 (folded and evicted: the summary
        # "S" keeps none of their text) to the last round; they are new at round 1 only
        assert fired["ri"].to_list() == list(range(1, n + 2))
        assert fired["below_floor"].to_list() == [n] * (n + 1)
        assert fired["new_spans"][0].to_list() == sorted(f"m{i}" for i in range(n))
        assert fired["new_spans"].list.len().to_list() == [n] + [0] * n
        largest[n] = max(sizes)
    # before: a join copied the list of n ids into each of the n + 1 rounds (10,000 x
    # 10,000 asked for 8 GB and aborted the process); now every frame is linear in n
    assert largest[2000] < 2.5 * largest[1000]


def test_ids_per_round_copies_the_ids_of_one_round_once() -> None:
    rounds = pl.DataFrame({"ri": [3, 1, 2, 4], "n": [30, 10, 20, 40]})
    pairs = pl.DataFrame({"ri": [2, 2, 4, 9], "id": ["b", "a", "c", "z"]})
    out = ids_per_round(rounds, pairs, "names")
    # rounds in order, ids sorted, none where the round has none, round 9 not a row
    assert out.to_dicts() == [{"ri": 1, "n": 10, "names": []},
                              {"ri": 2, "n": 20, "names": ["a", "b"]},
                              {"ri": 3, "n": 30, "names": []},
                              {"ri": 4, "n": 40, "names": ["c"]}]
    assert out.schema["names"] == pl.List(pl.String)
    size = {}
    for n in (2000, 4000):
        many = pl.DataFrame({"ri": list(range(n))})
        one = pl.DataFrame({"ri": [0] * n, "id": [f"id{i}" for i in range(n)]})
        out = ids_per_round(many, one, "names")
        assert out["names"].list.len().to_list() == [n] + [0] * (n - 1)
        size[n] = out["names"].estimated_size()
    assert size[4000] < 2.5 * size[2000]


# -- adapters: Python lines run in the adapter's own file, at n and 2n ---------------

def _cline_pair(tmp_path: Path, n: int) -> str:
    """n messages; the compaction file keeps the last n / 2 and adds n / 2 new ones."""
    folder = tmp_path / f"cline-{n}"
    folder.mkdir()
    msgs = [{"id": f"m{i}", "role": ("user", "assistant")[i % 2],
             "content": [{"type": "text", "text": f"t{i}"}]} for i in range(n)]
    summary = {"id": "sum", "role": "user", "metadata": {"kind": "compaction_summary"},
               "content": [{"type": "text", "text": "Context summary: x"}]}
    new = [{"id": f"x{i}", "role": "user", "content": [{"type": "text", "text": f"u{i}"}]}
           for i in range(n // 2)]
    (folder / "S.messages.json").write_text(
        json.dumps({"version": 1, "sessionId": "S", "messages": msgs}))
    (folder / "S.compaction.json").write_text(
        json.dumps({"version": 1, "sessionId": "S", "messages": [summary, *msgs[n // 2:], *new]}))
    return str(folder / "S.messages.json")


def test_cline_pair_compares_the_files_in_linear_work(tmp_path: Path) -> None:
    lines = {}
    for n in (1000, 2000):
        out, lines[n] = lines_run(cline, lambda n=n: list(cline.records(_cline_pair(tmp_path, n))))
        rounds = [r for _, r in out[1:]]
        assert len(rounds) == n // 2 + 1 + n // 2  # a user turn per 2 messages, compaction, new
        fold = rounds[n // 2]
        half = [f"m{i}" for i in range(n // 2)]
        assert (fold["summaries"][0]["children"], fold["evicted"]) == (half, half)
        assert fold["compaction"]["messages_removed"] == n // 2
        assert [r["spans"][0]["id"] for r in rounds[n // 2 + 1:]] == [
            f"x{i}" for i in range(n // 2)]
    # before: each message seen was looked for in the whole compaction file
    assert lines[2000] < 2.5 * lines[1000]


def test_cline_compaction_message_with_a_list_id_is_not_hashed(tmp_path: Path) -> None:
    folder = tmp_path / "list-id"
    folder.mkdir()
    msgs = [{"id": "m0", "role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "yo"}]}]
    summary = {"id": "sum", "role": "user", "metadata": {"kind": "compaction_summary"},
               "content": [{"type": "text", "text": "Context summary: x"}]}
    odd = {"id": [1], "role": "user", "content": [{"type": "text", "text": "new"}]}
    (folder / "S.messages.json").write_text(json.dumps({"sessionId": "S", "messages": msgs}))
    (folder / "S.compaction.json").write_text(
        json.dumps({"sessionId": "S", "messages": [summary, msgs[1], odd]}))
    # was: "internal error: TypeError: unhashable type: 'list'", then (adv22) read as a
    # message the messages file never had; since adv42 a field the reader reads that
    # has the wrong type is an error naming it, never read as something else
    with pytest.raises(LogError, match=r"expected a string \(messages\[2\]\.id\)"):
        list(cline.records(str(folder / "S.messages.json")))


def _gemini_rewrites(tmp_path: Path, n: int) -> str:
    """n user messages; a ``$set.messages`` rewrite restating them (new ids, same text)
    plus n / 2 new ones; a compression keeping the first n / 2; the same history again
    with message n - 1 restated after it was folded."""
    def user(mid: str, text: str) -> dict[str, Any]:
        return {"id": mid, "type": "user", "content": text}

    kept = [user("snap", "<state_snapshot>x</state_snapshot>"),
            *(user(f"k{i}", f"msg {i}") for i in range(n // 2))]
    lines: list[dict[str, Any]] = [
        {"sessionId": "s", "projectHash": "p", "startTime": "t", "kind": "main"},
        *(user(f"m{i}", f"msg {i}") for i in range(n)),
        {"$set": {"messages": [*(user(f"k{i}", f"msg {i}") for i in range(n)),
                               *(user(f"w{i}", f"new {i}") for i in range(n // 2))]}},
        {"$set": {"messages": kept}},
        {"$set": {"messages": [*kept, user("z", f"msg {n - 1}")]}},
    ]
    path = tmp_path / f"gemini-{n}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def test_gemini_rewrites_match_the_working_set_in_linear_work(tmp_path: Path) -> None:
    lines = {}
    for n in (1000, 2000):
        path = _gemini_rewrites(tmp_path, n)
        out, lines[n] = lines_run(gemini_cli, lambda p=path: list(gemini_cli.records(p)))
        rounds = [r for _, r in out[1:]]
        # a turn per message; the restated ones are known by their text, the new ones
        # open turns; the compression folds the second half and the new ones
        assert [r["spans"][0]["id"] for r in rounds[:n + n // 2]] == [
            *(f"m{i}" for i in range(n)), *(f"w{i}" for i in range(n // 2))]
        folded = [*(f"m{i}" for i in range(n // 2, n)), *(f"w{i}" for i in range(n // 2))]
        compaction = rounds[n + n // 2]
        assert compaction["evicted"] == folded
        assert compaction["summaries"][0]["children"] == folded
        assert compaction["compaction"]["messages_removed"] == n
        # after the compression, only message n - 1 (folded) is new again
        assert [s["id"] for s in rounds[-1]["spans"]] == ["z"]
        assert len(rounds) == n + n // 2 + 2
    # before: each rewritten message gathered the keys of every span seen
    assert lines[2000] < 2.5 * lines[1000]


def test_openhands_event_forgotten_often_in_linear_work(tmp_path: Path) -> None:
    """n message events, then n condensations that each forget the first: the first
    evicts it, each later one finds nothing left, in linear work.  (The same event id
    reused n times, the shape this first measured, is an error since adv73.)"""
    lines = {}
    for n in (1000, 2000):
        says = [{"id": i, "source": "agent", "action": "message", "args": {"content": "x"}}
                for i in range(n)]
        forgets = [{"id": n + i, "source": "agent", "action": "condensation",
                    "args": {"forgotten_event_ids": [0]}} for i in range(n)]
        path = tmp_path / f"oh-{n}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in says + forgets))
        out, lines[n] = lines_run(openhands, lambda p=path: list(openhands.records(str(p))))
        rounds = [r for _, r in out[1:]]
        assert [s["id"] for s in rounds[0]["spans"]] == [str(i) for i in range(n)]
        assert rounds[0]["evicted"] == ["0"]
        assert len(rounds) == n
        assert not any("evicted" in r for r in rounds[1:])
        # the later ones fold nothing: none removed, and could not be checked (adv65)
        assert [r["compaction"]["messages_removed"] for r in rounds] == [1] + [0] * (n - 1)
        assert "unchecked" not in rounds[0]["compaction"]
        assert all("unchecked" in r["compaction"] for r in rounds[1:])
    assert lines[2000] < 2.5 * lines[1000]


def _analysed(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    """The recall analysis of the log at ``path``, and the largest frame (estimated
    bytes) any of its joins made, eager or in a lazy plan."""
    from compaction_audit.recall.analysis import analyse

    session = read_native(str(path))
    series = build_series(session)
    with monkeypatch.context() as patch:
        sizes = joined_sizes(patch)
        recall = analyse(session, series)
    return recall, max(sizes)


def _one_span_of_many_facts(write_log: LogWriter, k: int) -> Path:
    """One span stating k numbers and k spans without text, all folded into a summary
    that keeps none of them, and evicted."""
    text = "See /etc/app/main.conf for the rest. " + " ".join(
        f"Set the limit to {i + 2} MB." for i in range(k))
    spans = [{"id": "c0", "tokens": 10, "text": text}] + [
        {"id": f"e{i}", "tokens": 1} for i in range(k)]
    kids = [str(s["id"]) for s in spans]
    return write_log([rnd(0, spans=spans),
                      rnd(1, summaries=[{"id": "S", "tokens": 1, "children": kids,
                                         "text": "done"}], evicted=kids)],
                     name=f"facts-{k}.jsonl")


def test_recall_analysis_never_copies_a_text_per_fact(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A span's text was repeated on each of its discriminators and joined again, and
    a one-row list of lost facts copied onto every fold edge: 10,000 facts asked for
    5.7 GB (issue 11, class 5, F3's class in the recall analysis)."""
    largest = {}
    for k in (1000, 2000):
        recall, largest[k] = _analysed(_one_span_of_many_facts(write_log, k), monkeypatch)
        folds = recall.folds.filter(pl.col("child") == "c0")
        numbers = [d["text"] for d in folds["dropped"][0] if d["kind"] == "quantity"]
        assert len(numbers) == k  # every number dropped by the fold, once
        assert recall.folds.height == k + 1  # one row per fold edge
    assert largest[2000] < 2.5 * largest[1000]


def _long_summary_over_many_leaves(write_log: LogWriter, k: int) -> Path:
    """k one-line spans, each with a number, folded by one summary whose text is long
    prose (about 40 characters per leaf) that keeps none of them."""
    spans = [{"id": f"s{i}", "tokens": 1, "text": f"Set the limit to {i + 2} MB."}
             for i in range(k)]
    prose = " ".join("the team talked about the plan at length" for _ in range(k))
    kids = [f"s{i}" for i in range(k)]
    return write_log([rnd(0, spans=spans),
                      rnd(1, summaries=[{"id": "S", "tokens": 1, "children": kids,
                                         "text": prose}], evicted=kids)],
                     name=f"long-summary-{k}.jsonl")


def test_a_long_summary_is_never_copied_onto_each_leaf(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 200 KB summary over 5,000 leaves was copied onto every fold edge and closure
    pair and aborted the process (issue 11, class 5, the sixth pass's F1): every join
    of the recall analysis stays linear in the input."""
    largest = {}
    for k in (500, 1000):
        recall, largest[k] = _analysed(_long_summary_over_many_leaves(write_log, k),
                                       monkeypatch)
        dropped = recall.folds["dropped"].list.len().to_list()
        assert dropped == [1] * k  # each leaf's number, dropped by the fold
    assert largest[1000] < 2.5 * largest[500]


def _one_fact_dropped_every_few_rounds(write_log: LogWriter, n: int) -> Path:
    """A span stating the same fact at round 3k, folded at round 3k + 2 (k < n) by a
    summary that keeps nothing, and evicted there; span "b" states it from round 0 to
    its eviction at round 4.  The fact's key is dropped at n rounds and held over
    intervals between them (the shape of adv15 F4's trace, where a key dropped at
    1,200 rounds was joined with each of its 80 intervals)."""
    fact = "Set the limit to 42 MB."
    records: list[dict[str, Any]] = []
    for k in range(n):
        spans = [{"id": f"a{k}", "tokens": 1, "text": fact}]
        if k == 0:
            spans.append({"id": "b", "tokens": 1, "text": fact})
        records.append(rnd(3 * k, spans=spans))
        records.append(rnd(3 * k + 1, **({"evicted": ["b"]} if k == 1 else {})))
        records.append(rnd(3 * k + 2, summaries=[{"id": f"S{k}", "tokens": 1,
                                                  "children": [f"a{k}"], "text": "done"}],
                           evicted=[f"a{k}"]))
    return write_log(records, name=f"dropped-{n}.jsonl")


def test_a_fact_dropped_at_many_rounds_is_looked_up_once_per_drop(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each drop of a key was joined with every interval over which something held
    the key, then filtered: drops x intervals rows, growing with rounds squared (1.4
    million rows on an 18 MB trace, an abort in Rust on 73 MB under a 4 GB address
    space: adv15 F4, issue 11 class 5)."""
    from compaction_audit.recall.analysis import analyse

    largest = {}
    for n in (100, 200):
        session = read_native(str(_one_fact_dropped_every_few_rounds(write_log, n)))
        with monkeypatch.context() as patch:
            sizes = joined_sizes(patch)
            recall = analyse(session, build_series(session))
        largest[n] = max(sizes)
        lost = recall.lost.filter(pl.col("key") == "quantity:42 mb")
        # the fold at round 2 drops it while "b" (born at 0) still holds it; the one at
        # round 5 drops it with nothing left: the first loss, by the fold S1
        assert lost.select("cause", "fold", "fold_round", "lost_round").rows() == [
            ("fold", "S1", 5, 5)]
    assert largest[200] < 2.5 * largest[100]
