"""The simulator's parameters (:class:`SimParams`), its presets and the scale option.

Defaults reproduce seed 000's research session ("What Was Observed"); see
:mod:`compaction_audit.simulate` for the model they drive and docs/simulator.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from compaction_audit.simulate.texts import TOPICS


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

    summary_bias: float = 0.0
    """A scorer biased toward summaries (0 to 1; 0: the cosine scorer above).  Above 0
    the scorer ranks by survivability, not relevance (seed 000, "Core Distinction"):
    salience = ``(1 - summary_bias) * min(1, age / survival_rounds)`` +
    ``summary_bias * depth``, blind to the task query.  Issue 16: the sample
    ``survivability-scorer`` shows salience-disagreement (CA204) with it."""

    survival_rounds: int = 20
    """Rounds after which an item counts as fully survived for the biased scorer
    (rounds; only read when ``summary_bias`` > 0)."""

    delta_mode: bool = False
    """Leave ``retained`` out of round records (delta mode: the auditor derives the
    working set from arrivals and evictions; no logged salience).  Issue 16: the
    sample ``delta-text`` gets its inversion verdict from the rebuilt cosine."""

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

    overrides: tuple[tuple[str, object], ...] = ()
    """The parameters set over the preset's (``simulate --seed 7``: ``(("seed", 7),)``),
    written in the session record's ``simulator`` so that a run says how it was made."""

    task_query: str = (
        "Synthesize recent findings on retrieval for long-context agents and "
        "recommend a deployment configuration for the retrieval service."
    )
    """The task query the scorer compares against (written in the session record)."""

    def working_set_bound(self) -> int:
        """Most items the working set can hold at once, as far as the parameters say:
        what the budget holds at the mean span size (``budget_tokens /
        span_tokens_mean``), but no more than ever arrived, and at least one round's
        arrivals (each keeps a round of grace)."""
        arrived = self.initial_spans + self.rounds * self.spans_per_round
        return max(self.spans_per_round, self.initial_spans,
                   min(self.budget_tokens // self.span_tokens_mean, arrived))

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first parameter out of its range
        (``"seed: value ... is out of range ..."``).  The upper bounds
        (:data:`UPPER`) keep every value writable as JSON and every run finite: a
        huge ``--seed`` could not be encoded, ``--store-retention inf`` overflowed,
        ``--rounds 10**23`` never ended (issue 11, fresh pass, F8)."""
        for name, (low, high) in UPPER.items():
            value = getattr(self, name)
            if not (math.isfinite(value) and low <= value <= high):
                raise ValueError(f"{name}: value {value!r} is out of range "
                                 f"({low:,} to {high:,})")
        if self.rounds * self.spans_per_round > MAX_ARRIVALS:
            raise ValueError(f"spans_per_round: value {self.spans_per_round!r} is out of "
                             f"range for {self.rounds:,} rounds (rounds x spans per round "
                             f"at most {MAX_ARRIVALS:,})")
        held = self.working_set_bound()
        if self.rounds * held > MAX_RETAINED:
            raise ValueError(f"budget_tokens: value {self.budget_tokens!r} is out of range "
                             f"for {self.rounds:,} rounds of {self.spans_per_round:,} spans "
                             f"(a working set of up to {held:,} items written each round; "
                             f"at most {MAX_RETAINED:,} in a run)")
        checks: list[tuple[str, bool, str]] = [
            ("rounds", self.rounds >= 1, ">= 1"),
            ("budget_tokens", self.budget_tokens >= 1, ">= 1"),
            ("max_depth", self.max_depth >= 1, ">= 1"),
            ("recency_decay", self.recency_decay >= 0 and math.isfinite(self.recency_decay),
             "a finite number >= 0"),
            ("initial_spans", self.initial_spans >= 0, ">= 0"),
            ("initial_age_spread", self.initial_age_spread >= 0, ">= 0"),
            ("spans_per_round", self.spans_per_round >= 0, ">= 0"),
            ("spans_jitter", 0 <= self.spans_jitter <= self.spans_per_round,
             "0 to spans_per_round"),
            ("span_tokens_mean", self.span_tokens_mean >= 1, ">= 1"),
            ("span_tokens_sigma", 0 <= self.span_tokens_sigma <= 3, "0 to 3"),
            ("dims", self.dims >= 2, ">= 2"),
            (
                "topic_relevance",
                len(self.topic_relevance) == len(TOPICS)
                and all(0 <= r <= 1 for r in self.topic_relevance),
                f"{len(TOPICS)} values, each 0 to 1",
            ),
            ("span_noise", self.span_noise >= 0, ">= 0"),
            ("span_noise_sigma", 0 <= self.span_noise_sigma <= 3, "0 to 3"),
            ("fanout", self.fanout >= 2, ">= 2"),
            ("compression", bool(self.compression) and all(0 < c < 1 for c in self.compression),
             "one value or more, each above 0 and below 1"),
            ("fold_min_age", self.fold_min_age >= 1, ">= 1"),
            ("fold_decay", bool(self.fold_decay) and all(0 <= f <= 1 for f in self.fold_decay),
             "one value or more, each 0 to 1"),
            ("fold_floor", 0 <= self.fold_floor <= 1, "0 to 1"),
            ("tier_slots", self.tier_slots >= 1, ">= 1"),
            ("folds_per_round", self.folds_per_round >= 0, ">= 0"),
            ("initial_folds", self.initial_folds >= 0, ">= 0"),
            ("keep_discriminator", 0 <= self.keep_discriminator <= 1, "0 to 1"),
            ("store_retention_rounds", self.store_retention_rounds >= 1, ">= 1"),
            ("min_raw_share", 0 <= self.min_raw_share < 1, "0 to below 1"),
            ("depth_guard_rounds", self.depth_guard_rounds >= 1, ">= 1"),
            ("logged_error_rate", 0 <= self.logged_error_rate <= 1, "0 to 1"),
            ("summary_bias", 0 <= self.summary_bias <= 1, "0 to 1"),
            ("survival_rounds", self.survival_rounds >= 1, ">= 1"),
        ]
        for name, ok, allowed in checks:  # the range said, as the upper bounds say it
            if not ok:  # (usertest16 #9)
                raise ValueError(f"{name}: value {getattr(self, name)!r} is out of range "
                                 f"({allowed})")


UPPER: dict[str, tuple[int, int]] = {
    "seed": (-(2**53 - 1), 2**53 - 1),
    "rounds": (1, 100_000),
    "budget_tokens": (1, 10**12),
    "max_depth": (1, 1_000),
    "spans_per_round": (0, 10_000),
    "store_retention_rounds": (1, 10**9),
}
"""The range of each option-settable parameter checked first by
:meth:`SimParams.validate`: a seed and a budget the log format can carry (JSON's exact
integers; the reader's ``MAX_TOKENS``), and runs that end (about 5 ms a round at the
presets' size, so 100,000 rounds take minutes).  docs/simulator.md states them."""

MAX_RETAINED = 50_000_000
"""Most working-set entries one run writes (``rounds`` x :meth:`SimParams.
working_set_bound`): each round lists the items it retains, so a budget that holds
everything made the log grow with the square of the rounds (adv57: 2,000 rounds of
1,000 spans under a 10^12-token budget wrote 58 MB in its first 73 rounds, about 40 GB
in all).  About 1 GB of log at this bound; the presets write under 30 million at
``--rounds``' bound."""

MAX_ARRIVALS = 2_000_000
"""Most spans one run brings (``rounds * spans_per_round``).  The writer validates each
record with the reader's rules as it goes and holds what that needs: about 6 times
the bytes written in memory; 40 rounds of 10,000 spans wrote 76 MB in 17 s with 428 MB at
peak (adv56), so the bound (about 380 MB of log, under 3 GB), with :data:`MAX_RETAINED`,
keeps runs finite in time and memory; the presets' 14 spans a round reach it at about
140,000 rounds, past ``--rounds``' own bound."""


PRESETS: dict[str, SimParams] = {
    "research-decay": SimParams(),
    "research-no-decay": SimParams(recency_decay=0.0, session_id="research-no-decay"),
    "research-provenance": SimParams(
        enforce_provenance=True, max_depth=2, session_id="research-provenance"
    ),
    "survivability-scorer": SimParams(summary_bias=0.3, session_id="survivability-scorer"),
    "delta-text": SimParams(delta_mode=True, session_id="delta-text"),
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
