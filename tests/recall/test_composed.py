"""Text written decomposed (NFD) reads as written composed (adv97 #4).

macOS writes file names decomposed: "zoë" as "zoe" and U+0308.  A span's decomposed
"/Users/zoë/app/settings.toml" was cut at the accent into the path "/Users/zoe", lost
(CA301, quoting a string the log does not hold) against a summary that wrote it
composed, which stated an unsupported identifier (CA305).  Discriminators, the survival
index and the leaf words read every text composed (``spantypes.composed``)."""

from __future__ import annotations

import unicodedata

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import extract
from tests.logs import LogWriter, rnd

TEXT = "Never edit /Users/zo\u00eb/app/settings.toml on prod."
NFD, NFC = (unicodedata.normalize(form, TEXT) for form in ("NFD", "NFC"))


def _codes(write_log: LogWriter, child: str, summary: str) -> set[str]:
    log = [rnd(0, spans=[{"id": "u", "tokens": 10, "text": child, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u"], "text": summary}],
               evicted=["u"])]
    return {f.code for f in audit(str(write_log(log))).findings if f.code.startswith("CA3")}


def test_a_decomposed_path_is_read_whole() -> None:
    assert NFD != NFC
    paths = [d.text for d in extract(NFD) if d.kind.value == "identifier"]
    assert paths == ["/Users/zo\u00eb/app/settings.toml"]  # composed, one path


@pytest.mark.parametrize(("child", "summary"), [(NFD, NFC), (NFC, NFD), (NFD, NFD)])
def test_either_form_keeps_the_other(write_log: LogWriter, child: str, summary: str) -> None:
    assert _codes(write_log, child, summary) == set()


def test_another_path_is_still_unsupported(write_log: LogWriter) -> None:
    # "zoe" for "zoë": a path no leaf holds (kept by its file name, as any path)
    other = unicodedata.normalize("NFD", "Never edit /Users/zoe/app/settings.toml on prod.")
    assert _codes(write_log, NFD, other) == {"CA305"}
