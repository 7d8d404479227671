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
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

SCHEMA = "compaction-audit/1"
"""The schema string written in the session record."""


@dataclass(frozen=True)
class SimParams:
    """Parameters of the compaction-loop model; defaults are the ``research-decay`` run.

    Units are given per field.  "Seed 000" is the research note on salience
    inversion; its "What Was Observed" section is the source of the defaults marked so.
    """

    rounds: int = 40
    """Compaction rounds to simulate (rounds).  Seed 000: a 40-round session."""

    budget_tokens: int = 180_000
    """Token budget of the working set (tokens).  Seed 000: 180k-token budget."""

    max_depth: int = 3
    """Depth cap of the summary hierarchy (tiers).  Seed 000: summarizer at depth 3."""

    recency_decay: float = 0.045
    """Per-round rate of the scorer's recency decay, ``exp(-rate * age)`` (1/rounds);
    0 removes it.  Seed 000: scorer = embedding cosine "plus a recency decay"; the
    rate is calibrated with ``fold_decay`` (depth 3 at round 12)."""

    enforce_provenance: bool = False
    """Enforce provenance reachability as a hard invariant (seed 000, "Operational
    Effect"): accounted folds, children offloaded, reachable leaves never purged, a
    minimum raw share and a depth guard."""

    seed: int = 30
    """Seed of ``random.Random``; the same parameters give the same bytes.  30 is
    the seed of the committed samples (its no-decay onset is round 19, as in seed
    000; the properties hold for most seeds, see docs/simulator.md)."""

    initial_spans: int = 275
    """Raw spans in the context at the first round (spans); calibrated so that the
    working set starts full with about 190 reachable source spans (seed 000: 214)."""

    initial_age_spread: int = 6
    """The initial spans arrived over this many earlier turns (rounds); their ages at
    round 1 are spread uniformly over ``0 .. initial_age_spread``."""

    spans_per_round: int = 14
    """Mean raw spans arriving per round (spans)."""

    spans_jitter: int = 3
    """Arrivals per round vary uniformly by +/- this many spans (spans)."""

    span_tokens_mean: int = 1_000
    """Mean tokens of a raw span (tokens); log-normal."""

    span_tokens_sigma: float = 0.45
    """Shape (sigma of the underlying normal) of the span-token distribution."""

    dims: int = 8
    """Dimensions of the topic embeddings (small plain lists)."""

    topic_relevance: tuple[float, ...] = (0.98, 0.96, 0.94, 0.9, 0.88, 0.86)
    """Cosine of each topic's vector with the task query, for the six topics
    (retrieval, evaluation, synthesis, staging-config, dependencies, data-migrations):
    the research topics are closer to the query than the operational ones."""

    span_noise: float = 2.0
    """Norm of a raw span's embedding noise relative to its unit topic vector; larger
    noise lowers raw cosines and widens the gap summaries open by averaging."""

    span_noise_sigma: float = 0.1
    """Spread (log-normal sigma) of the noise norm across spans: how unevenly focused
    the raw spans are, hence the spread of their salience."""

    fanout: int = 4
    """Children per fold (items)."""

    compression: tuple[float, ...] = (0.5, 0.62, 0.75)
    """Summary tokens as a fraction of its children's tokens, per tier (tier 1, 2, 3;
    the last value is reused deeper).  Summaries are denser than their children; a
    summary of summaries compresses less than a summary of raw text."""

    fold_min_age: int = 4
    """The budget pass folds a raw span only once it is at least this old (rounds);
    younger spans at the bottom of the salience order are evicted instead.
    Calibrated (see docs/simulator.md)."""

    fold_decay: tuple[float, ...] = (0.97, 0.77, 0.8)
    """Re-summarization thresholds on the recency factor ``exp(-rate * age)``, per tier
    (raw spans, tier 1, tier 2; the last value is reused deeper).  With the default
    rate raw spans fade after 1 round, tier-1 summaries after 6 and tier-2 summaries
    after 5, so depth 3 is reached at round 12 (seed 000: "Rose 1->3 by round 12")."""

    fold_floor: float = 0.45
    """A summary whose cosine with the query is below this is re-summarized even
    without decay (a weak summary; score)."""

    tier_slots: int = 35
    """A tier below the cap holds at most this many summaries (items); the
    lowest-salience extra ones are re-summarized.  Without decay this is what
    eventually deepens the hierarchy (seed 000: onset at round 19 without decay)."""

    evict_narrative: bool = True
    """Without provenance enforcement, narrative raw children of a fold are evicted
    rather than offloaded (unless the fold has no discriminating child: then its most
    salient child is kept as an anchor)."""

    folds_per_round: int = 6
    """Throughput of the summarizer (folds per round).  Calibrated so that raw_ratio
    falls from about 0.74 to 0.09 by round 28 (seed 000: "0.71 to 0.09 over rounds
    1-28") while depth 3 still arrives at round 12."""

    initial_folds: int = 25
    """Folds allowed at round 1, the first compaction of the accumulated context
    (folds); sets the round-1 raw_ratio (seed 000: 0.71)."""

    keep_discriminator: float = 0.3
    """Probability that a fold quotes one discriminating sentence of its children;
    the rest of the children's discriminators are dropped (seed 002: topic kept,
    discriminator dropped)."""

    store_retention_rounds: float = 6.0
    """Mean time an offloaded item stays resolvable in the external store (rounds);
    each offload's retention is uniform within +/- 50% of it, rounded up, then the item
    is purged (listed in ``evicted``).  Seed 000: the cited summary's "leaf source had
    been evicted eight rounds earlier"; 6 keeps reachable leaves falling at the pace
    of the observation."""

    min_raw_share: float = 0.30
    """With ``enforce_provenance``: the raw share of the working-set tokens eviction
    keeps (ratio).  Seed 000: rehydrate "until raw_ratio >= 0.30"."""

    depth_guard_rounds: int = 5
    """With ``enforce_provenance``: after the deepest tier has been present this many
    consecutive rounds, its summaries are expanded (rounds).  Seed 000: depth pinned
    "for > 5 consecutive rounds" calls for capping the hierarchy."""

    logged_error_rate: float = 0.05
    """Fraction of rounds whose logged ``raw_ratio`` is taken before the eviction
    pass (the agent's own instrumentation is mostly correct)."""

    texts: bool = True
    """Write ``text`` on spans and summaries (templates); off for scale benchmarks."""

    log_aggregates: bool = True
    """Write the ``logged`` aggregates (costs a reachability pass per round)."""

    session_id: str = "research-decay"
    """Free-text ``session_id`` of the session record."""

    task_query: str = (
        "Synthesize recent findings on retrieval for long-context agents and "
        "recommend a deployment configuration for the retrieval service."
    )
    """The task query the scorer compares against (written in the session record)."""

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first parameter out of its range."""
        checks: list[tuple[str, bool]] = [
            ("rounds", self.rounds >= 1),
            ("budget_tokens", self.budget_tokens >= 1),
            ("max_depth", self.max_depth >= 1),
            ("recency_decay", self.recency_decay >= 0 and math.isfinite(self.recency_decay)),
            ("initial_spans", self.initial_spans >= 0),
            ("initial_age_spread", self.initial_age_spread >= 0),
            ("spans_per_round", self.spans_per_round >= 0),
            ("spans_jitter", 0 <= self.spans_jitter <= self.spans_per_round),
            ("span_tokens_mean", self.span_tokens_mean >= 1),
            ("span_tokens_sigma", 0 <= self.span_tokens_sigma <= 3),
            ("dims", self.dims >= 2),
            (
                "topic_relevance",
                len(self.topic_relevance) == len(_TOPICS)
                and all(0 <= r <= 1 for r in self.topic_relevance),
            ),
            ("span_noise", self.span_noise >= 0),
            ("span_noise_sigma", 0 <= self.span_noise_sigma <= 3),
            ("fanout", self.fanout >= 2),
            ("compression", bool(self.compression) and all(0 < c < 1 for c in self.compression)),
            ("fold_min_age", self.fold_min_age >= 1),
            ("fold_decay", bool(self.fold_decay) and all(0 <= f <= 1 for f in self.fold_decay)),
            ("fold_floor", 0 <= self.fold_floor <= 1),
            ("tier_slots", self.tier_slots >= 1),
            ("folds_per_round", self.folds_per_round >= 0),
            ("initial_folds", self.initial_folds >= 0),
            ("keep_discriminator", 0 <= self.keep_discriminator <= 1),
            ("store_retention_rounds", self.store_retention_rounds >= 1),
            ("min_raw_share", 0 <= self.min_raw_share < 1),
            ("depth_guard_rounds", self.depth_guard_rounds >= 1),
            ("logged_error_rate", 0 <= self.logged_error_rate <= 1),
        ]
        for name, ok in checks:
            if not ok:
                raise ValueError(f"{name}: value {getattr(self, name)!r} is out of range")


PRESETS: dict[str, SimParams] = {
    "research-decay": SimParams(),
    "research-no-decay": SimParams(recency_decay=0.0, session_id="research-no-decay"),
    "research-provenance": SimParams(
        enforce_provenance=True, max_depth=2, session_id="research-provenance"
    ),
}
"""The calibrated runs behind ``sample_logs/`` (see ``docs/simulator.md``)."""


def param_names() -> list[str]:
    """Return the names of the :class:`SimParams` fields, in declaration order."""
    return [f.name for f in fields(SimParams)]


def scale_params(rounds: int, working_set: int, seed: int = 30) -> SimParams:
    """Parameters for a large benchmark log: ``rounds`` rounds with a budget of
    ``working_set`` mean-sized spans (``working_set * 1000`` tokens).

    Arrivals, fold throughput and tier slots scale with the budget relative to the
    ``research-decay`` preset (180 spans' worth); texts and logged aggregates are
    off.  The dynamics are those of the preset, at a larger size.
    """
    if rounds < 1 or working_set < 1:
        raise ValueError("rounds and working_set must be >= 1")
    base = SimParams()
    factor = working_set * base.span_tokens_mean / base.budget_tokens

    def scaled(value: int) -> int:
        return max(1, round(value * factor))

    per_round = scaled(base.spans_per_round)
    return replace(
        base,
        rounds=rounds,
        seed=seed,
        budget_tokens=working_set * base.span_tokens_mean,
        initial_spans=scaled(base.initial_spans),
        spans_per_round=per_round,
        spans_jitter=min(per_round, scaled(base.spans_jitter)),
        folds_per_round=scaled(base.folds_per_round),
        initial_folds=scaled(base.initial_folds),
        tier_slots=scaled(base.tier_slots),
        texts=False,
        log_aggregates=False,
        session_id=f"scale-{rounds}x{working_set}",
    )


# --------------------------------------------------------------------------- topics


_Fill = Callable[[random.Random], str]


def _num(low: int, high: int, step: int = 1) -> _Fill:
    return lambda rng: str(rng.randrange(low, high + 1, step))


def _dec(low: float, high: float) -> _Fill:
    return lambda rng: f"{rng.uniform(low, high):.2f}"


def _choice(*options: str) -> _Fill:
    return lambda rng: rng.choice(options)


def _hex(n: int) -> _Fill:
    return lambda rng: "".join(rng.choice("0123456789abcdef") for _ in range(n))


_SLOTS: dict[str, _Fill] = {
    "a": _dec(0.41, 0.63),
    "b": _dec(0.64, 0.82),
    "ds": _choice("BEIR-scifact", "NQ-open", "HotpotQA", "LongBench-qasper", "RULER-niah"),
    "n": _num(1024, 8192, 256),
    "m": _num(128, 768, 64),
    "k": _num(8, 128, 8),
    "x": _num(3, 19),
    "ms": _num(180, 950),
    "index": _choice("idx_papers_v3", "docs_hnsw_m32", "faiss_ivf4096", "bm25_main"),
    "arxiv": lambda rng: f"arXiv:{rng.randrange(2301, 2412)}.{rng.randrange(10000, 99999)}",
    "arxiv2": lambda rng: f"arXiv:{rng.randrange(2301, 2412)}.{rng.randrange(10000, 99999)}",
    "metric": _choice("nDCG@10", "Recall@20", "MRR@10", "EM"),
    "run": lambda rng: f"run_{_hex(6)(rng)}",
    "t": _num(2, 9),
    "c": _num(1, 14),
    "timeout": _num(31000, 90000, 500),
    "tokens": _num(4096, 65536, 1024),
    "gpu": _choice("A10G", "L4", "A100-40GB", "T4"),
    "env": _choice("staging", "staging-eu", "canary"),
    "v": lambda rng: f"2.{rng.randrange(20, 32)}.{rng.randrange(0, 9)}",
    "v2": lambda rng: f"2.{rng.randrange(32, 40)}.{rng.randrange(0, 4)}",
    "fv": lambda rng: f"1.{rng.randrange(7, 9)}.{rng.randrange(0, 5)}",
    "issue": lambda rng: f"#{rng.randrange(1000, 9999)}",
    "mig": _num(40, 99),
    "mig2": _num(100, 140),
    "job": lambda rng: f"job-{_hex(5)(rng)}",
    "shard": _num(3, 60),
    "shards": _num(64, 128),
    "gb": _num(200, 900, 50),
    "commit": _hex(7),
    "path": _choice("config/serving.yaml", "deploy/staging/values.yaml", "infra/retriever.tf"),
}


@dataclass(frozen=True)
class _Topic:
    """One topic of the simulated research task."""

    name: str
    discriminating_share: float  # probability that a span of this topic is discriminating
    source: str  # the tool that typically produced its spans
    narrative: tuple[str, ...]
    discriminating: tuple[tuple[str, str], ...]  # (template, precision kinds it carries)
    tiers: tuple[str, ...]  # summary sentence per tier (1, 2, 3, ...)


_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        "retrieval",
        0.3,
        "web_fetch",
        (
            "Reviewed the survey section on retrieval methods and noted the main themes.",
            "Skimmed related work on dense and sparse retrievers; the framing is similar.",
            "Read the discussion of hybrid retrieval and its trade-offs.",
            "Compared how the papers motivate re-ranking of first-stage results.",
        ),
        (
            (
                "Recall@10 rose from {a} to {b} on {ds} after switching to bge-large-en-v1.5.",
                "quantities, a model identifier",
            ),
            (
                "Chunks of {m} tokens beat {n} tokens on {ds} because overlap hid boundary errors.",
                "quantities, a causal clause",
            ),
            (
                "Do NOT mix cosine and dot-product scores in {index}; they are not comparable.",
                "a negation, an index identifier",
            ),
        ),
        (
            "Retrieval methods were surveyed and compared.",
            "Retrieval literature reviewed.",
            "Background research progressed.",
        ),
    ),
    _Topic(
        "evaluation",
        0.35,
        "read_file",
        (
            "Compared evaluation protocols across the shortlisted papers.",
            "Summarized how the benchmarks define success on long inputs.",
            "Noted that most papers report averages and few report the variance.",
        ),
        (
            (
                "Exact match on {ds} dropped {x} points when the context exceeded {k}k tokens.",
                "quantities with units",
            ),
            (
                "{arxiv} reports {metric} of {a}, not {b} as its abstract implies.",
                "a paper identifier, a quantity, a negation",
            ),
            (
                "Excluded {run} from the comparison because its seed was not fixed.",
                "a run identifier, a causal clause",
            ),
        ),
        (
            "Evaluation results were collected.",
            "Benchmarks reviewed.",
            "Evidence gathering progressed.",
        ),
    ),
    _Topic(
        "synthesis",
        0.25,
        "editor",
        (
            "Drafted the outline of the synthesis and ordered the sections.",
            "Rewrote the introduction to foreground the open questions.",
            "Merged the notes on long-context behaviour into one section.",
        ),
        (
            (
                "Section {t} must cite {arxiv} before {arxiv2}, in that order.",
                "an explicit ordering, paper identifiers",
            ),
            (
                "Claim C{c} rests on table {t} of {arxiv}; do not generalize beyond {k}k tokens.",
                "a provenance link, a scope limit, a negation",
            ),
        ),
        (
            "The synthesis draft was revised.",
            "Synthesis drafted.",
            "Writing progressed.",
        ),
    ),
    _Topic(
        "staging-config",
        0.7,
        "shell",
        (
            "Checked the environment configuration with the platform team.",
            "Walked through the deployment checklist for the retrieval service.",
        ),
        (
            (
                "Raised read_timeout_ms to {timeout} on {env} because p95 latency hit {ms} ms.",
                "a config key, numbers with units, an environment scope, a causal clause",
            ),
            (
                "Set max_batch_tokens={tokens} in {path} after an OOM on {gpu}.",
                "a config key, a quantity, a file path",
            ),
            (
                "Reverted read_timeout_ms to 30000 on prod; the raise to {timeout} stays on "
                "{env} only.",
                "a config key, quantities, an environment scope",
            ),
        ),
        (
            "Configuration was adjusted for the staging environment.",
            "Staging config stabilized.",
            "Infrastructure work progressed.",
        ),
    ),
    _Topic(
        "dependencies",
        0.75,
        "shell",
        (
            "Reviewed the dependency tree of the retrieval service.",
            "Discussed the upgrade policy for the client libraries.",
        ),
        (
            (
                "Pinned requests=={v} after v{v2} broke the proxy config.",
                "version pins, a causal link",
            ),
            (
                "Do NOT upgrade faiss-cpu past {fv}; the IVF index format changed.",
                "a negation, a version bound",
            ),
            (
                "Bumped tokenizers to 0.{x}.1 because {issue} fixed the offset bug.",
                "a version pin, a ticket id, a causal clause",
            ),
        ),
        (
            "Dependencies were updated.",
            "Dependency hygiene maintained.",
            "Maintenance work progressed.",
        ),
    ),
    _Topic(
        "data-migrations",
        0.7,
        "shell",
        (
            "Planned the data migration for the document store.",
            "Reviewed the backfill progress with the data team.",
        ),
        (
            (
                "Do NOT run migration 00{mig} with --force on prod.",
                "a negation, a migration id, a CLI flag, a scope",
            ),
            (
                "Backfill {job} stopped at shard {shard} of {shards} because the quota hit "
                "{gb} GB.",
                "a job id, quantities with units, a causal clause",
            ),
            (
                "Migration 00{mig} must run before 0{mig2}; the reverse order drops the "
                "embeddings (commit {commit}).",
                "an explicit ordering, migration ids, a hash",
            ),
        ),
        (
            "Migration guidance noted.",
            "Data store work tracked.",
            "Data work progressed.",
        ),
    ),
)


def _slots_of(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def _render(template: str, rng: random.Random) -> str:
    return template.format(**{name: _SLOTS[name](rng) for name in _slots_of(template)})


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
        """The scorer's salience of ``item`` at round ``t`` (unrounded)."""
        return item.cos * self.decay(max(0, t - item.created))

    # --- creation -----------------------------------------------------------------

    def new_span(self, t: int, created: int) -> _Item:
        """Draw a raw span of round ``t`` (``created`` may be earlier for round 1)."""
        p, rng = self.p, self.rng
        topic_index = rng.randrange(len(_TOPICS))
        topic = _TOPICS[topic_index]
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
                item.text = _render(template, rng)
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
            sentences = [_TOPICS[k].tiers[min(depth, len(_TOPICS[k].tiers)) - 1] for k in topics]
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
                entry["source"] = f"{_TOPICS[span.topic].source}:{span.id}"
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
        },
        "task_query": params.task_query,
        "recall_floor": 1,
        "simulator": {
            "seed": params.seed,
            "enforce_provenance": params.enforce_provenance,
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
