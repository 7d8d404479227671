"""Stale summaries (issue 12, point 3; rule ``stale-summary``): a summary that repeats
most of its predecessor's sentences while newer raw work reaches it not, and whose
"Next" proposes work a newer span shows done.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import polars as pl

from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.claims import bag
from compaction_audit.recall.clauses import content_words
from compaction_audit.recall.survival import stem, survives
from compaction_audit.takeback import taken_back

__all__ = ["MIN_SENTENCES", "REPEAT_SHARE", "SAME_SENTENCE", "STALE_MAX_CHECKS", "next_items",
           "repeat_share", "stale"]

REPEAT_SHARE = 0.6
"""A summary is a repeat of its predecessor when at least this share of the
predecessor's sentences (three or more content words) reappear in it nearly word for
word (:data:`SAME_SENTENCE`); issue 12, point 3: "re-emits the first summary nearly word
for word"."""
SAME_SENTENCE = 0.8
"""Two sentences are the same when the Jaccard index of their stem sets reaches this."""
MIN_SENTENCES = 3
"""A predecessor with fewer judged sentences is too short to call repeated."""
STALE_MAX_CHECKS = 1_000_000
"""Most checks :func:`stale` makes in one session: (repeated summary, span born in its
window) pairs, plus ("Next" item, newer span with a done word) pairs.  Windows of
repeated summaries may overlap (n summaries of one round, each repeated at a later
round, each window holding the spans of every round between: n x n / 2 pairs; issue 11,
class 5).  Summaries are checked in order (round, id); the first whose checks would
pass the cap and every later one are not checked, and a
:class:`~compaction_audit.limits.Limit` says where it stopped."""
_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n")
_NEXT_RE = re.compile(
    r"(?im)^[ \t]*(?:[-*+#]+[ \t]*|\d+[.)][ \t]*)?(?:\*\*|__)?(?:optional[ \t]+)?"
    r"(?:next(?:[ \t]+steps?)?|to-?dos?|pending(?:[ \t]+tasks?)?|remaining(?:[ \t]+work)?)"
    r"(?:\*\*|__)?[ \t]*:?(?:\*\*|__)?[ \t]*(.*)$")
_DONE_RE = re.compile(r"(?i)\b(?:done|completed?|finished|fixed|implemented|merged|shipped"
                      r"|passe[sd]|resolved|landed|works now)\b")


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[frozenset[str], ...]:
    """The stem sets of ``text``'s sentences of three or more content words (cached)."""
    out = []
    for s in _SPLIT_RE.split(text.lower()):
        stems = frozenset(stem(w) for w in content_words(s, 60))
        if len(stems) >= 3:
            out.append(stems)
    return tuple(out)


def repeat_share(previous: str, current: str) -> tuple[float, int]:
    """(share of ``previous``'s sentences that reappear in ``current``, their count).

    A sentence reappears when one of ``current``'s has a stem-set Jaccard index of at
    least :data:`SAME_SENTENCE` with it.  Only sentences that share a stem among the
    first few of each (by rarity in ``current``; :func:`_prefix`) are compared: every
    pair at that index shares one, so the result is that of comparing every pair (which
    was previous x current set operations: issue 11, class 5, eighth adversarial pass
    F3)."""
    before, after = _sentences(previous), _sentences(current)
    if not before:
        return 0.0, 0
    targets = list(dict.fromkeys(after))  # the same set twice answers the same
    freq: dict[str, int] = {}
    for b in targets:
        for s in b:
            freq[s] = freq.get(s, 0) + 1

    def order(s: str) -> tuple[int, str]:
        return freq.get(s, 0), s

    index: dict[str, list[frozenset[str]]] = {}
    for b in targets:
        for s in sorted(b, key=order)[:_prefix(len(b))]:
            index.setdefault(s, []).append(b)
    memo: dict[frozenset[str], bool] = {}
    same = 0
    for a in before:
        if a not in memo:
            memo[a] = _reappears(a, index, order, targets)
        same += memo[a]
    return same / len(before), len(before)


def _prefix(size: int) -> int:
    """How many of a stem set's stems (rarest first) any set at a Jaccard index of
    :data:`SAME_SENTENCE` or more with it must share one of (prefix filtering): such a
    pair shares ``o >= SAME_SENTENCE * size`` stems (the float product the test
    computes), so the first in the order of their shared stems is among the first
    ``size - o + 1`` of each."""
    return size - math.ceil(SAME_SENTENCE * size) + 1


def _reappears(a: frozenset[str], index: dict[str, list[frozenset[str]]],
               order: Callable[[str], tuple[int, str]], targets: list[frozenset[str]]) -> bool:
    """Whether a set of ``targets`` (indexed by their prefixes in ``index``) has a
    Jaccard index of :data:`SAME_SENTENCE` or more with ``a``; an empty ``a`` only
    with an empty set."""
    if not a:
        return frozenset() in targets
    seen: set[frozenset[str]] = set()
    for s in sorted(a, key=order)[:_prefix(len(a))]:
        for b in index.get(s, ()):
            if b not in seen:
                seen.add(b)
                if len(a & b) >= SAME_SENTENCE * len(a | b):
                    return True
    return False


def next_items(text: str) -> list[str]:
    """The items of a summary's "Next" / to-do / pending sections: the rest of each
    heading line and each line below it up to a blank line, another heading, or the
    next "Next" line, which starts a section of its own.  Each line is an item once:
    n "Next:" lines in a row were n(n+1)/2 items, each line again under every earlier
    one (issue 11, class 5, eighth adversarial pass F2)."""
    items: list[str] = []
    within = False
    for line in text.splitlines():
        m = _NEXT_RE.match(line)
        if m:
            within = True
            if m.group(1).strip():
                items.append(m.group(1).strip())
        elif within and (not line.strip()
                         or re.match(r"[ \t]*(?:#|\d+\.\s+[A-Z][\w ]+:$)", line)):
            within = False
        elif within:
            items.append(line.strip(" \t-*+•"))
    return [t.rstrip(".;")[:200] for t in items if len(content_words(t.lower(), 20)) >= 2]


@lru_cache(maxsize=4096)
def _done_stems(text: str) -> frozenset[str] | None:
    """The stems of a span's text when it has a done word, else None (cached: each
    span is read once, however many items are checked against it)."""
    return bag(text)[1] if _DONE_RE.search(text) else None


def _done(item: str, texts: list[tuple[str, str]]) -> str | None:
    """The first span (id) whose text says ``item`` is done: a done word and most of
    the item's stems (at least two)."""
    want = {stem(w) for w in content_words(item.lower(), 20)}
    need = max(2, len(want) // 2 + 1)
    if len(want) < need:  # fewer than two stems: no span can hold enough
        return None
    for span, text in texts:
        have = _done_stems(text)
        if have is not None and len(want & have) >= need:
            return span
    return None


def _newer(session: Session, items: pl.DataFrame, pairs: pl.DataFrame
           ) -> list[list[tuple[str, str, str]]]:
    """For each row of ``pairs`` (``pair`` 0..n-1, ``child`` the predecessor, ``p_ri``,
    ``c_ri``), the newer raw work: ``(id, text, stype)`` of the prose and spec spans born
    in ``[p_ri, c_ri]``, not children of the predecessor, out of the working set at
    ``c_ri`` and not taken back by the person (:func:`~compaction_audit.takeback.taken_back`:
    a rewound turn is no work a summary should reach, usertest69); ordered by ``ri``,
    ``line``, then position in the items.  Three joins for all pairs (was three queries
    per pair, issue 11, class 5)."""
    spans = (items.with_row_index("pos")
             .filter((pl.col("kind") == "span") & pl.col("text").is_not_null()
                     & pl.col("stype").is_in(["prose", "spec"]))
             .select("id", "ri", "line", "pos", "text", "stype"))
    window = pairs.select("pair", "child", "p_ri", "c_ri").join_where(
        spans, pl.col("ri") >= pl.col("p_ri"), pl.col("ri") <= pl.col("c_ri"))
    own = session.edges.select(pl.col("parent").alias("child"), pl.col("child").alias("id"))
    kept = (window.select("pair", "id", "c_ri").join(
        session.membership.select("id", "start", "end"), on="id")
        .filter((pl.col("start") <= pl.col("c_ri")) & (pl.col("end") > pl.col("c_ri")))
        .select("pair", "id").unique())
    back = taken_back(session).to_frame()
    found = (window.join(own, on=["child", "id"], how="anti")
             .join(kept, on=["pair", "id"], how="anti")
             .join(back, on="id", how="anti")
             .sort("pair", "ri", "line", "pos"))
    groups: list[list[tuple[str, str, str]]] = [[] for _ in range(pairs.height)]
    for pair, span, text, stype in found.select("pair", "id", "text", "stype").iter_rows():
        groups[pair].append((span, text, stype))
    return groups


def stale(session: Session, items: pl.DataFrame,
          limits: list[Limit] | None = None) -> pl.DataFrame:
    """Summaries that repeat their predecessor while newer raw work reaches them not
    (issue 12, point 3).

    Predecessor: the latest summary (by round, then line) among this summary's children
    (a second compaction folds the first summary with the newer spans).  Newer
    raw work: prose or spec spans (a person's or the assistant's words, not harness,
    not tool output) born at or after the predecessor's round and at or before this
    summary's, not among the predecessor's leaves, holding a discriminator, and out of
    the working set after this summary's round; one is *unreached* when this summary
    states none of its discriminators.  Fires when the repeated share reaches
    :data:`REPEAT_SHARE` and unreached spans are at least one and at least half the
    newer ones, or when a "Next" item is shown done by a newer span.  Returns ``ri``,
    ``summary``, ``previous``, ``repeated`` (share), ``newer``, ``unreached`` (ids),
    ``done_next`` (list of {item, span}).
    """
    schema: dict[str, Any] = {
        "ri": pl.Int64, "summary": pl.String, "previous": pl.String,
        "repeated": pl.Float64, "newer": pl.Int64, "unreached": pl.List(pl.String),
        "done_next": pl.List(pl.Struct({"item": pl.String, "span": pl.String}))}
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    texts = items.filter((pl.col("kind") == "summary") & pl.col("text").is_not_null())
    if not texts.height:  # no summary text: no predecessor to repeat
        return pl.DataFrame(rows, schema=schema)
    # each summary with its latest summary child (its predecessor), by round, line,
    # then order in the summary's children (two summaries of one record share a line)
    pairs = (session.edges.with_row_index("e_pos")
             .join(texts.select(pl.col("id").alias("child"), pl.col("ri").alias("p_ri"),
                                pl.col("line").alias("p_line"),
                                pl.col("text").alias("p_text")), on="child")
             .sort("p_ri", "p_line", "e_pos").group_by("parent", maintain_order=True).last()
             .join(texts.select(pl.col("id").alias("parent"), pl.col("ri").alias("c_ri"),
                                pl.col("round").alias("c_round"),
                                pl.col("line").alias("c_line"),
                                pl.col("text").alias("c_text")), on="parent")
             .sort("c_ri", "parent")
             .select("child", "p_ri", "p_text", "parent", "c_ri", "c_round", "c_line",
                     "c_text"))
    shares = [repeat_share(p, c) for p, c in pairs.select("p_text", "c_text").iter_rows()]
    repeated = pairs.with_columns(pl.Series("share", [sh for sh, _ in shares],
                                            dtype=pl.Float64)).filter(pl.Series(
        [count >= MIN_SENTENCES and sh >= REPEAT_SHARE for sh, count in shares],
        dtype=pl.Boolean)).with_row_index("pair")
    if repeated.height == 0:
        return pl.DataFrame(rows, schema=schema)
    taken = _within_cap(items, repeated)
    newer = _newer(session, items, repeated.head(taken))
    found_in: dict[str, tuple[ext.Discriminator, ...]] = {}  # each span extracted once
    left = STALE_MAX_CHECKS
    for pos, ((prev, cur, c_ri, c_text, share), group) in enumerate(zip(
            repeated.select("child", "parent", "c_ri", "c_text", "share").iter_rows(),
            newer, strict=False)):
        left -= len(group)
        judged, unreached = 0, []
        for span_id, text, stype in group:
            if span_id not in found_in:
                found_in[span_id] = ext.extract_cached(text, stype)
            found = found_in[span_id]
            if not found:
                continue
            judged += 1
            for d in found:
                left -= 1
                if survives(d, c_text):
                    break
            else:
                unreached.append(span_id)
            if left < 0:
                break
        # the spans with a done word: the only ones an item is checked against
        done_spans = [(sid, t) for sid, t, _ in group if _done_stems(t) is not None]
        done = []
        for item in next_items(c_text) if left >= 0 else ():
            left -= len(done_spans)
            if left < 0:
                break
            if (span := _done(item, done_spans)) is not None:
                done.append({"item": item, "span": span})
        if left < 0:  # this summary's checks passed the cap: it is not judged
            taken = pos
            break
        if (unreached and 2 * len(unreached) >= judged) or done:
            for name, value in zip(schema, (c_ri, cur, prev, round(share, 3), judged,
                                            unreached, done), strict=True):
                rows[name].append(value)
    if taken < repeated.height and limits is not None:
        at = repeated.row(taken, named=True)
        limits.append(Limit("stale-summary", STALE_MAX_CHECKS,
                            "(repeated summary, newer span) checks",
                            f"summary {at['parent']!r}", at["c_round"], at["c_line"],
                            repeated.height - taken, "repeated summaries"))
    return pl.DataFrame(rows, schema=schema)


def _within_cap(items: pl.DataFrame, repeated: pl.DataFrame) -> int:
    """How many of ``repeated``'s pairs (in order) have windows of at most
    :data:`STALE_MAX_CHECKS` spans in all (each window row is one check): the window of
    a pair is the prose and spec spans born in ``[p_ri, c_ri]``, counted by a binary
    search in their sorted rounds, before any join builds the rows."""
    born = (items.filter((pl.col("kind") == "span") & pl.col("text").is_not_null()
                         & pl.col("stype").is_in(["prose", "spec"]))
            .get_column("ri").sort())
    rows = (born.search_sorted(repeated.get_column("c_ri"), side="right")
            - born.search_sorted(repeated.get_column("p_ri"), side="left"))
    return int((rows.cum_sum() <= STALE_MAX_CHECKS).sum())
