"""The Markdown report fits a pull-request comment (issue 11, item 9): GitHub refuses a
comment over 65,536 characters, so a longer report is cut and says where the rest is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from compaction_audit.api import audit_paths
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.markdown import MAX_CHARS, fit, render_markdown
from compaction_audit.report.model import Report
from tests.gate_app import drift_records
from tests.logs import dump

GITHUB_COMMENT_LIMIT = 65_536


def many(tmp_path: Path, n: int) -> Report:
    """``n`` copies of the drift trace's report under distinct paths (one audit)."""
    report = audit_paths([str(dump(drift_records(), tmp_path / "d.jsonl"))], jobs=1)
    one = report.sessions[0]
    return Report([replace(one, path=f"traces/run-{i:04d}/{'x' * 40}.jsonl")
                   for i in range(n)])


def test_markdown_for_many_traces_fits_a_comment(tmp_path: Path) -> None:
    out = render_markdown(many(tmp_path, 400), RenderOptions(fail_on="error")).decode()
    assert len(out) <= MAX_CHARS < GITHUB_COMMENT_LIMIT
    assert out.count("<details") == out.count("</details>")  # a cut section is closed
    assert "**Report cut to fit a pull-request comment**" in out
    assert "`--format json -o FILE`" in out and out.endswith("upload FILE.\n")
    shown = out.count("<details")
    assert f"{400 - shown} trace section(s)" in out
    assert ("; the end of the section cut above." in out) == ("(cut here)" in out)


def test_a_summary_too_long_for_a_comment_is_cut_in_the_table(tmp_path: Path) -> None:
    opts = RenderOptions(fail_on="error", summary_only=True)
    out = render_markdown(many(tmp_path, 1500), opts).decode()
    assert len(out) <= MAX_CHARS and "<details" not in out
    rows = out.count("| traces/run\\-")
    assert (f"Not shown: {1500 - rows} summary row(s) (passing traces last); 0 trace "
            "section(s).") in out


def test_a_short_report_is_not_cut(tmp_path: Path) -> None:
    out = render_markdown(many(tmp_path, 3), RenderOptions(fail_on="error")).decode()
    assert "cut to fit" not in out and out.count("<details") == 3


def test_fit_boundary() -> None:
    exact = ["a" * 9, "b" * 9]  # 20 characters with the newlines
    assert fit(exact, limit=20) == exact
    cut = fit(["a" * 9, "b" * 10, *(["c" * 500] * 4)], limit=1_500)
    assert cut[:1] == ["a" * 9] and "cut to fit" in cut[-1]
    assert sum(len(line) + 1 for line in cut) <= 1_500


def test_the_summary_table_names_failing_traces_first(tmp_path: Path) -> None:
    """adv33: rows came in trace order, so a failing trace sorted last was cut from a
    table of many passing ones and named nowhere in the comment."""
    report = many(tmp_path, 1500)
    passing = audit_paths([str(dump(drift_records()[:2], tmp_path / "p.jsonl"))], jobs=1)
    ok = passing.sessions[0]
    assert ok.verdict_head() == "PASS"
    sessions = [replace(ok, path=s.path) for s in report.sessions]
    sessions[-1] = report.sessions[-1]  # the last trace fails
    out = render_markdown(Report(sessions), RenderOptions(fail_on="error",
                                                          summary_only=True)).decode()
    rows = [line for line in out.splitlines() if line.startswith("| traces/")]
    assert rows[0].startswith("| traces/run\\-1499/") and "**FAIL**" in rows[0]
    assert all("**PASS**" in row for row in rows[1:])
    assert "cut to fit" in out


def test_fit_counts_utf16_units_as_github_does() -> None:
    """adv35: the cap counted code points; GitHub counts a comment's length as a
    browser does, in UTF-16 units, where an emoji is two: a report of emoji fit the
    cap and not the comment."""
    emoji = ["\U0001f600" * 9, "b" * 9]  # 19 + 10 units, 10 + 10 code points
    assert fit(emoji, limit=29) == emoji
    cut = fit(["\U0001f600" * 400] * 5, limit=2_500)  # 801 units a line
    assert cut[0] == "\U0001f600" * 400 and cut[1] != cut[0]  # one line, then the note
    assert sum(len(line.encode("utf-16-le")) // 2 + 1 for line in cut) <= 2_500
