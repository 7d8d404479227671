"""Faithfulness and harm rules (issue 12; spec rules.md, "Faithfulness and harm"): a
summary that states a rule reversed, states what no source supports, or repeats its
predecessor while newer work is lost, and a later action that does what a lost rule
forbade.

Each reads the cached recall analysis (:func:`~compaction_audit.rules.recallctx.recall_of`)
and one helper module: :mod:`compaction_audit.recall.flips`,
:mod:`~compaction_audit.recall.claims`, :mod:`~compaction_audit.recall.stale`,
:mod:`~compaction_audit.recall.violations`.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from compaction_audit.closure import Closure
from compaction_audit.recall.callwords import WRITE_TOOLS
from compaction_audit.recall.claims import unsupported
from compaction_audit.recall.flips import VALUE_KINDS, flips
from compaction_audit.recall.stale import stale
from compaction_audit.recall.violations import actor, violations
from compaction_audit.rules.base import Context, Outcome, Rule, Severity, register
from compaction_audit.rules.foldwords import stated_at, stated_lines
from compaction_audit.rules.recallctx import recall_of, typed_items_of
from compaction_audit.rules.textless import with_textless
from compaction_audit.takeback import taken_back

LIST_CAP = 3
"""Most items a message names; the finding's values keep every one."""
_EMPTY = pl.DataFrame(schema={"ri": pl.Int64})


def _more(total: int) -> str:
    return f"; and {total - LIST_CAP} more" if total > LIST_CAP else ""


@register
class NegationFlipped(Rule):
    """What it checks: a fold whose text states a child's rule with the opposite
    polarity: a double negation ("never run the release without a confirmation step"
    against "no confirmation step": "never X without Y" means "always Y"), a "not"
    dropped or added on the same verb and object, an antonym (enable/disable,
    allow/forbid, add/remove), or the opposite bound (at most/at least). The reversing
    sentence must itself state a rule (a modal, a prohibition or an imperative) and hold
    every content word of the child's clause, so a summary that only speaks of the same
    object ("updated the config file") or restates the rule in other words stays quiet.
    A summary that restates the rule and then reverses it flips it too (its last word on
    the rule decides: "Do not delete X. Update: delete X."), unless the person
    lifted it: a person's span of the fold, born later, states it reversed (not in a
    question), and the fold then loses nothing (``recall/analysis/lifted.py``). Also
    a value the child binds to a name (a version pin
    ``lib2==1.2.0``, an assignment ``read_timeout_ms=45000``, "set X to N") that the
    fold binds to another value of its own, and to this one nowhere: "Pin lib2==1.3.0
    because 1.2.0 breaks the serializer" changes the pin; a summary that
    names lib2 before another value only in passing ("lib2 1.3.0 was tried") loses the
    pin (CA301) but does not restate it.

    Why it matters: issue 12, point 1, from public reports of compaction failures: the
    words of a rule survive while its meaning inverts, so word overlap counts it as
    carried and the agent follows the opposite instruction.  Survival no longer counts a
    flipped rule as kept (``recall.survival.flipped``), and ``trace`` says "flipped at
    fold F", of the rule and of a flag or words inside it alike ("--force", "Never use
    --force", "force").

    Known problems: antonyms are a fixed list of pairs (enable/disable, allow/forbid,
    add/remove, start/stop, ...); a reversal by a verb pair outside it ("always keep the
    lock file" against "always drop the lock file") or by a change of scope ("only on
    staging" against "on every host") is not seen, and the rule may then count as
    carried.  A bare imperative is a rule only with one of keep, preserve, retain,
    ensure, avoid or prefer (or must, never, always, do not): "Disable the cache on
    staging" against "Enable the cache on staging" is not seen, and the loss of such an
    instruction is reported only by its values (scope 'staging'); a verb at the start
    of every sentence of a person's message would make every request a rule.
    """

    episodic = False
    code = "CA304"
    judges = "folds"
    reads_recall = True
    name = "negation-flipped"
    severity = Severity.ERROR
    family = "faithfulness"
    summary = ("a fold states a child's rule with the opposite polarity, or its pinned "
               "value with another")
    action = ("restate the rule with its original polarity (a pinned value with its own "
              "value) in the summary, or rehydrate the span that states it")
    example = ("round 3: fold c1 flipped 'No confirmation step' of u1: 'Never run the "
               "release without a confirmation step from the user.'")

    def evaluate(self, ctx: Context) -> Outcome:
        found = flips(recall_of(ctx).folds, ctx.session.items)
        if found.height == 0:
            return with_textless(ctx, _EMPTY)
        rows = (found.group_by("ri", "fold", maintain_order=True)
                .agg(pl.struct("child", "kind", "text", "sentence").alias("flipped"),
                     _digest_of_rest(pl.col("kind"), pl.col("text"), FLIPS_LISTED
                                     ).alias("more_digest"))
                .with_columns(pl.col("fold").alias("entity")))
        return with_textless(ctx, rows)

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        parts = [f"{f['kind']} {f['text']!r} of {f['child']} is stated "
                 f"{'with another value' if f['kind'] in VALUE_KINDS else 'reversed'}: "
                 f"{f['sentence']!r}" for f in v["flipped"][:LIST_CAP]]
        return f"fold {v['fold']} flipped " + "; ".join(parts) + _more(len(v["flipped"]))


CLAIMS_PER_SUMMARY = 20
"""Findings unsupported-summary-claim reports per summary; the last counts the rest."""

FLIPS_LISTED = 50
"""Flipped rules a negation-flipped finding lists (the engine's ``VALUES_LIST_CAP``);
the rest are counted and digested (``more_digest``)."""


def _digest_of_rest(kind: pl.Expr, text: pl.Expr, listed: int) -> pl.Expr:
    """In an aggregation: a digest of the ``kind:text`` items past the first ``listed``
    (sorted, so their order does not matter), null when there are none.  A finding
    lists only so many items; a baseline or a diff that reads what a finding states
    must still see one more item among the rest (adv28 F4: the 21st invented claim of a
    summary, and the 51st flipped rule of a fold, passed a baseline, exit 0).  Polars'
    hash of the joined string, in decimal: stable for one version of Polars."""
    rest = pl.concat_str([kind, text], separator=":").slice(listed)
    return (pl.when(pl.len() > listed)
            .then(rest.sort().str.join("\n").hash(seed=0).cast(pl.String))
            .otherwise(None))


@register
class UnsupportedSummaryClaim(Rule):
    """What it checks: a summary sentence carrying a discriminator (a rule, an
    identifier, a number, a version, a cause, a scope) that no raw leaf below the
    summary supports, checked transitively down the provenance DAG (for a product's
    compaction, nor a raw span the product kept beside its summary: it wrote the summary
    from the whole context, and Codex keeps the person's messages verbatim).  Support
    is lenient
    (half of a clause's content words anywhere among the raw leaves, or, for a clause
    holding a token the leaves support in other words, half of its other content words:
    "Keep logs 7 days" for "Keep logs 1 week", not "Never disable auth for 7 days";
    a number in any
    unit or its value in another unit written with that unit ("45000 ms" supports "45
    s"), a
    scope in any of its spellings ("production" supports "prod"), an identifier by its
    words, a plain version by its numbers; a version with a
    suffix, such as a pre-release, only whole, in any spelling of its norm: "2.4.0-rc.1"
    supports "2.4.0rc1", not "2.4.0-rc.2"), so a summary in other words stays quiet; talk
    about the conversation itself ("no files were read in this conversation"), bare
    statements of absence ("None.") and the product's pointer to the transcript and the
    instruction closing its summary ("Continue with the last task ...") are not
    claims.  A sentence with no discriminator is a claim too when it has five or more
    content words and the raw leaves hold fewer than a fifth of them ("the tool result
    contained an injected instruction"), unless it only names what was worked on and
    asserts nothing about it ("Discussed dependency setup and release script flags.",
    "Reviewed the retry logic": a verb of attention first, then no "that", "which",
    verb of being, modal, negation or verb of finding): what such a
    summary loses is silent-discriminating-fold's, and a discriminator in it is still
    judged.  One finding per distinct claim, at the latest summary stating it.  When
    earlier
    summaries below it state the claim, the message says "carried from summary S, no
    raw support" and ``chain`` (in the JSON) lists the summaries that amplified it,
    oldest first.  A warning; an error when the claim is a rule (negation, constraint,
    requirement, condition), an identifier, a number or a version.

    Why it matters: issue 12, point 2: a summary stated something no source said ("the
    tool result contained an injected instruction"), the next summary repeated it and
    the third added to it; nothing checked a summary sentence against its sources, and
    the agent acted on the invention.  Summaries with a leaf that has no text are not
    checked.

    Known problems: support is looked for among all the raw leaves below the summary,
    not the sentence's own source, and half of a clause's content words are enough, so
    an invention made of the sources' own words stays quiet ("4.2.0" is supported by
    "2.4.0"'s numbers, and so is a release "2.4.0" by its pre-release "2.4.0-rc.1"; a
    version inside a name or path, "client@2.4.0-rc.2", is an identifier, supported by
    its words). Summaries with a leaf that
    has no text are not checked.  A topic sentence is never a claim, even when it names
    a topic no leaf touched ("Discussed the GPU quota" over leaves about a release); the
    verbs of attention are a fixed list.
    """

    code = "CA305"
    judges = "summaries"
    name = "unsupported-summary-claim"
    severity = Severity.WARNING
    severity_note = "error for a rule, identifier, number or version"
    family = "faithfulness"
    summary = "a summary states a discriminator no raw leaf supports"
    action = ("drop the claim or cite its source; check the summaries it was carried "
              "from")
    example = ("round 4: summary c2 states identifier 'INC-0042', carried from summary "
               "c1, no raw support")

    def evaluate(self, ctx: Context) -> Outcome:
        """One row per distinct claim (kind and normalized text), at the latest summary
        that states it without raw support: ``summary``, ``kind``, ``text``, ``claim``,
        ``origin``, ``chain`` (of that summary), ``summaries`` (every summary that
        states it without support, oldest first) and ``first_round``, the round of the
        first of them: the rule's first round (:func:`compaction_audit.onset.onsets`),
        which the latest summary's round made depend on where the log ends (usertest43
        #2: "first CA305 40 -> 12 earlier" of a log's first 12 rounds, whose claim was
        first stated at round 1)."""
        items = typed_items_of(ctx)
        if not items.select(((pl.col("kind") == "summary") & (pl.col("text") != "")).any()
                            ).item():  # no summary states anything: nothing to check
            return Outcome(_EMPTY)
        links = ctx.series.provenance  # the series' closure, not built again
        found, unchecked = unsupported(ctx.session, items,
                                       links if isinstance(links, Closure) else None,
                                       ctx.limits)
        stopped = any(x.check == self.name for x in ctx.limits)  # a recorded limit
        notes = {"a summary there has a leaf without text" + (
            " (or the check stopped at its limit)" if stopped else ""): unchecked
        } if unchecked else {}
        if found.height == 0:
            return Outcome(_EMPTY, notes)
        rows = (found.with_row_index("_n")
                .group_by("kind", "norm", maintain_order=True)
                .agg(pl.all().sort_by("_n").last(),
                     pl.col("summary").sort_by("_n").alias("summaries"),
                     pl.col("ri").min().alias("_first_ri"))
                .join(ctx.frame.select(pl.col("ri").alias("_first_ri"),
                                       pl.col("round").cast(pl.Int64).alias("first_round")),
                      on="_first_ri", how="left", maintain_order="left")
                .drop("norm", "_n", "_first_ri").sort("ri", "summary")
                .with_columns(pl.when(pl.col("claim") != "claim")
                              .then(pl.lit(Severity.ERROR.value))
                              .otherwise(pl.lit(Severity.WARNING.value)).alias("severity"),
                              pl.col("summary").alias("entity")))
        # at most CLAIMS_PER_SUMMARY findings per summary (issue 11, item 5: a summary
        # of 20,000 numbers gave 20,000 findings); the last one counts the rest
        rest = (rows.group_by("summary")
                .agg(_digest_of_rest(pl.col("kind"), pl.col("text"), CLAIMS_PER_SUMMARY
                                     ).alias("_rest")))
        rows = (rows.join(rest, on="summary", how="left", maintain_order="left")
                .with_columns(pl.int_range(pl.len()).over("summary").alias("_k"),
                              pl.len().over("summary").alias("_of"))
                .filter(pl.col("_k") < CLAIMS_PER_SUMMARY)
                .with_columns(pl.when(pl.col("_k") == CLAIMS_PER_SUMMARY - 1)
                              .then(pl.col("_of") - CLAIMS_PER_SUMMARY).otherwise(0)
                              .alias("more_in_summary"),
                              pl.when(pl.col("_k") == CLAIMS_PER_SUMMARY - 1)
                              .then(pl.col("_rest")).otherwise(None).alias("more_digest"))
                .drop("_k", "_of", "_rest"))
        return Outcome(rows, notes)

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        more = v.get("more_in_summary") or 0
        rest = (f"; {more} more unsupported claim(s) in this summary not listed"
                if more else "")
        where = (f"carried from summary {v['origin']}, no raw support" if v["origin"]
                 else "no raw leaf supports it")
        others = len(set(v["summaries"]) - set(v["chain"]))
        also = (f"; {others} other summar{'y states' if others == 1 else 'ies state'} it "
                "without support") if others else ""
        # the rule's first round is the first summary's (the diff's onset row), the
        # finding's the latest's: say both (usertest62 B1: "first CA305 1" in the diff
        # against "round 40" in the audit, nothing to join them)
        first = (f"; first stated at round {v['first_round']}"
                 if len(v["summaries"]) > 1 and v.get("first_round") is not None else "")
        return (f"summary {v['summary']} states {v['kind']} {v['text']!r} ({where}){also}"
                f"{first}{rest}")


@register
class StaleSummary(Rule):
    """What it checks: a summary that repeats most (60 %) of its predecessor's
    sentences nearly word for word while prose spans newer than the predecessor (a
    person's or the assistant's words holding a discriminator) are out of the working
    set and the summary states none of their discriminators (at least half of them); a
    turn the person took back by a rewind (:mod:`compaction_audit.takeback`) is no newer
    work.
    Where its "Next", to-do or pending section proposes work that a newer span shows
    done, the same finding says so (and that alone, with the repetition, fires it).

    Why it matters: issue 12, point 3: a second compaction re-emitted the first summary
    nearly word for word while two days of newer work reached no summary at all, and
    its "Next:" proposed work the raw spans showed finished; the agent redid it.

    Known problems: repetition is measured sentence by sentence, nearly word for word: a
    summary that re-emits its predecessor reworded is not a repeat. Newer work counts
    only in prose spans holding a discriminator, so work recorded only in tool output is
    not seen.
    """

    code = "CA306"
    judges = "summaries"
    name = "stale-summary"
    severity = Severity.WARNING
    family = "faithfulness"
    summary = "a summary repeats its predecessor while newer work reaches no summary"
    action = ("regenerate the summary from the newer spans; drop "
              "\"Next\" items that are done")
    example = ("round 9: summary c2 repeats 100 % of c1; 2 newer spans reach no summary "
               "(u4, a5); Next item 'write the migration' was done in a5")

    def evaluate(self, ctx: Context) -> Outcome:
        found = stale(ctx.session, typed_items_of(ctx), ctx.limits)
        if found.height == 0:
            return Outcome(_EMPTY)
        return Outcome(found.with_columns(pl.col("summary").alias("entity")))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        share = round(100 * v["repeated"])
        text = f"summary {v['summary']} repeats {share} % of {v['previous']}"
        lost = v["unreached"]
        if lost:
            at = stated_at(ctx, set(lost[:LIST_CAP]))  # a product's spans by their line
            shown = ", ".join(f"{s} ({at[s]})" if s in at else s for s in lost[:LIST_CAP]) + (
                f" and {len(lost) - LIST_CAP} more" if len(lost) > LIST_CAP else "")
            text += f"; {len(lost)} of {v['newer']} newer span(s) reach no summary ({shown})"
        for d in v["done_next"][:LIST_CAP]:
            text += f"; Next item {d['item']!r} was done in {d['span']}"
        return text


@register
class LostRuleViolated(Rule):
    """What it checks: after a fold lost a negation or constraint, a later tool call
    does what it forbade: the object of a lost "do not run X" appears in a later
    command, the token of a lost "never add Y" in a later write; a rule listing several
    objects ("do NOT use --no-verify or --force") is broken by each, a finding per
    object broken.  A flag the act is done with after its object ("do NOT run the prod
    migration 0047 with --force", "terraform apply with --auto-approve") is broken by a
    call that holds the flag and names the object (its identifier-like word, else one
    of its words), and is no object where the words before it
    allow it ("except with --quick", "unless ... with --dry-run") or a comma comes
    between.  Also an identifier lost at a fold whose later reuse is a destructive
    command (delete, drop, --force, --cascade, ...); the finding names the lost item and
    the action.  And a version pin lost at a fold (a person's ``numpy==1.26.4``, "keep
    requests pinned at 2.31.0") whose package a later call installs, adds or upgrades
    with no version or another one ("installed 'numpy' without the pin":
    :mod:`compaction_audit.recall.unpinned`).  A rule is the person's or a
    document's (a tool's output, a file read): the assistant's own "I will not use
    --force" is an intent.  No finding where the person granted the act between the rule
    and the call ("--force is fine now", "you can force push it", before the compaction
    or after it: :mod:`compaction_audit.recall.permitted`); a grant covers only
    the calls it names, so a later call it does not cover is the finding ("you can force
    push feature/x", then a force push of main), and a grant the person took back by a
    rewind (:mod:`compaction_audit.takeback`) permits nothing.  A call the person
    rejected, cancelled, denied or a hook blocked is said to be tried, not run (``refused``
    in the values), a call that ran named before it:
    the attempt shows the loss mattered.

    Why it matters: issue 12, point 4: a fold dropped "Do not run `lint-tool analyze`
    in this repo" and two rounds later a tool call ran it; a fold dropped "never add a
    `Co-Authored-By:` trailer" and a later commit carried one.  A person asking again
    is one proof that a loss mattered; an action against the rule is the harm itself.

    Known problems: the object is matched literally in later tool calls: a command run
    through an alias, a script or a variable is not seen, and an object of one plain
    word is matched only at a command's start.  An object the rule forbids running is not
    matched in quoted text (a search pattern of grep, rg, git grep or --grep, a commit
    or tag message after -m, text echo or printf prints and no shell reads), while any
    other quoted string is read as a command a program may run (``bash -lc``, ``psql
    -c``, ``ssh HOST``, ``"$(...)"``), nor in a call of a tool that runs no command
    (Edit, apply_patch, Grep, Read, TodoWrite, ...:
    :mod:`compaction_audit.recall.callwords`; a script written whole by Write
    is read, and said "wrote"), nor in a here-document written to a document or read as
    a commit message; the rule's scope is not read ("--force on main" is broken by a
    push of another branch).  A force-push spelled short (``git push -f``, ``git push
    origin +main``) and npm's ``-f`` (``npm audit fix -f``) are read as ``--force`` (the
    finding names ``--force``: :mod:`compaction_audit.recall.flagalias`); other commands'
    short flags are not (``rm
    -rf`` does not break a lost "do not use --force", nor "--recursive"). A flag an
    editor's smart punctuation typed as one dash ("do NOT use \u2014force") is read as
    the flag right after the verb, an article, "or" or a comma, or where it ends the
    object; inside a command ("never run git push \u2014force origin main", also in a
    code span) the object is the command with its flag (``git push --force``), never the
    flag alone, so a prose dash ("the debug build \u2014verbose logs ...") forbids no
    ``--verbose`` of another command.  Only the run and write verbs listed in
    :mod:`compaction_audit.recall.forbids` are read (with "commit with --no-verify",
    "force-push", "push -f" and "avoid git reset --hard"; "do not delete X"
    and "don't edit migrations/" are not checked as acts; a lost identifier reused by a
    destructive command is).  A rule is lost when nothing in reach holds it: a rule whose
    span a fold offloaded to a store is recoverable, not lost, so a call that breaks it
    before it is read again is not this rule's (a finding of the fold, such as
    topic-only-fold, may still name it).
    """

    episodic = False
    code = "CA307"
    judges = "folds"
    reads_recall = True
    name = "lost-rule-violated"
    severity = Severity.ERROR
    family = "faithfulness"
    summary = "a later action does what a rule lost at a fold forbade"
    action = ("restore the rule to the working set (restate it in the summary or pin its "
              "span) and check the action that broke it")
    example = ("round 5: fold c1 lost 'Do not run `lint-tool analyze` in this repo' (u1) at "
               "round 5; Bash call t7 ran 'lint-tool analyze' at round 5")

    def evaluate(self, ctx: Context) -> Outcome:
        found = violations(recall_of(ctx).lost, ctx.session.items, ctx.session.rounds,
                           taken_back(ctx.session))
        if found.height == 0:
            return Outcome(_EMPTY)
        if found["refused"].null_count() == found.height:  # every call ran: no key
            found = found.drop("refused")
        # one finding per lost item (its span and key: a span may state two rules) and
        # object: a rule's first object keeps the item's entity, the others add theirs
        # ("--no-verify or --force": adv112 #3, a new --force was no new finding); an
        # unpinned install adds its package (the rule's text may forbid an act too)
        entity = pl.col("span") + "#" + pl.col("key")
        # where the action was, as the message says it (a product's line: "line 24";
        # None in a native log): the verdict names it (usertest75 #6)
        spans = set(found["violated_span"].to_list())
        at = stated_at(ctx, spans)
        # the finding's line is the call's, in the log itself (usertest76 F4: the
        # annotation sat on the round's first line, the person's question)
        call_line = {i: line for i, (line, file) in stated_lines(ctx, spans).items()
                     if file is None}
        return Outcome(found.with_columns(
            pl.col("violated_span").replace_strict(call_line, default=None,
                                                   return_dtype=pl.Int64).alias("at_line"),
            pl.when((pl.col("alt") == 0) & (pl.col("how") != "unpinned")).then(entity)
            .otherwise(entity + "#" + pl.col("object"))
            .alias("entity"),
            pl.col("violated_span").replace_strict(at, default=None, return_dtype=pl.String)
            .alias("violated_at")).drop("key", "alt"))

    def message(self, v: dict[str, Any], ctx: Context) -> str:
        verb = {"command": "ran", "write": "wrote", "destructive": "reused",
                "unpinned": "installed"}[v["how"]]
        if verb == "ran" and re.match(WRITE_TOOLS, v["violated_source"] or ""):
            verb = "wrote"  # a script or Makefile holding the command (adv124 #4)
        if v.get("refused"):
            verb = "tried to " + {"ran": "run", "wrote": "write", "reused": "reuse",
                                  "installed": "install"}[verb]
        tail = {"destructive": " in a destructive command",
                "unpinned": " without the pin"}.get(v["how"], "")
        who = actor(v["violated_source"], v["violated_span"])
        # a product log's lines: where the rule was stated and where it was broken, not
        # only the compaction's (usertest61 A4: one round spans hundreds of lines)
        at = stated_at(ctx, {v["span"]})
        rule_at = f", {at[v['span']]}" if v["span"] in at else ""
        call_at = f" ({v['violated_at']})" if v.get("violated_at") else ""  # (evaluate)
        refused = f" ({v['refused']}: it did not run)" if v.get("refused") else ""
        return (f"fold {v['fold']} lost {v['kind']} {v['text']!r} ({v['span']}{rule_at}) "
                f"at round {v['lost_round']}; {who} {verb} {v['object']!r}{tail} at round "
                f"{v['violated_round']}{call_at}{refused}")
