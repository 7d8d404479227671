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


def test_a_lost_fact_names_its_kind_once() -> None:
    # "spec requirement: requirement `...`" said the kind twice (user test); a kind
    # the tier's name does not end with stays
    from types import SimpleNamespace

    from compaction_audit.report.markdown import lost_lines

    def fact(tier: str, kind: str, text: str) -> dict[str, object]:
        return {"tier": 3, "tier_name": tier, "kind": kind, "text": text,
                "source": "tool_result:Bash", "span_line": 660}

    session = SimpleNamespace(compactions=[{"round": 3, "line": 1256, "lost": [
        fact("spec requirement", "requirement", "Token is one-time"),
        fact("spec requirement", "negation", "Do not use temp files")]}])
    lines = lost_lines(session)  # type: ignore[arg-type]
    assert lines[2:4] == [
        r"- spec requirement: `Token is one-time` (tool\_result&#58;Bash, line 660)",
        r"- spec requirement: negation `Do not use temp files` (tool\_result&#58;Bash, line 660)"]


def test_a_summary_line_escapes_each_character_once() -> None:
    """adv49: the ``<summary>`` of a trace escaped ``'`` as ``&#x27;`` and then its
    ``#`` again (``&&#35;x27;``, shown as ``&#x27;`` on GitHub)."""
    from compaction_audit.report.markdown import _html

    assert _html("bob's \"run\" @me #1 <b> & :smile: $x https://e.x") == (
        "bob&#39;s &quot;run&quot; &#64;<!-- -->me &#35;<!-- -->1 &lt;b&gt; &amp; &#58;smile: "
        "&#36;x "
        "https&#58;//e.x")
