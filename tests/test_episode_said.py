"""An episode's messages are led by their own severity where it is below the episode's
(usertest43 #5): an ERROR episode of CA301 whose first round held only a fold that lost
nothing (a warning) showed "fold ... dropped, but lost nothing" as the error's row, in
the text, HTML, Markdown and GitHub reports.

The log (no session record: round t on line t + 1): spans ``a`` and ``b`` state one
person's negation, ``c`` another; fold ``m`` drops ``a`` at round 1 while ``b`` still
holds it (a warning: it lost nothing); fold ``n`` drops ``c``, the only span stating
its negation, at round 2 (an error).  One CA301 episode, rounds 1-2, ERROR.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.summary import episodes, said
from compaction_audit.rules import Severity
from tests.logs import LogWriter, rnd

HELD = "Do NOT use --force on main."
LOST = "Never deploy the billing service on a Friday."


def _log(write_log: LogWriter) -> Path:
    def person(i: str, text: str) -> dict[str, object]:
        return {"id": i, "tokens": 10, "text": text, "role": "user"}

    return write_log([
        rnd(0, spans=[person("a", HELD), person("b", HELD), person("c", LOST),
                      {"id": "x", "tokens": 10, "text": "Looked at the logs."}]),
        rnd(1, summaries=[{"id": "m", "tokens": 3, "children": ["a", "x"],
                           "text": "Looked at the logs."}], evicted=["a", "x"]),
        rnd(2, summaries=[{"id": "n", "tokens": 3, "children": ["m", "c"],
                           "text": "Looked at the logs; do NOT use --force on main."}],
            evicted=["m", "c"]),
    ])


def test_a_lower_finding_in_an_episode_is_led_by_its_severity(write_log: LogWriter) -> None:
    from compaction_audit import api

    report = api.audit(str(_log(write_log)))
    [run] = [r for r in episodes(report.findings) if r[0].code == "CA301"]
    assert [(f.round, f.severity.value) for f in run] == [(1, "warning"), (2, "error")]
    assert said(run[0], Severity.ERROR) == "warning: " + run[0].message
    assert run[0].message.startswith("fold m dropped, but lost nothing")
    assert said(run[1], Severity.ERROR) == run[1].message  # the episode's own: no label
    assert said(run[0], Severity.WARNING) == run[0].message  # alone, the warning is the
    # episode's


def test_every_format_shows_the_label(write_log: LogWriter, tmp_path: Path) -> None:
    path = str(_log(write_log))
    runner = CliRunner()
    text = runner.invoke(app, ["audit", path], env={"COLUMNS": "300"}).output
    assert ("  rounds 1-2 (lines 2-3):\n    warning: fold m dropped, but lost nothing: a: "
            "negation 'Do NOT use --force on main' (still held by another span)") in text
    assert "last: fold n silently dropped: c: negation" in text
    md = runner.invoke(app, ["audit", path, "--format", "markdown"]).output
    assert "| warning: fold m dropped, but lost nothing" in md
    gh = runner.invoke(app, ["audit", path, "--format", "github"]).output
    assert "warning: fold m dropped, but lost nothing" in gh


def test_the_html_row_is_led_by_the_label(write_log: LogWriter) -> None:
    from compaction_audit import api
    from compaction_audit.report.html.data import episodes as rows

    report = api.audit(str(_log(write_log)))
    [row] = [e for e in rows(report.findings) if e.code == "CA301"]
    assert row.severity == "error"
    assert row.message.startswith("warning: fold m dropped, but lost nothing")
    assert row.last_message.startswith("fold n silently dropped")


def test_sarif_and_json_lead_the_lower_message_too(write_log: LogWriter) -> None:
    """usertest44 #3: SARIF's result (level error) and the JSON episode (severity
    error) still led with the warning's "fold m dropped, but lost nothing"."""
    import json

    path = str(_log(write_log))
    runner = CliRunner()
    sarif = json.loads(runner.invoke(app, ["audit", path, "--format", "sarif"]).output)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "CA301"]
    assert result["level"] == "error"
    assert result["message"]["text"].startswith("warning: fold m dropped, but lost nothing")
    doc = json.loads(runner.invoke(app, ["audit", path, "--format", "json"]).output)
    [episode] = [f for f in doc["findings"] if f["code"] == "CA301"]
    assert episode["severity"] == "error"
    assert episode["message"].startswith("warning: fold m dropped, but lost nothing")
    assert episode["last_message"].startswith("fold n silently dropped")


def test_an_episode_below_its_rule_heading_is_led_by_its_severity() -> None:
    """usertest44 #4: under "ERROR CA301 ... 4 findings (3 error, 1 warning) in 4
    episodes" of sample (b), the warning's episode at round 17 (line 18) read as one of
    the errors."""
    from tests.logs import SAMPLES

    out = CliRunner().invoke(app, ["audit", str(SAMPLES / "research-no-decay.jsonl"),
                                   "--all"], env={"COLUMNS": "200"}).output
    head = out.index("ERROR   CA301 silent-discriminating-fold  4 findings (3 error, 1 warning)")
    assert out[head:].split("\n")[1] == (
        "  round 17 (line 18): warning: fold t2.40 dropped, but lost nothing: t1.19: scope "
        "'staging' (still held by another span)")
    assert "  round 23 (line 24): fold t2.45 silently dropped" in out[head:]
    # without --all the three episodes shown are the errors (usertest71 #2), the
    # warning counted
    first = CliRunner().invoke(app, ["audit", str(SAMPLES / "research-no-decay.jsonl")],
                               env={"COLUMNS": "200"}).output
    rule = first[first.index("ERROR   CA301"):].split("  action:")[0]
    assert "warning: fold t2.40" not in rule
    assert "... 1 more episode of CA301 (round 17) (--all)" in rule


def test_a_sarif_result_s_message_and_values_are_one_finding_s() -> None:
    """usertest45 #1: SARIF took its message and location from the episode's first
    finding in round order and its values from the worst of that round: an error's
    result read "fold t3.86 ... lost nothing" beside fold t3.87's values (sample e,
    rounds 12-13).  Every fold result now names the fold its values are about."""
    import json

    from tests.logs import SAMPLES

    seen = 0
    for sample in sorted(SAMPLES.glob("*.jsonl")):
        out = CliRunner().invoke(app, ["audit", str(sample), "-f", "sarif",
                                       "--fail-on", "never"]).output
        for result in json.loads(out)["runs"][0]["results"]:
            fold = result.get("properties", {}).get("values", {}).get("fold")
            if fold is not None:
                seen += 1
                assert f"fold {fold} " in result["message"]["text"], (sample.name, fold)
    assert seen > 10
