"""The words of raw leaf texts, and which of them lie below each summary, for rule
unsupported-summary-claim (CA305; :mod:`compaction_audit.recall.claims`).

:func:`bag` is one text's vocabulary (words and their stems).  :func:`leaf_words` is the
same for many texts at once, as a Polars table, and :func:`held` answers, for each
summary, which of the words and stems its claims ask about occur among the raw leaves
below it: a join of the closure's (summary, leaf text) pairs with that table on the
asked terms only.  Issue 14: building each summary's vocabulary as Python sets up the
provenance DAG (``claims._Vocab``) was 1.2-1.4 s of the audit process's CPU on the
254 MB 10,000 x 2,000 text cell of the benchmark grid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import polars as pl

from compaction_audit.closure import Closure
from compaction_audit.model import Session
from compaction_audit.recall.extract import QUANTITY_UNITS, SCOPE_CANON, unit_quantities
from compaction_audit.recall.spantypes import INVISIBLE_IN_WORDS_RE, composed
from compaction_audit.recall.survival.words import _stem
from compaction_audit.recall.versions import SUFFIX, TO_BASE, suffix_norm

__all__ = ["WORD_RE", "Below", "bag", "below", "held", "leaf_words", "term_hits"]

WORD_RE = re.compile(r"[a-z0-9_]+")
_VERSION_RE = re.compile(rf"(?:(?<=v)[0-9]++(?:\.[0-9]++)*+|(?<![0-9])(?<![0-9]\.)[0-9]++"
                         rf"(?:\.[0-9]++)++)(?:{SUFFIX})(?!\w)(?![-+.][0-9a-z])")
"""A whole version with a suffix (:data:`~compaction_audit.recall.versions.SUFFIX`, as
the extractor reads one: "2.4.0-rc.1", "1.2.0-beta", "2.4.0_rc1", "1.2.0-dev.1",
"1.2.0+build.5", and after a "v" one number will do: "v3+build.5"), not inside a longer
run of them ("2.4.0-rc1-hotfix" is that whole version, no 2.4.0rc1: adv93 #2).  Its word
is its norm (:func:`~compaction_audit.recall.versions.suffix_norm`: "2.4.0-rc.1" is
"2.4.0rc1"), the form in which a summary's claim of it reads (usertest44 #1, adv92 #1:
read as separate words, "2.4.0-rc.1" held an invented "2.4.0-rc.2"; adv93 #3: a copied
"1.2.0-dev.1" or "+local" part was no word of its leaf).  It starts only where a run of
digits and dots starts (a second version after "..", as in "2.4.0-rc.1...2.4.0-rc.2",
is one: adv95 #5), its numbers possessive, so a long run is read once (adv93 #4: from
every digit of one, 40 KB took 13 s); Python's engine reads it for every text (Polars'
has no look-around), only those :data:`_MAY_VERSION` finds."""
_MAY_VERSION = r"(?:[0-9]\.|v)[0-9]+(?:[._-]?[a-z]|[-+][0-9a-z])"
"""What a text holding a :data:`_VERSION_RE` version holds (Polars' filter before it,
and :func:`_version_words`' own)."""
_MAY_VERSION_RE = re.compile(_MAY_VERSION, re.IGNORECASE)
_PACKAGE_TAIL_RE = re.compile(
    r"(?:-(?:py|cp|pp|ip|jy)[0-9][\w.+-]{0,80}?)?"
    r"(?:[-_](?:linux|darwin|macos|osx|win|windows|freebsd|android|ios)[\w.-]{0,40}?)?"
    r"(?:[-_.](?:x86_64|amd64|arm64|aarch64|armhf|armel|armv7l|i[3-6]86|noarch|ppc64le"
    r"|s390x|all))?"
    r"\.(?:whl(?:\.metadata)?|tar\.gz|tgz|tar\.xz|txz|tar\.bz2|tbz2?|tar\.zst|tar|zip|egg"
    r"|gem|jar|war|nupkg|deb|rpm|apk|dmg|msi|crate)(?![\w.])")
"""The tail of a package's file name after its version: a wheel's tags, a platform, an
architecture and an archive's extension ("client-1.2.0.post1-py3-none-any.whl",
"torch-2.1.0+cu118-cp311-cp311-linux_x86_64.whl", "node-v18.0.0-rc.1-linux-x64.tar.xz",
"client-1.2.0.dev1.tar.gz", "curl_7.81.0-1ubuntu1.15_amd64.deb",
"client-1.2.0-1.el9.x86_64.rpm", "jdk-21.0.1+12_linux-x64_bin.tar.gz").  Read as more
parts of the version, it made "1.2.0.post1" no word of a pip or npm line naming it
(adv95 #1; usertest48 #3: apt's, rpm's and a JDK's file names); it is cut before the
versions are read."""


def _version_words(plain: str) -> list[str]:
    """The :data:`_VERSION_RE` versions of ``plain`` (lowercased), as their norms (none
    where :data:`_MAY_VERSION` finds nothing), a package file name's tail cut first
    (:data:`_PACKAGE_TAIL_RE`); after a "v" also the norm with it ("v2rc1", as the
    extractor keeps it where no dot is: adv95 #2)."""
    if _MAY_VERSION_RE.search(plain) is None:  # most texts: no version with a suffix
        return []
    text = _PACKAGE_TAIL_RE.sub(" ", plain)
    words = []
    for m in _VERSION_RE.finditer(text):
        words.append(norm := suffix_norm(m[0]))
        if text[m.start() - 1:m.start()] == "v":
            words.append("v" + norm)
    return words


def measure_token(number: str, unit: str) -> str:
    """``=NUMBERunit``: a quantity whose unit converts as :func:`bag` lists it (the
    number without separators or trailing decimal zeros, the unit canonical: ``1.50
    seconds`` is ``=1.5s``), so that a summary's value in another unit is supported by a
    number and unit the leaf wrote together (usertest49 #2: "45000 ms" supports "45 s"),
    never by a number and a unit word apart (usertest50 #1: "it's" was the unit s); no
    word of :data:`WORD_RE` holds ``=``."""
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"={number}{unit}"


def _measure_tokens(text: str) -> list[str]:
    """The :func:`measure_token` of each quantity of ``text`` whose unit converts, read
    as the extractor reads quantities (:func:`~compaction_audit.recall.extract.
    unit_quantities`, on the text as written: "5M" is a count, "5m" minutes), and of each
    number set to a name whose suffix is a unit (:func:`_named_units`)."""
    return [measure_token(number, unit) for number, unit in
            (*unit_quantities(text), *_named_units(text)) if unit in TO_BASE]


_SUFFIX_UNIT = {"ms": "ms", "millis": "ms", "milliseconds": "ms", "us": "us", "s": "s",
                "sec": "s", "secs": "s", "seconds": "s", "min": "min", "mins": "min",
                "minutes": "min", "h": "h", "hours": "h", "days": "d", "kb": "kb",
                "mb": "mb", "gb": "gb", "bytes": "b"}
"""A name's last ``_`` part that says its value's unit (``read_timeout_ms``)."""
_NAMED_RE = re.compile(
    rf"(?i)\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_({'|'.join(_SUFFIX_UNIT)})\b"
    r"(?:\s*[=:]\s*|\s+(?:from|to|at|is|of)\s+)(\d[\d,]*(?:\.\d+)?)\b"
    r"(?:\s+to\s+(\d[\d,]*(?:\.\d+)?)\b)?")


def _named_units(text: str) -> list[tuple[str, str]]:
    """(number, unit) of each number ``text`` sets a unit-suffixed name to
    ("read_timeout_ms from 30000 to 45000", "ttl_seconds=300"): a summary's "45s" is the
    leaf's value in other words (adv126 #2: CA305 called it unsupported, an error)."""
    if "_" not in text:
        return []
    return [(number.replace(",", ""), _SUFFIX_UNIT[m[1].lower()])
            for m in _NAMED_RE.finditer(text) for number in (m[2], m[3]) if number]


_DIGITS_RE = re.compile(r"\d+")
_LETTERS_RE = re.compile(r"[^\W\d_]*[^\x00-\x7f\W\d_][^\W\d_]*")
"""The runs of letters holding a letter outside ASCII: words of a text outside ASCII,
as a claim's content words are (usertest51 #9: a verbatim Russian or Korean sentence
was a claim no leaf supported, the leaf's words being ASCII only); an ASCII name's
parts are none (usertest52 #6: such a text was read otherwise than an ASCII one)."""
SEPARATED = r"\b[0-9]{1,3}(?:,[0-9]{3})+([^0-9]|$)"
"""A number written with thousands separators: one to three digits, then groups of a
comma and three digits ("1,234,567"; "22,443" of "22,443,8443", as the extractor backs
off; not "8080,443", the ports 8080 and 443), and the character after it (Polars'
engine has no look-ahead; a number glued to a unit, "45,000ms", is one).  Its digits
joined are a word of the text beside the runs between its commas, so a summary copying
either reading is supported (adv97 #3: the leaf's only word for "ports 8080,443" was
8080443; usertest51 #2, #4: reading such texts in Python instead doubled the time of
number-dense tool output).  The groups after its first are no words of their own
(usertest52 #2: "$1,299" supported an invented "$299"): the number is taken out of the
text before its words are read, the character after it (group 1) kept.  One pattern
for Python and Polars."""
_SEPARATED_RE = re.compile(SEPARATED)
_SPELLED_SCOPES = {spelling: canon for spelling, canon in SCOPE_CANON.items()
                   if not WORD_RE.fullmatch(spelling)}
"""A scope spelled in several words ("pre-prod"): its norm ("preprod") is a word of a
text that writes it, so a summary copying it is supported (usertest52 #7: its words
anywhere, "pre-commit" and "prod", supported it)."""
_NOT_DIGIT = r"[^0-9]"
"""What a :data:`SEPARATED` match loses to be the number it holds (its commas and the
character after it)."""
_NOT_DIGIT_RE = re.compile(_NOT_DIGIT)


def _plain(text: str) -> str:
    """``text`` lowercased, characters drawn as nothing inside words removed and the
    rest composed (as extraction reads it, :func:`~compaction_audit.recall.spantypes.
    clean_text`: "8<ZWSP>080" is the word 8080, adv94 #8): what :func:`bag` reads."""
    low = text.lower()
    return low if low.isascii() else composed(INVISIBLE_IN_WORDS_RE.sub("", low))


@lru_cache(maxsize=8192)
def bag(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words, their stems) of ``text`` lowercased, a number with thousands separators
    also joined (:data:`SEPARATED`); the digits of a number glued to a unit ("96k",
    "45000ms") are a word too, and so is a version with a suffix, as its norm
    (:data:`_VERSION_RE`: "2.4.0-rc.1" is "2.4.0rc1"), and the measure token of a
    quantity whose unit converts (:func:`measure_token`)."""
    plain = _plain(text)
    rest = plain
    joined: list[str] = []
    if "," in plain:
        joined = [_NOT_DIGIT_RE.sub("", m[0]) for m in _SEPARATED_RE.finditer(plain)]
        rest = _SEPARATED_RE.sub(r" \1", plain)
    joined += [canon for spelling, canon in _SPELLED_SCOPES.items() if spelling in plain]
    found = frozenset(WORD_RE.findall(rest) if rest.isascii()
                      else (*WORD_RE.findall(rest), *_LETTERS_RE.findall(rest))).union(joined)
    if plain.isascii():  # each run of digits lies in one word: read the words, not the text
        digits = [run for word in found if not word.isalpha()
                  for run in _DIGITS_RE.findall(word)]
    else:  # digits other than 0-9 (Unicode \d) are in no word: read the text
        digits = _DIGITS_RE.findall(rest)
    versions = _version_words(plain)
    measures = _measure_tokens(text if text.isascii()
                               else composed(INVISIBLE_IN_WORDS_RE.sub("", text)))
    words = found.union(digits, versions, measures)
    return words, frozenset(map(_stem, words))  # stem() without its call


JOIN_MAX_WORDS = 8_000_000
"""Most words (each distinct leaf text's words, once per summary above it) that
:func:`held` joins in Polars (its join holds at most one row of two integers per such
word, after the words are cut to the asked terms); past it :func:`below` leaves the
check to the walk over Python sets, which takes a child's set over along a chain."""
JOIN_MAX_PAIRS = 1_000_000
"""Most (summary, raw leaf) pairs of the closure for which :func:`below` builds its
tables: past it the walk runs without them (a chain of 198 folds over 100 new spans
each, 1.97 million pairs, spent 2 s of Polars before the words bound sent it to the
walk, whose own cost there is 1.1 s)."""
JOIN_MAX_ABOVE = 4
"""Most summaries above a raw leaf, on average over the closure, for which
:func:`below` builds its tables.  The join reads a leaf's words once per summary above
it; the walk about once, since a summary takes its child's set over along a chain.  In
fold trees of the benchmark's depth 3 both read them a few times; along a chain of n
folds the join reads them about n / 2 times (text-chain at 60 folds: 0.53 s of CPU
against 0.29 s for the walk)."""

_MAY_QUANTITY = (rf"[0-9](?:\s?(?i:{QUANTITY_UNITS}|us)|[smhd])\b"
                 rf"|(?i:_(?:{'|'.join(_SUFFIX_UNIT)})\s*(?:[=:]|\s(?:from|to|at|is|of)\s)\s*[0-9])")
"""What a text holding a quantity with a unit, or a number set to a unit-suffixed name,
holds (Polars' filter before :func:`_measure_tokens`, which reads each such text in
Python)."""


def leaf_words(texts: pl.Series) -> pl.DataFrame:
    """Columns ``t`` (UInt32: the text's index in ``texts``) and ``w``: the words of
    :func:`bag` (its first set) of each text, one row each, or two for a run of digits
    inside a word that is also a word of the text ("v12" and "12"), or for a version
    with a suffix (:data:`_VERSION_RE`: "2.4.0-rc.1" is also "2.4.0rc1").

    ASCII texts are read by Polars: lowercased, the distinct runs of ``[a-z0-9_]`` and
    the numbers with thousands separators joined (:data:`SEPARATED`), then the runs of
    digits of those words holding a digit and another character (in ASCII every run of
    digits of the text lies in one word); the measure tokens (:func:`measure_token`) of
    the texts :data:`_MAY_QUANTITY` finds are read in Python.  Any other text is read by
    :func:`bag` itself: Python's and Polars' lowercasing and ``\\d`` may differ outside
    ASCII.  Null texts give no row."""
    frame = pl.DataFrame({"text": texts}).with_row_index("t").drop_nulls("text")
    ascii_ = pl.col("text").str.len_bytes() == pl.col("text").str.len_chars()
    plain = pl.col("text").str.to_lowercase()
    rest = (pl.when(pl.col("text").str.contains(",", literal=True))
            .then(plain.str.replace_all(SEPARATED, " $1")).otherwise(plain))
    for spelling, canon in _SPELLED_SCOPES.items():  # its norm a word too
        rest = rest.str.replace_all(spelling, f"{spelling} {canon}", literal=True)
    words = (frame.lazy().filter(ascii_)
             .select("t", rest.str.extract_all(r"[a-z0-9_]+").list.unique().alias("w"))
             .explode("w").drop_nulls("w"))
    joined = (frame.lazy().filter(ascii_ & pl.col("text").str.contains(",", literal=True))
              .select("t", pl.col("text").str.extract_all(SEPARATED).alias("w"))
              .explode("w").drop_nulls("w")
              .select("t", pl.col("w").str.replace_all(_NOT_DIGIT, "")).unique())
    digits = (words.filter(pl.col("w").str.contains(r"[0-9][a-z_]|[a-z_][0-9]"))
              .select("t", pl.col("w").str.extract_all(r"[0-9]+")).explode("w"))
    other = frame.filter(~ascii_)
    slow_t: list[int] = []
    slow_w: list[str] = []
    may = frame.filter(ascii_ & pl.col("text").str.contains(f"(?i){_MAY_VERSION}"))
    for t, text in may.iter_rows():  # few texts: versions with a suffix
        versions = list(dict.fromkeys(_version_words(_plain(text))))
        slow_t += [t] * len(versions)
        slow_w += versions
    for t, text in zip(other["t"].to_list(), other["text"].to_list(), strict=True):
        found = bag(text)[0]
        slow_t += [t] * len(found)
        slow_w += found
    quantified = frame.filter(ascii_ & pl.col("text").str.contains(_MAY_QUANTITY))
    for t, text in quantified.iter_rows():  # the few texts with a number and a unit
        measures = list(dict.fromkeys(_measure_tokens(text)))
        slow_t += [t] * len(measures)
        slow_w += measures
    slow = pl.DataFrame({"t": slow_t, "w": slow_w}, schema={"t": pl.UInt32, "w": pl.String})
    return pl.concat([*pl.collect_all([words, digits, joined]), slow])


def held(pairs: pl.DataFrame, words: pl.DataFrame, asked: pl.DataFrame) -> pl.DataFrame:
    """The asked terms that occur below each summary: the distinct rows of ``asked``
    (``s``, ``term``, ``stem``: whether ``term`` is a stem) for which a text ``t`` of
    ``pairs`` (``s``, ``t``: the summary's raw leaf texts) holds the word ``term``
    (``stem`` false) or a word whose :func:`_stem` is ``term`` (``stem`` true).
    ``words``: :func:`leaf_words` of the texts.  Python stems each distinct word once;
    the leaf words are cut to the asked terms, numbered, before they meet the pairs."""
    wanted = (asked.select("term", "stem").unique().with_row_index("k")
              .with_columns(pl.col("k").cast(pl.UInt32)))
    found = term_hits(words, wanted)
    numbered = asked.lazy().join(wanted.lazy(), on=["term", "stem"])
    return (numbered.join(pairs.lazy().join(found, on="t").select("s", "k"), on=["s", "k"],
                          how="semi").select("s", "term", "stem").collect())


def term_hits(words: pl.DataFrame, wanted: pl.DataFrame) -> pl.LazyFrame:
    """The distinct (``t``, ``k``) for which text ``t`` of ``words``
    (:func:`leaf_words`) holds the term ``k`` of ``wanted`` (``k``, ``term``, ``stem``:
    the word itself, or when ``stem`` a word whose :func:`_stem` it is).  Python stems
    each distinct word once."""
    distinct = words.select("w").unique()
    stems = distinct.with_columns(pl.Series("term", [_stem(w) for w in distinct["w"].to_list()],
                                            pl.String))
    by_word = wanted.lazy().filter(~pl.col("stem")).select(pl.col("term").alias("w"), "k")
    by_stem = (stems.lazy().join(wanted.lazy().filter(pl.col("stem")), on="term")
               .select("w", "k"))
    return words.lazy().join(pl.concat([by_word, by_stem]), on="w").select("t", "k").unique()


@dataclass
class Below:
    """What :func:`~compaction_audit.recall.claims.unsupported` reads of the provenance
    DAG, built in Polars (:func:`below`).

    ``order``: the summaries to check (parents with text), by (round, line, first edge);
    ``info``: id -> (kind, text, round index, line) of every summary of the DAG;
    ``folds``: each parent's summary children, in edge order; ``lacking``: summaries of
    ``order`` with a raw leaf without text (not checked); ``rows``: each summary's row
    in the items; ``pairs``: (``s``: a summary's row, ``t``) for each distinct text
    ``texts[t]`` of its raw leaves; ``words``: :func:`leaf_words` of ``texts``."""

    order: list[str]
    info: dict[str, tuple[Any, ...]]
    folds: dict[str, list[str]]
    lacking: set[str]
    rows: dict[str, int]
    pairs: pl.DataFrame
    words: pl.DataFrame


def below(session: Session, items: pl.DataFrame, links: Closure, budget: int
          ) -> Below | None:
    """The DAG and leaf words of ``session`` for the claim check; None when the words
    the set-building walk (``claims._Vocab``) would read could pass ``budget``: an upper
    bound, the words of every raw leaf text below each child summed over the edges
    (each edge's child vocabulary read in full, none taken over), is more than it.
    There the caller walks as before, so the budget is spent where it was.
    ``items``: the session's items (or the same rows with more columns);
    ``links``: the session's closure (its rows are the items' rows)."""
    nodes = items.select("id", "kind", "text", "ri", "line").with_row_index("row")
    edges = (session.edges.select("parent", "child").with_row_index("e")
             .join(nodes.select(pl.col("id").alias("child"), pl.col("row").alias("crow"),
                                pl.col("kind").alias("ckind")), on="child")
             .sort("e"))
    leaves = links.summary_pairs
    if (leaves.height > JOIN_MAX_PAIRS
            or leaves.height > JOIN_MAX_ABOVE * leaves["leaf"].n_unique()):
        return None
    leaf_rows = leaves["leaf"].unique()
    leaf_text = pl.DataFrame({"leaf": leaf_rows,
                              "text": pl.Series(items["text"]).gather(leaf_rows)})
    texts = leaf_text["text"].unique(maintain_order=True).drop_nulls()
    leaf_t = (leaf_text.join(pl.DataFrame({"text": texts}).with_row_index("t"), on="text",
                             how="left").select("leaf", "t"))
    words = leaf_words(texts)
    counts = words.group_by("t").len("n").with_columns(pl.col("n").cast(pl.Int64))
    pairs = leaves.join(leaf_t, on="leaf").select(pl.col("item").alias("s"), "t").unique()
    size = (pairs.drop_nulls("t").join(counts, on="t").group_by("s").agg(pl.col("n").sum())
            .vstack(leaf_t.join(counts, on="t").select(pl.col("leaf").alias("s"), "n")))
    parents = (edges.group_by("parent").agg(pl.col("e").min())
               .join(nodes.rename({"id": "parent"}), on="parent")
               .filter(pl.col("text").is_not_null() & (pl.col("text") != ""))
               .sort("ri", "line", "e"))
    pairs = pairs.join(parents.select(pl.col("row").alias("s")), on="s")
    joined = pairs.join(counts, on="t")["n"].sum()
    walked = edges.join(size, left_on="crow", right_on="s")["n"].sum()
    if walked > budget or joined > JOIN_MAX_WORDS:
        return None
    order = parents["parent"].to_list()
    lacking = set(pairs.filter(pl.col("t").is_null())["s"].to_list())
    in_dag = pl.concat([edges["parent"], edges["child"]]).implode()
    summaries = nodes.filter((pl.col("kind") == "summary") & pl.col("id").is_in(in_dag))
    info = dict(zip(summaries["id"].to_list(),
                    zip(summaries["kind"].to_list(), summaries["text"].to_list(),
                        summaries["ri"].to_list(), summaries["line"].to_list(), strict=True),
                    strict=True))
    rows = dict(zip(parents["parent"].to_list(), parents["row"].to_list(), strict=True))
    folds: dict[str, list[str]] = {}
    inner = edges.filter(pl.col("ckind") == "summary")
    for parent, child in zip(inner["parent"].to_list(), inner["child"].to_list(), strict=True):
        folds.setdefault(parent, []).append(child)
    ids_of = {row: s for s, row in rows.items()}
    return Below(order, info, folds, {ids_of[r] for r in lacking}, rows,
                 pairs.drop_nulls("t"), words)
