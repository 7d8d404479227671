"""Unsupported summary claims (issue 12, point 2; rule ``unsupported-summary-claim``):
a summary's discriminators, and its sentences without one, that no raw leaf below it
supports, with the chain of earlier summaries that carried them.

Support is a vocabulary test (words and stems of all raw leaves below the summary, built
once per node of the provenance DAG), lenient so that a summary in other words stays
quiet.  Standard library text work over a few texts per summary, each cached.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache, partial
from typing import Any

import polars as pl

from compaction_audit.closure import Closure, closure
from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall.beside import beside_words
from compaction_audit.recall.clauses import NEGATION_WORDS, content_words
from compaction_audit.recall.leafwords import WORD_RE, Below, bag, below, held, measure_token
from compaction_audit.recall.literals import Literals
from compaction_audit.recall.spantypes import clean_text
from compaction_audit.recall.survival.words import stem
from compaction_audit.recall.topics import topic_only
from compaction_audit.recall.versions import in_units, suffixed

__all__ = ["CLAIM_MAX_COVER", "CLAIM_MIN_WORDS", "SUPPORT_MAX_WORDS", "bag", "claims",
           "supports", "unsupported"]

_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+|\n")
_RULE_KINDS = frozenset({"negation", "constraint", "requirement", "condition"})
_VALUE_KINDS = frozenset({"identifier", "quantity", "version"})
CARRIER_MAX_CHECKS = 2_000_000
"""Most (claim, summary below) tests :func:`unsupported` makes per session to find the
summaries that carried each claim (its ``chain``).  The walk below the latest summary
stating each claim tests each of its claims against each summary below it: a chain of n
folds stating k claims each makes about n x n x k / 2 (adv75 #2: 1,000 folds of 20
claims, a 1.25 MB log, took 66 s).  Summaries are walked in log order; from the first
whose walk would pass the cap, their claims are reported without their carriers, and a
:class:`~compaction_audit.limits.Limit` says where it stopped."""

SUPPORT_MAX_WORDS = 20_000_000
"""Most words the support check reads into the summaries' leaf vocabularies in one
session (each child's words once per parent that does not take its set over,
:class:`_Vocab`); past it the remaining summaries are not checked and the rule says so."""
_META_RE = re.compile(r"(?i)\b(?:conversation|this session|summary|summari[sz]e|compaction"
                      r"|context window|transcript)\b")
_END_RE = re.compile(r"[.!?\n]")
"""A character that ends a sentence (for the bounds of the sentence a claim is in)."""
_ABSENCE_RE = re.compile(r"(?i)^\W*(?:no|none|nothing)\b")
_POINTER_RE = re.compile(r"(?i)read the full transcript at|if you need specific "
                         r"details from before|please continue the conversation from where"
                         r"|another language model started to solve this problem")
"""The product's own lines around a summary: Claude Code's closing pointer to the
transcript and the instruction after it, "Please continue the conversation from where
we left off ... Continue with the last task that you were asked to work on." (adv123
#7: its last sentence, no meta word in it, was a claim no leaf supports in every short
session: a faithful summary warned), and the line Codex opens a local compaction's
summary with (codex-rs ``templates/compact/summary_prefix.md``, one line: "Another
language model started to solve this problem ... You also have access to the state of
the tools that were used by that language model.  Use this to build on the work that
has already been done and avoid duplicating work.  Here is the summary ...:"; Codex
writes the summary on the next line; usertest68 #3: its two middle sentences were
claims no leaf supports, at every compaction)."""


def _drop_pointer(text: str) -> str:
    """``text`` without the product's pointer to the transcript and its closing
    instruction (:data:`_POINTER_RE`): each sentence holding one, from the last line end
    or full stop before the phrase to the end of its line.
    Linear: the phrase is searched, then the sentence found around it (a pattern
    starting with ``[^\\n.]*`` would rescan a long line from each position)."""
    out, at = [], 0
    for m in _POINTER_RE.finditer(text):
        if m.start() < at:
            continue
        start = max(text.rfind("\n", at, m.start()), text.rfind(".", at, m.start())) + 1
        end = text.find("\n", m.end())
        out.append(text[at:max(start, at)])
        out.append(" ")
        at = len(text) if end < 0 else end
    out.append(text[at:])
    return "".join(out)


def supports(d: ext.Discriminator, words: AbstractSet[str], stems: AbstractSet[str]) -> bool:
    """Whether a vocabulary (the words of a summary's raw leaves, or of an earlier
    summary, and their stems) supports claim ``d``: leniently, so that a summary in
    other words stays quiet.

    A clause is supported when at least half of its content stems occur; a token
    (number, identifier, version, scope, link) when every word part of its normalized
    form does ("45,000" and "45000 ms" both hold "45000").  It reads ``words`` and
    ``stems`` only for the terms :func:`_asked` lists.
    """
    content = _content(d)
    if content is not None:
        return not content or 2 * _held(content, words, stems) >= len(content)
    found = _parts(d)
    return (not found or all(p in words for p in found)
            or any(all(p in words for p in other) for other in _other_forms(d)))


@lru_cache(maxsize=65536)
def _terms(word: str) -> tuple[str, tuple[str, ...]]:
    """(stem, word parts) of one content word: what a vocabulary is asked about it
    (cached: the same words recur in every summary's claims)."""
    return stem(word), tuple(WORD_RE.findall(word))


def _held(content: AbstractSet[str], words: AbstractSet[str], stems: AbstractSet[str]) -> int:
    """How many ``content`` words a vocabulary holds: by stem, or every word part."""
    return sum(1 for w in content if (terms := _terms(w))[0] in stems
               or (terms[1] and all(p in words for p in terms[1])))


def _content(d: ext.Discriminator) -> set[str] | None:
    """A clause's content words (its normalized words but the kind, ">" and negation
    words); None for a token."""
    if d.kind not in ext.CLAUSE_KINDS:
        return None
    _, *parts = d.norm.split()
    return {w for w in parts if w != ">" and w not in NEGATION_WORDS}


def _parts(d: ext.Discriminator) -> list[str]:
    """The words that, all present, support token ``d``: the word parts of its
    normalized form (a quantity's number, not its unit); of a version with a suffix
    (:func:`~compaction_audit.recall.versions.suffixed`: a pre-, post- or dev-release, a
    local or build part), instead the norm as one word (``2.4.0rc1``, ``1.2.0.dev1``, a
    word :func:`~compaction_audit.recall.leafwords.bag` makes of "2.4.0-rc.1" and
    "1.2.0-dev.1" by the same norm).  adv91 #1: a summary that copied "Upgrade the
    client to 2.4.0-rc.1." word for word stated an unsupported version, an error, since
    the norm's part "0rc1" is no word of the raw text (adv93 #3: so did "1.2.0-dev.1" and
    "1.2.0+local.7"); read as separate words, an invented "2.4.0-rc.2" or "1.2.0a1" was
    found in "2.4.0-rc.1" or "1.2.0 and add a retry" (usertest44 #1, adv92 #1), and
    1.2.0rc1's parts in "Python 3.0rc1 on 1.2 hosts" (adv93 #2): the whole version must
    be there.  A requirement's operator is no part of the word (``>=0.1.0`` is a plain
    version, supported by its numbers)."""
    if d.kind is ext.Kind.VERSION:
        version = d.norm.lstrip("<>=!~^")  # a requirement's version (">=1.2.0.post1")
        if suffixed(version):
            return [version]
    norm = d.norm.split(" ", 1)[0] if d.kind is ext.Kind.QUANTITY else d.norm
    return WORD_RE.findall(norm)


@lru_cache(maxsize=4096)
def _other_forms(d: ext.Discriminator) -> tuple[tuple[str, ...], ...]:
    """The words that, all present, support a scope by another spelling of it
    (:data:`~compaction_audit.recall.extract.SCOPE_CANON`: "production" and "prd" are
    the scope ``prod``; adv97 #3: a summary copying "the production database" stated an
    unsupported scope), or a quantity ``d`` by its value in another unit of its
    dimension (:func:`~compaction_audit.recall.versions.in_units`): the leaf's measure
    token of that number and unit written together (:func:`~compaction_audit.recall.
    leafwords.measure_token`).  A leaf's "45000 ms" supports a summary's "45 s"
    (usertest49 #2); its "45000" beside "it's" supports no "45 s" (usertest50 #1: the
    number and a unit word anywhere did), nor "45 ms" (45000 us).  None for any other
    token."""
    if d.kind is ext.Kind.SCOPE:  # "production" is the scope prod (adv97 #3); one word
        return tuple((spelling,) for spelling, canon in ext.SCOPE_CANON.items()
                     if canon == d.norm and WORD_RE.fullmatch(spelling))  # (usertest52 #7)
    if d.kind is not ext.Kind.QUANTITY:
        return ()
    number, _, unit = d.norm.partition(" ")
    return tuple((measure_token(value, other),) for value, other in in_units(number, unit))


def _asked(found: Sequence[ext.Discriminator],
           sentences: Sequence[tuple[str, frozenset[str]]]) -> tuple[set[str], set[str]]:
    """(words, stems) that :func:`supports` and :func:`_covered` may look up for these
    claims and claim sentences: the word parts and the stem of each content word, and
    each token's word parts."""
    words: set[str] = set()
    stems: set[str] = set()
    contents: list[AbstractSet[str]] = [c for c in map(_content, found) if c is not None]
    contents += [content for _, content in sentences]
    for content in contents:
        for w in content:
            root, parts = _terms(w)
            stems.add(root)
            words.update(parts)
    for d in found:
        if d.kind not in ext.CLAUSE_KINDS:
            words.update(_parts(d))
            for other in _other_forms(d):
                words.update(other)
    return words, stems


@lru_cache(maxsize=4096)
def claims(text: str) -> tuple[ext.Discriminator, ...]:
    """The discriminators of a summary that are claims about the work: not in a
    sentence about the conversation or the summary itself ("No files were read in this
    conversation"), not the product's pointer to the transcript, not a bare statement of
    absence ("None.", "No errors encountered"), not a plain word in capitals
    ("JavaScript": an identifier needs a code character, a digit or backticks), not a
    markup tag's name (``<SYSTEM_NOTICE>``) and not a token cut short by an ellipsis
    (``/Users/a/deskto...``)."""
    body = _drop_pointer(clean_text(text))
    # sentence bounds found once, and each sentence tested once: linear in the text
    # however many discriminators one long sentence holds (issue 11, item 5)
    ends = [m.start() for m in _END_RE.finditer(body)]
    meta: dict[tuple[int, int], bool] = {}
    out = []
    for d in ext.extract(body):
        before = bisect_left(ends, d.start)
        sentence_start = ends[before - 1] + 1 if before else 0
        after = bisect_left(ends, d.end)
        sentence_end = ends[after] if after < len(ends) else len(body)
        key = (sentence_start, sentence_end)
        if key not in meta:
            meta[key] = _META_RE.search(body, sentence_start, sentence_end) is not None
        if meta[key]:
            continue
        if d.kind is ext.Kind.NEGATION and _ABSENCE_RE.match(d.text):
            continue
        if (d.kind is ext.Kind.IDENTIFIER and d.text.isalpha()
                and body[d.start - 1:d.start] != "`"):
            continue
        if d.kind not in ext.CLAUSE_KINDS and (_is_tag(body, d) or _is_cut(body, d)):
            continue
        out.append(d)
    return tuple(out)


def _is_tag(body: str, d: ext.Discriminator) -> bool:
    """``d`` is the name of a markup tag (``<SYSTEM_NOTICE>``, ``</task>``): a product's
    wrapper around its own text, not a claim about the work."""
    return body[d.end:d.end + 1] == ">" and (
        body[d.start - 1:d.start] == "<" or body[d.start - 2:d.start] == "</")


def _is_cut(body: str, d: ext.Discriminator) -> bool:
    """``d`` is cut short: an ellipsis (``...``, ``…``) follows it with no space, as a
    product writes when it truncates a path or command.  A cut token is never judged
    as if whole (issue: Cline notices, ``/Users/a/deskto...``)."""
    return body.startswith(("...", "\u2026"), d.end)


def _severity_class(kind: str) -> str:
    """"rule" (negation, constraint, requirement, condition), "value" (identifier,
    number, version) or "claim"."""
    return "rule" if kind in _RULE_KINDS else "value" if kind in _VALUE_KINDS else "claim"


class _Vocab:
    """The raw-leaf vocabulary below each node of the provenance DAG (memoized).

    A node's vocabulary is let go once every parent has taken it into its own and the
    node itself no longer waits to be checked (:meth:`done`): the memo holds the
    frontier of the DAG, not every node of the session (issue 14: the vocabularies of
    every leaf and summary of a 254 MB trace held 60 MB until the rule ended).

    A summary takes over the largest vocabulary of a summary child that nothing else
    will read (its last parent, and no longer waiting) and adds the other children's
    words to it, instead of copying it: along a chain of single-child folds each fold
    reads only its new leaves' words, not every word below it again (issue 11, class 5:
    a 5 MB chain of 198 folds over 100 new spans each built 1.97 million words per fold
    on average, 46 s).
    """

    def __init__(self, info: dict[str, tuple[Any, ...]], children: dict[str, list[str]],
                 waiting: set[str] | None = None):
        self.info, self.children = info, children
        self.memo: dict[str, tuple[AbstractSet[str], AbstractSet[str]] | None] = {}
        self.left = SUPPORT_MAX_WORDS
        """Words the vocabularies may still read (:data:`SUPPORT_MAX_WORDS`)."""
        self.built: dict[str, tuple[set[str], set[str]]] = {}
        """The memo's vocabularies built here, the ones a parent may take over (a
        leaf's are :func:`bag`'s, cached and shared: never changed)."""
        self.parents_left: dict[str, int] = {}
        """Per node, the parents (edges) whose vocabulary is not built yet."""
        for kids in children.values():
            for child in kids:
                self.parents_left[child] = self.parents_left.get(child, 0) + 1
        self.waiting = set(waiting or ())
        """Nodes the caller will ask for again (:meth:`done` removes them)."""

    def done(self, node: str) -> None:
        """The caller will not ask for ``node`` again: let its vocabulary go when no
        parent still needs it."""
        self.waiting.discard(node)
        self._release(node)

    def _release(self, node: str) -> None:
        if not self.parents_left.get(node) and node not in self.waiting:
            self.memo.pop(node, None)
            self.built.pop(node, None)

    def of(self, node: str) -> tuple[AbstractSet[str], AbstractSet[str]] | None:
        """(words, stems) of the raw leaves under ``node``; None when a leaf has no
        text or the budget is spent.  Iterative (a chain of thousands of folds is valid
        input): children are resolved before their parent.  The sets are valid until
        the next call (a parent may take them over)."""
        stack = [node]
        while stack:
            top = stack[-1]
            if top in self.memo:
                stack.pop()
                continue
            kind, text = self.info[top][0], self.info[top][1]
            if kind == "span":
                self.memo[top] = None if text is None else bag(text)
                stack.pop()
                continue
            pending = [c for c in self.children.get(top, ()) if c not in self.memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self.memo[top] = self._union(top)
        return self.memo[node]

    def _heir(self, kids: Sequence[str]) -> str | None:
        """The child whose vocabulary ``kids``' parent may take over: built here, the
        largest, read by no other parent (one edge left) and not waiting."""
        free = [c for c in kids if c in self.built and self.parents_left.get(c) == 1
                and c not in self.waiting]
        return max(free, key=lambda c: len(self.built[c][0]), default=None)

    def _union(self, node: str) -> tuple[AbstractSet[str], AbstractSet[str]] | None:
        kids = self.children.get(node, ())
        whole = all(self.memo[c] is not None for c in kids)
        heir = self._heir(kids) if whole else None
        words: set[str] = set()
        stems: set[str] = set()
        if heir is not None:  # taken over: no one reads it again
            words, stems = self.built.pop(heir)
            self.memo[heir] = None
        read = 0
        for child in kids if whole else ():
            below = self.memo[child]
            if child == heir or below is None:
                continue
            read += len(below[0])
            words.update(below[0])
            stems.update(below[1])
        for child in kids:  # this parent is built: children no one else needs go
            self.parents_left[child] -= 1
        for child in kids:
            self._release(child)
        if not whole:
            return None
        self.left -= read
        if self.left < 0:
            return None
        self.built[node] = (words, stems)
        return words, stems


def unsupported(session: Session, items: pl.DataFrame, links: Closure | None = None,
                limits: list[Limit] | None = None) -> tuple[pl.DataFrame, int]:
    """Claims of each summary (:func:`claims`) that no raw leaf supports (issue 12,
    point 2).

    Support is checked against the vocabulary of all raw leaves below the summary
    (:func:`supports`), so a claim drawn from several spans is supported; a claim that
    an earlier summary below it states (itself without raw support) is "carried":
    ``chain`` lists those summaries, oldest first, then this one.  Summaries with a leaf
    that has no text are not checked.  Returns (rows, number of rounds with a summary not
checked); rows:
    ``ri``, ``summary``, ``kind`` (a discriminator kind, or "claim" for a sentence
    without one that the leaves barely hold, :data:`CLAIM_MAX_COVER`), ``text``,
    ``norm``, ``claim`` ("rule", "value", "claim"),
    ``origin`` (the oldest summary of the chain, null when none), ``chain``; both only on
    the last row of each claim (``kind``, ``norm``), the latest summary stating it, which
    the rule reports (``chain`` null on the earlier rows).

    ``links``: the session's closure (built here when not given).  The vocabulary is
    looked up in Polars (:func:`~compaction_audit.recall.leafwords.below`, for the terms
    the claims ask about); where the walk over Python sets (:class:`_Vocab`) could
    spend its budget, that walk runs as before.
    """
    schema: dict[str, Any] = {"ri": pl.Int64, "summary": pl.String, "kind": pl.String,
                              "text": pl.String, "norm": pl.String, "claim": pl.String,
                              "origin": pl.String}  # then "chain", made below
    rows: dict[str, list[Any]] = {name: [] for name in schema}
    dag = below(session, items, links if links is not None else closure(session),
                SUPPORT_MAX_WORDS)
    if dag is None:
        info, folds, rows_of, unchecked = _walked(session, items, limits)
    else:
        info, folds = dag.info, dag.folds
        rows_of, unchecked = _joined(dag)
    rows_of = _kept_beside(session, items, info, rows_of)
    # the carriers of each claim at the latest summary stating it, the row the rule
    # reports, one walk per such summary: every row's chain repeated the summaries below
    # it (a chain of n folds carrying one claim walked and listed n x n / 2; issue 11,
    # class 5)
    last = {(row[1], row[3]): at for at, row in enumerate(rows_of)}
    reported: dict[str, list[int]] = {}
    for at in sorted(last.values()):
        reported.setdefault(rows_of[at][0], []).append(at)
    chains: dict[int, list[str]] = {}
    walk = _Walk(info)
    order = sorted(reported, key=lambda x: (info[x][2], info[x][3]))
    for k, summary in enumerate(order):
        ats = reported[summary]
        found = walk.carriers(summary, [rows_of[at][5] for at in ats], folds)
        if found is None:  # past the cap: this summary's claims and every later one's
            for rest in order[k:]:  # are reported without their carriers
                chains.update((at, []) for at in reported[rest])
            if limits is not None:
                ri, line = info[summary][2], info[summary][3]
                limits.append(Limit(
                    "unsupported-summary-claim", CARRIER_MAX_CHECKS,
                    "(claim, summary below) tests", f"summary {summary!r}",
                    int(session.rounds["round"][ri]), line, len(order) - k,
                    "summaries' claim carriers"))
            break
        chains.update(zip(ats, found, strict=True))
    # each chain as (row, summary) pairs, made lists by Polars: a list column built from
    # Python lists cost 4.6 KB per row (adv84 #5: 100,000 claims of a 1.5 MB summary
    # took 470 MB there)
    at_of: list[int] = []
    chained: list[str] = []
    for at, (summary, kind, text, norm, claim, _) in enumerate(rows_of):
        chain = chains.get(at)
        for name, value in zip(schema, (info[summary][2], summary, kind, text, norm, claim,
                                        chain[0] if chain else None), strict=True):
            rows[name].append(value)
        if chain is not None:
            at_of += [at] * (len(chain) + 1)
            chained += [*chain, summary]
    listed = (pl.DataFrame({"at": at_of, "chain": chained},
                           schema={"at": pl.UInt32, "chain": pl.String})
              .group_by("at", maintain_order=True).agg("chain"))
    return (pl.DataFrame(rows, schema=schema).with_row_index("at")
            .join(listed, on="at", how="left", maintain_order="left").drop("at"),
            len(unchecked))


def _kept_beside(session: Session, items: pl.DataFrame, info: dict[str, tuple[Any, ...]],
                 rows_of: list[_Row]) -> list[_Row]:
    """``rows_of`` less the claims of a product's summary (one written at a round with
    a ``compaction`` record: an adapter's) that a raw span in the working set beside it,
    in that round, supports (:func:`supports`; a claim sentence:
    :data:`CLAIM_MAX_COVER` of its words).  A product writes its summary from the whole
    context and keeps some of it verbatim beside the summary (the person's messages in
    Codex's ``replacement_history``, Claude Code's preserved segment): a summary that
    restates one invents nothing (adv84 #1: "The user asked to pin lib2==1.2.0" over the
    kept request was an error).  A native log's fold names its own sources (the spec's
    "no child supports"), so its summaries keep to their leaves.  The terms are looked
    up in Polars, once per summary with a claim
    (:func:`~compaction_audit.recall.beside.beside_words`)."""
    written = {c["ri"] for c in session.compactions}
    flagged = list(dict.fromkeys(row[0] for row in rows_of if info[row[0]][2] in written))
    if not flagged:
        return rows_of
    bags = beside_words(session, items, {
        s: _asked(claims(info[s][1]), _claim_sentences(info[s][1])) for s in flagged})
    kept = []
    for row in rows_of:
        found = bags.get(row[0])
        if found is not None and (
                _covered(frozenset(row[3].split()[1:]), *found) >= CLAIM_MAX_COVER
                if row[1] == "claim" else row[5](found)):
            continue
        kept.append(row)
    return kept


Bag = tuple[frozenset[str], frozenset[str]]
"""(words, stems) of one text (:func:`bag`)."""


_Row = tuple[str, str, str, str, str, Callable[[Bag], bool]]
"""(summary, kind, text, norm, claim class, whether a vocabulary states it)."""


def _judged(summary: str, text: str, found: Sequence[ext.Discriminator],
            sentences: Sequence[tuple[str, frozenset[str]]],
            words: AbstractSet[str], stems: AbstractSet[str]) -> list[_Row]:
    """The rows of ``summary``'s claims (``found``: :func:`claims` of its ``text``) and
    claim sentences that its leaves' vocabulary (``words``, ``stems``) does not
    support."""
    lost = _tokens_held(found, [d for d in found if not supports(d, words, stems)],
                        words, stems)
    out: list[_Row] = [(summary, d.kind.value, d.text, d.norm, _severity_class(d.kind.value),
                        partial(_states_token, d)) for d in lost]
    out += [(summary, "claim", sentence, "claim " + " ".join(sorted(content)),
             "claim", partial(_states_sentence, content))
            for sentence, content in _bare_claims(text, lost, words, stems, sentences)]
    return out


def _tokens_held(found: Sequence[ext.Discriminator], lost: list[ext.Discriminator],
                 words: AbstractSet[str], stems: AbstractSet[str]
                 ) -> list[ext.Discriminator]:
    """``lost`` (the claims of ``found`` the vocabulary does not support) without the
    clauses supported once the words of the supported tokens inside them are held: a
    token is judged by its own rule, which knows its other forms (usertest52 #1: "Keep
    logs 7 days" for a leaf's "Keep logs 1 week" was an unsupported constraint, "7" and
    "days" no words of the leaf, though the quantity "7 days" is the leaf's "1 week").
    The rest of the clause is held as any clause is, by half its content words: a
    supported token does not carry an invented rule ("Never disable auth for 7 days"
    beside "Retention is 1 week", adv99 #4), and an unsupported token inside ("Keep
    logs 9 days") gains nothing."""
    clauses = [d for d in lost if d.kind in ext.CLAUSE_KINDS]
    if not clauses:
        return lost
    gone = {id(d) for d in lost}
    kept = [t for t in found if t.kind not in ext.CLAUSE_KINDS and id(t) not in gone]
    drop: set[int] = set()
    for d in clauses:
        content = _content(d) or set()
        inside = {w for t in kept if d.start <= t.start and t.end <= d.end
                  for w in WORD_RE.findall(t.text.lower())} & content
        rest = content - inside  # held by the same half as any clause (adv99 #4: "Never
        if inside and 2 * _held(rest, words, stems) >= len(rest):  # disable auth for 7
            drop.add(id(d))  # days" was supported by "Retention is 1 week" alone)
    return [d for d in lost if id(d) not in drop]


def _joined(dag: Below) -> tuple[list[_Row], set[int]]:
    """The rows of every summary of ``dag.order`` and the rounds of those not checked,
    the vocabulary looked up in Polars for the terms the claims ask about
    (:func:`~compaction_audit.recall.leafwords.held`): Python reads each summary's
    text, not its leaves' words."""
    info = dag.info
    todo = [(s, info[s][1], claims(info[s][1]), _claim_sentences(info[s][1]))
            for s in dag.order if s not in dag.lacking]
    # the terms asked once per distinct text (summaries repeat their texts), then
    # given to each summary that states it by a join
    number: dict[str, int] = {}
    asked: dict[str, list[Any]] = {"u": [], "term": [], "stem": []}
    for _, text, found, sentences in todo:
        if text not in number:
            words, stems = _asked(found, sentences)
            asked["u"] += [len(number)] * (len(words) + len(stems))
            asked["term"] += [*words, *stems]
            asked["stem"] += [False] * len(words) + [True] * len(stems)
            number[text] = len(number)
    stating = pl.DataFrame({"s": [dag.rows[s] for s, *_ in todo],
                            "u": [number[text] for _, text, *_ in todo]},
                           schema={"s": pl.UInt32, "u": pl.Int64})
    hits = held(dag.pairs, dag.words, stating.join(pl.DataFrame(
        asked, schema={"u": pl.Int64, "term": pl.String, "stem": pl.Boolean}), on="u")
        .drop("u")).group_by("s", "stem").agg("term")
    del asked, stating
    vocab: dict[int, tuple[set[str], set[str]]] = {}
    for s, is_stem, terms in zip(hits["s"].to_list(), hits["stem"].to_list(),
                                 hits["term"].to_list(), strict=True):
        vocab.setdefault(s, (set(), set()))[is_stem].update(terms)
    none: tuple[set[str], set[str]] = (set(), set())
    rows_of: list[_Row] = []
    for s, text, found, sentences in todo:
        rows_of += _judged(s, text, found, sentences, *vocab.get(dag.rows[s], none))
    return rows_of, {info[s][2] for s in dag.order if s in dag.lacking}


def _walked(session: Session, items: pl.DataFrame, limits: list[Limit] | None = None
            ) -> tuple[dict[str, tuple[Any, ...]], dict[str, list[str]], list[_Row], set[int]]:
    """(info, folds, rows, rounds not checked) with each summary's vocabulary built as
    Python sets up the DAG (:class:`_Vocab`), within :data:`SUPPORT_MAX_WORDS`.  Where
    the budget is spent, the summaries left are not checked and ``limits`` says so
    (adv103 #1: it was only a note's "or the check budget was spent", and a log padded
    past it passed a gate its claim failed)."""
    edges = session.edges.select("parent", "child")
    # only items of the provenance DAG are read: a session's unfolded spans are not
    nodes = items.filter(pl.col("id").is_in(pl.concat([edges["parent"], edges["child"]])
                                           .implode())).select("id", "kind", "text", "ri", "line")
    info = dict(zip(nodes["id"].to_list(),
                    zip(nodes["kind"].to_list(), nodes["text"].to_list(), nodes["ri"].to_list(),
                        nodes["line"].to_list(), strict=True), strict=True))
    del nodes
    children: dict[str, list[str]] = {}
    for parent, child in zip(edges["parent"].to_list(), edges["child"].to_list(), strict=True):
        if child in info:
            children.setdefault(parent, []).append(child)
    order = sorted((s for s in children if s in info and info[s][1]),
                   key=lambda s: (info[s][2], info[s][3]))
    vocab = _Vocab(info, children, set(order))
    # the summaries among each node's children, in order: a claim's carriers are walked
    # over these alone, not over every raw leaf once per claim (issue 11, class 5: one
    # summary over 5,000 spans with 70,000 claims took 150 s)
    folds = {p: [c for c in cs if info[c][0] == "summary"] for p, cs in children.items()}
    unchecked: set[int] = set()
    rows_of: list[_Row] = []
    for k, summary in enumerate(order):
        vocabulary = vocab.of(summary)
        vocab.done(summary)  # ``vocabulary`` is held here while this summary is checked
        if vocabulary is None and vocab.left < 0:  # the budget is spent: so for the rest
            unchecked.update(info[s][2] for s in order[k:])
            if limits is not None:
                limits.append(Limit(
                    "unsupported-summary-claim", SUPPORT_MAX_WORDS, "leaf words read",
                    f"summary {summary!r}", int(session.rounds["round"][info[summary][2]]),
                    info[summary][3], len(order) - k, "summaries"))
            break
        if vocabulary is None:
            unchecked.add(info[summary][2])
            continue
        text = info[summary][1]
        rows_of += _judged(summary, text, claims(text), _claim_sentences(text), *vocabulary)
    return info, folds, rows_of, unchecked


CLAIM_MIN_WORDS = 5
"""A sentence without a discriminator is judged as a claim only with at least this many
distinct content stems (shorter ones are headings and connective phrases)."""
CLAIM_MAX_COVER = 0.2
"""A sentence is unsupported when less than this share of its content words occurs
among the raw leaves ("A tool result carried an injected instruction" over leaves that
never speak of one; issue 12, point 2).  Measured on the corpus: the faithful
summaries' sentences of five or more words cover 0.25 and more."""


def _states_token(d: ext.Discriminator, bag: Bag) -> bool:
    return supports(d, *bag)


def _states_sentence(content: frozenset[str], bag: Bag) -> bool:
    return _covered(content, *bag) >= 0.5


def _covered(content: frozenset[str], words: AbstractSet[str], stems: AbstractSet[str]) -> float:
    """Share of ``content`` words a vocabulary holds (by stem, or every word part)."""
    return _held(content, words, stems) / len(content) if content else 1.0


@lru_cache(maxsize=4096)
def _claim_sentences(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The sentences of a summary that may be claims (not about the conversation, not
    naming only what was worked on: :func:`~compaction_audit.recall.topics.topic_only`,
    usertest38 #5; five or more content stems), each with its content words; cached
    per text."""
    body = _drop_pointer(clean_text(text))
    out = []
    for raw in _SPLIT_RE.split(body):
        sentence = raw.strip()
        if not sentence or _META_RE.search(sentence) or topic_only(sentence):
            continue
        content = frozenset(w for w in content_words(sentence.lower(), 60)
                            if w not in NEGATION_WORDS)
        if len({stem(w) for w in content}) >= CLAIM_MIN_WORDS:
            out.append((sentence[:300], content))
    return tuple(out)


_DIRECT_TEXTS = 32
"""Up to this many discriminator texts, :func:`_bare_claims` tests each sentence with
``in`` per text (cheaper than the automaton for a few; bounded per sentence)."""


def _bare_claims(text: str, found: Sequence[ext.Discriminator], words: AbstractSet[str],
                 stems: AbstractSet[str],
                 sentences: Sequence[tuple[str, frozenset[str]]] | None = None
                 ) -> list[tuple[str, frozenset[str]]]:
    """Sentences of a summary (:func:`_claim_sentences`; holding no unsupported
    discriminator already) whose content words the leaves barely hold
    (:data:`CLAIM_MAX_COVER`): ``(sentence, content words)``.  ``sentences``: the
    text's :func:`_claim_sentences`, when the caller has them."""
    sentences = _claim_sentences(text) if sentences is None else sentences
    if not sentences:
        return []
    texts = list(dict.fromkeys(d.text for d in found))
    # one pass per sentence over all the texts when there are many: a test of each
    # sentence against each text was sentences x texts (issue 11, class 5, eighth
    # adversarial pass F5: 10,000 sentences and 10,000 numbers took 53 s)
    holds: Callable[[str], bool] = (
        Literals(texts).any_in if len(texts) > _DIRECT_TEXTS
        else lambda sentence: any(t in sentence for t in texts))
    return [(sentence, content) for sentence, content in sentences
            if not holds(sentence) and _covered(content, words, stems) < CLAIM_MAX_COVER]


class _Walk:
    """The walks of :func:`unsupported` below each summary that reports claims, within
    :data:`CARRIER_MAX_CHECKS` tests in all; each summary text's words are read once
    for every walk (:func:`bag`: a chain of n folds read n x n / 2 texts)."""

    def __init__(self, info: dict[str, tuple[Any, ...]]) -> None:
        self.info = info
        self.left = CARRIER_MAX_CHECKS
        self.bags: dict[str, Bag] = {}

    def carriers(self, summary: str, states: list[Callable[[Bag], bool]],
                 children: dict[str, list[str]]) -> list[list[str]] | None:
        """Per claim (each given by whether a vocabulary ``states`` it), the summaries
        below ``summary`` whose text states it, oldest first; None, nothing spent, when
        the walk (a test per claim for each summary below, with or without text, and
        one per edge followed) would pass what is left of the cap.  ``children``: each node's
        children; only summaries are walked."""
        info = self.info
        # a summary visited costs a test per claim, with text or without (adv76 #1:
        # 40,000 summaries without text under each of 2,000 walks cost nothing: 58 s, no
        # limit line), and each edge followed one more (adv77 #2: a summary over 1,000
        # that each fold the same 1,000 made a million pops per walk, uncounted)
        each = max(len(states), 1)
        below: list[str] = []
        stack = [c for c in children.get(summary, ()) if info[c][0] == "summary"]
        seen = set(stack)
        spent = len(stack)
        while stack:
            node = stack.pop()
            spent += each
            if spent > self.left:
                return None
            if info[node][1]:
                below.append(node)
            kids = children.get(node, ())
            spent += len(kids)
            for kid in kids:
                if kid not in seen and info[kid][0] == "summary":
                    seen.add(kid)
                    stack.append(kid)
        self.left -= spent
        found: list[list[str]] = [[] for _ in states]
        for node in below:
            words = self.bags.get(node)
            if words is None:
                words = self.bags[node] = bag(info[node][1])
            for out, test in zip(found, states, strict=True):
                if test(words):
                    out.append(node)
        return [sorted(f, key=lambda s: (info[s][2], info[s][3])) for f in found]
