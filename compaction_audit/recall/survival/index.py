"""Survival's summary index: what a summary offers for comparison, built once per text.

:func:`_index` reads a summary's keys, paths, quantities, scopes, clauses, sentences,
rule parts, module keys and version requirements into an :class:`_Index` (cached);
:func:`_offered` reads only what the summary's own discriminators offer.  Pure standard
library.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from compaction_audit.recall import paraphrase
from compaction_audit.recall.clauses import (
    CLAUSE_END_RE,
    NEGATION_WORDS,
    content_words,
    mask_code,
    unwrapped,
)
from compaction_audit.recall.extract import (
    CLAUSE_KINDS,
    SCOPE_CANON,
    Discriminator,
    Kind,
    extract_cached,
)
from compaction_audit.recall.spantypes import composed
from compaction_audit.recall.survival.anchors import _vocabulary
from compaction_audit.recall.survival.formats import spelled_values
from compaction_audit.recall.survival.order import is_tag, last_texts, side_tags
from compaction_audit.recall.survival.postings import _Postings, _remember
from compaction_audit.recall.survival.words import (
    _HEX_RE,
    _WORD_RE,
    _basename,
    _double_negative,
    _module_key,
    _stem,
    cancelled_words,
    negative,
    uncancelled,
)
from compaction_audit.recall.versions import (
    REQUIREMENT_RE,
    RequirementTable,
    measure,
    requirement_table,
    vtuple,
)


@dataclass(frozen=True, slots=True)
class _TokenHalf:
    """What a summary offers a token discriminator (built on first need: the clause
    checks never read it)."""

    keys: frozenset[str]  # token norms, plain words, bare numbers, path file names
    paths: tuple[str, ...]
    scopes: frozenset[str]  # scope norms and every scope term inside words
    modules: frozenset[str]  # module and file names as snake_case stems
    requirements: tuple[tuple[str, tuple[int, ...]], ...]  # (operator, version)
    words: frozenset[str]  # every word (\w+ run) of the lowercased summary
    hashes: tuple[str, ...]  # the keys that are hex strings, sorted
    hash_set: frozenset[str]
    path_tails: dict[str, list[str]]  # last "/" part of a path -> paths
    table: RequirementTable
    vocabulary: frozenset[str]
    path_whole: frozenset[str]  # every path, leading "/" stripped
    path_ends: frozenset[str]  # every part of a path after one of its "/" (path_ends)


@dataclass(frozen=True, slots=True)
class _ClauseHalf:
    """What a summary offers a clause beyond its own clauses (built on first need: the
    token checks never read it)."""

    sentences: tuple[tuple[frozenset[str], bool], ...]  # (stems, negative) per sentence
    rules: tuple[tuple[frozenset[str], bool], ...]  # sentence parts that state a rule
    names: paraphrase.SummaryNames  # check names (validate_session_message_ids)
    sentence_post: dict[bool, _Postings]  # negative -> sentence stems
    rule_post: dict[bool, _Postings]  # negative -> rule-part stems


class _Halves:
    """The two halves of a summary's index, each built on first read (issue 14: the
    asked-again check compares identifiers with user texts and needs only the token
    half; the clause checks of the folds and the flips need only the clause half;
    building both took twice the time on the benchmark grid's text cells).  Either
    half is the same whenever it is built: a pure function of the summary text."""

    __slots__ = ("_clauses", "_tokens", "low", "offered", "summary")

    def __init__(self, summary: str, low: str, offered: _Offered) -> None:
        self.summary, self.low, self.offered = summary, low, offered
        self._tokens: _TokenHalf | None = None
        self._clauses: _ClauseHalf | None = None

    @property
    def tokens(self) -> _TokenHalf:
        half = self._tokens
        if half is None:
            half = self._tokens = _token_half(self.summary, self.low, self.offered)
        return half

    @property
    def clause_half(self) -> _ClauseHalf:
        half = self._clauses
        if half is None:
            half = self._clauses = _clause_half(self.summary, self.low)
        return half


class _Lookup:
    """The inverted indexes :func:`~compaction_audit.recall.survival.check.survives`
    looks candidates up in (built once per summary with :class:`_Index`, each half on
    first need: :class:`_Halves`); each answers exactly what a scan of the lists of
    :class:`_Index` answers.

    ``sentences``, ``rules``: negative -> sentence stems, rule-part stems;
    ``clause_words``, ``clause_stems``: (kind, family) -> clause words, their stems;
    ``words``: every word (``\\w+`` run) of the lowercased summary; ``hashes``: the
    keys that are hex strings, sorted (``hash_set``: the same as a set);
    ``path_tails``: last "/" part of a path -> paths (``path_whole``: the paths, leading
    "/" stripped; ``path_ends``: each part of one after a "/"); ``requirements``: the version
    requirement table; ``vocabulary``: every string a token discriminator can be
    matched on here (:func:`~compaction_audit.recall.survival.anchors._vocabulary`):
    one that shares none of its
    :func:`~compaction_audit.recall.survival.anchors._anchors` with it does not
    survive."""

    __slots__ = ("_halves", "clause_stems", "clause_words", "hash_set", "hashes", "memo",
                 "path_ends", "path_tails", "path_whole", "requirements", "rules",
                 "sentences", "starts", "vocabulary", "words")
    sentences: dict[bool, _Postings]
    rules: dict[bool, _Postings]
    words: frozenset[str]
    hashes: tuple[str, ...]
    hash_set: frozenset[str]
    path_tails: dict[str, list[str]]
    path_whole: frozenset[str]
    path_ends: frozenset[str]
    requirements: RequirementTable
    vocabulary: frozenset[str]

    def __init__(self, halves: _Halves) -> None:
        self._halves = halves
        self.clause_words: dict[tuple[Kind, str], _Postings] = halves.offered.clause_words
        self.clause_stems: dict[tuple[Kind, str], _Postings] = halves.offered.clause_stems
        self.memo: dict[tuple[object, ...], bool] = {}
        """Answers by what decides them (the query's words that occur in the summary at
        all): lost items that differ only in words the summary lacks get one look-up."""
        self.starts: dict[str, list[int]] = {}
        """Where each word (``\\w+`` run) of the lowercased summary starts, built on
        first need by :func:`~compaction_audit.recall.survival.check._raw_in`."""

    def __getattr__(self, name: str) -> Any:
        """An attribute of a half not built yet (Python asks only for an empty slot):
        build the half, fill its slots (read at C speed from then on)."""
        if name in ("sentences", "rules"):
            half = self._halves.clause_half
            self.sentences, self.rules = half.sentence_post, half.rule_post
        elif name in ("words", "hashes", "hash_set", "path_tails", "path_whole",
                      "path_ends", "requirements", "vocabulary"):
            t = self._halves.tokens
            self.words, self.hashes, self.hash_set = t.words, t.hashes, t.hash_set
            self.path_tails, self.requirements, self.vocabulary = (t.path_tails, t.table,
                                                                   t.vocabulary)
            self.path_whole, self.path_ends = t.path_whole, t.path_ends
        else:
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def remember(self, key: tuple[object, ...], answer: Callable[[], bool]) -> bool:
        """The memo's answer for ``key``, computed by ``answer`` the first time."""
        return _remember(self.memo, key, answer)


class _Index:
    """What a summary offers for comparison (built once per summary text, cached; each
    half on first read, :class:`_Halves`).

    ``keys``: token norms, plain words, bare numbers, path file names; ``paths``;
    ``quantities``: (number, canonical unit or ""); ``scopes``: scope norms and every
    scope term inside words; ``clauses``: (kind, family) -> words; ``sentences``:
    (stems, negative) per sentence; ``rules``: the sentence parts that state a rule;
    ``modules``: module and file names as snake_case stems; ``measures``: (dimension,
    value in the base unit); ``requirements``: (operator, version); ``summary``: the
    text, ``low``: lowercased; ``names``: its check names (validate_session_message_ids)."""

    __slots__ = ("_halves", "clauses", "keys", "lookup", "low", "measures", "modules", "names",
                 "paths", "quantities", "requirements", "rules", "scopes", "sentences",
                 "summary")
    keys: frozenset[str]
    paths: tuple[str, ...]
    scopes: frozenset[str]
    sentences: tuple[tuple[frozenset[str], bool], ...]
    rules: tuple[tuple[frozenset[str], bool], ...]
    modules: frozenset[str]
    requirements: tuple[tuple[str, tuple[int, ...]], ...]
    names: paraphrase.SummaryNames

    def __init__(self, summary: str) -> None:
        summary = composed(summary)  # as the children's discriminators are read (adv97 #4)
        self.summary = summary
        self.low = summary.lower()
        offered = _offered(summary)
        self._halves = _Halves(summary, self.low, offered)
        self.quantities: frozenset[tuple[str, str]] = offered.quantities
        self.clauses: dict[tuple[Kind, str], list[frozenset[str]]] = offered.clauses
        self.measures: frozenset[tuple[str, float]] = offered.measures
        self.lookup = _Lookup(self._halves)

    def __getattr__(self, name: str) -> Any:
        """As :meth:`_Lookup.__getattr__`."""
        if name in ("sentences", "rules", "names"):
            half = self._halves.clause_half
            self.sentences, self.rules, self.names = half.sentences, half.rules, half.names
        elif name in ("keys", "paths", "scopes", "modules", "requirements"):
            t = self._halves.tokens
            self.keys, self.paths, self.scopes = t.keys, t.paths, t.scopes
            self.modules, self.requirements = t.modules, t.requirements
        else:
            raise AttributeError(name)
        return object.__getattribute__(self, name)


_NAME_RE = re.compile(r"\w+(?:[.-]\w+)+")
_SENTENCE_RE = re.compile(r"[.!?;](?=\s)|\n")
_MODULE_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)+\b"
                        r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_FILE_RE = re.compile(r"[\w-]+(?:\.[A-Za-z][\w]{0,7})+\b")
_LONG_RUN_RE = re.compile(r"[\w-]{257,}")
"""A run of word characters too long to be a name: blanked before the name and file
patterns, which would otherwise rescan it from each of its positions (quadratic time
on a summary that is one long word; issue 11, item 5)."""


_RULE_RE = re.compile(
    r"\b(?:must|should|shall|always|never|only|required|requires?|need(?:s)?\s+to"
    r"|ha(?:ve|s)\s+to|cannot|can't|don't|do\s+not|mustn't|shouldn't|avoid|ensure"
    r"|make\s+sure|no\s+\w+\s+(?:step|needed|required))\b")
"""A sentence that states a rule (a modal, a prohibition, a requirement); a summary
sentence flips a child's rule only when it is one (narrative "ran the migrations" does
not flip "do not run the migrations"; issue 12, point 1)."""
_GRANT_RE = re.compile(
    r"\b(?:(?:ok(?:ay)?|fine|allowed|permitted|free)\s+to|allow(?:s|ed)?|permit(?:s|ted)?"
    r"|(?:may|can)\s+now\s+be|(?:is|are)\s+(?:now\s+)?(?:fine|ok(?:ay)?|allowed"
    r"|permitted)|(?:user|person|human|owner|i|we)\s+(?:\w+\s+)?(?:said|asked|instructed"
    r"|told)(?:\s+\w+){0,2}\s+to)\b")
"""A permission ("it is OK to", "may now be deleted", "is fine now", "allowed") or an
instruction the person gave, reported ("the user said to"; not "Alice instructed Bob
to": adv102 #4): a rule sentence in a plain statement
(:data:`_OPEN_RE`).  "It is OK to delete the backups" and "The user said to delete the
backups" reverse "Do not delete the backups" (adv98, adv99 #1: no flip was read), and
so do "the backups may now be deleted" and "deleting the backups is fine now" (adv100
#3); "may be" alone is no permission ("may be irreversible", "may be deleted by
mistake": adv101 #3)."""
_OPEN_RE = re.compile(r"[?\uff1f\"\u201c\u201d]|\b(?:if|whether|unless|unclear|pending"
                      r"|confirm\w*|when|until|once|maybe|perhaps|might|thought|believed?"
                      r"|suggested|proposed|considered|wondered|claimed|mistake\w*|wrongly"
                      r"|nobody|no\s+one|except|forbade|refus\w*|objected|overrul\w*"
                      r"|declined|rejected|denied)\b")
"""A question, a condition, a hedge, a belief or proposal reported, a quotation: such a
sentence states no permission and no imperative opened by :data:`_LEADING` words ("Is
it OK to delete the backups?", "The user asked whether it is OK to ...", "If the user
agrees, then delete ...", "The assistant thought it was OK to ...": each read as the
rule reversed, usertest57 #2, adv101 #3), or an exception or refusal ("fine with
anything except deleting ...", "was told to delete ..., and refused": adv102 #4)."""
_LEADING = frozenset({"then", "now", "next", "first", "finally", "afterwards", "later",
                      "instead", "go", "ahead", "feel", "free", "ok", "okay", "yes",
                      "sure"})
"""Words an imperative may open with before its verb ("Then delete the backups", "Now
delete ...", "Go ahead and delete ...", "Feel free to delete ...": adv98, adv99 #1)."""
_PART_RE = re.compile(r",|\b(?:but|while|whereas|although)\b")
"""Where a sentence splits into the parts a flip is judged on: "run migrations on
staging only, not on prod" negates prod, not the rule."""
_IMPERATIVE_VERBS = frozenset({
    "run", "use", "add", "release", "deploy", "push", "merge", "commit", "enable",
    "disable", "delete", "remove", "skip", "ask", "write", "build", "keep", "drop",
    "include", "exclude", "allow", "block", "start", "stop", "call", "install", "set",
    "retry", "restart", "rerun", "revert", "rebuild", "reset", "upgrade", "downgrade",
    "bump", "pin", "publish", "migrate", "apply", "update", "change", "edit", "rename",
    "move", "create", "overwrite", "uninstall", "force", "touch"})
"""Verbs that open an imperative sentence (a rule without a modal: "Run the release
right away")."""
_STATEMENT_RE = re.compile(r"^(?:(?!\b(?:before|after|if|when|unless|until|once|because"
                           r"|since)\b).)*?(?:\b(?:is|are|was|were|been|stays|stayed"
                           r"|remains|remained)\b|:\s)")
"""A part opened by one of :data:`_IMPERATIVE_VERBS` is no imperative when it has a verb
of being or a label's colon before any subordinate clause ("Retry it before the table
is vacuumed" is one): the opening word is a noun there ("Force pushes to main
are off limits", "Pin lib2 to 1.2.0 was rejected", "Update on the config: left
untouched"; adv85 #2: each was read as the rule reversed)."""


PATH_END_PARTS = 64
"""How many of a path's last "/" parts its ends are taken from (:func:`path_ends`):
a path of 80,000 parts ("/a/a/a/...", 160 KB) made every part after every "/" a
string of its own, 6.4 GB and 12 s (adv82)."""


def path_ends(path: str) -> list[str]:
    """The parts of ``path`` after each of its last :data:`PATH_END_PARTS` "/" (to its
    end), shortest first: ``"a/b/c"`` -> ``["c", "b/c"]``.  Linear in the path's
    length: a path with more parts is matched on its last ones only."""
    out: list[str] = []
    at = len(path)
    for _ in range(PATH_END_PARTS):
        at = path.rfind("/", 0, at)
        if at < 0:
            break
        out.append(path[at + 1:])
    return out


@lru_cache(maxsize=4096)
def _index(summary: str) -> _Index:
    return _Index(summary)


def _token_half(summary: str, low: str, offered: _Offered) -> _TokenHalf:
    word_set = frozenset(_WORD_RE.findall(low))
    keys, paths = set(word_set), []
    short = _LONG_RUN_RE.sub(" ", low)
    keys.update(_NAME_RE.findall(short))  # hyphenated and dotted names: spotter-gqc, a.ex
    scopes = {SCOPE_CANON.get(w, w) for w in re.findall(r"[a-z]+(?:-(?:prod|env))?", low)}
    _, spelled_keys, spelled_scopes = spelled_values(summary)  # "5pm", "issue 412",
    keys.update(spelled_keys)  # "March 15" (adv126 #7)
    scopes.update(spelled_scopes)
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
    modules = {_module_key(m) for m in _MODULE_RE.findall(summary)}
    modules.update(_module_key(f) for f in _FILE_RE.findall(_LONG_RUN_RE.sub(" ", summary)))
    modules.discard("")
    requirements = tuple((op, vtuple(v)) for op, v in REQUIREMENT_RE.findall(low))
    hashes = sorted(k for k in keys if _HEX_RE.fullmatch(k))
    tails: dict[str, list[str]] = {}
    for path in paths:  # a path ending another ends in the same last "/" part
        tails.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    table = requirement_table(requirements)
    # one set look-up per "/" of a child's path, where each path of the summary with the
    # same last part was compared (adv78 #1: 400 x 20 such paths, 31-37 s for 0.27 MB)
    ends = {end for p in paths for end in path_ends(p)}
    return _TokenHalf(frozenset(keys), tuple(paths), frozenset(scopes), frozenset(modules),
                      requirements, word_set, tuple(hashes), frozenset(hashes),
                      {tail: list(dict.fromkeys(ps)) for tail, ps in tails.items()}, table,
                      _vocabulary(keys, scopes, modules, tails, offered.measures, table),
                      frozenset(p.lstrip("/") for p in paths), frozenset(ends))


def _clause_half(summary: str, low: str) -> _ClauseHalf:
    low = unwrapped(summary, low, low)  # a prohibition cut from what it forbids runs on
    split = [(sent, uncancelled(words, sent), _OPEN_RE.search(sent + end) is None)
             for sent, end in _sentences(low) if (words := content_words(sent, 400))]
    sentences = tuple(
        (frozenset(_stem(w) for w in words if w not in NEGATION_WORDS), negative(words))
        for _, words, _ in split)
    rules = tuple(
        (frozenset(_stem(w) for w in words if w not in NEGATION_WORDS), negative(words))
        for sent, _, plain in split for part in _rule_parts(sent)
        if (words := uncancelled(content_words(part, 400), part))
        and _states_rule(part, words, plain))
    return _ClauseHalf(
        sentences, rules, paraphrase.summary_names(summary, _stem),
        {neg: _Postings(c for c, n in sentences if n == neg) for neg in (False, True)},
        {neg: _Postings(c for c, n in rules if n == neg) for neg in (False, True)})


def _sentences(low: str) -> list[tuple[str, str]]:
    """(sentence, the mark that ends it) of lowercased ``low``, cut at
    :data:`_SENTENCE_RE` (the mark is "" at the end and for a line end)."""
    out, at = [], 0
    for m in _SENTENCE_RE.finditer(low):
        out.append((low[at:m.start()], m.group().strip()))
        at = m.end()
    out.append((low[at:], ""))
    return out


def _states_rule(part: str, words: list[str], plain: bool) -> bool:
    """Whether a part of a summary sentence states a rule: a modal, prohibition or
    requirement (:data:`_RULE_RE`), or an imperative; in a ``plain`` sentence (no
    question, condition or hedge: :data:`_OPEN_RE`) also a permission or a reported
    instruction (:data:`_GRANT_RE`), or an imperative after "then", "now", "go ahead
    and" (:data:`_LEADING`)."""
    if _RULE_RE.search(part) or (plain and _GRANT_RE.search(part)):
        return True
    if _STATEMENT_RE.search(part):
        return False
    return words[0] in _IMPERATIVE_VERBS or (plain
                                             and _opening_verb(words) in _IMPERATIVE_VERBS)


def _opening_verb(words: list[str]) -> str | None:
    """The first of a part's content ``words`` after the :data:`_LEADING` ones."""
    return next((w for w in words if w not in _LEADING), None)


def _rule_parts(sent: str) -> list[str]:
    """The parts of a lowercased summary sentence a flip is judged on: cut at
    :data:`_PART_RE` and wherever a child's clause would end (:data:`~compaction_audit.
    recall.clauses.CLAUSE_END_RE`, outside code: a colon, ``>``, a bracket ...), so a
    summary that copies "Keep the lock file: never delete it." or "Don't redirect stderr
    2>&1 when running the linter." word for word does not state the clause before the
    cut ("keep the lock file", "when running the linter") under the negation after it
    or before it (adv97 #1: both were flipped rules, CA304 errors).  A part a colon cut
    ends with it, as a label's ("update on the config: left untouched" opens with a
    noun, no imperative: :data:`_STATEMENT_RE`); "delete c:" before a cut at a
    backslash is an imperative still (usertest51 #3)."""
    cuts = sorted([*((m.start(), m.end()) for m in _PART_RE.finditer(sent)),
                   *((m.start(), m.end()) for m in CLAUSE_END_RE.finditer(mask_code(sent)))])
    if not cuts:
        return [sent]
    parts, at = [], 0
    for start, end in cuts:
        if start >= at:
            parts.append(sent[at:start] + (": " if sent[start] == ":" else ""))
            at = end
    parts.append(sent[at:])
    return parts


def vocabulary(summary_text: str) -> frozenset[str]:
    """What ``summary_text`` offers a token discriminator (see
    :func:`~compaction_audit.recall.survival.anchors.anchors`)."""
    return _index(summary_text).lookup.vocabulary

def _clause_key(d: Discriminator) -> tuple[Kind, str, list[str]]:
    """(kind, family, words) of a summary's clause ``d`` as its index files it: a
    double negation ("never X without Y") is the constraint ``must``."""
    family, *words = d.norm.split()
    if family == "not" and _double_negative(d.text):
        return Kind.CONSTRAINT, "must", words
    if (cancelled := cancelled_words(family, words, d.text)) is not None:
        return Kind.CONSTRAINT, "must", cancelled  # "do not forget to X" (adv117 P3)
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
    """Answers of :func:`~compaction_audit.recall.survival.check._decided` by what
    decides them (as :attr:`_Lookup.memo`)."""

    def remember(self, key: tuple[object, ...], answer: Callable[[], bool]) -> bool:
        """The memo's answer for ``key``, computed by ``answer`` the first time."""
        return _remember(self.memo, key, answer)


@lru_cache(maxsize=4096)
def _offered(summary: str) -> _Offered:
    """:class:`_Offered` of ``summary``, from :func:`extract_cached` alone; its
    :class:`_Index` takes these parts over."""
    clauses: dict[tuple[Kind, str], list[frozenset[str]]] = {}
    quantities = set()
    found = extract_cached(summary)
    last = (last_texts(summary) if any(d.kind is Kind.ORDERING and d.norm.startswith(
        "sequence ") for d in found) else {})  # an order's sides as last stated
    for d in found:
        if d.kind in CLAUSE_KINDS:
            kind, family, words = _clause_key(d)
            clauses.setdefault((kind, family), []).append(
                frozenset(words) - {">", "not"} if family == "must"
                else frozenset(words) - {">"} | side_tags(last.get(d.norm, d.text), words)
                if family == "sequence" else frozenset(words) - {">"})
        elif d.kind is Kind.QUANTITY:
            number, _, unit = d.norm.partition(" ")
            quantities.add((number, unit))
    quantities.update(spelled_values(summary)[0])  # "a 2-second timeout" (adv126 #7)
    return _Offered(
        clauses, {key: _Postings(cands) for key, cands in clauses.items()},
        {key: _Postings(frozenset(_stem(w) for w in c if not is_tag(w)) for c in cands)
         for key, cands in clauses.items()},
        frozenset(quantities),
        frozenset(m for number, unit in quantities if (m := measure(number, unit))))
