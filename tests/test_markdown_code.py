"""Markdown quotes a lost fact as the log has it: backticks kept inside a longer
fence (they were rewritten to single quotes, a string the log does not hold)."""

from __future__ import annotations

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.markdown import _code
from tests.logs import LogWriter
from tests.recall.test_severity import assistant, boundary, user


def test_a_fact_with_backticks_is_quoted_verbatim(write_log: LogWriter) -> None:
    log = write_log([user("u1", "Push the fix."),
                     assistant("a1", "Do not use `--force` on the ``release`` branch."),
                     boundary("b1", "a1"),
                     user("s1", "Pushed the fix.", isCompactSummary=True)])
    out = CliRunner().invoke(app, ["audit", str(log), "-f", "markdown", "--all"]).stdout
    assert ("- assistant decision: negation ```Do not use `--force` on the ``release`` "
            "branch``` (assistant, line 2)") in out.splitlines()
    assert "- other prose: identifier `--force` (assistant, line 2)" in out.splitlines()


def test_code_span_fences_and_pads() -> None:
    assert _code("plain") == "`plain`"
    assert _code("`x` then y") == "`` `x` then y ``"  # starts with a backtick: padded
    assert _code(" spaced ") == "`  spaced  `"  # one space of each side is stripped
    assert _code("a\nb") == "`a\\nb`"
    assert _code("q" * 300) == "`" + "q" * 200 + "`"
