"""Which texts hold which rule objects: every object of every lost rule found in one
Aho-Corasick pass over the texts, as each object's own regex would find it (issue 11,
class 5, seventh adversarial pass F2: one Polars query per lost rule cost ~14 s per MB).

:func:`compaction_audit.recall.violations.violations` finds an object with one of two
case-insensitive Rust regexes (``_pattern`` there):

* *word*: ``(?:^|[^\\w-])BODY(?:$|[^\\w-])``, BODY being the object's words joined by
  ``\\s+``;
* *command start* (a single plain word): ``(?:^|[;&|(]\\s*|\\$\\(\\s*|\\n\\s*)BODY(?:$|\\s)``.

Compiling one such regex costs milliseconds (Unicode ``\\w`` under ``(?i)``), so each
is rewritten as plain substrings of a transformed text, with the same answer:

1. *fold*: each character of a case-insensitive class of the regex engine to the first
   of its class (``A``, ``a`` to ``A``; KELVIN SIGN to ``K``; the three Greek sigmas to
   the capital: :data:`~compaction_audit.recall.casefold_table.CLASSES`, checked over all of
   Unicode with Polars' regex engine, see the tests); the control characters the
   markers below use are moved to private-use characters first, so a text cannot forge
   a marker;
2. *word* form: every whitespace run becomes one space, every maximal ``[\\w-]`` run r
   becomes ``A r B`` and every other character x becomes ``P x Q``, the whole wrapped
   in ``Q ... P``.  The object, transformed the same way, is a substring of the text's
   form exactly where the regex matches: a word edge of the object sits at a word
   edge of the text (``QA`` / ``BP``), a non-word edge next to a non-word character or
   the text's edge (``QP``);
3. *command* form: a whitespace run holding a newline becomes one newline, any other
   run one space, the whole wrapped in START ... END; the object's keys are its 30
   spellings ``d + word + e``, d one of START, newline, ``;&|(`` with or without one
   space, e one of space, newline, END.

An object holding one of the private-use characters the markers move to (U+E001 ..
U+E006, which a text's marker characters fold to as well) is found the same way and
its pairs then checked with its regex; the empty object, whose matches depend on the
whitespace runs the forms shorten, is tried with its regex against every text.  Every
other object is found exactly by the forms: objects with cased letters outside ASCII
(``ключ``) kept their regex, tried against every text, so n such objects and n calls
cost n x n rows (3.3 GB at n = 8,000; adv33 B4).
"""

from __future__ import annotations

import polars as pl

from compaction_audit.recall.casefold_table import CLASSES
from compaction_audit.recall.needles import antichains

__all__ = ["matches"]

_A, _B, _P, _Q, _START, _END = (chr(i) for i in range(1, 7))
"""The markers: control characters U+0001..U+0006 (one byte each, non-word, not
whitespace); in a text each becomes U+E001..U+E006 (private use, non-word, not
whitespace either), so a text cannot forge one."""
_FOLD = {**{c: klass[0] for klass in CLASSES for c in klass[1:]},
         **{chr(c): chr(0xE000 + c) for c in range(1, 7)}}
_BEFORE = (_START, "\n", ";", "&", "|", "(", "; ", "& ", "| ", "( ")
_AFTER = (" ", "\n", _END)


def _fold(text: pl.Expr) -> pl.Expr:
    """Step 1: the ASCII case fold and the markers moved away, a character for a
    character."""
    return text.str.replace_many(list(_FOLD), list(_FOLD.values()))


def _word_form(text: pl.Expr) -> pl.Expr:
    """Step 2: the folded text with its word edges marked."""
    spaced = _fold(text).str.replace_all(r"\s+", " ")
    marked = (spaced.str.replace_all(r"[\w-]+", f"{_A}${{0}}{_B}")
              .str.replace_all(r"[^\w\-\x01\x02]", f"{_P}${{0}}{_Q}"))
    return pl.lit(_Q) + marked + pl.lit(_P)


def _command_form(text: pl.Expr) -> pl.Expr:
    """Step 3: the folded text with whitespace runs reduced to a newline or a space."""
    reduced = (_fold(text).str.replace_all(r"\s*\n\s*", "\n")
               .str.replace_all(r"[^\S\n]+", " "))
    return pl.lit(_START) + reduced + pl.lit(_END)


_MOVED = "[\x01-\x06\ue001-\ue006]"
"""The characters that fold to U+E001..U+E006: an object holding one may be found in a
text that holds the other (its pairs are checked with its regex)."""


def _keys(objects: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``(keys, checked, blank)``: ``pid``, ``form`` ("word"/"command"), ``key`` for
    every object but the empty one; the objects whose pairs the regex must confirm
    (holding a character of :data:`_MOVED`) and the empty objects (``pid``,
    ``pattern``)."""
    folded = objects.with_columns(_fold(pl.col("body")).alias("_f"))
    plain = folded.filter(pl.col("body") != "")
    word = plain.filter(~pl.col("at_start")).select(
        "pid", pl.lit("word").alias("form"), _word_form(pl.col("body")).alias("key"))
    ends = pl.DataFrame({"_d": list(_BEFORE)}).join(
        pl.DataFrame({"_e": list(_AFTER)}), how="cross")
    command = (plain.filter(pl.col("at_start")).join(ends, how="cross").select(
        "pid", pl.lit("command").alias("form"),
        (pl.col("_d") + pl.col("_f") + pl.col("_e")).alias("key")))
    checked = plain.filter(pl.col("body").str.contains(_MOVED)).select("pid", "pattern")
    blank = folded.filter(pl.col("body") == "").select("pid", "pattern")
    return pl.concat([word, command]), checked, blank


def matches(texts: pl.DataFrame, objects: pl.DataFrame) -> pl.DataFrame:
    """Every (object, text) pair where the object's regex matches the text.

    ``texts``: ``tid`` (UInt32 or Int64, unique), ``text`` (String, no nulls).
    ``objects``: ``pid`` (unique), ``body`` (the object's words joined by one space:
    ``" ".join(object.split())``), ``at_start`` (Boolean: the
    command-start form), ``pattern`` (the regex, used only for the empty object and to
    confirm the pairs of objects holding a private-use marker character).  Returns
    ``pid``, ``tid``, one row per matching pair, in no set order.  Work: one
    Aho-Corasick pass per form over the texts (linear in their length plus the
    matches; one per layer where a key holds another:
    :func:`~compaction_audit.recall.needles.antichains`), plus one regex per pair of
    an object holding a marker character and per text for the empty object.
    """
    out: list[pl.DataFrame] = []
    empty = pl.DataFrame(schema={"pid": objects.schema["pid"], "tid": texts.schema["tid"]})
    if texts.height == 0 or objects.height == 0:
        return empty
    keys, checked, blank = _keys(objects)
    for form, transform in (("word", _word_form), ("command", _command_form)):
        wanted = keys.filter(pl.col("form") == form)
        if wanted.height == 0:
            continue
        # one search per group of keys none of which holds another (adv83: nested
        # runs of dots listed gigabytes of hits over one tool call before unique())
        for group in antichains(wanted["key"].unique().sort().to_list()):
            found = (texts.select("tid", transform(pl.col("text")).str.extract_many(
                group, overlapping=True).list.unique().alias("key"))
                .explode("key").drop_nulls("key"))
            out.append(found.join(wanted.select("pid", "key"), on="key").select("pid", "tid"))
    pairs = pl.concat([o.cast(empty.schema) for o in out]).unique() if out else empty
    if checked.height:  # a marker character folds with a text's: the regex decides
        suspect = pairs.join(checked, on="pid").join(texts, on="tid").sort("pattern")
        pairs = pl.concat([
            pairs.join(checked, on="pid", how="anti"),
            suspect.filter(pl.col("text").str.contains(pl.col("pattern"))).select(
                "pid", "tid")])
    if blank.height:  # the empty object: its regex, sorted so each compiles once
        pairs = pl.concat([pairs, blank.join(texts, how="cross").sort("pattern")
                           .filter(pl.col("text").str.contains(pl.col("pattern")))
                           .select("pid", "tid").cast(empty.schema)]).unique()
    return pairs
