"""Text wrapped at a fixed width (a pasted e-mail, a spec, a bullet's continuation line)
keeps its sentences whole: a clause runs on over a soft line break, on the rule's side
and on the summary's (adv116 B5: "Do NOT" ended one line and "use --force" opened the
next; the rule was no clause, and the push that broke it passed as no CA307; a summary
that kept such a rule, wrapped, read as flipping it, a CA304 error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.clauses import unwrapped
from compaction_audit.recall.extract import extract
from tests.logs import LogWriter, rnd

HEAD = "Please remember for the rest of this session that you must"  # 58 characters
ONE_LINE = f"{HEAD} NOT use --force on the release branch, because others pulled it."
WRAPPED = f"{HEAD} NOT\nuse --force on the release branch, because others pulled it."
PUSH = "git push --force origin release"


def _negations(text: str) -> list[tuple[str, str]]:
    return [(d.text, d.norm) for d in extract(text) if d.kind.value == "negation"]


def _log(write_log: LogWriter, rule: str, summary: str) -> Path:
    return write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 20, "text": rule, "source": "user"}]),
        rnd(1, summaries=[{"id": "c1", "tokens": 10, "children": ["u1"], "text": summary}],
            evicted=["u1"]),
        rnd(2, spans=[{"id": "t1", "tokens": 20, "text": PUSH, "source": "tool_call:Bash"}]),
    ])


def _codes(path: Path) -> list[str]:
    return sorted({f.code for f in audit_session(read_native(str(path))).findings
                   if f.code in ("CA301", "CA304", "CA307")})


@pytest.mark.parametrize("wrapped", [
    WRAPPED,
    f"{HEAD} NOT use\n--force on the release branch, because others pulled it.",
    f"- {HEAD} not use\n  --force on the release branch, because others pulled it.",
    f"{HEAD} NOT\r\nuse --force on the release branch, because others pulled it.",
    f"{HEAD} NOT \nuse --force on the release branch, because others pulled it.",
    f"> {HEAD} NOT\n> use --force on the release branch, because others pulled it.",
    f"* {HEAD} not\n      use --force on the release branch, because others pulled it.",
])
def test_a_clause_runs_on_over_a_soft_line_break(wrapped: str) -> None:
    text = f"{HEAD} NOT use --force on the release branch"
    norm = "not use --force release branch"
    [(shown, got)] = _negations(wrapped)
    assert got == norm
    assert " ".join(shown.split()) == shown  # shown on one line, as typed
    assert shown.lower().endswith(text.lower()[len(HEAD) - 4:])
    assert _negations(ONE_LINE) == [(text, norm)]


def test_only_a_prohibition_cut_from_what_it_forbids_runs_on() -> None:
    # a negation after an auxiliary, a contraction, "never", "avoid", with its verb at
    # most; blanks, "\r" and the next line's quote marks become spaces (adv120 #3)
    for text in ("you must not\nuse it", "do not use\n--force", "don't\n`rm -rf`",
                 "never\n  use it", "must not \r\nuse it", "> must not\n> use it",
                 # "cannot", an article after the verb, "we" before an obligation
                 # (adv121 #4)
                 "you cannot\nuse it", "must not use the\n--force flag", "we must not\nuse it",
                 # a team's rule (adv122 #1)
                 "we don't\nuse --force", "so we do not\nuse it",
                 # emphasis, a dotfile (adv122)
                 "you must **not**\nuse --force", "never commit\n.env files"):
        joined = unwrapped(text, text, text)
        assert "\n" not in joined and len(joined) == len(text), text
    # any other line end still ends the clause: a line-per-item list, "or not", "yes or
    # no", a heading (adv120 #1, #2), a prohibition with an object already
    for text in ("whether the tests passed or not\nuse --force when you push",
                 "answer with a plain yes or no\nuse --force-with-lease",
                 "## open items that were not finished\n`git push --force` on release",
                 "never push to main without a review\nuse --force on your branches",
                 "rules\nnever use --force", "do not use it.\nuse the other one",
                 # a statement, a capitalised sentence, an idiom, a question's "not
                 # avoid", a quote above a reply (adv121 #2, #3)
                 "git says i can't\nuse --force, it's my branch", "We did not\nUse --force",
                 "never mind\nuse --no-verify", "why not avoid\nrunning it with --force?",
                 "> or would you rather i don't\nuse --force-with-lease"):
        assert unwrapped(text, text.lower(), text.lower()) == text.lower(), text
    # a name in capitals opens the next line: the rule runs on (adv122 #2)
    for text in ("You must not run\nNPM_CONFIG_FORCE=1 npm publish", "Do NOT edit\nCHANGELOG.md"):
        assert "\n" not in unwrapped(text, text.lower(), text.lower()), text
    assert _negations("Rules\nnever use --force when pushing") == [
        ("never use --force when pushing", "not use --force when pushing")]
    assert _negations("Do NOT\nuse --force when pushing.") == [
        ("Do NOT use --force when pushing", "not use --force when pushing")]
    assert _negations("Tell me whether the integration tests passed or not\n"
                      "use --force when you push the feature branch") == []


def test_the_push_that_breaks_a_wrapped_rule_is_found(write_log: LogWriter) -> None:
    path = _log(write_log, WRAPPED, "Summary: worked on the release push.")
    assert _codes(path) == ["CA301", "CA307"]
    [found] = [f for f in audit_session(read_native(str(path))).findings
               if f.code == "CA307"]
    assert f"{HEAD} NOT use --force on the release branch" in found.message


@pytest.mark.parametrize("rule", [ONE_LINE, WRAPPED])
def test_a_summary_keeping_the_rule_wrapped_does_not_flip_it(write_log: LogWriter,
                                                             rule: str) -> None:
    kept = ("Summary of the work on the release branch and the rules the user gave: you "
            "must NOT\nuse --force on the release branch, because others pulled it.")
    assert _codes(_log(write_log, rule, kept)) == []
    # a summary that drops the negation over the same wrap does flip it
    flipped = kept.replace("must NOT\n", "must\n")
    assert _codes(_log(write_log, rule, flipped)) == ["CA301", "CA304", "CA307"]


@pytest.mark.parametrize(("summary", "codes"), [
    ("## Open items that were not finished before this compaction\n"
     "`git push --force` on the release branch to publish the hotfix.", ["CA301", "CA307"]),
    ("Open items from the session that were not finished before the compaction\n"
     "use --force on the release branch to publish the hotfix.", ["CA301", "CA304", "CA307"]),
    ("Summary: the user does not want any new dependencies added to the project\n"
     "use --force on the release branch, because others pulled it.",
     ["CA301", "CA304", "CA307"]),
])
def test_a_negation_on_the_line_before_does_not_keep_a_reversed_rule(
        write_log: LogWriter, summary: str, codes: list[str]) -> None:
    """adv120 #1: a long line holding "not" (a heading, a label) joined to the next one,
    which states the forbidden act, read as keeping the rule: CA304 and the CA307 of
    the push went away, exit 1 -> 0."""
    rule = "Do NOT use --force on the release branch, because others pulled it."
    assert _codes(_log(write_log, rule, summary)) == codes
