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

1. *fold*: ASCII letters to lower case, KELVIN SIGN to ``k``, LONG S to ``s`` (the only
   characters outside ASCII that ``(?i)`` matches to an ASCII letter; checked over all
   of Unicode with Polars' regex engine, see the tests); the private-use characters the
   markers below use are escaped first, so a text cannot forge a marker;
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

An object with a cased letter outside ASCII after folding (``ключ``) has no exact fold
here: it keeps its regex, tried against every text, one compile per distinct object
(the limit that stays: a trace of many distinct such objects is slow, not wrong).
"""

from __future__ import annotations

import polars as pl

__all__ = ["matches"]

_A, _B, _P, _Q, _START, _END = (chr(i) for i in range(1, 7))
"""The markers: control characters U+0001..U+0006 (one byte each, non-word, not
whitespace); in a text each becomes U+E001..U+E006 (private use, non-word, not
whitespace either), so a text cannot forge one."""
_FOLD = {**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)},
         "\u212a": "k", "\u017f": "s", **{chr(c): chr(0xE000 + c) for c in range(1, 7)}}
_TABLE = {ord(k): v for k, v in _FOLD.items()}
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


def _exact(body: str) -> bool:
    """True when the forms find ``body`` exactly: it is not empty (whitespace runs,
    which the forms shorten, decide where an empty object matches), and every character
    of it, folded, matches under ``(?i)`` only the characters the fold maps to it
    (ASCII, or no case mapping at all) and is no marker nor a character markers move to
    (U+E001..U+E006)."""
    folded = body.translate(_TABLE)
    return bool(body) and all(
        c < "\x80" or (c.lower() == c and c.upper() == c and c.casefold() == c
                        and not "\ue001" <= c <= "\ue006") for c in folded)


def _keys(objects: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(keys, rest)``: ``pid``, ``form`` ("word"/"command"), ``key`` for the objects
    with an exact fold, and the others (``pid``, ``pattern``)."""
    folded = objects.with_columns(_fold(pl.col("body")).alias("_f"))
    exact = pl.Series([_exact(b) for b in objects["body"]], dtype=pl.Boolean)
    folded = folded.with_columns(exact.alias("_exact"))
    plain = folded.filter(pl.col("_exact"))
    word = plain.filter(~pl.col("at_start")).select(
        "pid", pl.lit("word").alias("form"), _word_form(pl.col("body")).alias("key"))
    ends = pl.DataFrame({"_d": list(_BEFORE)}).join(
        pl.DataFrame({"_e": list(_AFTER)}), how="cross")
    command = (plain.filter(pl.col("at_start")).join(ends, how="cross").select(
        "pid", pl.lit("command").alias("form"),
        (pl.col("_d") + pl.col("_f") + pl.col("_e")).alias("key")))
    rest = folded.filter(~pl.col("_exact")).select("pid", "pattern")
    return pl.concat([word, command]), rest


def matches(texts: pl.DataFrame, objects: pl.DataFrame) -> pl.DataFrame:
    """Every (object, text) pair where the object's regex matches the text.

    ``texts``: ``tid`` (UInt32 or Int64, unique), ``text`` (String, no nulls).
    ``objects``: ``pid`` (unique), ``body`` (the object's words joined by one space:
    ``" ".join(object.split())``), ``at_start`` (Boolean: the
    command-start form), ``pattern`` (the regex, used only for objects without an exact
    fold).  Returns ``pid``, ``tid``, one row per matching pair, in no set order.
    Work: one Aho-Corasick pass per form over the texts (linear in their length plus
    the matches), plus one regex compile per object without an exact fold.
    """
    out: list[pl.DataFrame] = []
    empty = pl.DataFrame(schema={"pid": objects.schema["pid"], "tid": texts.schema["tid"]})
    if texts.height == 0 or objects.height == 0:
        return empty
    keys, rest = _keys(objects)
    for form, transform in (("word", _word_form), ("command", _command_form)):
        wanted = keys.filter(pl.col("form") == form)
        if wanted.height == 0:
            continue
        found = (texts.select("tid", transform(pl.col("text")).str.extract_many(
            wanted["key"].unique().to_list(), overlapping=True).list.unique().alias("key"))
            .explode("key").drop_nulls("key"))
        out.append(found.join(wanted.select("pid", "key"), on="key").select("pid", "tid"))
    if rest.height:
        # objects without an exact fold: their regex, sorted so each compiles once
        out.append(rest.join(texts, how="cross")
                   .filter(pl.col("text").str.contains(pl.col("pattern")))
                   .select("pid", "tid"))
    return pl.concat([o.cast(empty.schema) for o in out]).unique() if out else empty
