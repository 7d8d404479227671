"""A seeded model of a hierarchical compaction loop that writes ``compaction-audit/1`` logs.

The simulator stands in for a long-running agent that keeps a token-budgeted working
set, summarizes it hierarchically and evicts by salience.  It reproduces, qualitatively
and roughly quantitatively, the observations of the salience-inversion research note
("seed 000", section "What Was Observed") and produces the committed
``sample_logs/``.  Every knob, its default and its source are listed on
:class:`SimParams`; ``docs/simulator.md`` explains the calibration.

The loop, for ``t = 1 .. rounds``
---------------------------------

1. **Arrivals.**  Raw spans enter the working set: ``initial_spans`` at round 1 (the
   context accumulated before the first compaction; their ages are spread over
   ``initial_age_spread`` earlier rounds), then ``spans_per_round`` +/-
   ``spans_jitter`` per round.  Token counts are log-normal (``span_tokens_mean``,
   ``span_tokens_sigma``).  A span belongs to one of six topics of a
   research-and-synthesize task and gets a text from that topic's templates: a
   *narrative* sentence, or a *discriminating* one carrying numbers with units,
   version pins, identifiers, negations or causal clauses (logged as
   ``salience_class``).
2. **Salience.**  Embeddings are ``dims``-dimensional plain lists.  Topic ``k`` has a
   unit vector whose cosine with the task query is ``topic_relevance[k]``; a span
   adds idiosyncratic noise (orthogonal to the query, norm about ``span_noise``).  A
   summary's embedding is the normalized mean of its children's: the noise cancels,
   so a summary scores *higher* than the raw spans it compresses -- the mechanism of
   salience inversion.  Salience is ``cos(item, query) * exp(-recency_decay * age)``
   with ``age`` in rounds since the item was created; a summary is created when it is
   folded, so summaries are disproportionately recent and the decay favours them.
3. **Re-summarization of faded items.**  An item whose recency factor has fallen below
   ``fold_decay`` for its tier (or a summary whose cosine is below ``fold_floor``, or
   beyond ``tier_slots`` summaries in its tier) is folded with other such items of
   its tier, ``fanout`` at a time, upper tiers first, lowest salience first, at most
   ``folds_per_round`` folds per round (``initial_folds`` at round 1).  Without a
   decay nothing fades: the hierarchy then only deepens through ``fold_floor`` and
   ``tier_slots``, which is why removing the decay delays the inversion onset.
4. **Budget pass** (eviction is budget-driven and continuous): the working set is
   walked from the lowest salience up until it fits ``budget_tokens``.  Raw spans at
   least ``fold_min_age`` rounds old are folded ``fanout`` at a time; anything else
   is evicted.  Items that entered the working set this round are kept.
5. **Store retention.**  Offloaded items stay resolvable in an external store for
   ``store_retention_rounds`` (+/- 50%) rounds and are then purged (listed in
   ``evicted``), so summaries gradually lose their reachable leaves.

A fold's children leave the working set.  Without provenance enforcement the
summarizer keeps references (``offloaded``) only to discriminating raw children, or
to its most salient child when none is discriminating; narrative raw children and
folded summaries are ``evicted``.  Summary texts keep the topic and drop the
children's discriminators, except that with probability ``keep_discriminator`` a fold
quotes one discriminating sentence of its children verbatim.

With ``enforce_provenance`` the policy keeps "the most salient *subject to grounding*"
(seed 000, "Operational Effect"): every fold is accounted (``accounting`` names the
precision surrendered) and offloads all its children; no store item still reachable
from the working set is purged; summaries leaving the working set are offloaded, not
evicted; raw spans are neither folded nor evicted while the raw share of the working
set is at ``min_raw_share``; and once the deepest tier has been present for
``depth_guard_rounds`` consecutive rounds its summaries are expanded (offloaded, their
children rehydrated from the store, nothing folded into that tier that round).

Each round record lists ``retained`` in pair form ``[id, salience]`` (salience
rounded to 4 decimals) and ``logged``: the agent's own aggregates, exact except that
in a fraction ``logged_error_rate`` of the rounds ``raw_ratio`` is the value before
the budget pass (an instrumentation bug for the ``logged-mismatch`` rule).

Scale: per round the cost is linear in the working set plus one sort (O(n log n)) and
a pass over the store; :func:`scale_params` turns off texts and logged aggregates for
large benchmark logs.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compaction_audit.simulate.params import PRESETS, SimParams, param_names, scale_params
from compaction_audit.simulate.texts import TOPICS, render

__all__ = ["PRESETS", "SimParams", "param_names", "scale_params", "simulate",
           "write_session"]

SCHEMA = "compaction-audit/1"
"""The schema string written in the session record."""


# --------------------------------------------------------------------------- vectors


def _normalize(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        return vector
    return [x / norm for x in vector]


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _random_unit(rng: random.Random, dims: int) -> list[float]:
    return _normalize([rng.gauss(0.0, 1.0) for _ in range(dims)])


def _topic_vector(rng: random.Random, query: list[float], relevance: float) -> list[float]:
    """A unit vector whose cosine with the unit ``query`` is ``relevance``."""
    noise = _random_unit(rng, len(query))
    along = _dot(noise, query)
    orth = _normalize([n - along * q for n, q in zip(noise, query, strict=True)])
    side = math.sqrt(max(0.0, 1.0 - relevance * relevance))
    return [relevance * q + side * o for q, o in zip(query, orth, strict=True)]


# --------------------------------------------------------------------------- the loop


class _Item:
    """A span or summary of the simulation (internal)."""

    __slots__ = (
        "children",
        "cos",
        "created",
        "depth",
        "discriminating",
        "emb",
        "expiry",
        "id",
        "kinds",
        "parent",
        "quotes",
        "refold",
        "seq",
        "text",
        "tokens",
        "topic",
    )

    def __init__(
        self,
        item_id: str,
        seq: int,
        depth: int,
        tokens: int,
        emb: list[float],
        cos: float,
        created: int,
        topic: int,
    ) -> None:
        self.id = item_id
        self.seq = seq
        self.depth = depth
        self.tokens = tokens
        self.emb = emb
        self.cos = cos
        self.created = created
        self.topic = topic
        self.children: tuple[_Item, ...] = ()
        self.parent: _Item | None = None
        self.text = ""
        self.discriminating = False
        self.kinds = ""  # precision kinds of a discriminating span
        self.quotes: tuple[str, ...] = ()  # discriminating sentences a text carries
        self.refold = True  # False once rehydrated: never folded a second time
        self.expiry = 0  # round at which an offload expires from the store


class _Loop:
    """State of one simulated session."""

    def __init__(self, params: SimParams) -> None:
        params.validate()
        self.p = params
        self.rng = random.Random(params.seed)
        self.query = _random_unit(self.rng, params.dims)
        self.topic_vectors = [
            _topic_vector(self.rng, self.query, relevance) for relevance in params.topic_relevance
        ]
        self.seq = 0
        self.span_count = 0
        self.summary_count = 0
        self.ws: dict[str, _Item] = {}
        self.store: dict[str, _Item] = {}  # offloaded, not evicted since, not in ws
        self.at_cap_rounds = 0  # consecutive earlier rounds with the cap tier present
        # Precomputed recency factors exp(-rate * age), by age in rounds.
        self._decay: list[float] = []

    # --- scoring ------------------------------------------------------------------

    def decay(self, age: int) -> float:
        """The recency factor for an item ``age`` rounds old."""
        table = self._decay
        while len(table) <= age:
            table.append(math.exp(-self.p.recency_decay * len(table)))
        return table[age]

    def salience(self, item: _Item, t: int) -> float:
        """The scorer's salience of ``item`` at round ``t`` (unrounded): the cosine
        with recency decay, or with ``summary_bias`` the survivability scorer."""
        bias = self.p.summary_bias
        if bias > 0:
            survived = min(1.0, max(0, t - item.created) / self.p.survival_rounds)
            return (1.0 - bias) * survived + bias * item.depth
        return item.cos * self.decay(max(0, t - item.created))

    # --- creation -----------------------------------------------------------------

    def new_span(self, t: int, created: int) -> _Item:
        """Draw a raw span of round ``t`` (``created`` may be earlier for round 1)."""
        p, rng = self.p, self.rng
        topic_index = rng.randrange(len(TOPICS))
        topic = TOPICS[topic_index]
        base = self.topic_vectors[topic_index]
        # Idiosyncratic content: noise orthogonal to the query, of norm about
        # span_noise (log-normal spread: some spans are more focused than others).
        query = self.query
        noise = [rng.gauss(0.0, 1.0) for _ in range(p.dims)]
        along = _dot(noise, query)
        noise = [n - along * q for n, q in zip(noise, query, strict=True)]
        scale = (
            p.span_noise
            * rng.lognormvariate(0.0, p.span_noise_sigma)
            / math.sqrt(max(1e-12, _dot(noise, noise)))
        )
        emb = _normalize([x + scale * n for x, n in zip(base, noise, strict=True)])
        cos = max(0.0, _dot(emb, query))
        mu = math.log(p.span_tokens_mean) - p.span_tokens_sigma**2 / 2
        tokens = max(20, round(rng.lognormvariate(mu, p.span_tokens_sigma)))
        self.span_count += 1
        self.seq += 1
        item = _Item(f"s{self.span_count}", self.seq, 0, tokens, emb, cos, created, topic_index)
        item.discriminating = rng.random() < topic.discriminating_share
        if item.discriminating:
            template, kinds = rng.choice(topic.discriminating)
            item.kinds = kinds
            if p.texts:
                item.text = render(template, rng)
                item.quotes = (item.text,)
        elif p.texts:
            item.text = rng.choice(topic.narrative)
        return item

    def fold(self, children: list[_Item], t: int) -> _Item:
        """Create the summary of ``children`` (one tier) at round ``t``: tokens are the
        tier's compression of the children's (+/- 15%), the embedding their normalized
        mean, the text the children's topic sentences plus, sometimes, one quote."""
        p, rng = self.p, self.rng
        depth = 1 + max(child.depth for child in children)
        embs = [child.emb for child in children]
        mean = [sum(values) / len(children) for values in zip(*embs, strict=True)]
        emb = _normalize(mean)
        cos = max(0.0, _dot(emb, self.query))
        child_tokens = sum(child.tokens for child in children)
        ratio = p.compression[min(depth, len(p.compression)) - 1]
        tokens = max(1, round(child_tokens * ratio * rng.uniform(0.85, 1.15)))
        self.summary_count += 1
        self.seq += 1
        item = _Item(
            f"t{depth}.{self.summary_count}",
            self.seq,
            depth,
            tokens,
            emb,
            cos,
            t,
            children[0].topic,
        )
        item.children = tuple(children)
        for child in children:
            child.parent = item
        quotes = [quote for child in children for quote in child.quotes]
        if quotes and rng.random() < p.keep_discriminator:
            item.quotes = (rng.choice(quotes),)
        if p.texts:
            topics: list[int] = []
            for child in children:
                if child.topic not in topics:
                    topics.append(child.topic)
            sentences = [TOPICS[k].tiers[min(depth, len(TOPICS[k].tiers)) - 1] for k in topics]
            text = " ".join(sentences[:3])
            if item.quotes:
                text += " Kept: " + item.quotes[0]
            item.text = text
        return item

    def accounting(self, summary: _Item) -> str:
        """The precision a fold surrendered, for an accounted (provenance) fold."""
        dropped = [
            child.id
            for child in summary.children
            if any(quote not in summary.quotes for quote in child.quotes)
        ]
        if not dropped:
            return (
                "accounted fold: no quoted discriminator of the children dropped; "
                "children offloaded, resolvable by id"
            )
        kinds = sorted({c.kinds for c in summary.children if c.kinds and c.id in dropped})
        what = "; ".join(kinds) if kinds else "quoted discriminators"
        return (
            f"surrendered the discriminators of {', '.join(dropped)} ({what}); "
            "children offloaded, resolvable by id"
        )

    # --- reachability -------------------------------------------------------------

    def ws_ancestor(self, item: _Item) -> _Item | None:
        """The working-set item whose provenance covers ``item`` (itself included)."""
        node: _Item | None = item
        while node is not None:
            if node.id in self.ws:
                return node
            node = node.parent
        return None

    def distinct_source_spans(self) -> int:
        """Reachable leaves: raw spans in the working set, plus stored raw spans under a
        working-set item."""
        count = sum(1 for item in self.ws.values() if item.depth == 0)
        for item in self.store.values():
            if item.depth == 0 and self.ws_ancestor(item) is not None:
                count += 1
        return count

    # --- one round ----------------------------------------------------------------

    def round(self, t: int) -> dict[str, Any]:
        """Run round ``t`` of the loop and return its round record."""
        p, rng = self.p, self.rng
        ws, store = self.ws, self.store
        provenance = p.enforce_provenance

        # 1. Arrivals.
        if t == 1:
            new_spans = [
                self.new_span(t, t - rng.randint(0, p.initial_age_spread))
                for _ in range(p.initial_spans)
            ]
        else:
            count = p.spans_per_round + rng.randint(-p.spans_jitter, p.spans_jitter)
            new_spans = [self.new_span(t, t) for _ in range(count)]
        for span in new_spans:
            ws[span.id] = span
        # One-round grace for what came to exist (or came back) this round.
        fresh = {span.id for span in new_spans if span.created == t}
        offloaded: list[str] = []
        evicted: list[str] = []
        summaries: list[_Item] = []

        def offload(item: _Item) -> None:
            del ws[item.id]
            store[item.id] = item
            retention = p.store_retention_rounds * rng.uniform(0.5, 1.5)
            item.expiry = t + max(1, math.ceil(retention))
            offloaded.append(item.id)

        def evict(item: _Item) -> None:
            del ws[item.id]
            evicted.append(item.id)

        def fold(children: list[_Item]) -> int:
            """Fold ``children`` into a new summary; return the tokens freed."""
            summary = self.fold(children, t)
            # Without provenance enforcement the summarizer keeps references only to
            # discriminating raw children, or to its most salient child when none is
            # discriminating (the fold's anchor); the rest is evicted.
            anchor = None
            if not any(child.discriminating for child in children):
                anchor = max(children, key=lambda child: (child.cos, -child.seq))
            for child in children:
                keep = provenance or (
                    child.depth == 0
                    and (child.discriminating or child is anchor or not p.evict_narrative)
                )
                if keep:
                    offload(child)
                else:
                    evict(child)
            ws[summary.id] = summary
            fresh.add(summary.id)
            summaries.append(summary)
            return sum(child.tokens for child in children) - summary.tokens

        guard = False  # set below: a round in which the deepest tier is expanded

        def foldable(item: _Item, min_age: int = 1) -> bool:
            # In a guard round nothing is folded into the deepest tier.
            return (
                item.depth < p.max_depth - (1 if guard else 0)
                and item.refold
                and t - item.created >= min_age
                and item.id not in fresh
            )

        # 2. Provenance depth guard: expand the deepest tier once it has been present
        #    for depth_guard_rounds consecutive rounds (children rehydrated).
        guard = provenance and self.at_cap_rounds >= p.depth_guard_rounds
        if guard:
            for item in [x for x in ws.values() if x.depth == p.max_depth]:
                offload(item)
                for child in item.children:
                    store.pop(child.id, None)
                    child.refold = False
                    ws[child.id] = child
                    fresh.add(child.id)

        # 3. Re-summarization of faded items: once the scorer's recency factor of an
        #    item has fallen below fold_decay (or its salience below fold_floor, for
        #    summaries), the summarizer folds it with the other faded items of its
        #    tier, ``fanout`` at a time, lowest salience first.
        capacity = p.folds_per_round if t > 1 else p.initial_folds
        faded: dict[int, list[tuple[float, int, _Item]]] = {}
        for item in ws.values():
            if not foldable(item):
                continue
            score = self.salience(item, t)
            factor = self.decay(t - item.created)
            threshold = p.fold_decay[min(item.depth, len(p.fold_decay) - 1)]
            if factor < threshold or (item.depth > 0 and item.cos < p.fold_floor):
                faded.setdefault(item.depth, []).append((score, item.seq, item))
        # A tier below the cap holds at most tier_slots summaries: the lowest-salience
        # extra ones are folded as well.
        tiers: dict[int, list[tuple[float, int, _Item]]] = {}
        for item in ws.values():
            if 0 < item.depth < p.max_depth and foldable(item):
                tiers.setdefault(item.depth, []).append((self.salience(item, t), item.seq, item))
        for depth, entries in tiers.items():
            extra = len(entries) - p.tier_slots
            if extra <= 0:
                continue
            marked = {entry[2].id for entry in faded.get(depth, [])}
            for entry in sorted(entries):
                if extra <= 0:
                    break
                if entry[2].id not in marked:
                    faded.setdefault(depth, []).append(entry)
                extra -= 1
        ready: list[tuple[float, int, list[_Item]]] = []
        for depth in sorted(faded):
            entries = sorted(faded[depth])
            for start in range(0, len(entries) - p.fanout + 1, p.fanout):
                chunk = entries[start : start + p.fanout]
                mean = sum(entry[0] for entry in chunk) / p.fanout
                ready.append((mean, chunk[0][1], [entry[2] for entry in chunk]))
        # Higher tiers first (the hierarchy is consolidated top-down), then lowest
        # salience first.
        ready.sort(key=lambda entry: (-entry[2][0].depth, entry[0], entry[1]))
        total = sum(item.tokens for item in ws.values())
        raw = sum(item.tokens for item in ws.values() if item.depth == 0)
        for _, _, children in ready:
            if len(summaries) >= capacity:
                break
            if provenance and children[0].depth == 0:
                # Keep the minimum raw share (estimated with the tier's compression).
                tokens = sum(child.tokens for child in children)
                after = total - tokens * (1.0 - p.compression[0])
                if raw - tokens < p.min_raw_share * after:
                    continue
                raw -= tokens
            total -= fold(children)

        # 4. Budget pass: walk the working set from the lowest salience up until it
        #    fits the budget.  A foldable item joins the pending group of its tier and
        #    a full group is folded; anything else (too young to fold, or at the cap)
        #    is removed: evicted, or offloaded under provenance, where raw spans are
        #    also kept while the raw share is at its minimum.
        total = sum(item.tokens for item in ws.values())
        pre_eviction_raw_ratio = self.raw_ratio()
        if total > p.budget_tokens:
            raw = sum(item.tokens for item in ws.values() if item.depth == 0)
            order = sorted(
                (self.salience(item, t), item.seq, item)
                for item in ws.values()
                if item.id not in fresh
            )
            pending: dict[int, list[_Item]] = {}
            for _, _, item in order:
                if total <= p.budget_tokens:
                    break
                if (
                    provenance
                    and item.depth == 0
                    and raw - item.tokens < p.min_raw_share * (total - item.tokens)
                ):
                    continue  # keep the minimum raw share
                if item.depth == 0 and foldable(item, p.fold_min_age) and len(summaries) < capacity:
                    group = pending.setdefault(item.depth, [])
                    group.append(item)
                    if len(group) == p.fanout:
                        del pending[item.depth]
                        raw -= sum(child.tokens for child in group if child.depth == 0)
                        total -= fold(group)
                    continue
                if item.depth == 0:
                    raw -= item.tokens
                    evict(item)
                elif provenance:
                    offload(item)
                else:
                    evict(item)
                total -= item.tokens

        # 5. Store retention: an offload expires after its retention period (never
        #    in the round it was offloaded; never while reachable under provenance).
        for item in list(store.values()):
            if item.expiry <= t and not (provenance and self.ws_ancestor(item) is not None):
                del store[item.id]
                evicted.append(item.id)

        # Depth-cap bookkeeping for the guard.
        depth_max = max((item.depth for item in ws.values()), default=0)
        self.at_cap_rounds = self.at_cap_rounds + 1 if depth_max == p.max_depth else 0

        return self.record(t, new_spans, summaries, evicted, offloaded, pre_eviction_raw_ratio)

    def raw_ratio(self) -> float:
        """raw / (raw + summary) tokens of the working set; 0.0 when it is empty."""
        raw = summary = 0
        for item in self.ws.values():
            if item.depth == 0:
                raw += item.tokens
            else:
                summary += item.tokens
        return 0.0 if raw + summary == 0 else raw / (raw + summary)

    def record(
        self,
        t: int,
        new_spans: list[_Item],
        summaries: list[_Item],
        evicted: list[str],
        offloaded: list[str],
        pre_eviction_raw_ratio: float,
    ) -> dict[str, Any]:
        """Build the round record of round ``t`` from the loop's state."""
        p = self.p
        spans_out: list[dict[str, Any]] = []
        for span in new_spans:
            entry: dict[str, Any] = {"id": span.id, "tokens": span.tokens}
            if p.texts:
                entry["text"] = span.text
                entry["salience_class"] = "discriminating" if span.discriminating else "narrative"
                entry["source"] = f"{TOPICS[span.topic].source}:{span.id}"
            spans_out.append(entry)
        summaries_out: list[dict[str, Any]] = []
        for summary in summaries:
            entry = {
                "id": summary.id,
                "tokens": summary.tokens,
                "children": [child.id for child in summary.children],
                "depth": summary.depth,
            }
            if p.texts:
                entry["text"] = summary.text
            if p.enforce_provenance:
                entry["accounting"] = self.accounting(summary)
            summaries_out.append(entry)
        saliences = [round(self.salience(item, t), 4) for item in self.ws.values()]
        retained = [
            [item.id, value] for item, value in zip(self.ws.values(), saliences, strict=True)
        ]
        out: dict[str, Any] = {
            "type": "round",
            "round": t,
            "spans": spans_out,
            "summaries": summaries_out,
            "evicted": evicted,
            "offloaded": offloaded,
            "retained": retained,
        }
        if p.log_aggregates:
            raw_ratio = self.raw_ratio()
            if self.rng.random() < p.logged_error_rate:
                raw_ratio = pre_eviction_raw_ratio
            out["logged"] = {
                "raw_ratio": round(raw_ratio, 4),
                "distinct_source_spans": self.distinct_source_spans(),
                "query_cosine_retained": (
                    round(sum(saliences) / len(saliences), 4) if saliences else None
                ),
                "summary_depth_max": max((i.depth for i in self.ws.values()), default=0),
            }
        if p.delta_mode:  # no retained: the agent logs no salience either
            del out["retained"]
            if "logged" in out:
                out["logged"]["query_cosine_retained"] = None
        return out


def session_record(params: SimParams) -> dict[str, Any]:
    """The ``session`` record that opens a simulated log."""
    return {
        "type": "session",
        "schema": SCHEMA,
        "session_id": params.session_id,
        "budget_tokens": params.budget_tokens,
        "max_depth": params.max_depth,
        "eviction": "continuous",
        "scorer": {
            "kind": "embedding-cosine",
            "recency_decay": params.recency_decay,
            "depth_penalty": 0,
        } if params.summary_bias == 0 else {
            "kind": "survivability",
            "summary_bias": params.summary_bias,
            "survival_rounds": params.survival_rounds,
            "depth_penalty": 0,
        },
        "task_query": params.task_query,
        "recall_floor": 1,
        "simulator": {
            "seed": params.seed,
            "enforce_provenance": params.enforce_provenance,
            **({"overrides": dict(params.overrides)} if params.overrides else {}),
        },
    }


def simulate(params: SimParams) -> Iterator[dict[str, Any]]:
    """Yield the records of one simulated session: the session record, then one round
    record per round (``1 .. params.rounds``).

    Deterministic: the same parameters (seed included) yield the same records.
    Raises ``ValueError`` for parameters out of range (see :meth:`SimParams.validate`).
    """
    loop = _Loop(params)
    yield session_record(params)
    for t in range(1, params.rounds + 1):
        yield loop.round(t)


def write_session(params: SimParams, path: str | Path) -> int:
    """Write the simulated session to ``path`` as JSON Lines through the public
    :class:`~compaction_audit.io.writer.LogWriter`, which validates every record with
    the reader's rules as it writes.  Returns the number of records written; raises
    :class:`~compaction_audit.errors.LogError` if the model ever wrote an invalid one."""
    from compaction_audit.io.writer import LogWriter

    with LogWriter(path if str(path) == "-" else Path(path)) as writer:
        for record in simulate(params):
            writer.write(record)
        return writer.lines
