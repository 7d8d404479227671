"""Where a lost fact was stated and read again, when that line is one of another file
than the trace: a converted log (its facts keep the original's lines) and the HTML
cells (the text report's ``FILE:N``; "no" when nothing read the fact again)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.commands.convert import convert
from compaction_audit.io.native import read_native
from compaction_audit.report.html.sections import compaction_lost
from tests.html_text import unlabelled
from tests.logs import LogWriter
from tests.recall.test_severity import assistant, boundary, line, user


def reread_records() -> list[dict[str, Any]]:
    """A Claude Code session: the assistant states a value (line 2), the compaction's
    summary drops it, the agent reads the file again after it (the call at line 5, its
    result at line 6: the result is the re-read; the assistant's own prose never is)."""
    usage = {"input_tokens": 900, "output_tokens": 20}
    return [user("u1", "Update the staging config."),
            assistant("a1", "Set read_timeout_ms to 45000 in config/staging.toml."),
            boundary("b1", "a1"),
            user("s1", "Updated the staging config.", isCompactSummary=True),
            line("assistant", "a2", requestId="req-a2", message={
                "id": "msg-a2", "role": "assistant", "usage": usage, "content": [
                    {"type": "tool_use", "id": "tu1", "name": "Read",
                     "input": {"file_path": "config/staging.toml"}}]}),
            line("user", "r2", message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu1",
                 "content": "read_timeout_ms = 45000"}]})]


def fact(report: Any, text: str) -> dict[str, Any]:
    (lost,) = report.compactions
    return next(d for d in lost["lost"] if d["text"] == text)


def test_a_converted_log_names_the_original_for_the_lines_of_its_facts(
        write_log: LogWriter, tmp_path: Path) -> None:
    source = write_log(reread_records(), "claude.jsonl")
    before = fact(api.audit(str(source)), "read_timeout_ms to 45000")
    assert (before["span_line"], before["reread_line"]) == (2, 6)
    assert "span_file" not in before and "reread_file" not in before  # the trace's own
    out = tmp_path / "out.jsonl"
    convert(str(source), str(out))
    assert read_native(str(out)).header.extra["span_line_file"] == "claude.jsonl"
    after = fact(api.audit(str(out)), "read_timeout_ms to 45000")
    assert (after["span_line"], after["span_file"]) == (2, "claude.jsonl")
    assert (after["reread_line"], after["reread_file"]) == (6, "claude.jsonl")
    # other prose: a low tier, listed with --all
    text = CliRunner().invoke(app, ["audit", str(out), "--all"], env={"COLUMNS": "200"}).stdout
    assert "(assistant, claude.jsonl:2)  (read again at claude.jsonl:6)" in text
    # the value bound to its name (usertest38 #3), read again as the tool states it
    assert ("silently dropped: line 2 of claude.jsonl: quantity 'read_timeout_ms to 45000'"
            in text)
    plain = CliRunner().invoke(app, ["audit", str(source), "--all"],
                               env={"COLUMNS": "200"}).stdout
    assert "(assistant, line 2)  (read again at line 6)" in plain
    markdown = CliRunner().invoke(app, ["audit", str(out), "-f", "markdown", "--all"]).stdout
    assert r"(assistant, claude\.jsonl:2, read again at claude\.jsonl:6)" in markdown


def test_standard_input_converts_without_a_file_name(write_log: LogWriter,
                                                     tmp_path: Path) -> None:
    source = write_log(reread_records(), "claude.jsonl")
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(app, ["convert", "-", "-o", str(out)],
                              input=source.read_bytes())
    assert done.exit_code == 0
    assert "span_line_file" not in read_native(str(out)).header.extra


def test_html_cells_name_the_file_and_say_no_when_nothing_read_it_again() -> None:
    lost = [{"kind": "ordering", "text": "text after icon+gap", "source": "assistant",
             "span_line": 451, "span_file": "session.messages.json", "reread_line": 9,
             "reread_file": None, "asked_again_round": None},
            {"kind": "quantity", "text": "45000", "source": "assistant", "span_line": 2,
             "reread_line": None, "asked_again_round": None}]
    html = unlabelled(compaction_lost(lost))
    assert '<td class="num">session.messages.json:451</td><td>no</td><td class="num">9</td>' \
        in html
    assert '<td class="num">2</td><td>no</td><td>no</td>' in html
    assert "unknown" not in html


def test_a_value_said_by_a_clause_listed_above_is_not_listed_again() -> None:
    # ux7: one user rule was four lines of the first screen (the clause, then 'prod',
    # '--force' and 'migration 0047' on their own)
    from compaction_audit.report.terminal_lost import listed

    rule = {"tier": 2, "kind": "negation", "span": "u1", "span_line": 3,
            "text": "do NOT run the prod migration 0047 with --force"}
    prod = {"tier": 2, "kind": "scope", "span": "u1", "span_line": 3, "text": "prod"}
    value = {"tier": 2, "kind": "quantity", "span": "u1", "span_line": 3, "text": "45000"}
    elsewhere = {"tier": 2, "kind": "identifier", "span": "u2", "span_line": 5,
                 "text": "--force"}
    cased = {"tier": 4, "kind": "identifier", "span": "u1", "span_line": 3,
             "text": "Migration 0047"}
    low = {"tier": 5, "kind": "quantity", "span": "u3", "span_line": 7, "text": "12"}
    items = [rule, prod, value, elsewhere, cased, low]
    assert listed(items, False) == [rule, value, elsewhere]
    assert listed(items, False, limit=2) == [rule, value]
    assert listed(items, True) == items
    # a value ranked above its clause is listed: only a clause above folds it
    assert listed([prod, rule], False) == [prod, rule]


def test_the_values_a_clause_above_states_are_named_under_the_list() -> None:
    # usertest10: "... 3 more (--all)" under 5 listed facts read as three facts nobody
    # saw, where they were prod, --force and migration 0047 of the rule listed above
    from rich.console import Console

    from compaction_audit.report.terminal_lost import listed, tier_counts

    rule = {"tier": 2, "kind": "negation", "span": "u1", "span_line": 3,
            "text": "do NOT run the prod migration 0047 with --force"}
    named = [{"tier": 2, "kind": kind, "span": "u1", "span_line": 3, "text": text}
             for kind, text in (("scope", "prod"), ("identifier", "--force"),
                                ("identifier", "migration 0047"))]
    other = [{"tier": 3, "kind": "quantity", "span": "u2", "span_line": 5, "text": str(n)}
             for n in (45000, 30000)]
    low = {"tier": 6, "kind": "quantity", "span": "u3", "span_line": 7, "text": "12",
           "tier_name": "tool output"}

    def shown(items: list[dict[str, object]], limit: int) -> str:
        console = Console(width=100, record=True, file=io.StringIO())
        rows = listed(items, False, limit)
        for part in tier_counts(items, len(rows), False, limit=limit):
            console.print(part)
        return console.export_text()

    items = [rule, *named, *other, low]
    assert shown(items, 15) == (
        "  3 more that matter, within the clauses above: prod, --force, migration 0047\n"
        "  not listed: 1 tool output (--all lists them)\n")
    # the cap cuts one value of u2: it is one more, the three above are named
    assert shown(items, 2) == (
        "  3 more that matter, within the clauses above: prod, --force, migration 0047\n"
        "  ... 1 more (--all)\n"
        "  not listed: 1 tool output (--all lists them)\n")
    many = [{"tier": 2, "kind": "identifier", "span": "u1", "span_line": 3, "text": f"x{k}"}
            for k in range(7)]
    wide = {**rule, "text": "never touch " + " ".join(f"x{k}" for k in range(7))}
    assert shown([wide, *many], 15) == (
        "  7 more that matter, within the clauses above: x0, x1, x2, x3, x4 and 2 more\n")
    assert shown([rule, *other], 15) == ""  # nothing folded, nothing cut


def test_only_a_value_the_clause_states_whole_is_left_out() -> None:
    # adv54: "--force" and "prod" were named as stated by "Never deploy to production
    # with --force-conflicts", and "prod" twice
    from compaction_audit.report.terminal_lost import listed

    rule = {"tier": 2, "kind": "negation", "span": "u1", "span_line": 3,
            "text": "Never deploy to production with --force-conflicts"}
    values = [{"tier": 2, "kind": kind, "span": "u1", "span_line": 3, "text": text}
              for kind, text in (("identifier", "--force"), ("scope", "prod"),
                                 ("identifier", "--force-conflicts"), ("scope", "prod"))]
    assert listed([rule, *values], False) == [rule, values[0], values[1], values[3]]


def test_a_value_inside_a_longer_token_of_the_clause_is_listed() -> None:
    # adv55: '.' and '/' joined nothing: 4.2.1 was "stated" by "pin 4.2.1.5"
    from compaction_audit.report.terminal_lost import listed

    rule = {"tier": 2, "kind": "negation", "span": "u1", "span_line": 3,
            "text": "never pin 4.2.1.5 nor edit src/config/settings.yaml.bak in eu.prod"}
    values = [{"tier": 2, "kind": kind, "span": "u1", "span_line": 3, "text": text}
              for kind, text in (("version", "4.2.1"),
                                 ("identifier", "config/settings.yaml"), ("scope", "prod"))]
    assert listed([rule, *values], False) == [rule, *values]


def test_a_value_named_above_twice_is_not_counted_again() -> None:
    # adv55: the second 'prod' was left out but counted in "... 1 more (--all)"
    from rich.console import Console

    from compaction_audit.report.terminal_lost import listed, tier_counts

    items = []
    for span_id, at in (("u1", 3), ("u2", 5)):
        items += [{"tier": 2, "kind": "negation", "span": span_id, "span_line": at,
                   "text": "do not deploy prod on friday"},
                  {"tier": 2, "kind": "scope", "span": span_id, "span_line": at,
                   "text": "prod"}]
    console = Console(width=100, record=True, file=io.StringIO())
    for part in tier_counts(items, len(listed(items, False)), False):
        console.print(part)
    assert console.export_text() == "  2 more that matter, within the clauses above: prod\n"


def test_markdown_names_a_clause_s_values_under_its_list_as_the_text_does() -> None:
    # usertest72: the Markdown report listed prod, --force and migration 0047 as three
    # more facts under the rule that states them, where the text report names them
    from types import SimpleNamespace

    from compaction_audit.report.markdown import lost_lines

    def item(tier: int, kind: str, text: str, span: str = "u1") -> dict[str, Any]:
        return {"tier": tier, "tier_name": "typed by a person", "kind": kind, "text": text,
                "span": span, "span_line": 3, "source": "user"}

    lost = [item(2, "negation", "do NOT run the prod migration 0047 with --force"),
            item(2, "scope", "prod"), item(2, "identifier", "--force"),
            item(2, "identifier", "migration 0047"), item(2, "quantity", "45000", "u2")]
    report = SimpleNamespace(compactions=[{"round": 2, "line": 16, "lost": lost}])
    lines = lost_lines(report)  # type: ignore[arg-type]
    assert [x for x in lines if x.startswith("- ")] == [
        "- typed by a person: negation `do NOT run the prod migration 0047 with --force` "
        "(user, line 3)",
        "- typed by a person: quantity `45000` (user, line 3)",
        "- 3 more that matter, within the clauses above: `prod`, `--force`, "
        "`migration 0047`"]
    every = [x for x in lost_lines(report, show_all=True) if x.startswith("- ")]  # type: ignore[arg-type]
    assert len(every) == 5 and not any("within the clauses" in x for x in every)
