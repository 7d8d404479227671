"""The characters renderers draw as nothing (issue 11): one character class shared by
the report's escaping (:mod:`compaction_audit.report.safe`) and the reader's test of
an accounting that says nothing (:func:`compaction_audit.io.records.records_nothing`).
Pure standard library, no import: the reader and the reports both load it."""

from __future__ import annotations

INVISIBLE = ("\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
             "\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
             "\u2060-\u206f\u2800\u3164\ud800-\uf8ff\ufdd0-\ufdef\ufe00-\ufe0f\ufeff\uffa0"
             "\ufff0-\ufffb\ufffe\uffff"
             "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
             "\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff"
             + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(1, 15)))
"""Invisible characters, as the body of a regular-expression class: DEL and C1; every
format character (Unicode category Cf: soft hyphen, the Arabic and Syriac number signs,
the Mongolian vowel separator, zero-width space, non-joiner and joiner, LRM, RLM, the
bidi embeddings, overrides and isolates, word joiner and the invisible operators, the
deprecated format controls, BOM, interlinear annotation, the Egyptian, shorthand and
musical format controls, tag characters), the line and paragraph separators (Zl, Zp),
surrogates (Cs), private use (Co), the non-characters (U+FDD0-FDEF and the last two
code points of every plane), the variation selectors (U+FE00-FE0F, U+E0100-E01EF and
the Mongolian ones), the combining grapheme joiner, the Hangul fillers, the Khmer
inherent vowels U+17B4/17B5 and the braille blank U+2800 (letters, marks and a symbol
drawn as nothing: adv112 #4), and the unassigned
U+FFF0-FFF8: with the above, every Default_Ignorable_Code_Point of Unicode, which
renderers draw as nothing and culture-aware string search skips (adv11 F2).
Written out, not computed from :mod:`unicodedata` at import (start-up time);
``tests/test_safe_invisible.py`` checks it covers every Cf, Cs and Co character of the
running Python and every default ignorable.  Visible letters, marks, symbols and emoji
are not in it (issue 11, third pass, F9)."""
