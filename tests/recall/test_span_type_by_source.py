"""Span types decided by the source alone (issue 14): texts without any of
``spantypes.TEXT_MATTERS`` are typed once per source, in one vectorized pass."""

from __future__ import annotations

import random
from typing import Any

import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall.analysis import items as items_mod
from compaction_audit.recall.spantypes import TEXT_MATTERS, span_type
from compaction_audit.simulate.scale import write_scale_session

SOURCES = [None, "", "user", "assistant", "shell", "tool_call:Bash", "tool_result:Read",
           "tool_call:Task", "tool_result:TodoWrite", "harness:skill", "system", "user:meta",
           "developer"]
PIECES = ["word ", "Requirements:", " - item", "12: x", "12\u2192 y", "\t", "!", "`ls`",
          "bash-input>", "system-reminder>", "Caveat: The messages below", " session ",
          "# AGENTS.md", "Constraints", "* ", "1. ", ":", "/"]


def _text(rng: random.Random, with_breaks: bool) -> str:
    parts = [rng.choice(PIECES) for _ in range(rng.randint(0, 8))]
    if with_breaks:
        parts = [p + rng.choice(TEXT_MATTERS[:11]) if rng.random() < 0.4 else p for p in parts]
    return "".join(parts)


def test_a_text_without_those_strings_is_typed_by_its_source() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(4000):
        text = _text(rng, with_breaks=False)
        if any(s in text for s in TEXT_MATTERS):
            continue
        for src in SOURCES:
            assert span_type(src, text) == span_type(src, None), (src, text)
            checked += 1
    assert checked > 30_000
    # with a break the text decides: each of these differs from its source's own type
    assert span_type("user", "<bash-input>ls</bash-input>") == "tool_output"
    assert span_type("shell", "Constraints:\n- never push to main") == "spec"
    assert span_type("user", "<command-name>/compact</command-name>") == "harness"
    assert span_type("shell", "1\u2192a\n2\u2192b\n3\u2192c") == "tool_output"


@pytest.mark.parametrize("seed", [0, 1])
def test_typed_items_reads_a_single_line_text_once_per_source(tmp_path: Any, seed: int,
                                                              monkeypatch: Any) -> None:
    path = tmp_path / "scale.jsonl"
    write_scale_session(str(path), 40, 60, seed=seed, texts=True)
    session = read_native(str(path))
    calls: list[tuple[str | None, str | None]] = []

    def counted(src: str | None, text: str | None) -> str:
        calls.append((src, text))
        return span_type(src, text)

    monkeypatch.setattr(items_mod, "span_type", counted)
    typed = items_mod.typed_items(session)
    spans = typed.filter(typed["kind"] == "span")
    # the same types as each text read on its own
    assert spans["stype"].to_list() == [span_type(s, t) for s, t in zip(
        spans["source"].to_list(), spans["text"].to_list(), strict=True)]
    distinct = spans.select("source", "text").unique().height
    sources = spans["source"].n_unique()
    assert distinct > 100  # was one call per distinct (source, text)
    assert len(calls) == sources and all(text is None for _, text in calls)
