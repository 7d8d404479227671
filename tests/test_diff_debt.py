"""The diff verdict says how the recall debt moved, not only the inversion onset: two
runs of a loop that cannot invert (every product's compaction) had the same "inversion
onset unchanged: none -> none" headline whether the candidate's summaries lost more
facts or fewer. Before, the debt was only in the series below."""

from __future__ import annotations

from compaction_audit.api import audit
from compaction_audit.diff import diff_reports
from tests.logs import LogWriter, rnd

FACTS = [{"id": "a", "tokens": 30, "text": "Keep port 8080."},
         {"id": "b", "tokens": 30, "text": "Pin numpy==1.26.4."}]


def run(write_log: LogWriter, summary: str, name: str) -> str:
    return str(write_log([
        rnd(0, spans=FACTS),
        rnd(1, summaries=[{"id": "S", "tokens": 9, "children": ["a", "b"], "text": summary}],
            evicted=["a", "b"])], name))


def test_the_headline_names_the_debt_at_the_last_round(write_log: LogWriter) -> None:
    keeps = audit(run(write_log, "Keep port 8080; pin numpy==1.26.4.", "keeps.jsonl"))
    loses = audit(run(write_log, "Ports and pins were set.", "loses.jsonl"))
    d = diff_reports(keeps, loses)
    # lost: constraint "Keep port 8080", quantity 8080, version ==1.26.4
    assert d.last_debt() == (0, 3)
    assert d.headline().startswith("inversion onset unchanged: none -> none; ")
    assert "; recall debt at the last round 0 -> 3 (+3); " in d.headline()
    same = diff_reports(loses, loses)
    assert same.last_debt() == (3, 3) and "recall debt" not in same.headline()
