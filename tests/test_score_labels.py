"""The labels scorer (benchmarks/score_labels.py) on a labels folder written here, and on
the shared labels when ../shared/corpus is present."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.logs import CORPUS, dump, rnd

ROOT = Path(__file__).resolve().parents[1]


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_labels",
                                                  ROOT / "benchmarks" / "score_labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["score_labels"] = module
    spec.loader.exec_module(module)
    return module


sl = _scorer()


def span(i: str, text: str, source: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


LOG = [
    rnd(0, spans=[span("u1", "Never deploy on Fridays.", "user"),
                  span("a1", "I decided the cache must stay disabled in prod.", "assistant"),
                  span("t1", "retries=12", "tool_result:Read"),
                  span("t2", "The cache TTL is 300 s.", "tool_result:Read")]),
    rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u1", "a1", "t1", "t2"],
                       "text": "Worked on the deployment; the cache TTL stays 300 s."}],
        evicted=["u1", "a1", "t1", "t2"]),
]
FACTS = [
    {"id": "L1", "keys": ["never deploy on fridays"], "source_line": 1},
    {"id": "L2", "keys": ["nothing like this", "stay disabled in prod"], "source_line": 1},
    {"id": "L3", "keys": ["not in the report"], "source_line": 1},
    {"id": "K1", "keys": ["300 s"], "kept": True},
    {"id": "K2", "keys": ["retries"], "kept": True},
]
ITEMS = [
    {"discriminator": "Never deploy on Fridays", "span": "u1", "label": "LOST-MATTERS"},
    {"discriminator": "retries=12", "span": "t1", "label": "LOST-TRIVIAL"},
    {"discriminator": "gone from this build", "span": "x", "label": "LOST-TRIVIAL"},
]


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus" / "labels"
    folder.mkdir(parents=True)
    (tmp_path / "corpus" / "native").mkdir()
    dump(LOG, tmp_path / "corpus" / "native" / "tiny.jsonl")
    (folder / "tiny.recall.json").write_text(json.dumps(FACTS), encoding="utf-8")
    (folder / "tiny.items.jsonl").write_text(
        "".join(json.dumps(i) + "\n" for i in ITEMS), encoding="utf-8")
    return folder


def test_scores_a_labelled_session(labels: Path) -> None:
    [s] = sl.score_folder(labels, labels.parent)
    assert s.session == "tiny"
    # lost: negation (u1, tier 2), constraint + scope (a1, tiers 4, 5), the keyed value
    # "retries=12" (t1, tier 6; its bare key is no fact: no prose used it); t2's 300 s
    # is kept by the summary
    assert s.lost_items == 4
    assert (s.facts_lost, s.reported, s.top) == (3, 2, {15: 2, 40: 2})
    assert s.ranks == {"L1": 1, "L2": 2, "L3": None, "K1": None, "K2": 4}
    assert s.tiers == {"L1": 2, "L2": 4, "L3": None, "K1": None, "K2": 6}
    assert (s.kept_facts, s.kept_claimed) == (2, 1)
    assert (s.items_labelled, s.items_still_reported) == (3, 2)
    assert s.item_labels == {"LOST-MATTERS": 1, "LOST-TRIVIAL": 1}
    assert s.precision == 0.5 and s.precision_top40 == 0.5


def test_facts_name_their_log(labels: Path) -> None:
    # one labels file for two logs: each fact scored against the log it names
    (labels.parent / "native" / "other.jsonl").write_text(
        (labels.parent / "native" / "tiny.jsonl").read_text())
    facts = [{**f, "file": "other.jsonl"} if f["id"] == "L3" else f for f in FACTS]
    (labels / "tiny.recall.json").write_text(json.dumps(facts), encoding="utf-8")
    other, tiny = sl.score_folder(labels, labels.parent)
    assert (other.session, other.facts_lost, other.items_labelled) == ("other", 1, 3)
    assert (tiny.session, tiny.facts_lost, tiny.kept_facts) == ("tiny", 2, 2)


def test_top_15_and_top_40_boundaries() -> None:
    lost = [{"text": f"item {i}", "span": "s"} for i in range(1, 42)]
    facts = [sl.Fact(f"F{r}", [f"item {r}"], False) for r in (15, 16, 40, 41)]
    # "item 1" is a substring of "item 15": key match is by substring, as the README says
    s = sl.score("x", facts, [], lost)
    assert s.ranks == {"F15": 15, "F16": 16, "F40": 40, "F41": 41}
    assert (s.reported, s.top) == (4, {15: 1, 40: 3})


def test_command_prints_the_figures(labels: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert sl.main([str(labels)]) == 0
    out = capsys.readouterr().out
    assert "tiny: 4 lost items reported" in out
    assert "lost facts reported:      2/3 (67%)" in out
    assert "kept facts claimed lost:  1/2 (50%)" in out
    assert "ranks (tier): L1=1 (2), L2=2 (4), L3=-, K1=-, K2=4 (6)" in out
    assert "precision (LOST-MATTERS share): 0.50; in the top 40: 0.50" in out
    assert sl.main([str(labels), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["reported"] == 2


def test_missing_or_bad_labels_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    assert sl.main([str(tmp_path / "nope")]) == 2
    assert "labels folder not found" in capsys.readouterr().err
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "bad.recall.json").write_text('[{"id": "S1", "keys": "one"}]')
    assert sl.main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert "bad.recall.json: entry 0: field 'keys'" in err and err.count("\n") == 1
    (folder / "bad.recall.json").write_text('[{"id": "S1", "keys": ["one"]}]')
    assert sl.main([str(folder)]) == 2
    assert "log bad.jsonl not found" in capsys.readouterr().err


@pytest.mark.skipif(not (CORPUS / "labels").is_dir(), reason="../shared/corpus is absent")
def test_shared_labels_score() -> None:
    [s] = sl.score_folder(CORPUS / "labels", CORPUS)
    assert s.session == "spotter-auto-compact"
    assert (s.facts_lost, s.kept_facts, s.items_labelled) == (12, 10, 40)
    assert s.reported >= 4  # the figure before issue 10 (docs/discriminators.md)
    assert s.top[15] <= s.top[40] <= s.reported


@pytest.mark.skipif(not (CORPUS / "labels").is_dir(), reason="../shared/corpus is absent")
def test_readme_says_the_rank_of_the_reworded_kept_fact() -> None:
    # usertest12: the README said rank 24 after a ranking change moved it to 26
    import re

    from compaction_audit.api import audit

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    said = re.search(r'rank (\d+), "Keep project-review "ongoing" semantics .*?; rank (\d+), '
                     r'"persisting durable transcript message references"',
                     " ".join(readme.split()))
    assert said is not None
    [c] = audit(str(CORPUS / "claude-code" / "spotter-auto-compact.jsonl")).compactions
    texts = [d["text"] for d in c["lost"]]

    def rank(start: str) -> int:
        return 1 + next(i for i, t in enumerate(texts) if t.startswith(start))

    # usertest72 #4: a kept fact on the first screen, which the README now names too
    assert int(said.group(1)) == rank('Keep project-review "ongoing" semantics')
    assert int(said.group(2)) == rank("Store transcript message references as first-class")


def test_an_item_matches_without_list_marker_or_by_containment() -> None:
    """usertest46 #4: the labelled build printed "- reload assigns after completion",
    this one "reload assigns after completion"; matched by exact text, 0 of the 40
    shared items were found.  Another span's item never matches."""
    lost = [{"text": "Retries stay at 12", "span": "a"},
            {"text": "reload assigns after completion.", "span": "b"},
            {"text": "Selection must preserve first-to-last order", "span": "b"}]
    item = {"discriminator": "- Reload assigns after completion", "span": "b"}
    assert sl.item_position(item, lost) == 2
    assert sl.item_position({"discriminator": "must preserve first-to-last order",
                             "span": "b"}, lost) == 3
    assert sl.item_position({"discriminator": "Retries stay at 12", "span": "b"}, lost) is None
    assert sl.item_position({"discriminator": "1. retries stay at 12!", "span": "a"},
                            lost) == 1
    assert sl.item_position({"discriminator": "order", "span": "b"}, lost) is None  # short
