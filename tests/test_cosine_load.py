"""What loading the model costs (issue 16, point 4).

- :class:`TokenTable` maps wordllama's float16 safetensors file and makes float32
  rows only as token ids ask for them: hand-written files in the safetensors layout
  (8-byte little-endian header length, JSON header, data) with values float16 holds
  exactly; the real model's table, when the ``[embed]`` extra is installed, against
  the whole tensor read by ``safetensors``.
- :func:`~compaction_audit.cosine.embed.import_numpy` asks OpenBLAS for one thread
  only when it imports numpy first and nobody chose a count: a stand-in ``numpy``
  package, in a child interpreter, records what it saw.
"""

from __future__ import annotations

import importlib.util
import mmap
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.cosine import embed
from compaction_audit.cosine.embed import TokenTable

np = pytest.importorskip("numpy")

VALUES = [[0.5, -2.0, 1.25], [3.0, 0.0, -0.75], [-1.5, 2.5, 0.125], [8.0, -0.25, 4.0]]
"""4 tokens x 3 dimensions, every value exact in float16."""


def _write(path: Path, header: dict[str, Any] | bytes, data: bytes,
           size: int | None = None) -> Path:
    head = header if isinstance(header, bytes) else orjson.dumps(header)
    path.write_bytes(struct.pack("<Q", len(head) if size is None else size) + head + data)
    return path


def _table_file(tmp_path: Path, prefix: bytes = b"") -> Path:
    data = np.array(VALUES, dtype="<f2").tobytes()
    header = {"__metadata__": {"format": "pt"},
              "embedding.weight": {"dtype": "F16", "shape": [4, 3],
                                   "data_offsets": [len(prefix), len(prefix) + len(data)]}}
    return _write(tmp_path / "w.safetensors", header, prefix + data)


def test_rows_are_the_float16_values_made_only_when_asked(tmp_path: Path) -> None:
    table = TokenTable(_table_file(tmp_path, prefix=b"\0" * 6), "embedding.weight")
    assert table.shape == (4, 3)
    full = table.rows(np.array([2, 0, 2], dtype=np.int64))
    assert full.dtype == np.float32 and full.shape == (4, 3)
    assert full[0].tolist() == VALUES[0] and full[2].tolist() == VALUES[2]
    assert table._made.tolist() == [True, False, True, False]  # 1 and 3 not converted
    full = table.rows(np.array([3], dtype=np.int64))
    assert full[3].tolist() == VALUES[3] and full[0].tolist() == VALUES[0]  # kept
    assert table._made.tolist() == [True, False, True, True]


def test_a_file_that_cannot_be_mapped_is_read(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("no mmap here")

    monkeypatch.setattr(mmap, "mmap", refuse)
    table = TokenTable(_table_file(tmp_path, prefix=b"\0" * 4), "embedding.weight")
    assert table.rows(np.arange(4, dtype=np.int64)).tolist() == VALUES


@pytest.mark.parametrize("case", ["short", "length", "json", "name", "dtype", "shape",
                                  "size", "beyond"])
def test_a_damaged_file_is_a_value_error(tmp_path: Path, case: str) -> None:
    data = np.array(VALUES, dtype="<f2").tobytes()
    entry: dict[str, Any] = {"dtype": "F16", "shape": [4, 3], "data_offsets": [0, 24]}
    path = tmp_path / "w.safetensors"
    if case == "short":
        path.write_bytes(b"\1\0\0")
    elif case == "length":  # a header longer than the file
        _write(path, {"embedding.weight": entry}, data, size=10_000)
    elif case == "json":
        _write(path, b"{not json", data)
    elif case == "name":
        _write(path, {"other": entry}, data)
    elif case == "dtype":
        _write(path, {"embedding.weight": {**entry, "dtype": "BF16"}}, data)
    elif case == "shape":
        _write(path, {"embedding.weight": {**entry, "shape": [12]}}, data)
    elif case == "size":  # offsets that do not cover 4 x 3 float16
        _write(path, {"embedding.weight": {**entry, "data_offsets": [0, 20]}}, data)
    else:  # the data ends before the offsets say
        _write(path, {"embedding.weight": entry}, data[:16])
    with pytest.raises(ValueError, match=r"w\.safetensors"):
        TokenTable(path, "embedding.weight")


def test_the_model_table_is_the_whole_tensor_row_for_row() -> None:
    """The shipped table read row by row equals the tensor ``safetensors`` reads whole,
    made float32 at once, bit for bit; and embeddings pooled from either are equal."""
    loaded = embed.load_model()
    if loaded is None:
        pytest.skip("the [embed] extra (wordllama) is not installed")
    safe_open = pytest.importorskip("safetensors").safe_open
    table, tokenizer = loaded
    assert isinstance(table, TokenTable)
    spec = importlib.util.find_spec("wordllama")
    assert spec is not None and spec.origin is not None
    path = str(Path(spec.origin).parent.joinpath(*embed.WEIGHTS[:2]))
    with safe_open(path, framework="np", device="cpu") as handle:
        whole = handle.get_tensor(embed.WEIGHTS[2]).astype(np.float32)
    ids = np.array([0, 5, 31_999, 5, 1_234], dtype=np.int64)
    assert np.array_equal(table.rows(ids)[ids], whole[ids])
    texts = ["fix the unicode bug in the tokenizer", "lunch: soup and salad"]
    lazy = embed.embed(texts)
    encoded = tokenizer.encode_batch(texts, add_special_tokens=False)
    for k, e in enumerate(encoded):
        ids = np.asarray(e.ids, dtype=np.int64)
        plain = np.add.reduce(whole[ids], axis=0, dtype=np.float64) / len(ids)
        assert np.array_equal(lazy[k], plain)



def test_the_model_sums_are_exact_in_any_order() -> None:
    """The bound _pool's docstring gives for exact sums holds for the shipped table, and
    a long text's vectors added forward, backward and by numpy give the same bits."""
    loaded = embed.load_model()
    if loaded is None:
        pytest.skip("the [embed] extra (wordllama) is not installed")
    table = loaded[0]
    assert isinstance(table, TokenTable)
    assert float(np.abs(table._half).max()) < 8192
    rng = np.random.default_rng(4)
    ids = rng.integers(0, table.shape[0], size=20_000)
    rows = table.rows(ids)[ids].astype(np.float64)
    forward, backward = np.zeros(table.shape[1]), np.zeros(table.shape[1])
    for row in rows:
        forward += row
    for row in rows[::-1]:
        backward += row
    pooled = embed._pool(table.rows(ids), ids, np.zeros(len(ids), dtype=np.int64), 1)[0]
    assert np.array_equal(forward, backward) and np.array_equal(forward, pooled)


CHILD = """
import os, sys
{before}
from compaction_audit.cosine.embed import import_numpy
numpy = import_numpy()
print(numpy.SEEN, os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize(("env", "before", "seen", "after"), [
    ({}, "", "1", "None"),  # first import, nothing chosen: one thread, then unset again
    ({"OPENBLAS_NUM_THREADS": "3"}, "", "3", "3"),  # the person's choice stands
    ({"OMP_NUM_THREADS": "4"}, "", "None", "None"),  # OpenBLAS reads that one too
    ({}, "import numpy", "None", "None"),  # numpy already loaded: too late, untouched
    # the background loading thread never changes the environment: setenv beside
    # Polars' getenv crashed a Ray worker once (adv66 #7)
    ({}, "import threading\nt = threading.Thread(target=lambda: __import__("
         "'compaction_audit.cosine.embed').cosine.embed.import_numpy())\nt.start(); "
         "t.join()", "None", "None"),
])
def test_numpy_is_imported_with_one_blas_thread_unless_chosen(
        tmp_path: Path, env: dict[str, str], before: str, seen: str, after: str) -> None:
    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        'import os\nSEEN = os.environ.get("OPENBLAS_NUM_THREADS")\n')
    root = Path(__file__).resolve().parent.parent
    clean = {k: v for k, v in os.environ.items() if k not in embed.BLAS_THREADS}
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(before=before)], check=True,
        capture_output=True, text=True,
        env={**clean, **env, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root)])})
    assert out.stdout.split() == [seen, after]
