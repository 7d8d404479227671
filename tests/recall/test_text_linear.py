"""Text work linear in the input on the shapes of the eighth adversarial pass (issue 11,
class 5): one long line of arrows (F1), many "Next:" lines (F2), two long summaries'
sentences (F3), many sentences against many unsupported items (F5), many lost items
against one long user text (F6).

Each fault has hand-computed cases, a deterministic count of the work at n and 2n
(linear work doubles, the old per-pair loops quadrupled; never a duration) and, where
the rewrite is not a one-liner, a seeded random comparison with the old code, which is
kept here for that.
"""

from __future__ import annotations

import random
import re
from typing import Any

import polars as pl
import pytest

from compaction_audit.recall import claims, clauses, harm, stale
from compaction_audit.recall.kinds import Discriminator, Kind
from compaction_audit.recall.literals import Literals

# --- F1: arrows ("->") and the code verdict of their line -----------------------------


def _old_keep_arrow(low: str, start: int, end: int) -> bool:
    """The arrow branch of ``_keep_marker`` before the fix (a search of the whole line
    per marker)."""
    line_start = low.rfind("\n", 0, start) + 1
    line_end = low.find("\n", end)
    line = low[line_start:line_end if line_end >= 0 else len(low)]
    before = low[line_start:start].rstrip().rsplit(" ", 1)[-1]
    after = low[end:end + 40].lstrip().split(" ", 1)[0]
    return (not clauses._ARROW_CODE_RE.search(line.replace("->", " ")) and before.isalpha()
            and after.isalpha())


def _arrows(low: str) -> list[tuple[Kind, str, int, int]]:
    return [m for m in clauses._marks(low) if low[m[2]:m[3]] in ("->", "\u2192")]


@pytest.mark.parametrize(("text", "kept"), [
    ("parse -> lint -> test", [True, True]),
    ("x = parse -> lint", [False]),  # "=" on the line: code
    ("x = 1\nparse -> lint", [True]),  # code on another line only
    ("fn(a) -> b\nparse -> lint", [False, True]),
    ("9 -> lint", [False]),  # not a word before
    ("parse  ->  lint", [True]),
    ("foo.parse -> lint", [False]),
    ("\tparse\t-> lint", [False]),  # a tab is not the space the word is split on
    ("parse \u2192 lint", [True]),
    ("parse -> 9", [False]),
    ("a\u00e9 -> b", [True]),  # letters beyond ASCII
])
def test_arrow_markers_by_hand(text: str, kept: list[bool]) -> None:
    low = clauses._lower(text)
    lines = clauses._code_lines(low)
    assert [clauses._keep_marker(low, *m, lines) for m in _arrows(low)] == kept
    assert [clauses._keep_marker(low, *m) for m in _arrows(low)] == kept


def test_arrow_markers_equal_the_old_code_on_random_texts() -> None:
    rng = random.Random(8)
    pieces = ["a", "bc", "->", "\u2192", " ", " ", "\n", "=", "\t", "9", ".", "\u00e9",
              "fn", "(", "::", "-", ">"]
    for _ in range(3000):
        low = clauses._lower("".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))))
        lines = clauses._code_lines(low)
        for m in _arrows(low):
            assert clauses._keep_marker(low, *m, lines) == _old_keep_arrow(low, m[2], m[3]), low


class _CountingRe:
    """Stands in for a compiled pattern: counts the characters its ``search`` reads."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.chars = pattern, 0

    def search(self, text: str, *args: Any) -> re.Match[str] | None:
        self.chars += len(text)
        return self.pattern.search(text, *args)


def test_one_line_of_arrows_reads_each_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    read = {}
    for n in (2000, 4000):
        counter = _CountingRe(clauses._ARROW_CODE_RE)
        monkeypatch.setattr(clauses, "_ARROW_CODE_RE", counter)
        out: list[Any] = []
        clauses.scan_clauses("parse -> " * n, out)  # n arrows on one line
        read[n] = counter.chars
        assert len(out) == n - 1  # "parse -> parse" between each two arrows
        monkeypatch.undo()
    # the old code searched the whole line once per arrow: n x 9n characters
    assert read[2000] <= 9 * 2000 and read[4000] <= 2 * read[2000]


# --- F2: "Next" items -------------------------------------------------------------


def _old_next_items(text: str) -> list[str]:
    """``next_items`` before the fix: each heading took every line below it."""
    items: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = stale._NEXT_RE.match(line)
        if not m:
            continue
        if m.group(1).strip():
            items.append(m.group(1).strip())
        for below in lines[i + 1:]:
            if not below.strip() or re.match(r"[ \t]*(?:#|\d+\.\s+[A-Z][\w ]+:$)", below):
                break
            items.append(below.strip(" \t-*+\u2022"))
    return [t.rstrip(".;")[:200] for t in items
            if len(clauses.content_words(t.lower(), 20)) >= 2]


@pytest.mark.parametrize(("text", "want"), [
    ("Next: fix the parser\nNext: fix the lexer.",
     ["fix the parser", "fix the lexer"]),  # was also "Next: fix the lexer" under the first
    ("Done.\nNext steps:\n- write the migration\n- ship it now\n\nOther words here.",
     ["write the migration", "ship it now"]),
    ("TODO: update the docs\n## Results\nparser tests pass", ["update the docs"]),
    ("Pending tasks:\n1. Deploy the service\n2. Rotate the keys\n3. Later Work Items:\nmore "
     "things here", ["1. Deploy the service", "2. Rotate the keys"]),
    ("Next: ship\n- write the migration", ["write the migration"]),  # one word: no item
])
def test_next_items_by_hand(text: str, want: list[str]) -> None:
    assert stale.next_items(text) == want


def _next_text(rng: random.Random, nested: bool) -> str:
    words = ["fix", "the", "parser", "lexer", "ship", "deploy", "docs", "tests", "keys"]
    heads = ["Next:", "Next steps:", "TODO:", "- pending:", "**Next**:", "Remaining work:"]
    lines = []
    for _ in range(rng.randint(1, 14)):
        roll = rng.random()
        if roll < 0.25:
            lines.append(rng.choice(heads) + " " + " ".join(rng.sample(words, 3)))
            if not nested:  # what follows it belongs to it until a blank line
                lines += ["- " + " ".join(rng.sample(words, rng.randint(1, 4)))
                          for _ in range(rng.randint(0, 3))] + [""]
        elif roll < 0.35:
            lines.append(rng.choice(["", "## Heading", "1. Item Title:"]))
        else:
            lines.append("- " + " ".join(rng.sample(words, rng.randint(1, 4))))
    return "\n".join(lines)


def test_next_items_equal_the_old_code_without_nested_headings() -> None:
    rng = random.Random(2)
    for _ in range(2000):
        text = _next_text(rng, nested=False)
        assert stale.next_items(text) == _old_next_items(text), text


def test_next_items_with_nested_headings_drop_only_the_repeats() -> None:
    """With a "Next" line inside another's section the old list had each line below it
    twice (and the heading line itself as an item); the new one is the old one with
    those repeats taken out, in the same order."""
    rng = random.Random(3)
    for _ in range(2000):
        text = _next_text(rng, nested=True)
        new, old = stale.next_items(text), _old_next_items(text)
        rest = iter(old)
        assert all(any(item == o for o in rest) for item in new), text  # a subsequence
        assert set(old) - set(new) <= {o for o in old if stale._NEXT_RE.match(o)} | set(
            stale._NEXT_RE.sub(r"\1", o).strip() for o in old), text


def test_next_lines_in_a_row_give_one_item_each() -> None:
    for n in (100, 200):
        text = "".join(f"Next: verify the delta{i} rollout\n" for i in range(n))
        assert stale.next_items(text) == [f"verify the delta{i} rollout" for i in range(n)]
        assert len(_old_next_items(text)) == n * (n + 1) // 2  # what the old code built


def test_done_reads_each_span_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_done`` over n items and the same spans: one search of each span's text for a
    done word, not one per (item, span)."""
    searched = {}
    for n in (100, 200):
        counter = _CountingRe(stale._DONE_RE)
        monkeypatch.setattr(stale, "_DONE_RE", counter)
        spans = [(f"s{j}", f"span {j} fixed the build of module{j} in run {n}")
                 for j in range(20)]  # texts not seen before (the per-text cache)
        got = [stale._done(f"build module{i % 40} again", spans) for i in range(n)]
        assert got == [f"s{i % 40}" if i % 40 < 20 else None for i in range(n)]
        searched[n] = counter.chars
        monkeypatch.undo()
    assert searched[100] == searched[200] == sum(len(t) for _, t in spans)


def test_done_needs_a_done_word_and_most_stems() -> None:
    spans = [("a", "the migration for orders is written"),  # no done word
             ("b", "done: migration written for the orders table"),
             ("c", "migration for orders completed")]
    assert stale._done("write the migration for the orders table", spans) == "b"
    assert stale._done("write the migration for the orders table", spans[2:]) is None  # 2 of 5
    assert stale._done("orders orders", spans) is None  # one stem: never enough


# --- F3: repeated sentences -------------------------------------------------------


def _old_repeat_share(before: tuple[frozenset[str], ...],
                      after: tuple[frozenset[str], ...]) -> tuple[float, int]:
    if not before:
        return 0.0, 0
    same = sum(1 for a in before
               if any(len(a & b) >= stale.SAME_SENTENCE * len(a | b) for b in after))
    return same / len(before), len(before)


def _with_sets(monkeypatch: pytest.MonkeyPatch, sets: dict[str, tuple[Any, ...]]) -> None:
    monkeypatch.setattr(stale, "_sentences", lambda text: sets[text])


@pytest.mark.parametrize(("current", "want"), [
    ("Alpha bravo charlie delta.", (1.0, 1)),  # the same set
    ("Alpha bravo charlie delta echo.", (1.0, 1)),  # 4 of 5 = 0.8: the bound
    ("Alpha bravo charlie delta echo foxtrot.", (0.0, 1)),  # 4 of 6
    ("Alpha bravo charlie.", (0.0, 1)),  # 3 of 4
    ("Golf hotel india. Alpha bravo charlie delta echo.", (1.0, 1)),
])
def test_repeat_share_by_hand(current: str, want: tuple[float, int]) -> None:
    assert stale.repeat_share("Alpha bravo charlie delta.", current) == want


def _draw(rng: random.Random, vocab: list[str]) -> frozenset[str]:
    return frozenset(rng.sample(vocab, rng.randint(0, len(vocab))))


def test_repeat_share_equals_every_pair_on_random_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    for trial in range(1500):
        vocab = [f"w{i}" for i in range(rng.randint(3, 14))]
        before = tuple(_draw(rng, vocab) for _ in range(rng.randint(0, 8)))
        after = tuple(_draw(rng, vocab) for _ in range(rng.randint(0, 8)))
        if trial % 3 == 0 and before:  # near copies: one stem more or fewer
            after += tuple(b | {rng.choice(vocab)} for b in before[:2])
            after += tuple(frozenset(list(b)[1:]) for b in before[2:4])
        _with_sets(monkeypatch, {"p": before, "c": after})
        assert stale.repeat_share("p", "c") == _old_repeat_share(before, after), (before, after)


class _CountedSet(frozenset[str]):
    """A stem set that counts the intersections taken with it."""

    ands = 0

    def __and__(self, other: Any) -> Any:
        type(self).ands += 1
        return frozenset.__and__(self, other)


def test_repeat_share_compares_only_sentences_that_share_a_stem(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ands = {}
    for n in (400, 800):
        before = tuple(_CountedSet({f"a{i}", f"b{i}", f"c{i}", "common"}) for i in range(n))
        # half of them again, the other half new
        after = before[: n // 2] + tuple(
            _CountedSet({f"x{i}", f"y{i}", f"z{i}", "common"}) for i in range(n // 2))
        _with_sets(monkeypatch, {"p": before, "c": after})
        _CountedSet.ands = 0
        assert stale.repeat_share("p", "c") == (0.5, n)
        ands[n] = _CountedSet.ands
    # every pair was n x n intersections
    assert 0 < ands[400] <= 2 * 400 and ands[800] <= 2 * ands[400]


# --- F5: sentences that hold an unsupported item ----------------------------------


class _Counted:
    """A found item whose ``text`` counts its reads."""

    reads = 0

    def __init__(self, text: str) -> None:
        self._text = text

    @property
    def text(self) -> str:
        type(self).reads += 1
        return self._text


def _old_bare(text: str, found: list[Any]) -> list[str]:
    return [s for s, content in claims._claim_sentences(text)
            if not any(d.text in s for d in found)
            and claims._covered(content, frozenset(), frozenset()) < claims.CLAIM_MAX_COVER]


def _bare(text: str, found: list[Any]) -> list[str]:
    return [s for s, _ in claims._bare_claims(text, found, frozenset(), frozenset())]


def test_bare_claims_by_hand() -> None:
    text = ("Alpha bravo charlie delta echo foxtrot 45000. Golf hotel india juliet kilo "
            "lima. Mike november oscar papa quebec 45000ms.")
    d = Discriminator(Kind.QUANTITY, "45000", "45000", 0, 5)
    assert _bare(text, [d]) == ["Golf hotel india juliet kilo lima."]
    assert _bare(text, []) == [s for s, _ in claims._claim_sentences(text)]
    many = [Discriminator(Kind.QUANTITY, str(70000 + i), str(70000 + i), 0, 5)
            for i in range(40)] + [d]  # past _DIRECT_TEXTS: the automaton
    assert len(many) > claims._DIRECT_TEXTS
    assert _bare(text, many) == ["Golf hotel india juliet kilo lima."]


def test_bare_claims_equal_the_old_code_on_random_summaries() -> None:
    rng = random.Random(11)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "45000", "45", "port", "v1.2", "src/a.py"]
    for _ in range(300):
        text = " ".join(rng.choice(words) + rng.choice(["", "", ".", ".\n"])
                        for _ in range(rng.randint(5, 80)))
        for k in (3, 40):  # both paths
            found = [_Counted(rng.choice(words)[: rng.randint(1, 6)]) for _ in range(k)]
            assert _bare(text, found) == _old_bare(text, found), (text, k)


def test_bare_claims_read_each_item_once() -> None:
    reads = {}
    for n in (500, 1000):
        summ = ("Alpha bravo charlie delta echo foxtrot golf. " * n + "Ports "
                + " ".join(str(10000 + 7 * i) for i in range(n)) + ".")
        found = [_Counted(str(10000 + 7 * i)) for i in range(n)]
        _Counted.reads = 0
        got = _bare(summ, found)
        assert got == ["Alpha bravo charlie delta echo foxtrot golf."] * n
        reads[n] = _Counted.reads
    # the old code read every item for every sentence: n x n
    assert reads[500] <= 2 * 500 and reads[1000] <= 2 * reads[500]


# --- F6: lost items asked again -----------------------------------------------------


class _Text(str):
    """A user text that counts its lowercase copies and their characters."""

    copies = 0

    def lower(self) -> str:
        type(self).copies += 1
        return str.lower(self)


class _Users:
    """Stands in for the user-span table: ``height`` and ``sort(...).rows()``."""

    def __init__(self, rows: list[tuple[str, int, int, str]]) -> None:
        self._rows, self.height = rows, len(rows)

    def sort(self, by: str) -> _Users:
        return _Users(sorted(self._rows, key=lambda r: r[1]))

    def rows(self) -> list[tuple[str, int, int, str]]:
        return self._rows


def _lost(texts: list[str], values: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"key": [f"quantity:{v}" for v in values],
                         "kind": ["quantity"] * len(values), "text": texts,
                         "start": [0] * len(values)})


def test_asked_again_lowercases_each_user_text_once() -> None:
    copies = {}
    for n in (200, 400):
        values = [str(100003 + 7 * i) for i in range(n)]
        lost = _lost([f"key_{i}: {v}" for i, v in enumerate(values)], values)
        body = _Text("please recheck " + " ".join(f"key_{i} {v}" for i, v in
                                                  enumerate(values) if i % 2 == 0))
        _Text.copies = 0
        got = harm.asked_again(lost, _Users([("u", 1, 5, body)]))  # type: ignore[arg-type]
        assert got["key"].to_list() == [f"quantity:{v}" for v in values[::2]]
        copies[n] = _Text.copies
    # a few copies (the survival index's among them), not one per lost item it states
    assert copies[200] == copies[400] <= 5


def test_asked_again_words_are_found_as_substrings_as_before() -> None:
    lost = _lost(["read_timeout_ms: 45000", "45000", "read_timeout_ms: 46000"],
                 ["45000", "45000", "46000"])
    users = pl.DataFrame({"id": ["u1", "u2", "u3"], "ri": [1, 2, 3], "round": [1, 2, 3],
                          "text": ["I ran 45000 requests",
                                   "config.READ_TIMEOUT_MS=45000 and 46000",
                                   "read_timeout_ms stays 46000"]})
    got = harm.asked_again(lost, users).select("key", "id").rows()
    # a word inside a longer one counts (the old substring test); a bare 45000 never
    assert got == [("quantity:45000", "u2"), ("quantity:46000", "u2")]


# --- the automaton itself -----------------------------------------------------------


def test_literals_equal_python_in_on_random_strings() -> None:
    rng = random.Random(13)
    for _ in range(3000):
        alphabet = "ab" if rng.random() < 0.5 else "abc."
        patterns = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))
                    for _ in range(rng.randint(0, 6))]
        if rng.random() < 0.8:
            patterns = [p for p in patterns if p]
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        lit = Literals(patterns)
        assert lit.any_in(text) == any(p in text for p in patterns), (patterns, text)
        assert lit.found_in(text) == {p for p in patterns if p in text}, (patterns, text)


def test_literals_by_hand() -> None:
    lit = Literals(["he", "she", "his", "hers", "she"])
    assert lit.patterns == ["he", "she", "his", "hers"]
    assert lit.found_in("ushers") == {"she", "he", "hers"}
    assert lit.any_in("ahis") and not lit.any_in("hx sh")
    assert Literals([]).found_in("abc") == set() and not Literals([]).any_in("abc")
    assert Literals([""]).any_in("") and Literals(["", "z"]).found_in("a") == {""}
