"""The terminal report answers first (issue 13, section 2), on small logs written here:
order, the one inversion line of a log without salience, hanging indents, lists at 80
columns, caps with "N more (--all)", -q, --statistics, --format everywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.terminal import sparkline
from tests.gate_app import drift_records
from tests.logs import CORPUS, LogWriter, dump, rnd, session, spans
from tests.recall.test_severity import assistant, boundary, user

LONG_ID = "summary-" + "abcdef0123" * 5  # 58 characters, no space: never split


def invoke(*args: str, columns: int = 80) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


def claude_records() -> list[dict[str, Any]]:
    """A Claude Code session with one compaction that loses a user's instruction."""
    return [user("u1", "Never force-push to the release branch."),
            assistant("a1", "Renamed it in cli.py; the tests pass."),
            boundary("b1", "a1"),
            user("s1", "Renamed the flag.", isCompactSummary=True),
            user("u2", "Now update the changelog.")]


def test_no_salience_log_takes_one_inversion_line_and_compactions_first(
        write_log: LogWriter) -> None:
    out = invoke("audit", str(write_log(claude_records()))).stdout
    lines = [ln.rstrip() for ln in out.splitlines()]
    inversion = [ln for ln in lines if ln.startswith("  inversion")]
    # no salience recorded, a rebuilt one read; depth 1 < 2 and the boundary is an
    # event: both conditions fail
    assert inversion == ["  inversion  salience rebuilt; drift only (depth < 2, "
                         "event-driven eviction)"]
    assert "scorer does not penalize depth" not in out
    assert "query_cosine_retained" not in out  # unknown at every round: no sparkline
    assert "CA101 salience-inversion: not applicable" not in out  # said by that line
    heads = [ln for ln in lines if ln in ("Compactions (1)", "Findings",
                                          "Series at a glance", "Rounds that matter")]
    assert heads == ["Compactions (1)", "Findings", "Series at a glance",
                     "Rounds that matter"]
    last = lines[len(lines) - lines[::-1].index(""):]  # the last paragraph
    assert last[0].startswith("FAIL: ")  # the verdict last, as in pytest
    assert lines[1].startswith("  verdict    FAIL: ")  # and first, under the path
    assert len(max(lines[1:], key=len)) <= 80  # the first line: the path, never split


def test_salience_log_keeps_the_conditions_and_findings_come_first(tmp_path: Path) -> None:
    out = invoke("audit", str(dump(drift_records(), tmp_path / "d.jsonl"))).stdout
    lines = [ln.rstrip() for ln in out.splitlines()]
    assert lines[1] == "  verdict    FAIL: 4 error(s), 1 warning(s), 1 info"  # the answer first
    assert lines[5].startswith("  conditions yes re-summarization depth >= 2: ")
    assert lines.index("Findings") < lines.index("Series at a glance")
    # errors first, then warnings, then info; each rule's action once
    heads = [ln.split()[:2] for ln in lines if ln.startswith(("ERROR", "WARNING", "INFO"))]
    assert heads == [["ERROR", "CA201"], ["WARNING", "CA104"], ["INFO", "CA105"]]
    assert "  rounds 1-4 (lines 3-6):" in lines
    assert lines[-1] == "FAIL: 4 error(s), 1 warning(s), 1 info"


def test_rounds_that_matter_is_a_list_at_80_columns_and_a_table_at_120(
        tmp_path: Path) -> None:
    path = str(dump(drift_records(), tmp_path / "d.jsonl"))
    narrow = invoke("audit", path, columns=80).stdout
    wide = invoke("audit", path, columns=120).stdout
    assert "┃" not in narrow and "━" not in narrow
    assert "  round 4 (line 6): raw 0.143" in narrow
    assert "┃ findings" in wide


def long_message_records() -> list[dict[str, Any]]:
    """Ten ungrounded summaries with long ids: CA201's message names them all."""
    ids = [f"{LONG_ID}-{i}" for i in range(10)]
    return [session(session_id="wrap", budget_tokens=10_000, max_depth=3),
            rnd(0, spans=spans(*((f"x{i}", 10) for i in range(10)))),
            rnd(1, summaries=[{"id": s, "tokens": 5, "children": [f"x{i}"]}
                              for i, s in enumerate(ids)],
                evicted=[f"x{i}" for i in range(10)])]


def test_wrapped_text_keeps_a_hanging_indent_and_ids_whole(tmp_path: Path) -> None:
    out = invoke("audit", str(dump(long_message_records(), tmp_path / "w.jsonl"))).stdout
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "have no reachable leaf" in ln)
    head = lines[start]
    indent = head.index("10 retained")  # the message starts beside "round 1 (line 3): "
    assert head.startswith("  round 1 (line 3): ")
    body = []
    for ln in lines[start + 1:]:
        if not ln.startswith(" " * indent) or ln.strip().startswith("action:"):
            break
        body.append(ln)
    assert len(body) >= 5  # it wrapped, every continuation under the message
    for i in range(10):  # each id whole on one line, pasteable into `trace`
        assert sum(f"{LONG_ID}-{i}" in ln for ln in [head, *body]) == 1


def episodes_records(n: int) -> list[dict[str, Any]]:
    """``n`` separate episodes of CA104 compaction-drift at rounds 1, 3, 5, ...: at an
    odd round a 900-token summary of a new span joins the 100 raw tokens (raw_ratio
    0.1), at the next round it is evicted (raw_ratio 1.0)."""
    records: list[dict[str, Any]] = [session(session_id="eps", budget_tokens=10_000,
                                             max_depth=3),
                                     rnd(0, spans=spans(("r0", 100)))]
    for k in range(1, 2 * n + 1):
        if k % 2:
            records.append(rnd(k, spans=spans((f"s{k}", 10)), summaries=[
                {"id": f"S{k}", "tokens": 900, "children": [f"s{k}"]}],
                offloaded=[f"s{k}"]))
        else:
            records.append(rnd(k, evicted=[f"S{k - 1}"]))
    return records


def test_a_rule_head_counts_the_findings_the_verdict_counts() -> None:
    # ux5 F8: the verdict counted "2 info" under a head line that said "1 episode, 2
    # rounds"; the head now says the findings, by severity when they differ
    from compaction_audit.report.terminal import rule_count
    from compaction_audit.rules.base import Finding, Severity

    def f(n: int, sev: Severity = Severity.ERROR) -> Finding:
        return Finding("silent-discriminating-fold", "CA301", sev, n, n + 1, "m", "act")

    assert rule_count([[f(3), f(4)]]) == "2 findings in 1 episode"
    assert rule_count([[f(3)]]) == "1 finding in 1 episode"
    # two folds at round 3: three findings over two rounds, one of them a warning
    assert rule_count([[f(3), f(3, Severity.WARNING), f(4)], [f(9)]]) == (
        "4 findings (3 error, 1 warning) in 2 episodes, 3 rounds")


def test_episodes_are_capped_with_n_more_and_all_lists_them(tmp_path: Path) -> None:
    path = str(dump(episodes_records(5), tmp_path / "e.jsonl"))
    capped = invoke("audit", path, "--set", "raw_ratio_floor=0.25").stdout
    assert "WARNING CA104 compaction-drift  5 findings in 5 episodes" in capped
    assert "  ... 2 more episodes of CA104 (rounds 7, 9) (--all)" in capped
    every = invoke("audit", path, "--all").stdout
    assert "more episodes of CA104" not in every
    assert all(f"  round {k} (line {k + 2}): compaction drift" in every for k in (1, 7, 9))


def test_the_findings_of_one_round_are_counted_and_all_lists_each(
        write_log: LogWriter) -> None:
    """usertest37 #3: a summary's four invented claims were one episode of one round,
    "4 findings", and the text report showed the first alone, with --all too."""
    path = str(write_log([
        session(), rnd(0, spans=[{"id": "u1", "tokens": 50, "text": "Raise the timeout.",
                                  "source": "user"}]),
        rnd(1, summaries=[{"id": "c1", "tokens": 10, "children": ["u1"],
                           "text": "Ticket INC-0042 requires lib3==2.0.0."}],
            evicted=["u1"])]))
    claims = ["summary c1 states identifier 'INC-0042' (no raw leaf supports it)",
              "summary c1 states version 'lib3==2.0.0' (no raw leaf supports it)",
              "summary c1 states identifier 'lib3' (no raw leaf supports it)"]

    def episode(*options: str) -> list[str]:
        lines = invoke("audit", path, *options, columns=100).stdout.splitlines()
        at = lines.index("  round 1 (line 3, 3 findings):")
        return [ln.strip() for ln in lines[at + 1:at + 4]]

    assert episode() == [claims[0], "... 2 more finding(s) in this episode (--all)",
                         "action: drop the claim or cite its source; check the summaries "
                         "it was carried from"]
    assert episode("--all") == claims


def test_quiet_prints_the_verdict_only(tmp_path: Path) -> None:
    one = str(dump(drift_records(), tmp_path / "a.jsonl"))
    result = invoke("audit", one, "-q")
    assert result.exit_code == 1
    assert result.stdout == "FAIL: 4 error(s), 1 warning(s), 1 info\n"
    two = str(dump(drift_records(), tmp_path / "b.jsonl"))
    lines = invoke("audit", one, two, "--quiet", "-j", "1").stdout.splitlines()
    assert [ln.split(": ")[0] for ln in lines[:2]] == [one, two]
    assert lines[2] == "exit 1: 2 trace(s), 2 reach --fail-on error"
    assert len(lines) == 3
    refused = invoke("audit", one, "-q", "--format", "json")
    assert refused.exit_code == 2


def test_quiet_verdict_of_one_trace_is_one_line_at_any_width(tmp_path: Path) -> None:
    # narrower than the verdict: the report wraps it under an indent, -q never does
    one = str(dump(drift_records(), tmp_path / "a.jsonl"))
    assert invoke("audit", one, "-q", columns=20).stdout == \
        "FAIL: 4 error(s), 1 warning(s), 1 info\n"
    report = invoke("audit", one, columns=20).stdout.splitlines()
    assert report[-2:] == ["FAIL: 4 error(s), 1", "  warning(s), 1 info"]


def test_statistics_counts_findings_per_rule(tmp_path: Path) -> None:
    one = str(dump(drift_records(), tmp_path / "a.jsonl"))
    two = str(dump(drift_records(), tmp_path / "b.jsonl"))
    result = invoke("audit", one, two, "--statistics", "-j", "1")
    assert result.exit_code == 1
    # per trace: CA201 at rounds 1-4 (one episode), CA104 and CA105 at round 4
    assert result.stdout.splitlines() == [
        "2 traces, 2 reach --fail-on error (exit 1)",  # the answer first (usertest32 #7)
        "8  CA201  ungrounded-summary  (2 episodes, error)",
        "2  CA104  compaction-drift  (2 episodes, warning)",
        "2  CA105  summary-majority  (2 episodes, info)",
        "exit 1: 2 trace(s), 2 reach --fail-on error"]


def test_format_is_spelled_the_same_in_trace_and_config_show(tmp_path: Path) -> None:
    path = str(dump(drift_records(), tmp_path / "a.jsonl"))
    for args in (("trace", path, "s1"), ("config", "show", "--isolated")):
        by_format = invoke(*args, "--format", "json")
        by_short = invoke(*args, "-f", "json")
        by_flag = invoke(*args, "--json")
        assert by_format.exit_code == 0, by_format.output
        assert json.loads(by_format.stdout) == json.loads(by_flag.stdout)
        assert by_short.stdout == by_format.stdout
        assert not invoke(*args, "--format", "text").stdout.startswith("{")
    for command in ("audit", "diff", "trace"):
        assert "--format" in invoke(command, "--help", columns=200).stdout
    assert "--format" in invoke("config", "show", "--help", columns=200).stdout


def test_summary_lists_whole_paths_at_80_columns(tmp_path: Path) -> None:
    deep = tmp_path / ("a-directory-with-a-long-name-" * 3) / "trace.jsonl"
    deep.parent.mkdir()
    dump(drift_records(), deep)
    other = dump(drift_records(), tmp_path / "b.jsonl")
    out = invoke("audit", str(deep), str(other), "-j", "1").stdout
    tail = out[out.rindex("Summary"):].splitlines()
    assert f"    {deep}" in tail  # on a line of its own, whole
    assert "  FAIL  5 rounds, 4 error(s), 1 warning(s), 1 info" in tail


def test_fully_baselined_trace_prints_no_lost_lists(tmp_path: Path) -> None:
    path = str(dump(claude_records(), tmp_path / "c.jsonl"))
    base = tmp_path / "base.json"
    assert invoke("baseline", "create", path, "-o", str(base)).exit_code == 0
    out = invoke("audit", path, "--baseline", str(base)).stdout
    assert "facts that matter first" not in out and "Compactions" not in out
    assert "finding(s) are in the baseline: nothing new" in out
    assert out.splitlines()[-1].startswith("exit 0: 1 trace(s)")


def test_fully_baselined_trace_markdown_has_no_lost_list(tmp_path: Path) -> None:
    path = str(dump(claude_records(), tmp_path / "c.jsonl"))
    base = tmp_path / "base.json"
    assert invoke("baseline", "create", path, "-o", str(base)).exit_code == 0
    before = invoke("audit", path, "-f", "markdown").stdout
    assert "those that matter first" in before
    md = invoke("audit", path, "--baseline", str(base), "-f", "markdown").stdout
    assert "those that matter first" not in md
    assert "finding(s) are in the baseline: nothing new." in md


def test_thresholds_and_rules_are_lists_at_80_columns_and_tables_at_120() -> None:
    from compaction_audit.rules import RULES
    from compaction_audit.settings import describe

    narrow = invoke("thresholds").stdout
    assert "┃" not in narrow
    first = describe()[0]
    assert f"{first['name']} = {first['default']}" in narrow.splitlines()
    assert "┃ meaning" in invoke("thresholds", columns=120).stdout
    rules = invoke("rules").stdout
    assert "┃" not in rules
    heads = [ln.split(":")[0].strip() for ln in rules.splitlines() if ln.startswith("  CA")]
    expected = [f"{code} {cls.name} ({cls.severity.value}"
                + (f"; {cls.severity_note})" if cls.severity_note else ")")
                for code, cls in sorted(RULES.items())]
    assert len(heads) == len(expected)  # a long head wraps: its first line starts it
    assert [e if e.startswith(h) else h for h, e in zip(heads, expected, strict=True)] \
        == expected
    # usertest56 #9: the table marks a severity that varies, and says where to read how
    wide = invoke("rules", columns=160).stdout
    assert "│ CA305 │ unsupported-summary-claim  │ warning* │" in wide
    assert "│ CA306 │ stale-summary              │ warning  │" in wide
    assert "* varies with what a finding holds: compaction-audit rules CODE" in wide
    assert "┃ summary" in invoke("rules", columns=120).stdout


def test_diff_divergence_is_a_list_at_80_columns(tmp_path: Path) -> None:
    base = str(dump(drift_records(), tmp_path / "a.jsonl"))
    records = drift_records()
    records[-1]["summaries"][0]["tokens"] = 40  # round 4's summary 30 tokens larger
    cand = str(dump(records, tmp_path / "b.jsonl"))
    narrow = invoke("diff", base, cand).stdout
    part = narrow[narrow.index("Rounds where the series diverge"):narrow.index("Findings")]
    assert "┃" not in part
    assert "  round 4: raw_ratio 0.143 -> " in part
    wide = invoke("diff", base, cand, columns=250).stdout
    assert "raw_ratio ┃ distinct_source_spans" in wide


def test_raw_ratio_sparkline_spans_zero_to_one(write_log: LogWriter) -> None:
    """New user trial: a compaction that kept most raw tokens (raw_ratio 1.000 -> 0.741)
    drew its second mark on the bottom row, as if raw_ratio had collapsed."""
    from tests.recall.test_severity import assistant, boundary, user

    records = [user("u1", "Update the staging config."),
               assistant("a1", "Set read_timeout_ms to 45000 in config/staging.toml."),
               boundary("b1", "a1"),
               user("s1", "Updated the staging config.", isCompactSummary=True),
               assistant("a2", "Checked: read_timeout_ms is 45000 in config/staging.toml.")]
    out = invoke("audit", str(write_log(records))).stdout
    assert "  raw_ratio              █▆  1.000 -> 0.741" in out
    assert "  distinct_source_spans  █▁  2 -> 1" in out  # the others: min to max
    assert sparkline([1.0, 0.89, 0.5, 0.1, 0.0], scale=(0.0, 1.0)) == "█▇▄▁▁"
    assert sparkline([1.0, 0.89]) == "█▁"


def test_diff_says_its_verdict_first_under_the_runs_and_last(tmp_path: Path) -> None:
    # new user trial: the answer was only the 166th line of sample (a) against (b)
    base = str(dump(drift_records(), tmp_path / "a.jsonl"))
    records = drift_records()
    records[-1]["summaries"][0]["tokens"] = 40
    cand = str(dump(records, tmp_path / "b.jsonl"))
    lines = invoke("diff", base, cand).stdout.splitlines()
    assert lines[3:5] == ["verdict    inversion onset unchanged: none -> none; 0 new, 0 "
                          "resolved, 3", "           persisting finding unit(s); series "
                          "differ at 1 round(s)"]
    assert lines[-1] == ("inversion onset unchanged: none -> none; 0 new, 0 resolved, 3 "
                         "persisting finding unit(s); series differ at 1 round(s)")


def test_native_lost_fact_names_its_span_the_line_it_was_stated_and_the_fold(
        write_log: LogWriter) -> None:
    from tests.recall.test_report_lists import many_facts_log

    out = invoke("audit", str(many_facts_log(write_log)), columns=200).stdout
    # u16 ("quartz") is stated in round 0's record (line 1); fold F at round 1 (line 2)
    assert ("    negation    Never rename the quartz bucket  (span u16, stated at line 1; "
            "lost to fold F at round 1)") in out.splitlines()


def test_hang_keeps_every_line_under_its_indent_without_trailing_spaces() -> None:
    import io

    from rich.console import Console

    from compaction_audit.report.terminal_text import hang, w

    out = io.StringIO()
    console = Console(file=out, width=40, color_system=None)
    body = w("::error title=x:: " + "word " * 12 + "x" * 50 + " end")
    console.print(hang("head: ", body, indent=2), crop=False)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("  head: ::error title=x::")
    assert len(lines) > 3
    assert all(ln.startswith(" " * 8) and ln[8] != " " for ln in lines[1:])
    assert all(ln == ln.rstrip() and len(ln) <= 40 for ln in lines)
    assert "".join(ln.strip() for ln in lines).count("x" * 32) == 1  # folded, not cut


def test_folds_and_the_lost_list_count_each_fact_once(write_log: LogWriter) -> None:
    # u0 and u1 state one fact: 3 drops (2 of it, 1 of a1's cli.py), 2 distinct facts,
    # both lost (no span still holds them); the Folds section said "3 drop(s)"
    records = [user("u1", "Never force-push to the release branch."),
               user("u0", "Never force-push to the release branch."),
               *claude_records()[1:]]
    log = write_log(records)
    out = invoke("audit", str(log), columns=200).stdout
    lines = [ln.strip() for ln in out.splitlines()]
    doc = json.loads(invoke("audit", str(log), "--format", "json").stdout)
    assert [(r["dropped"], r["facts"], r["lost"]) for r in doc["folded_rounds"]] == [(3, 2, 2)]
    # the compaction says "2 lost"; with nothing still held the Folds section would only
    # repeat it (usertest8: the same count three times), so it is left out
    assert any(ln.endswith("; 2 lost") for ln in lines), lines
    assert "Folds that dropped discriminators" not in lines
    # where another span still holds a fact it dropped, the section says so
    cline = invoke("audit", str(Path(__file__).parent / "fixtures" / "adapters" / "cline"
                                / "basic.compaction.json"), columns=200).stdout
    kept = [ln.strip() for ln in cline.splitlines()]
    assert "Folds that dropped discriminators" in kept
    assert ("round 3 (line 7 of basic.compaction.json): 3 fact(s) dropped by line-7: 2 lost, "
            "1 still held") in kept
    assert ("2 distinct lost discriminator(s) (a fact several children stated is one): "
            "listed under Compactions") in kept


def test_a_fact_dropped_by_a_fold_and_lost_at_a_later_eviction_names_both_rounds(
        write_log: LogWriter) -> None:
    fact = {"id": "a", "tokens": 20, "text": "Never rename the quartz bucket.",
            "source": "user"}
    log = [rnd(0, spans=[fact]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"],
                              "text": "Discussed the buckets."}], offloaded=["a"]),
           rnd(2, evicted=["a"])]
    out = invoke("audit", str(write_log(log)), columns=200).stdout
    assert ("(span a, stated at line 1; dropped by fold F at round 1, lost at round 2)"
            in out)


def test_one_more_episode_is_said_in_the_singular(tmp_path: Path) -> None:
    # 4 episodes of one round each: the text report lists 3, SARIF 5 of 6
    path = str(dump(episodes_records(4), tmp_path / "e.jsonl"))
    text = invoke("audit", path).stdout
    assert "  ... 1 more episode of CA104 (round 7) (--all)" in text
    six = str(dump(episodes_records(6), tmp_path / "six.jsonl"))
    sarif = json.loads(invoke("audit", six, "-f", "sarif").stdout)
    notes = [n["message"]["text"]
             for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert notes == ["1 more episode of CA104 compaction-drift (1 finding, round 11) not "
                     "listed (--all lists them)"]


def test_no_line_of_a_chart_or_table_ends_in_spaces(tmp_path: Path) -> None:
    # ux6: a grid or table pads its cells, and every line of "Series at a glance",
    # "Rounds that matter" and diff's onsets and series ended in spaces
    path = str(dump(drift_records(), tmp_path / "d.jsonl"))
    other = str(dump(episodes_records(3), tmp_path / "e.jsonl"))
    for args in (("audit", path), ("audit", path, other), ("diff", path, other)):
        for columns in (100, 60):
            out = invoke(*args, "--isolated", columns=columns).stdout
            assert "  flagged  " in out or args[0] == "diff"
            assert [ln for ln in out.splitlines() if ln != ln.rstrip()] == []
    glance = invoke("audit", path, "--isolated", columns=100).stdout.splitlines()
    assert "  raw_ratio              \u2588\u2586\u2586\u2586\u2582  1.000 -> 0.143" in glance


def test_trimmed_keeps_styles_and_lines() -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from compaction_audit.report.terminal_text import Trimmed

    grid = Table.grid(padding=(0, 2))
    grid.add_column()
    grid.add_column()
    grid.add_row("a", Text("red", style="red"))
    grid.add_row("long cell", "")
    console = Console(width=40, force_terminal=True, color_system="standard")
    with console.capture() as cap:
        console.print(Trimmed(grid))
    assert cap.get() == "a          \x1b[31mred\x1b[0m\nlong cell\n"


def test_legends_are_said_where_needed_and_at_the_screens_width(tmp_path: Path) -> None:
    # ux6: "flagged" printed "E error, w warning" beside no mark, and the legend of
    # "Rounds that matter" wrapped at the table's width (78 of 100 columns)
    quiet = [session(session_id="q", budget_tokens=10_000),
             rnd(0, spans=spans(("a", 100))), rnd(1, spans=spans(("b", 100)))]
    out = invoke("audit", str(dump(quiet, tmp_path / "q.jsonl")), "--isolated",
                 columns=100).stdout.splitlines()
    [flagged] = [ln for ln in out if ln.startswith("  flagged")]
    assert flagged.split() == ["flagged", "none"]
    drift = invoke("audit", str(dump(drift_records(), tmp_path / "d.jsonl")), "--isolated",
                   columns=100).stdout.splitlines()
    # usertest32 #8: its CA105 is info, which no mark shows: the legend says so
    assert next(ln for ln in drift if ln.startswith("  flagged")).endswith(
        "E error, w warning; info not marked")
    at = next(i for i, ln in enumerate(drift)
              if ln.startswith("  each value at its round's end; raw = raw_ratio"))
    legend = drift[at:at + 3]
    assert max(len(ln) for ln in legend) > 80 and all(len(ln) <= 100 for ln in legend)


def test_statistics_name_each_severity_of_a_rule_that_has_several() -> None:
    # ux7: CA301's severity follows what a fold lost; "(8 episodes, error)" hid that 14
    # of its 40 findings on research-decay are warnings
    from tests.logs import SAMPLES

    result = invoke("audit", str(SAMPLES / "research-decay.jsonl"), "--statistics")
    assert " 40  CA301  silent-discriminating-fold  (8 episodes, 25 error, 15 warning)" \
        in result.stdout.splitlines()
    assert " 24  CA103  depth-pin  (1 episode, error)" in result.stdout.splitlines()


def test_our_own_lists_wrap_under_an_indent_with_no_trailing_space() -> None:
    # ux7: the diff's gate reason, config show's rule list and a rule's documentation
    # went back to column 0 or ended lines in spaces
    from tests.logs import SAMPLES

    gated = invoke("diff", str(SAMPLES / "research-no-decay.jsonl"),
                   str(SAMPLES / "research-decay.jsonl"), "--fail-on-new", "error",
                   columns=60).stdout.splitlines()
    start = gated.index("Gates FAILED (--fail-on-new error):")
    reason = gated[start + 1:gated.index("", start)]
    heads = [i for i, x in enumerate(reason) if not x.startswith("    ")]
    # 89 since usertest38 #4: research-decay's 0.72, stated only as "not 0.72", is no
    # longer held by a later "rose ... to 0.72": its CA301 findings count one more lost
    # fact, and one more of them is new (the simulator tags its facts' spans
    # "discriminating": their units weigh as their folds, usertest66 F4, adv127 #2)
    assert reason[0].startswith("  89 new finding unit(s) at or above error: ")
    assert reason[heads[1]].startswith("  23 persisting finding unit(s) now at or above")
    assert heads == [0, heads[1]] and heads[1] > 1  # each reason wraps under 4 spaces
    assert all(x.startswith("  ") for x in reason)
    shown = invoke("config", "show", "--isolated", columns=40).stdout.splitlines()
    i = next(i for i, x in enumerate(shown) if x.startswith("rules run: CA101, "))
    assert shown[i + 1].startswith("           CA")
    doc = invoke("rules", "CA301", columns=60).stdout.splitlines()
    assert len(doc) > 20 and all(x == x.rstrip() for x in doc)
    assert all(len(x) <= 60 for x in doc)


def test_a_product_log_s_findings_say_what_its_user_can_do(tmp_path: Path) -> None:
    # ux7: "offload instead of evict" and "start watching reachability" are a logger
    # author's actions; a Claude Code user can re-read, instruct /compact, pin rules
    from compaction_audit.api import audit
    from compaction_audit.rules import RULES
    from tests.logs import SAMPLES

    product = audit(str(dump(claude_records(), tmp_path / "c.jsonl")))
    native = audit(str(SAMPLES / "research-decay.jsonl"))
    for code in ("CA301", "CA105"):
        cls = RULES[code]
        assert cls.product_action and cls.product_action != cls.action
        own = cls.product_actions.get("claude-code", cls.product_action)
        assert {f.action for f in product.findings if f.code == code} == {own}
        assert {f.action for f in native.findings if f.code == code} == {cls.action}
    result = invoke("audit", str(tmp_path / "c.jsonl"), columns=200)
    # (usertest26 #4: once, under load, stdout was empty: say what the command did)
    assert "  action: before a decision rests on a lost fact, read it again at the line shown" \
        in result.stdout, (result.exit_code, result.stderr, result.exception)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize(("name", "own", "other"), [
    ("claude-code/spotter-auto-compact.jsonl", "(CLAUDE.md)", "AGENTS.md"),
    ("codex/synthetic-local-compaction.jsonl", "(AGENTS.md)", "CLAUDE.md"),
    ("cline", "(.clinerules)", "CLAUDE.md")])
def test_a_product_s_fold_action_names_its_own_file(name: str, own: str, other: str) -> None:
    # usertest5: the CA301 action of a Cline or Codex report advised Claude Code's
    # /compact and CLAUDE.md
    from compaction_audit.api import audit_paths
    from compaction_audit.discover import discover

    (report, *_) = audit_paths(discover([str(CORPUS / name)])).sessions
    (action,) = {f.action for f in report.findings if f.code == "CA301"}
    assert action.endswith(own) and other not in action
    assert ("/compact" in action) == (own == "(CLAUDE.md)")


def test_statistics_name_each_unreadable_trace(tmp_path: Path) -> None:
    # adv28 F8: "exit 2: ... 1 unreadable" and nothing named the file or the reason
    one = str(dump(drift_records(), tmp_path / "a.jsonl"))
    (tmp_path / "b.jsonl").write_text("{bad\n")
    out = invoke("audit", one, str(tmp_path / "b.jsonl"), "--statistics", "-j", "1",
                 columns=200).stdout.splitlines()
    assert out[-2:] == [
        f"error: {tmp_path}/b.jsonl:1: bad JSON: unexpected character, expected a string key",
        "exit 2: 2 trace(s), 1 reach --fail-on error, 1 unreadable"]


def test_a_product_without_its_own_advice_gets_no_other_product_s() -> None:
    # adv44: OpenHands' CA301 action named Claude Code's /compact and CLAUDE.md
    from compaction_audit.api import audit
    from compaction_audit.rules import RULES
    from tests.logs import ROOT

    report = audit(str(ROOT / "tests" / "fixtures" / "adapters" / "openhands"
                       / "condensation.json"))
    actions = {f.action for f in report.findings if f.code == "CA301"}
    assert actions == {RULES["CA301"].product_action}
    assert not any(word in a for a in actions for word in ("Claude", "CLAUDE", "AGENTS"))


def test_several_traces_say_first_that_the_summary_is_at_the_end(tmp_path: Path) -> None:
    """usertest9: the first screen of a folder of three traces was the first trace's
    report, with nothing saying two more and a summary followed."""
    for name in ("a.jsonl", "b.jsonl"):
        dump([session(session_id=name), rnd(0, spans=spans(("s", 5)))], tmp_path / name)
    out = invoke("audit", str(tmp_path), columns=200).stdout.splitlines()
    assert out[0] == ("2 traces, 0 reach --fail-on error (exit 0): a report for each, "
                      "then the summary at the end (--summary: the summary alone; -q: a "
                      "line each)")
    assert out[1] == f"compaction-audit {tmp_path / 'a.jsonl'}"
    assert "Summary" in out
    # one trace, --summary and -q: no such line
    assert not invoke("audit", str(tmp_path / "a.jsonl")).stdout.startswith("2 traces")
    for option in ("--summary", "-q"):
        assert "a report for each" not in invoke("audit", str(tmp_path), option).stdout
    # --summary: the gate's tally, then the table (usertest32 #7); -q: a line each
    assert invoke("audit", str(tmp_path), "--summary").stdout.splitlines()[:2] == [
        "2 traces, 0 reach --fail-on error (exit 0)", "Summary"]
    assert invoke("audit", str(tmp_path), "-q").stdout.startswith(f"{tmp_path / 'a.jsonl'}")
    # usertest31 #5: the gate's tally is on the first line too, unreadable traces named
    (tmp_path / "c.jsonl").write_text("not json\n")
    dump(drift_records(), tmp_path / "d.jsonl")  # warnings and errors
    out = invoke("audit", str(tmp_path), "--fail-on", "info", columns=200).stdout
    assert out.splitlines()[0].startswith(
        "4 traces, 1 reach --fail-on info, 1 unreadable (exit 2): a report for each")
    assert "exit 2: 4 trace(s), 1 reach --fail-on info, 1 unreadable" in out


def test_a_rebuilt_salience_whose_conditions_hold_is_no_not_applicable() -> None:
    """usertest19 #2: delta-text records no salience, and the rules read the rebuilt
    cosine: the header said "not applicable: no salience recorded" right below a
    verdict naming the inversion onset and boundary they found with it."""
    from tests.logs import SAMPLES

    lines = invoke("audit", str(SAMPLES / "delta-text.jsonl")).stdout.splitlines()
    assert [ln.rstrip() for ln in lines if ln.startswith("  inversion  ")] == [
        "  inversion  salience rebuilt; no condition of inversion fails"]
    assert "inversion onset at" in lines[1]


def test_the_legend_says_when_raw_ratio_counts_an_estimated_encrypted_summary() -> None:
    # usertest31 #3: "raw 0.792" after a Codex remote compaction rests on the adapter's
    # estimate of a summary the product encrypted; a readable summary is measured
    from tests.foreign import FIXTURES

    remote = invoke("audit", str(FIXTURES / "codex-remote.jsonl"), "--isolated",
                    columns=300).stdout
    assert ("  each value at its round's end; raw = raw_ratio (from round 1 on, an "
            "encrypted summary counted at a size estimated from its ciphertext's length, "
            "not the product's token count), spans = ") in remote
    local = invoke("audit", str(FIXTURES / "codex-local.jsonl"), "--isolated",
                   columns=300).stdout
    assert "  each value at its round's end; raw = raw_ratio, spans = " in local
    assert "encrypted summary" not in local


@pytest.mark.parametrize("fmt", ["json", "html", "github", "sarif", "junit"])
def test_summary_with_another_format_is_refused(tmp_path: Path, fmt: str) -> None:
    """usertest46 #7: ``--summary -f json`` wrote the whole report and exit 1, silently,
    where ``-q -f json`` is refused: it applies to text and Markdown only."""
    dump([session(), rnd(0, spans=spans(("s", 5)))], tmp_path / "a.jsonl")
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "a.jsonl"), "--summary",
                                      "-f", fmt])
    assert result.exit_code == 2
    assert "--summary applies to --format text and markdown" in result.output
    for ok in ("text", "markdown"):
        done = CliRunner().invoke(app, ["audit", str(tmp_path / "a.jsonl"), "--summary",
                                        "-f", ok])
        assert done.exit_code == 0, done.output


def test_sparklines_of_values_near_a_float_s_largest() -> None:
    """adv94 #2: salience 1e308 then -1e308 made the range past a float (NaN: "cannot
    convert float NaN to integer", exit 2), and a bucket of two 1e308 summed to inf."""
    from compaction_audit.report.terminal import SPARK, bucket_means, spark_marks

    assert spark_marks([1e308, -1e308]) == SPARK[-1] + SPARK[0]
    assert spark_marks([-1e308, 0.0, 1e308]) == SPARK[0] + SPARK[3] + SPARK[-1]
    assert bucket_means([1e308, 1e308], width=1) == [1e308]
    assert spark_marks([0.2, None, 0.6], (0.0, 1.0)) == SPARK[1] + " " + SPARK[4]


def test_a_report_and_a_diff_of_such_saliences(tmp_path: Path) -> None:
    def log(name: str, first: float, second: float) -> str:
        return str(dump([session(), rnd(0, spans=spans(("a", 1)), retained=[["a", first]]),
                         rnd(1, retained=[["a", second]])], tmp_path / name))

    both = log("both.jsonl", 1e308, -1e308)
    assert invoke("audit", both).exit_code == 0
    high, low = log("high.jsonl", 1e308, 1e308), log("low.jsonl", -1e308, -1e308)
    assert invoke("diff", high, low).exit_code == 0


def test_a_huge_float_in_a_message_is_written_with_an_exponent() -> None:
    """adv94 #10: a logged raw_ratio of 1e308 was printed as 309 digits."""
    from compaction_audit.rules.base import fmt

    assert fmt(1e308) == "1.000e+308" and fmt(-2.5e15) == "-2.500e+15"
    assert fmt(999999999999999.0) == "999999999999999.000" and fmt(0.25) == "0.250"
    assert fmt(None) == "unknown" and fmt(3) == "3"
    assert fmt(10 ** 308) == "1.000e+308" and fmt(10 ** 15 - 1) == str(10 ** 15 - 1)


def test_a_logged_value_near_a_float_s_largest_is_short(write_log: LogWriter) -> None:
    """usertest48 #4: CA203 reads a whole float as an int, so 1e308 kept its digits."""
    from compaction_audit.api import audit

    log = [session(), rnd(0, spans=spans(("a", 1)), logged={"raw_ratio": 1e308})]
    [message] = [f.message for f in audit(str(write_log(log))).findings if f.code == "CA203"]
    assert "raw_ratio logged 1.000e+308" in message and len(message) < 300
