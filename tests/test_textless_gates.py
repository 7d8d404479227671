"""Folds without a summary text, judged the same in every log and compared fairly by
``diff`` (adv143): a native log that names its own ``source_format`` (F1), a
compaction whose summary has no text (F5), a rule that judged one fold and skipped
another (F6), and the gate's share taken over the rounds with a fold (F3, F4) of
whichever fold rule ran (F2).  Logs written for these cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.gate_app import run
from tests.logs import dump, rnd, session

TEXTLESS = "a fold's summary carries no text to compare its children's text with"
RULE = "a fold's summary carries no text"

FACT = "Set pool_size to {n} for the staging pool."


def fold(k: int, text: str | None, *, compaction: bool = False) -> dict[str, Any]:
    """Round ``k``: a person's span ``p<k>`` stating a number, folded at once into
    ``F<k>`` with ``text`` (None: no text), the span evicted; ``compaction``: the
    round records the fold as a compaction."""
    summary: dict[str, Any] = {"id": f"F{k}", "tokens": 5, "children": [f"p{k}"]}
    if text is not None:
        summary["text"] = text
    extra = {"compaction": {"summary_id": f"F{k}", "kind": "auto"}} if compaction else {}
    return rnd(k, spans=[{"id": f"p{k}", "tokens": 30, "source": "user",
                          "text": FACT.format(n=k + 10)}],
               summaries=[summary], evicted=[f"p{k}"], **extra)


def log(rounds: list[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    return [session(session_id="gates", **fields),
            rnd(0, spans=[{"id": "a", "tokens": 30, "source": "user",
                           "text": "Audit the staging pools."}]), *rounds]


def faithful(k: int) -> str:
    return FACT.format(n=k + 10)


def _doc(path: Path, *args: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run("audit", str(path), "-f", "json", *args).stdout)
    return doc


def _notes(doc: dict[str, Any]) -> dict[tuple[str, str], int]:
    return {(n["code"], n["reason"]): n["rounds"] for n in doc["not_evaluated"]}


def test_a_native_log_naming_its_own_format_notes_its_textless_folds(
        tmp_path: Path) -> None:
    records = log([fold(1, "Worked on it."), fold(2, None)], source_format="my-loop")
    notes = _notes(_doc(dump(records, tmp_path / "mine.jsonl")))
    for code in ("CA301", "CA302", "CA304"):
        assert notes[(code, TEXTLESS)] == 1  # round 2; round 1 is judged
    same = _notes(_doc(dump(log([fold(1, "Worked on it."), fold(2, None)]),
                            tmp_path / "plain.jsonl")))
    assert same == notes


def test_a_compaction_whose_summary_has_no_text_is_not_checked(tmp_path: Path) -> None:
    path = dump(log([fold(1, faithful(1)), fold(2, None, compaction=True)]),
                tmp_path / "bare.jsonl")
    doc = _doc(path)
    (c,) = doc["sessions"][0]["compactions"] if "sessions" in doc else doc["compactions"]
    assert (c["lost_checked"], c["not_checked_reason"], c["lost"]) == (
        False, "no summary text", [])
    assert not [k for k in _notes(doc) if k[1] == TEXTLESS]  # counted once, as not checked
    out = " ".join(run("audit", str(path)).output.split())
    assert "(1 compaction could not be checked)" in out
    assert "1 compaction could not be checked: no summary text" in out
    assert "lost 0 fact" not in out
    texted = _doc(dump(log([fold(1, faithful(1)), fold(2, "Worked on it.", compaction=True)]),
                       tmp_path / "texted.jsonl"))
    (t,) = texted["sessions"][0]["compactions"] if "sessions" in texted else texted[
        "compactions"]
    # F2 lost 'pool_size to 12'; 'pool_size' and 'staging' F1's text still holds
    assert t["lost_checked"] is True and [x["text"] for x in t["lost"]] == ["pool_size to 12"]


def test_a_rule_that_judged_a_fold_of_textless_children_judged_something(
        tmp_path: Path) -> None:
    records = log([fold(1, None),
                   rnd(2, spans=[{"id": "w", "tokens": 30, "source": "tool:shell"}],
                       summaries=[{"id": "G", "tokens": 5, "children": ["w"],
                                   "text": "Ran the shell tool."}], evicted=["w"])])
    path = dump(records, tmp_path / "mixed.jsonl")
    doc = _doc(path)
    assert _notes(doc)[("CA301", TEXTLESS)] == 1
    assert not {"CA301", "CA302", "CA304"} & set(doc["unjudged"])
    junit = run("audit", str(path), "-f", "junit").stdout
    assert "silent-discriminating-fold" in junit and RULE not in junit
    alone = _doc(dump(log([fold(1, None)]), tmp_path / "alone.jsonl"))
    assert alone["unjudged"]["CA301"] == TEXTLESS  # its only fold: judged nothing


def _diff(tmp_path: Path, base: list[dict[str, Any]], cand: list[dict[str, Any]],
          *args: str) -> tuple[int, str]:
    result = run("diff", str(dump(base, tmp_path / "base.jsonl")),
                 str(dump(cand, tmp_path / "cand.jsonl")), "--fail-on-new", "error",
                 "--isolated", *args)
    return result.exit_code, " ".join(result.output.split())


def test_a_candidate_that_folds_more_often_at_the_same_share_is_not_checked_less(
        tmp_path: Path) -> None:
    # baseline: 1 of 2 rounds with a fold lacks a text; candidate: 2 of 4.  Over every
    # round it would be 1 of 3 against 2 of 5, "checked less".
    base = log([fold(1, faithful(1)), fold(2, None)])
    cand = log([fold(1, faithful(1)), fold(2, None), fold(3, faithful(3)), fold(4, None)])
    code, out = _diff(tmp_path, base, cand)
    assert "could not be checked as fully" not in out and "not fully checked" not in out
    assert code == 0, out
    more = log([fold(1, faithful(1)), fold(2, None), fold(3, None), fold(4, None)])
    code, out = _diff(tmp_path, base, more)  # 3 of 4 against 1 of 2
    assert code == 1, out
    assert ("checked as fully as the baseline: CA301 silent-discriminating-fold not judged "
            "at 3 of 4 rounds with a fold (the baseline: 1 of 2)") in out


def test_a_candidate_whose_only_fold_has_no_text_is_checked_less(tmp_path: Path) -> None:
    # baseline: 4 rounds with a fold, the last without text (1 of 4 rounds with a fold,
    # 1 of 5 rounds); candidate: the same rounds, one fold, without text (1 of 1; 1 of 5)
    base = log([fold(1, "Worked on it."), fold(2, "Worked on it."), fold(3, "Worked on it."),
                fold(4, None)])
    cand = log([rnd(1), rnd(2), rnd(3), fold(4, None)])
    code, out = _diff(tmp_path, base, cand)
    assert code == 1, out
    assert ("CA301 silent-discriminating-fold not judged at 1 of 1 round with a fold (the "
            "baseline: 1 of 4)") in out
    # CA301's units resolved: 'staging' and 'pool_size' (rounds 1-3), 'pool_size to 11',
    # 'to 12', 'to 13' (one round each)
    assert "so its 5 resolved finding(s) may be unread" in out


def test_the_gate_names_the_fold_rule_that_ran(tmp_path: Path) -> None:
    config = tmp_path / "compaction-audit.toml"
    config.write_text('ignore = ["CA301"]\n')
    base = log([fold(1, "Worked on it."), fold(2, "Worked on it.")])
    cand = log([fold(1, "Worked on it."), fold(2, None)])
    result = run("diff", str(dump(base, tmp_path / "base.jsonl")),
                 str(dump(cand, tmp_path / "cand.jsonl")), "--fail-on-new", "error",
                 "--config", str(config))
    out = " ".join(result.output.split())
    assert result.exit_code == 1, out
    assert ("CA302 topic-only-fold not judged at 1 of 2 rounds with a fold (the baseline: "
            "none)") in out


@pytest.mark.parametrize("kept", [True, False])
def test_a_compaction_over_a_summary_with_no_text_is_not_checked(tmp_path: Path,
                                                                  kept: bool) -> None:
    # adv144 F3: F3 (no text) folds F2 (no text), which folds p2 (a text): only F3's
    # direct child was asked for a text, and the compaction read as checked, "lost 3
    # fact(s)" (p2 offloaded, kept below) or "lost 0 fact(s)" (p2 evicted at round 2)
    inner = rnd(2, summaries=[{"id": "F2", "tokens": 5, "children": ["p2"]}],
                **({"offloaded": ["p2"]} if kept else {"evicted": ["p2"]}))
    outer = rnd(3, summaries=[{"id": "F3", "tokens": 5, "children": ["F2"]}],
                evicted=["F2", "p2"] if kept else ["F2"],
                compaction={"summary_id": "F3", "kind": "auto"})
    stated = rnd(1, spans=[{"id": "p2", "tokens": 30, "source": "user",
                            "text": FACT.format(n=12)}])
    path = dump(log([stated, inner, outer]), tmp_path / "nested.jsonl")
    (c,) = _doc(path)["compactions"]
    assert (c["lost_checked"], c["not_checked_reason"], c["lost"]) == (
        False, "no summary text", [])
    # the compaction's own summary with a text: checked, whatever F2 carries
    outer["summaries"][0]["text"] = "Worked on the pools."
    (t,) = _doc(dump(log([stated, inner, outer]), tmp_path / "texted.jsonl"))["compactions"]
    assert (t["lost_checked"], t["not_checked_reason"]) == (True, None)


def test_a_chain_of_summaries_with_no_text_reaches_the_text_below() -> None:
    # F3 at any depth, each level found in the order the folds were logged: F4 folds
    # F3 and a textless F2b, F3 folds F2, F2 folds the text p2; F9 folds only F2b,
    # which folds nothing with a text
    from compaction_audit.recall.bare import _textless_over_text

    edges = pl.DataFrame({"parent": ["F2", "F2b", "F3", "F4", "F4", "F9"],
                          "child": ["p2", "q", "F2", "F3", "F2b", "F2b"],
                          "ri": [2, 2, 3, 4, 4, 5]})
    own = pl.DataFrame({"id": ["p2", "q", "F2", "F2b", "F3", "F4", "F9"],
                        "t": [True, False, False, False, False, False, False]})
    assert _textless_over_text(edges, own).to_list() == ["F2", "F3", "F4"]
    # no text anywhere, or text everywhere: nothing to reach
    assert _textless_over_text(edges, own.with_columns(t=False)).len() == 0
    assert _textless_over_text(edges, own.with_columns(t=True)).len() == 0
