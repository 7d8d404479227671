"""The rehydration advice of an episode is its last round's (usertest49 #3).

An inversion episode over rounds 5-7 printed round 5's advice, "rehydrate L1c", under
its "last:" line for round 7, though L1c was evicted at round 6 and round 7's own
advice named L1d.  Built from findings directly: the advice is the rule's
(:mod:`compaction_audit.rehydrate`), the layout the terminal report's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from compaction_audit.report.terminal import _episode
from compaction_audit.rules.base import Finding, Severity


def _finding(round_: int, summary: str, needed: int) -> Finding:
    advice: dict[str, Any] = {"summary": summary, "depth": 1, "fan_out": 2,
                              "leaves_to_read": 2, "leaf_tokens_to_read": 200,
                              "tokens_needed": needed}
    return Finding("salience-inversion", "CA101", Severity.ERROR, round_, round_ + 1,
                   f"salience inversion in round {round_}", "halt compaction",
                   {"rehydrate": advice})


def _text(run: list[Finding]) -> str:
    console = Console(width=200, record=True, color_system=None)
    for part in _episode(run):
        console.print(part)
    return console.export_text()


def test_the_last_rounds_advice_is_shown_with_its_round() -> None:
    text = _text([_finding(5, "L1c", 72), _finding(6, "L1c", 72), _finding(7, "L1d", 90)])
    assert "at round 7: rehydrate L1d (depth 1, fan-out 2" in text
    assert "raw_ratio: 90" in text
    assert "L1c" not in text


def test_the_same_advice_throughout_has_no_round() -> None:
    text = _text([_finding(5, "L1c", 72), _finding(6, "L1c", 72)])
    assert "    rehydrate L1c (depth 1, fan-out 2" in text
    assert "at round" not in text


def test_a_one_round_episode_shows_its_advice() -> None:
    text = _text([_finding(9, "L1d", 72)])
    assert "    rehydrate L1d (depth 1, fan-out 2" in text
    assert "at round" not in text


def test_the_json_episode_has_the_last_rounds_advice_where_it_differs() -> None:
    """usertest50 #4: the JSON episode held the first round's advice only (a summary
    evicted since); ``last_rehydrate`` is the last round's where it differs."""
    from compaction_audit.report.bounded import episode_dict

    doc = episode_dict([_finding(5, "L1c", 72), _finding(7, "L1d", 90)])
    assert doc["values"]["rehydrate"]["summary"] == "L1c"
    assert doc["last_rehydrate"]["summary"] == "L1d"
    assert doc["last_rehydrate"]["tokens_needed"] == 90
    assert "last_rehydrate" not in episode_dict([_finding(5, "L1c", 72),
                                                 _finding(6, "L1c", 72)])


SAMPLE_A = Path(__file__).parent.parent / "sample_logs" / "research-decay.jsonl"


def _audit(fmt: str) -> str:
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    return CliRunner().invoke(app, ["audit", str(SAMPLE_A), "--select", "CA101",
                                    "-f", fmt]).stdout


# Sample (a)'s CA101 episode over rounds 35-36 names t1.206 at round 35 and t1.216
# at round 36 (its JSON episode: values.rehydrate.summary, last_rehydrate.summary).
LAST_ADVICE = ("at round 36: rehydrate t1.216 (depth 1, fan-out 4, 4 leaves to read again"
               " = 5,270 tokens)")


def test_every_format_with_words_gives_the_last_rounds_advice() -> None:
    """usertest51 #8: SARIF (and the GitHub, JUnit, Markdown and HTML reports) said the
    rule's action only, the summary to rehydrate in the JSON values of the first round;
    each now says the episode's last-round advice as the terminal does."""
    for fmt in ("github", "sarif", "junit", "html"):
        assert LAST_ADVICE in _audit(fmt), fmt
    escaped = LAST_ADVICE.replace(".", "\\.").replace("(", "\\(").replace(")", "\\)")
    assert escaped.replace("fan-out", "fan\\-out") in _audit("markdown")


def test_the_sarif_result_carries_the_last_rounds_advice() -> None:
    import json

    results = json.loads(_audit("sarif"))["runs"][0]["results"]
    by_round = {r["properties"]["round"]: r["properties"] for r in results}
    assert by_round[35]["values"]["rehydrate"]["summary"] == "t1.206"
    assert by_round[35]["lastRehydrate"]["summary"] == "t1.216"
    assert "lastRehydrate" not in by_round[25]  # a one-round episode
