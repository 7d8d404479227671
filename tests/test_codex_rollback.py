"""Codex ``thread_rolled_back`` (usertest68 #2): the last ``num_turns`` user turns
leave the context, each with what followed it, as codex-rs ``drop_last_n_user_turns``
cuts the history; the next compaction does not fold them, so a rule the user withdrew is
no lost fact of a person."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from tests.test_adapters_codex import Records, message, rollout, working_set_after


def rolled(n: Any) -> tuple[str, dict[str, Any]]:
    return "event_msg", {"type": "thread_rolled_back", "num_turns": n}


TURNS = [message("user", "Add an index on invoices.number."),
         message("assistant", "Added the index."),
         message("user", "Also drop the legacy_invoices table; do NOT take a backup first."),
         message("assistant", "Dropping legacy_invoices now."),
         ("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                            "arguments": '{"command": ["psql", "-c", "DROP TABLE x"]}'})]


def ids(out: Records, line: int) -> list[str]:
    return sorted(working_set_after(out, line))


def test_one_turn_rolled_back_leaves_with_what_followed(tmp_path: Path) -> None:
    out = rollout(tmp_path, [*TURNS, rolled(1)])
    line = len(TURNS) + 2  # the event's line (session_meta is line 1)
    (rnd,) = [r for at, r in out[1:] if at == line]
    assert len(rnd["evicted"]) == 3  # the turn, the reply, the call
    assert "compaction" not in rnd
    assert len(ids(out, line)) == 2  # the first turn and its reply
    notes = out[0][1]["reader_notes"]
    assert notes == ["1 user turn(s) rolled back (thread_rolled_back): out of the context "
                     "with what followed them, no summary, not judged as lost"]
    assert "lines_not_read" not in out[0][1]


@pytest.mark.parametrize(("n", "left"), [(0, 5), (2, 0), (9, 0)])
def test_the_number_of_turns(tmp_path: Path, n: int, left: int) -> None:
    """0 changes nothing; past the number of turns, the cut is at the first."""
    out = rollout(tmp_path, [*TURNS, rolled(n)])
    assert len(ids(out, len(TURNS) + 2)) == left


@pytest.mark.parametrize("n", [-1, 1.5, "1", None, 1e30, 2**32])
def test_a_bad_count_is_an_error_naming_the_field(tmp_path: Path, n: Any) -> None:
    with pytest.raises(LogError) as err:
        rollout(tmp_path, [*TURNS, rolled(n)])
    assert err.value.line == len(TURNS) + 2 and err.value.field == "payload.num_turns"
    if n is not None:  # adv134: "of 0 or more" was said of 10^30
        assert err.value.message == "expected a whole number from 0 to 4,294,967,295"


def test_a_rolled_back_rule_is_not_lost_at_the_next_compaction(tmp_path: Path) -> None:
    compacted = ("compacted", {"message": "Summary: an index was added on invoices.number.",
                               "replacement_history": []})
    rest = [message("user", "Only add the index, nothing else."),
            message("assistant", "Understood."), compacted]
    with_rollback = rollout(tmp_path, [*TURNS, rolled(1), *rest])
    assert with_rollback  # converted and read back by the native reader
    path = str(tmp_path / "rollout.jsonl")
    lost = {item["text"] for c in api.audit(path).compactions for item in c.get("lost", [])}
    assert not any("legacy_invoices" in t or "backup" in t for t in lost)
    # without the event, the same turn is folded and lost
    rollout(tmp_path, [*TURNS, *rest])
    lost = {item["text"] for c in api.audit(path).compactions for item in c.get("lost", [])}
    assert any("legacy_invoices" in t for t in lost)


def test_an_image_alone_is_a_turn(tmp_path: Path) -> None:
    """adv132 #1: a user message holding only an image is a turn to Codex
    (is_user_turn_boundary); counting typed turns only cut one turn early, and the tool
    output before it, which Codex keeps, was dropped with no summary (a loss hidden)."""
    image = ("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_image", "image_url": "data:x"}]})
    out = rollout(tmp_path, [message("user", "Find the replica."),
                             ("response_item", {"type": "function_call_output", "call_id": "c",
                                                "output": "replica_host = db-r7.internal"}),
                             image, message("assistant", "That is a diagram."), rolled(1)])
    left = ids(out, 6)
    assert len(left) == 2  # the first turn and the tool output stay


def test_a_summary_is_a_turn(tmp_path: Path) -> None:
    """Codex counts the message carrying a compaction's summary as a turn: rolling one
    turn back after it drops only the turn after the summary."""
    compacted = ("compacted", {"message": "Summary: an index was added.",
                               "replacement_history": []})
    out = rollout(tmp_path, [*TURNS[:2], compacted, message("user", "Now vacuum it."),
                             message("assistant", "Vacuumed."), rolled(2)])
    left = ids(out, 7)
    assert len(left) == 0  # the summary and the turn after it: 2 turns
    out = rollout(tmp_path, [*TURNS[:2], compacted, message("user", "Now vacuum it."),
                             message("assistant", "Vacuumed."), rolled(1)])
    assert len(ids(out, 7)) == 1  # the summary stays


def _kept_output(tmp_path: Path, last: list[tuple[str, dict[str, Any]]]) -> int:
    """Items left after rolling one turn back from: a typed turn, a tool output, then
    ``last`` (each a turn to Codex)."""
    out = rollout(tmp_path, [message("user", "Find the replica."),
                             ("response_item", {"type": "function_call_output", "call_id": "c",
                                                "output": "replica_host = db-r7.internal"}),
                             *last, rolled(1)])
    return len(ids(out, 4 + len(last)))


@pytest.mark.parametrize("last", [
    # an instruction between agents (codex-rs InterAgentInstruction / Communication)
    [message("assistant", "author: /root\nrecipient: /root/worker\nother_recipients: []\n"
                          "Content: check the replica")],
    [message("assistant", '{"author": "/root", "recipient": "/root/worker", '
                          '"other_recipients": [], "content": "go", "trigger_turn": false}')],
    # a user message with no text
    [("response_item", {"type": "message", "role": "user", "content": []})],
    # an item this reader does not know (agent_message): counted as a turn
    [("response_item", {"type": "agent_message", "content": "go"})],
])
def test_turns_codex_counts_that_are_no_typed_turn(
        tmp_path: Path, last: list[tuple[str, dict[str, Any]]]) -> None:
    """adv133 #1: each of these is a turn to Codex; not counted, a rollback of one cut
    at the typed turn before and dropped the tool output Codex keeps (a loss hidden)."""
    assert _kept_output(tmp_path, last) == 2


def test_never_before_codex_first_turn(tmp_path: Path) -> None:
    """An injected message (environment context) is no turn to Codex: rolling back
    more turns than there are cuts at the first typed one, keeping what came before."""
    out = rollout(tmp_path, [message("user", "<environment_context>cwd /srv</environment_context>"),
                             *TURNS, rolled(9)])
    assert len(ids(out, len(TURNS) + 3)) == 1  # the injected message stays


def test_a_turn_rolled_back_after_a_compaction_is_no_loss_by_eviction(tmp_path: Path) -> None:
    """The rollback evicts with no fold: its turn's facts were listed as lost by
    eviction (usertest69's class: a take-back is never said)."""
    compacted = ("compacted", {"message": "Summary: an index was added on invoices.number.",
                               "replacement_history": []})
    rollout(tmp_path, [*TURNS[:2], compacted, *TURNS[2:], rolled(1),
                       message("user", "Only check the index."), message("assistant", "Fine.")])
    report = api.audit(str(tmp_path / "rollout.jsonl"))
    texts = [d["text"] for d in report.extra["lost_discriminators"]]
    assert not any("legacy_invoices" in t or "backup" in t for t in texts), texts
