"""unsupported-summary-claim's vocabulary in Polars (recall/leafwords.py, issue 14): the
leaf words equal :func:`bag`'s, and the check gives the same rows as the walk over Python
sets (``claims._Vocab``) on the sample logs, the corpus and generated traces."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from compaction_audit.closure import closure
from compaction_audit.io.load import load_session
from compaction_audit.io.native import read_native
from compaction_audit.model import Session
from compaction_audit.recall import claims, leafwords
from compaction_audit.recall.analysis import typed_items
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import SAMPLES, LogWriter, corpus_logs, rnd

_HAND = ["Set 45,000ms and 1,234,567 rows; v2_3b, 12,34", "1,23,456 and 12,345,678",
         "x,123 a1,234b ,123 1,2345 9,999,99", "Seen \u0663\u0664 items, 7,000 ms",
         "\u0130stanbul \u212aelvin run_42x", "nul\x00 1,234", "", "UPPER Case_9 __ 0x1F",
         "a1b2c3 12ab 3,000,000,000 1,000.5", "\u00c9t\u00e9 1,234 caf\u00e9",
         # versions with a suffix: one word each, their norm (versions.suffix_norm)
         "Upgrade to 2.4.0-RC.1, 1.2.0-beta and 3.0.0.post1; v1.2-rc1x 1.2.3.4-a-5 9.9_b1",
         "Try 1.2.0-dev.1, 1.2.0-post.2+local.7 and 2.0.0+build.5; 1.5-2 pages"]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(7)
    alphabet = "0123456789,,,  ._aZk-\u0663\u00e9\nXy"
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(n)]


def test_leaf_words_are_the_words_of_bag() -> None:
    texts = _HAND + _random_texts(3000)
    words = leafwords.leaf_words(pl.Series([*texts, None], dtype=pl.String))
    got: dict[int, set[str]] = {}
    for t, w in words.iter_rows():
        got.setdefault(t, set()).add(w)
    assert len(texts) not in got  # the null text gives no row
    for t, text in enumerate(texts):
        assert got.get(t, set()) == set(leafwords.bag(text)[0]), text
    # a number with separators joined, its groups no words (usertest52 #2); "23,456"
    # after "1," is one too (Polars has no look-behind: more support, never less)
    assert got[1] == {"1", "23456", "and", "12345678"}
    assert {"2.4.0rc1", "1.2.0beta0", "3.0.0.post1", "1.2.3.4a5", "9.9b1"} <= got[10]
    assert {"1.2.0.dev1", "1.2.0.post2+local.7", "2.0.0+build.5"} <= got[11]  # adv93 #3
    assert "1.2rc1" not in got[10]  # "v1.2-rc1x": inside a longer run (adv93 #2)


def _sessions(tmp: Path) -> list[Session]:
    out = [read_native(str(path)) for path in sorted(SAMPLES.glob("*.jsonl"))]
    out += [load_session(str(path))[0] for path in corpus_logs()]
    for rounds, ws, retained in ((120, 100, True), (80, 300, False)):
        path = tmp / f"scale-{rounds}x{ws}.jsonl"
        write_scale_session(path, rounds, ws, seed=3, texts=True, retained=retained)
        out.append(read_native(str(path)))
    return out


def test_the_join_gives_the_rows_of_the_walk(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # the join wherever the budget allows it (chains too), against the walk forced
    monkeypatch.setattr(leafwords, "JOIN_MAX_ABOVE", 10**9)
    for session in _sessions(tmp_path):
        items = typed_items(session)
        links = closure(session)
        assert leafwords.below(session, items, links, claims.SUPPORT_MAX_WORDS) is not None
        joined = claims.unsupported(session, items, links)
        with monkeypatch.context() as patch:
            patch.setattr(leafwords, "JOIN_MAX_WORDS", -1)  # the walk
            assert leafwords.below(session, items, links, claims.SUPPORT_MAX_WORDS) is None
            walked = claims.unsupported(session, items, links)
        assert joined[1] == walked[1]
        assert joined[0].equals(walked[0]), session.path


def test_a_chain_is_left_to_the_walk(write_log: LogWriter) -> None:
    """Along a chain of folds the join would read each leaf's words once per summary
    above it, the walk about once (:data:`leafwords.JOIN_MAX_ABOVE`)."""
    log = [rnd(0, spans=[{"id": "s0", "tokens": 1, "text": "port 8443"}])]
    for i in range(1, 12):
        log.append(rnd(i, spans=[{"id": f"s{i}", "tokens": 1, "text": f"port {i}"}],
                       summaries=[{"id": f"f{i}", "tokens": 1, "text": f"Ports up to {i}.",
                                   "children": [f"f{i - 1}" if i > 1 else "s0", f"s{i}"]}],
                       evicted=[f"f{i - 1}" if i > 1 else "s0", f"s{i}"]))
    session = read_native(str(write_log(log, name="port-chain.jsonl")))
    items, links = typed_items(session), closure(session)
    # 11 folds over 12 leaves: 77 (summary, leaf) pairs, 6.4 a leaf
    assert links.summary_pairs.height == 77
    assert leafwords.below(session, items, links, claims.SUPPORT_MAX_WORDS) is None
    out, unchecked = claims.unsupported(session, items, links)
    assert unchecked == 0 and out.height == 0


def _uneven(write_log: LogWriter) -> Session:
    """A leaf without text under S1 (not checked), S2 over S1's sibling and a span, and
    S3 repeating S2's text over other leaves: the claims differ by the leaves alone."""
    said = "Set max_batch_tokens=11000 and port 8443; the cache was flushed because of v2.9."
    return read_native(str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 1},
                      {"id": "b", "tokens": 1, "text": "Set max_batch_tokens=11000 now."},
                      {"id": "c", "tokens": 1, "text": "Port 8443 is open; cache flushed."},
                      {"id": "d", "tokens": 1, "text": "Nothing here at all."}]),
        rnd(1, summaries=[{"id": "S1", "tokens": 1, "text": said, "children": ["a", "b"]},
                          {"id": "S2", "tokens": 1, "text": said, "children": ["b", "c"]},
                          {"id": "S3", "tokens": 1, "text": said, "children": ["d"]}],
            evicted=["a", "b", "c", "d"]),
    ], name="uneven.jsonl")))


def test_summaries_of_one_text_are_judged_by_their_own_leaves(
        write_log: LogWriter) -> None:
    session = _uneven(write_log)
    out, unchecked = claims.unsupported(session, typed_items(session))
    assert unchecked == 1  # S1 has a leaf without text
    by = {s: sorted(out.filter(pl.col("summary") == s)["text"].to_list())
          for s in ("S1", "S2", "S3")}
    assert by["S1"] == []
    assert by["S2"] == ["v2.9"]
    # the number bound to its name is one claim, read from the name (usertest38 #3)
    assert by["S3"] == ["8443", "max_batch_tokens", "max_batch_tokens=11000", "v2.9"]


def test_a_walk_past_the_budget_is_left_to_the_sets(write_log: LogWriter,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    session = _uneven(write_log)
    items, links = typed_items(session), closure(session)
    # the bound: each edge's child read in full (b: 4 words, then b and c: 4 + 6, d: 4)
    assert leafwords.below(session, items, links, 18) is not None
    assert leafwords.below(session, items, links, 17) is None
    # the walk then spends its budget as before: S2 reads 10 words, past 5, and S3
    # is not checked either
    monkeypatch.setattr(claims, "SUPPORT_MAX_WORDS", 5)
    out, unchecked = claims.unsupported(session, items, links)
    assert unchecked == 1 and out.height == 0
