"""The text report's rounds_at_max_depth column says what it counts: "at cap" only
with a recorded max_depth; without one the spec counts rounds at the deepest depth
written, and the heading and legend say so; left out when it counts nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import LogWriter, rnd, session


def two_folds() -> list[dict[str, Any]]:
    """Depth 1 at round 1, depth 2 at rounds 2 and 3."""
    return [rnd(0, spans=[{"id": "a", "tokens": 50}, {"id": "b", "tokens": 50}]),
            rnd(1, summaries=[{"id": "m1", "tokens": 10, "children": ["a"]}],
                offloaded=["a"]),
            rnd(2, summaries=[{"id": "m2", "tokens": 10, "children": ["m1"]}],
                offloaded=["m1"]),
            rnd(3, spans=[{"id": "c", "tokens": 50}])]


def table(path: Path) -> list[str]:
    """The "Rounds that matter" block of the text report, lines stripped."""
    out = CliRunner().invoke(app, ["audit", str(path), "--isolated", "--fail-on", "never"],
                             env={"COLUMNS": "160"}).output.splitlines()
    lines = [line.rstrip() for line in out]
    start = lines.index("Rounds that matter")
    return lines[start:lines.index("", start)]


def column(lines: list[str], heading: str) -> list[str]:
    """The cells under ``heading``, one per round row."""
    heads = [h.strip() for h in lines[1].split("\u2503")]
    at = heads.index(heading)
    return [row.split("\u2502")[at].strip() for row in lines[3:] if "\u2502" in row]


def test_without_a_cap_the_column_is_at_max_and_says_why(write_log: LogWriter) -> None:
    lines = table(write_log(two_folds()))
    assert " at cap " not in lines[1]
    # the key rounds are the first and the last; the deepest depth written is 2, and
    # round 3 is the second round at it
    assert column(lines, "round") == ["0", "3"]
    assert column(lines, "at max") == ["0", "2"]
    legend = " ".join(" ".join(lines[-4:]).split())  # the legend, wrapped
    assert "at max = rounds_at_max_depth (no cap recorded: at the deepest depth written)" \
        in legend


def test_with_a_cap_the_column_is_at_cap(write_log: LogWriter) -> None:
    lines = table(write_log([session(max_depth=2), *two_folds()]))
    assert column(lines, "at cap") == ["0", "2"]
    assert "at cap = rounds_at_max_depth," in " ".join(lines[-3:])
    assert "no cap recorded" not in " ".join(lines)


def test_a_cap_above_the_deepest_depth_counts_no_round(write_log: LogWriter) -> None:
    lines = table(write_log([session(max_depth=3), *two_folds()]))
    assert column(lines, "at cap") == ["0", "0"]


def test_no_summary_and_no_cap_leaves_the_column_out(write_log: LogWriter) -> None:
    lines = table(write_log([rnd(0, spans=[{"id": "a", "tokens": 5}]),
                             rnd(1, spans=[{"id": "b", "tokens": 5}])]))
    assert "at max" not in " ".join(lines) and "at cap" not in " ".join(lines)
    assert "rounds_at_max_depth" not in " ".join(lines)


FIXTURES = Path(__file__).parent / "fixtures" / "adapters"


def test_a_compactions_own_ungrounded_summary_is_explained() -> None:
    """ux7: the column counted 1 ungrounded summary at each compaction of a product's
    log, and CA201 (which does not judge a compaction's own summary there) named
    none: the legend says why."""
    lines = table(FIXTURES / "claude-session.jsonl")
    assert "ungr" in lines[1]
    assert "1" in column(lines, "ungr")
    assert ("ungr = ungrounded_summaries (a compaction's own summary, whose leaves it "
            "evicted: CA201 judges it only if it loses a leaf it kept, its facts are "
            "judged per fold)") in " ".join(line.strip() for line in lines)


def test_an_ungrounded_summary_ca201_names_keeps_the_plain_legend(
        write_log: LogWriter) -> None:
    """A summary whose only leaf is evicted later is CA201's: no explanation added."""
    lines = table(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 50}, {"id": "b", "tokens": 50}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 10, "children": ["a"]}]),
        rnd(2, evicted=["a"])]))
    assert column(lines, "ungr")[-1] == "1"
    text = " ".join(line.strip() for line in lines)
    assert "ungr = ungrounded_summaries" in text
    assert "compaction's own summary" not in text
