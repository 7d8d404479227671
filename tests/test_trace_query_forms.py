"""``trace`` finds the discriminator a person types as the text states it (usertest38 #6).

``trace LOG lib2==1.2.0`` said "'lib2==1.2.0' is not a discriminator" of the very pin the
README names, and ``trace LOG 45000`` said "no span holds '45000' as a discriminator"
while ``audit`` listed "quantity 45000 ms" as lost.  The class: a query that is the text
of a pin, a quantity or a keyed value as written.  A number without a unit finds the
quantities of that number (any unit), one with a unit those of the same measure; a value
bound to a name finds it bound to that name (or stated alone in a text that binds the
name to nothing else), as the audit counts it.  Expected labels are worked out by hand.
"""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.recall.extract import extract
from compaction_audit.trace.reading import reading
from tests.logs import LogWriter, rnd

PIN = "Pin lib2==1.2.0 because 1.3.0 breaks the serializer."


def span(i: str, text: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": "user"}


def folded(write_log: LogWriter, texts: list[str], summary: str) -> str:
    """Round 0 states ``texts`` (spans u0, u1, ...); round 1 folds them all into F."""
    ids = [f"u{k}" for k in range(len(texts))]
    return str(write_log([
        rnd(0, spans=[span(i, t) for i, t in zip(ids, texts, strict=True)]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ids, "text": summary}],
            evicted=ids)]))


def tree(path: str, query: str) -> list[str]:
    result = CliRunner().invoke(app, ["trace", path, "--", query], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_a_number_finds_the_quantity_whatever_its_unit(write_log: LogWriter) -> None:
    path = folded(write_log, ["The request timeout is 45000 ms."],
                  "The request timeout is 30000 ms.")
    lines = tree(path, "45000")
    # main: "text '45000': 1 span: 1 lost" and "note: no span holds '45000' as a
    # discriminator; span texts searched for it literally"
    assert lines[0] == "discriminator '45000': 1 span: 1 lost"
    assert lines[1].startswith("└── span u0 ") and lines[1].endswith("lost; quantity '45000 ms'")
    assert not any(ln.startswith("note:") for ln in lines)
    assert tree(path, "45s")[0] == "discriminator '45s': 1 span: 1 lost"  # 45 s = 45000 ms
    assert tree(path, "45000ms")[0] == "discriminator '45000ms': 1 span: 1 lost"
    # the same number of another measure is not this quantity: nothing holds it
    other = CliRunner().invoke(app, ["trace", path, "--", "45 ms"])
    assert other.exit_code == 2 and "'45 ms' is neither an item id nor a discriminator" \
        in other.output


def test_a_pin_as_written_is_the_pin(write_log: LogWriter) -> None:
    path = folded(write_log, [PIN, "Use lib3==1.2.0 in the tests."],
                  "Discussed dependency setup.")
    lines = tree(path, "lib2==1.2.0")
    # main: "word 'lib2==1.2.0': ..." and "note: 'lib2==1.2.0' is not a discriminator (it
    # holds identifier 'lib2', version '==1.2.0')"; lib3's 1.2.0 is another pin
    assert lines[0] == "discriminator 'lib2==1.2.0': 1 span: 1 lost"
    assert lines[1].startswith("└── span u0 ") and "version 'lib2==1.2.0'" in lines[1]
    assert tree(path, "lib2 == 1.2.0")[0] == "discriminator 'lib2 == 1.2.0': 1 span: 1 lost"
    # the value alone: both pins hold it
    assert tree(path, "1.2.0")[0] == "discriminator '1.2.0': 2 spans: 2 lost"


def test_a_swapped_pin_is_flipped_in_the_trace_as_in_the_audit(write_log: LogWriter) -> None:
    path = folded(write_log, [PIN, "Do not upgrade lib2 past 1.2.0."],
                  "Pin lib2==1.3.0 because 1.2.0 breaks the serializer. Upgrade lib2 past "
                  "1.2.0.")
    # main: "discriminator '1.2.0': 2 spans: 2 carried"; the pin is not kept, and u1's
    # 1.2.0 (lib2 bound to nothing there) holds it no longer once folded into F, which
    # states lib2==1.3.0: "flipped", with that sentence, as negation-flipped says it
    lines = tree(path, "lib2==1.2.0")
    assert lines[0] == "discriminator 'lib2==1.2.0': 2 spans: 2 flipped"
    assert lines[2].startswith("│   └── flipped at fold F (depth 1, round 1, line 2): 'Pin "
                               "lib2==1.3.0 because 1.2.0 breaks the serializer.'")
    # the value alone: u0's pin flipped, and u1's 1.2.0 is the object of the rule "Do
    # not upgrade lib2 past 1.2.0", which F states reversed (usertest38 #4)
    lines = tree(path, "1.2.0")
    assert lines[0] == "discriminator '1.2.0': 2 spans: 2 flipped"
    assert lines[4] == "    └── flipped at fold F (depth 1, round 1, line 2): 'Upgrade lib2 " \
                       "past 1.2.0.'"
    # stated in no rule, u1's own 1.2.0 is still in F
    plain = folded(write_log, [PIN, "Upgrading lib2 past 1.2.0 is fine."],
                   "Pin lib2==1.3.0 because 1.2.0 breaks the serializer. Upgrading lib2 past "
                   "1.2.0 is fine.")
    assert tree(plain, "lib2==1.2.0")[0] == "discriminator 'lib2==1.2.0': 2 spans: 2 flipped"
    assert tree(plain, "1.2.0")[0] == ("discriminator '1.2.0': 2 spans: 1 flipped, 1 carried; "
                                       "still held by summary F (round 1, line 2), which "
                                       "carries span u1 (user, round 0, line 1)")


def test_a_keyed_value_as_written_finds_it_under_its_name(write_log: LogWriter) -> None:
    path = folded(write_log, ["Set read_timeout_ms=45000 on staging.",
                              "Set write_timeout_ms=45000 on staging."],
                  "Staging timeouts were tuned.")
    assert tree(path, "read_timeout_ms=45000")[0] == (
        "discriminator 'read_timeout_ms=45000': 1 span: 1 lost")
    assert tree(path, "45000")[0] == "discriminator '45000': 2 spans: 2 lost"


def test_words_are_still_reduced_to_the_clauses_holding_them(write_log: LogWriter) -> None:
    path = folded(write_log, [PIN], "Discussed dependency setup.")
    lines = tree(path, "serializer")
    assert lines[0] == "word 'serializer': 1 span: 1 lost"
    assert lines[1] == ("note: 'serializer' is not a discriminator; reduced to the clause(s) "
                        "whose words hold it")


def test_the_reading_by_hand() -> None:
    mode, asked, note = reading("lib2==1.2.0")
    assert (mode, note, asked.name, asked.bound, sorted(asked.norms)) == (
        "discriminator", None, "lib2", "lib2==1.2.0", ["1.2.0", "lib2==1.2.0"])
    mode, asked, note = reading("45s")
    assert (asked.numbers, asked.measures) == (frozenset(), frozenset({("time", 45000.0)}))
    mode, asked, note = reading("45000")
    assert (asked.numbers, asked.name) == (frozenset({"45000"}), None)
    found = extract("Keep lib2 at 1.2.0. Use lib2==1.3.0 and 1.2.0 elsewhere.")
    # the second text binds lib2 to 1.3.0: its 1.2.0 alone is not the pin
    assert [d.text for d in reading("lib2==1.2.0")[1].hits(found)] == []
    assert [d.text for d in reading("lib2==1.2.0")[1].hits(extract("Keep lib2 at 1.2.0."))] \
        == ["1.2.0"]


def test_a_value_a_folded_span_set_later_is_lost_not_flipped(write_log: LogWriter) -> None:
    path = folded(write_log, ["Set read_timeout_ms=45000 on staging.",
                              "Set read_timeout_ms=30000 after the revert."],
                  "Set read_timeout_ms=30000 after the revert.")
    assert tree(path, "read_timeout_ms=45000")[0] == (
        "discriminator 'read_timeout_ms=45000': 1 span: 1 lost")
    changed = folded(write_log, ["Set read_timeout_ms=45000 on staging."],
                     "Set read_timeout_ms=30000 after the revert.")
    assert tree(changed, "read_timeout_ms=45000")[0] == (
        "discriminator 'read_timeout_ms=45000': 1 span: 1 flipped")


def test_a_clause_typed_shorter_than_the_span_states_it_is_that_clause(
        write_log: LogWriter) -> None:
    """usertest56 #6: "do NOT use --force" (a negation of its own) did not match the
    span's "Do NOT use --force when pushing": no span held it, and the texts were
    searched literally.  Its words in order inside a clause of the same kind match."""
    path = folded(write_log, ["Do NOT use --force when pushing, because main is protected.",
                              "Do not use --verbose in CI."], "Pushed the branch.")
    lines = tree(path, "do NOT use --force")
    assert lines[0] == "discriminator 'do NOT use --force': 1 span: 1 lost"
    assert "negation 'Do NOT use --force when pushing'" in lines[1]
    # words out of order are no match (nothing holds them: a usage error)
    other = CliRunner().invoke(app, ["trace", path, "--", "do NOT force use"])
    assert other.exit_code == 2 and "is neither an item id nor a discriminator" in other.output


def test_a_number_finds_the_identifier_it_numbers(write_log: LogWriter) -> None:
    """usertest60 #13: ``trace LOG 0051`` said "no span holds '0051' as a discriminator"
    of "migrations 0051 and 0052" (an identifier 'migrations 0051'), and searched the
    texts; the number of an identifier is that identifier, as the number of a clause
    finds the clause."""
    path = folded(write_log, ["Rename the column in migrations 0051 and 0052 only."],
                  "Renamed the column in migration 0052.")
    lines = tree(path, "0051")
    assert lines[0] == "discriminator '0051': 1 span: 1 lost"
    assert "identifier 'migrations 0051'" in lines[1] and not any(
        line.startswith("note:") for line in lines)
    kept = tree(path, "0052")  # a quantity there, as before: the summary keeps it
    assert kept[0] == "discriminator '0052': 1 span: 1 carried"
