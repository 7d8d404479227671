"""Cosine of texts to a query: the shipped embedding model, else a lexical TF-IDF.

**Model** (the ``[embed]`` extra: ``pip install 'compaction-audit[embed]'``):
wordllama's ``l2_supercat`` token embeddings, 256 dimensions, average-pooled; the
weights (``weights/l2_supercat_256.safetensors``, 16 MB) and the tokenizer
(``tokenizers/l2_supercat_tokenizer_config.json``) ship inside the wordllama wheel.
They are opened from the installed package's own folder directly (the weights mapped
and converted row by row as texts use them: :class:`TokenTable`; the tokenizer with
``tokenizers``): wordllama's ``WordLlama.load`` is not called, because it looks for
files in a cache and falls back to a download; nothing here can reach the network.
Each distinct text is embedded once, :data:`BATCH` texts at a time (in the audit's
own process, on columns: :func:`cosine_column`, :mod:`~compaction_audit.cosine.columns`).
:func:`start_loading` loads the model in a background thread while the log is read, or
hands the work to the helper process the ``audit`` command started before its imports
(:mod:`~compaction_audit.cosine.server`: the same code, the same numbers).

**Lexical fallback** (always available): TF-IDF cosine, computed in Polars.  Terms
are lower-cased words (``\\w+``); a term's weight in a text is
``(1 + ln tf) * (ln((N + 1) / (df + 1)) + 1)`` (sublinear term frequency, smoothed
inverse document frequency over the N distinct texts of the session plus the query),
and the cosine is the dot product of the L2-normalized weight vectors.  It measures
shared vocabulary, not meaning: a paraphrase scores lower than with the model.

Which one runs: the model when wordllama is installed, else the fallback; the
environment variable ``COMPACTION_AUDIT_EMBED`` = ``lexical`` forces the fallback
(``model`` requires the model and raises :class:`ModelUnavailable` without it).

Texts are cut to :data:`TEXT_CHARS` characters before either method (a 1 MB tool
output is judged by its start).  An empty text has no cosine (null).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import os
import threading
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction_audit.cosine import pieces, server
from compaction_audit.errors import UsageError

if TYPE_CHECKING:
    import polars as pl

# Polars and the line reader are imported where they are used: the embedding helper
# process (cosine/server.py) loads this module without them.

TEXT_CHARS = 16_000
"""Characters of each text that are embedded."""
BATCH = 256
"""Texts per model batch."""
CHUNK_ROWS = 65_536
"""Token vectors pooled at a time: 64 MB of float32 at most, whatever the texts (256
texts of 16,000 characters are up to a million tokens)."""
METHODS = ("auto", "model", "lexical")
ENV = server.ENV
"""Environment variable choosing the method: ``auto`` (default), ``model``, ``lexical``."""
MODEL_NAME = "wordllama l2_supercat 256-d"
LEXICAL_NAME = "lexical TF-IDF"


class ModelUnavailable(UsageError):
    """``COMPACTION_AUDIT_EMBED=model`` but the wordllama extra is not installed, or
    another value than :data:`METHODS` (the CLI reports it in one line, exit 2)."""


WEIGHTS = ("weights", "l2_supercat_256.safetensors", "embedding.weight")
"""wordllama's weights: folder and file inside its package, and the tensor's name."""
VOCAB = ("tokenizers", "l2_supercat_tokenizer_config.json")
"""wordllama's tokenizer: folder and file inside its package."""


class TokenTable:
    """wordllama's token-embedding table (vocabulary x 256), read from its safetensors
    file as the texts need it.

    The file stores the table in float16 (32,000 x 256, 16 MB).  It is mapped (read
    whole only where the file system cannot map it); :meth:`rows` makes float32 copies
    of the rows a batch of token ids uses (the exact values of the float16 ones: the
    same numbers as the whole table converted at once), so a small log converts a few
    thousand rows, not 32,000 (issue 16, point 4: reading and converting the whole
    table was 0.03 s of the load's 0.13 s of CPU).  Rows once made stay made, for the
    life of the process.

    The safetensors layout (a little-endian 8-byte header length, a JSON header giving
    each tensor's ``dtype``, ``shape`` and ``data_offsets`` from the end of the header,
    then the data) is read here because the ``safetensors`` package has no call that
    reads rows by index.  Raises :class:`ValueError` when the file does not hold a 2-D
    float16 tensor ``name`` of the size its header gives (a damaged file).
    """

    def __init__(self, path: Path, name: str) -> None:
        import mmap

        import numpy as np
        import orjson

        with open(path, "rb") as handle:
            head = handle.read(8)
            size = int.from_bytes(head, "little") if len(head) == 8 else -1
            total = os.fstat(handle.fileno()).st_size
            if not 2 <= size <= total - 8:
                raise ValueError(f"{path}: not a safetensors file (header length {size})")
            try:
                entry = orjson.loads(handle.read(size))[name]
                start, end = (int(x) for x in entry["data_offsets"])
                rows, dim = (int(x) for x in entry["shape"])
                dtype = entry["dtype"]
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                raise ValueError(f"{path}: no 2-D tensor {name!r} in its header") from None
            if dtype != "F16" or rows < 1 or dim < 1 or end - start != rows * dim * 2 \
                    or not 0 <= start <= end <= total - 8 - size:
                raise ValueError(f"{path}: tensor {name!r} ({dtype!r}, {rows} x {dim}, "
                                 f"bytes {start} to {end}) is not float16 of that shape "
                                 "within the file")
            try:
                data: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                offset = 8 + size + start
            except (OSError, ValueError):  # a file system that cannot map: read it
                handle.seek(8 + size + start)
                data, offset = handle.read(end - start), 0
        self._half = np.frombuffer(data, dtype="<f2", count=rows * dim,
                                   offset=offset).reshape(rows, dim)
        # pages of an empty array are taken from the system when first written
        self._full = np.empty((rows, dim), dtype=np.float32)
        self._made = np.zeros(rows, dtype=bool)
        self._lock = threading.Lock()
        self.shape = (rows, dim)

    def rows(self, ids: Any) -> Any:
        """The float32 table (vocabulary x dim) with at least the rows of ``ids`` (an
        int64 array of valid ids) made; other rows are undefined."""
        import numpy as np

        with self._lock:
            need = np.zeros(len(self._made), dtype=bool)
            need[ids] = True
            need &= ~self._made
            if need.any():
                new = np.flatnonzero(need)
                self._full[new] = self._half[new]
                self._made[new] = True
        return self._full


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
"""The variables OpenBLAS reads, in its order, for its thread count."""


def import_numpy() -> Any:
    """numpy, imported with one OpenBLAS thread when this is its first import and none
    of :data:`BLAS_THREADS` is set (the environment is left as it was afterwards).

    The embedding calls no BLAS routine that threads help (see :func:`_pool`), and
    OpenBLAS starts a thread per core when numpy loads it, whose start-up took 0.04 s
    of CPU of numpy's 0.09 s on 2 cores (issue 16, point 4).  The thread count is read
    once per process: a program that wants threaded BLAS beside the auditor imports
    numpy before it, or sets one of the variables.  Raises ImportError without numpy.
    """
    import sys

    if ("numpy" in sys.modules or any(name in os.environ for name in BLAS_THREADS)
            or not _may_set_env()):
        import numpy
        return numpy
    os.environ[BLAS_THREADS[0]] = "1"
    try:
        import numpy
    finally:
        if os.environ.get(BLAS_THREADS[0]) == "1":
            del os.environ[BLAS_THREADS[0]]
    return numpy


def _may_set_env() -> bool:
    """Whether this thread may change the environment: the main thread only.  glibc's
    ``setenv`` is not safe beside another thread's ``getenv``: a Ray worker crashed in
    Polars' ``getenv`` while the model loaded in the background thread, which set and
    unset the BLAS variable (adv66 #7, once).  In that thread numpy loads with the BLAS
    threads it picks, and nothing is set."""
    return threading.current_thread() is threading.main_thread()


@lru_cache(maxsize=1)
def _load() -> tuple[Any, Any] | None:
    if _may_set_env():  # belt and braces: no hub lookups (the package's __init__,
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # which would look, is not run)
    try:
        import_numpy()  # TokenTable's; a missing numpy is a missing extra
        from tokenizers import Tokenizer

        # the package's folder, without running its __init__ (which imports pydantic,
        # requests and its loader: a quarter of a second spent on nothing used here)
        spec = importlib.util.find_spec("wordllama")
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    weights = root.joinpath(*WEIGHTS[:2])
    vocab = root.joinpath(*VOCAB)
    if not weights.is_file() or not vocab.is_file():
        return None
    table = TokenTable(weights, WEIGHTS[2])
    config = vocab.read_bytes()
    tokenizer = Tokenizer.from_str(config.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    if hashlib.sha256(config).hexdigest() == pieces.VERIFIED_SHA256:
        return table, pieces.PieceTokenizer(tokenizer)  # the same ids, a third of the time
    return table, tokenizer


_LOCK = threading.Lock()
_START_LOCK = threading.Lock()
_started: threading.Thread | None = None
_HELPER_LOCK = threading.Lock()
_helper: server.Helper | None = None

HELPER = True
"""Whether the embedding may use the helper process the command started
(:mod:`~compaction_audit.cosine.server`); False keeps every load and embedding in
this process."""


def load_model() -> tuple[Any, Any] | None:
    """``(table, tokenizer)`` from wordllama's package folder: the token-embedding
    table (a :class:`TokenTable`, vocabulary x 256) and a ``tokenizers.Tokenizer``
    without padding or truncation, wrapped in a
    :class:`~compaction_audit.cosine.pieces.PieceTokenizer` when it is the verified
    file (the same ids, each distinct piece of text tokenized once).  None when
    wordllama (or numpy, safetensors, tokenizers) is not installed or its files are
    missing.

    Loaded once per process (each worker of ``audit_paths`` loads it once, for all its
    traces); a call made while :func:`start_loading`'s thread is loading waits for it.
    Errors other than a missing package (a damaged file) are raised to the caller."""
    with _LOCK:
        return _load()


def forget_model() -> None:
    """Drop the loaded model, and end the helper process if there is one (tests: load
    again under other conditions)."""
    with _LOCK:
        _load.cache_clear()
    _end_helper()


def _end_helper() -> None:
    global _helper
    with _HELPER_LOCK:
        helper, _helper = _helper, None
    if helper is not None:
        helper.close()


def _helper_ready() -> bool:
    """True when the helper process has the model loaded (waiting for it if it is
    still loading); a helper that has not, or cannot, is ended and forgotten."""
    global _helper
    with _HELPER_LOCK:
        helper = _helper
        if helper is None or not HELPER:
            return False
        if helper.ready():
            return True
        _helper = None
        return False


def _load_quietly() -> None:
    # an error is not cached: the audit's own call raises it again, where it reports
    with contextlib.suppress(Exception):
        load_model()


def start_loading() -> bool:
    """Start loading the model beside the audit, so that the load overlaps with reading
    the log (about 0.13 s of CPU: importing numpy, parsing the tokenizer, mapping the
    weights).  In a helper process when the command started one before the auditor's
    modules loaded (:func:`compaction_audit.cosine.server.start_early`; and
    :data:`HELPER`): :func:`method` and :func:`cosines` then use it, and do the work
    here if it fails.  Else in a background thread, and :func:`load_model` waits for
    it, or finds it loaded.  (A helper started here, after the imports, was measured
    slower than the thread on logs under 1 MB: it is not ready before the rebuild.)

    Does nothing, and returns False, when the environment forces the lexical method
    (or holds a value the audit will reject), when the model is loaded already, or a
    load is under way.  Only *when* the model is loaded depends on it, never which
    method is used: that stays :func:`method`'s documented choice."""
    global _started, _helper
    wanted = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "model") or _load.cache_info().currsize:
        return False
    with _START_LOCK:
        if _started is not None and _started.is_alive():
            return False
        with _HELPER_LOCK:
            if _helper is not None and _helper.status in (None, "model"):
                return False  # loading, or loaded, there
            if HELPER:
                _helper = server.take_early()
                if _helper is not None:
                    return True
        _started = threading.Thread(target=_load_quietly, name="compaction-audit-embed-load",
                                    daemon=True)
        _started.start()
        atexit.register(_settle, _started)
    return True


SETTLE_SECONDS = 10.0
"""How long an exit waits for a model load still under way (it takes about 0.1 s)."""


def _settle(thread: threading.Thread) -> None:
    """Wait (at most :data:`SETTLE_SECONDS`) for the background load before the
    interpreter shuts down: a daemon thread still inside numpy's or safetensors' import
    when an early error ended the run made the exit crash now and then (SIGSEGV, exit
    139, after the one-line error; about 1 run in 40; issue 11)."""
    thread.join(SETTLE_SECONDS)


PEEK_BYTES = 1 << 16
"""Bytes of a log's start that :func:`start_loading_for` looks at."""


def start_loading_for(path: str) -> bool:
    """:func:`start_loading` when ``path`` looks as if it carries texts: a file that
    can be read twice (not ``-`` or a FIFO: see
    :func:`~compaction_audit.io.lines.reads_once`) whose first :data:`PEEK_BYTES`
    (decompressed) hold a ``"text"`` key.  Never an object storage URL: its peek
    would be a second HEAD and ranged GET of the object, each waiting out a store
    that does not answer, before the read (adv16b F2: every trickled object cost two
    request timeouts).  A hint only: a wrong guess costs a load
    nobody uses (in the background) or a load done when the rebuild asks for it, as
    without the hint; the audit's results do not depend on it.  Never raises."""
    from compaction_audit.io.lines import open_binary, reads_once
    from compaction_audit.io.remote import is_url

    try:
        if reads_once(path) or ("://" in path and is_url(path)):
            return False
        with open_binary(path) as handle:
            head = handle.read(PEEK_BYTES)
    except Exception:  # the reader reports a bad file, not this hint
        return False
    return b'"text"' in head and start_loading()


def method() -> str:
    """The method that :func:`cosines` will use: :data:`MODEL_NAME` or
    :data:`LEXICAL_NAME` (raises :class:`ModelUnavailable`, see the module docstring)."""
    wanted = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if wanted not in METHODS:
        raise ModelUnavailable(f"{ENV} must be one of {', '.join(METHODS)}, got {wanted!r}")
    if wanted == "lexical":
        return LEXICAL_NAME
    if _helper_ready() or load_model() is not None:
        return MODEL_NAME
    if wanted == "model":
        raise ModelUnavailable(f"{ENV}=model but the embedding model is not installed: "
                               "pip install 'compaction-audit[embed]'")
    return LEXICAL_NAME


def cosines(texts: list[str], query: str, how: str | None = None) -> list[float | None]:
    """Cosine of each of ``texts`` (distinct, not checked) to ``query``, in order.

    Values are in [-1, 1] for the model, [0, 1] for the lexical method; null for a
    text with no word (or an all-zero embedding).  ``how``: :data:`MODEL_NAME` or
    :data:`LEXICAL_NAME` (default :func:`method`).
    """
    how = how or method()
    cut = [t[:TEXT_CHARS] for t in texts]
    blank = [not t.strip() for t in cut]
    if any(blank):  # no word: no cosine (the tokenizer would still see a space)
        kept = [t for t, b in zip(cut, blank, strict=True) if not b]
        values = iter(cosines(kept, query, how))
        return [None if b else next(values) for b in blank]
    if how == MODEL_NAME:
        return _model_cosines(cut, query[:TEXT_CHARS])
    return lexical_cosines(cut, query[:TEXT_CHARS])


def cosine_column(texts: pl.Series, query: str, how: str | None = None) -> pl.Series:
    """:func:`cosines` of a column of distinct texts: a Float64 column in their order,
    null where :func:`cosines` gives None.  With the model in this process (no helper
    process), computed on columns (:mod:`~compaction_audit.cosine.columns`: the same
    floats, without Python per text); else by :func:`cosines`."""
    import polars as pl

    how = how or method()
    if how == MODEL_NAME and (_helper is None or not HELPER):
        loaded = load_model()
        if loaded is not None:
            from compaction_audit.cosine import columns

            if columns.applies(*loaded):
                got = columns.cosines(texts, query, *loaded)
                if got is not None:
                    return got
    return pl.Series("cosine", cosines(texts.to_list(), query, how), dtype=pl.Float64)


def embed(texts: list[str]) -> Any:
    """Model embeddings of ``texts`` (numpy array, len(texts) x 256, not normalized):
    the mean of the texts' token embeddings, as wordllama pools them, computed on the
    token ids without padding, :data:`BATCH` texts per tokenizer call (see
    :func:`_pool` for the sums).  A text with no token gets a zero row.  Raises
    :class:`ModelUnavailable` without the model."""
    import numpy as np

    loaded = load_model()
    if loaded is None:
        raise ModelUnavailable("the embedding model is not installed")
    table, tokenizer = loaded
    # encode_batch_fast (tokenizers >= 0.20) skips the character offsets, unused here
    encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
    out = np.zeros((len(texts), table.shape[1]), dtype=np.float64)
    for start in range(0, len(texts), BATCH):
        encoded = encode(texts[start:start + BATCH], add_special_tokens=False)
        lengths = np.array([len(e.ids) for e in encoded], dtype=np.int64)
        has = lengths > 0
        if not has.any():
            continue
        ids = np.clip(np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encoded]),
                      0, table.shape[0] - 1)
        owner = np.repeat(np.arange(len(encoded), dtype=np.int64), lengths)
        vectors = table.rows(ids) if isinstance(table, TokenTable) else table
        out[start:start + len(encoded)] = _pool(vectors, ids, owner, len(encoded))
        rows = np.flatnonzero(has) + start
        out[rows] /= lengths[has][:, None]
    return out


def _pool(table: Any, ids: Any, owner: Any, n: int) -> Any:
    """Sum of the token vectors of each of ``n`` texts (n x dim, float64): ``ids`` are
    the token ids of all texts, concatenated; ``owner[k]`` is the text of ``ids[k]``
    (0 .. n-1, non-decreasing).  Each text's vectors are gathered (at most
    :data:`CHUNK_ROWS` at a time: a bound on memory whatever the texts) and added in
    float64, text by text, whatever the batch, so the same trace gives the same
    ``query_cosine_rebuilt`` in every process.  (A text of more than
    :data:`CHUNK_ROWS` tokens would be added chunk by chunk; there is none: 16,000
    characters are at most 64,001 tokens, 4 byte tokens a character and a leading
    space.)

    With the model's table these sums are exact, so the order of the additions cannot
    change a bit (numpy's reduction with a cast adds a block at a time, not strictly
    one row after the other: on float32 values of very different sizes its sums and a
    row-by-row loop's can differ in the last bits).  The table is float16, whose values
    are multiples of 2**-24; below 8,192 in magnitude (the shipped one's are below
    8.02), a sum of at most 64,001 of them is a multiple of 2**-24 below 2**29, which
    float64 holds exactly, as it does every partial sum.

    One gather and one ``np.add.reduce`` per text (issue 16, point 4): on a Claude Code
    transcript of 2.8 MB, about 20 ms of CPU where ``np.add.reduceat`` over 65,536
    gathered rows at a time took 170 ms (it adds each of the 256 columns down the rows,
    1 KB apart); ``np.add.at`` was slower still.  Measured and left aside: a count
    matrix (text x token id) times the table's rows is faster with numpy's BLAS, but
    its threads keep spinning after each call and take the CPU the tokenizer and Polars
    need; without BLAS (einsum) it is no faster than this."""
    import numpy as np

    out = np.zeros((n, table.shape[1]), dtype=np.float64)
    bounds = np.searchsorted(owner, np.arange(n + 1, dtype=np.int64)).tolist()
    for text, (start, end) in enumerate(pairwise(bounds)):
        for lo in range(start, end, CHUNK_ROWS):
            # axis 0 of a C-ordered block: row after row, each added to the running sum
            out[text] += np.add.reduce(table[ids[lo:min(lo + CHUNK_ROWS, end)]], axis=0,
                                       dtype=np.float64)
    return out


def _model_cosines(texts: list[str], query: str) -> list[float | None]:
    """The model's cosines of ``texts`` (cut, none blank) to ``query``: from the helper
    process when there is one and it delivers (it runs this function on the same texts:
    the same floats), else computed here."""
    global _helper
    if not texts:
        return []
    with _HELPER_LOCK:
        helper = _helper
        if helper is not None and HELPER:
            got = helper.cosines(texts, query)
            if got is not None:
                return got
            _helper = None  # it failed: ended by cosines(); the work is done here
    return _local_cosines(texts, query)


def prefetch(texts: list[str], query: str) -> bool:
    """Send ``texts`` and ``query`` to the helper process now, when there is one, so that
    it embeds them while the audit goes on; :func:`cosines` on the same texts and query
    then collects its answer (or does the work here, as always, if it fails).  Returns
    True when they were sent.  The texts are cut and blanks left out as :func:`cosines`
    does, so that the request is the one it makes."""
    wanted = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if wanted not in ("auto", "model"):
        return False
    with _HELPER_LOCK:
        helper = _helper
        if helper is None or not HELPER:
            return False
        cut = [t[:TEXT_CHARS] for t in texts]
        kept = [t for t in cut if t.strip()]
        if not kept:
            return False
        helper.request(kept, query[:TEXT_CHARS])
    return True


def helper_waiting() -> bool:
    """True when a helper process has been handed to the embedding (see
    :func:`start_loading`) and has not failed."""
    helper = _helper
    return helper is not None and HELPER and helper.status in (None, "model")


def answer_pending() -> bool:
    """True while the helper process embeds the texts :func:`prefetch` sent it and
    nothing of its answer has arrived (:meth:`~compaction_audit.cosine.server.Helper.waiting`):
    the audit does other work until then (issue 14, item 4).  Never blocks."""
    with _HELPER_LOCK:
        helper = _helper
        return helper is not None and HELPER and helper.waiting()


def _local_cosines(texts: list[str], query: str) -> list[float | None]:
    """The model's cosines of ``texts`` to ``query``, computed in this process (the
    helper process runs this too)."""
    import numpy as np

    if not texts:
        return []
    emb = embed([query, *texts])  # one pass: the query rides in the first batch
    q, emb = emb[0], emb[1:]
    qn = float(np.linalg.norm(q))
    if qn == 0.0:
        return [None] * len(texts)
    # row norms a batch at a time (the same values): np.linalg.norm over all rows holds
    # a squared copy of every embedding (texts x 256 float64) at once
    norms = np.concatenate([np.linalg.norm(emb[start:start + BATCH], axis=1)
                            for start in range(0, len(emb), BATCH)])
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,j->i", emb, q) / (norms * qn)  # no BLAS threads (see _pool)
    return [None if n == 0.0 or not np.isfinite(c) else float(c)
            for c, n in zip(cos.tolist(), norms.tolist(), strict=True)]


def lexical_cosines(texts: list[str], query: str) -> list[float | None]:
    """TF-IDF cosine of each text to ``query`` (module docstring), vectorized in Polars."""
    import polars as pl

    if not texts:
        return []
    n = len(texts)
    docs = pl.DataFrame({"doc": pl.int_range(0, n + 1, eager=True, dtype=pl.Int64),
                         "text": [*texts, query]})
    terms = (
        docs.select("doc", pl.col("text").str.to_lowercase().str.extract_all(r"\w+")
                    .alias("term"))
        .explode("term").drop_nulls("term")
        .group_by("doc", "term").agg(pl.len().alias("tf"))
    )
    df = terms.group_by("term").agg(pl.len().alias("df"))
    weights = (
        terms.join(df, on="term")
        .with_columns(((1.0 + pl.col("tf").cast(pl.Float64).log())
                       * (((n + 2) / (pl.col("df") + 1)).log() + 1.0)).alias("w"))
    )
    norms = _ordered_sums(weights, pl.col("w") ** 2, "norm")
    weights = weights.join(norms, on="doc").with_columns(
        (pl.col("w") / pl.col("norm").sqrt()).alias("w"))
    q = weights.filter(pl.col("doc") == n).select("term", pl.col("w").alias("qw"))
    dots = _ordered_sums(weights.filter(pl.col("doc") < n).join(q, on="term", how="left"),
                         pl.col("w") * pl.col("qw").fill_null(0.0), "cos")
    out = docs.head(n).select("doc").join(dots, on="doc", how="left").sort("doc")
    if q.height == 0:  # a query with no word: nothing is comparable
        return [None] * n
    return out["cos"].to_list()


def _ordered_sums(frame: pl.DataFrame, value: pl.Expr, name: str) -> pl.DataFrame:
    """Columns ``doc`` and ``name``: the sum of ``value`` over each doc's rows, added in
    term order.  A ``group_by(...).sum()`` (or ``.sum().over``) adds a group's floats
    on Polars' threads in an order that changed from run to run, and with it the
    cosines' last bits (issue 11, class 8); here each doc's values are gathered in
    (doc, term) order, one list per doc, and each list is summed on its own."""
    import polars as pl

    return (frame.select("doc", "term", value.alias(name)).sort("doc", "term")
            .group_by("doc", maintain_order=True).agg(pl.col(name))
            .with_columns(pl.col(name).list.sum()))
