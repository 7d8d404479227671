"""Quantities and version requirements, as survival compares them (issue 10, point 3;
docs/discriminators.md): a quantity in a base unit ("90 s" is "90000 ms"), and whether a
version requirement stated by a summary (``>= 2.4``, ``~> 1.2``, ``^3``) admits a version
a child stated.  Pure standard library (the analysis runs it in a helper process).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["REQUIREMENT_RE", "TO_BASE", "RequirementTable", "admits", "admitted", "measure",
           "requirement_table", "vtuple"]

REQUIREMENT_RE = re.compile(r"(~>|\^|~=?|>=|<=|==|>|<)\s*v?(\d+(?:\.\d+){0,3})")
TO_BASE = {"ms": ("time", 1.0), "s": ("time", 1000.0), "min": ("time", 60000.0),
           "h": ("time", 3600000.0), "d": ("time", 86400000.0), "week": ("time", 604800000.0),
           "us": ("time", 0.001), "ns": ("time", 1e-6), "b": ("bytes", 1.0),
           "kb": ("bytes", 1e3), "mb": ("bytes", 1e6), "gb": ("bytes", 1e9),
           "tb": ("bytes", 1e12), "kib": ("bytes", 1024.0), "mib": ("bytes", 1024.0 ** 2),
           "gib": ("bytes", 1024.0 ** 3), "tib": ("bytes", 1024.0 ** 4)}


def measure(number: str, unit: str) -> tuple[str, float] | None:
    """(dimension, value in the base unit) of a quantity whose unit converts."""
    conv = TO_BASE.get(unit)
    if conv is None:
        return None
    try:
        return conv[0], round(float(number) * conv[1], 6)
    except ValueError:
        return None


def vtuple(version: str) -> tuple[int, ...]:
    """A version's numeric parts, at most four: ``v2.4.1-rc1`` is ``(2, 4, 1, 1)``."""
    return tuple(int(p) for p in re.findall(r"\d+", version)[:4])


def admits(op: str, req: tuple[int, ...], ver: tuple[int, ...]) -> bool:
    """Whether a requirement ``op req`` admits version ``ver`` (~> and ~ pessimistic,
    ^ caret, comparisons; == and bare by prefix)."""
    pad = ver + (0,) * (len(req) - len(ver))
    if op in ("==", "="):
        return pad[:len(req)] == req
    if op == ">=":
        return pad >= req
    if op == ">":
        return pad > req
    if op == "<=":
        return pad[:len(req)] <= req
    if op == "<":
        return pad < req
    if op in ("~>", "~="):  # all but the last given part fixed
        fixed = max(1, len(req) - 1)
        return pad >= req and pad[:fixed] == req[:fixed]
    if op == "~":
        return pad >= req and pad[:2] == req[:2] if len(req) >= 2 else pad[:1] == req[:1]
    if op == "^":
        return pad >= req and pad[:1] == req[:1]
    return False


RequirementTable = dict[tuple[str, int], Any]


def requirement_table(requirements: Iterable[tuple[str, tuple[int, ...]]]
                       ) -> RequirementTable:
    """The requirements of a summary folded per (operator class, version length) so that
    :func:`admitted` answers "does any admit this version" in constant time: the
    versions of ``==``; the least of ``>=``/``>`` and the greatest of ``<=``/``<``; the
    least per fixed prefix of ``~>``/``~=``, ``~`` and ``^`` (what :func:`admits`
    compares)."""
    table: dict[tuple[str, int], Any] = {}
    for op, req in requirements:
        n = len(req)
        if op in ("==", "="):
            table.setdefault(("==", n), set()).add(req)
        elif op in (">=", ">"):
            table[op, n] = min(table.get((op, n), req), req)
        elif op in ("<=", "<"):
            table[op, n] = max(table.get((op, n), req), req)
        elif op == "~" and n < 2:
            table.setdefault(("~1", n), set()).add(req[:1])
        elif op in ("~>", "~=", "~", "^"):
            cls = "~>" if op == "~=" else op
            fixed = max(1, n - 1) if cls == "~>" else 2 if cls == "~" else 1
            group = table.setdefault((cls, n), {})
            group[req[:fixed]] = min(group.get(req[:fixed], req), req)
    return table


def admitted(ver: tuple[int, ...], table: RequirementTable) -> bool:
    """Whether any requirement folded into ``table`` (:func:`requirement_table`) admits
    ``ver``: the same answer as :func:`admits` over each of them."""
    for (cls, n), entry in table.items():
        pad = ver + (0,) * (n - len(ver))
        if cls == "==":
            hit = pad[:n] in entry
        elif cls == ">=":
            hit = pad >= entry
        elif cls == ">":
            hit = pad > entry
        elif cls == "<=":
            hit = pad[:n] <= entry
        elif cls == "<":
            hit = pad < entry
        elif cls == "~1":
            hit = pad[:1] in entry
        else:
            fixed = max(1, n - 1) if cls == "~>" else 2 if cls == "~" else 1
            least = entry.get(pad[:fixed])
            hit = least is not None and pad >= least
        if hit:
            return True
    return False
