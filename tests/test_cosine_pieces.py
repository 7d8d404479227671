"""The tokenizer run on pieces (issue 16, point 4): the same token ids as the whole-text
tokenizer, each distinct piece tokenized once.

- With a stand-in BPE model that records what it is asked: the pieces of hand-made
  texts, each distinct short piece asked once, texts holding a special token's string
  sent whole.
- With the real model (the ``[embed]`` extra): the vocabulary has the property the
  split relies on, the verified hash is the shipped file's, and the ids equal the
  whole-text tokenizer's on hand-made edge cases, on generated texts and on the
  corpus's texts.
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from compaction_audit.cosine import embed, pieces
from compaction_audit.cosine.pieces import SPACE, PieceTokenizer, normalized
from tests.logs import corpus_logs

S = SPACE


class StandIn:
    """A tokenizer whose model gives one id per character (its code point) and records
    each piece; its whole-text encoder gives ``[-1]`` and records each text."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.whole: list[str] = []
        self.model = SimpleNamespace(tokenize=self._tokenize)

    def _tokenize(self, piece: str) -> list[Any]:
        self.asked.append(piece)
        return [SimpleNamespace(id=ord(c)) for c in piece]

    def encode_batch_fast(self, texts: list[str], add_special_tokens: bool = False
                          ) -> list[Any]:
        self.whole.extend(texts)
        return [SimpleNamespace(ids=[-1]) for _ in texts]


def test_normalized_as_the_tokenizer_does() -> None:
    assert normalized("") == ""
    assert normalized("a b") == f"{S}a{S}b"
    assert normalized(" a  b ") == f"{S}{S}a{S}{S}b{S}"
    assert normalized("a\tb\nc") == f"{S}a\tb\nc"  # only U+0020 becomes the mark


@pytest.mark.parametrize(("text", "expected"), [
    ("", []),
    ("fix the bug", [f"{S}fix", f"{S}the", f"{S}bug"]),
    ("  indented  code ", [f"{S}{S}{S}indented", f"{S}{S}code", S]),
    ("a   ", [f"{S}a", f"{S}{S}{S}"]),
    ("tab\tand\nnewline", [f"{S}tab\tand\nnewline"]),
    (f"x{S}y", [f"{S}x", f"{S}y"]),  # a mark in the text is a boundary too
])
def test_pieces_split_where_a_mark_run_starts(text: str, expected: list[str]) -> None:
    found = pieces.PIECE.findall(normalized(text))
    assert found == expected
    assert "".join(found) == normalized(text)  # the pieces tile the text


def test_each_distinct_piece_is_tokenized_once() -> None:
    stand_in = StandIn()
    tok = PieceTokenizer(stand_in)
    out = tok.encode_batch_fast(["the bug", "the fix", "bug"])
    assert sorted(stand_in.asked) == sorted([f"{S}the", f"{S}bug", f"{S}fix"])
    assert [e.ids for e in out] == [[ord(c) for c in normalized(t)]
                                    for t in ["the bug", "the fix", "bug"]]
    tok.encode_batch_fast(["bug the"])  # remembered across calls
    assert len(stand_in.asked) == 3 and stand_in.whole == []


def test_long_pieces_are_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "CACHE_CHARS", 4)
    stand_in = StandIn()
    tok = PieceTokenizer(stand_in)
    tok.encode_batch_fast(["abc abcdef", "abc abcdef"])
    assert stand_in.asked == [f"{S}abc", f"{S}abcdef", f"{S}abcdef"]


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "CACHE_PIECES", 2)
    stand_in = StandIn()
    tok = PieceTokenizer(stand_in)
    tok.encode_batch_fast(["a b c"])  # the third piece starts the memory again
    assert len(tok._known) == 1
    tok.encode_batch_fast(["a"])
    assert stand_in.asked == [f"{S}a", f"{S}b", f"{S}c", f"{S}a"]


def test_special_token_strings_go_to_the_whole_text_tokenizer() -> None:
    stand_in = StandIn()
    tok = PieceTokenizer(stand_in)
    out = tok.encode_batch_fast(["plain", "a <s> b", "x</s>", "<unk>", "<s"])
    assert stand_in.whole == ["a <s> b", "x</s>", "<unk>"]
    assert [e.ids for e in out][1:4] == [[-1], [-1], [-1]]
    assert out[4].ids == [ord(c) for c in f"{S}<s"]
    assert tok.encode_batch_fast(["plain"], add_special_tokens=True)[0].ids == [-1]


class OlderStandIn(StandIn):
    """A tokenizer of before ``encode_batch_fast`` (tokenizers < 0.20)."""

    encode_batch_fast = None  # type: ignore[assignment]

    def encode_batch(self, texts: list[str], add_special_tokens: bool = False) -> list[Any]:
        return StandIn.encode_batch_fast(self, texts, add_special_tokens)


def test_an_older_tokenizer_encodes_whole_texts_with_encode_batch() -> None:
    stand_in = OlderStandIn()
    out = PieceTokenizer(stand_in).encode_batch_fast(["<s> x", "y"])
    assert [e.ids for e in out] == [[-1], [ord(S), ord("y")]]
    assert stand_in.whole == ["<s> x"]


# ---------------------------------------------------------------------- the real model


def _shipped() -> tuple[Path, Any]:
    """The shipped tokenizer file and the loaded (wrapped) tokenizer, or a skip."""
    loaded = embed.load_model()
    spec = importlib.util.find_spec("wordllama")
    if loaded is None or spec is None or not spec.submodule_search_locations:
        pytest.skip("the [embed] extra (wordllama) is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    return root.joinpath(*embed.VOCAB), loaded[1]


def test_the_verified_file_has_the_property_the_split_needs() -> None:
    path, tokenizer = _shipped()
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != pieces.VERIFIED_SHA256:
        assert not isinstance(tokenizer, PieceTokenizer)  # another file: used whole
        pytest.skip("wordllama ships another tokenizer file than the verified one")
    assert isinstance(tokenizer, PieceTokenizer)
    config = orjson.loads(data)
    vocab, merges = config["model"]["vocab"], config["model"]["merges"]
    # no token holds another character followed by the mark
    assert [t for t in vocab if re.search(f"[^{S}]{S}", t)] == []
    # every merge makes the vocabulary token that concatenates its two sides
    assert all(m.replace(" ", "", 1) in vocab for m in merges)
    # every byte has its fallback token: no <unk> to fuse
    assert all(f"<0x{b:02X}>" in vocab for b in range(256))
    assert config["pre_tokenizer"] is None
    assert config["normalizer"] == {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": S},
        {"type": "Replace", "pattern": {"String": " "}, "content": S}]}
    assert sorted(t["content"] for t in config["added_tokens"]) == sorted(pieces.SPECIALS)


EDGES = ["", " ", "  ", "a", " a", "a ", "  two  spaces  ", "\t tab", "line\n  indented",
         "    def f():\n        return 1\n", f"already{S}marked {S}{S}x", S, f"{S} ",
         "unicode: naïve café ünïcödé, 日本語のテキスト, emoji 🙂🚀 and 👩‍💻",
         "control \x00 \x07 \x1b[31m chars", "<s>", "a<s>b", "</s> end", "<unk><unk>",
         "<s", "s>", "</", "x" * 3000, "word " * 500, "ab" * 2000 + " " + "cd" * 10,
         "url https://example.com/a_b-c?d=e&f=g#h", "numbers 3.14159 1,000,000 0x1F",
         "combining e\u0301 and \u200b zero width \u00a0 nbsp"]


def _random_texts(n: int, seed: int = 7) -> list[str]:
    alphabet = [" ", " ", " ", "  ", "\n", "\t", S, "e", "t", "a", "th", "in", "er", "q",
                "Z", "0", "9", ".", ",", "_", "-", "é", "ü", "日", "本", "🙂", "\u200d",
                "<", ">", "/", "s", "unk", "<s>", "def", "return", "the", "▁▁"]
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
            for _ in range(n)]


def _same_ids(tokenizer: PieceTokenizer, texts: list[str]) -> None:
    plain = tokenizer.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    fast = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    differ = [t for t, a, b in zip(texts, plain, fast, strict=True) if a.ids != b.ids]
    assert differ == []


def test_the_same_ids_as_the_whole_text_tokenizer() -> None:
    _, tokenizer = _shipped()
    if not isinstance(tokenizer, PieceTokenizer):
        pytest.skip("wordllama ships another tokenizer file than the verified one")
    _same_ids(tokenizer, EDGES)
    _same_ids(PieceTokenizer(tokenizer.tokenizer), _random_texts(3000))  # a fresh memory
    _same_ids(tokenizer, _random_texts(3000))  # and one that remembers


def test_the_same_ids_on_the_corpus_texts() -> None:
    _, tokenizer = _shipped()
    if not isinstance(tokenizer, PieceTokenizer):
        pytest.skip("wordllama ships another tokenizer file than the verified one")
    cut = sorted(t[:embed.TEXT_CHARS] for t in corpus_strings())
    assert len(cut) > 100
    _same_ids(PieceTokenizer(tokenizer.tokenizer), cut)


def corpus_strings() -> set[str]:
    """Every string of the corpus's agent logs (a skip when the corpus is absent)."""
    logs = corpus_logs()
    if not logs:
        pytest.skip("the corpus is absent")
    texts: set[str] = set()
    for log in logs:
        for line in log.read_bytes().splitlines():
            _strings(orjson.loads(line), texts)
    return texts


def _strings(value: Any, into: set[str]) -> None:
    """Every string inside a decoded JSON value."""
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, into)
    elif isinstance(value, list):
        for item in value:
            _strings(item, into)
