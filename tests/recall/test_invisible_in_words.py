"""Characters drawn as nothing inside a token (adv94 #8): a span's "8<ZWSP>080" was the
quantity "080" lost against a summary's "8080", and "worker<ZWJ>.toml" a lost path."""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import extract
from compaction_audit.recall.leafwords import bag
from tests.logs import LogWriter, rnd


def _codes(write_log: LogWriter, child: str, summary: str) -> list[str]:
    log = [rnd(0, spans=[{"id": "a", "tokens": 1, "text": child, "role": "user"}]),
           rnd(1, summaries=[{"id": "m", "tokens": 1, "children": ["a"], "text": summary}],
               evicted=["a"])]
    return [f.code for f in audit(str(write_log(log))).findings]


@pytest.mark.parametrize("mark", ["\u200b", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u202e",
                                  # adv97 #5: default ignorables the first list missed
                                  "\u061c", "\u034f", "\ufe0f", "\U000e0041", "\u17b4"])
def test_an_invisible_character_splits_no_token(write_log: LogWriter, mark: str) -> None:
    assert [d.norm for d in extract(f"Use port 8{mark}080.") if d.kind.value == "quantity"] \
        == ["8080"]
    assert "8080" in bag(f"Use port 8{mark}080.")[0]
    for child, summary in ((f"Use port 8{mark}080.", "Use port 8080."),
                           (f"Edit worker{mark}.toml now.", "Edited worker.toml now.")):
        codes = _codes(write_log, child, summary)
        assert "CA301" not in codes and "CA305" not in codes


def test_another_value_is_still_lost(write_log: LogWriter) -> None:
    assert "CA301" in _codes(write_log, "Use port 8\u200b080.", "Use port 9090.")


def test_the_characters_removed_are_the_default_ignorables() -> None:
    """adv97 #5: the list named the bidi controls and missed U+061C ARABIC LETTER MARK;
    it is every Default_Ignorable_Code_Point (tests/test_safe_invisible.py's list)."""
    from compaction_audit.recall.spantypes import INVISIBLE_IN_WORDS_RE
    from tests.test_safe_invisible import DEFAULT_IGNORABLE

    ignorable = {c for low, high in DEFAULT_IGNORABLE for c in range(low, high + 1)}
    removed = {c for c in range(0x110000) if INVISIBLE_IN_WORDS_RE.fullmatch(chr(c))}
    assert removed == ignorable
