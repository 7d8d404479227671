"""Survival's checks: whether a summary still states, drops or flips a discriminator.

:func:`survives`, :func:`dropped`, :func:`flipped` and :func:`flip_sentence` compare a
discriminator found in a child span with a summary's index
(:mod:`~compaction_audit.recall.survival.index`).  Callers that count or replace
``survives`` (tests) patch it here: :func:`dropped` and :func:`flipped` read it from this
module.  Pure standard library.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from compaction_audit.recall import paraphrase
from compaction_audit.recall.bindings import bound_name
from compaction_audit.recall.extract import CLAUSE_KINDS, Discriminator, Kind, extract_cached
from compaction_audit.recall.survival.anchors import _anchors
from compaction_audit.recall.survival.bindings import (
    bound_elsewhere,
    bound_kept,
    summary_bindings,
)
from compaction_audit.recall.survival.flips import (
    _FLIP_KINDS,
    _flip_evidence,
    _flip_tags,
    _restated_last,
    _sentence_lookup,
)
from compaction_audit.recall.survival.formats import month_day
from compaction_audit.recall.survival.index import _Index, _index, _offered, path_ends
from compaction_audit.recall.survival.order import reversed_in, sides
from compaction_audit.recall.survival.postings import _Postings
from compaction_audit.recall.survival.withdrawn import withdrawn, without_struck
from compaction_audit.recall.survival.withheld import without_withheld
from compaction_audit.recall.survival.words import (
    _HEAD,
    _HEX_RE,
    _MARKER_IS_CONTENT,
    _TOPIC,
    _WORD_RE,
    _basename,
    _content_stems,
    _is_key,
    _module_key,
    _polarity,
    _stem,
    cancelled_words,
)
from compaction_audit.recall.versions import admitted, measure, suffixed, vtuple


def _decided(d: Discriminator, summary_text: str) -> bool | None:
    """:func:`survives` of ``d`` when the summary's own discriminators decide it
    (:func:`~compaction_audit.recall.survival.index._offered`), None when it needs the
    summary's :class:`~compaction_audit.recall.survival.index._Index` (issue 14: a
    summary or user text compared only with such items is never indexed; the
    asked-again check built about 2,600 indexes of user texts for two lost items on
    the 254 MB 10,000 x 2,000 text cell of the benchmark grid).

    * A quantity with a unit survives exactly when the summary has the same (number,
      unit) or the same measure: both come from the summary's quantities only.
    * A clause of a kind never paraphrased nor flipped (:data:`_SELF_DECIDED`: causal,
      ordering, ruled-out) whose marker is its fact
      (:data:`~compaction_audit.recall.survival.words._MARKER_IS_CONTENT`: because,
      sequence, revert, ruled) survives exactly when :func:`_clause_survives`
      says so, which then skips its sentence test and reads only the summary's clauses
      (:func:`_by_clause`).
    """
    if d.kind is Kind.QUANTITY:
        number, _, unit = d.norm.partition(" ")
        if not unit or bound_name(d) is not None:  # a bound value: its summary's bindings
            return None
        offered = _offered(summary_text)
        base = measure(number, unit)
        return (number, unit) in offered.quantities or (base is not None
                                                       and base in offered.measures)
    if d.kind in _SELF_DECIDED:
        family, words = _split_norm(d.norm)
        if family in _MARKER_IS_CONTENT:
            offered = _offered(summary_text)
            return _by_clause(d.kind, family, words, offered.clause_words,
                              offered.clause_stems, offered.remember, _order(d, family, words))
    return None


def _sentence_survives(words: tuple[str, ...], idx: _Index, negative: bool) -> bool:
    """Most (more than half) of the stemmed content words in one summary sentence of the
    same polarity, whatever its marker (issue 10, point 3).  A long one (more than
    :data:`~compaction_audit.recall.survival.words._HEAD` distinct stems) also survives
    when most of its first five stems are in one such sentence, one of them no topic of
    the summary (:func:`_by_head`): a spec bullet leads with its fact and trails
    qualifications ("Flash reports accurate closure count for both non-empty and empty
    cases" is kept by "flash ... showing closure count")."""
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
                   or (head is not None and _by_head(head & cand, post)) for cand in cands)

    # only the stems some sentence holds can be shared: they decide the answer
    post = sentences.post
    return idx.lookup.remember(
        ("sentence", negative, need, frozenset(w for w in stems if w in post),
         None if head is None else frozenset(w for w in head if w in post)), answer)


def _by_head(shared: set[str] | frozenset[str], post: dict[str, list[int]]) -> bool:
    """Most of a long clause's head stems (``shared``: those one sentence holds), one
    of them no topic of the summary (in at most :data:`~compaction_audit.recall.
    survival.words._TOPIC` of its distinct sentences of the clause's polarity, ``post``:
    stem -> those sentences)."""
    return len(shared) > _HEAD // 2 and any(len(post.get(w, ())) <= _TOPIC for w in shared)


@lru_cache(maxsize=1 << 16)
def _split_norm(norm: str) -> tuple[str, tuple[str, ...]]:
    """A clause's norm as (family, words): read once per norm, not once per summary
    it is compared with (issue 14)."""
    family, *words = norm.split()
    return family, tuple(words)


@lru_cache(maxsize=1 << 16)
def _parts(words: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    """(identifier-like words, the same as a set, stems of every word but ">") of a
    clause's ``words``, as :func:`_by_clause` reads them: once per clause, not once per
    summary it is compared with (issue 14)."""
    keys = tuple(w for w in words if _is_key(w))
    return keys, frozenset(keys), frozenset({_stem(w) for w in words if w != ">"})


def _clause_survives(d: Discriminator, idx: _Index) -> bool:
    family, words = _split_norm(d.norm)
    negative, kind = _polarity(d), d.kind
    if family == "not" and not negative:  # "never X without Y": compare as "must Y"
        cancelled = cancelled_words(family, words, d.text)  # "never forget to X": X
        if cancelled is not None:  # as "must X", else as stated ("never neglect
            return (_compared(d, Kind.CONSTRAINT, "must", tuple(cancelled), idx, False)
                    or _compared(d, kind, family, words, idx, True))  # signing": adv117)
        kind, family = Kind.CONSTRAINT, "must"
        words = tuple(w for w in words if w != "not")
    return _compared(d, kind, family, words, idx, negative)


def _compared(d: Discriminator, kind: Kind, family: str, words: tuple[str, ...],
              idx: _Index, negative: bool) -> bool:
    """:func:`_clause_survives` of ``d`` read as ``kind``, ``family``, ``words`` and
    polarity ``negative``."""
    if family not in _MARKER_IS_CONTENT and _sentence_survives(words, idx, negative):
        return True
    if d.kind is Kind.REQUIREMENT:
        return False
    return _by_clause(kind, family, words, idx.lookup.clause_words, idx.lookup.clause_stems,
                      idx.lookup.remember, _order(d, family, words))


def _order(d: Discriminator, family: str, words: tuple[str, ...]
           ) -> tuple[frozenset[str], frozenset[str]] | None:
    """The identifier-like words of a sequence clause ``d`` first and second in time
    (:func:`~compaction_audit.recall.survival.order.sides`), which a summary clause
    matched by them must not put the other way round; None for any other clause, or
    one with no identifier-like word on either side: an order of plain words is matched
    by two shared stems, too loosely to say which side a word is on, and such orders
    change with the work ("the filter icon is rendered before the button", then
    reordered: the summary states the new order; Cline corpus, usertest53 #2)."""
    if family != "sequence" or (found := sides(d.text, words)) is None:
        return None
    key_set = _parts(words)[1]
    first, second = found[0] & key_set, found[1] & key_set
    return (first, second) if first or second else None


def _by_clause(kind: Kind, family: str, words: tuple[str, ...],
               clause_words: dict[tuple[Kind, str], _Postings],
               clause_stems: dict[tuple[Kind, str], _Postings],
               remember: Callable[[tuple[object, ...], Callable[[], bool]], bool],
               order: tuple[frozenset[str], frozenset[str]] | None = None) -> bool:
    """A summary clause of ``(kind, family)`` (``clause_words``, ``clause_stems``:
    :class:`~compaction_audit.recall.survival.index._Offered`) that holds every
    identifier-like word of ``words`` (a path also by its file name; a bound's number is
    none when it bounds a word) or, when there is none, shares two of their stems (or one, when
    there is one; any clause of the family when there is none).  ``order``: a sequence
    clause's identifier-like words (first, second in time: :func:`_order`), which the
    summary clause must not reverse (:func:`~compaction_audit.recall.survival.order.reversed_in`;
    usertest53 #2: "the deploy goes before migration 0047" kept "Apply migration 0047
    before the deploy")."""
    keys, key_set, stems = _parts(words)
    if keys and family in _BOUNDS and all(_NUMBER_RE.fullmatch(k) for k in keys) \
            and len(stems) > len(keys):
        keys = ()  # a bound's number alone is no key: "Keep at most 5 workers" kept "at
        # most 5 retries"; its stems are (two of them: the number and what it bounds)
    if keys:  # every identifier-like word, a path also by its file name
        clauses = clause_words.get((kind, family))
        if clauses is None:
            return False
        return remember(("keys", kind, family, key_set, order), lambda: any(
            all(k in cand or ("/" in k and _basename(k) in cand) for k in keys)
            and (order is None or not reversed_in(order, cand))
            for cand in _holding_key(clauses, keys)))
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


_BOUNDS = frozenset({"max", "min"})
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")


def _holding_key(clauses: _Postings, keys: tuple[str, ...]) -> Iterator[frozenset[str]]:
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
    character right before or after it, and does not go on as the same token: a flag
    followed by ``-`` and a word character (``--force`` is not in "--force-conflicts"),
    a token ending in a digit followed by ``.`` and a digit (``gqc.5`` is not in
    "gqc.5.1"); "Node.js-based", "gqc.5-specific" and a sentence's full stop ("...
    gqc.5. Then") still state it (adv52)."""
    end = len(norm)
    flag = norm.startswith("-") and norm[-1:].isalnum()
    number = norm[-1:].isdigit()
    for at in places:
        before = low[at - 1] if at else " "
        after = low[at + end] if at + end < len(low) else " "
        if (before.isalnum() or before == "_") or (after.isalnum() or after == "_"):
            continue
        then = low[at + end + 1] if at + end + 1 < len(low) else " "
        if (flag and after == "-" and (then.isalnum() or then == "_")) or (
                number and after == "." and then.isdigit()):
            continue
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


def _unstruck_survives(d: Discriminator, summary: str) -> bool:
    """Clause ``d`` survives in ``summary`` once what it strikes through is blanked
    (:func:`~compaction_audit.recall.survival.withdrawn.without_struck`; adv108 #4: a
    rule struck through was kept); true at once for a summary that strikes nothing."""
    plain = without_struck(summary)
    return plain is summary or survives(d, plain)


def _survives_in(d: Discriminator, idx: _Index) -> bool:
    """:func:`survives` by the summary's index (what :func:`_decided` decides without
    it is decided alike here)."""
    norm = d.norm
    anchors = _anchors(d.kind, d.text, norm)
    if anchors is not None and anchors.isdisjoint(idx.lookup.vocabulary):
        return False
    if d.kind in CLAUSE_KINDS:  # a reversed rule is not kept (issue 12, point 1)
        stated, flips = bool(_clause_survives(d, idx) or _paraphrased(d, idx)), idx
        if not stated and (rest := without_withheld(d, idx.summary)) is not idx.summary:
            stated, flips = True, _index(rest)  # its object kept out of its act (adv126 #1)
        return (stated and (not _flip_evidence(d, flips) or _restated_last(d, flips))
                and not withdrawn(d, idx.summary)  # nor one marked lifted (adv108 #4)
                and _unstruck_survives(d, idx.summary))
    if (name := bound_name(d)) is not None:
        kept = bound_kept(d, name, summary_bindings(idx.summary))
        if kept is not None:
            return kept  # the summary binds the name: to this value? (usertest38 #3)
        if bound_elsewhere(d, name, idx.summary):
            return False  # only another name's value (adv108 #1)
    if d.kind is Kind.QUANTITY:
        number, _, unit = norm.partition(" ")
        if not unit:
            return number in idx.keys
        base = measure(number, unit)
        return (number, unit) in idx.quantities or (base is not None
                                                    and base in idx.measures)
    if d.kind is Kind.VERSION and norm[:1].isdigit():
        if norm in idx.keys:
            return True  # a suffix (1.2.0rc1): by its norm only (adv88 #4)
        return not suffixed(norm) and admitted(vtuple(norm), idx.lookup.requirements)
    if d.kind is Kind.SCOPE:  # a date also by its month and day (adv126 #7)
        return norm in idx.scopes or norm in idx.keys or month_day(norm) in idx.scopes
    if norm in idx.keys or _raw_in(norm, idx):
        return True
    if d.kind is Kind.IDENTIFIER and (key := _module_key(d.text)) and key in idx.modules \
            and not _other_file(d.text, key, idx.summary):
        return True
    if "/" in norm or "\\" in norm:
        path = norm.rstrip("/\\")
        last = _basename(path)  # a file name, not a URL's or a folder's last part (adv52)
        # a summary's path ends this one after a "/", or this one ends a summary's
        # path after a "/": set look-ups, not a pass over the summary's paths (adv78 #1)
        return ((_FILE_NAME.fullmatch(last) is not None and last in idx.keys)
                or path in idx.lookup.path_ends
                or any(end in idx.lookup.path_whole for end in path_ends(path)))
    if norm.startswith("migration "):
        return norm.removeprefix("migration ") in idx.keys
    if _HEX_RE.fullmatch(norm):  # a hash by a prefix: a sorted neighbour, a key prefix
        hashes, at = idx.lookup.hashes, bisect_left(idx.lookup.hashes, norm)
        return ((at < len(hashes) and hashes[at].startswith(norm))
                or any(norm[:n] in idx.lookup.hash_set for n in range(7, len(norm) + 1)))
    if ("..." in norm or "\u2026" in norm) and (  # elided: its parts, in order (usertest8)
            parts := _elided_parts(norm)) is not None:
        return _parts_in_order(parts, idx.low)
    return " " in norm and norm in idx.low


def _other_file(text: str, key: str, summary: str) -> bool:
    """Whether the child's ``text`` is a file (a lower-case extension of at most five
    letters or digits) and the summary names files of the same module ``key`` only
    with other extensions: ``config.yaml`` is not kept by "config.json" (adv52), nor
    ``docker-compose.yaml`` by "docker-compose.json" or ``MyConfig.yaml`` by
    "MyConfig.json" (adv79 #5: the summary's names were compared as written, never
    equal to a module key), where ``annotation_message_ref.ex`` is kept by the module
    ``Spotter.Transcripts.AnnotationMessageRef``."""
    base = re.split(r"[/\\]", text)[-1]
    ext = base.rsplit(".", 1)[-1] if "." in base.strip(".") else ""
    if not (ext[:1].islower() and len(ext) <= 5 and ext.isalnum()):  # `Renderer.render`
        return False  # is a function of a module, no file (its module still keeps it)
    named = _extensions(summary).get(key)
    return named is not None and ext.lower() not in named


_NAMED_FILE = re.compile(r"(?<![\w-])(?=([\w-]+)\.([a-zA-Z]\w{0,7})\b)")
r"""A file name at each start of a ``[\w-]`` run: the run (the module) and the
extension after its dot."""


@lru_cache(maxsize=16)
def _extensions(summary: str) -> dict[str, frozenset[str]]:
    """Each module of ``summary`` named as a file (by its key,
    :func:`~compaction_audit.recall.survival.words._module_key`) -> the extensions it is
    named with, lower-cased, in one pass over the summary (adv78 #1: a pass per file
    name checked made the cost files x summary length, 10-17 s for 0.15 MB)."""
    found: dict[str, set[str]] = {}
    for m in _NAMED_FILE.finditer(summary):
        ext = m.group(2)
        key = _module_key(f"{m.group(1)}.{ext.lower()}")
        if key:
            found.setdefault(key, set()).add(ext.lower())
    return {k: frozenset(v) for k, v in found.items()}


_FILE_NAME = re.compile(r"(?=.*[a-z])[\w.-]*\w[._-]\w[\w.-]*")
"""A last part of a path distinctive enough to name it alone: a compound token with a
letter (``staging.toml``, ``nas-02``, ``spotter-gqc``); ``412`` of a pull request's URL,
``api`` or ``main`` of a folder are plain words of any summary (adv52: a link was kept
by "Fixed 412 failing tests")."""
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|\u2026)\s*")
"""An ellipsis, which stands for text its writer left out (``ALTER TABLE ... modify``,
``foo(…)``)."""


_WORDY = re.compile(r"\w\w")
"""A part of an elided identifier that says something: two word characters together."""


def _elided_parts(norm: str) -> list[str] | None:
    """The parts of an identifier with an ellipsis that carry it (punctuation-only parts
    left out: the ``)`` of ``render(…)``), or None when a part is too short to carry
    anything (``a ... b``, ``x...``) or none is left (``(…)``): such an identifier
    survives only as it is written."""
    parts = [p for p in (part.strip() for part in _ELLIPSIS.split(norm)) if p]
    kept = [p for p in parts if any(c.isalnum() for c in p)]
    if not kept or any(not _WORDY.search(p) for p in kept):
        return None
    return kept


def _parts_in_order(parts: list[str], low: str) -> bool:
    """Whether every part of ``parts`` is in ``low``, each after the one before and not
    inside a longer word or flag (adv50: ``install`` is not in "uninstall", ``--force``
    not in "--force-conflicts", ``bar`` not in "sidebar"): ``ALTER TABLE ... modify``
    survives as "ALTER TABLE MODIFY" or "ALTER TABLE t MODIFY"."""
    at = 0
    for part in parts:
        found = _next_part(part, low, at)
        if found is None:
            return False
        at = found
    return True


_RUN = re.compile(r"[\w-]+")


@lru_cache(maxsize=16)
def _runs(low: str) -> dict[str, list[int]]:
    r"""Where each ``[\w-]`` run of ``low`` starts, in order, built once per summary."""
    starts: dict[str, list[int]] = {}
    for m in _RUN.finditer(low):
        starts.setdefault(m.group(), []).append(m.start())
    return starts


@lru_cache(maxsize=4096)
def _part_pattern(part: str) -> re.Pattern[str]:
    """The pattern of ``part`` not inside a longer word or flag."""
    head = r"(?<![\w-])" if part[0].isalnum() or part[0] in "_-" else ""
    tail = r"(?![\w-])" if part[-1].isalnum() or part[-1] == "_" else ""
    return re.compile(head + re.escape(part) + tail)


def _first_run(part: str) -> str | None:
    r"""The ``[\w-]`` run every match of ``part`` starts with as a whole run of the
    summary, or None when a match need not start one (a part that starts with other
    punctuation, or one run ending in ``-``, which a longer run may continue)."""
    first = _RUN.match(part)
    if first is None or (first.end() == len(part) and not (part[-1].isalnum()
                                                          or part[-1] == "_")):
        return None
    return first.group()


def _next_part(part: str, low: str, at: int) -> int | None:
    """The end of the first match of ``part`` in ``low`` from ``at`` (None: none).  A
    part that starts a whole run is tried only where that run starts (the summary's
    runs looked up, not scanned: adv78 #1, a scan per elided identifier made the cost
    identifiers x summary length, 120 s for a 0.99 MB trace); a part that is one whole
    run is found there, with no pattern at all."""
    run = _first_run(part)
    if run is None:
        found = _part_pattern(part).search(low, at)
        return None if found is None else found.end()
    starts = _runs(low).get(run, ())
    later = starts[bisect_left(starts, at):]
    if run == part:  # the run itself: no longer word or flag around it, by its bounds
        return later[0] + len(part) if later else None
    pattern = _part_pattern(part)
    for pos in later:
        found = pattern.match(low, pos)
        if found is not None:
            return found.end()
    return None


def dropped(child_text: str, summary_text: str, span_type: str = "prose"
            ) -> list[Discriminator]:
    """The discriminators of ``child_text`` (read as ``span_type``) that do not survive
    in ``summary_text``."""
    return [d for d in extract_cached(child_text, span_type) if not survives(d, summary_text)]


_SELF_DECIDED = CLAUSE_KINDS - _PARAPHRASE_KINDS - _FLIP_KINDS
"""Clause kinds that are neither paraphrased (:data:`_PARAPHRASE_KINDS`) nor flipped
(:data:`~compaction_audit.recall.survival.flips._FLIP_KINDS`): causal, ordering,
ruled-out.  :func:`survives` of one is :func:`_clause_survives` alone."""


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


def flip_sentence(d: Discriminator, summary_text: str) -> str | None:
    """The sentence of ``summary_text`` that states clause ``d`` reversed (at most
    :data:`SENTENCE_MAX` characters), None when the summary does not flip it
    (:func:`flipped`): the first sentence whose own rules (or bounds) reverse it."""
    if not flipped(d, summary_text):
        return None
    sentences, rules, clauses, _ = _sentence_lookup(summary_text)
    at = min(_flip_tags(d, rules, clauses), default=None)
    return (sentences[at] if at is not None else summary_text).strip()[:SENTENCE_MAX]


SENTENCE_MAX = 300
"""Most characters of a summary sentence a finding quotes (log text is untrusted:
bounded in every output)."""
