"""The diff verdict says how the recall debt moved, not only the inversion onset: two
runs of a loop that cannot invert (every product's compaction) had the same "inversion
onset unchanged: none -> none" headline whether the candidate's summaries lost more
facts or fewer. Before, the debt was only in the series below."""

from __future__ import annotations

from compaction_audit.api import audit
from compaction_audit.diff import diff_reports
from tests.logs import LogWriter, rnd

FACTS = [{"id": "a", "tokens": 30, "text": "Keep port 8080."},
         {"id": "b", "tokens": 30, "text": "Pin numpy==1.26.4."}]


def run(write_log: LogWriter, summary: str, name: str) -> str:
    return str(write_log([
        rnd(0, spans=FACTS),
        rnd(1, summaries=[{"id": "S", "tokens": 9, "children": ["a", "b"], "text": summary}],
            evicted=["a", "b"])], name))


def test_the_headline_names_the_debt_at_the_last_round(write_log: LogWriter) -> None:
    keeps = audit(run(write_log, "Keep port 8080; pin numpy==1.26.4.", "keeps.jsonl"))
    loses = audit(run(write_log, "Ports and pins were set.", "loses.jsonl"))
    d = diff_reports(keeps, loses)
    # lost: constraint "Keep port 8080", quantity 8080, version ==1.26.4
    assert d.last_debt() == (0, 3)
    # neither loop can invert (depth 1): what they lost leads, the onset closes
    # (usertest62 B4: "inversion onset unchanged: none -> none" led)
    assert d.headline().startswith("4 new, 0 resolved, 3 persisting finding unit(s); ")
    assert ("; recall debt (facts seen that no resolvable span or retained summary "
            "holds) at the last round 0 -> 3 (+3); ") in d.headline()
    assert ("; no inversion onset in either run (neither loop can invert: a condition "
            "of inversion fails)") in d.headline()
    assert "inversion onset unchanged" not in d.headline()
    same = diff_reports(loses, loses)
    assert same.last_debt() == (3, 3) and "recall debt" not in same.headline()


def opaque_run(write_log: LogWriter, name: str) -> str:
    """Round 1 loses all three facts (debt 3); round 2 is an opaque compaction."""
    return str(write_log([
        rnd(0, spans=FACTS),
        rnd(1, summaries=[{"id": "S", "tokens": 9, "children": ["a", "b"],
                           "text": "Ports and pins were set."}], evicted=["a", "b"]),
        rnd(2, summaries=[{"id": "E", "tokens": 5, "children": ["S"]}], evicted=["S"],
            compaction={"summary_id": "E", "opaque": True})], name))


def test_debt_is_unknown_from_a_compaction_whose_loss_cannot_be_checked(
        write_log: LogWriter) -> None:
    """usertest26 #1: after an encrypted compaction the debt read 0, and diff "8 -> 0
    (-8)", a drop nobody measured."""
    report = audit(opaque_run(write_log, "opaque.jsonl"))
    assert report.series["recall_debt"].to_list() == [0, 3, None]
    assert report.series["recall_debt_fold"].to_list() == [0, 3, None]
    assert report.series["discriminators_seen"].to_list() == [3, 3, 3]  # still known
    loses = audit(run(write_log, "Ports and pins were set.", "loses.jsonl"))
    d = diff_reports(loses, report)
    assert d.last_debt() == (3, None)
    assert ("; recall debt (facts seen that no resolvable span or retained summary "
            "holds) at the last round 3 -> unknown (a compaction whose loss could not be "
            "checked)") in d.headline()
    # the candidate ends at round 1, before the opaque compaction: both known there
    assert diff_reports(report, loses).last_debt() == (3, 3)


def test_the_html_debt_chart_says_from_which_round_the_debt_is_unknown(
        write_log: LogWriter) -> None:
    from compaction_audit.report.formats import RenderOptions
    from compaction_audit.report.html.audit_page import render_html
    from compaction_audit.report.model import Report

    page = render_html(Report([audit(opaque_run(write_log, "opaque.jsonl"))]),
                       RenderOptions()).decode()
    assert ("Unknown from round 2: the loss of a compaction there could not be checked "
            "(opaque, redacted, unread or with no summary text), so it is not counted (not "
            "0).") in page
    known = render_html(Report([audit(run(write_log, "x", "plain.jsonl"))]),
                        RenderOptions()).decode()
    assert "Recall debt" in known and "Unknown from round" not in known


def test_runs_of_different_tasks_are_said_to_be_so(write_log: LogWriter) -> None:
    """usertest26 #2: two unrelated sessions compared without a word.  Session ids
    differ between any two runs; the task (its query, else the first prompt) does not."""
    from tests.logs import session

    def of(task: str, name: str, sid: str) -> str:
        return str(write_log([session(session_id=sid, task_query=task), rnd(0, spans=FACTS)],
                             name))

    one = audit(of("Fix the proxy config.", "one.jsonl", "run-1"))
    again = audit(of("Fix  the proxy\nconfig.", "two.jsonl", "run-2"))  # same words
    other = audit(of("Write the release notes.", "three.jsonl", "run-3"))
    note = ("; different tasks (the task queries, or the person's first prompts, differ): "
            "their findings may not correspond")
    assert note not in diff_reports(one, again).headline()
    assert diff_reports(one, other).headline().endswith(note)
    assert one.task == again.task == "Fix the proxy config." != other.task
    assert "task" not in one.cosine  # log text, in no report
    from compaction_audit.report.diff_render import diff_dict

    assert diff_dict(diff_reports(one, other))["tasks_differ"] is True
    assert diff_dict(diff_reports(one, again))["tasks_differ"] is False


def test_a_quantity_neither_run_has_is_no_row(write_log: LogWriter) -> None:
    """usertest26 #6: two product logs (no salience logged) showed
    "query_cosine_retained unknown" for both runs and at every diverging round."""
    keeps = audit(run(write_log, "Keep port 8080; pin numpy==1.26.4.", "keeps.jsonl"))
    loses = audit(run(write_log, "Ports and pins were set.", "loses.jsonl"))
    assert keeps.series["query_cosine_retained"].null_count() == keeps.series.height
    d = diff_reports(keeps, loses)
    assert "query_cosine_retained" not in d.quantities
    assert d.quantities[:2] == ["raw_ratio", "distinct_source_spans"]


def test_the_text_series_ends_unknown_where_the_run_ends_unknown(
        write_log: LogWriter) -> None:
    """usertest27 #1: the series said "0 -> 0" (the last value known) under a verdict
    of "3 -> unknown"."""
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    loses = run(write_log, "Ports and pins were set.", "loses.jsonl")
    opaque = opaque_run(write_log, "opaque.jsonl")
    out = CliRunner().invoke(app, ["diff", loses, opaque], env={"COLUMNS": "120"}).stdout
    lines = out.splitlines()
    at = next(k for k, ln in enumerate(lines) if ln.startswith("recall_debt "))
    assert lines[at].rstrip().endswith("0 -> 3")  # the baseline: rounds 0-1
    assert lines[at + 1].rstrip().endswith("0 -> unknown")  # the candidate's round 2



def test_the_diff_page_says_whose_debt_is_unknown_from_which_round(
        write_log: LogWriter) -> None:
    """usertest27 #5: the candidate's debt line stopped at round 1 with no word."""
    from compaction_audit.report.html.diff_page import render_diff_html

    loses = audit(run(write_log, "Ports and pins were set.", "loses.jsonl"))
    page = render_diff_html(diff_reports(loses, audit(opaque_run(write_log, "o.jsonl"))))
    text = page.decode() if isinstance(page, bytes) else page
    assert ("The candidate&#x27;s recall debt is unknown from round 2: the loss of a "
            "compaction there could not be checked") in text
    assert "baseline&#x27;s recall debt is unknown" not in text
