"""Summary faithfulness (issue 12): what a summary flips, adds or repeats, and a later
action that does what a lost rule forbade.

* :func:`flips`: fold children whose rule the fold states reversed (a double negation,
  a "not" dropped or added on the same verb and object, an antonym, the opposite
  bound), read from the fold checks' dropped lists
  (:func:`compaction_audit.recall.survival.flip_sentence`);
* :func:`unsupported`: a summary's discriminators that no raw leaf supports, with the
  chain of earlier summaries that carried them;
* :func:`stale`: a summary that repeats most of its predecessor's sentences while
  newer raw work reaches it not at all (and its "Next" proposes work shown done);
* :func:`violations` (:mod:`compaction_audit.recall.violations`) lives apart.

The text tests are Python over a few texts per summary (each text read once, cached);
the joins are Polars.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.clauses import NEGATION_WORDS, content_words
from compaction_audit.recall.spantypes import clean_text
from compaction_audit.recall.survival import flip_sentence, stem, survives

__all__ = ["REPEAT_SHARE", "SUPPORT_MAX_WORDS", "claims", "flips", "stale", "supports",
           "unsupported"]

_FLIP_KINDS = ("negation", "constraint", "condition", "requirement")


def flips(folds: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """One row per (fold, child, clause) the fold states reversed.

    ``folds``: the fold checks (:data:`compaction_audit.recall.analysis.FOLD_SCHEMA`).
    ``items``: the session items.  Returns ``ri``, ``fold``, ``child``, ``kind``,
    ``text``, ``sentence`` (the fold's sentence that reverses it).
    """
    schema = {"ri": pl.Int64, "fold": pl.String, "child": pl.String, "kind": pl.String,
              "text": pl.String, "sentence": pl.String}
    cand = (folds.filter((pl.col("dropped").list.len() > 0)
                         & (pl.col("child_type") != "harness"))
            .explode("dropped").unnest("dropped")
            .filter(pl.col("kind").is_in(_FLIP_KINDS))
            .join(items.select(pl.col("id").alias("fold"), pl.col("text").alias("ft")),
                  on="fold"))
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    for ri, fold, child, kind, text, norm, fold_text in cand.select(
            "ri", "fold", "child", "kind", "text", "norm", "ft").iter_rows():
        d = ext.Discriminator(ext.Kind(kind), text, norm, 0, len(text))
        sentence = flip_sentence(d, fold_text) if fold_text else None
        if sentence is not None:
            for name, value in zip(schema, (ri, fold, child, kind, text, sentence),
                                   strict=True):
                rows[name].append(value)
    return pl.DataFrame(rows, schema=schema)


# ---------------------------------------------------------------- unsupported claims
_WORD_RE = re.compile(r"[a-z0-9_]+")
_RULE_KINDS = frozenset({"negation", "constraint", "requirement", "condition"})
_VALUE_KINDS = frozenset({"identifier", "quantity", "version"})
SUPPORT_MAX_WORDS = 20_000_000
"""Most words (summed over the summaries' leaf vocabularies) the support check builds in
one session; past it the remaining summaries are not checked and the rule says so."""
_META_RE = re.compile(r"(?i)\b(?:conversation|this session|summary|summari[sz]e|compaction"
                      r"|context window|transcript)\b")
_ABSENCE_RE = re.compile(r"(?i)^\W*(?:no|none|nothing)\b")
_POINTER_RE = re.compile(r"(?i)[^\n.]*(?:read the full transcript at|if you need specific "
                         r"details from before)[^\n]*")


@lru_cache(maxsize=8192)
def _bag(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words, their stems) of ``text`` lowercased, thousands separators removed; the
    digits of a number glued to a unit ("96k", "45000ms") are a word too."""
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower())
    words = frozenset(_WORD_RE.findall(plain)) | frozenset(re.findall(r"\d+", plain))
    return words, frozenset(stem(w) for w in words)


def supports(d: ext.Discriminator, words: frozenset[str], stems: frozenset[str]) -> bool:
    """Whether a vocabulary (the words of a summary's raw leaves, or of an earlier
    summary, and their stems) supports claim ``d``: leniently, so that a summary in
    other words stays quiet.

    A clause is supported when at least half of its content stems occur; a token
    (number, identifier, version, scope, link) when every word part of its normalized
    form does ("45,000" and "45000 ms" both hold "45000").
    """
    if d.kind in ext.CLAUSE_KINDS:
        _, *parts = d.norm.split()
        content = {w for w in parts if w != ">" and w not in NEGATION_WORDS}
        held = sum(1 for w in content if stem(w) in stems
                   or ((pieces := _WORD_RE.findall(w)) and all(p in words for p in pieces)))
        return not content or 2 * held >= len(content)
    norm = d.norm.split(" ", 1)[0] if d.kind is ext.Kind.QUANTITY else d.norm
    found = _WORD_RE.findall(norm)
    return not found or all(p in words for p in found)


@lru_cache(maxsize=4096)
def claims(text: str) -> tuple[ext.Discriminator, ...]:
    """The discriminators of a summary that are claims about the work: not in a
    sentence about the conversation or the summary itself ("No files were read in this
    conversation"), not the product's pointer to the transcript, not a bare statement of
    absence ("None.", "No errors encountered"), not a plain word in capitals
    ("JavaScript": an identifier needs a code character, a digit or backticks)."""
    body = _POINTER_RE.sub(" ", clean_text(text))
    out = []
    for d in ext.extract(body):
        sentence_start = max(body.rfind(c, 0, d.start) for c in ".!?\n") + 1
        sentence_end = min((i for i in (body.find(c, d.end) for c in ".!?\n") if i >= 0),
                           default=len(body))
        if _META_RE.search(body, sentence_start, sentence_end):
            continue
        if d.kind is ext.Kind.NEGATION and _ABSENCE_RE.match(d.text):
            continue
        if (d.kind is ext.Kind.IDENTIFIER and d.text.isalpha()
                and body[d.start - 1:d.start] != "`"):
            continue
        out.append(d)
    return tuple(out)


def _severity_class(kind: str) -> str:
    """"rule" (negation, constraint, requirement, condition), "value" (identifier,
    number, version) or "claim"."""
    return "rule" if kind in _RULE_KINDS else "value" if kind in _VALUE_KINDS else "claim"


class _Vocab:
    """The raw-leaf vocabulary below each node of the provenance DAG (memoized)."""

    def __init__(self, info: dict[str, tuple[Any, ...]], children: dict[str, list[str]]):
        self.info, self.children = info, children
        self.memo: dict[str, tuple[frozenset[str], frozenset[str]] | None] = {}
        self.left = SUPPORT_MAX_WORDS

    def of(self, node: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """(words, stems) of the raw leaves under ``node``; None when a leaf has no
        text or the budget is spent.  Iterative (a chain of thousands of folds is valid
        input): children are resolved before their parent."""
        stack = [node]
        while stack:
            top = stack[-1]
            if top in self.memo:
                stack.pop()
                continue
            kind, text = self.info[top][0], self.info[top][1]
            if kind == "span":
                self.memo[top] = None if text is None else _bag(text)
                stack.pop()
                continue
            pending = [c for c in self.children.get(top, ()) if c not in self.memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.memo[top] = self._union(top)
        return self.memo[node]

    def _union(self, node: str) -> tuple[frozenset[str], frozenset[str]] | None:
        words: set[str] = set()
        stems: set[str] = set()
        for child in self.children.get(node, ()):
            below = self.memo[child]
            if below is None:
                return None
            words.update(below[0])
            stems.update(below[1])
        self.left -= len(words)
        return (frozenset(words), frozenset(stems)) if self.left >= 0 else None


def unsupported(session: Session, items: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Claims of each summary (:func:`claims`) that no raw leaf supports (issue 12,
    point 2).

    Support is checked against the vocabulary of all raw leaves below the summary
    (:func:`supports`), so a claim drawn from several spans is supported; a claim that
    an earlier summary below it states (itself without raw support) is "carried":
    ``chain`` lists those summaries, oldest first, then this one.  Summaries with a leaf
    that has no text are not checked.  Returns (rows, unchecked summaries); rows:
    ``ri``, ``summary``, ``kind`` (a discriminator kind, or "claim" for a sentence
    without one that the leaves barely hold, :data:`CLAIM_MAX_COVER`), ``text``,
    ``norm``, ``claim`` ("rule", "value", "claim"),
    ``origin`` (the oldest summary of the chain, null when none), ``chain``.
    """
    schema: dict[str, Any] = {"ri": pl.Int64, "summary": pl.String, "kind": pl.String,
                              "text": pl.String, "norm": pl.String, "claim": pl.String,
                              "origin": pl.String, "chain": pl.List(pl.String)}
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    info = {i: (k, t, ri, ln) for i, k, t, ri, ln in
            items.select("id", "kind", "text", "ri", "line").iter_rows()}
    children: dict[str, list[str]] = {}
    for parent, child in session.edges.select("parent", "child").iter_rows():
        if child in info:
            children.setdefault(parent, []).append(child)
    order = sorted((s for s in children if s in info and info[s][1]),
                   key=lambda s: (info[s][2], info[s][3]))
    vocab = _Vocab(info, children)
    unchecked = 0
    for summary in order:
        below = vocab.of(summary)
        if below is None:
            unchecked += 1
            continue
        found = [d for d in claims(info[summary][1]) if not supports(d, *below)]
        rows_of = [(d.kind.value, d.text, d.norm, _severity_class(d.kind.value),
                    _carriers(summary, partial(_states_token, d), children, info))
                   for d in found]
        rows_of += [("claim", sentence, "claim " + " ".join(sorted(content)), "claim",
                     _carriers(summary, partial(_states_sentence, content), children, info))
                    for sentence, content in _bare_claims(info[summary][1], found, *below)]
        for kind, text, norm, claim, chain in rows_of:
            for name, value in zip(schema, (info[summary][2], summary, kind, text, norm,
                                            claim, chain[0] if chain else None,
                                            [*chain, summary]), strict=True):
                rows[name].append(value)
    return pl.DataFrame(rows, schema=schema), unchecked


CLAIM_MIN_WORDS = 5
"""A sentence without a discriminator is judged as a claim only with at least this many
distinct content stems (shorter ones are headings and connective phrases)."""
CLAIM_MAX_COVER = 0.2
"""A sentence is unsupported when less than this share of its content words occurs
among the raw leaves ("A tool result carried an injected instruction" over leaves that
never speak of one; issue 12, point 2).  Measured on the corpus: the faithful
summaries' sentences of five or more words cover 0.25 and more."""


def _states_token(d: ext.Discriminator, bag: tuple[frozenset[str], frozenset[str]]) -> bool:
    return supports(d, *bag)


def _states_sentence(content: frozenset[str], bag: tuple[frozenset[str], frozenset[str]]) -> bool:
    return _covered(content, *bag) >= 0.5


def _covered(content: frozenset[str], words: frozenset[str], stems: frozenset[str]) -> float:
    """Share of ``content`` words a vocabulary holds (by stem, or every word part)."""
    held = sum(1 for w in content if stem(w) in stems
               or ((pieces := _WORD_RE.findall(w)) and all(p in words for p in pieces)))
    return held / len(content) if content else 1.0


@lru_cache(maxsize=4096)
def _claim_sentences(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The sentences of a summary that may be claims (not about the conversation, five
    or more content stems), each with its content words; cached per text."""
    body = _POINTER_RE.sub(" ", clean_text(text))
    out = []
    for raw in _SPLIT_RE.split(body):
        sentence = raw.strip()
        if not sentence or _META_RE.search(sentence):
            continue
        content = frozenset(w for w in content_words(sentence.lower(), 60)
                            if w not in NEGATION_WORDS)
        if len({stem(w) for w in content}) >= CLAIM_MIN_WORDS:
            out.append((sentence[:300], content))
    return tuple(out)


def _bare_claims(text: str, found: list[ext.Discriminator], words: frozenset[str],
                 stems: frozenset[str]) -> list[tuple[str, frozenset[str]]]:
    """Sentences of a summary (:func:`_claim_sentences`; holding no unsupported
    discriminator already) whose content words the leaves barely hold
    (:data:`CLAIM_MAX_COVER`): ``(sentence, content words)``."""
    return [(sentence, content) for sentence, content in _claim_sentences(text)
            if not any(d.text in sentence for d in found)
            and _covered(content, words, stems) < CLAIM_MAX_COVER]


def _carriers(summary: str, states: Callable[[tuple[frozenset[str], frozenset[str]]], bool],
              children: dict[str, list[str]], info: dict[str, tuple[Any, ...]]) -> list[str]:
    """Summaries below ``summary`` whose text ``states`` the claim (given its words and
    stems), oldest first."""
    found, stack, seen = [], list(children.get(summary, ())), set()
    while stack:
        node = stack.pop()
        if node in seen or info[node][0] != "summary":
            continue
        seen.add(node)
        if info[node][1] and states(_bag(info[node][1])):
            found.append(node)
        stack.extend(children.get(node, ()))
    return sorted(found, key=lambda s: (info[s][2], info[s][3]))


# ------------------------------------------------------------------- stale summary
REPEAT_SHARE = 0.6
"""A summary is a repeat of its predecessor when at least this share of the
predecessor's sentences (three or more content words) reappear in it nearly word for
word (:data:`SAME_SENTENCE`); issue 12, point 3: "re-emits the first summary nearly word
for word"."""
SAME_SENTENCE = 0.8
"""Two sentences are the same when the Jaccard index of their stem sets reaches this."""
MIN_SENTENCES = 3
"""A predecessor with fewer judged sentences is too short to call repeated."""
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
    """(share of ``previous``'s sentences that reappear in ``current``, their count)."""
    before, after = _sentences(previous), _sentences(current)
    if not before:
        return 0.0, 0
    same = sum(1 for a in before
               if any(len(a & b) >= SAME_SENTENCE * len(a | b) for b in after))
    return same / len(before), len(before)


def next_items(text: str) -> list[str]:
    """The items of a summary's "Next" / to-do / pending section: the rest of the
    heading line and each line below it up to a blank line or another heading."""
    items: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _NEXT_RE.match(line)
        if not m:
            continue
        if m.group(1).strip():
            items.append(m.group(1).strip())
        for below in lines[i + 1:]:
            if not below.strip() or re.match(r"[ \t]*(?:#|\d+\.\s+[A-Z][\w ]+:$)", below):
                break
            items.append(below.strip(" \t-*+•"))
    return [t.rstrip(".;")[:200] for t in items if len(content_words(t.lower(), 20)) >= 2]


def _done(item: str, texts: list[tuple[str, str]]) -> str | None:
    """The first span (id) whose text says ``item`` is done: a done word and most of
    the item's stems (at least two)."""
    want = {stem(w) for w in content_words(item.lower(), 20)}
    for span, text in texts:
        if not _DONE_RE.search(text):
            continue
        have = _bag(text)[1]
        if len(want & have) >= max(2, len(want) // 2 + 1):
            return span
    return None


def stale(session: Session, items: pl.DataFrame) -> pl.DataFrame:
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
    # each summary with its latest summary child (its predecessor), by round then line
    pairs = (session.edges.join(texts.select(pl.col("id").alias("child"),
                                             pl.col("ri").alias("p_ri"),
                                             pl.col("line").alias("p_line"),
                                             pl.col("text").alias("p_text")), on="child")
             .sort("p_ri", "p_line").group_by("parent", maintain_order=True).last()
             .join(texts.select(pl.col("id").alias("parent"), pl.col("ri").alias("c_ri"),
                                pl.col("text").alias("c_text")), on="parent")
             .sort("c_ri", "parent")
             .select("child", "p_ri", "p_text", "parent", "c_ri", "c_text").rows())
    if not pairs:
        return pl.DataFrame(rows, schema=schema)
    spans = items.filter((pl.col("kind") == "span") & pl.col("text").is_not_null()
                         & pl.col("stype").is_in(["prose", "spec"]))
    for prev, p_ri, p_text, cur, c_ri, c_text in pairs:
        share, count = repeat_share(p_text, c_text)
        if count < MIN_SENTENCES or share < REPEAT_SHARE:
            continue
        own = session.edges.filter(pl.col("parent") == prev)["child"]
        kept = session.membership.filter((pl.col("start") <= c_ri) & (pl.col("end") > c_ri))
        newer = (spans.filter((pl.col("ri") >= p_ri) & (pl.col("ri") <= c_ri)
                              & ~pl.col("id").is_in(own.implode())
                              & ~pl.col("id").is_in(kept["id"].implode()))
                 .sort("ri", "line").select("id", "text", "stype").rows())
        judged, unreached = 0, []
        for span, text, stype in newer:
            found = ext.extract(text, stype)
            if not found:
                continue
            judged += 1
            if not any(survives(d, c_text) for d in found):
                unreached.append(span)
        done = [{"item": item, "span": span} for item in next_items(c_text)
                if (span := _done(item, [(s, t) for s, t, _ in newer])) is not None]
        if (unreached and 2 * len(unreached) >= judged) or done:
            for name, value in zip(schema, (c_ri, cur, prev, round(share, 3), judged,
                                            unreached, done), strict=True):
                rows[name].append(value)
    return pl.DataFrame(rows, schema=schema)
