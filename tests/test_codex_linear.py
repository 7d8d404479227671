"""The Codex adapter in work linear in the input on the shapes of the ninth adversarial
pass (issue 11, class 5): a long compaction message searched once per unmatched user
message of the replacement history (F1), and every kept user turn walked again at each
compaction without a replacement history (F8).

Each test checks values computed by hand and a deterministic count of work at n and 2n
(linear work doubles, the old loops quadrupled); never a duration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import codex
from compaction_audit.io.native import read_records
from compaction_audit.recall.literals import Literals
from tests.workcount import lines_run


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}


def _write(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps({"timestamp": "t", **x}) + "\n" for x in lines))
    return str(path)


# --- F1: which replacement-history user messages carry the summary -------------------

def _carriers(tmp_path: Path, n: int) -> str:
    """One user turn, then a compaction whose message is 20 n characters of "a" and whose
    replacement history holds n user messages in no working-set span: "a" * 33 (odd i,
    inside the message: it carries the summary) or "a" * 40 + "b<i>" (even i: new)."""
    history = [_user("a" * 33 if i % 2 else "a" * 40 + f"b{i}") for i in range(n)]
    return _write(tmp_path / f"carriers-{n}.jsonl", [
        {"type": "session_meta", "payload": {"id": "s"}},
        {"type": "response_item", "payload": _user("Keep the port at 8080.")},
        {"type": "compacted", "payload": {"message": "a" * (20 * n),
                                          "replacement_history": history}},
    ])


def test_summary_carriers_are_found_in_one_pass_over_the_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    searched = [0]  # characters of a compaction message searched for a history text
    is_carrier, found_in = codex._is_carrier, Literals.found_in

    def counted_is_carrier(text: str, message: str) -> bool:
        searched[0] += len(message)
        return is_carrier(text, message)

    def counted_found_in(self: Literals, text: str) -> set[str]:
        searched[0] += len(text)
        return found_in(self, text)

    monkeypatch.setattr(codex, "_is_carrier", counted_is_carrier)
    monkeypatch.setattr(Literals, "found_in", counted_found_in)
    work = {}
    for n in (200, 400):
        searched[0] = 0
        path = _carriers(tmp_path, n)
        out = list(codex.records(path))
        work[n] = searched[0]
        read_records(out, path)
        compaction = out[-1][1]
        # the messages inside the message carry it: the model read those, so they are
        # the summary (adv112 #1), not new spans; the turn is folded; the others are
        # new spans of the round
        assert compaction["summaries"][0]["text"] == "\n".join(["a" * 33] * (n // 2))
        assert compaction["summaries"][0]["children"] == ["line-2"]
        assert [s["id"] for s in compaction["spans"]] == [
            f"line-3.{i}" for i in range(0, n, 2)]
        assert [s["text"] for s in compaction["spans"]][:2] == ["a" * 40 + "b0",
                                                               "a" * 40 + "b2"]
    # the message once (20 n); before: once per history message (n x 20 n)
    assert work == {200: 4000, 400: 8000}


@pytest.mark.parametrize(("texts", "message", "want"), [
    (["a" * 32, "a" * 31, "b" * 32], "a" * 40, [True, False, False]),  # 31: too short
    (["x" + "a" * 40], "a" * 40, [True]),  # the message inside the text
    (["  " + "a" * 40 + " "], "a" * 40, [True]),  # equal once stripped
    ([codex.SUMMARY_PREFIX + " anything"], "zzz", [True]),
    (["short"], "short", [True]),  # equal, however short
    (["a" * 32], "", [False]),  # no message: only the prefix carries
])
def test_carriers_match_the_single_test_with_and_without_the_automaton(
        texts: list[str], message: str, want: list[bool]) -> None:
    padded = texts + ["q" * 40] * (codex._Carriers.DIRECT + 1)  # enough for the automaton
    for batch in (texts, padded):
        carries = codex._Carriers(message, batch)
        assert [carries(t) for t in texts] == want
        assert [codex._is_carrier(t, message) for t in texts] == want


# --- F8: compactions without a replacement history ------------------------------------

def _keeps(tmp_path: Path, n: int) -> str:
    """n one-token user turns ("ok"), each answered, then n compactions without a
    replacement history: every turn fits in KEEP_USER_TOKENS and is kept each time."""
    lines: list[dict[str, Any]] = [{"type": "session_meta", "payload": {"id": "s"}}]
    for _ in range(n):
        lines.append({"type": "response_item", "payload": _user("ok")})
        lines.append({"type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "fine"}]}})
    lines += [{"type": "compacted", "payload": {"message": f"summary {j}"}} for j in range(n)]
    return _write(tmp_path / f"keeps-{n}.jsonl", lines)


def test_compactions_without_history_visit_only_what_they_fold(tmp_path: Path) -> None:
    events = {}
    for n in (200, 400):
        path = _keeps(tmp_path, n)
        out, events[n] = lines_run(codex, lambda p=path: list(codex.records(p)))
        read_records(out, path)
        rounds = [r for _, r in out[1:]]
        assert len(rounds) == 2 * n
        turns = [f"line-{2 + 2 * i}" for i in range(n)]
        answers = [f"line-{3 + 2 * i}" for i in range(n)]
        first = rounds[n]
        # the first compaction folds every answer and keeps every turn
        assert first["summaries"][0]["children"] == answers
        assert first["evicted"] == answers
        # each later one folds the summary before it, in entry order, and keeps the turns
        for j in range(1, n):
            line = 2 * n + 2 + j
            assert rounds[n + j]["summaries"][0]["children"] == [f"line-{line - 1}"]
            assert rounds[n + j]["evicted"] == [f"line-{line - 1}"]
        assert not set(turns) & {i for r in rounds for i in r.get("evicted", [])}
    # before: each compaction walked every kept turn twice (about 2 x n x n line events)
    assert events[400] < 2.2 * events[200]


def test_turns_beyond_the_budget_are_folded_oldest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex, "KEEP_USER_TOKENS", 5)
    # turns of 2, 1, 3 and 1 tokens; walking back 1 + 3 = 4, then 1 = 5, then 2 > 0
    texts = ["abcdefg", "ab", "abcdefghij", "a"]
    lines: list[dict[str, Any]] = [{"type": "session_meta", "payload": {"id": "s"}}]
    lines += [{"type": "response_item", "payload": _user(t)} for t in texts]
    lines += [{"type": "compacted", "payload": {"message": "S1"}},
              {"type": "response_item", "payload": _user("abcdefgh")},  # 2 tokens
              {"type": "compacted", "payload": {"message": "S2"}}]
    path = _write(tmp_path / "budget.jsonl", lines)
    out = list(codex.records(path))
    read_records(out, path)
    first, second = out[5][1], out[7][1]
    assert first["summaries"][0]["children"] == ["line-2"]
    # walking back 2 (line 7) + 1 (line 5) = 3, then 3 (line 4) > 2: lines 3 and 4
    # go, with the summary of line 6, in entry order
    assert second["summaries"][0]["children"] == ["line-3", "line-4", "line-6"]
    assert second["evicted"] == ["line-3", "line-4", "line-6"]


def test_an_automaton_past_its_node_limit_is_a_clean_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # nine texts of 32 distinct letters each: 288 nodes below the root, all distinct
    texts = [chr(65 + i) * 32 for i in range(9)]
    lines = [{"type": "session_meta", "payload": {"id": "s"}},
             {"type": "response_item", "payload": _user("Keep the port at 8080.")},
             {"type": "compacted", "payload": {
                 "message": "".join(texts), "replacement_history": [_user(t) for t in texts]}}]
    path = _write(tmp_path / "nodes.jsonl", lines)
    monkeypatch.setattr(codex, "CARRIER_SEARCH_MAX_NODES", 288)
    compaction = list(codex.records(path))[-1][1]
    assert "spans" not in compaction or compaction["spans"] == []  # all nine carry it
    monkeypatch.setattr(codex, "CARRIER_SEARCH_MAX_NODES", 287)
    with pytest.raises(LogError) as err:
        list(codex.records(path))
    assert str(err.value) == (
        f"{path}:3: replacement history too large to search: its unmatched user messages "
        "need more than 287 automaton nodes to be looked for in the compaction message; "
        "see docs/performance.md (limits) (payload.replacement_history)")
