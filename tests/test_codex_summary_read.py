"""The Codex adapter judges a local compaction by the summary the model reads: the copy
in the replacement history, not the ``compacted`` line's ``message`` (adv112 #1: a
message holding a rule the replacement history never carried passed the gate before a
``git push --force``; adv113 #4: a carrier with a summary of its own was read as an
abbreviation of the message, and a history with no copy of it left the rule kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io import codex
from compaction_audit.io.native import read_records

RULE = "Do NOT use --force when pushing to main."
SHORT = "Summary: we worked on the billing export together."
PREFIX = ("Another language model started to solve this problem and produced a summary "
          "of its thinking process.\n")


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}


def _write(tmp_path: Path, message: str, history: list[dict[str, Any]] | None) -> Path:
    payload: dict[str, Any] = {"message": message}
    if history is not None:
        payload["replacement_history"] = history
    call = {"type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": orjson.dumps({"command": ["git", "push", "--force", "origin",
                                                   "main"]}).decode()}
    lines = [("session_meta", {"id": "s"}),
             ("response_item", _user(f"{RULE} Fix the billing export.")),
             ("compacted", payload),
             ("response_item", _user("Push it now.")),
             ("response_item", call),
             ("response_item", {"type": "function_call_output", "call_id": "c1",
                                "output": "ok"})]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"timestamp": "t", "type": kind, "payload": p})
                              + b"\n" for kind, p in lines))
    return path


def _compaction(path: Path) -> dict[str, Any]:
    out = list(codex.records(str(path)))
    read_records(out, str(path))
    ((_, rnd),) = [(line, r) for line, r in out[1:] if "compaction" in r]
    return rnd


@pytest.mark.parametrize(("message", "history", "text"), [
    # Codex's own shape: the carrier is the message, word for word
    (PREFIX + SHORT, [_user(PREFIX + SHORT)], PREFIX + SHORT),
    # the message with a rule the carrier does not hold: the carrier is what was read
    (f"{SHORT} {RULE}", [_user(SHORT)], SHORT),
    (f"{SHORT} Summary: the export job was rerun. {RULE}",
     [_user(SHORT), _user("Summary: the export job was rerun.")],
     f"{SHORT}\nSummary: the export job was rerun."),
    # a carrier with a summary of its own besides the prefix is what was read
    (f"{SHORT} {RULE}", [_user(PREFIX + "Summary: the billing export was fixed today.")],
     PREFIX + "Summary: the billing export was fixed today."),
    # a carrier of the prefix and next to nothing else: an abbreviated copy, the
    # message is judged
    (PREFIX + SHORT, [_user(PREFIX + "...")], PREFIX + SHORT),
    ("Another language model started to solve this problem. " + SHORT,
     [_user("Another language model started to solve this problem ... (summary)")],
     "Another language model started to solve this problem. " + SHORT),
    # no copy of the message in the new context: an empty summary is judged
    (f"{SHORT} {RULE}", [_user("<environment_context>cwd=/repo</environment_context>")], ""),
    (f"{SHORT} {RULE}", [], ""),
    (f"{SHORT} {RULE}", [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": f"{SHORT} {RULE}"}]}], ""),
    # no replacement history (an older rollout): the message
    (f"{SHORT} {RULE}", None, f"{SHORT} {RULE}"),
])
def test_the_summary_judged_is_the_copy_the_model_reads(
        tmp_path: Path, message: str, history: list[dict[str, Any]] | None,
        text: str) -> None:
    rnd = _compaction(_write(tmp_path, message, history))
    assert rnd["summaries"][0].get("text", None) == text
    assert "unchecked" not in rnd["compaction"] and rnd["compaction"]["opaque"] is False


def test_an_empty_message_without_a_carrier_stays_opaque(tmp_path: Path) -> None:
    rnd = _compaction(_write(tmp_path, "", [_user("<environment_context>x</environment_context>")]))
    assert rnd["compaction"]["opaque"] is True and "unchecked" not in rnd["compaction"]


@pytest.mark.parametrize(("history", "code", "head"), [
    # the rule reached the model only in the message: lost, and the push breaks it
    ([_user(SHORT)], 1, "FAIL: 2 error(s)"),
    # the message never reached the model: everything the fold took is lost
    ([_user("<environment_context>cwd=/repo</environment_context>")], 1, "FAIL: 2 error(s)"),
    # the rule carried: nothing lost, the gate passes
    ([_user(f"{SHORT} {RULE}")], 0, "PASS: 0 error(s)"),
])
def test_the_gate_fails_a_rule_the_model_never_read(
        tmp_path: Path, history: list[dict[str, Any]], code: int, head: str) -> None:
    path = _write(tmp_path, f"{SHORT} {RULE}", history)
    result = CliRunner().invoke(app, ["audit", "-q", str(path)])
    assert result.exit_code == code, result.output
    assert result.stdout.startswith(head), result.stdout


class _Counted(str):
    """A message that counts the searches made in it."""

    searches = 0

    def __contains__(self, item: object) -> bool:
        type(self).searches += 1
        return super().__contains__(item)  # type: ignore[operator]


def test_whether_carriers_lie_inside_is_read_from_one_pass() -> None:
    """adv114 #2: a search of the message per carrier was K x M (20.6 s for 3,300
    carriers inside a 1.9 MB log); the automaton's one pass answers it."""
    parts = [f"Summary part {i:04d}: the export job was rerun again." for i in range(40)]
    carries = codex._Carriers(" ".join(parts), parts)
    assert carries.inside is not None  # more than DIRECT candidates: one pass
    carries.m = _Counted(carries.m)
    assert all(carries.inside_message(p) for p in parts)
    assert not carries.inside_message("Summary part 9999: nothing of the kind was said.")
    assert _Counted.searches == 0
