"""provenance-floor (CA102) counts the offloaded source spans that can lift it.

usertest65 #1, #6: the finding advised the seed's "rehydrate the lowest-depth summary",
naming a summary whose offloaded leaves already counted in ``distinct_source_spans``:
following it left the count and the finding as they were.  What lifts the count is an
offloaded source span that nothing in the working set reaches, read back; the finding
says how many there are against how many the floor needs.

The log, by hand (``start_spans`` 10, so the floor is max(1, floor(10 x 0.2)) = 2):
round 0 adds a, b, c, d; round 1 folds a and b into S1 (depth 1), offloads a and
evicts b; round 2 folds S1 and c into S2 (depth 2), evicts S1 and c and either
offloads or evicts d, so the working set is S2 alone and reaches a only: 1 < 2.  The
spans still resolvable at round 2 are a and d (offloaded) or a alone (d evicted):
1 or 0 to read back.  Round 3 reads d back (``retained``): 2 reachable, no finding.
"""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit.api import audit
from tests.logs import LogWriter, rnd, session, spans


def _log(d_goes: str) -> list[dict[str, Any]]:
    return [
        session(start_spans=10),
        rnd(0, spans=spans(("a", 10), ("b", 10), ("c", 10), ("d", 10))),
        rnd(1, summaries=[{"id": "S1", "tokens": 3, "children": ["a", "b"]}],
            offloaded=["a"], evicted=["b"]),
        rnd(2, summaries=[{"id": "S2", "tokens": 3, "children": ["S1", "c"]}],
            evicted=["S1", "c"] + (["d"] if d_goes == "evicted" else []),
            offloaded=["d"] if d_goes == "offloaded" else []),
        rnd(3, retained=[["S2", 0.5]] + ([["d", 0.5]] if d_goes == "offloaded" else [])),
    ]


@pytest.mark.parametrize(("d_goes", "rounds", "to_read", "said"), [
    ("offloaded", [2], 1, "distinct_source_spans 1 < 2 (start_spans 10 x 0.2); 1 offloaded "
     "source span nothing in the working set reaches can be read back (1 needed)"),
    ("evicted", [2, 3], 0, "distinct_source_spans 1 < 2 (start_spans 10 x 0.2); no "
     "offloaded source span is left to read back (the ones missing were evicted or dropped): only "
     "new spans lift the count"),
])
def test_the_floor_counts_the_spans_to_read_back(
        write_log: LogWriter, d_goes: str, rounds: list[int], to_read: int,
        said: str) -> None:
    found = [f for f in audit(str(write_log(_log(d_goes)))).findings if f.code == "CA102"]
    assert [f.round for f in found] == rounds
    assert found[0].values["sources_to_read"] == to_read
    assert found[0].values["distinct_source_spans"] == 1
    assert found[0].values["floor"] == 2
    assert found[0].message.endswith(said)
    # the seed's summary advice lifts raw_ratio, not this count: not attached here
    assert "rehydrate" not in found[0].values
