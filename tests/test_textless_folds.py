"""Folds whose summary carries no text are not evaluated by the rules that compare a
fold's text with its children's, and ``diff`` counts them as a candidate checked less
(:mod:`compaction_audit.rules.textless`).  Before, a fold without a summary text was a
silent pass for silent-discriminating-fold, topic-only-fold and negation-flipped, and a
candidate whose logger stopped writing texts "resolved" 725 findings of
research-decay under ``diff --fail-on-new error``, gates passed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gate_app import run
from tests.logs import dump, rnd, session

TEXTLESS = "a fold's summary carries no text to compare its children's text with"


def records(f2_text: str | None = None, texts: bool = True) -> list[dict[str, Any]]:
    """Four rounds: round 1 folds a person's rule into F1, whose text drops its values
    (CA301 fires); round 2 folds a person's request into F2, with ``f2_text`` or none;
    round 3 folds a tool span without text into F3, which has none either (nothing to
    compare: judged).  ``texts=False``: no span or summary carries a text."""
    f2: dict[str, Any] = {"id": "F2", "tokens": 5, "children": ["v"]}
    if f2_text is not None:
        f2["text"] = f2_text
    out = [
        session(session_id="textless"),
        rnd(0, spans=[{"id": "u", "tokens": 30, "source": "user",
                       "text": "Keep the retry limit at 7 and pin lib2 to 4.2.1."},
                      {"id": "t", "tokens": 30, "source": "tool:shell",
                       "text": "lib2 4.2.1 installed"}]),
        rnd(1, summaries=[{"id": "F1", "tokens": 5, "children": ["u"],
                           "text": "Worked on the config."}], evicted=["u"]),
        rnd(2, spans=[{"id": "v", "tokens": 30, "source": "user",
                       "text": "Set pool_size to 16 for the staging pool."}],
            summaries=[f2], evicted=["v"]),
        rnd(3, spans=[{"id": "w", "tokens": 30, "source": "tool:shell"}],
            summaries=[{"id": "F3", "tokens": 5, "children": ["w"]}], evicted=["w"]),
    ]
    if not texts:
        for o in out:
            for item in (*o.get("spans", ()), *o.get("summaries", ())):
                item.pop("text", None)
    return out


def _notes(path: Path) -> dict[tuple[str, str], int]:
    doc = json.loads(run("audit", str(path), "-f", "json").stdout)
    return {(n["code"], n["reason"]): n["rounds"] for n in doc["not_evaluated"]}


def test_the_rounds_of_folds_without_a_summary_text_are_not_evaluated(
        tmp_path: Path) -> None:
    path = dump(records(), tmp_path / "textless.jsonl")
    notes = _notes(path)
    for code in ("CA301", "CA302", "CA304"):  # round 2 only: F3's child has no text
        assert notes[(code, TEXTLESS)] == 1
    out = " ".join(run("audit", str(path)).output.split())
    assert (f"CA301 silent-discriminating-fold: not evaluated at 1 of 4 round(s): {TEXTLESS}"
            ) in out
    assert "round 1 (line 3): fold F1 silently dropped: u:" in out  # F1 is judged
    texted = dump(records("Set pool_size to 16 for the staging pool."),
                  tmp_path / "texted.jsonl")
    assert not [key for key in _notes(texted) if key[1] == TEXTLESS]


def test_a_trace_with_folds_and_no_text_is_not_applicable(tmp_path: Path) -> None:
    path = dump(records(texts=False), tmp_path / "bare.jsonl")
    doc = json.loads(run("audit", str(path), "-f", "json").stdout)
    reason = "not applicable: no span or summary carries a text"
    notes = {(n["code"], n["reason"]): n["rounds"] for n in doc["not_evaluated"]}
    for code in ("CA301", "CA302", "CA304"):
        assert notes[(code, reason)] == 4
    out = " ".join(run("audit", str(path)).output.split())
    assert ("CA301 silent-discriminating-fold, CA302 topic-only-fold, CA304 negation-flipped: "
            f"{reason}") in out


def test_a_candidate_without_summary_texts_fails_the_diff_gates(tmp_path: Path) -> None:
    base = dump(records("Set pool_size to 16 for the staging pool."), tmp_path / "base.jsonl")
    cand = dump(records(), tmp_path / "cand.jsonl")
    result = run("diff", str(base), str(cand), "--fail-on-new", "error")
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert ("the candidate could not be checked as fully as the baseline: CA301 "
            "silent-discriminating-fold not judged at 1 of 3 rounds with a fold (the "
            "baseline: none)") in out  # rounds 1-3 fold; round 0 has none
    assert out.endswith("candidate not fully checked: CA301 silent-discriminating-fold not "
                        "judged at 1 of 3 rounds with a fold")  # no resolved unit: no unread
    swapped = run("diff", str(cand), str(base), "--fail-on-new", "error")
    assert swapped.exit_code == 0, swapped.output
    assert ("baseline not fully checked: CA301 silent-discriminating-fold not judged at 1 "
            "of 3 rounds with a fold") in " ".join(swapped.output.split())
    same = run("diff", str(cand), str(cand), "--fail-on-new", "error")
    assert same.exit_code == 0, same.output
