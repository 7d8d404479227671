"""A version pin lost at a fold, then the package installed without it (adv123 #5).

A person says "Pin numpy==1.26.4, numpy 2.x breaks our C extension", a fold drops it,
and a later call runs ``pip install numpy`` (or ``pip install -U numpy``, or
``npm install left-pad@2``): the pin's harm by action, as lost-rule-violated (CA307)
reads a lost rule's.  :func:`unpinned` finds, for each pin lost at a fold, the first
tool call at or after the loss's round that installs, adds or upgrades the package
with no version or another one.

A pin is a lost ``version`` discriminator written ``NAME==VERSION`` or ``NAME@VERSION``
(a version or, for npm's form, an identifier), or a lost rule that pins a named package
("Keep requests pinned at 2.31.0", "pin numpy to 1.26.4"). An install is a package
manager's install, add, upgrade or update command (pip, uv pip, pipx, poetry, pipenv,
conda, mamba, npm, pnpm, yarn, bun, gem, cargo) naming the package; the same version,
written with ``==``, ``@`` or ``=`` (extras between: ``numpy[dev]==1.26.4``), keeps the
pin; an install in a commit message, a search or printed text is none (adv125 #8, #12).
Only calls holding an install word and a pinned package's name are read in Python.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.recall.callwords import unquoted

__all__ = ["pins", "unpinned"]

_PIN_TOKEN_RE = re.compile(r"^(?P<pkg>[A-Za-z][\w.-]*?)\s*(?:===?|@)\s*v?(?P<ver>\d[\w.+-]*)$")
_PIN_RULE_RE = re.compile(
    r"(?i)\b(?:pin(?:ned)?|keep|hold|lock)\s+(?P<pkg>[A-Za-z][\w.-]*)\s+(?:pinned\s+|locked\s+)?"
    r"(?:at|to|on)\s+(?:version\s+)?v?(?P<ver>\d[\w.+-]*?)(?=[\s,;:)]|\.?$|\.\s)")
_MANAGERS = (r"(?i)(?:\b(?:pip3?|uv\s+pip|uv|pipx|poetry|pipenv|conda|mamba|npm|pnpm|yarn"
             r"|bun|gem|cargo)\b[^\n;&|]*?\b(?:install|add|upgrade|update|up)\b"
             r"|\b(?:npm|pnpm)\s+i\b)")
"""A package manager's install command (a Polars and Python regex)."""
_MANAGER_RE = re.compile(_MANAGERS + r"(?P<args>[^\n;&|]*)")


def pins(text: str, kind: str) -> tuple[str, str] | None:
    """``(package, version)`` a lost fact pins (lower case), None when it pins none:
    a ``version`` token ``numpy==1.26.4`` / ``left-pad@1.3.0``, or a rule that pins a
    named package ("Keep requests pinned at 2.31.0")."""
    m = (_PIN_TOKEN_RE.match(text.strip()) if kind in ("version", "identifier")
         else _PIN_RULE_RE.search(text))
    return (m.group("pkg").lower(), m.group("ver").rstrip(".").lower()) if m else None


def _breaks(call: str, pkg: str, version: str) -> bool:
    """Whether ``call`` installs ``pkg`` at no version or another one than ``version``."""
    name = re.compile(rf"(?i)(?<![\w./@-]){re.escape(pkg)}(?:\[[^\]]*\])?"
                      rf"(?P<spec>[=<>~!@^][^\s'\"]*)?(?![\w.-])")
    for m in _MANAGER_RE.finditer(unquoted(call)):
        for arg in name.finditer(m.group("args")):
            spec = (arg.group("spec") or "").lower()
            if version not in re.split(r"[=<>~!@^,]+", spec):
                return True
    return False


def unpinned(lost: pl.DataFrame, calls: pl.DataFrame, starts: pl.DataFrame
             ) -> list[dict[str, Any]]:
    """One row per pin lost at a fold whose package a later call installs unpinned.

    ``lost``: the fold-lost rows (``key``, ``kind``, ``text``, ``span``, ``fold``,
    ``lost_round``) of a person's or a document's spans, with ``person`` (true for a
    person's: a bare ``NAME==VERSION`` pins only there, a tool's listing of what is
    installed pins nothing); ``calls``: the tool calls (``id``, ``ri``, ``round``,
    ``source``, ``text``) in the order the calls were made; ``starts``: ``lost_round``
    -> ``start`` (the ri of the loss's round).  Each row: the lost row's columns but
    ``person``, ``object`` (the package), ``violated_span``, ``violated_round``,
    ``violated_source``, ``ri`` (the call's)."""
    found = [(row, p) for row in lost.filter(
        pl.col("kind").is_in(["constraint", "negation", "requirement"])
        | (pl.col("kind").is_in(["version", "identifier"]) & pl.col("person"))).drop("person")
        .iter_rows(named=True) if (p := pins(row["text"], row["kind"])) is not None]
    if not found:
        return []
    names = sorted({pkg for _, (pkg, _) in found})
    held = (calls.filter(pl.col("text").str.contains(_MANAGERS)
                         & pl.col("text").str.to_lowercase().str.contains_any(names))
            .select("id", "ri", "round", "source", "text").rows())
    first = dict(starts.iter_rows())
    out = []
    for row, (pkg, version) in found:
        start = first.get(row["lost_round"])
        hit = next((c for c in held if start is not None and c[1] >= start
                    and c[0] != row["span"] and _breaks(c[4], pkg, version)), None)
        if hit is not None:
            out.append({**row, "object": pkg, "violated_span": hit[0], "ri": hit[1],
                        "violated_round": hit[2], "violated_source": hit[3]})
    return out
