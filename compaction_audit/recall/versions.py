"""Quantities and version requirements, as survival compares them (issue 10, point 3;
docs/discriminators.md): a quantity in a base unit ("90 s" is "90000 ms"), and whether a
version requirement stated by a summary (``>= 2.4``, ``~> 1.2``, ``^3``) admits a version
a child stated (a version with a suffix, such as ``1.2.0rc1``, by its norm only:
:func:`suffixed`).  Pure standard library (the analysis runs it in a helper process).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["REQUIREMENT_RE", "SUFFIX", "TO_BASE", "RequirementTable", "admits", "admitted",
           "in_units", "measure", "requirement_table", "suffix_norm", "suffixed", "vtuple"]

SUFFIX = (r"(?:[-+][0-9A-Za-z]{1,64}+(?:\.[0-9A-Za-z]{1,64}+){0,8}+"
          r"|[-_.]?(?i:(?:alpha|beta|preview|pre|rc|post|rev|dev)(?:[-_.]?\d{1,20}+)?"
          r"|[abcr]\d{1,20}+)){1,4}+")
"""What follows a version's numbers and is part of it (adv88 #4): a semver pre-release or
build (``-rc.1``, ``-beta``, ``+build.5``: a ``-`` or ``+`` and dot-separated words of
letters and digits) or a PEP 440 pre-, post- or dev-release or local part (``rc1``,
``a2``, ``b3``, ``.post1``, ``.dev0``, ``-rc.1``, ``+local``), one or more of them.
Possessive and bounded (at most four parts, a part at most nine dotted words of 64
characters, a number at most 20 digits: a timestamp's ``.dev1704067200`` fits): a text
that is none is given up in one step (``1.2.0rcx``), and a chain of versions
(``1.2.3+1.2.3+...``) is not tried to its end from each one (adv89 #2: 16,000 took 68
s). The version patterns of :mod:`~compaction_audit.recall.extract` take it before the
end of a word only (``1.2.0rc1.`` ends at the ``1``; ``1.2.0rcx`` keeps no suffix)."""

REQUIREMENT_RE = re.compile(r"(~>|\^|~=?|>=|<=|==|>|<)\s*v?(\d++(?:\.\d++){0,3}+)"
                            rf"(?!{SUFFIX}(?!\w))")
"""A requirement in a summary's text: its operator and numbers.  Not one that a suffix
follows (:data:`SUFFIX`: ``lib2==1.2.0rc1`` pins a pre-release, admitting no ``1.2.0``;
adv88 #4)."""
TO_BASE = {"ms": ("time", 1.0), "s": ("time", 1000.0), "min": ("time", 60000.0),
           "h": ("time", 3600000.0), "d": ("time", 86400000.0), "week": ("time", 604800000.0),
           "us": ("time", 0.001), "ns": ("time", 1e-6), "b": ("bytes", 1.0),
           "kb": ("bytes", 1e3), "mb": ("bytes", 1e6), "gb": ("bytes", 1e9),
           "tb": ("bytes", 1e12), "kib": ("bytes", 1024.0), "mib": ("bytes", 1024.0 ** 2),
           "gib": ("bytes", 1024.0 ** 3), "tib": ("bytes", 1024.0 ** 4)}


_NUMBERS_RE = re.compile(r"\D*?\d+(?:\.\d+)*")
_TAG_RE = re.compile(r"[-_.]?(alpha|beta|preview|pre|rc|c|a|b|post|rev|r|dev)[-_.]?(\d*)")
_TAG_ALIASES = {"c": "rc"}
"""The one alias kept: PEP 440's ``c`` is its ``rc``.  Its others (alpha, beta, preview,
pre, rev, r) are not applied: in semver and NuGet ``8.0.0-preview.1`` and
``8.0.0-rc.1`` are different releases, and ``-r1`` is no post-release (adv90 #3); two
spellings left apart fire a finding, two versions merged would hide one."""


def suffix_norm(version: str) -> str:
    """``version`` (lower case) with a pre-, post- or dev-release suffix written as PEP
    440 normalizes it, its names aside (:data:`_TAG_ALIASES`): separators dropped, a
    missing number 0 (``1.2.0-rc.1``, ``1.2.0.rc1``, ``1.2.0-rc1`` are all ``1.2.0rc1``;
    ``1.2.0-beta`` is ``1.2.0beta0``; ``1.2.0post1`` and ``1.2.0-post1`` are
    ``1.2.0.post1``).  A local or build part
    (``+build.5``) is kept as written, and so is a suffix of other words
    (``1.2.0-compatible``).  usertest42 A: two spellings pip reads as one version were a
    flipped pin (CA304, an error)."""
    numbers = _NUMBERS_RE.match(version)
    if numbers is None or numbers.end() == len(version):
        return version
    head, suffix = version[:numbers.end()], version[numbers.end():]
    suffix, plus, local = suffix.partition("+")
    parts, at = [], 0
    for tag in _TAG_RE.finditer(suffix):
        if tag.start() != at:
            return version
        name = _TAG_ALIASES.get(tag[1], tag[1])
        parts.append(("." if name in ("post", "dev") else "") + name
                     + (tag[2].lstrip("0") or "0"))
        at = tag.end()
    if at != len(suffix):
        return version
    return head + "".join(parts) + plus + local


_FLOAT_DIGITS = 15
"""Significant digits a float holds exactly (IEEE 754 double: 15 for any decimal)."""


def measure(number: str, unit: str) -> tuple[str, float] | None:
    """(dimension, value in the base unit, to 15 significant digits: "0.1 s" is 100 ms
    exactly) of a quantity whose unit converts; None when the unit does not, when the
    number has more than 15 significant digits (a float holds no more: adv96 #3,
    9007199254740993 KB was 9007199254740992 KB) or the value is past a float's range
    (adv94 #7: two numbers of 400 digits were both infinite, so "...9.5 ms" kept "...9.4
    ms") or under its normal range (adv97 #6: a number of 330 zeros and a 1 was 0).  A
    quantity without a base value is compared as written.  adv96 #3: rounded to six
    decimals of the base unit, "7.4 ns" and "7 ns" were both 0.000007 ms; usertest48
    #2: to 12 digits, 1234567890123 ns and ...124 ns were one value.  Zeros at either
    end are no significant digits (1000000000000000 bytes is 1 PB's 10**15)."""
    conv = TO_BASE.get(unit)
    if conv is None or len(number.replace(".", "").strip("0")) > _FLOAT_DIGITS:
        return None
    try:
        value = float(f"{float(number) * conv[1]:.{_FLOAT_DIGITS}g}")
    except ValueError:
        return None
    if abs(value) < sys.float_info.min and number.strip("0.") != "":  # under a float's
        return None  # normal range, to 0 at last (adv97 #6: "0.<330 zeros>1 s" was "0 s")
    return (conv[0], value) if math.isfinite(value) else None


_EXACT_DIGITS = 12
"""Most significant digits of a value :func:`in_units` writes: one of 13 to 15 digits
may be a float's rounding of a value no one wrote (1e20 s is 165343915343915 weeks)."""


def in_units(number: str, unit: str) -> tuple[tuple[str, str], ...]:
    """(number, unit): ``number`` ``unit`` written in each other unit of its dimension
    (:data:`TO_BASE`) where it is a whole number or has at most three decimals there, as
    digits (``45 s``: ``("45000", "ms")``, ``("45000000", "us")``, ``("0.75", "min")``
    ...), at most :data:`_EXACT_DIGITS` significant digits; none when the unit does not
    convert (:func:`measure`).  What a raw leaf may have written the same value as
    (usertest49 #2: "45000 ms" folded into "45 s" was an unsupported claim)."""
    found = measure(number, unit)
    if found is None:
        return ()
    dimension, value = found
    out = []
    for other, (dim, factor) in TO_BASE.items():
        if dim != dimension or other == unit:
            continue
        written = f"{value / factor:.{_FLOAT_DIGITS}g}"
        if "e" in written:
            continue
        whole, _, decimals = written.partition(".")
        if len(decimals) <= 3 and len((whole + decimals).strip("0")) <= _EXACT_DIGITS:
            out.append((written, other))
    return tuple(dict.fromkeys(out))


_PART_DIGITS = 64
"""Digits of a version part read as they are; a longer part is read by its length and
its first :data:`_PART_DIGITS` digits (:func:`_part`)."""
_SCALE: int = 10 ** _PART_DIGITS


def _part(digits: str) -> int:
    """A version part's value: itself up to :data:`_PART_DIGITS` digits; a longer one
    (leading zeros aside) its length times 10**64 plus its first 64 digits, so parts
    still order by value (a longer number is larger) and no text of thousands of digits
    is converted (adv94 #1: ``lib==1.`` and 4,301 nines stopped the audit with Python's
    "Exceeds the limit (4300 digits) for integer string conversion")."""
    if len(digits) <= _PART_DIGITS:
        return int(digits)
    digits = digits.lstrip("0") or "0"
    if len(digits) <= _PART_DIGITS:
        return int(digits)
    return len(digits) * _SCALE + int(digits[:_PART_DIGITS])


def vtuple(version: str) -> tuple[int, ...]:
    """A version's numeric parts, at most four: ``v2.4.1-rc1`` is ``(2, 4, 1, 1)`` (a
    part of more than 64 digits by :func:`_part`)."""
    return tuple(_part(p) for p in re.findall(r"\d+", version)[:4])


_PLAIN_RE = re.compile(r"v?\d+(?:\.\d+)*")


def suffixed(norm: str) -> bool:
    """Whether the version ``norm`` has more than its numbers (a pre-, post- or
    dev-release, a local or build part: :data:`SUFFIX`).  No requirement admits such a
    version, only the same norm keeps it: :func:`vtuple` reads numbers only, and
    ``==1.2.0`` admits ``1.2.0rc1`` by its prefix ``(1, 2, 0)`` (adv88 #4).  Two
    spellings of one pre-release (``1.2.0rc1``, ``1.2.0-rc.1``) are one norm: extraction
    normalizes the suffix (:func:`suffix_norm`)."""
    return _PLAIN_RE.fullmatch(norm) is None


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
