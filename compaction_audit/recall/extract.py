"""Discriminators: the tokens a later decision can hinge on, and whether a fold kept them.

Where the taxonomy comes from: seed 002, "Decision Boundary", calls a span
*discriminating* when it holds "a numeric bound, a negation, an identifier, a version
pin, a causal 'because,' or a provenance link"; its "Core Distinction" lists
"identifiers, negations, ordering, numeric quantities, and provenance links".  A summary
that keeps the topic but drops such a token is a lossy fold.  Full taxonomy, examples,
survival rules and limitations: ``docs/discriminators.md``.

Kinds (``Kind``):

* token kinds, found in one left-to-right scan where the first matching pattern claims
  the characters (so the number in ``v4.2.1`` or ``migration 0047`` is not a quantity):
  ``link`` (URLs, ``span s12``, ``[s3]``), ``identifier`` (`code spans`, file paths, CLI
  flags, ``ABC-123``/``#1234``, ``migration 0047``, hex hashes, dotted.names,
  snake_case, camelCase, ``db01``, the key of ``key=value``), ``scope`` (prod, staging,
  dev, qa..., cloud regions, ISO dates), ``version`` (``v4.2.1``, ``4.1.9``, ``==1.2``,
  ``^2.0``) and ``quantity`` (numbers with an optional unit; bare numbers need 2+ digits);
* clause kinds, a marker with the content words it governs (at most 6, up to
  punctuation, a conjunction or the next marker): ``negation`` (not, never, don't,
  without, no longer...), ``constraint`` (must, only, at most, at least, never exceed...),
  ``causal`` (because, due to, caused by; "since" is ambiguous and skipped) and
  ``ordering`` (before, after, then, followed by, ->, reverted, rolled back; with the
  words on both sides).

Shapes: ``extract(text) -> list[Discriminator]`` sorted by ``start``, deduplicated by
``(kind, norm)``.  ``norm`` is the comparison form: lowercased; ``45000``/``45000 ms``
for quantities (thousands separators removed, canonical unit); ``4.2.1`` for
``v4.2.1``/``==4.2.1``; ``prod`` for ``production``; ``"<family> <words>"`` for clause
kinds (``"not enable --force prod migration"``, ``"max 3 replicas"``,
``"revert > 4.2.1 4.1.9"`` with ``>`` between the two sides of an ordering).
``key=value`` gives the key and the value as two discriminators.

Speed: regexes are compiled once; both scans start with a character class so the C
matcher skips word characters; results and summary indexes are LRU-cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

__all__ = ["CLAUSE_KINDS", "KIND_RANK", "SCOPE_CANON", "Discriminator", "Kind", "extract",
           "extract_cached", "is_discriminating"]


class Kind(StrEnum):
    """What a discriminator is; the values are the names used in reports."""

    NEGATION = "negation"
    CONSTRAINT = "constraint"
    CAUSAL = "causal"
    ORDERING = "ordering"
    QUANTITY = "quantity"
    VERSION = "version"
    IDENTIFIER = "identifier"
    SCOPE = "scope"
    LINK = "link"


CLAUSE_KINDS = frozenset({Kind.NEGATION, Kind.CONSTRAINT, Kind.CAUSAL, Kind.ORDERING})
"""Kinds made of a marker and the words it governs (the rest are single tokens)."""

#: Severity of losing a kind (higher = worse).  Negations and constraints flip or bound
#: a decision and carry no topical mass, so summarizers drop them first (seed 002);
#: a lost cause hides *why* and invites repeating the failure; a lost scope applies a
#: fact to the wrong environment; quantities and version pins are exact values that
#: prose cannot reconstruct; ordering is partly recoverable from the narrative; an
#: identifier is usually still named by topic; a provenance link only costs a lookup.
KIND_RANK: dict[Kind, int] = {
    Kind.NEGATION: 9, Kind.CONSTRAINT: 9, Kind.CAUSAL: 7, Kind.SCOPE: 6,
    Kind.QUANTITY: 5, Kind.VERSION: 4, Kind.ORDERING: 3, Kind.IDENTIFIER: 2, Kind.LINK: 1,
}


@dataclass(frozen=True, slots=True)
class Discriminator:
    """One discriminator: ``text[start:end]`` of the source and its normalized form."""

    kind: Kind
    text: str
    norm: str
    start: int
    end: int


# --------------------------------------------------------------------- token kinds
_SPACED_UNITS = (r"ms|msecs?|milliseconds?|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?"
                 r"|wks?|weeks?|µs|μs|ns|bytes?|[kmgtp]i?b|percent|pct|%|tokens?|rps|qps"
                 r"|[kmg]?hz")
_UNIT_CANON = {"msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
               "sec": "s", "secs": "s", "second": "s", "seconds": "s", "m": "min",
               "mins": "min", "minute": "min", "minutes": "min", "hr": "h", "hrs": "h",
               "hour": "h", "hours": "h", "day": "d", "days": "d", "wk": "week",
               "wks": "week", "weeks": "week", "µs": "us", "μs": "us", "byte": "b",
               "bytes": "b", "percent": "%", "pct": "%", "token": "tokens", "M": "M"}
SCOPE_CANON = {"production": "prod", "prd": "prod", "stg": "staging", "pre-prod": "preprod"}
_DIR = r"(?:north|south|east|west|central|northeast|northwest|southeast|southwest)"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_VSUFFIX = r"(?:[-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?!\w)"
_PATH_REL = (r"(?<![\w/.-])(?=[\w.@-]*+/)[\w@-][\w.@-]*(?:/[\w.@-]+)*/[\w@-]*"
             r"\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])")  # a relative path needs an extension
_HASH = r"\b(?=[a-fA-F]*+\d)(?=\d*+[a-fA-F])[0-9a-fA-F]{7,64}\b"
# (group name, pattern) in three groups by first character; within a group the order
# is the priority at one position.  A trailing digit in a name only keeps group names
# unique ("path1", "path2" are both paths).
_LETTER_START = [
    ("url", r"(?i:https?://[^\s<>\"'`]+)"),
    ("spanref1", r"(?i:spans?\s+#?(?P<sref>[a-z]{0,3}\d+)\b)"),
    ("region", rf"(?i:(?:us|eu|ap|sa|ca|me|af|il|mx)-(?:gov-)?{_DIR}-\d\b"
               rf"|(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-{_DIR}\d\b)"),
    ("version1", r"[vV]\d++(?:\.\d++)*+" + _VSUFFIX),
    ("path1", _PATH_REL + r"|[A-Za-z]:\\[\w\\.-]+"),
    ("ticket1", r"[A-Z][A-Z0-9]{1,9}-\d+\b"),
    ("migration", r"(?i:migrations?\s+(?:id:?\s*)?#?(?P<mig>\d[\w-]*))"),
    ("hash1", _HASH),
    ("dotted", r"[A-Za-z_][\w@-]*+(?:\.[A-Za-z0-9_][\w-]*+)++"),
    ("snake", r"_*+[A-Za-z][A-Za-z0-9]*+(?:_++[A-Za-z0-9]++)++_*+|__\w+__\b"),
    ("camel", r"[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*\b"),
    ("alnum", r"(?=[A-Za-z_-]*+\d)[A-Za-z][A-Za-z0-9]*+(?:-[A-Za-z0-9]++)*+\b"),
    ("scope", r"(?i:(?<![\w-])(?:production|prod|prd|staging|stg|pre-?prod|dev|qa|uat"
              r"|test-env)(?![\w-]|\.\w))"),
    ("key", r"[A-Za-z][\w.-]*+(?==(?!=))"),  # the key of key=value
]
# Plain words ("Moved", "items") are rejected before trying the patterns above, unless
# they are keywords (scope terms, "span", "migration").
_LETTER_GATE = (r"(?!(?!(?i:prod|production|prd|staging|stg|dev|qa|uat|spans?|migrations?)\b)"
                r"[A-Za-z][a-z]*+(?![\w/\\:@=-]|\.\w))")
_DIGIT_START = [
    ("date", r"(?<!\d)(?P<day>\d{4}-\d{2}-\d{2})"
             r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)"),
    ("version2", r"(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)*" + _VSUFFIX),
    ("version4", r"(?<=[\^~])\d+(?:\.\d+)+|(?<=[<>])\d+\.\d+\.\d+"),  # "^2.0": see _LEAD
    ("path2", _PATH_REL),
    ("hash2", _HASH),
    ("time", r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?!\w|:\d)"),
    ("quantity", rf"(?<![\w.,]){_NUM}(?:(?P<unit>(?i:{_SPACED_UNITS}|us)|[smhdxkKM])"
                 rf"|\s(?P<sunit>(?i:{_SPACED_UNITS})))?(?!\w)"),
]
_SYMBOL_START = [
    ("code", r"`(?P<inner>[^`\n]+)`"),
    ("spanref2", r"\[(?P<bref>[sS]\d+)\]"),
    ("version3", r"(?<=[=~<>!])=\s?\d+(?:\.\d+)+"),  # "==1.2", ">=1.0": see _LEAD
    ("path3", r"(?<![\w/.~:<-])/(?:[\w.@-]+/)*[\w.@-]+/?|(?<![\w/.-])(?:\.{1,2}|~)/[\w.@+/-]+"),
    ("flag", r"(?<![\w/-])--?[A-Za-z](?:[\w-]*[A-Za-z0-9])?"),
    ("ticket2", r"(?<![\w&#])#\d+\b"),
]


def _alternation(patterns: list[tuple[str, str]]) -> str:
    return "|".join(f"(?P<{name}>{pat})" for name, pat in patterns)


# Tokens start after a non-word "lead" character (the text is scanned with a space
# prepended).  Starting the regex with a character class lets the C matcher skip
# every word character without entering the pattern: this is what makes it fast.
# A version pin's operator is its own lead ("requests==2.31.0": the lead is "=").
# "-", ".", "@" and "\\" are not leads: a token glued to them ("10-20", "a.b.c") is
# scanned from its start only, which keeps long runs like "a-a-a-..." linear.
_LEAD = r"[^\w.\\@-]"
_TOKEN_RE = re.compile(
    rf"{_LEAD}(?:(?=[A-Za-z_]){_LETTER_GATE}(?:{_alternation(_LETTER_START)})"
    rf"|(?=\d)(?:{_alternation(_DIGIT_START)})|(?=[`\[=/.~\\#-])(?:{_alternation(_SYMBOL_START)}))")
_TOKEN_KIND = {"url": Kind.LINK, "spanref": Kind.LINK, "date": Kind.SCOPE,
               "region": Kind.SCOPE, "scope": Kind.SCOPE, "version": Kind.VERSION,
               "time": Kind.QUANTITY, "quantity": Kind.QUANTITY}
_ABBREVIATIONS = frozenset({"e.g", "i.e", "a.m", "p.m", "u.s", "u.k", "ph.d", "et.al", "n.b"})


def _token_norm(name: str, m: re.Match[str], raw: str) -> str | None:
    """Normalized form of a token match, or ``None`` when the match is a false positive."""
    low = raw.lower()
    if name == "spanref":
        return (m.group("sref") or m.group("bref")).lower()
    if name == "date":
        return m.group("day")
    if name == "version":
        v = re.sub(r"\s+", "", low).removeprefix("==")
        return v[1:] if v.startswith("v") and "." in v else v
    if name == "path":
        return low.removeprefix("./")
    if name == "migration":
        return "migration " + m.group("mig").lower()
    if name == "dotted":
        parts = low.split(".")
        nxt = m.string[m.end():m.end() + 1]
        if low in _ABBREVIATIONS or (nxt == "." and all(len(p) <= 2 for p in parts)):
            return None
    if name == "scope":
        return SCOPE_CANON.get(low, low)
    if name == "quantity":
        unit = m.group("unit") or m.group("sunit")
        number = raw[: len(raw) - len(unit)].strip() if unit else raw
        if not unit and sum(c.isdigit() for c in number) < 2:
            return None
        number = number.replace(",", "")
        return f"{number} {_UNIT_CANON.get(unit) or _UNIT_CANON.get(unit.lower(), unit.lower())}" \
            if unit else number
    return low


def _scan_tokens(text: str, offset: int, out: list[Discriminator]) -> None:
    """Append the token discriminators of ``text`` (found at ``offset`` in the source)."""
    offset -= 1  # the prepended lead space
    for m in _TOKEN_RE.finditer(" " + text):
        group = m.lastgroup or ""
        name = group.rstrip("0123456789")
        start = m.start(group) - (group in ("version3", "version4"))  # the operator lead
        raw = m.string[start:m.end()]
        if name == "code":
            before, inner = len(out), m.group("inner")
            _scan_tokens(inner, offset + m.start("inner"), out)
            if len(out) == before and inner.strip():
                at = offset + m.start("inner") + len(inner) - len(inner.lstrip())
                out.append(Discriminator(Kind.IDENTIFIER, inner.strip(), inner.strip().lower(),
                                         at, at + len(inner.strip())))
            continue
        if name in ("url", "path"):
            raw = raw.rstrip(".,;:!?)'\"") if name == "url" else raw.rstrip(".")
        norm = _token_norm(name, m, raw)
        if norm:
            norm = norm.rstrip("/") if name == "url" else norm
            out.append(Discriminator(_TOKEN_KIND.get(name, Kind.IDENTIFIER), raw, norm,
                                     offset + start, offset + start + len(raw)))


# -------------------------------------------------------------------- clause kinds
# Clause markers: (kind, family, regex).  Survival compares within a family
# ("at most" and "never exceed" are both "max").  Each regex starts with a literal.
_MARKERS: list[tuple[Kind, str, str]] = [
    *((Kind.NEGATION, "not", p) for p in (
        r"not", r"never(?!\s+exceed)", r"no\s+longer", r"nothing", r"none", r"without",
        r"cannot", r"no(?!\s+(?:more|less|fewer)\s+than)(?=\s+\w)")),
    *((Kind.CONSTRAINT, f, p) for f, p in (
        ("must", r"must"), ("must", r"always"), ("must", r"required"), ("only", r"only"),
        ("only", r"exactly"), ("max", r"at\s+most"), ("max", r"no\s+more\s+than"),
        ("max", r"never\s+exceed(?:s|ed)?"), ("max", r"maximum(?:\s+of)?"),
        ("max", r"limited\s+to"), ("max", r"capped\s+at"), ("min", r"at\s+least"),
        ("min", r"no\s+(?:less|fewer)\s+than"), ("min", r"minimum(?:\s+of)?"))),
    *((Kind.CAUSAL, "because", p) for p in (
        r"because(?:\s+of)?", r"due\s+to", r"caused\s+by", r"as\s+a\s+result\s+of",
        r"owing\s+to", r"root\s+cause[ds]?", r"triggered\s+by", r"on\s+account\s+of")),
    *((Kind.ORDERING, "sequence", p) for p in (
        r"before", r"after(?:wards)?", r"then", r"followed\s+by", r"prior\s+to",
        r"preceded\s+by", r"subsequently", r"->", r"→")),
    *((Kind.ORDERING, "revert", p) for p in (
        r"revert(?:s|ed|ing)?", r"rolled-back", r"roll(?:s|ed|ing)?\s+back", r"rollback",
        r"backed\s+out", r"undid", r"undone")),
]


def _marker_regex() -> re.Pattern[str]:
    """One regex over the lowercased text: a lead character (as in _TOKEN_RE), then the
    markers grouped by first character so the matcher rejects most words at once.
    Group ``m<i>`` is ``_MARKERS[i]``."""
    by_first: dict[str, list[str]] = {}
    for i, (_, _, pat) in enumerate(_MARKERS):
        by_first.setdefault(pat[0], []).append(f"(?P<m{i}>{pat[1:]})")
    alts = "|".join(f"{re.escape(c)}(?:{'|'.join(v)})" for c, v in by_first.items())
    return re.compile(rf"[^\w./`-](?:{alts})(?![\w/-]|\.\w)")


_CLAUSE_RE = _marker_regex()
_CONTRACTION_RE = re.compile(r"\b[a-z]+n['\u2019]t\b")  # don't, isn't, won't: negations
_AUX_RE = re.compile(r"\b(?:do|does|did|must|should|shall|will|would|could|can|may|might|is"
                     r"|are|was|were|has|have|had)\s+$")  # "do" of "do not", kept in text
_BOUNDARY_RE = re.compile(  # a clause ends at punctuation or before a conjunction
    r"[;:!?\n()\[\],.\s<>{}\"\\](?:(?<=,)(?!\d{3})|(?<=\.)(?!\S)"
    r"|(?<=[;:!?\n()\[\]<>{}\"\\])"
    r"|(?<=\s)(?:but|although|though|however|whereas|unless|while|since|so|which|whereby)\b)")
_OBJ_CHARS = r"[^\s,;:!?()\[\]{}\"'`“”=]+"
_OBJ_TOKEN_RE = re.compile(  # a word; "45,000" and "don't" stay one word
    rf"{_OBJ_CHARS}(?:(?:(?<=\d),(?=\d{{3}})|(?<=\w)'(?=\w)){_OBJ_CHARS})*")
_STOPWORD_TEXT = (
    "a an the this that these those it its on in at to of for with by from into onto as "
    "be been being is are was were am do does did have has had will would should "
    "shall can could may might we you they i he she our your their my me us them any "
    "anything ever yet and or nor also even just again so all some there here very "
    "please one ones")
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MAX_OBJECT, _MAX_LEFT, _WINDOW, _LEFT_WINDOW = 6, 4, 120, 60


def _content(segment: str, limit: int = _MAX_OBJECT) -> list[str]:
    """First ``limit`` normalized content words of a lowercased segment."""
    words: list[str] = []
    for tok in _OBJ_TOKEN_RE.findall(segment):
        w = tok.rstrip(".")
        if not w or w in _STOPWORDS or not (w[0].isalnum() or w[-1].isalnum()):
            continue
        if "," in w:
            w = w.replace(",", "")
        if w[0] == "v" and w[1:2].isdigit() and "." in w:
            w = w[1:]
        words.append(SCOPE_CANON.get(w, w))
        if len(words) == limit:
            break
    return words


def _lower(text: str) -> str:
    """``text.lower()`` with the same length (so offsets stay valid)."""
    low = text.lower()
    if len(low) != len(text):  # e.g. "İ" lowers to two code points: keep such chars
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return low


def _scan_clauses(text: str, out: list[Discriminator]) -> None:
    """Append the clause discriminators (marker + governed words) of ``text``."""
    low = _lower(text)
    marks = [(_MARKERS[int((m.lastgroup or "m0")[1:])][:2], m.start(), m.end() - 1)
             for m in _CLAUSE_RE.finditer(" " + low)]  # ((kind, family), start, end)
    if "n't" in low or "n\u2019t" in low:
        marks += [((Kind.NEGATION, "not"), m.start(), m.end())
                  for m in _CONTRACTION_RE.finditer(low)]
        marks.sort(key=lambda mark: mark[1])
    for i, ((kind, family), m_start, m_end) in enumerate(marks):
        stop = min(marks[i + 1][1] if i + 1 < len(marks) else len(text), m_end + _WINDOW)
        b = _BOUNDARY_RE.search(low, m_end, stop)
        end = b.start() if b else stop
        right = _content(low[m_end:end])
        start, left = m_start, []
        if kind is Kind.ORDERING:
            lo = max(marks[i - 1][2] if i else 0, m_start - _LEFT_WINDOW)
            while 0 < lo < m_start and low[lo - 1].isalnum():  # do not start mid-word
                lo += 1
            cuts = [x.end() for x in _BOUNDARY_RE.finditer(low, lo, m_start)]
            start = cuts[-1] if cuts else lo
            left = _content(low[start:m_start], 99)[-_MAX_LEFT:]
            start += len(low[start:m_start]) - len(low[start:m_start].lstrip())
            right = [">", *right]
        elif kind is Kind.NEGATION and (aux := _AUX_RE.search(low, max(0, m_start - 8), m_start)):
            start = aux.start()
        if len(left) + len(right) > (1 if kind is Kind.ORDERING else 0):
            end = start + len(text[start:end].rstrip())
            out.append(Discriminator(kind, text[start:end], " ".join([family, *left, *right]),
                                     start, end))


# ------------------------------------------------------------------------- extract
@lru_cache(maxsize=4096)
def extract_cached(text: str) -> tuple[Discriminator, ...]:
    """Every discriminator of ``text`` as a cached tuple (see :func:`extract`)."""
    found: list[Discriminator] = []
    _scan_tokens(text, 0, found)
    _scan_clauses(text, found)
    found.sort(key=lambda d: (d.start, -KIND_RANK[d.kind]))
    seen: set[tuple[Kind, str]] = set()
    unique = []
    for d in found:
        if (d.kind, d.norm) not in seen:
            seen.add((d.kind, d.norm))
            unique.append(d)
    return tuple(unique)


def extract(text: str) -> list[Discriminator]:
    """Every discriminator of ``text``, sorted by start, deduplicated by ``(kind, norm)``.

    Results are cached per text (summaries recur across folds), so repeated calls are
    cheap; the returned list is a fresh copy the caller may mutate.
    """
    return list(extract_cached(text))


def is_discriminating(text: str) -> bool:
    """True when ``text`` holds at least one discriminator (seed 002: not narrative)."""
    return bool(extract_cached(text))
