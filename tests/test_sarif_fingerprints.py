"""SARIF's ``partialFingerprints`` follow what a fold lost (adv103 #3): code scanning
matches a result to a dismissed alert by them, so a fold that now loses another fact
(a rule, beside the port it lost before) must be another result; the same fold losing
the same facts at the same round keeps its fingerprint from run to run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate_app import run
from tests.logs import LogWriter, rnd, session


def _fingerprints(write_log: LogWriter, text: str, name: str) -> dict[str, str]:
    path: Path = write_log([
        session(session_id="fp"),
        rnd(0, spans=[{"id": "u1", "tokens": 10, "role": "user", "text": text}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 3, "children": ["u1"],
                           "text": "Canary notes."}], evicted=["u1"]),
    ], name=name)
    doc = json.loads(run("audit", str(path), "-f", "sarif", "--jobs", "1").stdout)
    return {r["ruleId"]: r["partialFingerprints"]["compactionAudit/v2"]
            for r in doc["runs"][0]["results"]}


def test_a_fold_that_loses_more_is_another_result(write_log: LogWriter) -> None:
    port = _fingerprints(write_log, "Use port 8443 for the canary.", "fp.jsonl")
    again = _fingerprints(write_log, "Use port 8443 for the canary.", "fp.jsonl")
    more = _fingerprints(write_log, "Never run the prod migration 0047 with --force; "
                                    "use port 8443.", "fp.jsonl")
    assert "CA301" in port and port == again
    assert more["CA301"] != port["CA301"]
    # a finding about no fold's facts (the summary with no reachable leaf) keeps its own
    assert more["CA201"] == port["CA201"]


def test_an_episode_is_fingerprinted_by_what_each_of_its_folds_lost(
        write_log: LogWriter) -> None:
    """adv104 #5: one result stands for an episode of folds at consecutive rounds, and
    its fingerprint took the first fold's facts alone: a later fold of the episode that
    now lost a rule kept the dismissed fingerprint."""
    def episode(second: str, name: str) -> str:
        path: Path = write_log([
            session(session_id="ep"),
            rnd(0, spans=[{"id": "u1", "tokens": 10, "role": "user",
                           "text": "Use port 8080 for the dev server."}]),
            rnd(1, spans=[{"id": "u2", "tokens": 10, "role": "user", "text": second}],
                summaries=[{"id": "S1", "tokens": 3, "children": ["u1"],
                            "text": "Dev server notes."}], evicted=["u1"]),
            rnd(2, summaries=[{"id": "S2", "tokens": 3, "children": ["u2"],
                               "text": "Host notes."}], evicted=["u2"]),
        ], name=name)
        doc = json.loads(run("audit", str(path), "-f", "sarif", "--jobs", "1").stdout)
        [result] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "CA301"]
        assert result["properties"]["count"] == 2  # one result for both folds
        return str(result["partialFingerprints"]["compactionAudit/v2"])

    plain = episode("The staging host is db-7.", "a.jsonl")
    again = episode("The staging host is db-7.", "a.jsonl")
    ruled = episode("The staging host is db-7. Never run git push --force on main.",
                    "a.jsonl")
    assert plain == again and ruled != plain
