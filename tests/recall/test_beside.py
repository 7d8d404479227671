"""The words kept beside a summary (recall/beside.py, CA305): the raw spans in the
working set at the summary's round, on a small log whose intervals are worked out here."""

from __future__ import annotations

from compaction_audit.engine import typed_items
from compaction_audit.io.native import read_native
from compaction_audit.recall.beside import beside_words
from tests.logs import LogWriter, rnd


def test_the_terms_of_spans_in_the_working_set_at_the_summary_s_round(
        write_log: LogWriter) -> None:
    # A holds lib3 in rounds 0-4 ([0, 5)), B in [1, 2), C in [3, 4): at round 4 only A
    # is there.  Merging B and C alone ([1, 2), [3, 4)) would miss it: the merged
    # intervals run to the greatest end so far (A's 5), not the previous one's.
    def span(i: str, text: str) -> dict[str, object]:
        return {"id": i, "tokens": 5, "text": text, "source": "user"}

    def fold(i: str, child: str) -> dict[str, object]:
        return {"id": i, "tokens": 1, "children": [child], "text": "s"}

    # S1 and S3 are asked about too, so that B's and C's intervals are read
    session = read_native(str(write_log([
        rnd(0, spans=[span("A", "lib3 alpha"), span("X", "folded"), span("Y", "y"),
                      span("Z", "z")]),
        rnd(1, spans=[span("B", "lib3 beta")], summaries=[fold("S1", "Y")], evicted=["Y"]),
        rnd(2, evicted=["B"]),
        rnd(3, spans=[span("C", "lib3 gamma")], summaries=[fold("S3", "Z")], evicted=["Z"]),
        rnd(4, summaries=[{"id": "S4", "tokens": 1, "children": ["X"], "text": "s"}],
            evicted=["X", "C"]),
        rnd(5, evicted=["A"]),
        rnd(6, summaries=[{"id": "S6", "tokens": 1, "children": ["S4"], "text": "t"}],
            evicted=["S4"])])))
    items = typed_items(session)
    asked = {"S1": ({"beta"}, set()), "S3": ({"gamma"}, set()),
             "S4": ({"lib3", "gamma", "alpha"}, {"alpha"}), "S6": ({"lib3"}, set())}
    assert beside_words(session, items, asked) == {
        "S1": (frozenset({"beta"}), frozenset()), "S3": (frozenset({"gamma"}), frozenset()),
        "S4": (frozenset({"lib3", "alpha"}), frozenset({"alpha"}))}
    assert beside_words(session, items, {"S6": ({"lib3"}, set())}) == {}
