"""Invisible characters in untrusted text are shown as escapes in every output (issue
11, third pass, F9): every format character (Unicode category Cf), surrogates,
private use, non-characters, variation selectors, and no visible text changes."""

from __future__ import annotations

import json
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compaction_audit.commands.audit import AuditFormat
from compaction_audit.report.safe import _CONTROL, json_safe, printable
from tests import ci_commands
from tests.gate_app import run
from tests.logs import dump, rnd, session, spans

INVISIBLE = ("\u200c\u200d\u2060\u2061\u206a\u00ad\u180e\ufe0f\U000e0041\U000e007f"
             "\ufff9\ufffa\ufffb\ufffe\uffff\ue000\U0001fffe\U000e0100\u034f\u3164\u2800")
"""Zero-width non-joiner and joiner, word joiner, function application, a deprecated
format control, soft hyphen, Mongolian vowel separator, variation selector 16, two tag
characters, the interlinear annotation marks, the non-characters FFFE/FFFF, a private
use character, a plane-1 non-character, a supplementary variation selector, the
combining grapheme joiner, a Hangul filler, the braille blank (adv112 #4: an id
held it raw, drawn as a space)."""
ID = f"s{INVISIBLE}x"
VISIBLE = "café naïve Straße 東京 한국어 Ελληνικά عربى עברית 😀 👍🏽 ✓ é (e + U+0301)"
"""Text that must pass unchanged: accents, CJK, Hangul, Greek, Arabic and Hebrew
letters, emoji with a skin-tone modifier, a combining accent."""


def _code_points(categories: set[str]) -> list[str]:
    return [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in categories]


def test_every_format_surrogate_and_private_use_character_is_escaped() -> None:
    missing = [f"U+{ord(c):04X}" for c in _code_points({"Cf", "Cs", "Co", "Zl", "Zp"})
               if not _CONTROL.fullmatch(c)]
    assert missing == []
    nonchars = [chr(c) for c in (*range(0xFDD0, 0xFDF0),
                                 *(p << 16 | low for p in range(17) for low in (0xFFFE, 0xFFFF)))]
    assert [c for c in nonchars if not _CONTROL.fullmatch(c)] == []


DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C),
                     (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
                     (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
                     (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
                     (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Default_Ignorable_Code_Point of Unicode's DerivedCoreProperties.txt, as ranges:
code points a renderer draws as nothing (whatever their category: the Khmer inherent
vowels U+17B4/17B5 are marks, U+FFF0-FFF8 unassigned) and that a culture-aware string
search skips, so ``#``, one of them and ``#[`` could match ``##[``."""


def test_every_default_ignorable_code_point_is_escaped() -> None:
    """Two Khmer vowels and U+FFF0-FFF8 passed raw (issue 11, adv11 F2)."""
    points = [chr(c) for low, high in DEFAULT_IGNORABLE for c in range(low, high + 1)]
    assert [f"U+{ord(c):04X}" for c in points if not _CONTROL.fullmatch(c)] == []
    assert [f"U+{ord(c):04X}" for c in points if not ci_commands.hidden(c)] == []
    assert printable("#\u17b4#[add-mask]x") == "#\\u17b4#[add-mask]x"
    data = json.dumps("a\u17b5\ufff0b", ensure_ascii=False).encode()
    assert json_safe(data) == b'"a\\u17b5\\ufff0b"'


def test_visible_text_is_unchanged() -> None:
    assert printable(VISIBLE) == VISIBLE
    data = json.dumps(VISIBLE, ensure_ascii=False).encode()
    assert json_safe(data) == data
    assert ci_commands.hidden(VISIBLE) == []


def test_printable_and_json_escapes() -> None:
    assert printable("a\u200db\U000e0041c\u00ad") == "a\\u200db\\U000e0041c\\xad"
    assert printable("id\u2800x") == "id\\u2800x"  # drawn as a space (adv112 #4)
    data = json.dumps(ID, ensure_ascii=False).encode()
    safe = json_safe(data)
    assert safe.isascii() and b"\\udb40\\udc41" in safe  # a surrogate pair past the BMP
    assert json.loads(safe) == ID  # the data stays exact


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A trace whose session id and an undefined-child summary id hold INVISIBLE."""
    monkeypatch.chdir(tmp_path)
    return dump([session(session_id=ID),
                 rnd(0, spans=spans(("a", 10), ("b", 10))),
                 rnd(1, summaries=[{"id": ID, "tokens": 5, "children": ["a"]}],
                     evicted=["a"])], tmp_path / "t.jsonl")


@pytest.mark.parametrize("fmt", [f.value for f in AuditFormat])
def test_every_output_format_shows_them_escaped(trace: Path, fmt: str) -> None:
    result = run("audit", str(trace), "--format", fmt)
    assert result.exit_code in (0, 1), result.stderr
    assert ci_commands.hidden(result.stdout) == []
    assert ci_commands.hidden(result.stderr) == []
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)
    if fmt == "json":
        assert json.loads(result.stdout)["session"]["session_id"] == ID
    if fmt == "junit":
        ET.fromstring(result.stdout)
    if fmt in ("text", "markdown", "github"):
        assert "u200c" in result.stdout and "u200d" in result.stdout
        assert "u2800" in result.stdout and "\u2800" not in result.stdout


def test_one_line_errors_show_them_escaped(tmp_path: Path) -> None:
    bad = dump([session(), rnd(0, spans=spans(("a", 1))), rnd(1, evicted=[ID])],
               tmp_path / "u.jsonl")
    result = run("audit", str(bad))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert ci_commands.hidden(result.stderr) == []


def test_a_stack_of_combining_marks_keeps_four() -> None:
    """adv94 #9: "a" and 640 combining marks drew bars through the HTML report's
    neighbouring rows; writing stacks two or three deep."""
    from compaction_audit.report.safe import STACKED_MARKS, printable

    assert STACKED_MARKS == 4
    four = "a\u0301\u0302\u0303\u0304"
    assert printable(four + "b") == four + "b"  # four in a row: kept
    assert printable(four + "\u0305\u20d0b") == four + "\\u0305\\u20d0b"
    assert printable("Vi\u1ec7\u0301t") == "Vi\u1ec7\u0301t"
    zalgo = "a" + "\u0300" * 640
    assert printable(zalgo, limit=10_000) == "a" + "\u0300" * 4 + "\\u0300" * 636


def test_the_marks_are_every_combining_mark() -> None:
    """report/marks.py is written out: every Mn and Me code point of this Python, no
    other (adv96 #5: U+0489 and the marks of other scripts were not capped)."""
    import re
    import unicodedata

    from compaction_audit.report.marks import MARKS
    from compaction_audit.report.safe import printable

    pattern = re.compile(f"[{MARKS}]")
    wrong = [hex(cp) for cp in range(0x110000)
             if bool(pattern.match(chr(cp)))
             != (unicodedata.category(chr(cp)) in ("Mn", "Me"))]
    assert wrong == []
    assert printable("d" + "\u0489" * 6) == "d" + "\u0489" * 4 + "\\u0489\\u0489"
    assert printable("x" + "\U0001d167" * 5) == "x" + "\U0001d167" * 4 + "\\U0001d167"
    assert printable("\u0e01\u0e49\u0e48") == "\u0e01\u0e49\u0e48"  # Thai: kept
