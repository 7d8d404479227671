"""The survival checks that searched the whole summary once per fact now look it up
(adv78 #1): elided identifiers, file names of a module and paths.

Each check gives the answer of the search it replaces (compared here with that search,
written out, on generated texts), and the summary is read once for all the facts
checked against it (counted: a cache miss per summary), so a fold of many such facts
costs the summary's length once, not once per fact (a 0.99 MB trace had not finished
in 120 s).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_audit.recall import paraphrase
from compaction_audit.recall.extract import Discriminator, Kind, extract
from compaction_audit.recall.survival.check import _extensions, _parts_in_order, _runs, survives
from compaction_audit.recall.survival.words import _module_key


def parts_in_order_by_search(parts: list[str], low: str) -> bool:
    """The search it replaces: each part's pattern searched from the last match."""
    at = 0
    for part in parts:
        head = r"(?<![\w-])" if part[0].isalnum() or part[0] in "_-" else ""
        tail = r"(?![\w-])" if part[-1].isalnum() or part[-1] == "_" else ""
        found = re.compile(head + re.escape(part) + tail).search(low, at)
        if found is None:
            return False
        at = found.end()
    return True


TEXT = st.text(alphabet="ab_- .(x", max_size=40)
PART = st.text(alphabet="ab_- .(x", min_size=1, max_size=6).filter(lambda p: p.strip())


@settings(max_examples=600, deadline=None)
@given(st.lists(PART, min_size=1, max_size=3), TEXT)
def test_parts_in_order_answers_as_the_search(parts: list[str], low: str) -> None:
    assert _parts_in_order(parts, low) == parts_in_order_by_search(parts, low)


def test_parts_in_order_examples() -> None:
    low = "alter table t modify; uninstall --force-conflicts sidebar"
    assert _parts_in_order(["alter table", "modify"], low)
    assert not _parts_in_order(["modify", "alter table"], low)  # in order
    assert not _parts_in_order(["install"], low)  # not inside a longer word
    assert not _parts_in_order(["--force"], low)  # nor a longer flag
    assert not _parts_in_order(["bar"], low)


def other_file_by_search(key: str, summary: str) -> set[str]:
    """Every file name of ``summary`` whose module is ``key``, by a search per name."""
    return {ext.lower() for run, ext in re.findall(
        r"(?<![\w-])(?=([\w-]+)\.([a-zA-Z]\w{0,7})\b)", summary)
        if _module_key(f"{run}.{ext.lower()}") == key}


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="aB_.-jY y", max_size=40),
       st.sampled_from(["a_b", "ab_ab", "a_bbbb", "aaaaaa"]))
def test_extensions_are_those_the_search_found(summary: str, key: str) -> None:
    assert set(_extensions(summary).get(key, ())) == other_file_by_search(key, summary)


@pytest.mark.parametrize(("child", "summary", "kept"), [
    ("cfg_x.yaml", "Wrote cfg_x.json.", False),
    # adv79 #5: a hyphen or capitals in the name made the summary's never its module
    ("docker-compose.yaml", "Edited docker-compose.json.", False),
    ("MyConfig.yaml", "Edited MyConfig.json.", False),
    ("MyConfig.yaml", "Edited MyConfig.yaml and MyConfig.json.", True),
    ("docker-compose.yaml", "Edited docker-compose.yaml today.", True),
])
def test_a_file_is_not_kept_by_its_module_under_another_extension(
        child: str, summary: str, kept: bool) -> None:
    assert survives(path(child), summary) is kept


def path(text: str) -> Discriminator:
    return Discriminator(Kind.IDENTIFIER, text, text.lower(), 0, len(text))


def test_a_path_survives_by_a_path_that_ends_it_or_that_it_ends() -> None:
    summary = "Edited lib/cache/main and /srv/app/config/main today."
    assert survives(path("src/lib/cache/main"), summary)  # the summary's ends it
    assert survives(path("config/main"), summary)  # it ends the summary's
    assert not survives(path("src/other/main"), summary)
    assert not survives(path("app/main"), summary)  # not after a "/" of the path


def word(n: int) -> str:
    """Three letters for ``n`` (an identifier of letters only is one discriminator)."""
    return "".join("abcdefghijklmnopqrstuvwxyz"[n // 26 ** k % 26] for k in range(3))


def test_the_summary_is_read_once_for_all_the_facts_of_a_fold() -> None:
    n = 2000
    facts = [d for i in range(n)
             for d in extract(f"Run `QW{word(i)} RT{word(i)} ... zx{word(i)}`.")]
    assert len(facts) == n and all("..." in d.norm for d in facts)
    summary = "Summary: " + " ".join(f"QW{word(i)} RT{word(i)} zx{word(i)}" for i in range(n))
    files = [path(f"cfg_{word(i)}.yaml") for i in range(500)]
    _runs.cache_clear()
    _extensions.cache_clear()
    assert all(survives(d, summary) for d in facts)
    # the same words, each identifier's last part first: none is kept in order
    swapped = "Summary: " + " ".join(f"zx{word(i)} QW{word(i)} RT{word(i)}" for i in range(n))
    assert not any(survives(d, swapped) for d in facts)
    named = summary + " cfg_aaa.json"
    assert [survives(f, named) for f in files[:2]] == [False, False]  # another extension
    assert not survives(files[1], named)
    assert [_runs.cache_info().misses, _extensions.cache_info().misses] == [2, 1]


STEMS = st.sampled_from(["user", "session", "message", "id", "owner", "scope"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.frozensets(STEMS, min_size=2, max_size=4), max_size=6),
       st.lists(STEMS, max_size=6))
def test_check_names_are_looked_up_as_they_were_compared(
        checks: list[frozenset[str]], words: list[str]) -> None:
    """adv79 #1: every check name of the summary was compared with each rule."""
    names = paraphrase.SummaryNames(tuple(checks), frozenset(checks))
    rule = ["only", *words]
    stems = set(rule)
    assert paraphrase.kept_by_check_name(rule, names, lambda w: w) == any(
        objects <= stems for objects in checks)
