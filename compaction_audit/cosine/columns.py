"""The model's cosines of a column of texts, computed on columns: each distinct piece of
text tokenized and embedded once, each text summed from its pieces (issue 14).

The same floats as :func:`compaction_audit.cosine.embed.cosines` with the model, bit for
bit, without Python per text or per piece:

- **Pieces in Polars.**  The texts are cut to ``embed.TEXT_CHARS`` characters, the
  blank ones (Python's ``str.strip``, :func:`python_blank`) left out, each normalized
  as the tokenizer does and split into the pieces of
  :data:`~compaction_audit.cosine.pieces.PIECE` by one ``str.extract_all`` (Rust's
  regex: the same leftmost-first matches).  A text holding a special token's string
  is one piece, tokenized whole, as :class:`~compaction_audit.cosine.pieces.PieceTokenizer`
  does.  Only the distinct pieces reach Python, to be tokenized (or found in the
  tokenizer's memory: :meth:`~compaction_audit.cosine.pieces.PieceTokenizer.piece_ids`).
- **Each distinct piece's vector once.**  A piece's vector is the sum of its tokens'
  rows of the table, a text's the sum of its pieces' vectors, in float64, summed by
  :func:`segment_sums`.  The order of the additions differs from the per-text loop
  (``embed._pool``), but the sums are exact, so they are the same bits: the table's
  values are float16, multiples of 2**-24, and while a text's absolute values add up
  to less than 2**29 (:data:`EXACT_BELOW`; checked: :func:`exact`) every partial sum
  is a multiple of 2**-24 below 2**53 in magnitude, which float64 holds exactly.  The
  shipped table's values are below 8.02, so a text of 16,000 characters (at most
  64,001 tokens) stays below 2**19.
- **Then as before**: the mean over the tokens, each row's norm, the dot product with
  the query's vector (``np.einsum``, no BLAS: see ``embed._pool``), a text at a time
  in numpy's own per-row reductions, so the same values whatever the rows around it.

Measured on the grid's 10,000 x 2,000 full text cell (5,106 rounds, 25,781 distinct
texts; ``benchmarks/run.py``): see docs/performance-log.md.  Used by the audit's own
process (which has Polars); the embedding helper process (:mod:`.server`), which does
not load Polars, keeps the per-text loop: the same numbers.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from typing import Any

import polars as pl

from compaction_audit.cosine import pieces
from compaction_audit.cosine.embed import BATCH, TEXT_CHARS, TokenTable

CHUNK_TEXTS = 4_096
"""Texts embedded at a time: their vectors (4,096 x 256 float64, 8 MB) and their
pieces' are held together, then only the cosines are kept (1,024 to 16,384 measured on
the 254 MB text cell: 4,096 the fastest)."""
CHUNK_CHARS = 4_000_000
"""Characters embedded at a time, at most (but one text): their pieces' table (about a
piece per 5 characters, each a string and its row numbers) stays in tens of MB when
the texts are long (each up to ``embed.TEXT_CHARS``)."""
GATHER_ROWS = 1_024
"""Rows gathered at a time by :func:`segment_sums` (1 MB of float32 or 2 MB of float64:
within the cache; on the 254 MB text cell's 306,306 pieces 512 and 2,048 rows took
0.09 s, 8,192 0.15 s)."""
EXACT_BELOW = 2.0 ** 29
"""A float64 sum of multiples of 2**-24 is exact while the absolute values add up to
less than this (2**53 units of 2**-24)."""

_PIECE = f"{pieces.SPACE}*[^{pieces.SPACE}]+|{pieces.SPACE}+"
""":data:`~compaction_audit.cosine.pieces.PIECE`'s pattern, for Polars."""


class Scratch:
    """Arrays reused from chunk to chunk (by name, grown when a chunk needs more rows):
    allocated anew for each chunk, the vectors' 8 MB came from the C heap once the
    allocator's mapping threshold had grown, and about 20 MB of freed heap stayed with
    the process after the rebuild (measured on the 254 MB text cell)."""

    def __init__(self) -> None:
        self._arrays: dict[str, Any] = {}

    def rows(self, name: str, n: int, dim: int, dtype: Any) -> Any:
        """An uninitialized ``n`` x ``dim`` array of ``dtype``."""
        import numpy as np

        got = self._arrays.get(name)
        if got is None or got.shape[0] < n or got.shape[1] != dim or got.dtype != dtype:
            got = self._arrays[name] = np.empty((n, dim), dtype=dtype)
        return got[:n]


@lru_cache(maxsize=1)
def python_whitespace() -> str:
    """The characters Python's ``str.strip()`` removes (``str.isspace``), every one below
    U+3001 (a test checks the whole range): ``embed.cosines`` leaves out the texts that
    hold nothing else."""
    return "".join(c for c in map(chr, range(0x3001)) if c.isspace())


def python_blank(texts: pl.Expr) -> pl.Expr:
    """True for a text that Python's ``str.strip()`` makes empty."""
    return texts.str.strip_chars(python_whitespace()) == ""


def applies(table: Any, tokenizer: Any) -> bool:
    """True when the loaded model is the one the columns compute for: the shipped
    float16 table (:class:`~compaction_audit.cosine.embed.TokenTable`) and the verified
    tokenizer on pieces.  Otherwise (a stand-in model in tests, another tokenizer file)
    the per-text loop runs."""
    return isinstance(table, TokenTable) and isinstance(tokenizer, pieces.PieceTokenizer)


def cosines(texts: pl.Series, query: str, table: TokenTable,
            tokenizer: pieces.PieceTokenizer) -> pl.Series | None:
    """Cosine of each of ``texts`` (distinct) to ``query``, a Float64 column in their
    order: null for a blank text, a text with no token, or when the query's vector is
    zero.  None when a sum would not be exact (:func:`exact`; never with the shipped
    table): the caller then runs the per-text loop."""
    import numpy as np

    cut = pl.select(pl.lit(texts, pl.String).str.slice(0, TEXT_CHARS).alias("text")
                    ).with_row_index("i")
    kept = cut.filter(~python_blank(pl.col("text")))
    q = _vectors(pl.Series([query[:TEXT_CHARS]]), table, tokenizer, Scratch())
    if q is None:
        return None
    qv = q[0]
    qn = float(np.linalg.norm(qv))
    values = np.full(kept.height, np.nan)  # null (a zero query: every one)
    scratch = Scratch()
    for start, end in _chunks(kept["text"].str.len_chars().to_numpy()) if qn else ():
        emb = _vectors(kept["text"].slice(start, end - start), table, tokenizer, scratch)
        if emb is None:
            return None
        norms = np.concatenate([np.linalg.norm(emb[at:at + BATCH], axis=1)
                                for at in range(0, len(emb), BATCH)])
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.einsum("ij,j->i", emb, qv) / (norms * qn)
        cos[(norms == 0.0) | ~np.isfinite(cos)] = np.nan
        values[start:end] = cos
    found = kept.select("i", pl.Series("cosine", values, dtype=pl.Float64).fill_nan(None))
    return (cut.select("i").join(found, on="i", how="left", maintain_order="left")
            ["cosine"])


def _chunks(sizes: Any) -> list[tuple[int, int]]:
    """``(start, end)`` of consecutive runs of texts of ``sizes`` characters: at most
    :data:`CHUNK_TEXTS` texts and, past the first, :data:`CHUNK_CHARS` characters."""
    import numpy as np

    ends = np.cumsum(sizes, dtype=np.int64)
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(ends):
        before = int(ends[start - 1]) if start else 0
        end = int(np.searchsorted(ends, before + CHUNK_CHARS, side="right"))
        end = min(max(end, start + 1), start + CHUNK_TEXTS, len(ends))
        out.append((start, end))
        start = end
    return out


def _vectors(texts: pl.Series, table: TokenTable, tokenizer: pieces.PieceTokenizer,
             scratch: Scratch) -> Any:
    """The embeddings of ``texts`` (cut, float64, len x dim): the mean of each text's
    token rows, a zero row for a text with no token.  None when a sum would not be
    exact."""
    import numpy as np

    whole = texts.str.contains_any(list(pieces.SPECIALS))
    spaced = pl.lit(pieces.SPACE) + pl.col("text").str.replace_all(" ", pieces.SPACE,
                                                                  literal=True)
    occurrences = (  # an empty text (a query) has no piece
        pl.DataFrame({"text": texts, "whole": whole}).with_row_index("doc")
        .select("doc", "whole", pl.when(pl.col("whole")).then(pl.concat_list("text"))
                .when(pl.col("text") != "").then(spaced.str.extract_all(_PIECE))
                .alias("piece"))
        .explode("piece").drop_nulls("piece")
    )
    distinct = occurrences.select("piece", "whole").unique("piece", maintain_order=True)
    normal = distinct.filter(~pl.col("whole"))["piece"].to_list()
    special = distinct.filter(pl.col("whole"))["piece"].to_list()
    ids = [*tokenizer.piece_ids(normal), *tokenizer.whole_ids(special)]
    order = pl.DataFrame({"piece": [*normal, *special]}, schema={"piece": pl.String}
                         ).with_row_index("k")
    found = occurrences.join(order, on="piece", how="left", maintain_order="left")
    docs, which = found["doc"].to_numpy(), found["k"].to_numpy()
    piece_len = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.clip(np.fromiter(chain.from_iterable(ids), dtype=np.int64,
                               count=int(piece_len.sum())), 0, table.shape[0] - 1)
    rows = table.rows(flat)
    counts = np.bincount(docs, minlength=len(texts))
    lengths = np.bincount(docs, weights=piece_len[which], minlength=len(texts)
                          ).astype(np.int64)  # integers below 2**53: exact
    if not exact(rows, flat, int(lengths.max(initial=0))):
        return None
    vectors = segment_sums(rows, flat, piece_len, scratch)
    out = segment_sums(vectors, which, counts, scratch, "texts")
    has = lengths > 0
    out[has] /= lengths[has][:, None]
    return out


def exact(rows: Any, ids: Any, tokens: int) -> bool:
    """True when a float64 sum of up to ``tokens`` of the table's rows ``ids`` cannot
    round (module docstring): the largest absolute value times ``tokens`` is below
    :data:`EXACT_BELOW`.  The rows are float16 values (a ``TokenTable``), so multiples
    of 2**-24."""
    import numpy as np

    if len(ids) == 0:
        return True
    used = np.unique(ids)
    return float(np.abs(rows[used]).max()) * tokens < EXACT_BELOW


def segment_sums(rows: Any, idx: Any, lengths: Any, scratch: Scratch | None = None,
                 name: str = "pieces") -> Any:
    """Sums of consecutive segments of ``rows[idx]``: segment j is the next
    ``lengths[j]`` entries of ``idx``; float64, ``len(lengths)`` x dim, a zero row for an
    empty segment.  Segments of one length are gathered together (at most
    :data:`GATHER_ROWS` rows at a time) and reduced in one numpy call, so the Python
    loop runs once per distinct length and chunk, not per segment (a segment longer than
    :data:`GATHER_ROWS` is added a chunk at a time).  The additions within a segment
    follow its order, but a block at a time with a cast: exact only for exact sums, as
    :func:`cosines` has them.  The result and the gathered blocks are ``scratch``'s
    arrays (the result is ``scratch``'s array ``name``: valid until its next use)."""
    import numpy as np

    dim = rows.shape[1]
    scratch = scratch or Scratch()
    out = scratch.rows(name, len(lengths), dim, np.float64)
    out.fill(0.0)
    starts = np.cumsum(lengths) - lengths
    # one block reused (no page faults), filled by ``take`` with mode "clip": with its
    # default mode ("raise") ``take`` fills ``out`` through a buffer, twice as slow
    # (the indices are in range: clipping changes none)
    block = scratch.rows(f"block {rows.dtype}", GATHER_ROWS, dim, rows.dtype)
    for length in np.unique(lengths[lengths > 0]).tolist():
        segs = np.flatnonzero(lengths == length)
        if length > GATHER_ROWS:
            for seg in segs.tolist():
                at = int(starts[seg])
                for lo in range(at, at + length, GATHER_ROWS):
                    part = idx[lo:min(lo + GATHER_ROWS, at + length)]
                    np.take(rows, part, axis=0, out=block[:len(part)], mode="clip")
                    out[seg] += np.add.reduce(block[:len(part)], axis=0, dtype=np.float64)
            continue
        step = max(1, GATHER_ROWS // length)
        offsets = np.arange(length, dtype=np.int64)
        for lo in range(0, len(segs), step):
            part = segs[lo:lo + step]
            got = block[:len(part) * length]
            np.take(rows, idx[(starts[part][:, None] + offsets).ravel()], axis=0, out=got,
                    mode="clip")
            out[part] = np.add.reduce(got.reshape(len(part), length, dim), axis=1,
                                      dtype=np.float64)
    return out
