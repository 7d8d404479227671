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
