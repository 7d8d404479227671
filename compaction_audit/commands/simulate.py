"""``compaction-audit simulate -o OUT``: write a simulated compaction session."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from compaction_audit.commands.common import discard_stdout, fail, output_path, say
from compaction_audit.errors import LogError, UsageError

if TYPE_CHECKING:  # the simulator loads when the command runs (issue 14, item 4)
    from compaction_audit.simulate import SimParams


class Preset(StrEnum):
    """The calibrated runs of :data:`compaction_audit.simulate.PRESETS`."""

    research_decay = "research-decay"
    research_no_decay = "research-no-decay"
    research_provenance = "research-provenance"
    survivability_scorer = "survivability-scorer"
    delta_text = "delta-text"


_OPTION_OF: dict[str, str] = {
    "seed": "--seed",
    "rounds": "--rounds",
    "budget_tokens": "--budget",
    "max_depth": "--max-depth",
    "recency_decay": "--recency-decay",
    "enforce_provenance": "--enforce-provenance",
    "spans_per_round": "--spans-per-round",
    "spans_jitter": "--spans-per-round",
    "store_retention_rounds": "--store-retention",
}
"""The option that sets each overridable :class:`SimParams` field."""


def build_params(preset: str, **overrides: Any) -> SimParams:
    """The parameters of ``preset`` with the non-None ``overrides`` applied.

    Raises :class:`typer.BadParameter` naming the option for an unknown preset or a
    value out of range.
    """
    from compaction_audit.simulate import PRESETS

    if preset not in PRESETS:
        raise typer.BadParameter(
            f"unknown preset {preset!r} (known: {', '.join(PRESETS)})", param_hint="--preset"
        )
    base = PRESETS[preset]
    changes = {name: value for name, value in overrides.items()
               if value is not None and value != getattr(base, name)}
    params = replace(base, **changes)
    if changes:  # another run than the preset's: its own session id, its parameters
        said = tuple(sorted(changes.items()))  # written down (usertest17 #5: two runs
        digest = hashlib.sha256(repr(said).encode()).hexdigest()[:8]  # were one session)
        params = replace(params, overrides=said, session_id=f"{base.session_id}-{digest}")
    if "spans_per_round" in changes and params.spans_jitter > params.spans_per_round:
        params = replace(params, spans_jitter=params.spans_per_round)
    try:
        params.validate()
    except ValueError as exc:
        name = str(exc).split(":", 1)[0]
        raise typer.BadParameter(str(exc), param_hint=_OPTION_OF.get(name, "--preset")) from None
    return params


def simulate_command(
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            parser=output_path,
            help="Where to write the log (JSON Lines; a .gz or .zst name compresses it, "
                 "the same bytes each time); - is stdout.",
            show_default=False,
        ),
    ],
    preset: Annotated[
        Preset,
        typer.Option("--preset", help="Calibrated run to start from (see docs/simulator.md)."),
    ] = Preset.research_decay,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the random generator (preset: 30).")
    ] = None,
    rounds: Annotated[
        int | None, typer.Option("--rounds", help="Compaction rounds to simulate (preset: 40).")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget", help="Token budget of the working set, in tokens (preset: 180000)."
        ),
    ] = None,
    max_depth: Annotated[
        int | None,
        typer.Option(
            "--max-depth",
            help="Depth cap of the summary hierarchy, in tiers (presets: 3, provenance 2).",
        ),
    ] = None,
    recency_decay: Annotated[
        float | None,
        typer.Option(
            "--recency-decay",
            help="Per-round rate of the scorer's recency decay; "
            "0 removes it (preset: 0.045, no-decay 0).",
        ),
    ] = None,
    enforce_provenance: Annotated[
        bool | None,
        typer.Option(
            "--enforce-provenance/--no-enforce-provenance",
            help="Keep provenance reachability as a hard invariant (preset: only "
            "research-provenance).",
            show_default=False,
        ),
    ] = None,
    spans_per_round: Annotated[
        int | None,
        typer.Option("--spans-per-round", help="Mean raw spans arriving per round (preset: 14)."),
    ] = None,
    store_retention: Annotated[
        float | None,
        typer.Option(
            "--store-retention",
            help="Mean rounds an offloaded item stays "
            "resolvable in the external store (preset: 6).",
        ),
    ] = None,
) -> None:
    """Write a simulated compaction session (compaction-audit/1) from a seeded model.

    The model: raw spans arrive every round; salience is the cosine of an item's topic
    embedding with the task query, times a recency decay; a hierarchical summarizer
    folds faded items into summaries of the next tier up to the depth cap (a summary
    averages its children's embeddings, so it scores higher than they do); eviction
    keeps the working set within the token budget every round.  Presets: research-decay
    crosses the salience-inversion boundary, research-no-decay does so later (if at
    all), research-provenance enforces provenance reachability and stays grounded,
    survivability-scorer ranks by survivability instead of relevance (the logged
    salience disagrees with the rebuilt cosine), delta-text omits retained (the
    auditor reads the inversion signature on the rebuilt cosine).
    The same options give the same bytes.  Bad values exit 2 with a one-line message.
    """
    from compaction_audit.outfile import output_target, refuse_same_stdout
    from compaction_audit.simulate import write_session

    params = build_params(
        preset.value,
        seed=seed,
        rounds=rounds,
        budget_tokens=budget,
        max_depth=max_depth,
        recency_decay=recency_decay,
        enforce_provenance=enforce_provenance,
        spans_per_round=spans_per_round,
        store_retention_rounds=store_retention,
    )
    try:
        if str(output) == "-":  # '-o - >> pyproject.toml' broke every later command
            refuse_same_stdout([])  # in the folder (adv81 #2): as every writer does
            write_session(params, "-")
            return
        with output_target(str(output)) as target:
            count = write_session(params, target)
    except LogError as exc:  # a write that failed (a full disk): one line, not click's
        # usage block, which said the option's value was invalid; a closed pipe is the
        # command line's (exit 141, quietly)
        if str(output) == "-":
            discard_stdout()
        fail(f"{'standard output' if str(output) == '-' else output}: {exc.message}")
    except UsageError as exc:
        fail(f"--output: {exc}")
    # the options given, so that two runs' lines tell them apart (usertest62 D2)
    flags = [f"{_OPTION_OF[name]} {value}" for name, value in (
        ("budget_tokens", budget), ("max_depth", max_depth), ("recency_decay", recency_decay),
        ("spans_per_round", spans_per_round), ("store_retention_rounds", store_retention))
        if value is not None]
    if enforce_provenance is not None:
        flags.append("--enforce-provenance" if enforce_provenance
                     else "--no-enforce-provenance")
    given = ", ".join(flags)
    say(f"simulated {params.rounds} rounds ({preset.value}, seed {params.seed}"
        f"{', ' + given if given else ''}): {count} records -> {output}")
