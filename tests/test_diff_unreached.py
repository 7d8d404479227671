"""A candidate that ends before the baseline (a run cut short, crashed or still being
written) never reached the baseline's later rounds: what the baseline found first
after the candidate's last round is "not reached", not resolved, and the recall debt
is compared at the candidate's last round (usertest74 F4: research-decay cut at round
12 of 40 showed "358 resolved" and a debt "665 -> 219 (-446)", an improvement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gate_app import drift_records, run
from tests.logs import dump, rnd


def _diff(base: Path, cand: Path, *args: str) -> Any:
    return run("diff", str(base), str(cand), "--isolated", *args)


def test_units_first_found_after_the_candidates_last_round_are_not_reached(
        tmp_path: Path) -> None:
    records = drift_records()  # CA201 at rounds 1-4, CA104 and CA105 at round 4
    base = dump(records, tmp_path / "whole.jsonl")
    cut = dump(records[:4], tmp_path / "cut.jsonl")  # rounds 0-2
    result = _diff(base, cut, "--fail-on-new", "warning", "--all")
    out = " ".join(result.output.split())
    assert result.exit_code == 0, out  # nothing new
    assert ("0 new, 0 resolved, 2 not reached (the candidate ends at round 2), 1 persisting "
            "finding unit(s)") in out
    assert "Not reached (2) WARNING CA104 compaction-drift 1 unit(s)" in out
    doc = json.loads(_diff(base, cut, "-f", "json").stdout)["findings"]
    assert doc["counts"] == {"new": 0, "resolved": 0, "unreached": 2, "persisting": 1}
    assert sorted(u["code"] for u in doc["unreached"]) == ["CA104", "CA105"]


def test_a_unit_at_the_candidates_last_round_is_resolved(tmp_path: Path) -> None:
    records = drift_records()
    base = dump(records, tmp_path / "whole.jsonl")
    # the candidate reaches round 4 without its fold: raw 105 of 125 tokens, no drift
    calm = [*records[:5], rnd(4, retained=[["s2", 0.8], ["d", 0.45], ["e", 0.1]])]
    cand = dump(calm, tmp_path / "calm.jsonl")
    out = " ".join(_diff(base, cand).output.split())
    assert "0 new, 2 resolved, 1 persisting finding unit(s)" in out
    assert "not reached" not in out and "Not reached" not in out
    swapped = " ".join(_diff(cand, base).output.split())  # a longer candidate: new
    assert "2 new, 0 resolved, 1 persisting" in swapped


def test_the_recall_debt_is_compared_at_the_candidates_last_round(tmp_path: Path) -> None:
    whole = Path(__file__).parents[1] / "sample_logs" / "research-decay.jsonl"
    cut = tmp_path / "cut.jsonl"  # the session record and rounds 1-12
    cut.write_text("".join(whole.read_text().splitlines(keepends=True)[:13]))
    verdict = " ".join(_diff(whole, cut).output.split())
    assert "recall debt" not in verdict  # 219 at round 12 in both runs
    assert "0 new, 0 resolved, 358 not reached, 388 persisting" in verdict
    assert "(the candidate ends at round 12)" in verdict  # said once, by the boundary
    longer = " ".join(_diff(cut, whole).output.split())  # the baseline ends first: as before
    assert ("recall debt (facts seen that no resolvable span or retained summary holds) "
            "at the last round 219 -> 665 (+446)") in longer
    assert "not reached" not in longer
