"""A fast generator of large ``compaction-audit/1`` logs for benchmarks and scale tests.

:func:`write_scale_session` writes a session whose working set holds ``working_set``
items at every round, with the shape of a long agent run:

* **Arrivals.**  Round 0 brings the accumulated context (``working_set`` raw spans);
  every later round brings 15..25 new raw spans of 40..399 tokens.
* **Folds.**  A hierarchical summarizer folds, at each tier 0..2 holding more than its
  share of the working set (30 %, 10 %, 2 %), the oldest items of the tier (8..12 of
  them, entered before this round) into one summary of the next tier, at most one fold
  per tier per round, up to depth 3 (``max_depth``): summaries of summaries.  Raw
  children are offloaded to the external store (still resolvable); summary children
  are evicted (70 %) or offloaded (30 %).  A summary holds 12 % of its children's
  tokens.
* **Eviction** is budget-driven and continuous (arrivals outpace folding): while the
  working set holds more than ``working_set`` items (or more than its token budget,
  300 tokens per item, which the item count reaches first), the item with the lowest
  recency-weighted score goes (items that entered this round are spared), evicted
  (80 %) or offloaded (20 %); about 10 items per round.
* **Store.**  The external store keeps at most ``5 * working_set`` items; older
  offloads are purged (listed in ``evicted``), so old summaries lose leaves and some
  become ungrounded.  Now and then (5 % of rounds) the newest offloaded item is
  rehydrated: retained again without being new.
* **Salience.**  Each item has a fixed score in [0, 1) (4 decimals); a summary scores
  0.25 above the mean of its children (salience inversion).  Every round carries
  ``retained`` in pair form ``[id, salience]``: the whole working set, in order of
  entry.  Ids are ``span-000123`` and ``fold-000456``.
* **Texts** (``texts=True``): short span texts, about 30 % of them discriminating
  (numbers with units, version pins, identifiers, negations, causal clauses; logged
  as ``salience_class``, with a ``source``); summary texts keep the topic and quote
  one discriminating child verbatim in about a third of the folds, so the recall
  analysis has real work.

The per-round Python work is proportional to what changes (arrivals, folds,
evictions); ``retained`` is written by :mod:`orjson` straight from the working set's
``[id, salience]`` lists, made once per item, not once per round.  About 50 KB per
round at ``working_set=2000``: 20,000 rounds make a file of about 1 GB, written in
about 10 seconds.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

SCHEMA = "compaction-audit/1"
MAX_DEPTH = 3
"""Depth cap of the summarizer (tiers)."""

_TIER_SHARE = (0.30, 0.10, 0.02)
"""Fold a tier when it holds more than this share of the working set (tiers 0, 1, 2)."""

_RECENCY = 0.001
"""Recency weight of the eviction order (salience units per round)."""

_BUDGET_PER_ITEM = 300
"""Token budget per working-set item (a raw span holds 40..399 tokens, 220 on average;
a summary about 12 % of its children's), so the item count is what binds."""

_STORE_ITEMS = 5
"""The external store keeps at most this many items per working-set item."""

_MAX_FOLDS = 1
"""Folds per tier per round, at most: arrivals outpace folding, eviction does the rest."""

_FOLD_BOOST = 0.25
"""A summary scores this much above the mean of its children (salience inversion)."""

_TOPICS = ("retrieval", "evaluation", "staging-config", "dependencies", "migrations",
           "synthesis")
_NARRATIVE = (
    "Reviewed the notes on {topic} and kept the main themes.",
    "Skimmed the related discussion of {topic}; the framing is similar.",
    "Compared how the sources motivate the {topic} work.",
    "Summarized the open questions about {topic} for the next step.",
)
_DISCRIMINATING = (
    "Raised read_timeout_ms to {a} on staging because p95 latency hit {b} ms.",
    "Do NOT run migration 00{c} with --force on prod.",
    "Pinned requests=={v} after v2.{d}.0 broke the proxy config.",
    "Recall@10 rose from 0.{c} to 0.{d} on run_{h} after the index rebuild.",
    "Set max_batch_tokens={a} in config/serving.yaml after an OOM on shard {c}.",
    "Backfill job-{h} stopped at shard {c} of {d} because the quota hit {b} GB.",
)
_TIER_TEXT = (
    "Notes on {topic} were collected and compared.",
    "The {topic} work was reviewed.",
    "Progress on {topic} was tracked.",
)
_SOURCES = ("shell", "web_fetch", "read_file", "editor", "user")


class _Generator:
    """The state of one generated session (ids, tiers, working set, store)."""

    def __init__(self, working_set: int, seed: int, texts: bool,
                 rehydrate: bool = True) -> None:
        self.rng = random.Random(seed)
        self.size = working_set
        self.texts = texts
        self.rehydrate = rehydrate
        self.budget = working_set * _BUDGET_PER_ITEM
        self.targets = [max(1, int(working_set * s)) for s in _TIER_SHARE]
        self.next_id = 0
        # per item (kept for the whole session; ids are never reused)
        self.tier: dict[str, int] = {}
        self.score: dict[str, float] = {}
        self.tokens: dict[str, int] = {}
        self.topic: dict[str, int] = {}
        self.quote: dict[str, str] = {}  # a discriminating sentence the item states
        self.entered: dict[str, int] = {}
        self.key: dict[str, float] = {}
        # the working set: id -> [id, salience] (the pair written in ``retained``)
        self.ws: dict[str, list[Any]] = {}
        self.ws_tokens = 0
        self.count = [0] * (MAX_DEPTH + 1)
        self.fifo: list[deque[str]] = [deque() for _ in range(MAX_DEPTH + 1)]
        self.heap: list[tuple[float, str]] = []
        self.store: dict[str, None] = {}  # offloaded, in order of offload

    # -- items ---------------------------------------------------------------------
    def _enter(self, item: str, t: int) -> None:
        tier = self.tier[item]
        self.ws[item] = [item, self.score[item]]
        self.ws_tokens += self.tokens[item]
        self.count[tier] += 1
        self.fifo[tier].append(item)
        self.entered[item] = t
        key = self.score[item] + _RECENCY * t
        self.key[item] = key
        heapq.heappush(self.heap, (key, item))

    def _leave(self, item: str) -> None:
        del self.ws[item]
        self.ws_tokens -= self.tokens[item]
        self.count[self.tier[item]] -= 1

    def _span(self, t: int) -> dict[str, Any]:
        rng = self.rng
        self.next_id += 1
        item = f"span-{self.next_id:06d}"
        topic = rng.randrange(len(_TOPICS))
        self.tier[item] = 0
        self.score[item] = round(rng.random(), 4)
        self.tokens[item] = tokens = rng.randrange(40, 400)
        self.topic[item] = topic
        self._enter(item, t)
        entry: dict[str, Any] = {"id": item, "tokens": tokens}
        if self.texts:
            if rng.random() < 0.3:
                text = rng.choice(_DISCRIMINATING).format(
                    a=rng.randrange(1000, 90000, 500), b=rng.randrange(100, 999),
                    c=rng.randrange(10, 99), d=rng.randrange(10, 99),
                    v=f"2.{rng.randrange(20, 32)}.{rng.randrange(0, 9)}",
                    h=f"{rng.getrandbits(24):06x}")
                self.quote[item] = text
                cls = "discriminating"
            else:
                text = rng.choice(_NARRATIVE).format(topic=_TOPICS[topic])
                cls = "narrative"
            entry["text"] = text
            entry["salience_class"] = cls
            entry["source"] = _SOURCES[topic % len(_SOURCES)]
        return entry

    def _fold(self, tier: int, t: int, evicted: list[str], offloaded: list[str]
              ) -> dict[str, Any] | None:
        rng = self.rng
        fanout = rng.randrange(8, 13)
        queue = self.fifo[tier]
        children: list[str] = []
        while queue and len(children) < fanout:
            item = queue[0]
            if item not in self.ws or item in children:  # stale queue entry
                queue.popleft()
                continue
            if self.entered[item] >= t:
                break
            children.append(queue.popleft())
        if len(children) < 2:
            queue.extendleft(reversed(children))
            return None
        self.next_id += 1
        fold = f"fold-{self.next_id:06d}"
        total = 0
        score = 0.0
        for child in children:
            self._leave(child)
            total += self.tokens[child]
            score += self.score[child]
            if tier == 0 or rng.random() < 0.3:
                offloaded.append(child)
                self.store[child] = None
            else:
                evicted.append(child)
        self.tier[fold] = tier + 1
        self.score[fold] = round(min(0.9999, score / len(children) + _FOLD_BOOST), 4)
        self.tokens[fold] = max(1, total * 12 // 100)
        topic = self.topic[children[0]]
        self.topic[fold] = topic
        self._enter(fold, t)
        entry: dict[str, Any] = {"id": fold, "tokens": self.tokens[fold],
                                 "children": children, "depth": tier + 1}
        if self.texts:
            text = _TIER_TEXT[tier].format(topic=_TOPICS[topic])
            quotes = [self.quote[c] for c in children if c in self.quote]
            if quotes and rng.random() < 0.35:
                kept = rng.choice(quotes)
                self.quote[fold] = kept
                text = f"{text} Kept: {kept}"
            entry["text"] = text
        return entry

    def _evict(self, t: int, evicted: list[str], offloaded: list[str]) -> None:
        rng = self.rng
        spared: list[tuple[float, str]] = []
        while self.heap and (len(self.ws) > self.size or self.ws_tokens > self.budget):
            key, item = heapq.heappop(self.heap)
            if item not in self.ws or self.key[item] != key:
                continue  # stale entry
            if self.entered[item] >= t:
                spared.append((key, item))
                continue
            self._leave(item)
            if rng.random() < 0.2:
                offloaded.append(item)
                self.store[item] = None
            else:
                evicted.append(item)
        for entry in spared:
            heapq.heappush(self.heap, entry)

    def round(self, t: int) -> dict[str, Any]:
        """Advance to round ``t`` and return its record."""
        rng = self.rng
        evicted: list[str] = []
        offloaded: list[str] = []
        # the store: purge the oldest offloads beyond its capacity (before this
        # round's offloads join it), and now and then rehydrate one item
        excess = len(self.store) - self.size * _STORE_ITEMS
        if excess > 0:
            purge = list(islice(self.store, excess))
            for item in purge:
                del self.store[item]
            evicted.extend(purge)
        if self.store and rng.random() < 0.05 and self.rehydrate:
            item = next(reversed(self.store))
            del self.store[item]
            self._enter(item, t)
        n_new = self.size if t == 0 else rng.randrange(15, 26)
        spans = [self._span(t) for _ in range(n_new)]
        summaries: list[dict[str, Any]] = []
        for tier in range(MAX_DEPTH):
            for _ in range(_MAX_FOLDS):
                if self.count[tier] <= self.targets[tier]:
                    break
                fold = self._fold(tier, t, evicted, offloaded)
                if fold is None:
                    break
                summaries.append(fold)
        self._evict(t, evicted, offloaded)
        return {"type": "round", "round": t, "spans": spans, "summaries": summaries,
                "evicted": evicted, "offloaded": offloaded,
                "retained": list(self.ws.values())}


def session_record(rounds: int, working_set: int, seed: int) -> dict[str, Any]:
    """The ``session`` record of a generated log."""
    return {
        "type": "session", "schema": SCHEMA,
        "session_id": f"scale-{rounds}x{working_set}-seed{seed}",
        "budget_tokens": working_set * _BUDGET_PER_ITEM, "max_depth": MAX_DEPTH,
        "eviction": "continuous",
        "scorer": {"kind": "embedding-cosine", "recency_decay": _RECENCY,
                   "depth_penalty": 0},
        "task_query": "Keep the service configuration and the migration plan consistent.",
        "recall_floor": 1,
    }


def write_scale_session(path: str | Path, rounds: int, working_set: int, seed: int = 0,
                        texts: bool = True, retained: bool = True,
                        rehydrate: bool | None = None) -> None:
    """Write a generated session of ``rounds`` rounds (numbered 0 .. rounds-1) whose
    working set holds ``working_set`` items, to ``path`` (plain JSON Lines).

    Deterministic: the same arguments write the same bytes.  ``texts=False`` leaves out
    span and summary texts (and ``salience_class``/``source``); ``retained=False``
    writes delta mode (no ``retained`` list: the reader rebuilds the working set from
    the spans, folds, evictions and offloads; the spec's compact form).  ``rehydrate``
    (default: ``retained``): now and then retain an offloaded item again; delta mode
    cannot express that (an item re-enters only through ``retained``, spec "Round
    record"), so it is off there (the random stream is the same either way).  Raises ``ValueError``
    when ``rounds`` < 1 or ``working_set`` < 10.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if working_set < 10:
        raise ValueError(f"working_set must be >= 10, got {working_set}")
    gen = _Generator(working_set, seed, texts, retained if rehydrate is None else rehydrate)
    dumps = orjson.dumps
    with Path(path).open("wb", buffering=1 << 22) as out:
        out.write(dumps(session_record(rounds, working_set, seed)) + b"\n")
        for t in range(rounds):
            record = gen.round(t)
            if not retained:
                del record["retained"]
            out.write(dumps(record))
            out.write(b"\n")
