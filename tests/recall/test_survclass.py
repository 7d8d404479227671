"""Survival classes (issue 11, class 5): which clauses share one comparison with a
summary, and that they survive in the same summaries."""

from __future__ import annotations

from compaction_audit.recall import survival as surv
from compaction_audit.recall.extract import Discriminator, Kind
from compaction_audit.recall.survclass import Absent, Classes

SUMMARIES = ["Round 9: never deploy table_9_0 without a backup; pinned pkg_a1.",
             "Kept 45,000 rows of table_long_name_x1 and the v2x build."]


def _rule(text: str, norm: str, kind: Kind = Kind.NEGATION) -> Discriminator:
    return Discriminator(kind, text, norm, 0, len(text))


def test_absent_words_are_identifiers_no_summary_holds_even_in_part() -> None:
    absent = Absent(SUMMARIES)
    assert absent("table_3_5") and absent("mod7x")
    assert not absent("table_9_0")  # a word of a summary
    assert not absent("table_9") and not absent("9_0")  # its start, its end (a window cut)
    assert not absent("45000") and "45000" in absent.starts  # digits; read without commas
    assert not absent("table")  # letters only: stemmed, may be a listed word
    assert not absent("_x1") and not absent("x1_")  # not a content word at either end
    assert not absent("v3x")  # "v3.1" is read as "3.1"


def test_clauses_differing_only_in_absent_names_share_a_class() -> None:
    classes = Classes(SUMMARIES)
    a = _rule("Never deploy table_3_5 without a backup", "not deploy table_3_5 backup")
    b = _rule("never deploy Table_4_4 without a backup", "not deploy table_4_4 backup")
    named = _rule("Never deploy table_9_0 without a backup", "not deploy table_9_0 backup")
    other = _rule("Never drop table_3_5 without a backup", "not drop table_3_5 backup")
    ids = classes.ids((a, b, named, other))
    assert ids[0] == ids[1] and len(set(ids)) == 3
    for summary in [*SUMMARIES, "Never deploy anything without a backup.",
                    "Deploy table_3_5 and table_4_4 now."]:
        assert surv.survives(a, summary) == surv.survives(b, summary), summary
    assert classes.key(named) == (Kind.NEGATION, named.text, named.norm)


def test_clauses_a_paraphrase_reads_by_letters_keep_their_own_class() -> None:
    classes = Classes(SUMMARIES)
    for d in (
        # a contraction: "n't" is read with the word before it
        _rule("table_3_5n't be dropped", "not drop table_3_5n't"),
        # keeps objects as they are: the complement paraphrase reads parts of words
        _rule("closed rows_3_5 must remain unchanged", "must closed rows_3_5 remain unchanged",
              Kind.CONSTRAINT),
        # a restriction: the check-name paraphrase reads the parts of only_3_5
        _rule("keep only_3_5 messages", "must keep only_3_5 messages", Kind.CONSTRAINT),
        # a token: one class each
        _rule("table_3_5", "table_3_5", Kind.IDENTIFIER),
    ):
        assert classes.key(d) == (d.kind, d.text, d.norm), d.text
    assert Classes(None).key(_rule("never x_1", "not x_1")) == (Kind.NEGATION, "never x_1",
                                                               "not x_1")


def test_a_class_is_decided_once_per_kind_text_and_norm() -> None:
    """The same fact at another place of another text is the same class, without a
    second reading of its words (the texts of a trace repeat the same facts)."""
    classes = Classes(SUMMARIES)
    read: list[str] = []
    key = classes.key

    def counted(d: Discriminator) -> tuple[object, ...]:
        read.append(d.text)
        return key(d)

    classes.key = counted  # type: ignore[method-assign]
    text, norm = "never deploy table_3_5 without a backup", "not deploy table_3_5 backup"
    here = Discriminator(Kind.NEGATION, text, norm, 0, len(text))
    there = Discriminator(Kind.NEGATION, text, norm, 40, 40 + len(text), line=3)
    other = _rule("never deploy table_4_4 without a backup", "not deploy table_4_4 backup")
    assert classes.ids((here,)) == (0,)
    assert classes.ids((there, other)) == (0, 0)  # table_4_4: absent too, same class
    assert read == [text, other.text]  # ``there`` was not read again
    assert classes.reps == [here] and classes.clause == [True]


def test_absent_answers_each_word_once() -> None:
    absent = Absent(SUMMARIES)
    assert absent("table_3_5") is True and absent("table_9_0") is False
    assert absent._seen == {"table_3_5": True, "table_9_0": False}
    assert absent("table_3_5") is True and len(absent._seen) == 2
