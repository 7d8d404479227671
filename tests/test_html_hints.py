"""What the HTML page says of the rows it cut and of the rules it documents is true:
``audit``'s JSON report lists every lost fact only with ``--all`` (docs/ci.md, "Output
size"), and a rule's heading gives its severity as the default, which a finding can
lower. Before, the page said "(--format json lists every one)", though the bounded JSON
report holds 5 lost facts of a compaction, and headed CA201 "(error)" under an INFO
finding of it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.html import data
from compaction_audit.report.html.sections import more
from tests.html_text import unbroken, unlabelled
from tests.logs import LogWriter, rnd

N = data.MAX_ROWS + 7  # spans one fold drops, two facts each: more than the table holds


def lossy_log(write_log: LogWriter) -> str:
    facts = [{"id": f"s{i}", "tokens": 10, "text": f"Set port_{i} to {9000 + i}."}
             for i in range(N)]
    ids = [f["id"] for f in facts]
    return str(write_log([
        rnd(0, spans=facts),
        rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ids,
                           "text": "Ports were set."}], evicted=ids)]))


def test_the_cut_rows_name_the_options_that_list_them(write_log: LogWriter) -> None:
    path = lossy_log(write_log)
    runner = CliRunner()
    page = unbroken(runner.invoke(app, ["audit", path, "--isolated", "-f", "html"]).stdout)
    bounded = json.loads(runner.invoke(app, ["audit", path, "--isolated", "-f", "json"]).stdout)
    every = json.loads(runner.invoke(app, ["audit", path, "--isolated", "-f", "json",
                                           "--all"]).stdout)
    lost = len(every["lost_discriminators"])  # --all lists every one
    assert lost == 2 * N  # port_i and 900i of each span
    assert len(bounded["lost_discriminators"]) == 10  # the bounded report does not
    # the lost facts' toggle says it once (usertest12): how many the page holds of all
    assert (f"(the page holds the first {data.MAX_ROWS} of {lost}; --format json --all "
            "lists every one)</summary>") in page
    assert "(--format json lists every one)" not in page


def test_diff_units_keep_their_own_hint() -> None:
    assert more(3, "unit", "--format json") == (
        '<p class="dim">... and 3 more unit(s) (--format json lists every one)</p>')
    assert more(0, "unit") == ""


def test_a_rule_heading_says_its_severity_is_the_default(write_log: LogWriter) -> None:
    page = unlabelled(CliRunner().invoke(app, ["audit", lossy_log(write_log), "--isolated",
                                               "-f", "html", "--severity", "CA201=info"]
                                         ).stdout)
    assert ('CA201 ungrounded-summary <span class="dim">(default severity: error)'
            '</span></h3>') in page
    assert '<td class="sev-info">INFO</td>' in page
    assert '<td class="sev-error">' not in page
