"""Polarity, flips, ruled-out findings and honest asked-again (issue 12, points 1, 5, 6)."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from compaction_audit.recall.claims import claims
from compaction_audit.recall.extract import extract
from compaction_audit.recall.forbids import forbidden
from compaction_audit.recall.harm import asked_again
from compaction_audit.recall.kinds import KIND_RANK, Kind
from compaction_audit.recall.stale import next_items, repeat_share
from compaction_audit.recall.survival import flipped, negative, survives


def first(text: str, kind: str) -> object:
    return next(d for d in extract(text) if d.kind.value == kind)


@pytest.mark.parametrize(("words", "neg"), [
    (["never", "run", "release", "without", "confirmation", "step"], False),
    (["cannot", "deploy", "unless", "approved"], False),
    (["no", "confirmation", "step"], True),
    (["no", "longer", "pinned"], True),
    (["release", "without", "confirmation"], True),
    (["release", "right", "away"], False),
])
def test_polarity_with_double_negation(words: list[str], neg: bool) -> None:
    assert negative(words) is neg


@pytest.mark.parametrize(("child", "summary", "kept", "flip"), [
    ("No confirmation step.", "Never run the release without a confirmation step.", False,
     True),
    ("No confirmation step.", "Release with no confirmation step.", True, False),
    ("Never deploy without approval.", "Always get approval before you deploy.", True,
     False),
    ("Never deploy without approval.", "Deploy without approval.", False, True),
    ("Do not touch the config file.", "Updated the config file.", False, False),
    ("Must enable --force on staging only.", "Must disable --force on staging only.", False,
     True),
    ("Keep at most 3 replicas.", "Keep at least 3 replicas.", False, True),
    ("Do not run the migrations on prod.", "Ran the migrations on prod. Do not run the "
     "migrations on prod again.", True, False),
    ("Only run migrations on staging.", "Run migrations on staging only, not on prod.",
     False, False),  # the "not" negates prod: no flip (a sentence-polarity drop)
    ("Don't use mocks in the integration tests.", "Integration tests must not use mocks.",
     True, False),
    ("Always run the tests before pushing.", "Do not run the tests before pushing, they "
     "are slow.", False, True),
    ("Always run the tests before pushing.", "Ran the tests before pushing, but not the "
     "linter.", False, False),  # narrative, not a rule
    # usertest36: a negation of an order, its "not" dropped; "retry" opens an imperative
    ("Never deploy after 17:00 on Fridays.", "Deploy after 17:00 on Fridays.", False, True),
    ("Do NOT retry the migration before the lock table is vacuumed.",
     "Retry the migration before the lock table is vacuumed.", False, True),
    ("Never deploy after 17:00 on Fridays.", "Rules: never deploy after 17:00 on Fridays.",
     True, False),
    ("Do not retry the migration.", "Retried the migration twice.", False, False),
    # adv85 #2: the opening verb is a noun there (a verb of being, a label's colon)
    ("Do not force push to main.", "Force pushes to main are off limits.", False, False),
    ("Do not retry the job.", "Retry count for the job stayed at zero, as the user "
     "asked.", False, False),
    ("Do not update the config.", "Update on the config: left untouched, as the user "
     "asked.", False, False),
    ("Do not pin lib2 to 1.2.0.", "Pin lib2 to 1.2.0 was rejected by the user.", False,
     False),
    ("Do not use mocks in the tests.", "Use of mocks in the tests is banned.", False, False),
    # usertest37 #1: a lone "unless" is a negation ("X unless Y" = "X if not Y")
    ("Never merge unless CI is green.", "Merge unless CI is green.", False, True),
    ("Never merge unless CI is green.", "Only merge when CI is green.", True, False),
    ("Retry unless the lock is held.", "Retry the job unless its lock is held.", True,
     False),
    ("Retry unless the lock is held.", "Retry if the lock is held.", False, True),
])
def test_survival_and_flip(child: str, summary: str, kept: bool, flip: bool) -> None:
    d = next(d for d in extract(child)
             if d.kind.value in ("negation", "constraint", "condition"))
    assert survives(d, summary) is kept
    assert flipped(d, summary) is flip


def test_restatement_in_other_words_survives() -> None:
    d = first("We are not building a UI.", "negation")
    assert survives(d, "we are not writing a UI")


@pytest.mark.parametrize(("text", "norm"), [
    ("We ruled out DNS and TLS.", "ruled dns tls"),
    ("DNS and TLS were ruled out, so the proxy is next.", "ruled dns tls"),
    ("The cache is not the cause.", "ruled cache"),
    ("The replica lag isn't the culprit here.", "ruled replica lag"),
    ("The database is fine.", "ruled database"),
    # a gerund naming a part, and a report of an action, stay findings
    ("The caching layer is fine.", "ruled caching layer"),
    ("Restarting the pod was fine.", "ruled restarting pod"),
    # a dotted name or a port is one word, not a sentence's end (was "ruled replica")
    ("db.replica is fine.", "ruled db.replica"),
    ("Logging config is fine.", "ruled logging config"),  # a part, not an action
    ("Networking is fine.", "ruled networking"),
    # adv104 #3: a part with an object, or a fault put elsewhere: a diagnosis
    ("I checked it: routing to the replica is fine, the lag is elsewhere.",
     "ruled routing replica"),
    ("Restarting the pod is fine, the crash is elsewhere.", "ruled restarting pod"),
    # adv105 #3: the fault placed in the next sentence or after a semicolon; -ing words
    # that name a thing
    ("Restarting the pod is fine; the crash is elsewhere.", "ruled restarting pod"),
    ("Restarting the pod is fine. The crash is elsewhere.", "ruled restarting pod"),
    ("Upgrading openssl is fine, the root cause is the proxy.", "ruled upgrading openssl"),
    ("Underlying disk is fine.", "ruled underlying disk"),
    ("Existing tests are fine.", "ruled existing tests"),
    # adv106 #5: a fault placed with another verb
    ("Restarting the pod is fine, the crash comes from the proxy.", "ruled restarting pod"),
    ("Rotating the certs is fine, the culprit turned out to be DNS.", "ruled rotating certs"),
    # adv107 #1, #2: a part before a preposition is a part; a fault placed with "is the"
    ("Caching in the API layer is fine.", "ruled caching api layer"),
    ("Routing to the backend is fine.", "ruled routing backend"),
    ("Restarting the pod is fine; the problem is the DNS cache.", "ruled restarting pod"),
    ("We ruled out v4.2.1 and the proxy.", "ruled 4.2.1 proxy"),
])
def test_ruled_out_findings(text: str, norm: str) -> None:
    assert [(d.kind.value, d.norm) for d in extract(text) if d.kind.value == "ruled-out"] \
        == [("ruled-out", norm)]


@pytest.mark.parametrize("text", [
    "Everything is fine.", "It looks ok.", "Use a fine-grained lock.",
    "Run the rules out of band.",
    # a permission: an action that is fine grants it, it rules nothing out (usertest57 #4)
    "Deleting the prod-db-7 backups is fine now.", "Pushing to main is OK.",
    "Using --force is fine.", "Bumping 4.2.1 is okay.", "Deleting them is fine.",
    # usertest59 #1: with no article, on a name, a hyphenated verb
    "Deleting prod-db-7 backups is fine now.", "Deleting old backups is fine now.",
    "Rebooting node-3 is okay now.", "Restarting redis-2 is fine, go ahead.",
    "Force-pushing to main is fine.", "Merging PR #1234 is fine.",
    # adv105 #4: a fault named but not placed elsewhere: still a permission
    "Deleting the old backups is fine, the issue is resolved.",
    "Retrying the job is fine, the error was transient.",
    "Pushing to main is fine, the failure was a flake.",
    # adv106 #3, #4: an -ing word before an article or preposition is an act; a fault
    # in a later sentence, or only located, places nothing
    "Testing against prod is fine.", "Staging the changes is fine, but don't commit yet.",
    "Working on main is fine for this repo.",
    "Bumping the pool size is fine. The error is the same as before.",
    "Force-pushing to my branch is fine; the error is on line 42 of auth.py."])
def test_not_ruled_out(text: str) -> None:
    assert [d for d in extract(text) if d.kind.value == "ruled-out"] == []


def test_ruled_out_survival_needs_a_ruled_out_clause() -> None:
    d = first("We ruled out DNS and TLS.", "ruled-out")
    assert survives(d, "DNS and TLS are fine.")
    assert not survives(d, "DNS and TLS caused the outage.")
    assert not survives(d, "Ruled out DNS.")


def test_bare_number_is_never_asked_again_alone() -> None:
    lost = pl.DataFrame({"key": ["quantity:45000", "quantity:45000",
                                 "negation:not building ui"],
                         "kind": ["quantity", "quantity", "negation"],
                         "text": ["read_timeout_ms: 45000", "45000",
                                  "we are not building a UI"],
                         "start": [1, 1, 1]})
    users = pl.DataFrame({"id": ["u9", "u8", "u7"], "ri": [2, 3, 4], "round": [2, 3, 4],
                          "text": ["I ran 45000 requests", "we are not writing a UI",
                                   "set read_timeout_ms back to 45000"]})
    got = asked_again(lost, users).select("key", "id").rows()
    assert got == [("quantity:45000", "u7"), ("negation:not building ui", "u8")]


@pytest.mark.parametrize(("text", "want"), [
    ("Do not run `lint-tool analyze` in this repo", ("lint-tool analyze", "command", False)),
    ("never add a `Co-Authored-By:` trailer", ("Co-Authored-By", "write", False)),
    ("don't run npm publish from here", ("npm publish", "command", False)),
    ("never use sudo", ("sudo", "command", True)),
    ("not add tests", None),
    # adv104 #1: emphasis and an adverb between the negation and the act
    ("Right, do **not** run `lint-tool analyze` here", ("lint-tool analyze", "command", False)),
    ("Do not, ever, run `lint-tool analyze`", ("lint-tool analyze", "command", False)),
    ("*Never* use sudo", ("sudo", "command", True)),
    ("never run 2*3 jobs", ("2*3", "command", False)),
    # adv105 #6: a code span keeps its "*"; "_ever_", "***ever***", "~~ever~~"
    ("Do not run `go test *_integration.go` here",
     ("go test *_integration.go", "command", False)),
    ("do not _ever_ run `make deploy`", ("make deploy", "command", False)),
    ("Do not ***ever*** run `make deploy`", ("make deploy", "command", False)),
    ("do not ~~ever~~ run `make deploy`", ("make deploy", "command", False)),
    # adv105 #5: "not just", "not even", a comma after "no": no rule
    ("It is not just running `make test` that is slow", None),
    ("We did not even run `pytest -x` before", None),
    ("No, just run `make deploy`.", None),
    ("No, really, use `rm -rf build` now.", None),
    # adv106 #1, #2, #7: after an imperative negation, asides and adverbs; a lone "_"
    # or "*" is the name's own; "simply" contrasts
    ("Never, ever run `git push --force` on this repo.", ("git push --force", "command", False)),
    ("Never again use `--no-verify` when committing.", ("--no-verify", "command", False)),
    ("Do not even run `terraform apply` without review.", ("terraform apply", "command", False)),
    ("Do not call _reset_all_tenants from the shell.", ("_reset_all_tenants", "command", False)),
    ("Never run pytest tests/*_slow.py", ("tests/*_slow.py", "command", False)),
    ("Don't simply run `pytest`; run `pytest -x`", None),
    # adv107 #3-#5: inability is no rule; two globs are no emphasis; nested emphasis
    ("I cannot even run `make test` because Docker is down.", None),
    ("Never commit *.pyc or build/* files.", ("*.pyc", "write", False)),
    ("Never **_ever_** run `make deploy` on this branch.", ("make deploy", "command", False)),
    # a dunder is no emphasis ("__init__.py" read "init.py" at b6058e9)
    ("Never add __init__.py files to the docs folder.", ("__init__.py", "write", False)),
    ("Never run python -m __main__ here", ("__main__", "command", False)),
    # adv116 B5: a flag's "--" an editor joined into one dash is the flag; a dash before
    # a short word, inside code or between words is no flag
    ("Do NOT use \u2014force when pushing", ("--force", "command", False)),
    ("Never pass \u2013no-verify to git commit", ("--no-verify", "command", False)),
    ("Do not run the tool \u2014it is slow", ("tool \u2014it is", "command", False)),
    # adv122 #6: an editor turns a pasted command whole, in a code span too
    ("Do not use `\u2014force` here", ("--force", "command", False)),
    ("Never use the tool \u2014 force is bad", ("tool \u2014 force", "command", False)),
    # adv120 #4: only right after the verb, an article, "or" or a comma: a prose dash
    # after other words is an aside, no flag
    ("Don't use the debug build \u2014verbose logs fill the disk",
     ("debug build --verbose", "command", False)),
    ("Never use the \u2014force flag", ("--force", "command", False)),
    # adv121 #1: after another word where the dashed word ends the object: at the end,
    # before punctuation or a word that opens a clause
    ("Don't run git push \u2014force", ("--force", "command", False)),
    ("Never run pytest \u2014runslow on CI", ("--runslow", "command", False)),
    ("Do NOT pass the flag \u2014force", ("--force", "command", False)),
    ("Don't run pip install \u2014use uv instead", ("pip install --use", "command", False)),
    # a word between two dashes is an aside (adv121 #8); a dash after the flag is not
    ("Never use a \u2014verbose\u2014 logger here", ("\u2014verbose\u2014 logger", "command",
                                                  False)),
    # adv120 #5: curly quotes, a dash after the flag, two en dashes, a minus sign and
    # Unicode hyphens
    ("Do NOT use \u201c\u2014force\u201d on the release branch", ("--force", "command", False)),
    ("Do NOT use \u2014force\u2014it rewrites history", ("--force", "command", False)),
    ("Do NOT use \u2013\u2013force here", ("--force", "command", False)),
    ("Do NOT use \u2212force here", ("--force", "command", False)),
    ("Do NOT use \u2010\u2010force here", ("--force", "command", False)),
    # adv122 #6: a dashed word after the command's words, more of the command after it:
    # the command with its flag is the object (a phrase: never the flag alone, as the
    # debug build's aside above shows)
    ("Never run git reset \u2014hard HEAD on main.", ("git reset --hard", "command", False)),
    # after "push", an act's verb (adv123 #4), the dash opens the flag as in ASCII
    ("Never run git push \u2014force origin main.", ("--force", "command", False)),
    ("Never run terraform apply \u2014auto-approve against prod.",
     ("terraform apply --auto-approve", "command", False)),
    ("Don't run pytest \u2014runslow locally, it takes an hour.",
     ("pytest --runslow", "command", False)),
    ("Never run `git push \u2014force` on release.", ("git push --force", "command", False)),
    # adv123 #4: a flag the act is done with, "push", "force-push", "push -f", "avoid"
    # before a command or code span
    ("Do NOT commit with --no-verify; fix the hook.", ("--no-verify", "command", False)),
    ("Never push --force to main.", ("--force", "command", False)),
    ("Please don't ever force-push main, people deploy from it.",
     ("--force", "command", False)),
    ("Never push -f to main.", ("--force", "command", False)),
    ("Avoid git reset --hard, I have uncommitted work.", ("--hard", "command", False)),
    ("Avoid `make deploy` on Fridays.", ("make deploy", "command", False)),
    ("Never push to main.", None),
    ("Avoid the debug build.", None),  # no command named
    ("We rebased to avoid --force pushes.", None),  # a purpose
    # a command done with a flag: the flag, as "git push --force" reads it
    ("Never run terraform apply with --auto-approve against prod.",
     ("--auto-approve", "command", False, ("terraform", "apply"))),
    # adv123 b23, adv125 #3: a command of three words and its flag: the flag
    ("Don't run npm audit fix --force, it jumps majors.", ("--force", "command", False)),
    # usertest76 F1: the flag after three words of the object is what is forbidden (the
    # run without it, the safe form, broke the rule at "0047")
    # on a call that names the migration (adv146 F3: "git push --force" broke it)
    ("do NOT run the prod migration 0047 with --force",
     ("--force", "command", False, ("0047",))),
    ("Do not run the release job with --verbose.",
     ("--verbose", "command", False, ("release", "job"))),
    # adv146 F3: the flag allowed, or in another clause: the object's words, as before
    ("Do not run the nightly benchmark suite except with --quick, it takes hours.",
     ("nightly benchmark suite", "command", False)),
    ("Never run the prod data backfill unless it is with --dry-run first.",
     ("prod data backfill", "command", False)),
    ("Do not run the release build script for staging, use it with --prod only.",
     ("release build script", "command", False)),
    ("Never run the prod migration 0047. Use --force elsewhere.", ("0047", "command", False)),
    ("Never run the nightly export job with care.", ("nightly export job", "command", False)),
    # not a flag: a short word, a word between two dashes, a dash before a space
    ("Never use the tool \u2014verbose\u2014 here", ("tool \u2014verbose\u2014", "command",
                                                   False)),
])
def test_forbidden_object(text: str, want: tuple[Any, ...] | None) -> None:
    assert forbidden(text) == (want if want is None or len(want) == 4 else (*want, ()))


def test_repeat_share_and_next_items() -> None:
    before = "The orders release is blocked. DNS and TLS were ruled out. The proxy config is next."
    assert repeat_share(before, before + " Something new happened here today.") == (1.0, 3)
    assert repeat_share(before, "Totally different words now appear here.") == (0.0, 3)
    assert next_items("Done so far.\nNext steps:\n- write the migration\n- ship it now\n\n"
                      "Other.") == ["write the migration", "ship it now"]


def test_ruled_out_ranks_with_negations() -> None:
    assert KIND_RANK[Kind.RULED_OUT] == KIND_RANK[Kind.NEGATION] == 9


def test_the_transcript_pointer_sentence_is_dropped_and_nothing_else() -> None:
    from compaction_audit.recall.claims import _drop_pointer

    text = ("Done. If you need specific details from before compaction, read the full "
            "transcript at /x.jsonl\nNext: ship v2.")
    assert _drop_pointer(text) == "Done. \nNext: ship v2."
    assert _drop_pointer("No pointer. Keep going.") == "No pointer. Keep going."
    assert _drop_pointer("read the full transcript at /a") == " "
    # adv123 #7: the instruction closing a Claude Code summary is the product's too
    closing = ("Done: v2 shipped.\nIf you need specific details from before compaction, "
               "read the full transcript at: /x.jsonl\nPlease continue the conversation "
               "from where we left off without asking the user any further questions. "
               "Continue with the last task that you were asked to work on.")
    assert _drop_pointer(closing) == "Done: v2 shipped.\n \n "
    assert [c.text for c in claims(closing)] == [c.text for c in claims("Done: v2 shipped.")]


CODEX_PREFIX = (  # codex-rs templates/compact/summary_prefix.md, one line
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by "
    "that language model. Use this to build on the work that has already been done and "
    "avoid duplicating work. Here is the summary produced by the other language model, "
    "use the information in this summary to assist with your own analysis:")


def test_the_codex_prefix_line_is_no_claim() -> None:
    """usertest68 #3: the prefix's middle sentences were claims no leaf supports."""
    from compaction_audit.recall.claims import _drop_pointer

    summary = "Renamed the flag to --colour in cli.py; do not touch setup.cfg."
    text = f"{CODEX_PREFIX}\n{summary}"
    assert _drop_pointer(text) == f" \n{summary}"
    assert [c.text for c in claims(text)] == [c.text for c in claims(summary)]
    assert [c.text for c in claims(text)]  # the summary's own claims stay
    # the line alone, and a claim-like sentence of the prefix without its opening, stay
    # as written: only the product's line, from its first words, is dropped
    bare = "You also have access to the state of the tools on build01."
    assert _drop_pointer(bare) == bare


@pytest.mark.parametrize(("summary", "kept"), [
    # a product's wrapper tag names no claim; the path inside it does
    ("<RUN_NOTE>\nEdited /srv/app/nav.tsx:4-9\n</RUN_NOTE>", ["/srv/app/nav.tsx"]),
    # a token cut short by an ellipsis ("...", "…") is never judged as if whole
    ("Ran grep -rn x /srv/app/frontend/comp... then stopped.", ["-rn"]),
    ("Ran grep -rn x /srv/app/frontend/comp\u2026 then stopped.", ["-rn"]),
    # an ellipsis after a space is not a cut: the whole path stays a claim
    ("Read /srv/app/frontend/nav.tsx ... and more.", ["/srv/app/frontend/nav.tsx"]),
])
def test_claims_skip_wrapper_tags_and_cut_tokens(summary: str, kept: list[str]) -> None:
    assert [d.text for d in claims(summary) if d.kind.value == "identifier"] == kept
