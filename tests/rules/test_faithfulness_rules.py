"""Faithfulness and harm rules (issue 12): each fires on a small log built from the
issue's descriptions and stays quiet on its faithful counterpart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.rules.base import Finding
from compaction_audit.trace import trace
from tests.logs import SAMPLES, LogWriter, rnd

FAITH = ("CA304", "CA305", "CA306", "CA307")


def span(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def fold(i: str, children: list[str], text: str) -> dict[str, Any]:
    return {"id": i, "tokens": 10, "children": children, "text": text}


def findings(path: Path, code: str) -> list[Finding]:
    return [f for f in audit_session(read_native(str(path))).findings if f.code == code]


def one_fold(write_log: LogWriter, raws: list[dict[str, Any]], text: str) -> Path:
    ids = [r["id"] for r in raws]
    return write_log([rnd(0, spans=raws),
                      rnd(1, summaries=[fold("c1", ids, text)], evicted=ids)])


# ------------------------------------------------------------------------ CA304
def test_negation_flipped_fires_on_a_double_negation(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("u1", "Release right away. No confirmation step.")],
                    "Never run the release without a confirmation step from the user.")
    [f] = findings(path, "CA304")
    assert (f.rule, f.round, f.entity, f.severity.value) == ("negation-flipped", 1, "c1",
                                                             "error")
    assert f.values["flipped"] == [{
        "child": "u1", "kind": "negation", "text": "No confirmation step",
        "sentence": "Never run the release without a confirmation step from the user."}]
    assert "flipped negation 'No confirmation step' of u1" in f.message


def test_negation_flipped_fires_on_an_antonym_and_a_dropped_not(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("u1", "Must enable --force on staging only."),
                                span("u2", "Do not run `lint-tool analyze` in this repo.")],
                    "Must disable --force on staging only. Run `lint-tool analyze` in "
                    "this repo before each commit.")
    [f] = findings(path, "CA304")
    assert sorted((x["child"], x["kind"]) for x in f.values["flipped"]) == [
        ("u1", "constraint"), ("u2", "negation")]


def test_negation_flipped_fires_on_a_forbidden_order_stated_as_one(
        write_log: LogWriter) -> None:
    # usertest36: "never ... after" was an ordering without its "never": no flip, and
    # the lost list printed the forbidden order as an instruction
    path = one_fold(write_log, [span("u1", "Never deploy after 17:00 on Fridays.")],
                    "Deploy after 17:00 on Fridays.")
    [f] = findings(path, "CA304")
    assert f.values["flipped"] == [{
        "child": "u1", "kind": "negation", "text": "Never deploy after 17:00 on Fridays",
        "sentence": "Deploy after 17:00 on Fridays."}]
    kept = one_fold(write_log, [span("u1", "Never deploy after 17:00 on Fridays.")],
                    "Standing rule: never deploy after 17:00 on Fridays.")
    assert findings(kept, "CA304") == []


def test_negation_flipped_reads_each_fold_s_text_once(write_log: LogWriter,
                                                     monkeypatch: Any) -> None:
    # adv60: the fold's text was joined to every dropped clause and copied per row, so a
    # 2.5 MB summary over 20,000 clauses was compared whole in the survival caches per
    # clause (15 s and 300 MB of a 25 s audit); one string object per fold now
    import compaction_audit.recall.flips as flips_mod

    seen: list[int] = []
    real = flips_mod.flip_sentence

    def spy(d: Any, text: str) -> str | None:
        seen.append(id(text))
        return real(d, text)

    monkeypatch.setattr(flips_mod, "flip_sentence", spy)
    path = one_fold(write_log, [span("u1", "Must enable --force on staging only."),
                                span("u2", "Do not run `lint-tool analyze` in this repo."),
                                span("u3", "Never deploy on Fridays.")],
                    "Must disable --force on staging only. Run `lint-tool analyze` in "
                    "this repo before each commit.")
    assert len(findings(path, "CA304")) == 1
    assert len(seen) == 3 and len(set(seen)) == 1


def test_negation_flipped_is_quiet_on_a_faithful_restatement(write_log: LogWriter) -> None:
    path = one_fold(write_log, [
        span("u1", "Release right away. No confirmation step."),
        span("u2", "Never deploy without approval."),
        span("u3", "Do not touch the config file.")],
        "Release right away, with no confirmation step. Always get approval before you "
        "deploy. Updated the config file.")  # narrative about the same object: no rule
    assert findings(path, "CA304") == []


def test_trace_says_flipped_at_fold(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("u1", "Release right away. No confirmation step.")],
                    "Never run the release without a confirmation step from the user.")
    node = trace(read_native(str(path)), "confirmation")
    folds = [c for intro in node.children for c in intro.children if "fold" in c.data]
    assert [c.label for c in folds] == [
        "flipped at fold c1 (depth 1, round 1, line 2): 'Never run the release without a "
        "confirmation step from the user.'"]
    assert folds[0].data["result"] == "flipped"


# ------------------------------------------------------------------------ CA305
def _chain(write_log: LogWriter, third: str) -> Path:
    return write_log([
        rnd(0, spans=[span("t1", "Fetched the page; it returned the order list.",
                           "assistant")]),
        rnd(1, summaries=[fold("c1", ["t1"], "The tool result held an injected instruction "
                                             "from ticket INC-0042.")], evicted=["t1"]),
        rnd(2, spans=[span("a1", "Listed the orders again.", "assistant")],
            summaries=[fold("c2", ["c1", "a1"], "Ticket INC-0042 injected an instruction; "
                                                 "orders listed.")], evicted=["c1", "a1"]),
        rnd(3, summaries=[fold("c3", ["c2"], third)], evicted=["c2"]),
    ])


def test_unsupported_claim_carried_from_an_earlier_summary(write_log: LogWriter) -> None:
    path = _chain(write_log, "Ticket INC-0042 injected instructions into every result.")
    [f] = findings(path, "CA305")
    assert (f.round, f.entity, f.severity.value) == (3, "c3", "error")
    assert f.values["kind"] == "identifier" and f.values["text"] == "INC-0042"
    assert f.values["origin"] == "c1"
    assert f.values["chain"] == ["c1", "c2", "c3"]
    assert f.values["summaries"] == ["c1", "c2", "c3"]
    # the claim was first stated at round 1 (c1): the rule's first round, wherever the log
    # ends (usertest43 #2: the finding's own round is the latest summary's), and the
    # message says so (usertest62 B1: the diff's "first CA305 1" beside "round 3")
    assert f.message == ("summary c3 states identifier 'INC-0042' (carried from summary c1, "
                         "no raw support); first stated at round 1")
    assert f.values["first_round"] == 1


def test_a_claim_s_first_round_is_where_it_was_first_stated(write_log: LogWriter) -> None:
    from compaction_audit import api

    path = _chain(write_log, "Ticket INC-0042 injected instructions into every result.")
    report = api.audit(str(path))
    assert report.onsets["first_round"]["unsupported-summary-claim"] == 1
    # stated by the last summary alone: its own round
    alone = _chain(write_log, "Ticket INC-0042 injected instructions into every result; "
                              "ticket OPS-7 was closed.")
    [late] = [f for f in findings(alone, "CA305") if f.values["text"] == "OPS-7"]
    assert (late.round, late.values["first_round"]) == (3, 3)
    assert late.message == ("summary c3 states identifier 'OPS-7' (no raw leaf supports it)")


def test_unsupported_sentence_is_a_claim_warning(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("t1", "Fetched the page; it returned the order list.",
                                     "assistant")],
                    "The tool result contained an injected instruction. Fetched the order "
                    "list.")
    [f] = findings(path, "CA305")
    assert (f.values["kind"], f.values["text"], f.severity.value) == (
        "claim", "The tool result contained an injected instruction.", "warning")


def test_unsupported_scope_is_a_warning(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("a1", "Raised the pool size to 12.", "assistant")],
                    "Raised the pool size to 12 on staging.")
    [f] = findings(path, "CA305")
    assert (f.values["kind"], f.severity.value, f.values["origin"]) == ("scope", "warning",
                                                                        None)


def _beside(write_log: LogWriter, request_kept: bool, product: bool = True) -> Path:
    """u1 (the request) is in the working set beside the fold of round 2, which
    restates it over a tool span alone, or evicted at round 1; ``product``: round 2
    carries a ``compaction`` record, as an adapter writes for a product's compaction."""
    request = span("u1", "Pin lib2==1.2.0 in requirements.txt.")
    tool = span("t1", "Edited the file.", "assistant")
    record = {"compaction": {"kind": "compact", "summary_id": "c1"}} if product else {}
    return write_log([rnd(0, spans=[request]),
                      rnd(1, spans=[tool], **({} if request_kept else {"evicted": ["u1"]})),
                      rnd(2, summaries=[fold("c1", ["t1"], "The user asked to pin "
                                                             "lib2==1.2.0. The edit is done.")],
                          evicted=["t1"], **record)])


def test_unsupported_claim_is_quiet_on_a_span_a_product_kept_beside_its_summary(
        write_log: LogWriter) -> None:
    # adv84 #1: a Codex compaction keeps the person's message verbatim beside its
    # summary, which restates it; support was looked for among the folded leaves alone
    assert findings(_beside(write_log, request_kept=True), "CA305") == []
    expected = [(2, "identifier", "lib2"), (2, "version", "lib2==1.2.0")]
    # the request evicted a round before the fold: nothing beside it says so
    gone = findings(_beside(write_log, request_kept=False), "CA305")
    assert sorted((f.round, f.values["kind"], f.values["text"]) for f in gone) == expected
    # a native fold names its own sources (the spec: "no child supports")
    native = findings(_beside(write_log, request_kept=True, product=False), "CA305")
    assert sorted((f.round, f.values["kind"], f.values["text"]) for f in native) == expected


def test_unsupported_claim_is_quiet_on_a_summary_in_other_words(write_log: LogWriter) -> None:
    path = one_fold(write_log, [
        span("t1", "read_timeout_ms=45000 on staging", "tool_result:Bash"),
        span("u1", "Never push to main without a review.")],
        "The read timeout is now 45,000 ms on staging. Do not push to main without "
        "review.")
    assert findings(path, "CA305") == []


def test_unsupported_claim_skips_talk_about_the_conversation(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("u1", "hello")],
                    "No files were read in this conversation. None.")
    assert findings(path, "CA305") == []


# ------------------------------------------------------------------------ CA306
_FIRST = ("The user wants the orders release shipped. DNS and TLS were ruled out. "
          "The proxy config was checked against staging.\nNext: write the migration for "
          "the orders table.")


def _stale(write_log: LogWriter, second: str) -> Path:
    return write_log([
        rnd(0, spans=[span("u1", "Ship the orders release; the proxy config on staging "
                                 "is next. We ruled out DNS and TLS.")]),
        rnd(1, summaries=[fold("c1", ["u1"], _FIRST)], evicted=["u1"]),
        rnd(2, spans=[span("a3", "Wrote the migration for the orders table; it is done and "
                                 "the tests passed.", "assistant"),
                      span("u4", "Set the cache TTL of the orders service to 900 s.")]),
        rnd(3, summaries=[fold("c2", ["c1", "a3", "u4"], second)],
            evicted=["c1", "a3", "u4"]),
    ])


def test_stale_summary_fires_with_the_done_next_item(write_log: LogWriter) -> None:
    [f] = findings(_stale(write_log, _FIRST), "CA306")
    assert (f.round, f.entity, f.severity.value) == (3, "c2", "warning")
    assert f.values["previous"] == "c1" and f.values["repeated"] == 1.0
    assert f.values["unreached"] == ["u4"] and f.values["newer"] == 1
    assert f.values["done_next"] == [{"item": "write the migration for the orders table",
                                      "span": "a3"}]


def test_stale_summary_is_quiet_when_the_new_work_is_summarized(write_log: LogWriter) -> None:
    current = (_FIRST.split("\nNext")[0] + " The migration for the orders table is "
               "written. The cache TTL of the orders service is 900 s.")
    assert findings(_stale(write_log, current), "CA306") == []


# ------------------------------------------------------------------------ CA307
def _harm(write_log: LogWriter, summary: str, later: list[dict[str, Any]]) -> Path:
    return write_log([
        rnd(0, spans=[span("u2", "Do not run `lint-tool analyze` in this repo."),
                      span("u3", "Never add a `Co-Authored-By:` trailer to commit messages."),
                      span("a2", "Test order ORD-5501 verified; keep it for the refund "
                                 "check.", "assistant")]),
        rnd(1, summaries=[fold("c1", ["u2", "u3", "a2"], summary)],
            evicted=["u2", "u3", "a2"]),
        rnd(2, spans=later),
    ])


_LATER = [span("t1", "lint-tool analyze --all src/", "tool_call:Bash"),
          span("t2", 'git commit -m "Add it\n\nCo-Authored-By: Agent <a@example.com>"',
               "tool_call:Bash"),
          span("t3", "orders delete ORD-5501 --cascade", "tool_call:Bash")]


def test_lost_rule_violated_by_a_command_a_write_and_a_destructive_reuse(
        write_log: LogWriter) -> None:
    found = findings(_harm(write_log, "Working on the orders release.", _LATER), "CA307")
    got = sorted((f.round, f.values["how"], f.values["object"], f.values["violated_span"],
                  f.entity) for f in found)
    assert got == [
        (2, "command", "lint-tool analyze", "t1", "u2#negation:not run lint-tool analyze repo"),
        (2, "destructive", "ORD-5501", "t3", "a2#identifier:ord-5501"),
        (2, "write", "Co-Authored-By", "t2",
         "u3#negation:not add co-authored-by trailer commit messages")]
    assert all(f.severity.value == "error" for f in found)


def test_lost_rule_violated_names_the_span_that_acted_once(write_log: LogWriter) -> None:
    """usertest38 #10: the message put the source before the id, which a native source
    often repeats ("tool:t10 t10", role tool) or a role prefixes ("tool:tool_call:Bash
    t10")."""
    later = [span("t1", "lint-tool analyze --all src/", "tool_call:Bash"),
             {**span("t3", "orders delete ORD-5501 --cascade", "t3"), "role": "tool"}]
    found = findings(_harm(write_log, "Working on the orders release.", later), "CA307")
    assert sorted(f.message for f in found) == [
        "fold c1 lost identifier 'ORD-5501' (a2) at round 1; tool output t3 reused 'ORD-5501' "
        "in a destructive command at round 2",
        "fold c1 lost negation 'Do not run `lint-tool analyze` in this repo' (u2) at round 1; "
        "Bash call t1 ran 'lint-tool analyze' at round 2"]


def test_lost_rule_violated_is_quiet_when_the_summary_kept_the_rules(
        write_log: LogWriter) -> None:
    kept = ("Do not run `lint-tool analyze` in this repo. Never add a `Co-Authored-By:` "
            "trailer to commit messages. Test order ORD-5501 verified; keep it for the "
            "refund check.")
    assert findings(_harm(write_log, kept, _LATER), "CA307") == []


def test_lost_rule_violated_needs_the_object_in_an_action(write_log: LogWriter) -> None:
    later = [span("t1", "lint-tool --version", "tool_call:Bash"),
             span("a9", "Do NOT delete ORD-5501 yet.", "assistant")]  # a rule, no action
    assert findings(_harm(write_log, "Working on the orders release.", later),
                    "CA307") == []


# ---------------------------------------------------------------------- sample
def test_the_faithfulness_sample_shows_every_rule() -> None:
    report = audit_session(read_native(str(SAMPLES / "faithfulness.jsonl")))
    assert sorted({f.code for f in report.findings if f.code in FAITH}) == list(FAITH)


def test_asked_again_is_not_judged_without_a_person(write_log: LogWriter) -> None:
    path = one_fold(write_log, [span("a1", "Do not run `lint-tool analyze` here.",
                                     "assistant")], "Working.")
    report = audit_session(read_native(str(path)))
    assert report.extra["person_spans"] == 0
    out = CliRunner().invoke(app, ["audit", str(path)]).output
    assert "asked again: not judged, no span of this log is a person's" in out
    with_user = one_fold(write_log, [span("u1", "Do not run `lint-tool analyze` here.")],
                         "Working.")
    assert audit_session(read_native(str(with_user))).extra["person_spans"] == 1


def _cc(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message.update(id=f"m-{uuid}", type="message", model="claude-test",
                       usage={"input_tokens": 5, "output_tokens": 5})
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "s-1", "type": kind,
            "uuid": uuid, "message": message, **extra}


def test_lost_rule_violated_in_a_claude_code_log(write_log: LogWriter) -> None:
    """The issue's case as a product log: the compaction drops the rule a queued
    message stated, and a Bash call after it runs the forbidden command."""
    records = [
        _cc("u1", None, "user", "Set up the linter config."),
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1",
         "content": "Do not run `lint-tool analyze` in this repo."},
        _cc("a1", "u1", "assistant", [{"type": "text", "text": "Noted; writing the config."}],
            requestId="r1"),
        {"parentUuid": None, "logicalParentUuid": "a1", "isSidechain": False,
         "sessionId": "s-1", "type": "system", "subtype": "compact_boundary",
         "content": "Conversation compacted", "uuid": "b1",
         "compactMetadata": {"trigger": "auto", "preTokens": 90000}},
        _cc("s1", "b1", "user", "Summary: the linter config is being set up.",
            isCompactSummary=True),
        _cc("u2", "s1", "user", "Check the code now."),
        _cc("a2", "u2", "assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                       "input": {"command": "lint-tool analyze --all"}}],
            requestId="r2"),
    ]
    path = write_log(records, "cc.jsonl")
    report = json.loads(CliRunner().invoke(app, ["audit", str(path), "-f", "json"]).output)
    hits = [f for f in report["findings"] if f["code"] == "CA307"]
    assert [(f["values"]["how"], f["values"]["object"]) for f in hits] == [
        ("command", "lint-tool analyze")]
    assert hits[0]["values"]["violated_source"] == "tool_call:Bash"
    # where the rule was stated and where the call broke it, by line (usertest61 A4)
    assert hits[0]["message"].endswith(
        "lost negation 'Do not run `lint-tool analyze` in this repo' (line-2, line 2) at "
        "round 2; Bash call toolu_1 ran 'lint-tool analyze' at round 3 (line 7)")
    assert report["person_spans"] >= 3  # two turns and the queued message


def test_trace_follows_a_claim_with_no_raw_source(write_log: LogWriter) -> None:
    node = trace(read_native(str(_chain(write_log, "Ticket INC-0042 is open."))),
                 "INC-0042")
    assert [c.data["summary"] for c in node.children] == ["c1", "c2", "c3"]
    assert node.children[0].label == ("identifier 'INC-0042' stated by summary c1 (depth 1, "
                                      "round 1, line 2) with no raw span holding it")


def test_unsupported_claim_is_not_evaluated_over_a_leaf_without_text(
        write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=[{"id": "s0", "tokens": 5}]),
                      rnd(1, summaries=[fold("c1", ["s0"], "Pool size is 12 on staging.")],
                          evicted=["s0"])])
    report = audit_session(read_native(str(path)))
    assert [f for f in report.findings if f.code == "CA305"] == []
    notes = [(n.code, n.rounds) for n in report.not_evaluated if n.code == "CA305"]
    assert notes == [("CA305", 1)]


def test_unsupported_claims_are_capped_per_summary(write_log: LogWriter) -> None:
    """A summary of 25 numbers no leaf states: 20 findings, the 20th counting the
    other 5 (output proportional to what a person can act on)."""
    numbers = " ".join(str(1000 + i) for i in range(25))
    path = one_fold(write_log, [span("a", "The deploy timeout is 45000 ms.")],
                    f"The timeout is 45000 ms and the ports are {numbers}.")
    found = findings(path, "CA305")
    assert len(found) == 20
    assert [f.values.get("more_in_summary") for f in found].count(5) == 1
    assert sum(1 for f in found if "5 more unsupported claim(s)" in f.message) == 1


def test_negation_flipped_misses_a_verb_pair_outside_its_antonyms(write_log: LogWriter) -> None:
    """The known problem its documentation states: keep/drop is not an antonym pair it
    holds, so this reversal is not seen (a known false negative, kept as ruff keeps
    them in its fixtures)."""
    path = one_fold(write_log, [span("u1", "Always keep the lock file.")],
                    "Always drop the lock file.")
    assert findings(path, "CA304") == []
    from compaction_audit.ruledoc import find_rule
    assert '"always keep the lock file" against "always drop the lock file"' in (
        find_rule("CA304").known)
