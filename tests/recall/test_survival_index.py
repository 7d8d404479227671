"""Survival looks a discriminator up in indexes of the summary (issue 11, item 5, adv8 F4).

``survives`` used to scan every clause, sentence, rule, path, hash and requirement of
the summary for each lost discriminator: O(lost items x summary items).  It now looks
up only the candidates that can match.  The answers must not change: the old scans are
kept below as the reference and compared on many seeded random texts, and the work
(lines run in the ``survival`` package) must grow with the input, not with its square.
"""

from __future__ import annotations

import os
import random
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest

from compaction_audit.recall import survival as sv
from compaction_audit.recall import versions
from compaction_audit.recall.bindings import bound_name
from compaction_audit.recall.extract import CLAUSE_KINDS, Discriminator, Kind, extract
from compaction_audit.recall.survival import bindings as sbindings
from compaction_audit.recall.survival import check as scheck
from compaction_audit.recall.survival import flips as sflips
from compaction_audit.recall.survival import index as sindex
from compaction_audit.recall.survival import words as swords
from compaction_audit.recall.survival.withdrawn import withdrawn, without_struck

# ------------------------------------------------------------- the old scans (reference)


def _old_sentence_survives(words: list[str], idx: Any, negative: bool) -> bool:
    ordered = swords._content_stems(tuple(words))
    if len(ordered) < 2:
        return False
    stems = set(ordered)
    need = len(stems) // 2 + 1
    head = set(ordered[:swords._HEAD]) if len(ordered) > swords._HEAD else None
    for cand, neg in idx.sentences:
        if neg == negative and (len(stems & cand) >= need
                                or (head is not None and len(head & cand) > swords._HEAD // 2)):
            return True
    return False


def _old_clause_survives(d: Discriminator, idx: Any) -> bool:
    family, *words = d.norm.split()
    negative, kind = swords._polarity(d), d.kind
    if family == "not" and not negative:
        kind, family = Kind.CONSTRAINT, "must"
        words = [w for w in words if w != "not"]
    if family not in swords._MARKER_IS_CONTENT and _old_sentence_survives(words, idx, negative):
        return True
    if d.kind is Kind.REQUIREMENT:
        return False
    keys = [w for w in words if swords._is_key(w)]
    stems = {swords._stem(w) for w in words if w != ">"}
    if family == "sequence" and keys:  # every key, none on the other side in time
        return any(_old_in_order(keys, _in_time(d.text, words), other)
                   for other in _old_last_orders(idx.summary))
    for cand in idx.clauses.get((kind, family), ()):
        if keys:
            if all(k in cand or ("/" in k and swords._basename(k) in cand) for k in keys):
                return True
        elif len(stems & {swords._stem(w) for w in cand}) >= min(2, len(stems)):
            return True
    return False


def _old_last_orders(summary: str) -> list[Discriminator]:
    """The summary's sequence clauses, every one scanned (not deduplicated by norm),
    the last of each norm: the two directions of an order share a norm (adv99 #5)."""
    from compaction_audit.recall.clauses import scan_clauses
    from compaction_audit.recall.fences import blank_fences
    from compaction_audit.recall.spantypes import clean_text

    every: list[Discriminator] = []
    scan_clauses(blank_fences(clean_text(summary)), every)
    last = {c.norm: c for c in sorted(every, key=lambda c: c.start)
            if c.norm.startswith("sequence ")}
    return list(last.values())


def _old_in_order(keys: list[str], mine: tuple[set[str], set[str]] | None,
                  other: Discriminator) -> bool:
    """A summary's sequence clause ``other`` holds every key (a path also by its file
    name) and puts no more of them on the other side in time than the child
    (``mine``: its words first and second) than on their own."""
    words = other.norm.split()[1:]
    held = set(words)
    if not all(k in held or ("/" in k and swords._basename(k) in held) for k in keys):
        return False
    theirs = _in_time(other.text, words)
    if not mine or not theirs:
        return True
    same = sum(k in mine[i] and k in theirs[i] for i in (0, 1) for k in keys)
    return sum(k in mine[i] and k in theirs[1 - i] and k not in theirs[i]
               for i in (0, 1) for k in keys) <= same


def _in_time(text: str, words: list[str]) -> tuple[set[str], set[str]] | None:
    """The plain reading of a sequence clause's order: its words first and second in
    time, by the first marker of its text ("after" and "preceded by" put what follows
    them first); None without both sides."""
    if ">" not in words:
        return None
    left, right = set(words[:words.index(">")]), set(words[words.index(">") + 1:])
    tokens = re.findall(r"[\w-]+|→|,", text.lower())
    pairs = {"preceded": "by", "followed": "by", "prior": "to"}
    marks = [t for t, after in zip(tokens, [*tokens[1:], ""], strict=True)
             if (t in ("after", "afterwards", "before", "then", "subsequently", "->", "→")
                 and not (t == "after" and after == "all")) or pairs.get(t) == after]
    if not marks or not left or not right:
        return None
    at = tokens.index(marks[0])
    nxt, then = [*tokens[at + 1:at + 3], "", ""][:2]
    that = nxt in ("that", "this", "these", "those")
    if marks[0] == "after" and that and then not in ("", ","):
        return None  # "after that <word>": afterwards, or after that noun
    pointing = nxt in ("it", "which") or that
    back = marks[0] == "preceded" or (marks[0] == "after" and not pointing)
    return (right - left, left - right) if back else (left - right, right - left)


def _old_raw_in(norm: str, low: str) -> bool:
    """The plain scan: every place ``norm`` occurs, bounded by no word character, and
    (adv51, adv52) not a flag going on after ``-`` nor a number after ``.``."""
    def word(c: str) -> bool:
        return c.isalnum() or c == "_"

    at = low.find(norm)
    while at >= 0:
        before = low[at - 1] if at else " "
        rest = low[at + len(norm):at + len(norm) + 2] + "  "
        goes_on = ((norm.startswith("-") and norm[-1:].isalnum() and rest[0] == "-"
                    and word(rest[1]))
                   or (norm[-1:].isdigit() and rest[0] == "." and rest[1].isdigit()))
        if not word(before) and not word(rest[0]) and not goes_on:
            return True
        at = low.find(norm, at + 1)
    return False


def _old_flip_evidence(d: Discriminator, idx: Any) -> bool:
    if d.kind not in sflips._FLIP_KINDS:
        return False
    family, *words = d.norm.split()
    neg = swords._polarity(d)
    other = sflips._FLIP_FAMILIES.get(family)
    if other is not None:
        keys = [w for w in words if swords._is_key(w)]
        return bool(keys) and any(all(k in cand for k in keys)
                                  for cand in idx.clauses.get((d.kind, other), ()))
    if family in swords._MARKER_IS_CONTENT:
        return False
    stems = swords._flip_stems(words)
    if not stems:
        return False
    swapped = [stems - {w} | {a} for w in stems for a in sflips._ANTONYMS.get(w, ())]
    for cand, cand_neg in idx.rules:
        if cand_neg != neg and stems <= cand:
            return True
        if cand_neg == neg and any(s <= cand for s in swapped):
            return True
    return False


def _old_restated(d: Discriminator, idx: Any) -> bool:
    _, *words = d.norm.split()
    stems, neg = swords._flip_stems(words), swords._polarity(d)
    return bool(stems) and any(n == neg and stems <= cand
                               for cand, n in (*idx.sentences, *idx.rules))


def _old_last_word_keeps(d: Discriminator, summary_text: str) -> bool:
    """No sentence from the last that restates ``d`` on reverses it (adv98 #2, adv99
    #1), each sentence read alone; not kept when no sentence alone reverses it."""
    kept = flip = -1
    for at, sentence in enumerate(s for s in sflips._SPLIT_RE.split(summary_text)
                                  if s.strip()):
        own = sindex._index(sentence)
        kept = at if _old_restated(d, own) else kept
        flip = at if _old_flip_evidence(d, own) else flip
    return flip >= 0 and kept > flip


def old_survives(d: Discriminator, summary_text: str) -> bool:
    """``survives`` as it was before the indexes (main 0590d1d)."""
    idx = sindex._index(summary_text)
    norm = d.norm
    # a value bound to a name is decided by the summary's bindings when it binds the
    # name (usertest38 #3: a rule after the indexes, the same for both)
    if (name := bound_name(d)) is not None and (kept := sbindings.bound_kept(
            d, name, sbindings.summary_bindings(summary_text))) is not None:
        return kept
    # the value only in another name's token (adv108 #1), a rule restated as withdrawn
    # or struck through (adv108 #4): rules after the indexes, the same for both
    if name is not None and sbindings.bound_elsewhere(d, name, summary_text):
        return False
    if d.kind in CLAUSE_KINDS:
        return ((_old_clause_survives(d, idx) or scheck._paraphrased(d, idx))
                and (not _old_flip_evidence(d, idx) or (
                    _old_restated(d, idx) and _old_last_word_keeps(d, summary_text)))
                and not withdrawn(d, summary_text)
                and ((plain := without_struck(summary_text)) is summary_text
                     or old_survives(d, plain)))
    if d.kind is Kind.QUANTITY:
        number, _, unit = norm.partition(" ")
        if not unit:
            return number in idx.keys
        measure = versions.measure(number, unit)
        return (number, unit) in idx.quantities or (measure is not None
                                                    and measure in idx.measures)
    if d.kind is Kind.VERSION and norm[:1].isdigit():
        if norm in idx.keys:
            return True
        ver = versions.vtuple(norm)
        return any(versions.admits(op, req, ver) for op, req in idx.requirements)
    if d.kind is Kind.SCOPE:
        return norm in idx.scopes or norm in idx.keys
    if norm in idx.keys or _old_raw_in(norm, idx.low):
        return True
    if d.kind is Kind.IDENTIFIER and (key := swords._module_key(d.text)) and key in idx.modules:
        return True
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        return swords._basename(path) in idx.keys or any(
            path.endswith("/" + p.lstrip("/")) or p.endswith("/" + path) for p in idx.paths)
    if norm.startswith("migration "):
        return norm.removeprefix("migration ") in idx.keys
    if swords._HEX_RE.fullmatch(norm):
        return any(k.startswith(norm) or norm.startswith(k)
                   for k in idx.keys if swords._HEX_RE.fullmatch(k))
    return " " in norm and norm in summary_text.lower()


def old_flipped(d: Discriminator, summary_text: str) -> bool:
    return d.kind in sflips._FLIP_KINDS and not old_survives(d, summary_text) and (
        _old_flip_evidence(d, sindex._index(summary_text)))


def old_flip_sentence(d: Discriminator, summary_text: str) -> str | None:
    if not old_flipped(d, summary_text):
        return None
    for sentence in sflips._SPLIT_RE.split(summary_text):
        if sentence.strip() and _old_flip_evidence(d, sindex._index(sentence)):
            return sentence.strip()[:sv.SENTENCE_MAX]
    return summary_text.strip()[:sv.SENTENCE_MAX]


# ------------------------------------------------------------------ random texts
# Few words, so that texts share words, stems, keys and paths often and the lookups
# are exercised on near misses as well as on hits.
_WORDS = ["the", "config", "file", "migrations", "migration", "run", "running", "deploy",
          "release", "enable", "disable", "enabled", "allow", "forbid", "add", "remove",
          "cache", "replicas", "table", "rows", "service", "touch", "keep", "build", "write"]
_KEYS = ["db01", "alpha1", "beta2", "--force", "--dry-run", "foo_bar", "foo_baz", "x9",
         "prod", "staging", "#12", "ABC-12", "42", "4200", "3 replicas", "45 ms", "45000 ms",
         "45 s", "2 GB", "2048 MB"]
_MARKERS = ["do not", "never", "must", "must not", "should", "only", "at most", "at least",
            "because", "due to", "before", "after", "then", "no longer", "without",
            "cannot", "always", "ensure", "never exceed", "avoid", "don't", "unless"]
_PATHS = ["src/a/f.py", "lib/a/f.py", "a/f.py", "f.py", "/srv/app/f.py", "app/f.py",
          "src/b/g.ts", "/srv/b/g.ts", "C:\\app\\f.py", "app\\f.py", "kv/app/nas-02",
          "x/kv/app/nas-02", "./src/a/f.py", "../lib/a/f.py"]
_HASHES = ["abc1234", "abc12345", "abc1234def0", "abc1235", "0a1b2c3d", "0a1b2c3d4e5f",
           "0a1b2c3", "deadbee1", "deadbee1deadbee1", "1234abc", "1234abcd"]
_VERSIONS = ["1.2", "1.2.3", "1.4.0", "2.0", "2.0.1", "0.9", "1", "1.2.3.4", "3.1.0"]
_OPS = [">=", ">", "<=", "<", "==", "~>", "~=", "~", "^", "v", ""]
_ENDS = [".", ",", ";", "\n", " but", " while", "!", ""]


def _phrase(rng: random.Random, pools: list[list[str]]) -> str:
    parts = []
    for _ in range(rng.randint(2, 9)):
        pool = rng.choice(pools)
        parts.append(rng.choice(pool))
    return " ".join(parts) + rng.choice(_ENDS)


_SWAPS = {"not": "", "never": "always", "always": "never", "must": "must not",
          "enable": "disable", "disable": "enable", "allow": "forbid", "add": "remove",
          "at most": "at least", "at least": "at most", "do not": "", "before": "after"}


def _mutated(rng: random.Random, phrase: str) -> str:
    """A child phrase as a summary might restate it: a negation dropped, a word swapped
    for its opposite, words dropped or moved."""
    for a, b in rng.sample(sorted(_SWAPS.items()), 3):
        if a in phrase and rng.random() < 0.6:
            phrase = phrase.replace(a, b, 1)
    words = phrase.split(" ")
    if len(words) > 3 and rng.random() < 0.3:
        words.pop(rng.randrange(len(words)))
    if rng.random() < 0.2:
        rng.shuffle(words)
    return " ".join(words)


def _pools(rng: random.Random, shape: str) -> list[list[str]]:
    if shape == "clause":
        return [_WORDS, _WORDS, _MARKERS, _KEYS]
    if shape == "path":
        return [_WORDS, _PATHS, _MARKERS]
    if shape == "hash":
        return [_WORDS, _HASHES, ["commit", "reverted"]]
    if shape == "version":
        pinned = [rng.choice(_OPS) + rng.choice(_VERSIONS) for _ in range(6)]
        return [_WORDS, pinned, ["pin", "requires", "version"]]
    return [_WORDS, _KEYS, _MARKERS, _PATHS, _HASHES, _VERSIONS]


def _pairs(shape: str, count: int, seed: int) -> Iterator[tuple[Discriminator, str]]:
    rng = random.Random(seed)
    for _ in range(count):
        pools = _pools(rng, shape)
        phrases = [_phrase(rng, pools) for _ in range(rng.randint(1, 4))]
        child = " ".join(phrases)
        summary = " ".join(_mutated(rng, rng.choice(phrases)) if rng.random() < 0.5
                           else _phrase(rng, pools) for _ in range(rng.randint(0, 6)))
        for span_type in ("prose", "spec", "tool_output"):
            text = child if span_type != "spec" else "Requirements:\n- " + child
            for d in extract(text, span_type):
                yield d, summary


@pytest.mark.parametrize(("shape", "seed"), [
    ("clause", 1), ("clause", 2), ("path", 3), ("hash", 4), ("version", 5), ("mixed", 6),
    ("mixed", 7)])
def test_indexed_survival_answers_as_the_full_scan_did(shape: str, seed: int) -> None:
    checked = kept = flips = 0
    for d, summary in _pairs(shape, 300, seed):
        assert sv.survives(d, summary) == old_survives(d, summary), (d, summary)
        assert sv.flipped(d, summary) == old_flipped(d, summary), (d, summary)
        assert sv.flip_sentence(d, summary) == old_flip_sentence(d, summary), (d, summary)
        checked += 1
        kept += old_survives(d, summary)
        flips += old_flipped(d, summary)
    # the texts exercise both answers (a comparison of only misses would prove little)
    assert checked > 300 and 0 < kept < checked
    if shape in ("clause", "mixed"):
        assert flips > 0


def test_requirement_table_admits_what_some_requirement_admits() -> None:
    rng = random.Random(5)
    ops = [">=", ">", "<=", "<", "==", "~>", "~=", "~", "^", "="]
    for _ in range(3000):
        reqs = [(rng.choice(ops), tuple(rng.randint(0, 3) for _ in range(rng.randint(1, 4))))
                for _ in range(rng.randint(0, 4))]
        table = versions.requirement_table(reqs)
        ver = tuple(rng.randint(0, 3) for _ in range(rng.randint(1, 4)))
        expected = any(versions.admits(op, req, ver) for op, req in reqs)
        assert versions.admitted(ver, table) == expected, (reqs, ver)


@pytest.mark.parametrize(("norm", "summary"), [
    ("foo_bar", "use foo_bar now"), ("foo_bar", "use foo_bar_baz"), ("foo", "a.foo.b"),
    ("--force", "run with --force."), ("--force", "run with --forced"),
    ("a.b", "see a.b!"), ("a.b", "see xa.b"), ("ü1", "wert ü1 ok"), ("ü1", "wertü1"),
    ("x", "x"), ("--", "a -- b"), ("é-x", "café-x"), ("二1", "值二1"), ("二1", "值 二1")])
def test_raw_match_needs_whole_words_as_before(norm: str, summary: str) -> None:
    assert scheck._raw_in(norm, sindex._index(summary)) == _old_raw_in(norm, summary.lower())


def _one(text: str, kind: Kind) -> Discriminator:
    hits = [d for d in extract(text) if d.kind is kind]
    assert len(hits) == 1, hits
    return hits[0]


def test_hand_computed_prefixes_paths_and_pins() -> None:
    h = _one("reverted commit abc1234de today", Kind.IDENTIFIER)
    assert sv.survives(h, "commit abc1234 is out")  # a 7-digit prefix of the hash
    assert sv.survives(h, "commit abc1234de0ff is out")  # the hash is a prefix
    assert not sv.survives(h, "commit abc1235 is out")
    assert not sv.survives(h, "commit abc123d is out")
    p = _one("edited src/app/f.py today", Kind.IDENTIFIER)
    assert sv.survives(p, "see /work/src/app/f.py")  # a longer path ending in it
    assert sv.survives(p, "see f.py")  # its file name
    assert not sv.survives(p, "see src/app/g.py")
    pin = _one("pinned 1.4.2 for now", Kind.VERSION)
    assert sv.survives(pin, "needs >=1.4")
    assert sv.survives(pin, "needs ~>1.2")  # 1.x from 1.2 on
    assert not sv.survives(pin, "needs ~>1.4.3")
    assert not sv.survives(pin, "needs <1.4 and ^2.0")
    assert sv.survives(pin, "needs <1.4 or ^1.0")


def test_clause_with_no_content_word_is_kept_by_any_clause_of_its_family() -> None:
    idx = sindex._index("Never touch the db01 config.")  # one "not" clause
    bare = Discriminator(Kind.NEGATION, "not >", "not >", 0, 5)  # no word to share
    assert scheck._clause_survives(bare, idx) and _old_clause_survives(bare, idx)
    assert not scheck._clause_survives(bare, sindex._index("Touch the db01 config."))
    assert not _old_clause_survives(bare, sindex._index("Touch the db01 config."))


# --------------------------------------------------------------------- the work
_SHAPES: dict[str, tuple[Callable[[int], str], Callable[[int], str]]] = {
    "neg": (lambda i: f"do not move stone{i} river{i}.",
            lambda i: f"do not move cloud{i} hill{i}."),
    "must": (lambda i: f"we must fold sheet{i} paper{i}.",
             lambda i: f"we must fold towel{i} shirt{i}."),
    "because": (lambda i: f"it broke because lamp{i} burned.",
                lambda i: f"it broke because wire{i} snapped."),
    "before": (lambda i: f"paint wall{i} before door{i}.",
               lambda i: f"paint roof{i} before gate{i}."),
    "hash": (lambda i: f"merged {i:07x}c{i % 10} here.",
             lambda i: f"merged c{i:07x}d{i % 10} here."),
    "path": (lambda i: f"opened docs/p{i}/n{i}.md there.",
             lambda i: f"opened web/q{i}/m{i}.md there."),
    "version": (lambda i: f"locked 3.{i}.7 then.", lambda i: f"wants >=4.{i}.2 then."),
    "flip": (lambda i: f"do not run job{i} task{i}.", lambda i: f"Run job{i} task{i} now."),
    # every summary sentence shares one common word with each lost clause, none two
    "shared": (lambda i: f"do not move stone river{i}.",
               lambda i: f"do not move cloud{i}. do not lift stone hill{i}."),
}


@contextmanager
def _lines_run(counter: list[int]) -> Iterator[None]:
    """Count the lines run in the survival package (its genexprs too): work, not time."""
    target = os.path.dirname(sv.__file__) + os.sep

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        if not frame.f_code.co_filename.startswith(target):
            return None
        if event == "line":
            counter[0] += 1
        return trace

    old = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(old)


def _work(shape: str, n: int) -> int:
    lost, other = _SHAPES[shape]
    child = " ".join(lost(i) for i in range(n))
    summary = " ".join(other(i) for i in range(n))
    found = extract(child)
    sv.survives(found[0], summary)  # the summary's index, built once (linear), not counted
    counter = [0]
    with _lines_run(counter):
        kept = [sv.survives(d, summary) for d in found]
        quoted = [sv.flip_sentence(d, summary) for d in found]
    # nothing of the child is in the summary (but the names of the reversed rules)
    assert not any(k for k, d in zip(kept, found, strict=True)
                   if shape != "flip" or d.kind in CLAUSE_KINDS)
    assert len(found) >= n
    if shape == "flip":  # each rule reversed by its own sentence, found once per rule
        assert [q for q in quoted if q] == [other(i) for i in range(n)]
    else:
        assert not any(quoted)
    return counter[0]


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_survival_work_grows_with_the_lost_items_not_their_square(shape: str) -> None:
    small, large = _work(shape, 150), _work(shape, 300)
    assert large < 2.4 * small, (small, large)  # a full scan per item was about 4x


def test_a_path_s_ends_are_its_last_parts_after_each_slash() -> None:
    assert sindex.path_ends("a/b/c") == ["c", "b/c"]
    assert sindex.path_ends("/etc/x.conf") == ["x.conf", "etc/x.conf"]
    assert sindex.path_ends("x.conf") == []
    deep = "/a" * 100 + "/x.py"  # 101 parts after a "/"
    ends = sindex.path_ends(deep)
    assert len(ends) == sindex.PATH_END_PARTS == 64
    assert ends[0] == "x.py" and ends[-1] == "a/" * 63 + "x.py"


def test_a_summary_s_deep_path_is_indexed_by_its_last_parts_only() -> None:
    # adv82: a 160 KB summary of one path "/a/a/..." kept the part after each of its
    # 80,000 "/" as a string: 6.2 GB.  Now its last 64; a fact's path ending it, or
    # ending in it, is found as before
    summary = "see /" + "a/" * 5000 + "srv/app/x.conf"
    idx = sindex._index(summary)
    assert len(idx.lookup.path_ends) == sindex.PATH_END_PARTS
    assert sv.survives(_one("edited app/x.conf today", Kind.IDENTIFIER), summary)
    assert sv.survives(_one("edited /a/a/srv/app/x.conf today", Kind.IDENTIFIER), summary)
    assert not sv.survives(_one("edited app/y.conf today", Kind.IDENTIFIER), summary)
    # a fact's path that ends in the summary's whole (short) path, however deep
    fact = _one("see /" + "b/" * 5000 + "srv/app/x.conf now", Kind.IDENTIFIER)
    assert sv.survives(fact, "kept srv/app/x.conf")
    assert not sv.survives(fact, "kept srv/app/y.conf")
