"""A lost fact a person asked about again says where: the round and its line (an
adapter opens a round at the person's turn), in text and markdown; markdown also says
where the fact was read again, as text does."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.html_text import unlabelled


def _line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", "type": kind,
                       "payload": payload})


def _user(text: str) -> str:
    return _line("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})


def _carrier(summary: str) -> dict[str, object]:
    """The user message of a replacement history that carries the summary, as Codex
    writes it (the model reads this copy: adv112 #1)."""
    return {"type": "message", "role": "user", "content": [{
        "type": "input_text", "text": "Another language model started to solve this "
        f"problem and produced a summary of its thinking process.\n{summary}"}]}


def _rollout(path: Path) -> Path:
    lines = [
        _line("session_meta", {"id": "asked-again", "cwd": "/w"}),
        _user("Set the cache_ttl_seconds of the edge proxy to 900."),  # line 2
        _line("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Set cache_ttl_seconds = 900."}]}),
        _line("compacted", {"message": "The proxy settings were adjusted.",
                            "replacement_history": [_carrier("The proxy settings were "
                                                             "adjusted.")]}),  # line 4
        _line("turn_context", {"cwd": "/w", "turn_id": "t2"}),
        _user("What is cache_ttl_seconds set to now?"),  # line 6
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_asked_again_names_the_line_of_the_asking_turn(tmp_path: Path) -> None:
    log = str(_rollout(tmp_path / "rollout.jsonl"))
    text = CliRunner().invoke(app, ["audit", log], env={"COLUMNS": "200"}).stdout
    assert "cache_ttl_seconds  (user, line 2)  <- asked again at round 2 (line 6)" in text
    md = CliRunner().invoke(app, ["audit", log, "-f", "markdown"]).stdout
    assert "(user, line 2, asked again at round 2 (line 6))" in md


def test_an_answer_without_reading_the_fact_again_is_pointed_at(tmp_path: Path) -> None:
    # the assistant's reply to the question (line 7) came from the summary: nothing
    # between brought cache_ttl_seconds back
    log = _rollout(tmp_path / "rollout.jsonl")
    with log.open("a") as out:
        out.write(_line("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "It uses the default of 300."}]}) + "\n")
    text = CliRunner().invoke(app, ["audit", str(log)], env={"COLUMNS": "200"}).stdout
    assert ("<- asked again at round 2 (line 6), answered at line 7 without reading it "
            "again") in text, text
    md = CliRunner().invoke(app, ["audit", str(log), "-f", "markdown"]).stdout
    assert ("(user, line 2, asked again at round 2 (line 6), answered at line 7 without "
            "reading it again)") in md, md
    page = tmp_path / "r.html"
    CliRunner().invoke(app, ["audit", str(log), "-f", "html", "-o", str(page)])
    assert ('<td class="asked">round 2<br><span class="dim">answered at line 7 without '
            "reading it again</span></td>") in unlabelled(page.read_text())


def test_a_converted_log_names_the_asking_line_of_the_product_log(tmp_path: Path) -> None:
    """usertest26b #5: a converted log said "asked again at round 2 (line 4)", a line of
    the converted file, beside the product log's lines of the same sentence."""
    log = _rollout(tmp_path / "rollout.jsonl")
    converted = tmp_path / "rollout.ca.jsonl"
    done = CliRunner().invoke(app, ["convert", str(log), "-o", str(converted)])
    assert done.exit_code == 0, done.output
    text = CliRunner().invoke(app, ["audit", str(converted)], env={"COLUMNS": "200"}).stdout
    assert ("cache_ttl_seconds  (user, rollout.jsonl:2)  <- asked again at round 2 "
            "(rollout.jsonl:6)") in text, text
    md = CliRunner().invoke(app, ["audit", str(converted), "-f", "markdown"]).stdout
    assert r"asked again at round 2 (rollout\.jsonl:6)" in md, md
    data = json.loads(CliRunner().invoke(app, ["audit", str(converted), "-f", "json"]).stdout)
    entry = data["lost_discriminators"][0]
    assert (entry["asked_again_line"], entry["asked_again_file"]) == (6, "rollout.jsonl")
