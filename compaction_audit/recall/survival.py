"""Survival: whether a discriminator found in a child span is still stated by a summary.

The comparison rules (normalized tokens, clause families, path file names, hash
prefixes) are documented in ``docs/discriminators.md``; extraction is
:mod:`compaction_audit.recall.extract`.  Pure standard library, so the analysis can run
it in a helper process without importing Polars.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from compaction_audit.recall import paraphrase
from compaction_audit.recall.clauses import NEGATION_WORDS, content_words
from compaction_audit.recall.extract import (
    CLAUSE_KINDS,
    SCOPE_CANON,
    Discriminator,
    Kind,
    extract_cached,
)
from compaction_audit.recall.versions import (
    REQUIREMENT_RE,
    RequirementTable,
    admitted,
    measure,
    requirement_table,
    vtuple,
)

__all__ = ["anchors", "dropped", "flip_sentence", "flipped", "negative", "stem", "survives",
           "vocabulary"]

_SCOPE_WORDS = frozenset({"prod", "staging", "dev", "qa", "uat", "preprod", "test-env"})
_HEX_RE = re.compile(r"[0-9a-f]{7,64}")


def _basename(path: str) -> str:
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1]


class _Postings:
    """Word sets with an inverted index (word -> positions of the sets that hold it), so
    a lookup tests only the sets that share a word with the query instead of all of
    them (issue 11, item 5, adv8 F4: survival was O(lost items x summary items)).
    Duplicate sets are kept once, with the least tag given (the first sentence that
    states one): every test on them is an ``any`` or a least tag."""

    __slots__ = ("post", "sets", "tags")

    def __init__(self, sets: Iterable[frozenset[str]],
                 tags: Iterable[int] | None = None) -> None:
        first: dict[frozenset[str], int] = {}
        for words, tag in zip(sets, itertools.repeat(0) if tags is None else tags,
                              strict=False):
            first.setdefault(words, tag)
        self.sets: list[frozenset[str]] = list(first)
        self.tags: list[int] = list(first.values())
        self.post: dict[str, list[int]] = {}
        for i, words in enumerate(self.sets):
            for w in words:
                self.post.setdefault(w, []).append(i)

    def _ids(self, words: Iterable[str], some: int) -> Iterator[int]:
        post = self.post
        rarest = sorted((len(post.get(w, ())), w) for w in set(words))[:some]
        if len(rarest) == 1:
            yield from post.get(rarest[0][1], ())
            return
        seen: set[int] = set()
        for _, w in rarest:
            for i in post.get(w, ()):
                if i not in seen:
                    seen.add(i)
                    yield i

    def holding(self, words: Iterable[str], some: int) -> Iterator[frozenset[str]]:
        """The sets that hold at least one of the ``some`` rarest of ``words`` (each
        once): every set that holds ``len(words) - some + 1`` of them is among these
        (pigeonhole), the prefix filter of set-similarity joins.  ``some`` >= 1."""
        return (self.sets[i] for i in self._ids(words, some))

    def tagged(self, words: Iterable[str], some: int) -> Iterator[tuple[int, frozenset[str]]]:
        """:meth:`holding`, each set with its tag."""
        return ((self.tags[i], self.sets[i]) for i in self._ids(words, some))


@dataclass(frozen=True, slots=True)
class _Lookup:
    """The inverted indexes :func:`survives` looks candidates up in (built once per
    summary with :class:`_Index`); each answers exactly what a scan of the lists of
    :class:`_Index` answers."""

    sentences: dict[bool, _Postings]  # negative -> sentence stems
    rules: dict[bool, _Postings]  # negative -> rule-part stems
    clause_words: dict[tuple[Kind, str], _Postings]  # (kind, family) -> clause words
    clause_stems: dict[tuple[Kind, str], _Postings]  # the same clauses' stems
    words: frozenset[str]  # every word (\w+ run) of the lowercased summary
    hashes: tuple[str, ...]  # the keys that are hex strings, sorted
    hash_set: frozenset[str]
    path_tails: dict[str, list[str]]  # last "/" part of a path -> paths
    requirements: RequirementTable
    vocabulary: frozenset[str]
    """Every string a token discriminator can be matched on here (:func:`_vocabulary`):
    one that shares none of its :func:`_anchors` with it does not survive."""
    memo: dict[tuple[object, ...], bool] = field(default_factory=dict)
    """Answers by what decides them (the query's words that occur in the summary at
    all): lost items that differ only in words the summary lacks get one look-up."""
    starts: dict[str, list[int]] = field(default_factory=dict)
    """Where each word (``\\w+`` run) of the lowercased summary starts, built on first
    need by :func:`_raw_in`."""

    def remember(self, key: tuple[object, ...], answer: Callable[[], bool]) -> bool:
        """The memo's answer for ``key``, computed by ``answer`` the first time."""
        return _remember(self.memo, key, answer)


def _remember(memo: dict[tuple[object, ...], bool], key: tuple[object, ...],
              answer: Callable[[], bool]) -> bool:
    """``memo[key]``, computed by ``answer`` the first time (at most :data:`_MEMO_MAX`
    answers, then it starts again)."""
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        hit = memo[key] = answer()
    return hit


_MEMO_MAX = 65536
"""Most answers one summary's memo holds (then it starts again): bounded memory."""


@dataclass(frozen=True, slots=True)
class _Index:
    """What a summary offers for comparison (built once per summary text, cached)."""

    keys: frozenset[str]  # token norms, plain words, bare numbers, path file names
    paths: tuple[str, ...]
    quantities: frozenset[tuple[str, str]]  # (number, canonical unit or "")
    scopes: frozenset[str]  # scope norms and every scope term inside words
    clauses: dict[tuple[Kind, str], list[frozenset[str]]]  # (kind, family) -> words
    sentences: tuple[tuple[frozenset[str], bool], ...]  # (stems, negative) per sentence
    rules: tuple[tuple[frozenset[str], bool], ...]  # sentence parts that state a rule
    modules: frozenset[str]  # module and file names as snake_case stems
    measures: frozenset[tuple[str, float]]  # (dimension, value in the base unit)
    requirements: tuple[tuple[str, tuple[int, ...]], ...]  # (operator, version)
    low: str
    names: paraphrase.SummaryNames  # check names (validate_session_message_ids)
    lookup: _Lookup


_WORD_RE = re.compile(r"\w+")
_NAME_RE = re.compile(r"\w+(?:[.-]\w+)+")
_SENTENCE_RE = re.compile(r"[.!?;](?=\s)|\n")
_MODULE_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)+\b"
                        r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_FILE_RE = re.compile(r"[\w-]+(?:\.[A-Za-z][\w]{0,7})+\b")
_LONG_RUN_RE = re.compile(r"[\w-]{257,}")
"""A run of word characters too long to be a name: blanked before the name and file
patterns, which would otherwise rescan it from each of its positions (quadratic time
on a summary that is one long word; issue 11, item 5)."""
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")



@lru_cache(maxsize=65536)
def _module_key(name: str) -> str:
    """One form for a module and its file (issue 10, point 3): the last dotted part of
    ``Spotter.Repo.Migrations.AddState`` or the file name of ``20260211_add_state.exs``
    without extension and timestamp, snake_case: ``add_state``."""
    base = re.split(r"[/\\]", name)[-1]
    if "." in base and not base.rsplit(".", 1)[-1][:1].isupper():  # a file: no extension
        base = base.split(".")[0]
    elif "." in base:  # a dotted module: its last part
        base = base.rsplit(".", 1)[-1]
    snake = _CAMEL_RE.sub("_", base).lower().replace("-", "_")
    snake = re.sub(r"^\d{6,}_", "", snake)  # a migration's timestamp
    return snake if "_" in snake or len(snake) >= 6 else ""


_RULE_RE = re.compile(
    r"\b(?:must|should|shall|always|never|only|required|requires?|need(?:s)?\s+to"
    r"|ha(?:ve|s)\s+to|cannot|can't|don't|do\s+not|mustn't|shouldn't|avoid|ensure"
    r"|make\s+sure|no\s+\w+\s+(?:step|needed|required))\b")
"""A sentence that states a rule (a modal, a prohibition, a requirement); a summary
sentence flips a child's rule only when it is one (narrative "ran the migrations" does
not flip "do not run the migrations"; issue 12, point 1)."""
_PART_RE = re.compile(r",|\b(?:but|while|whereas|although)\b")
"""Where a sentence splits into the parts a flip is judged on: "run migrations on
staging only, not on prod" negates prod, not the rule."""
_IMPERATIVE_VERBS = frozenset({
    "run", "use", "add", "release", "deploy", "push", "merge", "commit", "enable",
    "disable", "delete", "remove", "skip", "ask", "write", "build", "keep", "drop",
    "include", "exclude", "allow", "block", "start", "stop", "call", "install", "set"})
"""Verbs that open an imperative sentence (a rule without a modal: "Run the release
right away")."""


@lru_cache(maxsize=4096)
def _index(summary: str) -> _Index:
    low = summary.lower()
    word_set = frozenset(_WORD_RE.findall(low))
    keys, paths = set(word_set), []
    short = _LONG_RUN_RE.sub(" ", low)
    keys.update(_NAME_RE.findall(short))  # hyphenated and dotted names: spotter-gqc, a.ex
    scopes = {SCOPE_CANON.get(w, w) for w in re.findall(r"[a-z]+(?:-(?:prod|env))?", low)}
    offered = _offered(summary)
    for d in extract_cached(summary):
        if d.kind in CLAUSE_KINDS:
            continue
        keys.add(d.norm)
        if d.kind is Kind.QUANTITY:
            keys.add(d.norm.partition(" ")[0])
        elif d.kind is Kind.SCOPE:
            scopes.add(d.norm)
        elif "/" in d.norm or "\\" in d.norm:
            paths.append(d.norm.rstrip("/\\"))
            keys.add(_basename(d.norm))
    split = [(sent, words) for sent in _SENTENCE_RE.split(low)
             if (words := content_words(sent, 400))]
    sentences = tuple(
        (frozenset(_stem(w) for w in words if w not in NEGATION_WORDS), negative(words))
        for _, words in split)
    rules = tuple(
        (frozenset(_stem(w) for w in words if w not in NEGATION_WORDS), negative(words))
        for sent, _ in split for part in _PART_RE.split(sent)
        if (words := content_words(part, 400))
        and (_RULE_RE.search(part) or words[0] in _IMPERATIVE_VERBS))
    modules = {_module_key(m) for m in _MODULE_RE.findall(summary)}
    modules.update(_module_key(f) for f in _FILE_RE.findall(_LONG_RUN_RE.sub(" ", summary)))
    requirements = tuple((op, vtuple(v)) for op, v in REQUIREMENT_RE.findall(low))
    hashes = sorted(k for k in keys if _HEX_RE.fullmatch(k))
    tails: dict[str, list[str]] = {}
    for path in paths:  # a path ending another ends in the same last "/" part
        tails.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    lookup = _Lookup(
        {neg: _Postings(c for c, n in sentences if n == neg) for neg in (False, True)},
        {neg: _Postings(c for c, n in rules if n == neg) for neg in (False, True)},
        offered.clause_words, offered.clause_stems, word_set, tuple(hashes), frozenset(hashes),
        {tail: list(dict.fromkeys(ps)) for tail, ps in tails.items()},
        table := requirement_table(requirements),
        _vocabulary(keys, scopes, modules - {""}, tails, offered.measures, table))
    return _Index(frozenset(keys), tuple(paths), offered.quantities, frozenset(scopes),
                  offered.clauses, sentences, rules, frozenset(modules - {""}),
                  offered.measures,
                  requirements, low, paraphrase.summary_names(summary, _stem), lookup)


_RANGE = "\x00range"
"""In a summary's vocabulary when it states a version requirement other than ``==``
(``>=4.2``, ``~>1.4``): any version may then be admitted, whatever its text."""


def _pinned(n: int, version: tuple[int, ...]) -> str:
    """The vocabulary string of an ``==`` requirement on ``n`` version parts."""
    return f"\x00== {n} {version!r}"


def _measure_token(base: tuple[str, float]) -> str:
    """A quantity's (dimension, value in the base unit) as one vocabulary string."""
    return f"\x00measure {base[0]} {base[1]!r}"


def _vocabulary(keys: set[str], scopes: set[str], modules: set[str], tails: dict[str, list[str]],
                measures: frozenset[tuple[str, float]], table: RequirementTable
                ) -> frozenset[str]:
    """What a summary offers a token discriminator (:func:`_anchors`): its keys (words,
    names, discriminator norms, path file names), scope terms, module keys, the last
    parts of its paths, its quantities in base units, its ``==`` requirements
    (:func:`_pinned`) and :data:`_RANGE` when it states another requirement."""
    out = set(keys)
    out.update(scopes)
    out.update(modules)
    out.update(tails)
    out.update(_measure_token(m) for m in measures)
    for (cls, n), entry in table.items():
        if cls == "==":
            out.update(_pinned(n, v) for v in entry)
        else:
            out.add(_RANGE)
    return frozenset(out)


@lru_cache(maxsize=65536)
def _anchors(kind: Kind, text: str, norm: str) -> frozenset[str] | None:
    """Strings of which a summary's :func:`_vocabulary` holds at least one whenever the
    token discriminator ``(kind, text, norm)`` survives in it, one per way
    :func:`survives` can find it: the norm, the longest word :func:`_raw_in` needs,
    the module key, the path's file name and last part, the quantity's number and value
    in base units, the version padded as each ``==`` requirement length compares it
    (:func:`_pinned`) and :data:`_RANGE`.  None for a clause, a hash (found by a prefix)
    and a token found by a substring search (a phrase, a norm without a word): those are
    always compared.

    A summary that holds none of them is not compared at all (:func:`survives`): on a
    chain of folds each leaf is compared with every summary above it, and most of its
    tokens are in none (issue 11, class 5)."""
    if kind in CLAUSE_KINDS:
        return None
    if kind is Kind.QUANTITY:  # (number, unit) in the quantities: number in the keys
        number, _, unit = norm.partition(" ")
        base = measure(number, unit) if unit else None
        return frozenset((number,) if base is None else (number, _measure_token(base)))
    if kind is Kind.VERSION and norm[:1].isdigit():  # admitted(): versions.admitted
        ver = vtuple(norm)
        return frozenset((norm, _RANGE, *(_pinned(n, (ver + (0,) * n)[:n])
                                           for n in range(5))))
    if kind is Kind.SCOPE:
        return frozenset((norm,))
    words = _WORD_RE.findall(norm)
    if " " in norm or not words or _HEX_RE.fullmatch(norm):
        return None
    out = {norm, max(words, key=len)}  # _raw_in needs every word of the norm
    if kind is Kind.IDENTIFIER and (key := _module_key(text)):
        out.add(key)
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        out.update((_basename(path), path.rsplit("/", 1)[-1]))
    return frozenset(out)


def anchors(d: Discriminator) -> frozenset[str] | None:
    """:func:`_anchors` of ``d``: a summary whose :func:`vocabulary` holds none of them
    does not keep ``d``; None when that cannot be told without comparing."""
    return _anchors(d.kind, d.text, d.norm)


def vocabulary(summary_text: str) -> frozenset[str]:
    """What ``summary_text`` offers a token discriminator (see :func:`anchors`)."""
    return _index(summary_text).lookup.vocabulary

def _clause_key(d: Discriminator) -> tuple[Kind, str, list[str]]:
    """(kind, family, words) of a summary's clause ``d`` as its index files it: a
    double negation ("never X without Y") is the constraint ``must``."""
    family, *words = d.norm.split()
    if family == "not" and _double_negative(d.text):
        return Kind.CONSTRAINT, "must", words
    return d.kind, family, words


@dataclass(frozen=True, slots=True)
class _Offered:
    """What a summary's own discriminators offer, as its :class:`_Index` has it, built
    from them alone (:func:`_offered`)."""

    clauses: dict[tuple[Kind, str], list[frozenset[str]]]  # (kind, family) -> words
    clause_words: dict[tuple[Kind, str], _Postings]  # the same, indexed
    clause_stems: dict[tuple[Kind, str], _Postings]  # their stems, indexed
    quantities: frozenset[tuple[str, str]]  # (number, canonical unit or "")
    measures: frozenset[tuple[str, float]]  # (dimension, value in the base unit)
    memo: dict[tuple[object, ...], bool] = field(default_factory=dict)
    """Answers of :func:`_decided` by what decides them (as :attr:`_Lookup.memo`)."""

    def remember(self, key: tuple[object, ...], answer: Callable[[], bool]) -> bool:
        """The memo's answer for ``key``, computed by ``answer`` the first time."""
        return _remember(self.memo, key, answer)


@lru_cache(maxsize=4096)
def _offered(summary: str) -> _Offered:
    """:class:`_Offered` of ``summary``, from :func:`extract_cached` alone; its
    :class:`_Index` takes these parts over."""
    clauses: dict[tuple[Kind, str], list[frozenset[str]]] = {}
    quantities = set()
    for d in extract_cached(summary):
        if d.kind in CLAUSE_KINDS:
            kind, family, words = _clause_key(d)
            clauses.setdefault((kind, family), []).append(
                frozenset(words) - {">", "not"} if family == "must" else frozenset(words) - {">"})
        elif d.kind is Kind.QUANTITY:
            number, _, unit = d.norm.partition(" ")
            quantities.add((number, unit))
    return _Offered(
        clauses, {key: _Postings(cands) for key, cands in clauses.items()},
        {key: _Postings(frozenset(_stem(w) for w in c) for c in cands)
         for key, cands in clauses.items()},
        frozenset(quantities),
        frozenset(m for number, unit in quantities if (m := measure(number, unit))))


def _decided(d: Discriminator, summary_text: str) -> bool | None:
    """:func:`survives` of ``d`` when the summary's own discriminators decide it
    (:func:`_offered`), None when it needs the summary's :class:`_Index` (issue 14:
    a summary or user text compared only with such items is never indexed; the
    asked-again check built about 2,600 indexes of user texts for two lost items on
    the 254 MB 10,000 x 2,000 text cell of the benchmark grid).

    * A quantity with a unit survives exactly when the summary has the same (number,
      unit) or the same measure: both come from the summary's quantities only.
    * A clause of a kind never paraphrased nor flipped (:data:`_SELF_DECIDED`: causal,
      ordering, ruled-out) whose marker is its fact (:data:`_MARKER_IS_CONTENT`:
      because, sequence, revert, ruled) survives exactly when :func:`_clause_survives`
      says so, which then skips its sentence test and reads only the summary's clauses
      (:func:`_by_clause`).
    """
    if d.kind is Kind.QUANTITY:
        number, _, unit = d.norm.partition(" ")
        if not unit:
            return None
        offered = _offered(summary_text)
        base = measure(number, unit)
        return (number, unit) in offered.quantities or (base is not None
                                                       and base in offered.measures)
    if d.kind in _SELF_DECIDED:
        family, *words = d.norm.split()
        if family in _MARKER_IS_CONTENT:
            offered = _offered(summary_text)
            return _by_clause(d.kind, family, words, offered.clause_words,
                              offered.clause_stems, offered.remember)
    return None


_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ly", "ful", "ness",
             "ment", "es", "s", "e")


@lru_cache(maxsize=65536)
def _stem(w: str) -> str:
    """Crude suffix stripping so "migrations"/"migration", "enabled"/"enable",
    "gracefully"/"graceful", "degradation"/"degrade" compare (up to two passes)."""
    for _ in range(2):
        if len(w) > 3 and w.replace("-", "").isalpha() and not w.endswith("ss"):
            for suffix in _SUFFIXES:
                if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                    w = w[: -len(suffix)]
                    break
    return _SYNONYMS.get(w, w)


_SYNONYMS = {"writ": "build", "creat": "build", "implement": "build", "mak": "build",
             "execut": "run", "invok": "run", "delet": "remov", "eras": "remov",
             "launch": "start"}
"""Stems that name the same act, compared as one ("we are not writing a UI" states
"we are not building a UI"; issue 12, point 5)."""


@lru_cache(maxsize=65536)
def _is_key(w: str) -> bool:
    """Identifier-like object words (numbers, flags, paths, names) and scope terms."""
    return (w in _SCOPE_WORDS or w.startswith("-")
            or any(c.isdigit() or c in "_./#\\" for c in w))


_MARKER_IS_CONTENT = frozenset({"max", "min", "because", "sequence", "revert", "ruled"})
"""Families whose marker is itself the fact (a bound's direction, a cause, an order):
these still need a same-family marker in the summary."""
_MODALS = frozenset({"must", "should", "shall", "only", "always", "required", "need", "needs"})


_NOT_BEFORE_WITHOUT = re.compile(
    r"(?:\b(?:not|never|no|cannot|nothing|none)\b|n['\u2019]t\b)[^.;!?\n]*?\b(?:without|unless)\b")


@lru_cache(maxsize=65536)
def _double_negative(text: str) -> bool:
    """True for a double negation: a negation, then "without" or "unless" in the same
    sentence ("never run the release without a confirmation step" says "always a
    confirmation step"; issue 12, point 1)."""
    return _NOT_BEFORE_WITHOUT.search(text.lower()) is not None


def negative(words: list[str]) -> bool:
    """The polarity of a sentence or clause given its normalized content words
    (:func:`~compaction_audit.recall.clauses.content_words`): negative when it holds a
    negation word (:data:`~compaction_audit.recall.clauses.NEGATION_WORDS`), except a
    double negation, a negation followed by "without" or "unless" ("never X without
    Y", "cannot X unless Y": both mean "always Y"; issue 12, point 1).  "no longer" is
    one negation."""
    negs = [w for i, w in enumerate(words) if w in NEGATION_WORDS
            and not (w == "longer" and i and words[i - 1] == "no")]
    if not negs:
        return False
    if len(negs) == 2 and negs[1] == "without" and negs[0] != "without":
        return False
    return not (len(negs) == 1 and "unless" in words[words.index(negs[0]):])


_HEAD = 5
"""A long clause or requirement (more than this many distinct stems) also survives by
its head: most of its first five stems in one sentence."""


def _sentence_survives(words: list[str], idx: _Index, negative: bool) -> bool:
    """Most (more than half) of the stemmed content words in one summary sentence of the
    same polarity, whatever its marker (issue 10, point 3).  A long one (more than
    :data:`_HEAD` distinct stems) also survives when most of its first five stems are
    in one such sentence: a spec bullet leads with its fact and trails qualifications
    ("Flash reports accurate closure count for both non-empty and empty cases" is kept
    by "flash ... showing closure count")."""
    ordered = _content_stems(tuple(words))
    if len(ordered) < 2:
        return False
    stems = set(ordered)
    need = len(stems) // 2 + 1
    head = set(ordered[:_HEAD]) if len(ordered) > _HEAD else None
    sentences = idx.lookup.sentences[negative]

    def answer() -> bool:
        # a match shares `need` stems (or 3 of the head): it holds one of the rarest
        cands = sentences.holding(stems, len(stems) - need + 1)
        if head is not None:
            cands = itertools.chain(cands, sentences.holding(head, len(head) - _HEAD // 2))
        return any(len(stems & cand) >= need
                   or (head is not None and len(head & cand) > _HEAD // 2) for cand in cands)

    # only the stems some sentence holds can be shared: they decide the answer
    post = sentences.post
    return idx.lookup.remember(
        ("sentence", negative, need, frozenset(w for w in stems if w in post),
         None if head is None else frozenset(w for w in head if w in post)), answer)


def _polarity(d: Discriminator) -> bool:
    """True when clause ``d`` is negative (a double negation is not)."""
    return _polarity_of(d.norm, d.text)


@lru_cache(maxsize=65536)
def _polarity_of(norm: str, text: str) -> bool:
    """:func:`_polarity` of a clause with this norm and text, once per clause (a clause
    is compared with every summary above its span)."""
    family, *words = norm.split()
    if _double_negative(text):
        return False
    return family == "not" or any(w in NEGATION_WORDS for w in words)


def _clause_survives(d: Discriminator, idx: _Index) -> bool:
    family, *words = d.norm.split()
    negative, kind = _polarity(d), d.kind
    if family == "not" and not negative:  # "never X without Y": compare as "must Y"
        kind, family = Kind.CONSTRAINT, "must"
        words = [w for w in words if w != "not"]
    if family not in _MARKER_IS_CONTENT and _sentence_survives(words, idx, negative):
        return True
    if d.kind is Kind.REQUIREMENT:
        return False
    return _by_clause(kind, family, words, idx.lookup.clause_words, idx.lookup.clause_stems,
                      idx.lookup.remember)


def _by_clause(kind: Kind, family: str, words: list[str],
               clause_words: dict[tuple[Kind, str], _Postings],
               clause_stems: dict[tuple[Kind, str], _Postings],
               remember: Callable[[tuple[object, ...], Callable[[], bool]], bool]) -> bool:
    """A summary clause of ``(kind, family)`` (``clause_words``, ``clause_stems``:
    :class:`_Offered`) that holds every identifier-like word of ``words`` (a path also
    by its file name) or, when there is none, shares two of their stems (or one, when
    there is one; any clause of the family when there is none)."""
    keys = [w for w in words if _is_key(w)]
    if keys:  # every identifier-like word, a path also by its file name
        clauses = clause_words.get((kind, family))
        if clauses is None:
            return False
        return remember(("keys", kind, family, frozenset(keys)), lambda: any(
            all(k in cand or ("/" in k and _basename(k) in cand) for k in keys)
            for cand in _holding_key(clauses, keys)))
    stems = {_stem(w) for w in words if w != ">"}
    by_stem = clause_stems.get((kind, family))
    if by_stem is None:
        return False
    if not stems:  # nothing to share: any clause of the family
        return bool(by_stem.sets)
    need = min(2, len(stems))
    return remember(
        ("clause", kind, family, need, frozenset(w for w in stems if w in by_stem.post)),
        lambda: any(len(stems & cand) >= need
                    for cand in by_stem.holding(stems, len(stems) - need + 1)))


def _holding_key(clauses: _Postings, keys: list[str]) -> Iterator[frozenset[str]]:
    """The clauses that hold the rarest key of ``keys`` (or, for a path, its file
    name): every clause that holds all of them is among these."""
    def options(k: str) -> list[str]:
        return [k, _basename(k)] if "/" in k else [k]
    post = clauses.post
    best = min(keys, key=lambda k: sum(len(post.get(o, ())) for o in options(k)))
    seen: set[int] = set()
    for o in options(best):
        for i in post.get(o, ()):
            if i not in seen:
                seen.add(i)
                yield clauses.sets[i]


_PARAPHRASE_KINDS = frozenset({Kind.NEGATION, Kind.CONSTRAINT, Kind.REQUIREMENT})


def _paraphrased(d: Discriminator, idx: _Index) -> bool:
    """A rule kept in other words (:mod:`compaction_audit.recall.paraphrase`): the
    changing act restricted to the complementary set, the missing thing reported
    supplied, or a check name over the rule's objects."""
    if d.kind not in _PARAPHRASE_KINDS:
        return False
    _, *words = d.norm.split()
    return (paraphrase.kept_by_complement(d.text, idx.low, _stem)
            or paraphrase.kept_as_resolved(d.text, _polarity(d), idx.low, _stem)
            or paraphrase.kept_by_check_name(words, idx.names, _stem))


def _raw_in(norm: str, idx: _Index) -> bool:
    """``norm`` occurs in the summary with a word boundary on both sides (issue 10, point
    3: a code-span identifier matched as a raw substring, quoted or not).  Such an
    occurrence has each word (``\\w+`` run) of ``norm`` as a whole word of the summary
    (a word character is :meth:`str.isalnum` or "_" for both, as for ``\\w``): that is
    checked first (issue 11, adv8 F4), then only the places where the rarest of those
    words starts are compared, not the whole text (it was one search of the whole
    summary per lost item: issue 11, class 5)."""
    words = [(m.start(), m.group()) for m in _WORD_RE.finditer(norm)]
    if any(w not in idx.lookup.words for _, w in words):
        return False
    low = idx.low
    if not words:  # no word to anchor on (a norm of punctuation only): search it
        return _bounded_at(low, norm, _found(low, norm))
    starts = idx.lookup.starts
    if not starts:
        for m in _WORD_RE.finditer(low):
            starts.setdefault(m.group(), []).append(m.start())
    offset, word = min(words, key=lambda ow: len(starts.get(ow[1], ())))
    return _bounded_at(low, norm, (p - offset for p in starts.get(word, ())
                                   if p >= offset and low.startswith(norm, p - offset)))


def _found(low: str, norm: str) -> Iterator[int]:
    """Every place ``norm`` occurs in ``low``, overlapping ones included."""
    at = low.find(norm)
    while at >= 0:
        yield at
        at = low.find(norm, at + 1)


def _bounded_at(low: str, norm: str, places: Iterable[int]) -> bool:
    """Whether ``norm`` at one of ``places`` of ``low`` (where it occurs) has no word
    character right before or after it."""
    for at in places:
        before = low[at - 1] if at else " "
        after = low[at + len(norm)] if at + len(norm) < len(low) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
    return False


def survives(d: Discriminator, summary_text: str) -> bool:
    """Whether ``d`` (found in a child span) is still stated by ``summary_text``.

    Token kinds compare normalized forms: a quantity needs the same number (and the same
    unit when ``d`` has one: "45000" survives as "45,000" or "45000 ms", "412 ms" does not
    survive as "412"); a version the same version (``v4.2.1`` == ``4.2.1``); a scope the
    same term; an identifier or link the same token (a path also by its file name or a
    relative form, a hash also by a prefix of 7+ digits).  Clause kinds need a marker of
    the same family in the summary whose words hold every identifier-like word of ``d``
    (or, when ``d`` has none, share two content words): a summary that drops or flips
    the negation loses it.

    A clause's words are only looked up in what the summary offers (never compared by
    prefix, substring or value; the complement and check-name paraphrases read parts of
    words, and such clauses are never merged):
    :class:`~compaction_audit.recall.survclass.Classes` relies on it to compare clauses
    that differ only in names no summary holds once.
    """
    decided = _decided(d, summary_text)
    return _survives_in(d, _index(summary_text)) if decided is None else decided


def _survives_in(d: Discriminator, idx: _Index) -> bool:
    """:func:`survives` by the summary's index (what :func:`_decided` decides without
    it is decided alike here)."""
    norm = d.norm
    anchors = _anchors(d.kind, d.text, norm)
    if anchors is not None and anchors.isdisjoint(idx.lookup.vocabulary):
        return False
    if d.kind in CLAUSE_KINDS:  # a reversed rule is not kept (issue 12, point 1)
        return ((_clause_survives(d, idx) or _paraphrased(d, idx))
                and (not _flip_evidence(d, idx) or _restated(d, idx)))
    if d.kind is Kind.QUANTITY:
        number, _, unit = norm.partition(" ")
        if not unit:
            return number in idx.keys
        base = measure(number, unit)
        return (number, unit) in idx.quantities or (base is not None
                                                    and base in idx.measures)
    if d.kind is Kind.VERSION and norm[:1].isdigit():
        if norm in idx.keys:
            return True
        return admitted(vtuple(norm), idx.lookup.requirements)
    if d.kind is Kind.SCOPE:
        return norm in idx.scopes or norm in idx.keys
    if norm in idx.keys or _raw_in(norm, idx):
        return True
    if d.kind is Kind.IDENTIFIER and (key := _module_key(d.text)) and key in idx.modules:
        return True
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        return _basename(path) in idx.keys or any(
            path.endswith("/" + p.lstrip("/")) or p.endswith("/" + path)
            for p in idx.lookup.path_tails.get(path.rsplit("/", 1)[-1], ()))
    if norm.startswith("migration "):
        return norm.removeprefix("migration ") in idx.keys
    if _HEX_RE.fullmatch(norm):  # a hash by a prefix: a sorted neighbour, a key prefix
        hashes, at = idx.lookup.hashes, bisect_left(idx.lookup.hashes, norm)
        return ((at < len(hashes) and hashes[at].startswith(norm))
                or any(norm[:n] in idx.lookup.hash_set for n in range(7, len(norm) + 1)))
    return " " in norm and norm in idx.low


def dropped(child_text: str, summary_text: str, span_type: str = "prose"
            ) -> list[Discriminator]:
    """The discriminators of ``child_text`` (read as ``span_type``) that do not survive
    in ``summary_text``."""
    return [d for d in extract_cached(child_text, span_type) if not survives(d, summary_text)]


_ANTONYMS: dict[str, tuple[str, ...]] = {}
for _a, _b in (("enabl", "disabl"), ("allow", "deny"), ("allow", "forbid"),
               ("allow", "block"), ("allow", "prohibit"), ("includ", "exclud"),
               ("add", "remov"), ("accept", "reject"), ("start", "stop"),
               ("increas", "decreas"), ("rais", "lower"), ("lock", "unlock"),
               ("requir", "optional"), ("publ", "privat"), ("safe", "unsafe")):
    _ANTONYMS[_a] = (*_ANTONYMS.get(_a, ()), _b)
    _ANTONYMS[_b] = (*_ANTONYMS.get(_b, ()), _a)
_FLIP_FAMILIES = {"max": "min", "min": "max"}
_FLIP_KINDS = frozenset({Kind.NEGATION, Kind.CONSTRAINT, Kind.CONDITION, Kind.REQUIREMENT})
_SELF_DECIDED = CLAUSE_KINDS - _PARAPHRASE_KINDS - _FLIP_KINDS
"""Clause kinds that are neither paraphrased (:data:`_PARAPHRASE_KINDS`) nor flipped
(:data:`_FLIP_KINDS`): causal, ordering, ruled-out.  :func:`survives` of one is
:func:`_clause_survives` alone."""


def flipped(d: Discriminator, summary_text: str) -> bool:
    """Whether ``summary_text`` states clause ``d`` with the opposite polarity (issue 12,
    point 1; rule ``negation-flipped``).

    False whenever ``d`` survives (:func:`survives`).  Otherwise true when one summary
    sentence of the opposite polarity holds *every* stemmed content word of ``d`` (at
    least two; of a long clause, every one of its first five): a "not" dropped or added
    on the same verb and object, or a double negation ("never release without a
    confirmation step" flips "no confirmation step"); when one of the same polarity
    holds them with one word replaced by its antonym (enable/disable, allow/forbid,
    add/remove, ...); or, for a bound, when the summary has the opposite bound on the
    same identifier-like words ("at most 3 replicas" against "at least 3 replicas").
    Requiring every word keeps a summary that merely speaks of the same object ("do not
    touch the config file" against "updated the config file") from counting as a flip.
    """
    return d.kind in _FLIP_KINDS and not survives(d, summary_text) and _flip_evidence(
        d, _index(summary_text))


def _flip_evidence(d: Discriminator, idx: _Index) -> bool:
    """A rule sentence (or bound) of ``idx`` that states clause ``d`` reversed (see
    :func:`flipped`)."""
    return next(_flip_tags(d, idx.lookup.rules, idx.lookup.clause_words), None) is not None


def _flip_tags(d: Discriminator, rules: dict[bool, _Postings],
               clauses: dict[tuple[Kind, str], _Postings]) -> Iterator[int]:
    """The tags of the rule parts (or bounds) in ``rules`` (``clauses``) that state
    clause ``d`` reversed: a bound needs the opposite bound on all its identifier-like
    words; a rule needs a rule part of the opposite polarity holding all its stems, or
    one of the same polarity holding them with one swapped for its antonym."""
    if d.kind not in _FLIP_KINDS:
        return
    family, *words = d.norm.split()
    neg = _polarity(d)
    other = _FLIP_FAMILIES.get(family)
    if other is not None:
        keys = [w for w in words if _is_key(w)]
        bounds = clauses.get((d.kind, other))
        if keys and bounds is not None:
            yield from (tag for tag, cand in bounds.tagged(keys, 1)
                        if all(k in cand for k in keys))
        return
    if family in _MARKER_IS_CONTENT:
        return
    stems = _flip_stems(words)
    if not stems:
        return
    yield from (tag for tag, cand in rules[not neg].tagged(stems, 1) if stems <= cand)
    for swapped in (stems - {w} | {a} for w in stems for a in _ANTONYMS.get(w, ())):
        yield from (tag for tag, cand in rules[neg].tagged(swapped, 1) if swapped <= cand)


def _flip_stems(words: list[str]) -> frozenset[str]:
    """The stems a flip must hold: every content stem (the first five of a long
    clause); empty when fewer than two."""
    ordered = _content_stems(tuple(words))
    return frozenset(ordered[:_HEAD]) if len(ordered) >= 2 else frozenset()


@lru_cache(maxsize=65536)
def _content_stems(words: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct stems of a clause's words in order, without ">", negation words
    and modals; once per clause."""
    return tuple(dict.fromkeys(_stem(w) for w in words
                               if w != ">" and w not in NEGATION_WORDS and w not in _MODALS))


def _restated(d: Discriminator, idx: _Index) -> bool:
    """One sentence of the same polarity holds every stem of clause ``d``."""
    _, *words = d.norm.split()
    stems, neg = _flip_stems(words), _polarity(d)
    lookup = idx.lookup
    return bool(stems) and any(stems <= cand for table in (lookup.sentences, lookup.rules)
                               for cand in table[neg].holding(stems, 1))


_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n")


def flip_sentence(d: Discriminator, summary_text: str) -> str | None:
    """The sentence of ``summary_text`` that states clause ``d`` reversed (at most
    :data:`SENTENCE_MAX` characters), None when the summary does not flip it
    (:func:`flipped`): the first sentence whose own rules (or bounds) reverse it."""
    if not flipped(d, summary_text):
        return None
    sentences, rules, clauses = _sentence_lookup(summary_text)
    at = min(_flip_tags(d, rules, clauses), default=None)
    return (sentences[at] if at is not None else summary_text).strip()[:SENTENCE_MAX]


@lru_cache(maxsize=256)
def _sentence_lookup(summary_text: str) -> tuple[
        tuple[str, ...], dict[bool, _Postings], dict[tuple[Kind, str], _Postings]]:
    """The sentences of ``summary_text`` and the rule parts and clauses of each (as its
    own :func:`_index` has them), tagged with the sentence's position: one lookup
    finds the first sentence that reverses a clause, where indexing the sentences one
    by one per flipped clause was quadratic (issue 11, item 5)."""
    sentences = tuple(s for s in _SPLIT_RE.split(summary_text) if s.strip())
    rules: dict[bool, tuple[list[frozenset[str]], list[int]]] = {False: ([], []),
                                                                 True: ([], [])}
    clauses: dict[tuple[Kind, str], tuple[list[frozenset[str]], list[int]]] = {}
    for at, sentence in enumerate(sentences):
        lookup = _index.__wrapped__(sentence).lookup  # not cached: once per sentence
        for neg, part in lookup.rules.items():
            rules[neg][0].extend(part.sets)
            rules[neg][1].extend([at] * len(part.sets))
        for key, part in lookup.clause_words.items():
            sets, tags = clauses.setdefault(key, ([], []))
            sets.extend(part.sets)
            tags.extend([at] * len(part.sets))
    return (sentences, {neg: _Postings(*pair) for neg, pair in rules.items()},
            {key: _Postings(*pair) for key, pair in clauses.items()})


SENTENCE_MAX = 300
"""Most characters of a summary sentence a finding quotes (log text is untrusted:
bounded in every output)."""


def stem(word: str) -> str:
    """The comparison form of one lowercased word (suffixes stripped, acts that mean the
    same compared as one), as survival compares words."""
    return _stem(word)
