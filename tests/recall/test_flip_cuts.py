"""A summary's rule parts are cut where a child's clause ends (adv97 #1).

The extractor ends a clause at a colon, ``>``, a bracket ...; survival's index cut a
summary's sentence only at commas and "but", "while" ... .  A verbatim copy of "Keep
the lock file: never delete it." then stated the constraint "keep the lock file" under
"never" (a flipped rule, CA304), and "Don't redirect stderr 2>&1 when running the
linter." its condition under "don't".  And a "." inside a token ended the double
negation's sentence: "Never run `make > build.log` unless asked." read as a plain
negation, so "Run `make > build.log` unless asked." kept it.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import extract
from compaction_audit.recall.survival import flipped
from tests.logs import LogWriter, rnd

RULES = ("negation", "constraint", "condition")


def _codes(write_log: LogWriter, child: str, summary: str) -> set[str]:
    log = [rnd(0, spans=[{"id": "u", "tokens": 10, "text": child, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u"], "text": summary}],
               evicted=["u"])]
    return {f.code for f in audit(str(write_log(log))).findings if f.code.startswith("CA3")}


@pytest.mark.parametrize("text", [
    "Don't redirect stderr 2>&1 when running the linter.",
    "Keep the lock file: never delete it.",
    "Do not set retries > 5 if the queue is full.",
    "Do not rename config -> settings when migrating.",
    "If CI is red: do not merge.",
    "Never run `make > build.log` unless asked.",
    "Do not delete C:\\data\\cache before backup.",
])
def test_a_verbatim_copy_flips_nothing(write_log: LogWriter, text: str) -> None:
    assert not [d.text for d in extract(text) if d.kind.value in RULES and flipped(d, text)]
    assert _codes(write_log, text, text) == set()


@pytest.mark.parametrize(("child", "summary"), [
    ("Never run `make > build.log` unless asked.", "Run `make > build.log` unless asked."),
    ("Keep the lock file: never delete it.", "Never keep the lock file."),
    ("Do not set retries > 5 if the queue is full.", "Set retries > 5 if the queue is full."),
    # usertest51 #3: the part before a cut at "\\" ended "c:", read as a label's colon
    ("Do not delete C:\\data\\cache before backup.", "Delete C:\\data\\cache before backup."),
    ("Do not write to C:\\Windows\\System32 ever.", "Write to C:\\Windows\\System32 freely."),
])
def test_a_reversed_rule_is_still_flipped(write_log: LogWriter, child: str,
                                          summary: str) -> None:
    assert "CA304" in _codes(write_log, child, summary)
