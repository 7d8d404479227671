"""A version bound glued to its package ("numpy<2.0", "numpy<2.0.0") is a version with
its operator, not a bare number (usertest61 A3: "Pin numpy<2.0" was a quantity "2.0",
and "numpy<2.0.0" the plain version "2.0.0", so a summary saying "numpy 2.0.0", the
opposite, kept it)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import extract
from compaction_audit.recall.survival import survives


@pytest.mark.parametrize(("text", "found"), [
    ("Pin numpy<2.0 for now.", [("version", "<2.0", "numpy<2.0")]),
    ("Pin numpy<2.0.", [("version", "<2.0", "numpy<2.0")]),
    ("Pin numpy<2.0.0 for now.", [("version", "<2.0.0", "numpy<2.0.0")]),
    ("Keep scipy>1.9 and numpy<2.0rc1", [("version", ">1.9", "scipy>1.9"),
                                         ("version", "<2.0rc1", "numpy<2.0rc1")]),
    # a measure's bound stays a quantity, and so does a bound of one letter or spaced
    ("latency<2.5 ms", [("quantity", "2.5 ms", "2.5 ms")]),
    ("keep p95<1.5s", [("identifier", "p95", "p95"), ("quantity", "1.5 s", "1.5s")]),
    ("ratio<2.5% ok", [("quantity", "2.5 %", "2.5%")]),
    ("p<0.05 here", [("quantity", "0.05", "0.05")]),
    ("numpy < 2.0", [("quantity", "2.0", "2.0")]),
])
def test_a_bound_glued_to_its_name_is_a_version(text: str,
                                                found: list[tuple[str, str, str]]) -> None:
    assert [(d.kind.value, d.norm, d.text) for d in extract(text)] == found


@pytest.mark.parametrize(("summary", "kept"), [
    ("Pinned numpy<2.0 until the ABI settles.", True),
    ("Pinned numpy 2.0.", False),  # the opposite bound
    ("Moved to numpy>=2.0.", False),
])
def test_the_bound_survives_only_as_a_bound(summary: str, kept: bool) -> None:
    (d,) = [x for x in extract("Pin numpy<2.0 for now.") if x.kind.value == "version"]
    assert survives(d, summary) is kept
