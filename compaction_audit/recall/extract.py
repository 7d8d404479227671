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
matcher skips word characters; results and summary indexes are LRU-cached; during an
audit, :func:`extract_cached` first reads the table of texts the recall analysis and
its helper process extracted (:func:`share`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from compaction_audit.recall.bindings import BOUND_KINDS, bind
from compaction_audit.recall.clauses import scan_clauses, scan_requirements
from compaction_audit.recall.fences import blank_fences
from compaction_audit.recall.kinds import (
    CLAUSE_KINDS,
    KIND_RANK,
    SCOPE_CANON,
    Discriminator,
    Kind,
)
from compaction_audit.recall.ruledout import scan_ruled_out
from compaction_audit.recall.spantypes import clean_text
from compaction_audit.recall.versions import SUFFIX, suffix_norm

__all__ = ["CLAUSE_KINDS", "KIND_RANK", "QUANTITY_UNITS", "SCOPE_CANON", "Discriminator", "Kind",
           "canonical_unit", "extract", "extract_cached", "is_discriminating", "share",
           "unit_quantities", "value_tokens"]

# --------------------------------------------------------------------- token kinds
_SPACED_UNITS = (r"ms|msecs?|milliseconds?|secs?|seconds?|mins?|minutes?|hrs?|hours?|days?"
                 r"|wks?|weeks?|µs|μs|ns|bytes?|[kmgtp]i?b|percent|pct|%|tokens?|rps|qps"
                 r"|[kmg]?hz|pixels?|s")
_UNIT_CANON = {"msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
               "sec": "s", "secs": "s", "second": "s", "seconds": "s", "m": "min",
               "mins": "min", "minute": "min", "minutes": "min", "hr": "h", "hrs": "h",
               "hour": "h", "hours": "h", "day": "d", "days": "d", "wk": "week",
               "wks": "week", "weeks": "week", "µs": "us", "μs": "us", "byte": "b",
               "bytes": "b", "percent": "%", "pct": "%", "token": "tokens", "M": "M",
               "pixel": "px", "pixels": "px"}
_GLUED_UNITS = r"px|rem|em|vh|vw"
"""CSS lengths, in lower case and glued to their number ("20px", "0.75rem", "1.5em";
``px`` also after a space, and "12 pixels" is ``12 px``): usertest72 #5, "20px" and
"(12px)" in the assistant's prose were no fact; not "4 REM cycles", "10 em dashes" or
"pt", which is also a point of a story or Pacific time (adv141 #3).  In prose only
(:data:`_CSS_LENGTHS`)."""
_CSS_LENGTHS = frozenset(_GLUED_UNITS.split("|"))
"""The CSS length units: facts in prose only (:func:`_values_only`)."""
QUANTITY_UNITS = f"{_SPACED_UNITS}|{_GLUED_UNITS}"
"""The units a quantity token spells (a regular-expression alternation, also valid in
Polars' engine)."""
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_QUANTITY_UNIT = (rf"(?:(?P<unit>(?i:{_SPACED_UNITS}|us)|{_GLUED_UNITS}|[smhdxkKM])"
                  rf"|\s(?P<sunit>(?i:{_SPACED_UNITS})|px))")
_QUANTITY = rf"(?<![\w.,]){_NUM}{_QUANTITY_UNIT}?(?!\w)"
"""A quantity token: a number, then a unit glued or after one space (a one-letter
unit of ``[smhdxkKM]`` glued only, its case told: "5M" is a count, "5m" minutes)."""
_UNIT_QUANTITY_RE = re.compile(rf"(?<![\w.,]){_NUM}{_QUANTITY_UNIT}(?!\w)")
""":data:`_QUANTITY` with its unit required: a bare number is no match (usertest52 #5:
every number of number-dense text was one, half the audit's time)."""


def canonical_unit(unit: str) -> str:
    """The comparison form of a quantity's unit as written: ``"seconds"`` and ``"sec"``
    are ``"s"``, ``"M"`` stays a count's ``"M"``, any other unit lowercased."""
    return _UNIT_CANON.get(unit) or _UNIT_CANON.get(unit.lower(), unit.lower())


def unit_quantities(text: str) -> list[tuple[str, str]]:
    """(number without separators, canonical unit) of each quantity with a unit in
    ``text``, read by the extractor's own quantity pattern (:data:`_QUANTITY`, its unit
    required: :data:`_UNIT_QUANTITY_RE`):
    what a leaf states a value in, for the support of a summary's value in another
    unit (CA305; usertest51 #1: a reader of its own missed "86400 s", "45000\u00a0ms"
    and read "5M" as minutes)."""
    out = []
    for m in _UNIT_QUANTITY_RE.finditer(text):
        unit = m.group("unit") or m.group("sunit")
        number = m[0][:len(m[0]) - len(unit)].strip().replace(",", "")
        out.append((number, canonical_unit(unit)))
    return out


_DIR = r"(?:north|south|east|west|central|northeast|northwest|southeast|southwest)"
_PAST_SUFFIX = r"(?![-+.][0-9A-Za-z])"
"""No more suffix after a version: one past the bounds of
:data:`~compaction_audit.recall.versions.SUFFIX` (``1.2.0-`` and 65 letters) makes no
version at all, never the bare numbers (adv90 #2: ``1.2.0.dev`` and a long number read
``1.2.0``, so its change to ``1.2.0`` was a version kept)."""
_VSUFFIX = rf"(?:{SUFFIX})?(?!\w){_PAST_SUFFIX}"
"""A version's suffix (:data:`~compaction_audit.recall.versions.SUFFIX`), then the end of
a word: ``1.2.0rc1``, ``1.2.0-rc.1``, ``v1.0.0.post1`` (adv88 #4: the PEP 440 forms)."""
_OP_VSUFFIX = rf"(?:{SUFFIX}(?!\w))?{_PAST_SUFFIX}"
"""The suffix of an operator-led version (``lib2==1.2.0rc1``, ``^2.0.0-beta``), when a
word ends after it; none otherwise, the numbers alone as before (``lib2==1.2.0x`` reads
``lib2==1.2.0``).  adv88 #4: the pin stopped at its numbers, so ``lib2==1.2.0rc1`` and
``lib2==1.2.0.post1`` were ``1.2.0``."""
_PATH_REL = (r"(?<![\w/.-])(?=[\w.@-]*+/)[\w@-][\w.@-]*+(?:/[\w.@-]++(?=/))*+/[\w@-]*"
             r"(?:\.[\w@-]+)*?\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/]|\.\w)")  # needs an extension;
# x.test.ts keeps its last extension (issue 10, point 2)
# a path without an extension needs two slashes and a letter first: kv/app/nas-02
_PATH_BARE = r"(?<![\w/.-])[A-Za-z][\w@-]*+(?:/[\w.@-]++){2,}+/?(?![\w/])"
# a scope word counts only in an environment context (issue 10, point 2): "on prod",
# "ENV=prod", ":prod", "prod/staging", "the prod environment"
_ENV_BEFORE = "(?:" + "|".join(
    [rf"(?<=\b{w} )" for w in ("on", "in", "to", "into", "onto", "against", "from", "for",
                               "at", "via")]
    + [rf"(?<=\b{w} the )" for w in ("on", "in", "to", "into", "against", "from", "for")]
    + [r"(?<=[=:/])"]) + ")"
_ENV_AFTER = (r"(?=/|\s+(?:env|environments?|clusters?|servers?|databases?|db|deploy(?:ments?)?"
              r"|instances?|stacks?|namespaces?|config|branch|builds?|hosts?|nodes?|data"
              r"|migrations?|releases?|rollouts?|tables?|buckets?|keys?|urls?|api"
              r"|credentials|secrets|traffic|only)\b)")
_COMMON_SHORT = frozenset([
    "a", "an", "as", "at", "by", "in", "of", "on", "or", "to", "up", "the", "and", "non", "pre",
    "re", "co", "one", "two", "all", "out", "off", "end", "top", "low", "per", "sub", "any",
    "few", "new", "old", "own", "day", "way", "set", "get", "use", "run", "key", "log", "self",
    "so", "no", "not", "far", "how", "mid", "big", "bit", "can", "too", "yet", "via", "ad",
    "hoc", "ex",
])
_KEBAB_GLUE = frozenset({"of", "the", "to", "and", "a", "in", "on", "by", "for", "or"})
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
    ("path1", _PATH_REL + r"|[A-Za-z]:\\[\w\\.-]+|" + _PATH_BARE),
    ("ticket1", r"[A-Z][A-Z0-9]{1,9}-\d+(?:-\d+)*\b"),  # CVE-2024-3094 whole (usertest69 #3)
    ("migration", r"(?i:migrations?\s+(?:id:?\s*)?#?(?P<mig>\d[\w-]*))"),
    ("hash1", _HASH),
    ("dotted", r"[A-Za-z_][\w@-]*+(?:\.[A-Za-z0-9_][\w-]*+)++"),
    ("snake", r"_*+[A-Za-z][A-Za-z0-9]*+(?:_++[A-Za-z0-9]++)++_*+|__\w+__\b"),
    ("camel", r"[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*\b"),
    ("alnum", r"(?=[A-Za-z_-]*+\d)[A-Za-z][A-Za-z0-9]*+(?:-[A-Za-z0-9]++)*+\b"),
    ("scope", rf"(?i:(?<![\w-]){_ENV_BEFORE}(?:production|prod|prd|staging|stg|pre-?prod|dev"
              rf"|qa|uat|test-env)(?![\w-]|\.\w)|(?<![\w-])(?:production|prod|prd|staging"
              rf"|stg|pre-?prod|dev|qa|uat|test-env){_ENV_AFTER})"),
    ("kebab", r"[a-z]++(?:-[a-z]++)++(?![\w-]|\.\w)"),
    ("key", r"[A-Za-z][\w.-]*+(?==(?!=))"),  # the key of key=value
]
# Plain words ("Moved", "items") are rejected before trying the patterns above, unless
# they are keywords (scope terms, "span", "migration").
_LETTER_GATE = (r"(?!(?!(?i:prod|production|prd|staging|stg|dev|qa|uat|spans?|migrations?)\b)"
                r"[A-Za-z][a-z]*+(?![\w/\\:@=-]|\.\w))")
_DIGIT_START = [
    ("date", r"(?<!\d)(?P<day>\d{4}-\d{2}-\d{2})"
             r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)"),
    # a bound glued to a name ("numpy<2.0", "numpy<2.0.0") before a bare version: its
    # operator is the fact (usertest61 A3: "2.0" was a quantity, "2.0.0" a plain version)
    ("version4", r"(?:(?<=[\^~])\d++(?:\.\d++)++|(?<=[<>])\d++\.\d++\.\d++"
                 rf"|(?<=\w\w[<>])\d++\.\d++(?![ \t]?(?i:{_SPACED_UNITS}|us)\b|%|\.\d))"
                 + _OP_VSUFFIX),  # "^2.0": see _LEAD; "latency<2.5 ms" is a quantity
    ("version2", r"(?<![\w.])\d+\.\d+\.\d+(?:\.\d+)*" + _VSUFFIX),
    ("path2", _PATH_REL),
    ("hash2", _HASH),
    # a name led by digits: migration files (0051_add_orders_index, 20240115_create_users,
    # 001_init.sql; usertest71 #1); a letter right after the first "_" makes it a name,
    # not a number (1_000_000, 3_000ms, 2024_01_15T10_30Z: adv139 #6), and a path is
    # read whole (2024_q1/data/report.py, path2 above: adv139 #5)
    ("snake2", r"\d++_(?=[A-Za-z])\w++(?:\.[A-Za-z][A-Za-z0-9]{0,7}\b)?(?![/\\])"),
    ("time", r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?!\w|:\d)"),
    ("quantity", _QUANTITY),
]
_SYMBOL_START = [
    ("code", r"`(?P<inner>[^`\n]+)`"),
    ("spanref2", r"\[(?P<bref>[sS]\d+)\]"),
    ("version3", r"(?<=[=~<>!])=\s?\d++(?:\.\d++)++" + _OP_VSUFFIX),  # "==1.2": see _LEAD
    ("version5", r"(?<=\w\w[=~<>!])=\d(?![\w.])"),  # "lib2>=2": bindings.bind
    ("path3", r"(?<![\w/.~:<-])/[\w.@-]++(?:/[\w.@-]++)*+/?|(?<![\w/.-])(?:\.{1,2}|~)/[\w.@+/-]+"),
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
_GROUP_NAME = {group: group.rstrip("0123456789") for group in _TOKEN_RE.groupindex}
_GROUP_NAME[""] = ""
_SCOPE_TERMS = frozenset({"prod", "production", "prd", "staging", "stg", "preprod", "dev",
                          "qa", "uat"})
_QUOTED_COPY_RE = re.compile("[A-Z][a-z']+(?: [\\w'\u2019,!?.-]+)+")
_TOKEN_KIND = {"url": Kind.LINK, "spanref": Kind.LINK, "date": Kind.SCOPE,
               "region": Kind.SCOPE, "scope": Kind.SCOPE, "version": Kind.VERSION,
               "time": Kind.QUANTITY, "quantity": Kind.QUANTITY}
_ABBREVIATIONS = frozenset({"e.g", "i.e", "a.m", "p.m", "u.s", "u.k", "ph.d", "et.al", "n.b"})


_PM_RE = re.compile(r"\s?p\.?m\b")
_AM_RE = re.compile(r"\s?a\.?m\b")


def _token_norm(name: str, m: re.Match[str], raw: str) -> str | None:
    """Normalized form of a token match, or ``None`` when the match is a false positive."""
    low = raw.lower()
    if name == "spanref":
        return (m.group("sref") or m.group("bref")).lower()
    if name == "date":
        return m.group("day")
    if name == "version":
        v = re.sub(r"\s+", "", low).removeprefix("==")
        return suffix_norm(v[1:] if v.startswith("v") and "." in v else v)
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
    if name == "kebab":  # lumen-rt, payments-prod; not well-known, follow-up, one-time
        parts = low.split("-")
        if _KEBAB_GLUE & set(parts) or not any(
                p in _SCOPE_TERMS or (len(p) <= 3 and p not in _COMMON_SHORT) for p in parts):
            return None
    if name == "time":  # "09:00" is "9:00" (adv126 #2), "9:00 PM" is "21:00" (adv127 #5)
        hour, _, rest = low.partition(":")
        after = m.string[m.end():m.end() + 6].lower()
        if _PM_RE.match(after) and int(hour) < 12:
            return f"{int(hour) + 12}:{rest}"
        if _AM_RE.match(after) and int(hour) == 12:
            return f"0:{rest}"
        return f"{int(hour)}:{rest}"
    if name == "quantity":
        unit = m.group("unit") or m.group("sunit")
        number = raw[: len(raw) - len(unit)].strip() if unit else raw
        if not unit and len(number) - number.count(",") - number.count(".") < 2:
            return None  # fewer than two digits (_NUM: digits, "," and "." only)
        number = number.replace(",", "")
        return f"{number} {canonical_unit(unit)}" \
            if unit else number
    return low


_PLAIN_NORM = frozenset(_GROUP_NAME.values()) - {"spanref", "date", "version", "path",
                                                  "migration", "dotted", "scope", "kebab",
                                                  "quantity", "time"}
"""Token names whose normalized form is the lowercased text (:func:`_token_norm` has
nothing more to do for them)."""
_OPERATOR_LED = ("version3", "version4", "version5")
_GROUP_INFO = {group: (name, int(group in _OPERATOR_LED), name in _PLAIN_NORM,
                       _TOKEN_KIND.get(name, Kind.IDENTIFIER))
               for group, name in _GROUP_NAME.items()}
"""Per group of :data:`_TOKEN_RE`: its token name, how far its operator lead reaches
back (1 for a version pin's operator), whether :func:`_token_norm` is only a
lowercasing, and its kind: looked up once per match (issue 14, item 4: the Python work
per match was about half of the token scan)."""


def _scan_tokens(text: str, offset: int, out: list[Discriminator],
                 values_of: str | None = None) -> int:
    """Append the token discriminators of ``text`` (found at ``offset`` in the source)
    and return how many tokens it found.  With ``values_of`` (the whole source, for code
    and tool output), a bare number with no ``=`` or ``:`` in the
    :data:`_KEY_REACH` characters before it is counted but not appended:
    :func:`_values_only` would drop it, and a tool output of bare numbers would build
    an object for each (issue 11, adv8 F7)."""
    offset -= 1  # the prepended lead space
    info_of = _GROUP_INFO
    append = out.append
    source = " " + text
    found = 0
    for m in _TOKEN_RE.finditer(source):
        group = m.lastgroup or ""
        name, back, plain, kind = info_of[group]
        start = m.start(group) - back  # the operator lead
        raw = source[start:m.end()]
        if (values_of is not None and name == "quantity" and not m.group("unit")
                and not m.group("sunit")):  # a bare number: "12", "1,024", "3.25"
            if len(raw) - raw.count(",") - raw.count(".") < 2:
                continue  # one digit: not a token (_token_norm)
            at = offset + start
            window = max(0, at - _KEY_REACH)
            if values_of.find("=", window, at) < 0 and values_of.find(":", window, at) < 0:
                found += 1
                continue
        if name == "code":
            inner = m.group("inner")
            inner_found = _scan_tokens(inner, offset + m.start("inner"), out, values_of)
            found += inner_found
            if not inner_found and inner.strip() and not _QUOTED_COPY_RE.fullmatch(inner):
                at = offset + m.start("inner") + len(inner) - len(inner.lstrip())
                out.append(Discriminator(Kind.IDENTIFIER, inner.strip(), inner.strip().lower(),
                                         at, at + len(inner.strip())))
            continue
        if name == "url":
            raw = raw.rstrip(".,;:!?)'\"")
            norm: str | None = raw.lower().rstrip("/")
        elif plain:
            norm = raw.lower()
        else:
            if name == "path":
                raw = raw.rstrip(".")
            norm = _token_norm(name, m, raw)
        if norm:
            found += 1
            at = offset + start
            append(Discriminator(kind, raw, norm, at, at + len(raw)))
    return found


# ------------------------------------------------------------------------- extract
# "k=v", "k = v", "k: v", '"k": v'; not "file.ex:102" (a file and line, no space)
_KEYED_RE = re.compile(r"[\"']?[A-Za-z_][\w.-]{0,40}(?:[ \t]*=[ \t]*|:[ \t]+|[\"']:[ \t]*)[\"']?$")
_KEY_REACH = 48
"""How many characters before a value its key (``_KEYED_RE``) is looked for."""


def _values_only(text: str, found: list[Discriminator]) -> list[Discriminator]:
    """The token discriminators code and tool output keep (issue 10, point 1): keyed
    values (``timeout=45000``, ``retries: 3``, ``ENV=prod``, text from the key), numbers
    with a unit, and identifiers and links (which the analysis keeps only when prose
    used them before the compaction)."""
    out = []
    for d in found:
        if d.kind in (Kind.IDENTIFIER, Kind.LINK):
            out.append(d)
            continue
        if d.kind is Kind.QUANTITY and " " in d.norm:
            if d.norm.rsplit(" ", 1)[1] not in _CSS_LENGTHS:  # a style sheet's lengths
                out.append(d)  # are its every line: prose that states one decided it
            continue
        if d.kind in (Kind.QUANTITY, Kind.VERSION, Kind.SCOPE):
            # the key is in the 48 characters before the value, on its line: a line
            # start further back does not matter, so look no further (a search back
            # to the line start was quadratic on one long line; issue 11, adv8 F7)
            window = max(0, d.start - _KEY_REACH)
            line_start = text.rfind("\n", window, d.start) + 1
            key = _KEYED_RE.search(text, max(line_start, window), d.start)
            if key:
                out.append(Discriminator(d.kind, text[key.start():d.end], d.norm, key.start(),
                                         d.end))
    return out


Known = Callable[[str, str], tuple[Discriminator, ...] | None]
"""``known(text, span_type)``: the discriminators of ``text`` already extracted
elsewhere (:func:`extract_cached`'s own result), or None when not known."""
_known: list[Known] = []


def share(known: Known | None) -> None:
    """Make :func:`extract_cached` read ``known`` before extracting (None: stop).

    The recall analysis extracts every distinct span text once, partly in a helper
    process (:mod:`compaction_audit.recall.textwork`); survival indexes, the
    asked-again check and the faithfulness rules extract some of the same texts
    again (summaries folded again, user texts: 0.5-1 s of the audit process on the
    254 MB 10,000 x 2,000 text cell of the benchmark grid, issue 14).  ``known``
    must return exactly what :func:`extract_cached` would."""
    _known.clear()
    if known is not None:
        _known.append(known)


@lru_cache(maxsize=4096)
def extract_cached(text: str, span_type: str = "prose") -> tuple[Discriminator, ...]:
    """Every discriminator of ``text`` read as ``span_type`` (see :func:`extract`);
    from the table given to :func:`share` when it holds them."""
    if _known:
        found = _known[0](text, span_type)
        if found is not None:
            return found
    return _extract(text, span_type)


_NEG_RANK = {kind: -rank for kind, rank in KIND_RANK.items()}


def _order(d: Discriminator) -> tuple[int, int]:
    """Sort key of :func:`_extract`: by start, the higher-ranked kind first."""
    return d.start, _NEG_RANK[d.kind]


def _extract(text: str, span_type: str) -> tuple[Discriminator, ...]:
    """:func:`extract_cached` without the cache."""
    if span_type == "harness":
        return ()
    body = clean_text(text)
    found: list[Discriminator] = []
    values = span_type in ("code", "tool_output")
    _scan_tokens(body, 0, found, body if values else None)
    if values:
        found = _values_only(body, found)
    else:
        found = bind(body, found)  # a value bound to a name: "lib2==1.2.0" (usertest38 #3)
        prose = blank_fences(body)
        units = scan_requirements(prose, found) if span_type == "spec" else []
        scan_clauses(prose, found, units)
        scan_ruled_out(prose, found)
    found.sort(key=_order)
    seen: set[tuple[Kind, str]] = set()
    add = seen.add
    unique = []
    if "\n" not in body:  # every discriminator on line 1
        for d in found:
            if (key := (d.kind, d.norm)) not in seen:
                add(key)
                unique.append(d)
        return tuple(unique)
    line, pos = 1, 0
    for d in found:
        if (key := (d.kind, d.norm)) not in seen:
            add(key)
            line += body.count("\n", pos, d.start)
            pos = d.start
            unique.append(d if line == 1 else
                          Discriminator(d.kind, d.text, d.norm, d.start, d.end, line))
    return tuple(unique)


def value_tokens(text: str) -> tuple[str, list[Discriminator]]:
    """(the cleaned ``text``, every value it states, in order): each version, quantity
    and scope token as prose reads it, a value bound to a name from the name on
    (:func:`compaction_audit.recall.bindings.bind`), repeats kept (:func:`extract` keeps
    the first of each norm).  What survival reads a summary's bindings from
    (:mod:`compaction_audit.recall.survival.bindings`); linear in the text."""
    body = clean_text(text)
    found: list[Discriminator] = []
    _scan_tokens(body, 0, found)
    return body, [d for d in bind(body, found) if d.kind in BOUND_KINDS]


def extract(text: str, span_type: str = "prose") -> list[Discriminator]:
    """Every discriminator of ``text``, sorted by start, deduplicated by ``(kind, norm)``.

    ``span_type`` (:func:`compaction_audit.recall.spantypes.span_type`) decides what is
    read: nothing from ``harness``; from ``code`` and ``tool_output`` keyed values,
    numbers with a unit, identifiers and links; from ``prose`` and ``spec`` every token
    and the clauses (:mod:`compaction_audit.recall.clauses`; fenced code blocks left
    out), and from ``spec`` one requirement per bullet under a requirement heading.
    The text is cleaned first (:func:`compaction_audit.recall.spantypes.clean_text`:
    line gutters, JSON escapes, redaction placeholders): ``start``, ``end`` and ``line``
    refer to the cleaned text.  Results are cached per (text, type); the returned list
    is a fresh copy the caller may mutate.
    """
    return list(extract_cached(text, span_type))


def is_discriminating(text: str, span_type: str = "prose") -> bool:
    """True when ``text`` holds at least one discriminator (seed 002: not narrative)."""
    return bool(extract_cached(text, span_type))
