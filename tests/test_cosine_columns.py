"""The model's cosines on columns (issue 14): the same floats, bit for bit, as the
per-text loop (``embed.cosines``), on hand-made edge cases, generated texts, the
corpus's strings and a generated session; and the pieces they rest on (the blank test,
the exact segment sums, the fallback when a sum could round)."""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.cosine import columns, embed
from compaction_audit.cosine.rebuild import rebuild
from compaction_audit.io.native import read_native
from compaction_audit.simulate.scale import write_scale_session
from tests.test_cosine_pieces import EDGES, _random_texts, corpus_strings

np = pytest.importorskip("numpy")


def _model() -> tuple[Any, Any]:
    loaded = embed.load_model()
    if loaded is None:
        pytest.skip("the [embed] extra (wordllama) is not installed")
    if not columns.applies(*loaded):
        pytest.skip("wordllama ships another tokenizer file than the verified one")
    return loaded


def _bits(values: list[float | None]) -> list[str | None]:
    """Each float's 8 bytes (so 0.0 and -0.0 differ), None kept."""
    return [None if v is None else struct.pack("<d", v).hex() for v in values]


def _same(texts: list[str], query: str) -> list[float | None]:
    table, tokenizer = _model()
    loop = embed.cosines(texts, query, embed.MODEL_NAME)
    got = columns.cosines(pl.Series(texts, dtype=pl.String), query, table, tokenizer)
    assert got is not None and got.dtype == pl.Float64
    assert _bits(got.to_list()) == _bits(loop)
    return loop


BLANKS = ["\x1c", " \x1d\x1e\x1f ", "\x85", "\u3000\u2028", "\u00a0\t\n"]
"""Texts Python's ``str.strip`` empties (Polars' ``strip_chars`` keeps the first four)."""
CUTS = ["é" * 15_999 + "日本語 the end", "word " * 3_300, "x" * 16_000 + " tail"]
"""Texts cut at 16,000 characters, some in the middle of multibyte characters' runs."""


@pytest.mark.parametrize("query", ["fix the unicode tokenizer bug", "", " ", "<s> query </s>",
                                   "naïve 日本語 🙂 " * 10])
def test_the_same_floats_as_the_loop_on_edge_cases(query: str) -> None:
    values = _same(list(dict.fromkeys([*EDGES, *BLANKS, *CUTS])), query)
    if query.strip():
        assert sum(v is not None for v in values) > 20


def test_blank_texts_have_no_cosine_and_others_keep_their_place() -> None:
    values = _same(["fix the parser", *BLANKS, "lunch"], "parser bug")
    assert values[1:-1] == [None] * len(BLANKS)
    assert values[0] is not None and values[-1] is not None


def test_the_same_floats_on_generated_texts_in_small_chunks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = list(dict.fromkeys(_random_texts(2_000, seed=11)))
    whole = _same(texts, "the queried text, 日本")
    monkeypatch.setattr(columns, "CHUNK_TEXTS", 37)
    monkeypatch.setattr(columns, "CHUNK_CHARS", 500)  # and some chunks end on size
    monkeypatch.setattr(columns, "GATHER_ROWS", 3)  # long segments added in chunks
    assert _bits(_same(texts, "the queried text, 日本")) == _bits(whole)


def test_the_same_floats_on_the_corpus_strings() -> None:
    _model()
    ordered = sorted(corpus_strings())
    random.Random(3).shuffle(ordered)
    _same(ordered[:6_000], "audit the compaction of an agent's context window")


def test_a_sum_that_could_round_falls_back_to_the_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    table, tokenizer = _model()
    texts = ["fix the parser bug", "lunch soup"]
    monkeypatch.setattr(columns, "EXACT_BELOW", 1.0)
    assert columns.cosines(pl.Series(texts), "parser", table, tokenizer) is None
    column = embed.cosine_column(pl.Series(texts), "parser", embed.MODEL_NAME)
    assert _bits(column.to_list()) == _bits(embed.cosines(texts, "parser", embed.MODEL_NAME))


def test_chunks_hold_texts_up_to_a_count_and_a_size(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns, "CHUNK_TEXTS", 3)
    monkeypatch.setattr(columns, "CHUNK_CHARS", 10)
    sizes = np.array([4, 4, 4, 30, 1, 1, 1, 1, 9, 2])
    assert columns._chunks(sizes) == [(0, 2), (2, 3), (3, 4), (4, 7), (7, 9), (9, 10)]
    assert columns._chunks(np.array([], dtype=np.int64)) == []


def test_python_whitespace_is_every_character_str_strip_removes() -> None:
    every = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    assert columns.python_whitespace() == every


def test_segment_sums_add_each_segment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer-valued rows (exact sums): segments of 0 to 12 rows, one of 40, ids
    repeating; with blocks of 5 rows the long one is added in chunks."""
    rng = np.random.default_rng(14)
    rows = rng.integers(-50, 50, size=(30, 6)).astype(np.float32)
    lengths = np.array([*rng.integers(0, 13, size=25), 40, 0])
    idx = rng.integers(0, 30, size=int(lengths.sum()))
    naive = np.zeros((len(lengths), 6))
    at = 0
    for seg, length in enumerate(lengths.tolist()):
        for k in idx[at:at + length]:
            naive[seg] += rows[k]
        at += length
    for gather in (1_024, 5):
        monkeypatch.setattr(columns, "GATHER_ROWS", gather)
        got = columns.segment_sums(rows, idx, lengths)
        assert got.dtype == np.float64 and np.array_equal(got, naive)


def test_a_rebuilt_session_is_the_same_by_either_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _model()
    path = tmp_path / "scale.jsonl"
    write_scale_session(path, 60, 200, seed=5, texts=True)
    session = read_native(str(path))
    fast = rebuild(session)
    monkeypatch.setattr(columns, "applies", lambda *_: False)
    loop = rebuild(session)
    assert fast.texts == loop.texts > 100
    for a, b in ((fast.items.sort("id"), loop.items.sort("id")), (fast.series, loop.series)):
        assert a.write_ipc(None).getvalue() == b.write_ipc(None).getvalue()
