"""Thresholds and evaluation settings, each with its default and where it comes from.

One flat namespace shared by all rules (a threshold such as ``raw_ratio_floor`` is
read by more than one rule, and must mean one thing).  Command line and config file
set them by name; :func:`describe` lists them for ``--help``, docs and ``config show``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

from compaction_audit.errors import UsageError

MAX_ROUNDS = 10_000_000
"""Upper bound of every integer setting (rounds, tiers): larger values are usage errors."""


def _t(default: Any, source: str, help: str, minimum: float = 0.0,
       maximum: float | None = None) -> Any:
    if maximum is None and isinstance(default, float):
        maximum = 0.999  # ratios: a target or floor of 1.0 can never be met
    if maximum is None and isinstance(default, int):
        maximum = MAX_ROUNDS  # rounds and depths: far beyond any session, within Int64
    return field(default=default, metadata={"source": source, "help": help,
                                            "minimum": minimum, "maximum": maximum})


@dataclass(frozen=True)
class Settings:
    """Every threshold the rules read.  Units are in each field's help text."""

    raw_ratio_floor: float = _t(
        0.25, "seed 000, Decision Boundary",
        "raw_ratio below this (ratio, exclusive) is the grounding floor")
    rehydrate_target: float = _t(
        0.30, "seed 000, Decision Boundary",
        "raw_ratio a rehydration should restore (ratio)")
    span_floor_fraction: float = _t(
        0.20, "seed 000, Operational Effect code (SPAN_FLOOR_FRACTION)",
        "provenance floor as a fraction of start_spans")
    min_depth: int = _t(
        2, "seed 000, Condition of Validity 1",
        "re-summarization depth at which inversion becomes possible (tiers)", 1)
    depth_pin_rounds: int = _t(
        5, "seed 000, Decision Boundary",
        "rounds at the depth cap beyond which the hierarchy is pinned (rounds)")
    summary_majority_ratio: float = _t(
        0.5, "seed 000, Core Distinction (summary:raw crosses 1.0)",
        "raw_ratio below which summary tokens exceed raw tokens (ratio)")
    logged_tolerance: float = _t(
        0.01, "compaction-audit (absolute tolerance for ratios; counts must match)",
        "allowed |logged - rebuilt| for raw_ratio and query_cosine_retained")
    window: int = _t(
        1, "spec rules.md, Boundary rules",
        "compare round t with round t-window for 'fell' and 'rose' (rounds)", 1)
    sustain: int = _t(
        1, "spec rules.md, Boundary rules",
        "consecutive rounds a boundary condition must hold before it fires (rounds)", 1)
    salience_agreement_floor: float = _t(
        0.0, "issue 16 (below 0: the scorer's order is unrelated or opposite to relevance)",
        "rank correlation of logged salience and rebuilt cosine below which they "
        "disagree (CA204)", -0.999)
    disagreement_rounds: int = _t(
        3, "issue 16 (as sustain_onset: three rounds make a trend, not a blip)",
        "consecutive judged rounds of disagreement before CA204 fires (rounds)", 1)
    sustain_onset: int = _t(
        3, "spec rules.md, Onsets",
        "consecutive rounds of the inversion signature that make an onset (rounds)", 1)

    max_line_bytes: int = _t(
        64 << 20, "issue 11, item 4 (bounded input)",
        "longest line read, after decompression; longer is an input error (bytes)",
        1024, 1 << 40)
    max_input_bytes: int = _t(
        64 << 30, "issue 11, item 4 (bounded input)",
        "most bytes read from one input, after decompression (bytes)", 1024, 1 << 50)
    max_decompression_ratio: int = _t(
        1000, "issue 11, item 4 (bounded input)",
        "most a .gz/.zst input may expand, checked past 64 MiB (decompressed/compressed)",
        1, 1 << 30)

    def with_values(self, values: dict[str, Any]) -> Settings:
        """A copy with ``values`` applied; raises :class:`UsageError` for unknown names
        or values of the wrong type or below the minimum."""
        known = {f.name: f for f in fields(self)}
        clean: dict[str, Any] = {}
        for raw_name, value in values.items():
            name = raw_name.replace("-", "_")
            if name not in known:
                import difflib

                close = difflib.get_close_matches(name, list(known), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise UsageError(f"unknown threshold {raw_name!r} ({hint}known: "
                                 f"{', '.join(sorted(known))})")
            f = known[name]
            clean[name] = coerce(name, value, type(f.default), f.metadata["minimum"],
                                 f.metadata["maximum"])
        return replace(self, **clean)


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                         r"|(?i:nan|inf|infinity))")
"""The text of a number as a person writes it: ASCII digits, no ``_`` between them
(Python's ``int`` and ``float`` read "1_0" as 10 and Arabic-Indic digits as
theirs, so a gate value could hide in text that does not read as that number:
adv80 #1); "nan" and "inf" are read, to be refused as not finite."""


def coerce(name: str, value: Any, kind: type, minimum: float,
           maximum: float | None = None) -> Any:
    """Convert a string or number to ``kind`` (int or float), checking the bounds.
    A string must be an ASCII decimal number (:data:`_FLOAT_TEXT`, for an int
    :data:`_INT_TEXT`) apart from white space around it.  Raises :class:`UsageError`
    naming ``name`` and the value as given."""
    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, str) and not (_INT_TEXT if kind is int else _FLOAT_TEXT
                                           ).fullmatch(value.strip(" \t")):
            raise ValueError
        number = kind(value) if kind is float else _to_int(value)
    except (TypeError, ValueError):
        digits = " in ASCII digits" if isinstance(value, str) else ""  # usertest33 #6
        raise UsageError(f"{name} must be {'an integer' if kind is int else 'a number'}"
                         f"{digits}, got {value!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise UsageError(f"{name} must be a finite number, got {value!r}")
    if number < minimum:
        raise UsageError(f"{name} must be >= {minimum:g}, got {value!r}")
    if maximum is not None and number > maximum:
        raise UsageError(f"{name} must be <= {maximum:g}, got {value!r}")
    return number


def _to_int(value: Any) -> int:
    """An int from an int or a decimal string; floats (1e9, 2.0) are not integers.  A
    string of more than 18 digits is read as +-10**18, past every setting's bound, so
    the message says the bound (adv96 #8: 5,000 digits read "must be an integer in
    ASCII digits")."""
    if isinstance(value, float):
        raise ValueError
    if isinstance(value, str):
        digits = value.strip(" \t").lstrip("+-").lstrip("0")
        if len(digits) > 18:  # past any bound, and past int()'s 4,300 digits at worst
            return (-1 if value.strip(" \t").startswith("-") else 1) * 10 ** 18
    return int(value)


def describe() -> list[dict[str, Any]]:
    """Every setting as ``{name, default, source, help}`` in declaration order."""
    return [{"name": f.name, "default": f.default, "source": f.metadata["source"],
             "help": f.metadata["help"]} for f in fields(Settings)]


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    """Parse ``NAME=VALUE`` strings from ``--set``; raises :class:`UsageError`, also
    for a name given twice (``raw_ratio_floor`` and ``raw-ratio-floor`` are one name):
    the last one won without a word (adv62)."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise UsageError(f"--set expects NAME=VALUE, got {pair!r}")
        same = name.strip().replace("-", "_")
        if same in seen:
            raise UsageError(f"--set: {same} is given twice ({seen[same]!r} and {pair!r})")
        seen[same] = pair
        out[name.strip()] = value.strip()
    return out
