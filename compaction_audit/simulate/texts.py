"""The simulator's texts: topics, span templates with discriminators, summary texts.

Used by :mod:`compaction_audit.simulate`: each topic has narrative and discriminating
span templates (numbers with units, version pins, identifiers, negations, causes,
scopes) and the topical, lossy summary texts its folds write.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

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
class Topic:
    """One topic of the simulated research task."""

    name: str
    discriminating_share: float  # probability that a span of this topic is discriminating
    source: str  # the tool that typically produced its spans
    narrative: tuple[str, ...]
    discriminating: tuple[tuple[str, str], ...]  # (template, precision kinds it carries)
    tiers: tuple[str, ...]  # summary sentence per tier (1, 2, 3, ...)


TOPICS: tuple[Topic, ...] = (
    Topic(
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
    Topic(
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
    Topic(
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
    Topic(
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
    Topic(
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
    Topic(
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


def render(template: str, rng: random.Random) -> str:
    return template.format(**{name: _SLOTS[name](rng) for name in _slots_of(template)})
