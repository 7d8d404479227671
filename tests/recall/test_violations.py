"""lost-rule-violated's search (recall/violations.py, recall/objmatch.py): the first
later tool call holding a lost rule's object, found in one pass for all rules (issue 11,
class 5, seventh adversarial pass F2) and chosen by a total order (class 8)."""

from __future__ import annotations

import random
import re
from typing import Any

import polars as pl
import pytest

from compaction_audit.recall import objmatch
from compaction_audit.recall.objmatch import matches
from compaction_audit.recall.violations import _pattern, actor, violations
from tests.recall.querycount import counted_queries

LINT = "Do not run `lint-tool analyze` in this repo."
SUDO = "Never use sudo on the build host."
TRAILER = "Never add a `Co-Authored-By:` trailer to commit messages."
KUBE = "Do not run `kubectl-x` against prod."


def _tables(rules: list[tuple[str, str, int]], calls: list[tuple[str, int, int, str]],
            others: list[tuple[str, int, int, str, str]] | None = None
            ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(lost, items, rounds): ``rules`` as (span, text, lost_round), each a negation lost
    at fold "c1" with key "k:<span>"; ``calls`` as tool calls (id, ri, line, text) in
    items order; ``others`` as (id, ri, line, text, source); round r is ri r."""
    lost = pl.DataFrame(
        {"kind": ["negation"] * len(rules), "text": [t for _, t, _ in rules],
         "span": [s for s, _, _ in rules], "cause": ["fold"] * len(rules),
         "fold": ["c1"] * len(rules), "lost_round": [r for _, _, r in rules],
         "reused_span": [None] * len(rules), "reused_round": [None] * len(rules),
         "key": [f"k:{s}" for s, _, _ in rules]},
        schema_overrides={"reused_span": pl.String, "reused_round": pl.Int64,
                          "lost_round": pl.Int64})
    rows = [(i, ri, line, text, "tool_call:Bash") for i, ri, line, text in calls]
    rows += others or []
    items = pl.DataFrame(
        [(i, "span", ri, ri, line, text, src) for i, ri, line, text, src in rows],
        schema={"id": pl.String, "kind": pl.String, "ri": pl.Int64, "round": pl.Int64,
                "line": pl.Int64, "text": pl.String, "source": pl.String}, orient="row")
    last = max([r for _, _, r in rules] + [c[1] for c in rows] + [0])
    rounds = pl.DataFrame({"ri": list(range(last + 1)), "round": list(range(last + 1))})
    return lost, items, rounds


def _found(*tables: pl.DataFrame) -> list[tuple[Any, ...]]:
    return list(violations(*tables).select(
        "ri", "span", "how", "object", "violated_span", "violated_round").iter_rows())


def test_the_first_call_at_or_after_the_loss_is_named() -> None:
    calls = [("t0", 0, 2, "lint-tool analyze src/"),       # before the loss: not counted
             ("t1", 2, 5, "echo lint-tool analyze done"),  # round 2, first of line 5
             ("t2", 2, 5, "lint-tool analyze --all"),
             ("t3", 3, 6, "LINT-TOOL\n  analyze"),
             ("t4", 3, 6, "git commit -m 'x\n\nco-authored-by: A <a@x>'"),
             ("t5", 3, 6, "ls && sudo make install"),
             ("t6", 4, 7, "\u212aUBECTL-X get pods")]           # KELVIN SIGN K: (?i) k
    lost = [("u1", LINT, 1), ("u2", SUDO, 1), ("u3", TRAILER, 1), ("u4", KUBE, 1)]
    assert _found(*_tables(lost, calls)) == [
        (2, "u1", "command", "lint-tool analyze", "t1", 2),
        (3, "u2", "command", "sudo", "t5", 3),
        (3, "u3", "write", "Co-Authored-By", "t4", 3),
        (4, "u4", "command", "kubectl-x", "t6", 4)]


def test_a_tie_on_round_and_line_goes_to_the_earlier_item_not_the_smaller_id() -> None:
    # two calls of one assistant record: same ri, same line; z9 comes first in the items
    calls = [("z9", 2, 5, "lint-tool analyze a"), ("a1", 2, 5, "lint-tool analyze b")]
    assert _found(*_tables([("u1", LINT, 1)], calls))[0][4] == "z9"
    assert _found(*_tables([("u1", LINT, 1)], calls[::-1]))[0][4] == "a1"


def test_the_rules_own_span_is_skipped_for_the_next_call() -> None:
    calls = [("u1", 1, 3, "Do not run `lint-tool analyze` in this repo."),
             ("t2", 1, 3, "lint-tool analyze"), ("t3", 2, 4, "lint-tool analyze")]
    assert _found(*_tables([("u1", LINT, 1)], calls)) == [
        (1, "u1", "command", "lint-tool analyze", "t2", 1)]
    only_own = _tables([("u1", LINT, 1)], calls[:1])
    assert _found(*only_own) == []


@pytest.mark.parametrize("text", [
    "lint-tool analyzer --all",        # a longer word
    "my-lint-tool analyze",            # '-' is part of the word before
    "lint-tool --version",             # not the object
])
def test_no_violation_without_the_whole_object(text: str) -> None:
    assert _found(*_tables([("u1", LINT, 1)], [("t1", 2, 4, text)])) == []


def test_no_violation_from_prose_before_the_loss_or_from_a_plain_statement() -> None:
    others = [("a1", 2, 4, "lint-tool analyze is slow", "assistant")]  # not a tool call
    calls = [("t0", 0, 1, "lint-tool analyze")]                         # before round 1
    assert _found(*_tables([("u1", LINT, 1)], calls, others)) == []
    assert _found(*_tables([("u1", "Run `lint-tool analyze` daily.", 1)],
                           [("t1", 2, 4, "lint-tool analyze")])) == []


@pytest.mark.parametrize(("text", "fires"), [
    ("sudo rm -rf build", True), ("cd x; sudo ls", True), ("(sudo ls)", True),
    ("echo $(  sudo id)", True), ("make\n   sudo make install", True),
    ("echo sudo", False), ("  sudo ls", False), ("sudoedit x", False)])
def test_a_single_plain_word_counts_only_at_a_command_start(text: str, fires: bool) -> None:
    assert bool(_found(*_tables([("u2", SUDO, 1)], [("t1", 2, 4, text)]))) is fires


@pytest.mark.parametrize(("rule", "call", "fires"), [
    # adv122 #6: a command pasted through an editor that made its "--" one dash, with
    # more of the command after the flag, is broken as its ASCII form is
    ("Never run git push \u2014force origin main.", "git push --force origin main", True),
    ("Never run git reset \u2014hard HEAD on a shared checkout.", "git reset --hard HEAD", True),
    ("Never run `git push \u2014force` on release.", "git push --force origin release", True),
    ("Never run git push \u2014force origin main.", "git push origin main", False),
    # the flag is the command's: the same flag on another command breaks nothing
    ("Never run git reset \u2014hard HEAD on main.", "npm publish --hard", False),
    ("Don't use the debug build \u2014verbose logs fill the disk", "make --verbose", False),
])
def test_a_smart_dash_flag_inside_a_command_is_the_commands_flag(
        rule: str, call: str, fires: bool) -> None:
    assert bool(_found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))) is fires


def test_the_result_does_not_depend_on_the_order_of_the_lost_rows() -> None:
    lost, items, rounds = _tables(
        [("u1", LINT, 1), ("u2", SUDO, 1), ("u5", LINT, 1), ("u3", TRAILER, 1)],
        [("t1", 2, 5, "sudo lint-tool analyze"), ("t2", 2, 5, "Co-Authored-By: B")])
    first = violations(lost, items, rounds)
    assert first["span"].to_list() == ["u1", "u2", "u3", "u5"]
    assert violations(lost.reverse(), items, rounds).equals(first)


def test_the_number_of_polars_queries_does_not_grow_with_the_rules(
        monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {}
    for n in (40, 80):
        rules = [(f"u{i}", f"Do not run `tool-{i} check` here.", 1) for i in range(n)]
        calls = [(f"t{i}", 2, 5, f"tool-{i} check --all") for i in range(0, n, 2)]
        tables = _tables(rules, calls)
        with monkeypatch.context() as patch:
            seen = counted_queries(patch)
            found = violations(*tables)
        assert found["violated_span"].to_list() == sorted(
            (f"t{i}" for i in range(0, n, 2)), key=lambda s: f"k:u{s[1:]}")
        counts[n] = len(seen)
    # before: one filter, sort and head per rule (40 -> 80 rules added 120 queries)
    assert counts[80] == counts[40]


# ----------------------------------------------------------------- objmatch.matches
def _match(objects: list[tuple[str, bool]], texts: list[str]) -> set[tuple[int, int]]:
    t = pl.DataFrame({"tid": list(range(len(texts))), "text": texts},
                     schema={"tid": pl.UInt32, "text": pl.String})
    o = pl.DataFrame({"pid": list(range(len(objects))),
                      "body": [" ".join(b.split()) for b, _ in objects],
                      "at_start": [a for _, a in objects],
                      "pattern": [_pattern(b, a) for b, a in objects]},
                     schema={"pid": pl.UInt32, "body": pl.String, "at_start": pl.Boolean,
                             "pattern": pl.String})
    return set(matches(t, o).iter_rows())


def test_matches_by_hand() -> None:
    objects = [("lint-tool analyze", False), ("./run.sh", False), ("sudo", True),
               ("ключ-x", False), ("", False)]
    texts = ["run lint-tool \t analyze now",  # 0: words across a whitespace run
             "./run.sh --fast",               # 1: an object starting with a non-word
             "x./run.sh",                     # 2: 'x' is a word character before '.'
             "a; sudo b",                     # 3: after ';' and a space
             "КЛЮЧ-X",                        # 4: Cyrillic upper case: the regex path
             "word"]                          # 5: no two non-word neighbours
    assert _match(objects, texts) == {
        (0, 0), (1, 1), (2, 3), (3, 4),
        # the empty object matches wherever an edge or two non-words meet
        (4, 0), (4, 1), (4, 2), (4, 3)}


def test_nested_objects_are_each_matched() -> None:
    # adv83: nested objects over a long run listed every key at every position (3.8 GB
    # for 180 KB); now searched one layer at a time, each object still found
    objects = [("--force", False), ("push --force", False), ("git push --force", False),
               ("rm", True)]
    texts = ["git push --force origin", "then push --force", "--force", "rm -rf x",
             "-" * 20_000]
    assert _match(objects, texts) == {(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2),
                                      (3, 3)}


def test_a_text_cannot_forge_the_markers() -> None:
    # the private-use characters the forms use as markers, written in a text
    forged = "".join(chr(c) for c in [*range(1, 7), *range(0xE001, 0xE007)])
    assert _match([("ab", False)], [f"x{forged}abx", f"{forged}ab{forged}"]) == {(0, 1)}


def test_matches_equal_the_regexes_on_seeded_random_texts() -> None:
    rng = random.Random(7)
    parts = ["sudo", "rm", "--force", "lint-tool", "Co-Authored-By:", "./run.sh", "KILL",
             "\u017fudo", "\u212aill", "kill", "a.b", "x=1", "$(", "(", ";", "&&", "|",
             "\n", " ", "\t", "\xa0", "\x1f", "\u03a3udo", "-", "_", "\u65e5",
             "\x01", "\x04", "\ue001", "\ue012", "\u00c9", "\u0130",
             # cased letters outside ASCII (adv33 B4: they kept a cross join)
             "\u043a\u043b\u044e\u0447", "\u041a\u041b\u042e\u0427", "stra\u00dfe",
             "STRA\u1e9eE", "\u03c2", "\u03c3", "\u03a3", "\u0131", "I", "\u1fd3",
             "\u0390", "\ufb05", "\ufb06", "\u00e9t\u00e9"]

    def some(n: int) -> str:
        return "".join(rng.choice(parts) + rng.choice(["", " ", "\n ", ";", "."])
                       for _ in range(n))

    for _ in range(60):
        texts = [some(rng.randint(0, 6)) for _ in range(30)]
        objects = list(dict.fromkeys(
            (("".join(o.split()) or "sudo") if at else o, at)
            for o, at in ((rng.choice(parts) if rng.random() < 0.7 else some(2),
                           rng.random() < 0.4) for _ in range(10))))
        want = {(p, t) for p, (o, a) in enumerate(objects) for t, text in enumerate(texts)
                if pl.Series([text]).str.contains(_pattern(o, a))[0]}
        assert _match(objects, texts) == want


def test_the_fold_covers_every_character_the_regex_matches_to_an_ascii_letter() -> None:
    everything = pl.Series([chr(c) for c in range(0x80, 0x110000)
                            if not 0xD800 <= c < 0xE000])
    partners = everything.filter(everything.str.contains("(?i)^[a-z]$")).to_list()
    assert sorted(partners) == ["\u017f", "\u212a"]
    for c in partners:
        assert everything.filter(everything.str.contains(
            f"(?i)^{re.escape(objmatch._FOLD[c])}$")).to_list() == [c]


def test_a_character_without_a_case_mapping_matches_only_itself() -> None:
    everything = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000]
    cased = [c for c in everything
             if not (c.lower() == c and c.upper() == c and c.casefold() == c)]
    klass = "".join(re.escape(c) for c in cased)
    series = pl.Series(everything)
    reached = set(series.filter(series.str.contains(f"(?i)^[{klass}]$")).to_list())
    assert reached == set(cased)


def test_objects_with_cased_letters_outside_ascii_are_not_tried_against_every_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """adv33 B4: such objects kept their regex, tried against every text through a
    cross join of objects and texts (3.3 GB at 8,000 of each).  They are found by the
    forms now; only the empty object is tried against every text."""
    crossed: list[tuple[int, int]] = []
    join = pl.DataFrame.join

    def spy(self: pl.DataFrame, other: pl.DataFrame, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("how") == "cross":
            crossed.append((self.height, other.height))
        return join(self, other, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "join", spy)
    objects = [(f"\u043a\u043b\u044e\u0447{i}x", False) for i in range(40)]
    texts = [f"run \u041a\u041b\u042e\u0427{i}X now" for i in range(40)]
    assert _match(objects, texts) == {(i, i) for i in range(40)}
    # the command form's delimiters (10 x 3) with the objects (none here), no texts
    assert sorted(crossed) == [(0, 30), (10, 3)]


@pytest.mark.parametrize(("source", "span", "named"), [
    ("tool_call:Bash", "t8", "Bash call t8"), ("tool_call:Bash", "toolu_1", "Bash call toolu_1"),
    ("function_call:shell", "c1", "shell call c1"), ("tool_call:", "t8", "tool call t8"),
    ("tool_result:Bash", "toolu_1:result", "Bash output toolu_1:result"),
    # usertest38 #10: role tool read "tool:t10 t10" and "tool:tool_call:Bash t10"
    ("tool:t10", "t10", "tool output t10"), ("tool:tool_call:Bash", "t10", "Bash output t10"),
    ("tool", "t10", "tool output t10"), ("user:u3", "u3", "user message u3"),
    ("user:msg-3", "m3", "user message m3 (msg-3)"), ("assistant", "a4", "assistant message a4"),
    ("message t10", "t10", "message t10"), ("shell:s300", "s300", "shell s300"),
    ("msg-3", "m3", "span m3 (msg-3)"), ("t10", "t10", "span t10"), (None, "t8", "span t8"),
    ("xt10", "t10", "span t10 (xt10)")])
def test_the_span_that_acted_is_named_once(source: str | None, span: str, named: str) -> None:
    assert actor(source, span) == named


def test_a_rule_a_person_restated_with_emphasis_is_still_read(write_log: Any) -> None:
    """adv104 #1: the lost rule is listed under the person's restatement ("do **not**
    run ..."), whose emphasis hid the act from the rule's reading: no CA307, and a
    baseline made before the call let the violation pass."""
    from compaction_audit.api import audit
    from tests.logs import rnd

    def span(i: str, text: str, role: str, **more: Any) -> dict[str, Any]:
        return {"id": i, "tokens": 10, "role": role, "text": text, **more}

    log = [rnd(0, spans=[span("a0", LINT, "assistant")]),
           rnd(1, spans=[span("u1", "Right, do **not** run `lint-tool analyze` in this repo.",
                              "user")]),
           rnd(2, spans=[span("a1", "Working on the lint setup now.", "assistant")],
               summaries=[{"id": "S", "tokens": 5, "children": ["a0", "u1"],
                           "text": "Working on the lint setup."}], evicted=["a0", "u1"]),
           rnd(3, spans=[span("c1", "lint-tool analyze --all", "assistant",
                              source="tool_call:Bash")])]
    found = [f for f in audit(str(write_log(log))).findings if f.code == "CA307"]
    assert [(f.round, f.values["violated_span"], f.values["span"]) for f in found] == [
        (3, "c1", "u1")]


FORCE = "Never use --force on this branch, Priya is reviewing it."


@pytest.mark.parametrize(("between", "fires"), [
    # adv123 #2: the person granted the act between the rule and the call
    ("Actually, --force is fine now, Priya finished her review.", False),
    ("You can force push feature/search now.", False),  # the flag's verb form
    ("Force push it.", False),
    # no grant: a question, a condition, someone else's word, another flag
    ("Can I use --force now?", True),
    ("You can use --force only after Priya signs off.", True),
    ("Priya says you can use --force.", True),
    ("You can use --force-with-lease now.", True),
    ("The push was rejected again.", True),
    # adv124 #1: the act named to refuse or replace it
    ("Push it without --force.", True),
    ("Use --force-with-lease instead of --force.", True),
    ("Skip --force; a normal push works now.", True),
    ("Use --force-with-lease to force push it.", True),
    # adv124 #2: a grant for another branch or another program
    ("You can force push feature/other now.", True),
    ("You can use --force with npm install.", True),
    ("You can use --force on feature/search now.", False),  # the call's own branch
    ("--force is fine on my end.", False),  # adv125 #10: no scope named
    ("You can force push it on a new branch.", True),  # adv125 #5
])
def test_a_grant_by_the_person_between_rule_and_call_is_no_violation(
        between: str, fires: bool) -> None:
    others = [("u1", 1, 2, FORCE, "user"), ("u2", 2, 3, between, "user")]
    calls = [("t1", 3, 4, "git push --force origin feature/search")]
    assert bool(_found(*_tables([("u1", FORCE, 2)], calls, others))) is fires


def test_a_grant_before_the_rule_or_after_the_call_is_none() -> None:
    grant = "You can force push it."
    calls = [("t1", 3, 4, "git push --force origin feature/search")]
    before = [("u0", 0, 1, grant, "user"), ("u1", 1, 2, FORCE, "user")]
    after = [("u1", 1, 2, FORCE, "user"), ("u2", 4, 5, grant, "user")]
    assert _found(*_tables([("u1", FORCE, 2)], calls, before))
    assert _found(*_tables([("u1", FORCE, 2)], calls, after))
    # the assistant's grant is not the person's
    theirs = [("u1", 1, 2, FORCE, "user"), ("a2", 2, 3, grant, "assistant")]
    assert _found(*_tables([("u1", FORCE, 2)], calls, theirs))


@pytest.mark.parametrize(("source", "fires"), [
    ("user", True), ("tool_result:Read", True),
    # adv123 #2: the assistant's own "I will not ..." is an intent, not a rule
    ("assistant", False), ("assistant:thinking", False)])
def test_only_a_person_or_a_document_states_a_rule(source: str, fires: bool) -> None:
    said = "I will not use --force here; let me check who pushed first."
    others = [("s1", 1, 2, said, source)]
    calls = [("t1", 3, 4, "git push --force origin hotfix/login")]
    assert bool(_found(*_tables([("s1", said, 2)], calls, others))) is fires


@pytest.mark.parametrize(("call", "fires"), [
    # adv123 #1: the flag in a quoted argument of another program is data, not run
    ("grep -rn -- '--force' scripts/ .github/workflows/", False),
    ("git commit -am 'release.sh: stop using --force when pushing main'", False),
    ('echo "- Never push with --force." >> CONTRIBUTING.md', False),
    # ... unless a shell runs the quoted string, or the flag is outside the quotes
    ("bash -c 'git push --force origin main'", True),
    ("ssh deploy@ci 'git push --force origin main'", True),
    ("git commit -m 'wip' && git push --force origin main", True),
    ("git push --force origin main", True),
    # a shell's -c among other flags, a command substitution in double quotes (review)
    ("bash -lc 'git push --force origin main'", True),
    ("docker exec app /bin/sh -e -c \"git push --force origin main\"", True),
    ('echo "pushed: $(git push --force origin main)"', True),
    # grep's own -c counts lines: its quoted pattern is still data
    ("grep -c -- '--force' scripts/release.sh", False),
    ("git log --grep='--force' --oneline", False),
    # adv124 #6: unquoted, a search's or a text edit's arguments are data too
    ("grep -rn -- --force scripts/", False),
    # a text edit is read: it may write the command into a script it runs (adv125 #1)
    ("sed -i s/push/push--force/ release.sh && sh release.sh", False),
    ("sed -i 's/git push/git push --force/' release.sh && sh release.sh", True),
    ("git log --grep=--force", False),
    ("sed -i s/--force// release.sh && git push --force origin main", True),
    # adv124 #5: a here-document cat writes to a file is data; one a shell reads runs
    ("cat >> CONTRIBUTING.md <<'EOF'\n- Never push with --force\nEOF", False),
    ("bash <<EOF\ngit push --force origin main\nEOF", True),
    # adv125 #1: a here-document written to a script, or piped into a shell, runs
    ("cat > release.sh <<'EOF'\ngit push --force origin main\nEOF\nsh release.sh", True),
    ("cat <<'EOF' | sh\ngit push --force origin main\nEOF", True),
    # adv125 #13: Claude Code's commit message written through a here-document
    ("git commit -m \"$(cat <<'EOF'\nNever git push --force to main\nEOF\n)\"", False),
    ("gh pr create --title 'Policy' --body 'Never use git push --force on main.'", False),
    # adv125 #6: printed or found text piped into a runner runs
    ("echo 'git push --force origin main' | sudo bash", True),
    ("echo 'git push --force origin main' | ssh deploy@ci", True),
    ("cat > NOTES.md <<EOF\nWe can't ship yet\nEOF\ngit push --force origin main", True),
    # a program that runs its quoted argument (adv123's f14: psql -c), printed text
    # piped into a shell
    ("psql $URL -c 'git push --force origin main'", True),
    ("echo 'git push --force origin main' | sh", True),
])
def test_a_run_object_counts_where_the_call_runs_it(call: str, fires: bool) -> None:
    rule = "Never use --force when pushing main."
    assert bool(_found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))) is fires


@pytest.mark.parametrize(("source", "rule", "fires"), [
    # an Edit removing the flag from a script runs nothing (adv123 #1), nor a search,
    # a to-do list (adv124 #6)
    ("tool_call:Edit", "Never use --force when pushing main.", False),
    ("tool_call:apply_patch", "Never use --force when pushing main.", False),
    ("tool_call:Grep", "Never use --force when pushing main.", False),
    ("tool_call:TodoWrite", "Never use --force when pushing main.", False),
    ("tool_call:Bash", "Never use --force when pushing main.", True),
    # a whole file written holds what will run (adv124 #4: a release script)
    ("tool_call:Write", "Never use --force when pushing main.", True),
    # ... a document written is read, never run (adv125 #7)
    ("tool_call:Write@docs", "Never use --force when pushing main.", False),
    # a write rule is broken by the file-editing tool's text, quoted or not
    ("tool_call:Edit", "Never add `--force` to the release script.", True),
])
def test_a_file_editing_tool_runs_nothing(source: str, rule: str, fires: bool) -> None:
    source, _, doc = source.partition("@")
    path = "CONTRIBUTING.md" if doc else "scripts/release.sh"
    text = f"{path}\ngit push --force origin main\ngit push origin main"
    found = _found(*_tables([("u1", rule, 1)], [], [("t1", 2, 4, text, source)]))
    assert bool(found) is fires


@pytest.mark.parametrize(("rule", "call"), [
    # adv123 #4: everyday wordings of a rule were no rule for CA307
    ("Do NOT commit with --no-verify; fix what the hook says.", "git commit --no-verify -m wip"),
    ("Never push -f to main.", "git push --force origin main"),
    ("Please don't ever force-push main.", "git push -f origin main"),
    ("Avoid git reset --hard, I have uncommitted work.", "git reset --hard HEAD~1"),
])
def test_everyday_wordings_of_a_rule_are_broken_by_the_act(rule: str, call: str) -> None:
    assert _found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))


@pytest.mark.parametrize(("result", "why"), [
    # adv123 #9, adv124 #8: a result saying the call did not run (Claude Code's words)
    ("The user doesn't want to proceed with this tool use. The tool use was rejected.",
     "the person rejected it at the permission prompt"),
    ("The user doesn't want to take this action right now. STOP what you are doing.",
     "the person cancelled it"),
    ("Permission to use Bash with command git push --force origin main has been denied.",
     "permission was denied"),
    ("PreToolUse:Bash hook error: [~/.claude/hooks/guard.sh]: Blocked: force push",
     "a hook blocked it"),
    ("Everything up-to-date", None),
    ("PreToolUse:Bash hook error: [guard.sh]: timed out", None),  # no block said
])
def test_a_call_that_did_not_run_is_said_to_be_tried(write_log: Any, result: str,
                                                      why: str | None) -> None:
    found = _audited(write_log, [("t1", "git push --force origin main", result)])
    assert len(found) == 1
    assert found[0].values.get("refused") == why
    said = (f"tried to run '--force' at round 2 ({why}: it did not run)" if why
            else "ran '--force' at round 2")
    assert found[0].message.endswith(said)


def test_a_call_that_ran_is_named_before_a_refused_one(write_log: Any) -> None:
    """adv124 #7: a push the person rejected, then retried and run, read "tried to run"
    of the first; the one that ran is the violation."""
    rejected = "The user doesn't want to proceed with this tool use."
    found = _audited(write_log, [("t1", "git push --force origin main", rejected),
                                 ("t2", "git push --force origin main", "+ abc...def")])
    assert [(f.values["violated_span"], f.values.get("refused")) for f in found] == [
        ("t2", None)]


def _audited(write_log: Any, calls: list[tuple[str, str, str]]) -> list[Any]:
    """Round 0 states the rule (u1), round 1 folds it into S, round 2 makes ``calls``
    (id, command, result): each a tool call and its result ``<id>:result``."""
    from compaction_audit.api import audit
    from tests.logs import rnd

    rule = "Never use --force when pushing main."
    later = [span for i, command, result in calls for span in (
        {"id": i, "tokens": 5, "source": "tool_call:Bash", "text": command},
        {"id": f"{i}:result", "tokens": 5, "source": "tool_result:Bash", "text": result})]
    log = [rnd(0, spans=[{"id": "u1", "tokens": 10, "role": "user", "text": rule}]),
           rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["u1"],
                              "text": "Working on the release."}], evicted=["u1"]),
           rnd(2, spans=later)]
    return [f for f in audit(str(write_log(log))).findings if f.code == "CA307"]


@pytest.mark.parametrize(("call", "fires"), [
    # adv123 b23: the rule forbids the --force form; the plain form complies
    ("npm audit fix", False),
    ("cd web && npm audit fix --force", True),
    ("npm audit fix --legacy-peer-deps --force", True),  # adv125 #3
])
def test_a_three_word_command_keeps_its_flag(call: str, fires: bool) -> None:
    rule = "Don't run npm audit fix --force, it jumps majors."
    assert bool(_found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))) is fires


@pytest.mark.parametrize(("later", "fires"), [
    # adv124 #2: a grant taken back by a later message, or spent by a first call
    ([("u3", 3, 4, "Wait, I changed my mind about the force push.", "user")], True),
    ([("t0", 2, 3, "git push --force origin feature/search", "tool_call:Bash")], True),
    ([("u3", 2, 3, "Thanks, that looks good.", "user")], False),
])
def test_a_grant_taken_back_or_spent_is_none(
        later: list[tuple[str, int, int, str, str]], fires: bool) -> None:
    """The rule (round 1), the grant and what follows it (round 2), the loss at round 3,
    the call at round 4 (t0, a first use before the loss, is no violation itself)."""
    grant = "OK, force push it this one time."
    others = [("u1", 1, 2, FORCE, "user"), ("u2", 2, 3, grant, "user"), *later]
    calls = [("t1", 4, 5, "git push --force origin feature/search")]
    assert bool(_found(*_tables([("u1", FORCE, 3)], calls, others))) is fires


def test_a_written_script_is_said_to_be_written(write_log: Any) -> None:
    """adv124 #4: a release script written with the command is read, as "wrote"."""
    from compaction_audit.api import audit
    from tests.logs import rnd

    rule = "Never use --force when pushing main."
    log = [rnd(0, spans=[{"id": "u1", "tokens": 10, "role": "user", "text": rule}]),
           rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["u1"],
                              "text": "Working on the release."}], evicted=["u1"]),
           rnd(2, spans=[{"id": "w1", "tokens": 5, "source": "tool_call:Write",
                          "text": "scripts/release.sh\ngit push --force origin main"}])]
    found = [f for f in audit(str(write_log(log))).findings if f.code == "CA307"]
    assert [f.message.split("; ")[-1] for f in found] == [
        "Write call w1 wrote '--force' at round 2"]


@pytest.mark.parametrize(("grant", "named"), [
    # a grant that covers the first call only: the next call breaks the rule
    ("You can force push feature/search now.", "t2"),
    ("OK, force push it this one time.", "t2"),
    # one that covers both: no violation; none at all: the first call
    ("--force is fine now, the review is done.", None),
    ("The push was rejected again.", "t1"),
])
def test_a_permitted_call_hides_no_later_one(grant: str, named: str | None) -> None:
    """A call the person permitted is no violation, and the rule's next call holding the
    object is read in its place (the first call alone was read: a grant for
    feature/search hid a later force push of main)."""
    others = [("u1", 1, 2, FORCE, "user"), ("u2", 2, 3, grant, "user")]
    calls = [("t1", 3, 4, "git push --force origin feature/search"),
             ("t2", 4, 5, "git push --force origin main")]
    found = _found(*_tables([("u1", FORCE, 2)], calls, others))
    assert [row[4] for row in found] == ([] if named is None else [named])
