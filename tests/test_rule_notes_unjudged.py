"""A rule that judged no round of a trace for several reasons says so in one line
after theirs (usertest73 #11: a Claude Code trace of two rounds showed two lines of
"CA101 salience-inversion: not evaluated at 1 of 2 round(s)", neither saying that
the rule judged none)."""

from __future__ import annotations

from pathlib import Path

from tests.gate_app import run
from tests.test_diff_coverage import _mid_turn_compaction

JUDGED_NONE = "CA101 salience-inversion: judged none of the 2 round(s), for the reasons above"


def _notes(path: Path) -> list[str]:
    out = run("audit", str(path)).output.splitlines()
    return [line.strip() for line in out if line.strip().startswith(("CA101", "CA104"))]


def test_a_rule_judged_nowhere_for_two_reasons_says_so(tmp_path: Path) -> None:
    notes = _notes(_mid_turn_compaction(tmp_path / "ended.jsonl", cut=5))
    ca101 = [n for n in notes if n.startswith("CA101")]
    assert len(ca101) == 3
    assert ca101[0].startswith("CA101 salience-inversion: not evaluated at 1 of 2 round(s): "
                               "the first round")
    assert ca101[1].startswith("CA101 salience-inversion: not evaluated at 1 of 2 round(s): "
                               "no work follows the compaction")
    assert ca101[2] == JUDGED_NONE
    # compaction-drift judged the first round: one reason, no such line
    assert not [n for n in notes if n.startswith("CA104") and "judged none" in n]


def test_a_rule_that_judged_a_round_has_no_such_line(tmp_path: Path) -> None:
    notes = _notes(_mid_turn_compaction(tmp_path / "whole.jsonl"))
    assert notes == ["CA101 salience-inversion: not evaluated at 1 of 3 round(s): the first "
                     "round has no earlier round to compare with"]
