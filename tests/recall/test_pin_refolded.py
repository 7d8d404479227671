"""A pin a summary kept in other words, then lost when that summary was folded again
(usertest49 #1).

"Pin requests==2.31.0 ..." folded into "Kept requests pinned at 2.31.0 ..." keeps the
pin (``version:2.31.0@requests``); the summary's own discriminator is the bare value
2.31.0.  Folding that summary into "Dependency work done." loses the pin at that fold.
It was booked to eviction (``recall_debt_fold`` 2, ``recall_debt_eviction`` 1, cause
"eviction", no fold) and the fold's finding said 2.31.0 was "still held by another
span", which nothing held.  Every expected value is worked out by hand.
"""

from __future__ import annotations

from typing import Any

from compaction_audit.api import audit
from tests.conftest import LogWriter
from tests.logs import rnd

HEADER = {"type": "session", "schema": "compaction-audit/1", "session_id": "pin",
          "max_depth": 3}


def _log(first: str, second: str) -> list[dict[str, Any]]:
    return [HEADER,
            rnd(0, spans=[{"id": "p1", "tokens": 25, "role": "assistant",
                           "text": "Pin requests==2.31.0 because 2.32.0 breaks the retry "
                                   "adapter."}]),
            rnd(1, summaries=[{"id": "q1", "tokens": 20, "children": ["p1"], "text": first}],
                evicted=["p1"]),
            rnd(2, summaries=[{"id": "q2", "tokens": 10, "children": ["q1"], "text": second}],
                evicted=["q1"])]


PARAPHRASED = "Kept requests pinned at 2.31.0 because 2.32.0 breaks the retry adapter."


def test_the_pin_is_lost_by_the_fold_that_dropped_its_value(write_log: LogWriter) -> None:
    report = audit(str(write_log(_log(PARAPHRASED, "Dependency work done."))))
    lost = {d["text"]: (d["cause"], d["fold"]) for d in report.extra["lost_discriminators"]}
    # three facts of p1, all lost at round 2 by q2: the pin, 2.32.0 and the cause
    assert lost == {"requests==2.31.0": ("fold", "q2"), "2.32.0": ("fold", "q2"),
                    "because 2.32.0 breaks the retry adapter": ("fold", "q2")}
    last = report.series.row(-1, named=True)
    assert (last["recall_debt"], last["recall_debt_fold"], last["recall_debt_eviction"]) \
        == (3, 3, 0)
    [fold] = [f for f in report.findings if f.code == "CA301"]
    assert "still held" not in fold.message
    assert "version 'requests to 2.31.0'" in fold.message
    assert fold.values["facts"] == fold.values["facts_lost"] == 3


def test_a_pin_kept_by_the_upper_fold_is_not_lost(write_log: LogWriter) -> None:
    report = audit(str(write_log(_log(PARAPHRASED, "Kept requests==2.31.0 pinned."))))
    lost = {d["text"] for d in report.extra["lost_discriminators"]}
    assert "requests==2.31.0" not in lost
    assert lost == {"2.32.0", "because 2.32.0 breaks the retry adapter"}


def test_a_pin_written_as_a_pin_in_the_lower_fold_is_lost_as_before(
        write_log: LogWriter) -> None:
    # the summary's own discriminator is the pin: nothing to rebind, the same answer
    report = audit(str(write_log(_log("Pin requests==2.31.0 because 2.32.0 breaks the "
                                      "retry adapter.", "Dependency work done."))))
    lost = {d["text"]: (d["cause"], d["fold"]) for d in report.extra["lost_discriminators"]}
    assert lost["requests==2.31.0"] == ("fold", "q2")
    last = report.series.row(-1, named=True)
    assert (last["recall_debt_fold"], last["recall_debt_eviction"]) == (3, 0)


def test_a_bare_value_the_summary_also_kept_is_lost_beside_the_pin(
        write_log: LogWriter) -> None:
    """usertest50 #2: a span's bare "2.31.0" beside another span's pin, both kept by
    one summary and dropped by the next fold: the drop was rewritten as the pin only,
    so the bare fact's loss went to eviction (fold 2, eviction 1; by hand 3, 0)."""
    log = [HEADER,
           rnd(0, spans=[{"id": "p0", "tokens": 20, "role": "assistant",
                          "text": "Pin requests==2.31.0 in setup.cfg."},
                         {"id": "p1", "tokens": 20, "role": "assistant",
                          "text": "The lockfile says 2.31.0 for the docs build."}]),
           rnd(1, summaries=[{"id": "q1", "tokens": 20, "children": ["p0", "p1"],
                              "text": "Kept requests pinned at 2.31.0; lockfile shows "
                                      "2.31.0 for the docs build."}], evicted=["p0", "p1"]),
           rnd(2, summaries=[{"id": "q2", "tokens": 10, "children": ["q1"],
                              "text": "Docs work done."}], evicted=["q1"])]
    report = audit(str(write_log(log)))
    lost = {d["text"]: (d["cause"], d["fold"]) for d in report.extra["lost_discriminators"]}
    # setup.cfg lost at q1 (its summary names no file); both values lost at q2
    assert lost == {"2.31.0": ("fold", "q2"), "requests==2.31.0": ("fold", "q2"),
                    "setup.cfg": ("fold", "q1")}
    last = report.series.row(-1, named=True)
    assert (last["recall_debt"], last["recall_debt_fold"], last["recall_debt_eviction"]) \
        == (3, 3, 0)
    [at_q2] = [f for f in report.findings if f.code == "CA301" and f.entity == "q2"]
    assert at_q2.values["facts"] == at_q2.values["facts_lost"] == 2
