"""A command's short flag is its long form for the rules a call breaks (adv108 #5):
a lost "Do NOT use --force when pushing" is broken by ``git push -f`` and by ``git push
origin +main``; ``tail -f`` and ``kubectl apply -f`` (a file) break nothing."""

from __future__ import annotations

import polars as pl
import pytest

from compaction_audit.recall.flagalias import with_long_flags
from tests.recall.test_violations import _found, _tables

FORCE = "Do NOT use --force when pushing."
RECURSIVE = "Never use --recursive on the data dir."
YES = "Do not pass --yes to pip uninstall."


@pytest.mark.parametrize(("text", "long"), [
    ("git push -f origin main", "--force"),
    ("git -C repo push -fu origin main", "--force"),
    ("git push origin +main", "--force"),
    ("git clean -fdx", "--force"),
    ("sudo rm -f build.lock", "--force"),
    ("cd x && rm -rf data/", "--recursive"),
    ("cp -R a b", "--recursive"),
    ("docker rm -f web", "--force"),
    ("pip uninstall -y requests", "--yes"),
    ("apt-get -y install curl", "--yes"),
    ("git branch -D feature", "--delete --force"),
])
def test_a_short_flag_gains_its_long_form(text: str, long: str) -> None:
    [got] = pl.select(with_long_flags(pl.lit(text))).to_series().to_list()
    assert got.startswith(text) and f"\n{long}" in got[len(text):]


@pytest.mark.parametrize("text", [
    "git push origin main", "git push --force origin main", "tail -f app.log",
    "kubectl apply -f deploy.yaml", "grep -rf patterns.txt src", "git log -n 5",
])
def test_no_long_form_where_the_short_one_is_not_it(text: str) -> None:
    assert pl.select(with_long_flags(pl.lit(text))).item() == text


@pytest.mark.parametrize(("rule", "call", "obj"), [
    (FORCE, "git push -f origin main", "--force"),
    (FORCE, "git push origin +main", "--force"),
    (FORCE, "git push origin main", None),
    (FORCE, "tail -f app.log", None),
    (RECURSIVE, "rm -rf data/", "--recursive"),
    (YES, "pip uninstall -y requests", "--yes"),
])
def test_a_short_flag_breaks_the_rule_of_its_long_form(rule: str, call: str,
                                                        obj: str | None) -> None:
    found = _found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))
    assert found == ([(2, "u1", "command", obj, "t1", 2)] if obj else [])
