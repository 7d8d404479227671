"""Survival's words: stems, identifier-like keys, module keys and polarity.

The word-level comparison forms every survival check reads (``docs/discriminators.md``):
suffix stripping and synonyms (:func:`stem`), identifier-like words, the snake_case key
of a module or file name, and whether a clause or sentence is negative.  Pure standard
library.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compaction_audit.recall.clauses import NEGATION_WORDS
from compaction_audit.recall.extract import Discriminator

_SCOPE_WORDS = frozenset({"prod", "staging", "dev", "qa", "uat", "preprod", "test-env"})
_HEX_RE = re.compile(r"[0-9a-f]{7,64}")


def _basename(path: str) -> str:
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1]


_WORD_RE = re.compile(r"\w+")


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


_SUFFIXES = ("ations", "ation", "ingly", "ings", "ing", "edly", "ed", "ly", "ful", "ness",
             "ment", "es", "s", "e")


@lru_cache(maxsize=65536)
def _stem(w: str) -> str:
    """Crude suffix stripping so "migrations"/"migration", "enabled"/"enable",
    "gracefully"/"graceful", "degradation"/"degrade" compare (up to two passes)."""
    for _ in range(2):
        if (len(w) <= 3 or not w.endswith(_SUFFIXES) or w.endswith("ss")
                or not w.replace("-", "").isalpha()):
            break  # no suffix to strip (one C call for the 14 suffixes)
        for suffix in _SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                if suffix in _DOUBLING and len(w) >= 4 and w[-1] == w[-2] and (
                        w[-1] not in _KEPT_DOUBLE):
                    w = w[:-1]  # "skipped", "logging": "skip", "log" (adv146 F5)
                break
        else:
            break  # nothing stripped: a second pass would strip nothing either
    return _SYNONYMS.get(w, w)


_DOUBLING = frozenset({"ed", "ing", "edly", "ings", "ingly"})
"""Suffixes before which English doubles a final consonant ("skip", "skipped")."""
_KEPT_DOUBLE = frozenset("lsfzaeiouy")
"""Doubled letters a word has of its own ("install", "pass", "sniff", "buzz", "agree");
a stem of three letters keeps its double too ("add", "odd")."""


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
    r"(?:\b(?:not|never|no|cannot|nothing|none)\b|n['\u2019]t\b)"
    r"(?:[^.;!?\n]|[.;!?](?=\S)){0,300}?\b(?:without|unless)\b")
"""A negation, then "without" or "unless" before the sentence ends, within 300
characters: a ``.`` inside a token ("build.log") ends none (adv97 #1: "Never run `make >
build.log` unless asked." read as a plain negation, so "Run `make > build.log` unless
asked." kept it).  The bound keeps the search linear: a rule soft-wrapped over 20,000
lines of "we must not" (264 KB, one sentence) was read from each "not" to its end,
112-190 s (adv128 #1)."""


@lru_cache(maxsize=65536)
def _double_negative(text: str) -> bool:
    """True for a double negation: a negation, then "without" or "unless" in the same
    sentence ("never run the release without a confirmation step" says "always a
    confirmation step"; issue 12, point 1)."""
    return _NOT_BEFORE_WITHOUT.search(text.lower()) is not None


_CANCELS = frozenset({"forget", "forgetting", "hesitate", "hesitating", "fail", "failing",
                      "neglect", "neglecting", "refuse", "refusing", "avoid", "avoiding"})
"""Verbs that negate what follows them ("forget to X": not X): after a negation the
two cancel ("do not forget to use --force" says "use --force"): each before "to" or a
dash, colon or comma, and "avoid" before a verb in -ing (:data:`_CANCEL_RE`: "do not
fail the build" and "do not fail existing tests" keep their "not")."""

_CANCEL_RE = re.compile(
    r"(?:\b(?:not|never|no|cannot)|n[\u2019']t)\s+(?:ever\s+)?(?:(forget|forgetting|hesitate|"
    r"hesitating|fail|failing|neglect|neglecting|refuse|refusing)(?:\s+to\b|\s*[-\u2013"
    r"\u2014:,])|(avoid|avoiding)\s+\w+ing\b)", re.IGNORECASE)
"""A negation, then a verb of :data:`_CANCELS` as it cancels: the words of a text that
cancel."""


_NEGATIONS_RE = re.compile(r"(?:\b(?:not|never|no|cannot|without)\b|n[\u2019']t\b)",
                           re.IGNORECASE)
"""A negation word of a text: a clause with more of them than cancel holds another."""


def _cancelled_verbs(text: str) -> list[str]:
    """The verb of each cancelling pair of ``text`` (:data:`_CANCEL_RE`), lowercased."""
    return [(m.group(1) or m.group(2)).lower() for m in _CANCEL_RE.finditer(text)]


def cancelling(text: str) -> frozenset[str]:
    """The verbs of :data:`_CANCELS` that a negation of ``text`` cancels with
    (:data:`_CANCEL_RE`), lowercased; empty for most texts."""
    return frozenset(_cancelled_verbs(text))


def cancelled_words(family: str, words: list[str] | tuple[str, ...], text: str
                    ) -> list[str] | None:
    """The words of a clause of family ``not`` whose negation cancels with a verb of
    :data:`_CANCELS` in its ``text`` ("Never forget to run tests": a ``must`` clause of
    "run tests"), less its first "not" and that verb; None for any other clause, and
    for one holding another negation besides ("Never forget to never use --force"
    stays the negation "never use --force": adv118 Q1)."""
    if family != "not" or not (pairs := _cancelled_verbs(text)):
        return None
    if len(_NEGATIONS_RE.findall(text)) > len(pairs):
        return None  # a negation the norm folded away ("not forget to not use")
    verbs = set(pairs)
    rest = list(words)
    if "not" in rest:
        rest.remove("not")
    rest = [w for w in rest if w not in verbs]
    return None if any(w in NEGATION_WORDS for w in rest) else rest


def uncancelled(words: list[str], text: str) -> list[str]:
    """``words`` (normalized content words of ``text``, a summary sentence, a rule part
    or a clause) less each negation word directly followed by a verb that cancels with
    it in ``text`` (:func:`cancelling`) and that verb: "do not forget to use --force",
    "don't hesitate to use --force", "never fail to run the tests", "do not avoid
    using --force" state the positive rule (adv116 B1: the first kept "Do NOT use
    --force" and hid the push that broke it), where "do not fail the build" stays as
    it is.  The rule's side reads its clause alike (:func:`cancelled_words`)."""
    verbs = cancelling(text) if _CANCELS.intersection(words) else frozenset()
    if not verbs:
        return words
    out: list[str] = []
    cancelled = False
    for i, w in enumerate(words):
        if cancelled:
            cancelled = False
            continue
        if w in NEGATION_WORDS and i + 1 < len(words) and words[i + 1] in verbs:
            cancelled = True
            continue
        out.append(w)
    return out


def negative(words: list[str]) -> bool:
    """The polarity of a sentence or clause given its normalized content words
    (:func:`~compaction_audit.recall.clauses.content_words`): negative when it holds a
    negation word (:data:`~compaction_audit.recall.clauses.NEGATION_WORDS`), except a
    double negation, a negation followed by "without" or "unless" ("never X without
    Y", "cannot X unless Y": both mean "always Y"; issue 12, point 1).  "no longer" is
    one negation.  A lone "unless" is one too: "merge unless CI is green" is "merge if
    CI is not green", the reverse of "never merge unless CI is green" (usertest37 #1:
    a summary stating it so kept the rule)."""
    negs = [w for i, w in enumerate(words) if w in NEGATION_WORDS
            and not (w == "longer" and i and words[i - 1] == "no")]
    if not negs:
        return "unless" in words
    if len(negs) == 2 and negs[1] == "without" and negs[0] != "without":
        return False
    return not (len(negs) == 1 and "unless" in words[words.index(negs[0]):])


_HEAD = 5
"""A long clause or requirement (more than this many distinct stems) also survives by
its head: most of its first five stems in one sentence."""

_TOPIC = 3
"""A stem in more than this many sentences of a summary (distinct sentences of the
clause's polarity: those the head rule compares it with) is a topic of it: a head match
(:data:`_HEAD`) made of topic stems alone keeps nothing ("Project with zero open
annotations still injects minimal context header" is not kept by "Shows open
annotations across all sessions in a project" in a summary about project reviews:
usertest11)."""


def _polarity(d: Discriminator) -> bool:
    """True when clause ``d`` is negative (a double negation is not)."""
    return _polarity_of(d.norm, d.text)


_UNLESS_RE = re.compile(r"\bunless\b", re.IGNORECASE)


@lru_cache(maxsize=65536)
def _polarity_of(norm: str, text: str) -> bool:
    """:func:`_polarity` of a clause with this norm and text, once per clause (a clause
    is compared with every summary above its span)."""
    family, *words = norm.split()
    if _double_negative(text):
        return False
    if cancelled_words(family, words, text) is not None:  # "never forget to X": X
        return False
    return (family == "not" or any(w in NEGATION_WORDS for w in words)
            or _UNLESS_RE.search(text) is not None)  # "X unless Y": as :func:`negative`


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


def content_stems(words: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`_content_stems`, for callers outside survival (a question's words)."""
    return _content_stems(words)


def stem(word: str) -> str:
    """The comparison form of one lowercased word (suffixes stripped, acts that mean the
    same compared as one), as survival compares words."""
    return _stem(word)
