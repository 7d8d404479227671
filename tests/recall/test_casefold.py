"""The case-insensitive classes of the regex engine (adv33 B4): the table
:mod:`compaction_audit.recall.objmatch` folds by is exactly what Polars' ``(?i)``
matches, over all of Unicode, and is the generator's current output."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl

from compaction_audit.recall.casefold_table import CLASSES

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def test_each_class_is_what_the_engine_matches_to_its_first_character() -> None:
    members = pl.Series([c for klass in CLASSES for c in klass])
    assert members.n_unique() == members.len()  # the classes do not overlap
    for klass in CLASSES:
        got = members.filter(members.str.contains(f"(?i)^{re.escape(klass[0])}$"))
        assert "".join(sorted(got.to_list())) == klass


def test_no_character_outside_the_classes_matches_another() -> None:
    inside = {c for klass in CLASSES for c in klass}
    series = pl.Series(EVERYTHING)
    klass = "".join(re.escape(c) for klass in CLASSES for c in klass)
    # what a class's character reaches is in the classes (checked above, class by
    # class); nothing outside reaches a class member, nor anything but itself: the
    # characters outside all match, case-insensitively, a class of only themselves
    reached = series.filter(series.str.contains(f"(?i)^[{klass}]$")).to_list()
    assert set(reached) == inside
    outside = series.filter(~series.is_in(list(inside)))
    assert outside.filter(outside.str.contains(f"(?i)^[{klass}]$")).len() == 0
    some = outside.sample(40, seed=4).to_list()  # and a sample of them matches only itself
    for c in some:
        assert series.filter(series.str.contains(f"(?i)^{re.escape(c)}$")).to_list() == [c]


def test_the_table_is_the_generators_output() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_casefold.py"),
                           "--check"], check=False)
    assert done.returncode == 0, "run python scripts/gen_casefold.py"
