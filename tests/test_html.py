"""The HTML report without a browser: same bytes for the same input, escaping, the
Content-Security-Policy, bounded chart data, the missing-extra error (issue 13, §1)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.html import data
from compaction_audit.report.html.page import esc, script_json
from tests.html_text import unlabelled
from tests.logs import SAMPLES, LogWriter, rnd, session

RUNNER = CliRunner()


def html_of(*args: str) -> str:
    result = RUNNER.invoke(app, [*args, "--format", "html"])
    assert result.exit_code in (0, 1), result.output
    return unlabelled(result.stdout)


def page_data(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="ca-data">(.*?)</script>', page, re.S)
    assert m is not None
    loaded: dict[str, Any] = json.loads(m.group(1))
    return loaded


def test_same_input_same_bytes_and_the_policy_names_both_scripts() -> None:
    log = str(SAMPLES / "research-decay.jsonl")
    first, second = html_of("audit", log), html_of("audit", log)
    assert first == second
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', first)
    assert csp is not None
    policy = csp.group(1)
    assert policy.startswith("default-src 'none'; script-src 'sha256-")
    assert "connect-src 'none'" in policy and "img-src data:" in policy
    scripts = re.findall(r"<script>(.*?)</script>", first, re.S)
    assert len(scripts) == 2  # the Vega bundle and the page's own script
    for s in scripts:
        digest = base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "http://" not in "".join(scripts[1:]) and "https://" not in scripts[1]
    # no element may load anything: no src or href other than in-page anchors
    assert re.findall(r'\s(?:src|href)="(?!#)', first.split("<script>")[0]) == []
    d = page_data(first)
    assert d["kind"] == "audit" and [s["id"] for s in d["sections"]] == ["s0"]
    assert sorted(d["sections"][0]["charts"]) == ["s0-debt", "s0-series"]


def test_log_text_is_escaped_everywhere(write_log: LogWriter) -> None:
    evil = '</script><script>alert(1)</script><b onmouseover="x">&amp;\u2028'
    path = write_log([session(session_id=evil),
                      rnd(0, spans=[{"id": "u1", "tokens": 20, "source": "user",
                                     "text": f"Do NOT enable --force on prod {evil}"}]),
                      rnd(1, summaries=[{"id": "F" + evil, "tokens": 5, "children": ["u1"],
                                         "text": "Noted."}], evicted=["u1"])])
    page = html_of("audit", str(path))
    assert "<b onmouseover" not in page and "<script>alert" not in page
    assert page.count("</script>") == 3  # the JSON block and the two scripts
    assert esc(evil) in page  # shown, escaped: &lt;/script&gt;...
    assert "\u2028" not in page
    # the JSON block holds the fold id with <, >, & escaped, and parses back to it
    block = page.split('id="ca-data">')[1].split("</script>")[0]
    assert "<" not in block and ">" not in block and "&" not in block
    items = page_data(page)["sections"][0]["items"]
    assert any(evil in i["text"] for i in items)


def test_script_json_escapes_what_could_close_the_block() -> None:
    out = script_json({"t": "</script><!-- & \u2028\u2029"})
    assert out == ('{"t":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029"}')
    assert json.loads(out) == {"t": "</script><!-- & \u2028\u2029"}


def test_the_pages_json_holds_a_ci_command_as_written(tmp_path: Path) -> None:
    """adv100 #8: the command breaker wrote the ``#`` of ``##[``/``##vso[`` inside the
    JSON block as ``&#35;``, which a script element does not decode: the page showed
    "&#35;#".  The JSON writes it ``\\u0023``: nothing to break, the text unchanged."""
    from compaction_audit.cli import app

    sid = "S1 ##[add-mask]x ##vso[task.setvariable variable=a]b"
    log = tmp_path / "t.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"type": "session", "schema": "compaction-audit/1", "budget_tokens": 1000},
        {"type": "round", "round": 0, "spans": [{"id": "u", "tokens": 10, "source": "user",
                                                  "text": "Set read_timeout_ms to 45000."}]},
        {"type": "round", "round": 1, "evicted": ["u"], "summaries": [
            {"id": sid, "tokens": 5, "children": ["u"], "text": "Config changed."}]}]) + "\n")
    out = tmp_path / "t.html"
    CliRunner().invoke(app, ["audit", str(log), "-f", "html", "-o", str(out)])
    page = out.read_text()
    block = page.split('id="ca-data">', 1)[1].split("</script>", 1)[0]
    assert "&#35;" not in block and "##" not in block
    assert sid in json.dumps(json.loads(block), ensure_ascii=False)


def test_downsample_bounds_the_points_and_averages_buckets() -> None:
    n = 10_000
    frame = pl.DataFrame({"round": range(n), "line": range(2, n + 2),
                          "raw_ratio": [float(i % 10) for i in range(n)]})
    small = data.downsample(frame, ["raw_ratio", "missing"], max_points=1000)
    assert small.height == 1000 and small.columns == ["round", "round_end", "line",
                                                      "raw_ratio"]
    # buckets of 10 rounds: 0..9 -> mean 4.5, first line 2
    assert small.row(0) == (0, 9, 2, 4.5)
    assert small.row(-1) == (9990, 9999, 9992, 4.5)
    same = data.downsample(frame.head(5), ["raw_ratio"], max_points=1000)
    assert same["round_end"].to_list() == [0, 1, 2, 3, 4]


def test_a_long_trace_gives_a_small_page(tmp_path: Path) -> None:
    """20,000 rounds: the charts hold at most MAX_POINTS points per quantity."""
    lines = [json.dumps(session(max_depth=3))]
    lines.append(json.dumps(rnd(0, spans=[{"id": "a", "tokens": 10}])))
    lines += [json.dumps(rnd(i)) for i in range(1, 20_000)]
    log = tmp_path / "long.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = html_of("audit", str(log))
    d = page_data(page)["sections"][0]
    assert len(d["rounds"]["rows"]) == data.MAX_POINTS and d["rounds"]["bucketed"]
    assert len(page.encode()) < 3_000_000
    assert "Each point is the mean of about 20 rounds." in page


def test_episodes_group_consecutive_rounds_as_the_terminal_does() -> None:
    from compaction_audit.rules.base import Finding, Severity

    def f(code: str, n: int) -> Finding:
        return Finding("r" + code, code, Severity.WARNING, n, n + 1, f"m{n}", "act")

    eps = data.episodes([f("CA2", 3), f("CA1", 5), f("CA1", 6), f("CA1", 9), f("CA1", 6)])
    assert [(e.code, e.first_round, e.last_round, e.rounds, e.findings) for e in eps] == [
        ("CA1", 5, 6, 2, 3), ("CA1", 9, 9, 1, 1), ("CA2", 3, 3, 1, 1)]
    assert eps[0].where() == "rounds 5-6 (lines 6-7, 3 findings)"  # as the verdict counts
    assert eps[1].where() == "round 9 (line 10)"


def test_tier_fields_are_shown_when_present() -> None:
    from compaction_audit.report.html.sections import lost_table

    row = {"kind": "negation", "text": "Do NOT <x>", "span": "s1", "cause": "fold",
           "fold": "F", "lost_round": 3, "lost_line": 4, "asked_again_round": 7}
    plain = unlabelled(lost_table([row]))
    assert "<th>tier</th>" not in plain and "Do NOT &lt;x&gt;" in plain
    assert '<td class="asked">round 7</td>' in plain
    tiered = unlabelled(lost_table([{**row, "tier": 1, "tier_name": "user constraint",
                          "tier_why": "the user said it", "span_line": 12}]))
    assert "<th>tier</th>" in tiered and "user constraint" in tiered
    assert 'title="the user said it"' in tiered and '<td class="num">12</td>' in tiered
    same = lost_table([{**row, "tier": 2, "tier_name": "typed by a person",
                        "tier_why": "typed by a person"}])
    assert same.count("typed by a person") == 1 and "title=" not in same


def test_a_tier_reason_is_said_once_for_the_rows_that_share_it() -> None:
    """usertest53 #8: "a requirement from spec text" under each of 15 rows; said on the
    first row of a run of one reason (and in every row's title)."""
    from compaction_audit.report.html.sections import lost_table

    def row(i: int, tier: int, why: str) -> dict[str, Any]:
        return {"kind": "requirement", "text": f"r{i}", "span": f"s{i}", "tier": tier,
                "tier_name": "spec requirement", "tier_why": why}

    page = lost_table([row(0, 3, "from spec"), row(1, 3, "from spec"),
                       row(2, 4, "a decision"), row(3, 3, "from spec")])
    notes = [part.split("</span>")[0] for part in page.split('<span class="dim">')[1:]]
    assert notes == ["from spec", "a decision", "from spec"]
    assert page.count('title="from spec"') == 3


def test_missing_extra_is_a_one_line_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_altair(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "altair":
            raise ImportError("No module named 'altair'", name="altair")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_altair)
    result = RUNNER.invoke(app, ["audit", str(SAMPLES / "handwritten.jsonl"), "-f", "html"])
    assert result.exit_code == 2
    assert result.output == ("compaction-audit: --format html needs the [html] extra "
                             "(altair is missing): pip install 'compaction-audit[html]' "
                             "(in a clone: pip install '.[html]')\n")
    result = RUNNER.invoke(app, ["diff", str(SAMPLES / "handwritten.jsonl"),
                                 str(SAMPLES / "handwritten.jsonl"), "-f", "html"])
    assert result.exit_code == 2 and "[html] extra" in result.output


def test_compactions_show_their_summary_on_demand(tmp_path: Path) -> None:
    corpus = SAMPLES.parent.parent / "shared" / "corpus" / "claude-code"
    log = corpus / "spotter-auto-compact.jsonl"
    if not log.exists():
        pytest.skip("the shared corpus is absent")
    page = html_of("audit", str(log))
    assert page.count("<details><summary>Full summary (") == 1
    d = page_data(page)["sections"][0]
    assert "s0-compactions" in d["charts"]
    # query_cosine_retained is unknown at every round of a Claude Code log: not drawn
    spec = json.dumps(d["charts"]["s0-series"])
    assert "query_cosine_retained" not in spec and "raw_ratio" in spec


def test_the_full_summary_is_the_whole_summary_up_to_its_bound() -> None:
    """New user trial: the "Full summary" toggle held 1,024 characters and a hash (the
    escaping's default cut) although docs/html.md bounds a summary at 50,000."""
    import html as html_lib
    import re

    from compaction_audit.report.html.data import MAX_SUMMARY_CHARS
    from compaction_audit.report.html.sections import compactions_section

    def shown(text: str) -> tuple[str, str]:
        page = compactions_section([{"round": 3, "line": 9, "summary_text": text}])
        m = re.search(r"Full summary \(([0-9,]+) characters\)</summary><pre>(.*?)</pre>",
                      page, re.S)
        assert m is not None
        return m.group(1), html_lib.unescape(m.group(2))

    text = "".join(f"fact {i} keeps the <b>45000</b> ms timeout. " for i in range(80))
    assert len(text) > 3000
    assert shown(text) == (f"{len(text):,}", text)
    total, body = shown("y" * (MAX_SUMMARY_CHARS + 7))
    assert (total, body) == (f"{MAX_SUMMARY_CHARS + 7:,}", "y" * MAX_SUMMARY_CHARS)


def test_the_header_says_which_cosine_the_charts_draw() -> None:
    """New user trial: the text and Markdown reports name the rebuilt cosine's method
    and what each rule read; the HTML charted query_cosine_rebuilt without a word."""
    page = html_of("audit", str(SAMPLES / "research-decay.jsonl"))
    row = re.search(r"<tr><th>cosine</th><td>(.*?)</td></tr>", page)
    assert row is not None
    assert row.group(1).startswith("query_cosine_rebuilt by ")
    assert row.group(1).endswith("; salience-inversion and compaction-drift read "
                                 "query_cosine_retained; salience-disagreement read "
                                 "logged salience vs query_cosine_rebuilt")
    assert "against task_query of the session record (1,050 items, 571 distinct texts)" \
        in row.group(1)


def test_findings_come_before_the_lost_facts_as_in_the_text_report() -> None:
    """New user trial: on sample (a) the page opened on 15 rows of lost facts and put
    the salience inversion (CA101, the answer) below them; the text report gives the
    findings first."""
    page = html_of("audit", str(SAMPLES / "research-decay.jsonl"))
    heads = re.findall(r"<h2>([A-Z][a-z]+(?: [a-z]+)?)", page)
    assert heads[:2] == ["Findings", "Lost discriminators"]
    assert page.index("CA101 salience-inversion</a>") < page.index("<h2>Lost discriminators")


def test_a_rules_action_is_said_once_per_run_of_its_episodes() -> None:
    """New user trial: the six CA101 episodes of sample (a) repeated the same
    four-line action six times on the first screen."""
    page = html_of("audit", str(SAMPLES / "research-decay.jsonl"))
    findings = page[page.index("<h2>Findings</h2>"):page.index("<h2>Lost discriminators")]
    rows = re.findall(r"<tr><td class=\"sev-\w+\">.*?</tr>", findings)
    ca101 = [r for r in rows if "CA101 salience-inversion</a>" in r]
    assert len(ca101) == 6
    assert ca101[0].endswith("<td>halt compaction and rehydrate: expand the lowest-depth "
                             "summary with the highest provenance fan-out (of those with a "
                             "leaf to read again) until raw_ratio &gt;= rehydrate_target"
                             "</td></tr>")
    assert all(r.endswith('<td><span class="dim">as above</span></td></tr>')
               for r in ca101[1:])
    assert sum("halt compaction and rehydrate" in r for r in rows) == 1


def test_lost_rows_say_how_many_of_the_rest_the_page_holds() -> None:
    # ux6: "185 more" (a toggle) then "... and 10 more" read as two lists
    from compaction_audit.report.html.data import MAX_ROWS
    from compaction_audit.report.html.sections import LOST_SHOWN, _lost_rows

    def rows(n: int) -> str:
        return _lost_rows([{"t": str(i)} for i in range(n)], ["t"],
                          lambda d, _: f"<tr><td>{d['t']}</td></tr>")

    page = rows(MAX_ROWS + 10)
    # usertest12: the count is of all the rest, as the text report's; one note says how
    # many the page holds and who lists them all, no "... and 10 more" under it
    assert (f"<summary>{MAX_ROWS + 10 - LOST_SHOWN} more (the page holds the first "
            f"{MAX_ROWS} of {MAX_ROWS + 10}; --format json --all lists every one)</summary>"
            ) in page
    assert "more lost discriminator(s)" not in page
    assert f"<summary>{20 - LOST_SHOWN} more</summary>" in rows(20)
    assert f"<summary>{MAX_ROWS - LOST_SHOWN} more</summary>" in rows(MAX_ROWS)


def test_lost_rows_show_the_facts_that_matter_and_say_what_the_rest_are() -> None:
    """usertest9: the Cline page's first rows were other prose (mx-3, py-2) where the
    text report lists the 5 facts that matter and counts the rest."""
    from compaction_audit.report.html.sections import _lost_rows

    ranked = [{"t": f"f{i}", "tier": t} for i, t in enumerate([3, 4, 4, 5, 5, 6, 7])]
    page = unlabelled(_lost_rows(ranked, ["t"], lambda d, _: f"<tr><td>{d['t']}</td></tr>"))
    shown, hidden = page.split("<details>")
    assert [f"f{i}" for i in range(7) if f"<td>f{i}</td>" in shown] == ["f0", "f1", "f2"]
    assert hidden.startswith(
        "<summary>4 more: 2 other prose, 1 tool output, 1 finished work</summary>")
    # only low tiers: no table before the toggle
    only_low = _lost_rows(ranked[3:], ["t"], lambda d, _: f"<tr><td>{d['t']}</td></tr>")
    assert only_low.startswith("<details><summary>4 lost, none that matter: 2 other prose, ")
    # more than the page holds: the headline counts them all (adv52: "200 lost" of 250)
    from compaction_audit.report.html.data import MAX_ROWS
    tool = _lost_rows([{"t": str(i), "tier": 6} for i in range(MAX_ROWS + 50)], ["t"],
                      lambda d, _: f"<tr><td>{d['t']}</td></tr>")
    assert tool.startswith(
        f"<details><summary>{MAX_ROWS + 50} lost, none that matter: {MAX_ROWS + 50} tool "
        f"output (the page holds the first {MAX_ROWS} of {MAX_ROWS + 50}; --format json "
        "--all lists every one)</summary>")
    # the tiers of the rest are counted past the page's rows too (usertest12)
    mixed = _lost_rows([{"t": "a", "tier": 3}] + [{"t": str(i), "tier": 6 + i % 2}
                                                   for i in range(MAX_ROWS + 20)], ["t"],
                       lambda d, _: f"<tr><td>{d['t']}</td></tr>")
    half = (MAX_ROWS + 20) // 2
    assert (f"<summary>{MAX_ROWS + 20} more: {half} tool output, {half} finished work "
            f"(the page holds the first {MAX_ROWS} of {MAX_ROWS + 21}; ") in mixed
    # twenty that matter: fifteen shown, the rest named
    many = _lost_rows([{"t": str(i), "tier": 3} for i in range(20)] + ranked[3:], ["t"],
                      lambda d, _: f"<tr><td>{d['t']}</td></tr>")
    assert "<summary>9 more: 5 that matter, 2 other prose, 1 tool output, 1 finished work" \
        "</summary>" in many


def test_a_several_trace_page_opens_on_its_traces_failing_first(tmp_path: Path) -> None:
    # usertest13: a folder's page showed the gate line, then its first trace in path
    # order (a PASS); the failing traces were somewhere below
    import shutil

    from typer.testing import CliRunner

    from compaction_audit.cli import app
    from tests.logs import SAMPLES

    shutil.copy(SAMPLES / "research-provenance.jsonl", tmp_path / "a.jsonl")  # a WARN,
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "b.jsonl")  # then a FAIL
    page = CliRunner().invoke(app, ["audit", str(tmp_path), "--isolated", "-f", "html"]
                              ).stdout.replace("<wbr>", "")
    table = page[page.index("<h2>Traces</h2>"):page.index("</table>", page.index("<h2>Traces"))]
    assert page.index("<h2>Traces</h2>") < page.index('<section id="s0">')
    rows = table.split("<tr>")[2:]
    assert [r.split("</td>")[0].rsplit(">", 1)[-1] for r in rows] == ["FAIL", "WARN"]
    assert f'<a href="#s1">{tmp_path}/b.jsonl</a>' in rows[0]
    assert f'<a href="#s0">{tmp_path}/a.jsonl</a>' in rows[1]
    # the sections in the table's order, the FAIL first (usertest63 #7)
    assert page.index('<section id="s1">') < page.index('<section id="s0">')
    # the inversion onset and boundary rounds, as the text and Markdown summaries have
    assert "<th>inversion onset</th><th>inversion boundary</th>" in table
    assert ('<td data-label="inversion onset" class="num">-</td>'
            '<td data-label="inversion boundary" class="num">-</td>') in rows[0]
    shutil.copy(SAMPLES / "research-decay.jsonl", tmp_path / "c.jsonl")  # 8 and 16
    page = CliRunner().invoke(app, ["audit", str(tmp_path), "--isolated", "-f", "html"]
                              ).stdout.replace("<wbr>", "")
    assert ('<td data-label="inversion onset" class="num">8</td>'
            '<td data-label="inversion boundary" class="num">16</td>') in page
    one = CliRunner().invoke(app, ["audit", str(SAMPLES / "handwritten.jsonl"), "--isolated",
                                   "-f", "html"]).stdout
    assert "<h2>Traces</h2>" not in one


def test_breaks_in_long_runs_keep_entities_and_graphemes_whole() -> None:
    # adv60: a 3,000-character word widened every table; adv61: a run joined by
    # no-break spaces got no break, and a break split a mark or a jamo from its letter
    from compaction_audit.report.html.page import BREAK_EVERY, breakable

    assert BREAK_EVERY == 40
    assert breakable(">" + "x" * 39 + "&amp;" + "y" * 50 + "<") == (
        ">" + "x" * 39 + "&amp;<wbr>" + "y" * 40 + "<wbr>" + "y" * 10 + "<")
    assert breakable('<td title="' + "z" * 90 + '">short</td>') == (
        '<td title="' + "z" * 90 + '">short</td>')  # never inside a tag
    nbsp = "\u00a0".join(["AAAAAAAAAA"] * 10)  # 109 characters, no breaking space
    assert breakable(f">{nbsp}<").count("<wbr>") == 2
    marks = "e" + "\u0301" * 60  # one grapheme: no break inside it
    assert breakable(f">{marks}<") == f">{marks}<"
    hangul = "\u1100\u1161\u11a8" * 30  # 30 syllables of three jamo each
    parts = breakable(f">{hangul}<")[1:-1].split("<wbr>")
    assert len(parts) == 3 and all(p.startswith("\u1100") for p in parts)
    assert "".join(parts) == hangul
    words = "short words only " * 20
    assert breakable(f">{words}<") == f">{words}<"


def test_a_word_that_starts_with_a_hyphen_stays_on_one_line() -> None:
    # usertest31 #4: "--force" broke into "-" and "-force" at a line end
    from compaction_audit.report.html.page import NOWRAP_MAX, breakable

    assert NOWRAP_MAX == 30
    assert breakable(">run it with --force, not &quot;--no-verify&quot; or (-n)<") == (
        '>run it with <span class="nb">--force,</span> not '
        '<span class="nb">&quot;--no-verify&quot;</span> or <span class="nb">(-n)</span><')
    # a hyphen inside a word may end a line, as in print; a lone dash is no flag
    assert breakable(">salience-inversion - x<") == ">salience-inversion - x<"
    flag = "--" + "f" * 28  # 30 characters: whole; 31: may break
    assert breakable(f">{flag}<") == f'><span class="nb">{flag}</span><'
    assert breakable(f">{flag}f<") == f">{flag}f<"
    assert breakable('<td title="--force">x</td>') == '<td title="--force">x</td>'


def test_the_bucket_size_is_said_to_a_tenth(tmp_path: Path) -> None:
    """usertest21 #6: 1,200 rounds in 1,000 points said "the mean of about 1 rounds"."""
    lines = [json.dumps(session(max_depth=3)),
             json.dumps(rnd(0, spans=[{"id": "a", "tokens": 10}]))]
    lines += [json.dumps(rnd(i)) for i in range(1, 1_200)]
    log = tmp_path / "long.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "Each point is the mean of about 1.2 rounds." in html_of("audit", str(log))


def test_the_rules_reference_gives_each_rule_s_documentation_whole() -> None:
    # usertest24 #2: CA303's and CA305's "what it checks" were cut as log text is
    import html as html_lib

    from compaction_audit.report.html.sections import rules_reference
    from compaction_audit.ruledoc import rule_doc
    from compaction_audit.rules import RULES

    page = rules_reference(RULES)
    for code, cls in RULES.items():
        d = rule_doc(cls)
        for text in (d.what, d.why, d.action, *([d.known] if d.known else [])):
            assert f">{html_lib.escape(text, quote=True)}</p>" in page \
                or f"</b> {html_lib.escape(text, quote=True)}</p>" in page, code
    assert "sha256" not in page
    assert max(len(rule_doc(c).what) for c in RULES.values()) > 1000  # the cut was there


def test_the_recall_debt_says_it_counts_at_each_rounds_end(write_log: LogWriter) -> None:
    """usertest61 A6: the spotter page said 215 lost and charted a debt of 143 with no
    word of the 70 facts the same round read again; here a fold loses a port and the
    same round states it again: 2 facts lost (the rule and its number), a debt of 0 at
    that round's end."""
    fact = {"id": "u1", "tokens": 8, "source": "user", "text": "Keep the port at 8443."}
    path = write_log([
        session(task_query="port"), rnd(0, spans=[fact]),
        rnd(1, summaries=[{"id": "S1", "tokens": 4, "children": ["u1"],
                           "text": "Worked on the server."}], evicted=["u1"],
            spans=[{**fact, "id": "u2"}])])
    doc = json.loads(RUNNER.invoke(app, ["audit", str(path), "-f", "json"]).stdout)
    assert [x["text"] for x in doc["lost_discriminators"]] == ["Keep the port at 8443",
                                                                "8443"]
    assert [r["recall_debt"] for r in doc["series"]] == [0, 0]
    page = html_of("audit", str(path))
    caption = re.search(r"<h3>Recall debt</h3><p class=\"dim\">(.*?)</p>", page, re.S)
    assert caption is not None
    assert "distinct facts at each round's end: a fact a compaction lost that the same " \
           "round read again is no debt there" in caption.group(1)
