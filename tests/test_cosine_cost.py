"""The rebuilt cosine's cost (issue 16, point 4): each distinct text is embedded once,
in batches; no text, no model; the model's load can start early without changing
what the audit finds.

The embedding model is replaced by a fake (a tokenizer that counts what it is given,
and a small table) so that the calls can be counted.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import compaction_audit.api as api
from compaction_audit.api import audit
from compaction_audit.cosine import embed, rebuild
from compaction_audit.io.native import read_native
from tests.logs import dump, rnd, session

np = pytest.importorskip("numpy")

WORDS = ["parser", "unicode", "tokenizer", "bug", "fix", "lunch", "soup", "salad"]


class CountingTokenizer:
    """Encodes each known word as its index in :data:`WORDS` (others are skipped) and
    records every batch it is given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode_batch_fast(self, texts: list[str], add_special_tokens: bool = False
                          ) -> list[Any]:
        self.batches.append(list(texts))
        return [SimpleNamespace(ids=[WORDS.index(w) for w in t.lower().split() if w in WORDS])
                for t in texts]


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> CountingTokenizer:
    """The model replaced by :class:`CountingTokenizer` and a table in which the first
    five words (the parser topic) share a direction and the last three another."""
    tokenizer = CountingTokenizer()
    table = np.zeros((len(WORDS), 4), dtype=np.float32)
    table[:5, 0] = 1.0
    table[5:, 1] = 1.0
    table[:, 2] = np.arange(len(WORDS)) / 10  # a little spread within each topic
    monkeypatch.setattr(embed, "load_model", lambda: (table, tokenizer))
    monkeypatch.setenv(embed.ENV, "model")
    return tokenizer


def _shared_texts_log(tmp_path: Path) -> Path:
    """Nine spans with four distinct texts (one blank), some repeated across rounds,
    and a summary that repeats a span's text."""
    texts = ["fix the parser bug", "unicode tokenizer", "lunch soup", "fix the parser bug",
             "unicode tokenizer", "  ", "lunch soup", "salad", "fix the parser bug"]
    spans = [{"id": f"s{i}", "tokens": 3, "text": t} for i, t in enumerate(texts)]
    return dump([session(task_query="parser bug"),
                 rnd(1, spans=spans[:4]), rnd(2, spans=spans[4:]),
                 rnd(3, summaries=[{"id": "f", "tokens": 2, "children": ["s0", "s1"],
                                    "text": "unicode tokenizer"}], evicted=["s0", "s1"])],
                tmp_path / "shared.jsonl")


def test_each_distinct_text_is_embedded_once_in_batches(
        tmp_path: Path, fake_model: CountingTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "BATCH", 2)
    r = rebuild(read_native(str(_shared_texts_log(tmp_path))))
    seen = [t for batch in fake_model.batches for t in batch]
    # the query once, each distinct non-blank text once; the blank one never
    assert sorted(seen) == sorted(["parser bug", "fix the parser bug", "unicode tokenizer",
                                   "lunch soup", "salad"])
    assert [len(b) for b in fake_model.batches] == [2, 2, 1]
    assert r.texts == 4  # distinct texts with a word
    cos = dict(r.items.rows())
    assert set(cos) == {"s0", "s1", "s2", "s3", "s4", "s6", "s7", "s8", "f"}
    # the same text, the same cosine; on-topic above off-topic
    assert cos["s0"] == cos["s3"] == cos["s8"] and cos["s1"] == cos["f"]
    assert cos["s0"] > cos["s2"] and cos["s1"] > cos["s7"]


def test_one_batch_when_the_texts_fit(tmp_path: Path, fake_model: CountingTokenizer) -> None:
    rebuild(read_native(str(_shared_texts_log(tmp_path))))
    assert len(fake_model.batches) == 1 and len(fake_model.batches[0]) == 5


def test_no_text_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise AssertionError("the model was asked for on a log without text")

    monkeypatch.setattr(embed, "load_model", refuse)
    monkeypatch.setattr(embed, "start_loading", refuse)
    monkeypatch.setenv(embed.ENV, "model")
    path = dump([session(task_query="parser bug"),
                 rnd(1, spans=[{"id": "a", "tokens": 3}, {"id": "b", "tokens": 2}])],
                tmp_path / "bare.jsonl")
    assert embed.start_loading_for(str(path)) is False  # no "text" key in its start
    r = audit(str(path))
    assert r.cosine["reason"] == "no span or summary carries a text"
    assert r.cosine["method"] is None


def test_start_loading_is_a_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _shared_texts_log(tmp_path)
    monkeypatch.setenv(embed.ENV, "lexical")
    assert embed.start_loading_for(str(path)) is False  # the fallback needs no model
    monkeypatch.setenv(embed.ENV, "auto")
    assert embed.start_loading_for("-") is False  # standard input is read once
    assert embed.start_loading_for(str(tmp_path / "absent.jsonl")) is False
    fifo = tmp_path / "fifo"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        assert embed.start_loading_for(str(fifo)) is False  # not opened: it would block
    embed.forget_model()
    assert embed.start_loading_for(str(path)) is True
    assert embed.start_loading() is False  # under way (or done): not twice
    embed.load_model()  # waits for the thread
    assert embed.start_loading() is False  # loaded (or found missing) once per process


def test_results_do_not_depend_on_the_early_load(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(_shared_texts_log(tmp_path))
    monkeypatch.delenv(embed.ENV, raising=False)
    embed.forget_model()
    early = audit(path)  # the load starts while the log is read
    monkeypatch.setattr(api, "start_loading_for", lambda p: False)
    embed.forget_model()
    late = audit(path)  # the load happens when the rebuild asks for it
    assert early.cosine == late.cosine
    assert (early.series["query_cosine_rebuilt"].to_list()
            == late.series["query_cosine_rebuilt"].to_list())


_EXIT_EARLY = """
import atexit, sys
from compaction_audit.cosine import embed
atexit.register(lambda: print("alive", embed._started is not None and embed._started.is_alive()))
print("started", embed.start_loading())
sys.exit(2)
"""


def test_an_early_exit_waits_for_the_background_load() -> None:
    """An error right after the load started (a bad record on line 2) exited while the
    loading thread was inside numpy's import: SIGSEGV now and then (issue 11).  The
    exit now waits for it (the atexit handlers run last-registered first, so the
    script's own handler sees the thread after the wait)."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("COMPACTION_AUDIT_EMBED", None)
    out = subprocess.run([sys.executable, "-c", _EXIT_EARLY], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 2, out.stderr
    if "started True" not in out.stdout:
        pytest.skip("no background load here (the model is not installed)")
    assert out.stdout.splitlines()[-1] == "alive False"
