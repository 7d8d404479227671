"""An episode's baseline entry holds only the episode it recorded (adv22a F3,
"related"): ``episode:K`` is an index, so a new episode before a fixed one took index
0 and passed as baselined, with no stale entry.  An entry now records the episode's
first and last round (``rounds``) and holds a finding of its key only while their
episodes overlap.

Each log: spans ``a`` and ``b`` at round 0, both retained until ``b`` leaves the
retained list without being evicted at round ``drop``: one silent-drop (CA202, no
entity) episode there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.api import audit
from compaction_audit.baseline import finding_keys
from compaction_audit.diff import finding_units
from tests.gate_app import run
from tests.logs import dump, rnd
from tests.test_diff import make_log


def drop_log(path: Path, drop: int, rounds: int = 8) -> Path:
    records: list[dict[str, Any]] = [rnd(0, spans=[{"id": "a", "tokens": 20},
                                                   {"id": "b", "tokens": 20}])]
    for t in range(1, rounds):
        records.append(rnd(t, retained=[["a", 0.5]] + ([["b", 0.4]] if t < drop else [])))
    return dump(records, path)


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    drop_log(tmp_path / "t.jsonl", drop=5)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    return tmp_path / "b.json"


def audit_json(base: Path) -> dict[str, Any]:
    out = run("audit", "t.jsonl", "--baseline", str(base), "-f", "json", "--fail-on",
              "warning")
    doc: dict[str, Any] = json.loads(out.stdout)
    doc["exit"] = out.exit_code
    return doc


def test_the_entry_records_the_episode_rounds(base: Path) -> None:
    [entry] = json.loads(base.read_text())["findings"]
    assert (entry["code"], entry["key"], entry["rounds"]) == ("CA202", "episode:0", [5, 5])


def test_the_same_episode_is_baselined(base: Path) -> None:
    doc = audit_json(base)
    assert (doc["exit"], doc["findings"], doc["baseline"]["stale"]) == (0, [], [])


def test_a_new_earlier_episode_is_new_and_the_fixed_one_stale(base: Path) -> None:
    drop_log(base.parent / "t.jsonl", drop=2)
    doc = audit_json(base)
    assert doc["exit"] == 1
    assert [(f["code"], f["round"]) for f in doc["findings"]] == [("CA202", 2)]
    assert [(e["code"], e["key"]) for e in doc["baseline"]["stale"]] == [("CA202", "episode:0")]
    # usertest38 #10: the rule still fires, at other rounds: said so, not "no longer occurs"
    [stale] = doc["baseline"]["stale"]
    assert (stale["rounds"], stale["new_rounds"]) == ([5, 5], [[2, 2]])
    out = run("audit", "t.jsonl", "--baseline", str(base), "-f", "github").stdout
    assert ("baseline entry t.jsonl CA202 silent-drop episode:0 (round 5): CA202 fires at "
            "round 2 instead, reported as new (not fixed: an entry holds an episode only at "
            "rounds that overlap its own)\n") in out
    assert "no longer occurs" not in out


def test_a_fixed_episode_beside_no_new_one_no_longer_occurs(base: Path) -> None:
    drop_log(base.parent / "t.jsonl", drop=9)  # b never leaves: nothing silently dropped
    doc = audit_json(base)
    assert [set(e) - {"fingerprint"} for e in doc["baseline"]["stale"]] == [
        {"trace", "code", "key", "rule"}]
    out = run("audit", "t.jsonl", "--baseline", str(base), "-f", "github").stdout
    assert "baseline entry no longer occurs: t.jsonl CA202 silent-drop episode:0\n" in out


@pytest.mark.parametrize("rounds", [[4, 5], [5, 9]])
def test_an_overlapping_episode_is_the_same(base: Path, rounds: list[int]) -> None:
    doc = json.loads(base.read_text())
    doc["findings"][0]["rounds"] = rounds
    base.write_text(json.dumps(doc))
    assert audit_json(base)["findings"] == []


def test_an_entry_without_rounds_matches_on_its_fingerprint(base: Path) -> None:
    doc = json.loads(base.read_text())
    del doc["findings"][0]["rounds"]
    base.write_text(json.dumps(doc))
    drop_log(base.parent / "t.jsonl", drop=2)
    assert audit_json(base)["findings"] == []


@pytest.mark.parametrize("rounds", [[5], "5-5", [5, "6"], [5.0, 6]])
def test_bad_rounds_are_a_usage_error(base: Path, rounds: Any) -> None:
    doc = json.loads(base.read_text())
    doc["findings"][0]["rounds"] = rounds
    base.write_text(json.dumps(doc))
    out = run("audit", "t.jsonl", "--baseline", str(base))
    assert out.exit_code == 2
    assert "findings[0].rounds must be [first, last], two whole numbers" in out.output


def test_the_line_of_an_entry_whose_rule_fires_at_other_rounds() -> None:
    from compaction_audit.report.summary import _stale_line

    e = {"trace": "t.jsonl", "code": "CA101", "rule": "salience-inversion",
         "key": "episode:0", "rounds": [28, 30], "new_rounds": [[2, 2], [24, 26]]}
    assert _stale_line(e) == (
        "baseline entry t.jsonl CA101 salience-inversion episode:0 (rounds 28-30): CA101 "
        "fires at rounds 2, 24-26 instead, reported as new (not fixed: an entry holds an "
        "episode only at rounds that overlap its own)")
    assert _stale_line({**e, "rounds": None}).startswith(
        "baseline entry t.jsonl CA101 salience-inversion episode:0: CA101 fires at rounds 2,")


def test_diff_gives_an_episode_the_key_a_baseline_file_gives_it(tmp_path: Path) -> None:
    """usertest38 #10: a baseline file numbered a rule's first episode ``episode:0`` and
    diff ``episode:1``; both number from 0 (the baseline's key is in its fingerprints)."""
    heavy = audit(make_log(tmp_path / "heavy.jsonl", signature=(4, 5, 6), heavy=True))
    episodes = {(code, key) for code, key in finding_units(heavy)
                if key.startswith("episode:")}
    assert episodes == {("CA101", "episode:0"), ("CA104", "episode:0"),
                        ("CA104", "episode:1"), ("CA105", "episode:0")}
    keyed = zip(heavy.findings, finding_keys(heavy.findings), strict=True)
    assert {(f.code, k) for f, k in keyed if k.startswith("episode:")} == episodes


def test_a_stale_entry_names_at_most_ten_new_episodes_nearest_its_own() -> None:
    """adv138 #4: each stale entry held the rounds of every new episode of its rule
    (2,000 x 2,000: a 1.1 MB baseline took an audit from 104 MB to 787 MB)."""
    from compaction_audit.baseline import NEW_ROUNDS, _stale_shown
    from compaction_audit.baseline.entry import Entry
    from compaction_audit.rules.base import Finding, Severity

    def entry(k: int, rounds: tuple[int, int]) -> Entry:
        return Entry("t.jsonl", "CA202", f"episode:{k}", "silent-drop", f"{k:064x}",
                     rounds=rounds)

    news = [(Finding("silent-drop", "CA202", Severity.WARNING, r, r + 2, "m", "a"),
             entry(100 + r, (r, r))) for r in range(0, 60, 2)]  # 30 new episodes
    stale = [entry(1, (31, 31)), entry(2, (100, 100))]
    shown = _stale_shown(stale, news, [f for f, _ in news])
    assert NEW_ROUNDS == 10
    # the window of 10 around round 31 (rounds 22..40), and the last 10 for round 100
    assert shown[0]["new_rounds"] == [[r, r] for r in range(22, 42, 2)]
    assert shown[1]["new_rounds"] == [[r, r] for r in range(40, 60, 2)]
    assert shown[0]["new_rounds_more"] == shown[1]["new_rounds_more"] == 20
    from compaction_audit.report.summary import _stale_line

    assert _stale_line(shown[0]).startswith(
        "baseline entry t.jsonl CA202 silent-drop episode:1 (round 31): CA202 fires at "
        "rounds 22, 24, 26, 28, 30, 32, 34, 36, 38, 40 and 20 more episode(s) instead")
