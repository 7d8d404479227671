"""Code and tool output keep keyed values only, in linear work (issue 11, item 5, adv8 F7).

A tool output of bare numbers built one object per number before the filter dropped
them, and the filter searched back to the line start for each one (quadratic on one
long line).  The answers must not change: the old filter is kept below as the
reference and compared on seeded random outputs.
"""

from __future__ import annotations

import random

import pytest

from compaction_audit.recall import extract as ex
from compaction_audit.recall.extract import Discriminator, Kind
from compaction_audit.recall.kinds import KIND_RANK
from compaction_audit.recall.spantypes import clean_text


def _old_values_only(text: str, found: list[Discriminator]) -> list[Discriminator]:
    """``_values_only`` as it was (main 0590d1d)."""
    out = []
    for d in found:
        if d.kind in (Kind.IDENTIFIER, Kind.LINK):
            out.append(d)
            continue
        if d.kind is Kind.QUANTITY and " " in d.norm:
            out.append(d)
            continue
        if d.kind in (Kind.QUANTITY, Kind.VERSION, Kind.SCOPE):
            line_start = text.rfind("\n", 0, d.start) + 1
            key = ex._KEYED_RE.search(text, max(line_start, d.start - 48), d.start)
            if key:
                out.append(Discriminator(d.kind, text[key.start():d.end], d.norm, key.start(),
                                         d.end))
    return out


def old_extract_values(text: str) -> tuple[Discriminator, ...]:
    """``extract_cached(text, "tool_output")`` as it was: every token, then the filter."""
    body = clean_text(text)
    found: list[Discriminator] = []
    ex._scan_tokens(body, 0, found)  # without values_of: every token, as before
    found = _old_values_only(body, found)
    found.sort(key=lambda d: (d.start, -KIND_RANK[d.kind]))
    seen: set[tuple[Kind, str]] = set()
    unique = []
    line, pos = 1, 0
    for d in found:
        if (d.kind, d.norm) not in seen:
            seen.add((d.kind, d.norm))
            line += body.count("\n", pos, d.start)
            pos = d.start
            unique.append(d if line == 1 else
                          Discriminator(d.kind, d.text, d.norm, d.start, d.end, line))
    return tuple(unique)


_PIECES = ["12", "7", "1,024", "3.25", "45000", "0.5", "timeout=45000", "retries: 3",
           "\"port\": 8080", "'n' = 12", "ENV=prod", "on prod", "v1.2.3", "==2.31.0",
           "4.1.9", "45 ms", "2GB", "`12`", "`a = 12`", "`x`", "`Make it so`", "db01",
           "src/a/f.py", "--force", "12:30", "2026-11-30", "key =", ":", "=", "x" * 30,
           "y" * 45, "a" * 41 + "=", "#12", "https://e.x/a", "k:12", "k= 99", "\n", "\n",
           "\t", "  "]


def _output(rng: random.Random) -> str:
    return " ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 40)))


@pytest.mark.parametrize("seed", range(6))
def test_values_of_code_and_tool_output_are_as_before(seed: int) -> None:
    rng = random.Random(seed)
    kept = 0
    for _ in range(400):
        text = _output(rng)
        new = ex.extract_cached(text, "tool_output")
        assert new == old_extract_values(text), text
        assert ex.extract_cached(text, "code") == new
        kept += len(new)
    assert kept > 400


def test_bare_numbers_are_dropped_and_keyed_ones_kept_by_hand() -> None:
    text = "12 34 timeout=45000 port: 8080 99\nk" + " " * 50 + "= 77 45 ms"
    got = ex.extract(text, "tool_output")
    assert [(d.kind, d.text, d.norm) for d in got] == [
        (Kind.QUANTITY, "timeout=45000", "45000"), (Kind.IDENTIFIER, "timeout", "timeout"),
        (Kind.QUANTITY, "port: 8080", "8080"), (Kind.QUANTITY, "45 ms", "45 ms")]
    # 12, 34, 99: no key; 77: its key "k" starts 52 characters back, past the reach


def test_a_bare_number_inside_a_code_span_still_counts_as_its_token() -> None:
    # "`12`" holds a number (dropped), so the span is not an identifier itself
    assert [d.norm for d in ex.extract("`12` and `name`", "tool_output")] == ["name"]
    assert [d.norm for d in ex.extract("`1` and `name`", "tool_output")] == ["1", "name"]


class _CountingText(str):
    """A text that adds up how many characters its backward searches examine."""

    scanned = 0

    def rfind(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        lo, hi = start or 0, len(self) if end is None else end
        _CountingText.scanned += max(0, hi - lo)
        return str.rfind(self, sub, lo, hi)


def _scanned(n: int) -> int:
    body = "12 " * n + "a=12"
    found: list[Discriminator] = []
    ex._scan_tokens(body, 0, found)
    _CountingText.scanned = 0
    kept = ex._values_only(_CountingText(body), found)
    assert [d.text for d in kept] == ["a", "a=12"]  # the key, the keyed value
    return _CountingText.scanned


def test_keyed_value_search_grows_with_the_line_not_its_square() -> None:
    small, large = _scanned(2000), _scanned(4000)
    assert 0 < large < 2.2 * small, (small, large)  # back to the line start: about 4x


def test_bare_numbers_of_a_tool_output_build_no_objects(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    built = [0]

    def counting(*args: object) -> Discriminator:
        built[0] += 1
        return Discriminator(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ex, "Discriminator", counting)
    text = "12 " * 3000 + "\n" + "34\n" * 3000 + "b: 56"
    assert [d.text for d in ex.extract(text, "tool_output")] == ["b: 56"]
    assert built[0] == 3  # the key "b", the value 56, then 56 with its key (not 6,000)
