"""The text and Markdown reports list the tiers that matter and count the rest
(issue 10, point 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import LogWriter, rnd
from tests.recall.test_severity import assistant, boundary, user

WORDS = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
         "juniper", "kestrel", "lagoon", "marble", "nectar", "onyx", "prairie", "quartz"]


def span(i: str, text: str, source: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def many_facts_log(write_log: LogWriter) -> Path:
    """17 instructions a person typed (tier 2) and 3 tool values (tier 6), all folded."""
    spans = [span(f"u{i:02d}", f"Never rename the {w} bucket.", "user")
             for i, w in enumerate(WORDS)]
    spans += [span("t1", "pool_size=64 timeout=45s depth=12", "tool_result:Bash")]
    ids = [s["id"] for s in spans]
    return write_log([rnd(0, spans=spans),
                      rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ids,
                                         "text": "Looked at the buckets."}], evicted=ids)])


def test_text_lists_15_top_tier_facts_then_counts(write_log: LogWriter) -> None:
    path = str(many_facts_log(write_log))
    out = CliRunner().invoke(app, ["audit", path], env={"COLUMNS": "250"}).output
    out = out[out.index("Lost discriminators (facts that matter first)"):]
    listed = [w for w in WORDS if f"Never rename the {w} bucket" in out]
    # later spans first: the last 15 of the 17, "amber" and "basalt" cut
    assert listed == WORDS[2:]
    assert "... 2 more (--all)" in out
    # tool output yields keyed values and numbers with a unit, and no identifiers no
    # prose used: pool_size=64, 45s, depth=12 (issue 10, point 1)
    assert "not listed: 3 tool output (--all lists them)" in out
    every = CliRunner().invoke(app, ["audit", path, "--all"], env={"COLUMNS": "250"}).output
    every = every[every.index("Lost discriminators (facts that matter first)"):]
    assert all(f"Never rename the {w} bucket" in every for w in WORDS)
    assert "pool_size" in every
    assert "(--all)" not in every and "not listed" not in every


def test_compaction_list_shows_tier_and_the_line_where_it_was_stated(
        write_log: LogWriter) -> None:
    path = str(write_log([
        user("u1", "Never force-push to the release branch."),
        assistant("a1", "Renamed it in cli.py; the tests pass."),
        boundary("b1", "a1"),
        user("s1", "Renamed the flag.", isCompactSummary=True),
        user("u2", "Now update the changelog."),
    ]))
    out = CliRunner().invoke(app, ["audit", path], env={"COLUMNS": "250"}).output
    lines = out.splitlines()
    at = lines.index("Compactions (1)")
    assert lines[at + 1].startswith("  round 1 (line 3): compact")
    assert lines[at + 2].strip() == "lost, facts that matter first:"
    assert lines[at + 3].strip() == "typed by a person"
    assert lines[at + 4].split() == ["negation", "Never", "force-push", "to", "the",
                                     "release", "branch", "(user,", "line", "1)"]
    md = CliRunner().invoke(app, ["audit", path, "-f", "markdown"]).output
    assert ("- typed by a person: negation `Never force-push to the release branch` "
            "(user, line 1)") in md


def test_markdown_counts_the_low_tiers(write_log: LogWriter) -> None:
    path = str(write_log([
        user("u1", "Check the pool settings."),
        assistant("a1", "The pool has pool_size 64 and depth 12."),
        boundary("b1", "a1"),
        user("s1", "Checked the pool.", isCompactSummary=True),
    ]))
    md = CliRunner().invoke(app, ["audit", path, "-f", "markdown"]).output
    # values in the assistant's prose are "other prose" (tier 5): counted, not listed
    assert "Lost at the compaction of round 1 (line 3): 3 fact(s), none that matter:" in md
    assert "- not listed: 3 other prose (\\-\\-all lists them)\n" in md  # as the text says
    assert "`pool_size`" not in md
    every = CliRunner().invoke(app, ["audit", path, "-f", "markdown", "--all"]).output
    # stated by the assistant's reply, the log's line 2 (not the compaction's line 3)
    assert "- other prose: identifier `pool_size` (assistant, line 2)" in every
