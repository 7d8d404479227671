"""A value below a threshold is shown below it (adv131 #4: a raw_ratio of 0.2499975
read "raw_ratio 0.250 < 0.25", the decision right and the message contradicting it)."""

from __future__ import annotations

import pytest

from compaction_audit import api
from compaction_audit.rules.base import fmt_below
from tests.logs import LogWriter, rnd


@pytest.mark.parametrize(("value", "limit", "shown"), [
    (0.2499975, 0.25, f"{0.2499975:.6f}"),  # 0.250, 0.2500, 0.25000 are not below
    (0.2499, 0.25, "0.2499"),
    (0.21, 0.25, "0.210"),  # three decimals when they say it
    (0.25, 0.25, "0.250"),  # not below: as fmt writes it
    (0.3, 0.25, "0.300"),
    (0.25 - 1e-15, 0.25, "0.250"),  # past 12 decimals: as fmt writes it
    (None, 0.25, "unknown"),
])
def test_fmt_below(value: float | None, limit: float, shown: str) -> None:
    assert fmt_below(value, limit) == shown


def test_the_drift_message_shows_the_ratio_below_the_floor(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 999_990}, {"id": "b", "tokens": 3_000_010}]),
        rnd(1, summaries=[{"id": "m", "tokens": 3_000_010, "children": ["b"]}],
            evicted=["b"]),
    ]))
    report = api.audit(path)
    assert report.series["raw_ratio"][1] == 999_990 / 4_000_000
    (drift,) = [f for f in report.findings if f.code == "CA104"]
    assert drift.message.startswith(f"compaction drift: raw_ratio {0.2499975:.6f} < 0.25 ")
