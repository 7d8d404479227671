"""The HTML page answers first, as the text report does: the page opens with the
gate's line (the exit code, what reaches --fail-on, what could not be checked) and
each trace with its verdict, above the table of facts it rests on. Before, the page
opened with "fails at error: yes" and each verdict came after an 11-row table."""

from __future__ import annotations

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.html_text import unbroken, unlabelled
from tests.logs import LogWriter, rnd


def test_the_gate_line_then_each_verdict_above_its_table(write_log: LogWriter) -> None:
    lossy = write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080 because 80 is taken."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"], "text": "Ports."}],
            evicted=["a"])])
    page = CliRunner().invoke(app, ["audit", str(lossy), "--isolated", "-f", "html"]).stdout
    body = unbroken(page[page.index("<body"):])  # a long path's breaks, flags kept whole
    assert ("<h1>compaction-audit report</h1><p>exit 1: 1 trace(s), 1 reach --fail-on "
            "error; 1 error(s), 3 warning(s), 1 info in all</p>") in body
    assert "fails at" not in body
    verdict = body.index('id="verdict">FAIL: 1 error(s), 3 warning(s), 1 info')
    assert body.index(f"<h2>{lossy}</h2>") < verdict < body.index("<th>trace</th>")


def test_the_verdict_is_coloured_by_its_head_word_alone(write_log: LogWriter) -> None:
    # an opaque summary makes the verdict "PASS (1 compaction could not be checked): ..."
    opaque = write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"]}], evicted=["a"],
            compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5,
                        "opaque": True})])
    page = CliRunner().invoke(app, ["audit", str(opaque), "--isolated", "-f", "html"]).stdout
    assert ('<p class="verdict PASS" id="verdict">PASS (1 compaction could not be '
            "checked): ") in page


def test_a_compaction_s_lost_facts_are_listed_once(write_log: LogWriter) -> None:
    log = write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080 because 80 is taken."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a"], "text": "Ports."}],
            evicted=["a"], compaction={"kind": "compact", "summary_id": "S",
                                       "summary_tokens": 5})])
    page = unlabelled(CliRunner().invoke(app, ["audit", str(log), "--isolated", "-f",
                                               "html"]).stdout)
    assert "<h2>Compactions (1)</h2>" in page
    assert "<h2>Lost discriminators" not in page
    assert page.count('<td class="mono">8080</td>') == 1  # once, under its compaction
    assert ("distinct lost discriminator(s) (a fact several children stated is one): "
            "listed under Compactions</p>") in page
