"""Where a broken lost rule is reported (CA307, usertest76 F1 and F4).

F4: in a product's log the finding sat on its round's first line (the person's
question), in every format; it is now the line of the call that broke the rule.
F1: "do NOT run the prod migration 0047 with --force" was broken by the safe form, the
run without the flag: the flag after the object's three words is what is forbidden, on
a call that names the object (adv146 F3: ``git push --force`` broke it), and not when
the words before it allow it ("except with --quick").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app

KEPT = "Start with the index migrations."
RULE = ("Prepare the schema migrations, and do NOT run the prod migration 0047 with "
        "--force; it locks the table.")


def _rollout(path: Path, command: str, rule: str = RULE) -> Path:
    """A Codex rollout in our own words: a person's ``rule``, a compaction that drops it,
    the person's next turn (line 6) and a call (line 7) running ``command``."""
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    def said(role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return item({"type": "message", "role": role,
                     "content": [{"type": kind, "text": text}]})

    lines = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "m", "cwd": "/srv"}},
             said("user", rule),
             said("user", KEPT),
             {"timestamp": "t", "type": "compacted",  # it keeps the second message only
              "payload": {"message": "Summary: preparing the schema migrations.",
                          "replacement_history": [{"type": "message", "role": "user",
                                                   "content": [{"type": "input_text",
                                                                "text": KEPT}]}]}},
             {"timestamp": "t", "type": "event_msg", "payload": {"type": "context_compacted"}},
             said("user", "Go ahead with the migrations."),
             item({"type": "function_call", "name": "exec_command", "call_id": "c1",
                   "arguments": json.dumps({"cmd": command})}),
             item({"type": "function_call_output", "call_id": "c1", "output": "ok"})]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _broken(path: Path) -> list[dict[str, Any]]:
    out = CliRunner().invoke(app, ["audit", str(path), "-f", "json", "--isolated"]).stdout
    return [f for f in json.loads(out)["findings"] if f["code"] == "CA307"]


def test_the_finding_is_at_the_line_of_the_call_that_broke_the_rule(tmp_path: Path) -> None:
    found = _broken(_rollout(tmp_path / "force.jsonl", "bin/migrate --env prod 0047 --force"))
    assert [(f["round"], f["line"]) for f in found] == [(3, 7)]  # the round opens at line 6
    assert found[0]["values"]["violated_at"] == "line 7"
    github = CliRunner().invoke(app, ["audit", str(tmp_path / "force.jsonl"), "-f", "github",
                                      "--isolated"]).stdout
    assert any(ln.startswith("::error ") and ",line=7,title=CA307 " in ln
               for ln in github.splitlines()), github
    sarif = json.loads(CliRunner().invoke(app, ["audit", str(tmp_path / "force.jsonl"), "-f",
                                                "sarif", "--isolated"]).stdout)
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "CA307")
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    # the rule's line alone, not the fold's other losses
    assert [x["physicalLocation"]["region"]["startLine"]
            for x in result["relatedLocations"]] == [2]


def test_the_run_without_the_forbidden_flag_breaks_nothing(tmp_path: Path) -> None:
    assert _broken(_rollout(tmp_path / "safe.jsonl", "bin/migrate --env prod 0047")) == []


def test_the_flag_on_another_command_breaks_nothing(tmp_path: Path) -> None:
    # adv146 F3: "--force" alone was the object, and any forced push broke the rule
    path = _rollout(tmp_path / "push.jsonl", "git push --force origin feature/index-docs")
    assert _broken(path) == []


def test_a_flag_the_rule_allows_is_not_what_it_forbids(tmp_path: Path) -> None:
    rule = "Do not run the nightly benchmark suite except with --quick, it takes hours."
    allowed = _rollout(tmp_path / "quick.jsonl", "bin/bench nightly --quick", rule)
    assert _broken(allowed) == []  # adv146 F3: the allowed form broke it
    full = _rollout(tmp_path / "full.jsonl", "bin/run nightly benchmark suite", rule)
    assert [f["line"] for f in _broken(full)] == [7]  # the suite itself still does
