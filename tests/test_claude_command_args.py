"""The arguments a person types after a Claude Code slash command, and the words typed
after the product's notices in one block, are the person's words (adv116 B2, B3:
"/deploy staging. Do NOT use --force when pushing." was read as the harness's wrapper,
never judged, and the push that broke the rule passed the gate)."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.harness import command_args
from tests.test_adapters_claude_code import reply, run, sources, spans, user_line
from tests.test_claude_logical_parent import _tool_call

WRAPPER = ("<command-message>deploy is running…</command-message>\n"
           "<command-name>/deploy</command-name>\n<command-args>{}</command-args>")


def test_the_arguments_are_read_out_of_the_wrapper() -> None:
    assert command_args(WRAPPER.format(" staging. Do NOT use --force. ")) == [
        "staging. Do NOT use --force."]
    assert command_args(WRAPPER.format("")) == []  # no arguments: nothing typed
    assert command_args("<command-name>/model</command-name>") == []
    # what to keep, said to /compact, is the compaction's instruction, and only its own
    # arguments are (adv118 Q5: a /compact beside a /deploy hid the /deploy's)
    compact = ("<command-name>/compact</command-name>\n"
               "<command-args>keep the deploy notes</command-args>")
    assert command_args(compact) == []
    assert command_args(compact + WRAPPER.format("Do NOT use --force.")) == [
        "Do NOT use --force."]
    # every command of a message (adv117 P5: the second was not read)
    two = ("<command-name>/model</command-name><command-args>opus</command-args>\n"
           + WRAPPER.format("staging. Do NOT use\n--force."))
    assert command_args(two) == ["opus", "staging. Do NOT use\n--force."]
    # an unclosed tag ends the reading; many of them are read once (no scan per tag)
    assert command_args("<command-args>" * 50_000 + "x y z") == []
    assert command_args(WRAPPER.format("a b c") + "<command-args>d e f") == ["a b c"]


def test_only_arguments_that_state_a_rule_are_the_persons(tmp_path: Path) -> None:
    """A setting states nothing (adv117 P4, adv118 Q6: /model claude-opus-4, a list of
    paths or a URL became the person's first prompt, the question relevance is
    measured against)."""
    settings = [
        "<command-name>/model</command-name>\n<command-args>claude-opus-4</command-args>",
        "<command-name>/add-dir</command-name>\n<command-args>src/api src/web src/worker"
        "</command-args>",
        WRAPPER.format("https://github.com/acme/widgets/pull/42 for review")]
    out = run(tmp_path, [user_line(f"c{i}", text) for i, text in enumerate(settings)]
              + [user_line("u1", "Set up the deploy.")])
    assert [line for line, _ in out[1:]] == [4]  # the prompt opens the only round
    assert sources(out) == {"c0": "harness:command", "c1": "harness:command",
                            "c2": "harness:command", "u1": "user"}


def test_typed_arguments_are_a_span_of_the_person_and_open_a_round(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("u1", "Set up the deploy."),
        reply("a1", "Ready."),
        user_line("c1", WRAPPER.format("staging. Do NOT use --force when pushing.")),
        user_line("c2", "<command-name>/model</command-name>\n<command-args></command-args>"),
    ])
    assert [line for line, _ in out[1:]] == [1, 3]  # the command with arguments only
    assert sources(out) == {"u1": "user", "a1": "assistant", "c1": "user",
                            "c1#2": "harness:command", "c2": "harness:command"}
    assert spans(out)["c1"]["text"] == "staging. Do NOT use --force when pushing."


def test_a_rule_typed_as_arguments_and_broken_after_the_compaction_fails_the_gate(
        tmp_path: Path) -> None:
    from tests.test_adapters_claude_code import boundary, summary_line

    lines = [user_line("u1", "Set up the deploy."), reply("a1", "Ready."),
             user_line("c1", WRAPPER.format("staging. Do NOT use --force when pushing.")),
             reply("a2", "Deploying to staging."),
             boundary("b1", "a2"), summary_line("s1", "Summary: deployed to staging."),
             user_line("u2", "Push it now."), _tool_call("a3", "git push --force origin main")]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    result = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert result.exit_code == 1, result.output
    assert "CA307" in CliRunner().invoke(app, ["audit", str(path)]).stdout


def test_words_typed_after_the_products_notices_are_the_persons() -> None:
    """adv116 B3: a block opening with a reminder or an interrupt marker was the
    harness's whole, the rule after it never judged."""
    from compaction_audit.io.harness import typed_after_notice

    assert typed_after_notice("<system-reminder>Todo list empty</system-reminder>\n"
                              "Do NOT use --force.") == "Do NOT use --force."
    assert typed_after_notice("[Request interrupted by user]\nDo it") == "Do it"
    assert typed_after_notice("<system-reminder>a</system-reminder><system-reminder>b"
                              "</system-reminder>  go on") == "go on"
    # notices alone, an unclosed one, or another wrapper after them: nothing typed
    assert typed_after_notice("[Request interrupted by user for tool use]") == ""
    assert typed_after_notice("<system-reminder>a") == ""
    assert typed_after_notice("<task-notification>x</task-notification>\n"
                              "<system-reminder>y</system-reminder>") == ""
    assert typed_after_notice("Do NOT use --force.") == ""  # no notice opens it
    # a task notification's block ends with the product's own words (as in the corpus)
    assert typed_after_notice("<task-notification>\n<status>completed</status>\n"
                              "</task-notification>\nRead the output file to retrieve "
                              "the result: /tmp/t.output") == ""


def test_a_block_of_a_notice_and_the_persons_words_is_split(tmp_path: Path) -> None:
    out = run(tmp_path, [
        user_line("u1", "Set up the deploy."),
        reply("a1", "Ready."),
        user_line("n1", [{"type": "text", "text": "<system-reminder>Plan mode is off"
                          "</system-reminder>\nDo NOT use --force when pushing."}]),
        user_line("n2", "<system-reminder>Todo list empty</system-reminder>"),
        user_line("n3", "<system-reminder>x</system-reminder>\nkept", isMeta=True),
    ])
    assert [line for line, _ in out[1:]] == [1, 3]
    assert sources(out) == {"u1": "user", "a1": "assistant", "n1": "user",
                            "n1#2": "harness:meta", "n2": "harness:meta",
                            "n3": "harness:meta"}  # a line the product marked stays its
    assert spans(out)["n1"]["text"] == "Do NOT use --force when pushing."
