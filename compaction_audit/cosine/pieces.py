"""wordllama's tokenizer, run on the pieces of a text that its merges never cross:
the same token ids, each distinct piece tokenized once (issue 16, point 4).

wordllama's ``l2_supercat`` tokenizer is Llama 2's: the normalizer puts ``▁`` (U+2581)
before the text and in place of every space, there is no pre-tokenizer, so the BPE
model sees a whole text (up to 16,000 characters) as one word, and merges it in one
priority queue.  That ran at about 2.7 MB/s: 0.16 s of CPU for the 0.43 MB of distinct
texts of the corpus's 2.8 MB Claude Code transcript, most of the embedding's cost.

The split.  A BPE merge joins two adjacent symbols into a token of the vocabulary
whose string is their concatenation.  In this vocabulary no token holds a character
other than ``▁`` followed by ``▁`` (``▁▁▁▁`` and ``▁the`` exist, ``a▁`` and ``x▁y`` do
not), so no merge, at any step, joins a symbol ending in another character with one
starting with ``▁``: the positions where a run of ``▁`` follows another character are
never inside a token.  BPE on the whole word is then BPE on each piece between those
positions, in order (each piece's merges happen in the same relative order as in the
whole word, and none touches another piece).  The pieces are those of
:data:`PIECE` (a run of ``▁`` with the characters up to the next run, or a run at the
end).  Byte fallback works per character, so it does not cross a piece either, and
``<unk>`` never occurs (every byte has its token), so ``fuse_unk`` has nothing to fuse.

When it is used: only for the tokenizer file whose SHA-256 is :data:`VERIFIED_SHA256`
(the one the property above was checked on, by ``tests/test_cosine_pieces.py``, which
also compares the ids with the whole-text tokenizer's on real and generated texts);
any other file is used as it is.  A text holding one of the special tokens'
strings (``<unk>``, ``<s>``, ``</s>``: the tokenizer splits them out before the
normalizer, which then applies to each side) goes to the whole-text tokenizer too.

On that transcript: 40,945 pieces, 8,399 distinct; 0.16 s -> about 0.05 s of CPU.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain
from typing import Any

VERIFIED_SHA256 = "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"
"""SHA-256 of ``wordllama/tokenizers/l2_supercat_tokenizer_config.json`` (wordllama
0.4.0.post1) for which the split is verified."""

SPACE = "\u2581"
"""``▁``, the tokenizer's word boundary mark."""

PIECE = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
"""One piece of a normalized text: a run of ``▁`` (possibly empty, at the start) and the
characters up to the next run; or a run of ``▁`` ending the text.  ``findall`` tiles
the whole string."""

SPECIALS = ("<unk>", "<s>", "</s>")
"""The special tokens' strings, split out of raw text before normalization."""

CACHE_PIECES = 50_000
"""Distinct pieces remembered at most (then the memory starts again); a piece longer
than :data:`CACHE_CHARS` characters is not remembered."""
CACHE_CHARS = 64


class Ids:
    """One text's token ids (``ids``: a list of int), the part of a ``tokenizers``
    ``Encoding`` the embedding reads."""

    __slots__ = ("ids",)

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


def normalized(text: str) -> str:
    """The text as the tokenizer's normalizer makes it: ``▁`` before a non-empty text
    and in place of each space (U+0020 only)."""
    return SPACE + text.replace(" ", SPACE) if text else ""


class PieceTokenizer:
    """A ``tokenizers.Tokenizer`` (the verified one: module docstring) whose
    :meth:`encode_batch_fast` tokenizes each distinct piece once with the BPE model,
    remembering the ids of short pieces for the life of the object.  Other calls are
    the wrapped tokenizer's (``encode_batch``, and ``encode_batch_fast`` with special
    tokens added)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._tokenize = tokenizer.model.tokenize
        # encode_batch_fast (tokenizers >= 0.20) skips the character offsets
        self._whole = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
        self._known: dict[str, list[int]] = {}

    def __getattr__(self, name: str) -> Any:
        if name == "tokenizer":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.tokenizer, name)

    def encode_batch_fast(self, texts: Sequence[str], add_special_tokens: bool = False
                          ) -> list[Any]:
        """The ids of each of ``texts``, equal to the wrapped tokenizer's
        ``encode_batch_fast`` ids (module docstring)."""
        if add_special_tokens:
            return list(self._whole(texts, add_special_tokens=True))
        out: list[Any] = [None] * len(texts)
        whole = [i for i, text in enumerate(texts) if any(s in text for s in SPECIALS)]
        if whole:
            done = self._whole([texts[i] for i in whole], add_special_tokens=False)
            for i, encoding in zip(whole, done, strict=True):
                out[i] = encoding
        for i, text in enumerate(texts):
            if out[i] is None:
                out[i] = Ids(list(chain.from_iterable(
                    self.piece_ids(PIECE.findall(normalized(text))))))
        return out

    def piece_ids(self, found: Sequence[str]) -> list[list[int]]:
        """The ids of each of ``found`` (pieces of normalized text, :data:`PIECE`): from
        the memory, else from the BPE model, remembered when short (at most
        :data:`CACHE_PIECES` of at most :data:`CACHE_CHARS` characters)."""
        known, tokenize = self._known, self._tokenize
        out: list[list[int]] = []
        for piece in found:
            got = known.get(piece)
            if got is None:
                got = [token.id for token in tokenize(piece)]
                if len(piece) <= CACHE_CHARS:
                    if len(known) >= CACHE_PIECES:
                        known.clear()
                    known[piece] = got
            out.append(got)
        return out

    def whole_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The ids of each of ``texts`` (raw: not normalized) by the whole-text
        tokenizer, as :meth:`encode_batch_fast` encodes a text holding a special
        token's string."""
        if not texts:
            return []
        return [list(e.ids) for e in self._whole(list(texts), add_special_tokens=False)]
