"""Rules the person lifted: a fold that drops them loses nothing.

A person says "Do not delete the prod-db-7 backups", later "you can delete the
prod-db-7 backups now", and a summary of both says the rule was lifted ("... the user
allowed it: delete the prod-db-7 backups").  The summary's last word on the rule
reverses it, so survival reads the rule as not kept (``recall.survival.flips.
_restated_last``, adv98 #2), and the fold dropped it: a silent-discriminating-fold
error and a flipped rule (CA304) on a faithful summary (usertest54 #3, usertest55 #4).

:func:`without_lifted` takes such rules out of the fold's dropped list and books them
held by the fold's summary (``held``: ``key``, ``id``): the summary carried the rule and
its lifting.  A rule is lifted when a child of the same fold that is a person's
(:func:`~compaction_audit.recall.ranking.person_source`; usertest55 #1: an assistant
span, a README read by a tool or a question lifted it too), born after the rule's child
(by round, then by its place in the log: usertest55 #5; not by its place among the
summary's children, adv100 #2), states it with the opposite polarity
(:func:`~compaction_audit.recall.survival.flips.states_opposite`) in a sentence that
grants it (a permission or an imperative) and is no question and holds no contrast,
condition, report, hedge or word of prohibition, in a message that does not take it
back (:func:`statements`; adv100 #1, adv101 #1, #2, usertest57 #3).  Only dropped rules
are read, each fold's person children once, indexed by stem and identifier-like word
(adv100 #5, adv101 #4): a few rows of Python after the fold checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

from compaction_audit.recall import extract as ext
from compaction_audit.recall.clauses import content_words
from compaction_audit.recall.factkeys import fact_key
from compaction_audit.recall.ranking import person_source
from compaction_audit.recall.survival.flips import (
    _ANTONYMS,
    _FLIP_KINDS,
    may_reverse,
    states_opposite,
)
from compaction_audit.recall.survival.index import _IMPERATIVE_VERBS, _index, _opening_verb
from compaction_audit.recall.survival.words import _flip_stems, _is_key, _polarity

RULE_KINDS = tuple(sorted(kind.value for kind in _FLIP_KINDS))
"""The kinds of a rule a person can lift: the kinds a summary can flip."""

_SENTENCE_END_RE = re.compile(r"(?<=[.!?\uff01\uff1f\u3002])\s+(?=[^a-z\s])|\n\s*\n")
"""Where a person's text is cut into sentences: after a full stop, "!" or "?" (or their
full-width forms) and white space before a word that does not open in lower case, or
at a blank line; not at "e.g. the", "docs/README.md)?" or a line break inside a
sentence (adv100 #1: a question cut there read as a statement)."""
_QUESTION_RE = re.compile(
    r"(?i)[?\uff1f\u2047-\u2049\u00bf\u2e2e]|^\W*(?:can|could|may|should|shall|will"
    r"|would|is|are|am|do|does|did|was|were|have|has|had|what|which|how|why|where|who"
    r"|whose)\b")
"""A question: a question mark in any of its forms (full-width, doubled, inverted,
reversed), or a sentence that opens as one ("Can I delete the backups." with a full
stop).  It lifts nothing."""
_HEDGED_RE = re.compile(
    r"(?i)\b(?:but|however|yet|except|unless|until|only|(?:if|when|whenever)(?!\s+you"
    r"(?:'re|\s+are)?\s+(?:want|like|wish|prefer|need|ready)\b)|once|after|before"
    r"|provided|assuming|case|should|emergency|hypothetically|says|said|told|heard"
    r"|according|per|from|reads|claims?|thinks?|believe|suppose|guess|wonder|whether"
    r"|wrote|maybe|perhaps|might|probably|theory|peril|sue|dead|right|wrong|nobody"
    r"|no\s+one|forbidden|prohibit\w*|refrain|stop|ignore|whoever|fired|off-limits|bad"
    r"|dont|don't|never|not|no|tomorrow|next|later|some)\b"
    r"|^\W*(?!(?:update|fyi|note|ps|edit|also|ok|okay|yes|correction)\b)\w[\w.'-]*\s*:"
    r"|^\s*>|<!--|[\"\u201c\u201d]")
"""A sentence that lifts a rule only in part, later, in jest or not at all, or reports
it: a contrast ("..., but she is wrong"), a condition ("only after I confirm", "in
case", "should the disk fill"; "if you want", "when you're ready" are none), a time
("tomorrow", "next week"), a part ("some of"), an idiom of refusal ("in theory", "over
my dead body"), someone else's words ("Alice says", "per Alice", "according to", a
label before a colon other than "Update:" or "FYI:", a quotation, a quoted line), a
hedge ("probably"), or a word of prohibition ("nobody may", "is forbidden", "refrain
from", "stop", "dont"; adv100 #1, adv101 #1, #2, adv102).  It lifts nothing: a kept
rule is the safe reading.  A concession ("Although it is risky, you can delete ...")
lifts (usertest57 #3)."""
_RETRACTED_RE = re.compile(
    r"(?i)\b(?:kidding|joking|not\s+really|no\s+wait|scratch\s+that|actually,?\s+no"
    r"|changed\s+my\s+mind|take\s+that\s+back|nope|jk|just\s+testing|not\s+today"
    r"|sign\s+off|unless|only\s+(?:if|after|when)|in\s+case|provided|assuming)\b|/s\b")
"""A message that takes a lifting back ("Delete the backups. Just kidding.", "No wait,
don't.") or sets a condition on it in a sentence of its own ("Unless CI fails. You can
delete ..."): it lifts nothing (adv101 #2)."""
_GRANT_RE = re.compile(
    r"(?i)\b(?:(?:you|we|u)\s+(?:can|may|could)(?:\s+now)?\s+\w+|(?:can|may)\s+now\s+be"
    r"|(?:can|may)\s+be\s+\w+\s+now|ok(?:ay)?\s+to|fine\s+to|allowed\s+to"
    r"|permitted\s+to|free\s+to|go\s+ahead|(?:is|are)\s+(?:now\s+)?(?:fine|ok(?:ay)?"
    r"|allowed))\b")
"""A permission ("you can delete", "it is OK to", "go ahead", "is fine now", "can now be
deleted"; not "Alice can delete" nor "may be deleted by the retention job": adv102); a
lifting sentence is one, or an imperative (its first word a verb a rule opens with):
words of the rule in any other sentence restate or discuss it (adv101 #1)."""


def statements(text: str) -> str:
    """The sentences of a person's ``text`` that can lift a rule: none when the message
    takes it back (:data:`_RETRACTED_RE`); else those that are no question
    (:data:`_QUESTION_RE`: "Can I delete the backups?" lifts nothing; a question
    elsewhere in the message does not stop a lifting beside it, usertest57 #3), hold
    no contrast, condition, report, hedge or prohibition (:data:`_HEDGED_RE`; a flag's
    words are none: :data:`_FLAG_RE`), and
    grant: a permission (:data:`_GRANT_RE`) or an imperative."""
    if _RETRACTED_RE.search(_FLAG_RE.sub("flag", text)):
        return ""
    return " ".join(s.replace("\n", " ") for s in _SENTENCE_END_RE.split(text)
                    if not _QUESTION_RE.search(s) and not _HEDGED_RE.search(_FLAG_RE.sub("flag", s))
                    and (_GRANT_RE.search(s) or _imperative(s)))


_FLAG_RE = re.compile(r"(?<![\w-])--?\w[\w-]*")
"""A command-line flag: its words are no hedge nor prohibition ("--no-verify", adv123 #3:
its "no" made "You can use --no-verify now" lift nothing)."""


_SUBJECT_RE = re.compile(r"\W*(?:i|i'\w+|he|she|they|someone|somebody)\b")


def _imperative(sentence: str) -> bool:
    """A sentence whose first content word, after "then", "now", "please" and the like,
    is a verb a rule opens with ("Delete the backups now.")."""
    low = sentence.lower()
    if _SUBJECT_RE.match(low):  # "I could delete the backups myself": no imperative
        return False
    words = content_words(low, 400)
    return bool(words) and _opening_verb(words) in _IMPERATIVE_VERBS


def lifts(rule: ext.Discriminator, said: str) -> bool:
    """Whether a person's ``said`` (a text's :func:`statements`) states ``rule``
    reversed: the test :func:`without_lifted` applies to each later person child of a
    fold, and ``trace`` to the spans beside the one it follows."""
    return bool(said) and may_reverse(rule, said.lower()) and states_opposite(rule, said)


def _stems(said: str) -> frozenset[str]:
    """Every stem of the sentences of ``said`` as the flip lookup files them: a rule's
    stems that have no antonym must all be among them for ``said`` to lift it."""
    sentences = _index(said).lookup.sentences
    return frozenset(sentences[False].post).union(sentences[True].post)


_TOKEN_RE = re.compile(r"-*\w[\w.\-/#@:]*")
"""An identifier-like word, a flag with its dashes ("--force"; adv123 #3: read without
them, no child held a flag rule's key and a lifted "--force" or "--no-verify" rule was
a flipped rule and a broken one)."""


def _tokens(said: str) -> set[str]:
    """The identifier-like words of ``said`` as a rule's norm writes them (lower case,
    a version without its "v", each "/" part of a path): a rule's identifier-like words
    must all be among them for ``said`` to lift it, so a rule is tested only against the
    children that name its identifiers (adv101 #4: 8,000 rules that differ by one name,
    each tested against every child, 109 s)."""
    out: set[str] = set()
    for token in _TOKEN_RE.findall(said.lower()):
        token = token.rstrip(".:/")
        out.update((token, token.lstrip("-")))
        out.update(part for part in token.split("/") if part)
        if token[:1] == "v" and token[1:2].isdigit():
            out.add(token[1:])
    return out


class Speakers:
    """A fold's person children that can lift a rule: (born, id, said) each, and which
    of them hold each stem and identifier-like word, so a rule is tested only against
    the children holding them (adv100 #5: every rule against every later child, 4,000
    rules in 50 s; adv101 #4).  The analysis (:func:`without_lifted`) and ``trace``
    (:meth:`compaction_audit.trace.log._Log.lifted_by`) read a fold through one."""

    def __init__(self) -> None:
        self.said: list[tuple[tuple[int, int], str, str]] = []
        self.post: dict[str, set[int]] = {}
        self.latest: dict[tuple[object, ...], tuple[tuple[int, int], str] | None] = {}

    def add(self, born: tuple[int, int], ident: str, said: str) -> None:
        """Child ``ident`` born at ``born`` (round index, place in the log) says
        ``said`` (its :func:`statements`)."""
        if not said:
            return
        for word in _stems(said) | _tokens(said):
            self.post.setdefault(word, set()).add(len(self.said))
        self.said.append((born, ident, said))

    def lifter(self, rule: ext.Discriminator, after: tuple[int, int]) -> str | None:
        """The latest-born child, born after ``after``, that states ``rule`` reversed;
        None when none does.  Found once for all the rules that read alike to
        :func:`lifts` (the same stems, polarity and identifier-like words), among the
        children that hold every identifier-like word and every stem no antonym can
        stand for (:func:`~compaction_audit.recall.survival.flips.states_opposite`)."""
        family, *words = rule.norm.split()
        stems = _flip_stems(words)
        keys = tuple(w for w in words if _is_key(w))
        alike = (rule.kind, family, stems, _polarity(rule), keys)
        if alike not in self.latest:
            need = sorted((self.post.get(w, set())
                           for w in [*(w for w in stems if w not in _ANTONYMS), *keys]),
                          key=len)
            pool: Iterable[int] = (set.intersection(*need) if need
                                   else range(len(self.said)))
            self.latest[alike] = max(((self.said[i][0], self.said[i][1]) for i in pool
                                      if lifts(rule, self.said[i][2])), default=None)
        latest = self.latest[alike]
        return latest[1] if latest is not None and latest[0] > after else None


def without_lifted(folds: pl.DataFrame, items: pl.DataFrame, held: pl.DataFrame
                   ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``folds`` without the lifted rules in their ``dropped`` lists, ``held`` with a
    (``key``, ``id``) row for each: the fold's summary holds it).  ``folds``:
    :data:`~compaction_audit.recall.analysis.model.FOLD_SCHEMA`; ``items``: the typed
    session items (``id``, ``ri``, ``source``, ``text``) in the log's order (by round,
    then as each record lists them), which says which child was born later (adv100 #2:
    the order of a summary's ``children`` is no time).  Both unchanged (the same frames)
    when no fold dropped a rule a later person child reverses."""
    rules = (folds.lazy().with_row_index("_row")
             .explode("dropped").filter(pl.col("dropped").struct.field("kind")
                                        .is_in(RULE_KINDS))
             .select("_row", "fold", "child", pl.col("dropped").struct.unnest())
             .collect())
    if rules.height == 0:
        return folds, held
    people = (folds.lazy()
              .filter(pl.col("fold").is_in(rules["fold"].unique().implode()))
              .select("fold", "child")
              .join(items.lazy().with_row_index("_order")
                    .select(pl.col("id").alias("child"), "ri", "_order", "source", "text"),
                    on="child", how="left")
              .collect())
    born = {(f, c): (r if r is not None else -1, o if o is not None else -1)
            for f, c, r, o in people.select("fold", "child", "ri", "_order").iter_rows()}
    speakers: dict[str, Speakers] = {}
    for fold, child, ri, order, text in (people.filter(person_source(pl.col("source"))
                                                       & pl.col("text").is_not_null())
                                         .select("fold", "child", "ri", "_order", "text")
                                         .iter_rows()):
        speakers.setdefault(fold, Speakers()).add(
            (ri if ri is not None else -1, order), child, statements(text))
    lifted: list[tuple[int, str, str, str, str]] = []  # (_row, kind, norm, text, fold)
    for row, fold, child, kind, text, norm, _rank in rules.iter_rows():
        found = speakers.get(fold)
        d = ext.Discriminator(ext.Kind(kind), text, norm, 0, len(text))
        if found is not None and found.lifter(d, born.get((fold, child), (-1, -1))) is not None:
            lifted.append((row, kind, norm, text, fold))
    if not lifted:
        return folds, held
    gone = pl.DataFrame(lifted, schema={"_row": pl.UInt32, "kind": pl.String,
                                        "norm": pl.String, "text": pl.String,
                                        "fold": pl.String}, orient="row")
    keep = (folds.lazy().with_row_index("_row").explode("dropped")
            .join(gone.lazy().select("_row", pl.col("kind").alias("_k"),
                                     pl.col("norm").alias("_n"), pl.lit(True).alias("_gone")),
                  left_on=["_row", pl.col("dropped").struct.field("kind"),
                           pl.col("dropped").struct.field("norm")],
                  right_on=["_row", "_k", "_n"], how="left")
            .group_by("_row", maintain_order=True)
            .agg(pl.col("dropped").filter(pl.col("_gone").is_null()
                                          & pl.col("dropped").is_not_null()))
            .collect())
    trimmed = (folds.with_row_index("_row").drop("dropped")
               .join(keep, on="_row", how="left", maintain_order="left")
               .with_columns(pl.col("dropped").fill_null(pl.lit([], folds.schema["dropped"]))
                             .cast(folds.schema["dropped"]))
               .select(folds.columns))
    books = gone.select(fact_key(pl.col("kind"), pl.col("norm"), pl.col("text")).alias("key"),
                        pl.col("fold").alias("id"))
    return trimmed, pl.concat([held, books.cast(held.schema)]).unique()
