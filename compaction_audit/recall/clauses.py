"""Clause discriminators: a marker and the words it governs; requirement units of a spec.

Seed 002 names negations, constraints, causes and ordering; issue 10, point 2 sets how a
clause is cut on real text:

* a clause runs from its marker to the end of its sentence (``.``, ``;``, ``!``, ``?``,
  a line end, a ``:`` outside a code span, a bracket, a conjunction such as "but" or
  "which", a comma before a new subject: ", it is risky"; a list's commas and a line
  end that cuts a prohibition from what it forbids, :func:`unwrapped`, do not end it),
  at most :data:`_WINDOW` characters; a ``:`` or ``.`` inside a code span does not end
  it;
* negation and constraint markers inside it (a *nested* marker: "must not", "no new
  service module required") are part of it: the clause takes the negation's kind when
  nothing but stopwords stands between the markers ("must not introduce X" is the
  negation "not introduce X"); causal, ordering and condition markers start a new one,
  except a sequence word fewer than two content words after a sequence word (a chain:
  "icon at px-3, then text after the gap" is one ordering; arrows are not chained) and
  an ordering or condition marker after a negation with no comma after an object of
  the negation's own (two content words: a comma after an emphatic aside, "Never,
  ever", or one word does not count; what the negation forbids is that order or case:
  "Never deploy after 17:00 on Fridays" is one negation, not a negation "deploy" too
  short to keep and an ordering that reads as the opposite instruction);
* the text of a negation or a must/only constraint starts at its subject (up to four
  content words on its left in the same sentence: "Already-closed annotations must
  remain unchanged"); its norm keeps the words after the marker;
* the words on a marker's left run through a short bracketed aside (at most
  :data:`_ASIDE_MAX` characters) to the subject before it;
* a fragment is dropped: fewer than two content words, or an open backtick that does not
  close within the sentence; a trailing "and"/"or" is trimmed;
* sentence-initial imperatives without must/not count: keep, preserve, retain, ensure
  (constraint ``must``), avoid (negation), prefer (constraint ``prefer``);
  "X instead of Y" and "X rather than Y" are the constraint ``instead`` with both sides; "exactly",
  "unchanged" and "as is" (``exact``), and "nothing"/"none", take their object from
  the left when nothing follows them;
* a ``condition``: when, whenever, if, unless, only on/in/when/if, with two or more
  content words (the words left of it count when fewer follow it, and always for
  "only ...": "runs only in review mode"); "since" is causal
  only when a clause follows it (a verb or a subject pronoun within a few words), not
  "since v1.2" or "since the meeting";
* "required" is a marker only as a predicate ("is required", "TTL required for
  safety", with the words on its left), not before its noun ("passes required env vars");
* an arrow (``->``, ``→``) is an ordering only between two prose words on a line
  without code punctuation (``fn record ->`` is not an ordering);
* in spec text, each bullet under a requirements, constraints, no-gos, edge-cases or
  definition-of-done heading is one ``requirement`` unit; the clauses inside it are not
  reported again.

``norm`` is ``"<family> <content words>"`` (at most :data:`_MAX_OBJECT` words; ordering
and ``instead`` are ``"<family> <left> > <right>"``).  A clause that holds a negation
keeps ``not`` among its words, so a summary that flips it does not keep it.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from compaction_audit.recall.kinds import SCOPE_CANON, Discriminator, Kind
from compaction_audit.recall.spantypes import REQ_HEADING

__all__ = ["CLAUSE_END_RE", "NEGATION_WORDS", "content_words", "mask_code", "scan_clauses",
           "scan_requirements", "unwrapped"]

# (kind, family, regex); each regex starts with a literal.  Condition markers come before
# the constraint "only" so that "only on" is a condition.
_MARKERS: list[tuple[Kind, str, str]] = [
    *((Kind.NEGATION, "not", p) for p in (
        r"not", r"never(?!\s+exceed)", r"no\s+longer", r"nothing", r"none", r"without",
        r"cannot", r"no(?!\s+(?:more|less|fewer)\s+than)(?=\s+\w)")),
    *((Kind.CONDITION, "if", p) for p in (
        r"only\s+(?:on|in|when|if|for)", r"when(?:ever)?", r"if", r"unless")),
    *((Kind.CONSTRAINT, f, p) for f, p in (
        ("must", r"must"), ("must", r"always"), ("must", r"required"), ("only", r"only"),
        ("exact", r"exactly"), ("exact", r"unchanged"), ("exact", r"as\s+is"),
        ("max", r"at\s+most"), ("max", r"no\s+more\s+than"),
        ("max", r"never\s+exceed(?:s|ed)?"), ("max", r"maximum(?:\s+of)?"),
        ("max", r"limited\s+to"), ("max", r"capped\s+at"), ("min", r"at\s+least"),
        ("min", r"no\s+(?:less|fewer)\s+than"), ("min", r"minimum(?:\s+of)?"),
        ("instead", r"instead\s+of"), ("instead", r"rather\s+than"))),
    *((Kind.CAUSAL, "because", p) for p in (
        r"because(?:\s+of)?", r"due\s+to", r"caused\s+by", r"as\s+a\s+result\s+of",
        r"owing\s+to", r"root\s+cause[ds]?", r"triggered\s+by", r"on\s+account\s+of",
        r"since")),
    *((Kind.ORDERING, "sequence", p) for p in (
        r"before", r"after(?:wards)?", r"then", r"followed\s+by", r"prior\s+to",
        r"preceded\s+by", r"subsequently", r"->", r"→")),
    *((Kind.ORDERING, "revert", p) for p in (
        r"revert(?:s|ed|ing)?", r"rolled-back", r"roll(?:s|ed|ing)?\s+(?:(?:it|them)\s+)?back",
        r"rollback",
        r"backed\s+out", r"undid", r"undone")),
]
_TWO_SIDED = frozenset({"sequence", "revert", "instead"})
_SAME_THING_RE = re.compile(
    r"\s*(?:(?:it|them)\s+)?(?:back\s+)?(?:to|at)\s+(?:v(?=\d)|[\d`'\"])")
"""After a revert marker: it takes the thing before "then" back to a value ("then
reverted to 30000", "then reverted it back to v4.1.9", "then rolled it back to 30000"),
not an object of its own ("then reverted the schema migration", "then reverted to the
old schema": adv104 #6, adv105 #1, whose left side, taken from before "then", made the
invented revert read as supported)."""
_COORDINATED_RE = re.compile(r"(?:\band|\bbut|\bthen|[,;])[ \t]*$")
"""What ends the text before a negation's "do" that opens a coordinated imperative
("..., and do NOT use --force"): it has no subject to show (usertest69 #4: a kept
no-force rule was listed lost with the lost setting before it).  A plain "not" after a
comma keeps its subject ("X reports 0.43, not 0.69")."""
_SUBJECT_SHOWN = frozenset({"not", "must", "only"})  # "Existing tests with only `uuid` ..."
_ABSORBED = frozenset({Kind.NEGATION, Kind.CONSTRAINT})  # nested markers a clause keeps
_NEGATED = frozenset({Kind.ORDERING, Kind.CONDITION})  # ... and a negation's: _no_step_between


def _marker_regex() -> re.Pattern[str]:
    """One regex over the lowercased text: a lead character, then the markers grouped by
    first character so the matcher rejects most words at once.  Group ``m<i>`` is
    ``_MARKERS[i]``."""
    by_first: dict[str, list[str]] = {}
    for i, (_, _, pat) in enumerate(_MARKERS):
        by_first.setdefault(pat[0], []).append(f"(?P<m{i}>{pat[1:]})")
    alts = "|".join(f"{re.escape(c)}(?:{'|'.join(v)})" for c, v in by_first.items())
    return re.compile(rf"[^\w./`-](?:{alts})(?![\w/-]|\.\w)")


_CLAUSE_RE = _marker_regex()
_MARK_OF = {f"m{i}": (kind, family) for i, (kind, family, _) in enumerate(_MARKERS)}
"""(kind, family) of each group of :data:`_CLAUSE_RE`, looked up by its name."""
_CHECKED = frozenset({"->", "→", "since", "required", "if"})
"""Markers :func:`_keep_marker` may reject; every other marker is kept."""
_IMPERATIVE_RE = re.compile(  # sentence-initial (or after ", and"), after a bullet or emphasis
    r"(?:^|(?<=[.!?:;\n])|(?<=, and)|(?<=, then)|(?<=, but))[ \t]*(?:[-*+•>][ \t]+|\d+[.)][ \t]+)?"
    r"(?:\*\*|__)?"
    r"(keep|preserve|retain|ensure|avoid|prefer)(?![\w-])", re.MULTILINE)
_IMPERATIVE = {"keep": (Kind.CONSTRAINT, "must"), "preserve": (Kind.CONSTRAINT, "must"),
               "retain": (Kind.CONSTRAINT, "must"), "ensure": (Kind.CONSTRAINT, "must"),
               "avoid": (Kind.NEGATION, "not"), "prefer": (Kind.CONSTRAINT, "prefer")}
_CONTRACTION_RE = re.compile(r"\b[a-z]+n['\u2019]t\b")  # don't, isn't, won't: negations
_AUX_RE = re.compile(r"\b(?:do|does|did|must|should|shall|will|would|could|can|may|might|is"
                     r"|are|was|were|has|have|had)\s+$")  # "do" of "do not", kept in text
_SENTENCE_END_RE = re.compile(  # where a clause ends (over the code-masked lowercase text)
    r"[;!?\n()\[\]<>{}\"\\]|[.:](?=\s|$)"
    r"|,(?=\s+(?:it|we|they|he|she|i|you|this|that|there|so|but|which|and\s+then)\b)"
    r"|,(?=\s+(?:and\s+|then\s+)?(?:keep|preserve|retain|ensure|avoid|prefer|never|always"
    r"|do\s+not|don't|make\s+sure)\b)"
    r"|(?<=\s)(?:but|although|though|however|whereas|while|so|which|whereby)\b")
CLAUSE_END_RE = _SENTENCE_END_RE
"""Where a clause ends, over the code-masked lowercase text (:func:`mask_code`)."""
_CODE_RE = re.compile(r"`[^`\n]+`")
_LEAD_MARKUP_RE = re.compile(r"(?:\s|[-*+•>#]+(?=\s)|\d+[.)](?=\s))*")  # bullets, quotes
_SINCE_CLAUSE_RE = re.compile(  # "since" followed by a clause: a subject pronoun or a verb
    r"\s+(?:(?:it|they|we|he|she|this|that|these|those|there|you|i)\b"
    r"|(?:[\w'-]+\s+){0,4}?(?:is|are|was|were|has|have|had|does|did|can|could|will|would"
    r"|should|must|may|might|[a-z]+ed|[a-z]+n't)\b)")
_REQUIRED_BEFORE_RE = re.compile(r"(?:\b(?:is|are|be|was|were|been|not|also)|[+&])\s+$")
_REQUIRED_AFTER_RE = re.compile(r"\s*(?:$|[.,;:)!?\n]|(?:for|to|by|when|if|in|on|unless|before"
                                r"|after)\b)")
_ASKED_IF_RE = re.compile(  # "let me check if X", "not sure if X": an indirect question
    r"(?:(?:^|[.!?;:\n]\s*|\b(?:let\s+me|let's|to|i|we|you|i'll|we'll|i'd|we'd|please|and"
    r"|then|can|could|will|would|should|must|need\s+to|want\s+to|going\s+to|try\s+to)\s+)"
    r"(?:(?:also|first|just|quickly|now|then)\s+)?"
    r"(?:check(?:s|ed|ing)?|see|verif(?:y|ies|ied|ying)|confirm(?:s|ed|ing)?"
    r"|test(?:s|ed|ing)?|wonder(?:s|ed|ing)?|ask(?:s|ed|ing)?|determin(?:e|es|ed|ing)"
    r"|(?:find|found|figure[sd]?|figuring)\s+out)|\bnot\s+sure|\bunsure)"
    r"(?:\s+(?:again|first|also|quickly|now))?\s+$")
"""The words before an "if" that make it an indirect question: a verb of checking or
asking as a verb (after a subject, a modal, "to", "let me", or at a sentence start:
"Let me check if", "we verified again if", "Check if"), or "not sure": not a noun ("Run
the smoke test if staging is down" keeps its condition)."""
_ARROW_CODE_RE = re.compile(r"[(){}\[\];=<>\"'|&$#`]|::|\bfn\b|\bdef\b|\bfunction\b")
_OBJ_CHARS = r"[^\s,;:!?()\[\]{}\"'`“”=]+"
_OBJ_TOKEN_RE = re.compile(  # a word; "45,000" and "don't" stay one word
    rf"{_OBJ_CHARS}(?:(?:(?<=\d),(?=\d{{3}})|(?<=\w)'(?=\w)){_OBJ_CHARS})*")
_STOPWORDS = frozenset([
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "on", "in", "at", "to",
    "of", "for", "with", "by", "from", "into", "onto", "as", "be", "been", "being", "is", "are",
    "was", "were", "am", "do", "does", "did", "have", "has", "had", "will", "would", "should",
    "shall", "can", "could", "may", "might", "we", "you", "they", "i", "he", "she", "our",
    "your", "their", "my", "me", "us", "them", "any", "anything", "ever", "yet", "and", "or",
    "nor", "also", "even", "just", "again", "so", "all", "some", "there", "here", "very",
    "please", "one", "ones",
])
NEGATION_WORDS = frozenset({"not", "never", "no", "nothing", "none", "without", "cannot",
                            "avoid", "longer"})
"""Words that make a clause negative (its polarity, compared by survival)."""
_DANGLING = frozenset({"and", "or", "nor", "the", "a", "an", "to", "of", "with", "for"})
_MAX_OBJECT, _MAX_LEFT, _WINDOW, _LEFT_WINDOW = 8, 4, 160, 60
_ASIDE_MAX = 40
"""The longest bracketed aside (characters, brackets included) that a clause's left side
runs through to its subject: "Currently the `action` (filter icon) is rendered before
the text button" keeps "`action` (filter icon)" (usertest31 #1: it read "is rendered
before the text button", a clause without its subject)."""


class _WordNorms(dict[str, str | None]):
    """The normalized form of each word :data:`_OBJ_TOKEN_RE` finds, None for a
    stopword or punctuation; computed once per distinct word (a session repeats its
    vocabulary), emptied when it holds :data:`_WORD_CACHE` words."""

    def __missing__(self, raw: str) -> str | None:
        if len(self) >= _WORD_CACHE:
            self.clear()
        w = raw.rstrip(".")
        norm: str | None = None
        if w and w not in _STOPWORDS and (w[0].isalnum() or w[-1].isalnum()):
            if "," in w:
                w = w.replace(",", "")
            if w[0] == "v" and w[1:2].isdigit() and "." in w:
                w = w[1:]
            if w.endswith(("n't", "n\u2019t")):
                w = "not"
            norm = SCOPE_CANON.get(w, w)
        self[raw] = norm
        return norm


_WORD_CACHE = 200_000
_NORMS = _WordNorms()


def _content_at(segment: str, limit: int) -> list[tuple[int, str]]:
    """(offset, normalized word) of the first ``limit`` content words of a lowercased
    segment."""
    words: list[tuple[int, str]] = []
    norms = _NORMS
    for m in _OBJ_TOKEN_RE.finditer(segment):
        w = norms[m.group()]
        if w is not None:
            words.append((m.start(), w))
            if len(words) == limit:
                break
    return words


_FINDALL_MAX = 320
"""Longest segment :func:`content_words` reads whole with ``findall`` (no match object
per word: about 35 % less per call on clause segments); a longer one is read word by
word up to its limit, so a short limit on a long text stays short."""


def content_words(segment: str, limit: int = _MAX_OBJECT) -> list[str]:
    """First ``limit`` normalized content words of a lowercased segment."""
    norms = _NORMS
    if len(segment) <= _FINDALL_MAX:
        found = [w for w in map(norms.__getitem__, _OBJ_TOKEN_RE.findall(segment))
                 if w is not None]
        return found[:limit] if len(found) > limit else found
    words: list[str] = []
    for m in _OBJ_TOKEN_RE.finditer(segment):
        w = norms[m.group()]
        if w is not None:
            words.append(w)
            if len(words) == limit:
                break
    return words


def _lower(text: str) -> str:
    """``text.lower()`` with the same length (so offsets stay valid)."""
    low = text.lower()
    if len(low) != len(text):  # e.g. "İ" lowers to two code points: keep such chars
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return low


def mask_code(low: str) -> str:
    """:func:`_masked`: what :data:`CLAUSE_END_RE` reads (survival's index cuts a
    summary's rule parts where a clause ends: adv97 #1)."""
    return _masked(low)


def _masked(low: str) -> str:
    """``low`` with the inside of each code span replaced by ``x`` (same length), so
    that punctuation inside code does not end a clause."""
    if "`" not in low:
        return low
    return _CODE_RE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", low)


_QUOTED_BREAK_RE = re.compile(r"\r?\n[ \t]*(?:>[ \t]*)*")
"""A line end and the quote marks that open the next line."""
_SOFT_WRAP_RE = re.compile(  # over lowercased text: a prohibition cut from what it forbids
    r"(?:\b(?:do|does|did|must|should|shall|will|would|can|could|may|might|need|please)"
    r"[ \t]+[*_]{0,2}(?:not|never)|\b[a-z]+n['\u2019]t|\bcannot|\bnever|(?<!not )\bavoid)"
    r"[*_]{0,2}(?:[ \t]+(?:ever|again|even))?"  # "must **NOT**" (adv122)
    r"(?:[ \t]+(?!(?:mind|worry|bother)\b)[a-z]+(?:[ \t]+(?:the|a|an|any))?)?"  # its verb
    rf"[ \t]*({_QUOTED_BREAK_RE.pattern})(?=\.?[a-z`]|-{{1,2}}[a-z])")  # ".env" too
_SUBJECTS = frozenset({"i", "it", "they", "he", "she", "that", "this", "there", "git",
                       "which", "who"})
"""Words before a negation that make it a statement, not a prohibition ("git says I
can't" above "use --force, it's my own branch": adv121 #3), but before a modal of
obligation (:data:`_OBLIGED`: "it must not" is a rule); not "we", whose "we don't" is
a team's rule (adv122 #1)."""
_OBLIGED = ("must", "should", "shall", "need")


def unwrapped(text: str, low: str, masked: str) -> str:
    """``masked`` with each soft line break of ``text`` read as a space (same length):
    a break right after an unfinished prohibition, a negation after an auxiliary
    ("must not", "do NOT"), a negative contraction, "cannot", "never" or "avoid", with
    at most its verb and an article ("do not use the"), before a line that opens (past
    blanks and quote marks ``>``, on both lines or neither) with a word that is not
    capitalised ("Use", where a name in capitals is, "CHANGELOG.md": adv122 #2), a
    code span or a flag: what the prohibition forbids ("... you must NOT" above "use
    --force on the release branch").  Text wrapped at a fixed width (a pasted e-mail, a
    quoted spec) keeps its rule whole (adv116 B5: "Do NOT" ended one line and "use
    --force" opened the next; the rule was read as no clause and the push that broke
    it was not found).  Any other line end still ends its clause: a line-per-item list
    ("... passed or not" above "use --force ...", adv120 #2), a heading "... were not
    finished" above a line that reverses a rule (adv120 #1), a statement ("git says I
    can't"), a capitalised new sentence or an idiom ("never mind") above an instruction
    (adv121 #2, #3).  ``low`` is ``text`` lowercased, ``masked`` ``low`` or a text of
    the same length made from it (code masked); the summary's side reads its sentences
    through it too (:mod:`compaction_audit.recall.survival.index`).  Where lowercasing
    changed the length ("İ"), the case of the next line is not read."""
    if "\n" not in low:
        return masked
    cased = len(text) == len(low)
    cuts = []
    for m in _SOFT_WRAP_RE.finditer(low):
        cut, end = m.span(1)
        line = low.rfind("\n", 0, m.start()) + 1
        before = low[line:m.start()].split()
        said = (bool(before) and before[-1] in _SUBJECTS
                and not low.startswith(_OBLIGED, m.start()))  # "we must not" is a rule
        if (said or (cased and text[end].isupper() and text[end + 1:end + 2].islower())
                or (low[line:].lstrip(" \t").startswith(">") != (">" in m.group(1)))):
            continue
        cuts.append((cut, end))
    if not cuts:
        return masked
    parts, at = [], 0
    for cut, end in cuts:  # the line end and the next line's quote marks become blanks
        parts += [masked[at:cut], " " * (end - cut)]
        at = end
    parts.append(masked[at:])
    return "".join(parts)


def _marks(low: str) -> list[tuple[Kind, str, int, int]]:
    """Every marker of ``low`` as (kind, family, start, end), sorted by start."""
    mark_of = _MARK_OF
    marks = [(*mark_of[m.lastgroup or "m0"], m.start(), m.end() - 1)
             for m in _CLAUSE_RE.finditer(" " + low)]
    n = len(marks)  # in order of start: the matches of one scan
    if "n't" in low or "n\u2019t" in low:
        marks += [(Kind.NEGATION, "not", m.start(), m.end())
                  for m in _CONTRACTION_RE.finditer(low)]
    if any(map(low.__contains__, _IMPERATIVE)):  # one of them, anywhere
        marks += [(*_IMPERATIVE[m.group(1)], m.start(1), m.end(1))
                  for m in _IMPERATIVE_RE.finditer(low)]
    if len(marks) > n:
        marks.sort(key=_mark_start)
    return marks


def _mark_start(mark: tuple[Kind, str, int, int]) -> int:
    return mark[2]


def _code_lines(low: str) -> list[tuple[int, bool]]:
    """(start, holds code) of each line of ``low``, in order: whether the line, its
    ``->`` arrows taken out, matches :data:`_ARROW_CODE_RE`.  Once per text, so that
    each arrow marker looks its line up (was a search of the whole line per marker:
    quadratic on one long line of arrows; issue 11, class 5, eighth adversarial pass
    F1)."""
    out, at = [], 0
    while True:
        nl = low.find("\n", at)
        line = low[at:nl if nl >= 0 else len(low)]
        out.append((at, _ARROW_CODE_RE.search(line.replace("->", " ")) is not None))
        if nl < 0:
            return out
        at = nl + 1


def _alpha_before(low: str, line_start: int, start: int) -> bool:
    """Whether the last space-separated word of ``low[line_start:start]`` (trailing
    whitespace dropped) is alphabetic, as ``seg.rstrip().rsplit(" ", 1)[-1].isalpha()``.
    Reads back only to the first character that is not a letter (an arrow's own ``>``
    at the latest), not to the line start."""
    at = start
    while at > line_start and low[at - 1].isspace():
        at -= 1
    word_end = at
    while at > line_start and low[at - 1].isalpha():
        at -= 1
    return at < word_end and (at == line_start or low[at - 1] == " ")


def _keep_marker(low: str, kind: Kind, family: str, start: int, end: int,
                 lines: list[tuple[int, bool]] | None = None) -> bool:
    """False for a marker that is not one here: a code arrow, a temporal "since", the
    "if" of an indirect question ("check if", "see if", "not sure if").
    ``lines``: :func:`_code_lines` of ``low`` (computed here when not given)."""
    if low[start:end] in ("->", "→"):
        if lines is None:
            lines = _code_lines(low)
        line_start, code = lines[bisect_right(lines, (start, True)) - 1]
        after = low[end:end + 40].lstrip().split(" ", 1)[0]
        return not code and _alpha_before(low, line_start, start) and after.isalpha()
    if low[start:end] == "since":
        return _SINCE_CLAUSE_RE.match(low, end) is not None
    if low[start:end] == "if":  # "let me check if X" asks X, it sets no condition
        return _ASKED_IF_RE.search(low, max(0, start - 40), start) is None
    if low[start:end] == "required":  # a predicate, not "passes required env vars"
        return (_REQUIRED_BEFORE_RE.search(low, max(0, start - 12), start) is not None
                or _REQUIRED_AFTER_RE.match(low, end) is not None)
    return True


def _left(low: str, masked: str, lo: int, m_start: int) -> tuple[int, list[str]]:
    """Start and content words (at most :data:`_MAX_LEFT`) left of a marker, within its
    sentence and not before ``lo``."""
    lo = max(lo, m_start - _LEFT_WINDOW)
    while 0 < lo < m_start and low[lo - 1].isalnum():  # do not start mid-word
        lo += 1
    start = lo
    # the search stops a little past the marker (its lookaheads need a few characters
    # beyond a cut): without a bound, each marker of one long sentence scanned to the
    # end of the text (quadratic; third adversarial pass)
    opened = -1  # a "(" whose ")" may come before the marker
    for cut in _SENTENCE_END_RE.finditer(masked, lo, min(len(masked), m_start + 64)):
        at = cut.start()
        if at >= m_start:
            break
        if masked[at] == "(" and opened < 0:
            opened = at
            continue
        if masked[at] == ")" and opened >= 0 and at - opened < _ASIDE_MAX:
            opened = -1  # a short aside: "the `action` (filter icon) is rendered before"
            continue
        if opened >= 0:  # not a short aside: the "(" ends what is left of it
            start, opened = opened + 1, -1
        start = cut.end()
    if opened >= 0:  # the marker is inside the brackets
        start = opened + 1
    found = _content_at(low[start:m_start], 99)
    if len(found) > _MAX_LEFT:  # start at the first word kept (with its backtick)
        at = start + found[-_MAX_LEFT][0]
        return at - (low[at - 1:at] == "`"), [w for _, w in found[-_MAX_LEFT:]]
    seg = low[start:m_start]
    lead = _LEAD_MARKUP_RE.match(seg)
    return start + (lead.end() if lead else 0), [w for _, w in found]


_EMPHASIS = frozenset({"ever", "under", "circumstances", "absolutely", "please"})
"""Words of an emphatic aside after a negation ("Never, ever", "Do not, under any
circumstances,"): they hold no object of the negation."""


def _no_step_between(between: str) -> bool:
    """Whether the words between a negation and an ordering or condition marker hold
    no comma after an object of the negation's own (two content words, an aside's
    words aside): "Never, ever deploy after", "Do not, under any circumstances,
    revert", "Do not deploy, after 17:00" (the comma sets off an aside, or the words
    before it are too few to be a clause), not "Do not use --force, then rerun" (a
    step after the forbidden one; usertest37 #2)."""
    comma = between.rfind(",")
    return comma < 0 or len([w for w in content_words(between[:comma])
                             if w not in _EMPHASIS]) < 2


_UNKNOWN_CAUSE_RE = re.compile(
    r"[\s*_]*(?:still|not\s+yet|unknown|unclear|undetermined|tbd|todo|n/a|none|see|under"
    r"|being|investigat\w*|pending|to\s+be)\b")
"""What a label's colon opens that states no cause (adv127 #5: "Root cause: still under
investigation", "Root cause: see the stack trace above" were lost causes, CA301 errors)."""


def _labelled(masked: str, at: int, stop: int, marks: list[tuple[Kind, str, int, int]],
              j: int) -> re.Match[str] | None:
    """Where a cause after a label's colon ("Root cause: X") ends: the next clause end
    after ``at`` (the colon's end) before ``stop``; the colon itself (None: the label
    states nothing) when a causal marker comes before that end, which states the cause
    itself ("Root cause: the 500s happen because X" is X's clause, not "the 500s
    happen")."""
    b = _SENTENCE_END_RE.search(masked, at, stop)
    end = b.start() if b else stop
    if _UNKNOWN_CAUSE_RE.match(masked, at):  # "Root cause: still under investigation",
        return _SENTENCE_END_RE.search(masked, at - 1, stop)  # "see the trace above"
    for mark in marks[j:]:
        if mark[2] > end:
            break
        if mark[1] == "because" and mark[2] >= at:
            return _SENTENCE_END_RE.search(masked, at - 1, stop)
    return b


def scan_clauses(text: str, out: list[Discriminator],
                 skip: list[tuple[int, int]] | None = None) -> None:
    """Append the clause discriminators of ``text`` (module docstring).  Markers inside
    a ``skip`` range (requirement units) are left out."""
    low = _lower(text)
    masked = unwrapped(text, low, _masked(low))
    marks = _marks(low)
    lines = (_code_lines(low) if ("->" in low or "→" in low)
             and any(low[m[2]:m[3]] in ("->", "→") for m in marks) else None)
    marks = [m for m in marks if low[m[2]:m[3]] not in _CHECKED or _keep_marker(low, *m, lines)]
    if skip:
        starts = [a for a, _ in skip]
        marks = [m for m in marks
                 if not ((k := bisect_right(starts, m[2]) - 1) >= 0 and m[2] < skip[k][1])]
    i, prev_end, prev_mark, negated_end = 0, 0, 0, 0
    then_at: int | None = None  # a "then" folded into the marker after it (below)
    while i < len(marks):
        kind, family, m_start, m_end = marks[i]
        first = m_start
        j = i + 1
        # leading nested markers with only stopwords between: "must not", "keep at most"
        while (j < len(marks) and marks[j][0] in _ABSORBED and marks[j][2] >= m_end
               and not content_words(low[m_end:marks[j][2]])):
            if kind is not Kind.NEGATION:
                kind, family = marks[j][0], marks[j][1]
            m_end = marks[j][3]
            j += 1
        if (low[first:m_end] == "then" and j < len(marks) and marks[j][0] is Kind.ORDERING
                and marks[j][1] != "sequence" and not content_words(low[m_end:marks[j][2]])
                and _SAME_THING_RE.match(low, marks[j][3])):
            i, then_at = j, first  # "raised to 45000 then reverted to 30000": one step,
            continue  # the revert's, its left side the words before "then" (usertest58 #2)
        stop = min(len(text), m_end + _WINDOW)
        for k in range(j, len(marks)):
            if marks[k][2] >= stop:
                break
            if family == "sequence" and marks[k][1] == "sequence" \
                    and low[first].isalpha() and low[marks[k][2]].isalpha() \
                    and len(content_words(low[m_end:marks[k][2]])) < 2:
                continue  # a chain of words (not arrows): "icon at px-3, then text
                # after the gap" is one ordering
            if kind is Kind.NEGATION and marks[k][0] in _NEGATED \
                    and _no_step_between(low[m_end:marks[k][2]]):
                continue  # what is forbidden is the order or the case: "never deploy
                # after 17:00", "do not revert the migration", "don't retry if it fails"
            if marks[k][0] not in _ABSORBED:
                stop = min(stop, marks[k][2])
                break
        b = _SENTENCE_END_RE.search(masked, m_end, stop)
        if (b is not None and family == "because" and masked[b.start()] == ":"
                and not masked[m_end:b.start()].strip(" *_")):  # a label: "Root cause:
            b = _labelled(masked, b.end(), stop, marks, j)  # X" states X (adv126 #4)
        end = b.start() if b else stop
        if text.count("`", first, end) % 2:  # an open backtick: close it or drop
            close = text.find("`", end, end + 200)
            nl = text.find("\n", end, close) if close >= 0 else -1
            if close < 0 or nl >= 0:
                i = j
                continue
            end = close + 1
        while j < len(marks) and marks[j][2] < end:  # nested markers: part of this clause
            j += 1
        right = content_words(low[m_end:end])
        negative = kind is Kind.NEGATION or not NEGATION_WORDS.isdisjoint(right)
        if negative:
            right = [w for w in right if w not in NEGATION_WORDS]
        start, imperative = first, False
        left: list[str] = []  # (was list[str](): a generic alias called per clause)
        if family in _TWO_SIDED:  # its left side may be the previous clause's object
            # not the words a negation before it forbids: "Do not use --force, then
            # rerun it" orders nothing after "use --force"
            start, left = _left(low, masked, max(prev_mark, negated_end),
                                first if then_at is None else then_at)
            right = [">", *right]
        elif ((kind is Kind.CONDITION and (len(right) < 2 or low[first:first + 5] == "only "))
              or low[first:first + 8] == "required"):  # "subscribe only when connected",
            # "runs only in review mode", "token + TTL required for safety"
            start, left = _left(low, masked, prev_end, first)
        elif not right and (family == "exact" or low[first:m_end] in ("nothing", "none")):
            # "keep status codes exactly", "exits silently and injects nothing": the left
            start, left = _left(low, masked, prev_end, first)
        elif kind is Kind.NEGATION and (aux := _AUX_RE.search(low, max(0, first - 8), first)):
            start = aux.start()
            imperative = low[start:start + 3] == "do " and bool(
                _COORDINATED_RE.search(low, 0, start))
        if not left and family in _SUBJECT_SHOWN and not imperative:
            # the subject in the text, not the norm; none for a coordinated imperative:
            # "set max_connections = 200 and do NOT use --force" forbids the second only
            subject, said = _left(low, masked, prev_end, first)
            if said and not any(m[2] < first and m[3] > subject for m in marks[max(0, i - 3):i]):
                start = min(start, subject)
        words = [*left, *right]
        if negative and kind is not Kind.NEGATION:
            words.insert(0, "not")
        if family in _TWO_SIDED:  # right holds ">"; an arrow and "instead" need both sides
            both = family == "instead" or low[first:first + 1] in "-→"
            enough = len(left) + len(right) > 2 and (not both or bool(left and right[1:]))
        else:
            enough = len(words) - words.count("not") >= 2
        i, then_at = j, None
        prev_mark = m_end
        if not enough:
            continue
        seg = text[start:end].rstrip().rstrip(",")
        while len(tail := seg.rsplit(None, 1)) > 1 and tail[1].lower() in _DANGLING:
            seg = tail[0].rstrip().rstrip(",")
        end = start + len(seg)
        prev_end = end
        if kind is Kind.NEGATION:
            negated_end = end
        if "\n" in seg:  # across a soft line break (unwrapped): one line, as typed
            seg = " ".join(_QUOTED_BREAK_RE.sub(" ", seg).split())
        out.append(Discriminator(kind, seg, " ".join([family, *words]), start, end))


# --------------------------------------------------------------------- requirement units
_HEADING_RE = re.compile(REQ_HEADING)
_BULLET_RE = re.compile(r"([ \t]*)(?:[-*+•]|\d+[.)])[ \t]+(\S.*)")
_OTHER_HEADING_RE = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[A-Z][A-Za-z /-]{0,40}:[ \t]*$)")
_REQ_WORDS = 12


def scan_requirements(text: str, out: list[Discriminator]) -> list[tuple[int, int]]:
    """Append one ``requirement`` per bullet under a requirement heading of ``text``
    (``## Constraints``, ``Edge cases:``, ``- Render requirements:``); return the
    ``(start, end)`` range of each unit.  A bullet's continuation lines (indented, no
    bullet) belong to it; the list ends at a blank line followed by a non-bullet, at
    another heading, or, for a heading that is itself a bullet, at a bullet indented no
    deeper than it.  A bullet that only heads sub-bullets (ends with ``:``), or has fewer
    than three content words (negation words count: "No reopen behavior"), is no unit.
    Norm: ``"req <content words>"`` (at most 12, negation words kept)."""
    ranges: list[tuple[int, int]] = []
    for h in _HEADING_RE.finditer(text):
        head = h.group()
        head_bullet = _BULLET_RE.match(head)
        head_indent = len(head_bullet.group(1)) if head_bullet else -1
        pos = h.end() + 1
        unit: tuple[int, int] | None = None
        units: list[tuple[int, int]] = []
        while pos < len(text):
            nl = text.find("\n", pos)
            line_end = nl if nl >= 0 else len(text)
            line = text[pos:line_end]
            bullet = _BULLET_RE.match(line)
            if not line.strip():
                nxt = text[line_end + 1:text.find("\n", line_end + 1) % (len(text) + 1)]
                if not _BULLET_RE.match(nxt):
                    break
            elif bullet:
                if len(bullet.group(1)) <= head_indent:
                    break
                if unit:
                    units.append(unit)
                unit = (pos + bullet.start(2), line_end)
            elif unit and line[:1] in " \t" and not _OTHER_HEADING_RE.match(line):
                unit = (unit[0], line_end)
            else:
                break
            pos = line_end + 1
        if unit:
            units.append(unit)
        for a, b in units:
            body = text[a:b].rstrip().rstrip(".;")
            if body.endswith(":"):
                continue
            words = content_words(_lower(body), _REQ_WORDS)
            if len(words) < 3:  # "Python 3.11+", "show the comment": a list item, no rule
                continue
            out.append(Discriminator(Kind.REQUIREMENT, " ".join(body.split()),
                                     "req " + " ".join(words), a, a + len(body)))
            ranges.append((a, b))
    return ranges
