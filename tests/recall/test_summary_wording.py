"""A fact only a summary's words state is no leaf's loss (usertest56 #1).

A tool line "412 passed in 33.1s" holds no fact "412" (a bare count in tool output);
its fold "Tests passed (412)." states one, and the fold above that drops it read
"fold S6 dropped, but lost nothing: S5: quantity '412' (still held by another span)",
though nothing held it.  The same value stated by a person is a fact, and the fold that
drops it from the summary loses it.
"""

from __future__ import annotations

from typing import Any

from compaction_audit.api import audit
from tests.logs import LogWriter, rnd


def _log(leaf: dict[str, Any]) -> list[dict[str, Any]]:
    return [rnd(0, spans=[leaf]),
            rnd(1, summaries=[{"id": "S5", "tokens": 5, "children": [leaf["id"]],
                               "text": "Tests passed (412)."}], evicted=[leaf["id"]]),
            rnd(2, summaries=[{"id": "S6", "tokens": 5, "children": ["S5"],
                               "text": "Tests passed."}], evicted=["S5"])]


def _fold_findings(path: str) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in audit(path).findings
            if f.code in ("CA301", "CA302") and f.entity == "S6"]


def test_a_summarys_own_wording_is_no_leafs_loss(write_log: LogWriter) -> None:
    tool = {"id": "o3", "tokens": 20, "source": "tool_result:Bash",
            "text": "412 passed in 33.1s"}
    assert _fold_findings(str(write_log(_log(tool)))) == []


def test_a_fact_a_person_stated_is_lost_by_the_fold_above(write_log: LogWriter) -> None:
    person = {"id": "u", "tokens": 20, "source": "user",
              "text": "Keep the suite at 412 passing tests."}
    found = _fold_findings(str(write_log(_log(person))))
    assert len(found) == 1 and found[0][0] == "CA301"
    assert "lost nothing" not in found[0][1] and "still held" not in found[0][1]
    assert "S5: quantity '412'" in found[0][1]


def test_a_leafs_fact_in_the_summarys_other_words_stays_a_drop(write_log: LogWriter) -> None:
    """usertest57 #1: a summary that keeps a leaf's fact in other words ("Timeout is 45
    s." of "45000 ms") may have dropped that fact with its own words: the drop stays
    (leaving it out made the fold above silent)."""
    log = [rnd(0, spans=[{"id": "x0", "tokens": 20, "source": "user",
                          "text": "Set the timeout to 45000 ms."}]),
           rnd(1, summaries=[{"id": "S1", "tokens": 5, "children": ["x0"],
                              "text": "Timeout is 45 s."}], evicted=["x0"]),
           rnd(2, summaries=[{"id": "S2", "tokens": 5, "children": ["S1"],
                              "text": "Timeout adjusted."}], evicted=["S1"])]
    found = [f for f in audit(str(write_log(log))).findings
             if f.code == "CA301" and f.entity == "S2"]
    assert len(found) == 1 and "S1: quantity '45 s'" in found[0].message
