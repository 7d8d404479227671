"""SARIF message texts are plain text in which log text forms no embedded link
(adv108 #3): SARIF 2.1.0 section 3.11.6 reads ``[text](uri)`` in a message as a link a
viewer renders, and asks for literal brackets escaped with a backslash."""

from __future__ import annotations

import json
import re

from compaction_audit.report.sarif import plain
from tests.gate_app import run
from tests.logs import LogWriter, rnd, session

# an unescaped "[...](" : a bracket with no backslash before it
_LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(")
_ID = "[Details: false positive, dismiss](https://evil.example/x)"


def _unescaped(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def test_plain_escapes_brackets_and_backslashes() -> None:
    assert plain("[a](b) c\\d") == "\\[a\\](b) c\\d"  # a lone backslash stays
    assert plain("no brackets") == "no brackets"
    assert plain("x \\\\[z") == "x \\\\\\\\\\[z"  # each backslash of a run ending at one
    assert _unescaped(plain("x [y] \\[z")) == "x [y] \\[z"


def test_a_summary_id_written_as_a_link_is_no_link(write_log: LogWriter) -> None:
    path = write_log([
        session(session_id="links"),
        rnd(0, spans=[{"id": "u1", "tokens": 20, "role": "user",
                       "text": "Pin libfoo==4.2.1 [see](1)."}]),
        rnd(1, summaries=[{"id": _ID, "tokens": 5, "children": ["u1"],
                           "text": "Work continues."}], evicted=["u1"]),
    ], name="links.jsonl")
    doc = json.loads(run("audit", str(path), "-f", "sarif", "--jobs", "1").stdout)
    run_ = doc["runs"][0]
    texts = [r["message"]["text"] for r in run_["results"]]
    texts += [n["message"]["text"] for inv in run_["invocations"]
              for n in inv.get("toolExecutionNotifications", [])]
    assert {r["ruleId"] for r in run_["results"]} >= {"CA201", "CA301"}
    assert not [t for t in texts if _LINK.search(t)]
    # the id is still there, written literally once the escapes are read
    assert any(_ID in _unescaped(t) for t in texts)
