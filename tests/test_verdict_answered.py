"""The verdict of a product's log counts the lost facts a person asked for again and
the assistant answered without reading them again, with the lines of the answers
(usertest72: the line that matters most was under the list, while the verdict counted
it with the trivia)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.model import ANSWER_LINES, answered_phrase, broken_phrase
from compaction_audit.rules.base import Finding, Severity


def fact(answered: int | None, where: str | None = None) -> dict[str, Any]:
    return {"tier": 1, "answered_line": answered, "answered_file": where}


@pytest.mark.parametrize(("lost", "said"), [
    ([], ""),
    ([fact(None), fact(None)], ""),  # asked again, or not, but no answer from the summary
    ([fact(22), fact(22), fact(None)], ", 2 of them answered from the summary (line 22)"),
    ([fact(22), fact(9, "s.messages.json")],
     ", 2 of them answered from the summary (line 22, s.messages.json:9)"),
    ([fact(n) for n in (5, 6, 7, 8, 9)],
     ", 5 of them answered from the summary (line 5, line 6, line 7 and 2 more)"),
])
def test_the_answers_from_the_summary(lost: list[dict[str, Any]], said: str) -> None:
    assert ANSWER_LINES == 3
    assert answered_phrase(lost) == said


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "t", "type": "response_item", "payload": payload}


def _say(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return _item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})


def test_a_lost_rule_a_later_action_broke_is_in_the_verdict(tmp_path: Path) -> None:
    """usertest75 #6: CA307 fired on a command the lost rule forbade, and the verdict
    line did not say so.  A Codex rollout in our own words: the person's rule, a
    compaction whose summary drops it (keeping the later request), then a call that
    breaks it (line 9)."""
    rule = "Tune the search cache, and do NOT run the prod reindex 0047 with --force."
    call = "./manage.py reindex --database prod 0047 --force"
    summary = "Summary: tuned the search cache."
    later = _say("user", "Now add a metrics endpoint.")
    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "broken", "cwd": "/srv"}},
        _say("user", rule), _say("assistant", "Tuned the cache."),
        later, _say("assistant", "Added /metrics."),
        {"timestamp": "t", "type": "compacted",
         "payload": {"message": summary,
                     "replacement_history": [later["payload"], _say("user", summary)["payload"]]}},
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "context_compacted"}},
        _say("user", "Please finish the prod reindex now."),
        _item({"type": "function_call", "name": "exec_command", "call_id": "c1",
               "arguments": json.dumps({"cmd": call})}),
        _item({"type": "function_call_output", "call_id": "c1", "output": "done"}),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = CliRunner().invoke(app, ["audit", str(path), "--isolated", "-q"])
    assert result.stdout.startswith("FAIL: 2 error(s)"), result.stdout
    assert result.stdout.rstrip().endswith(
        ", 1 lost rule broken by a later action (line 9)"), result.stdout
    calm = tmp_path / "calm.jsonl"  # a call on staging breaks nothing
    calm.write_text(path.read_text().replace(call, "./manage.py reindex --database staging"))
    quiet = CliRunner().invoke(app, ["audit", str(calm), "--isolated", "-q"]).stdout
    assert quiet.startswith("FAIL: 1 error(s)") and "broken by" not in quiet, quiet


@pytest.mark.parametrize(("where", "said"), [
    ([], ""),
    (["line 24"], ", 1 lost rule broken by a later action (line 24)"),
    (["line 24", "line 24", None], ", 3 lost rules broken by a later action "
                                   "(line 24, round 4)"),
    (["line 1", "line 2", "line 3", "line 4"],
     ", 4 lost rules broken by a later action (line 1, line 2, line 3 and 1 more)"),
])
def test_the_broken_rules_phrase(where: list[str | None], said: str) -> None:
    found = [Finding("lost-rule-violated", "CA307", Severity.ERROR, 4, 9, "m", "a",
                     {"violated_at": at, "violated_round": 4}) for at in where]
    found.append(Finding("silent-discriminating-fold", "CA301", Severity.ERROR, 2, 3, "m",
                         "a"))
    assert broken_phrase(found) == said
