"""Notes and the verdict wrap to the width under a hanging indent (README: text wraps
"under an indent, never back to the first column"; docs/security.md): every line fits
and no continuation line starts at column 0, where a runner could read a command."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.text import Text
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.terminal_text import Hang, Hanging, w
from tests.ci_commands import commands
from tests.logs import LogWriter, rnd

ROOT = Path(__file__).resolve().parents[1]


def render(renderable: object, width: int) -> list[str]:
    console = Console(width=width, no_color=True, force_terminal=False)
    with console.capture() as cap:
        console.print(renderable, crop=False)
    return cap.get().splitlines()


def test_verdict_wraps_under_two_spaces() -> None:
    verdict = Text("FAIL: 3 error(s), 0 warning(s), 0 info; inversion onset at round 8, "
                   "inversion boundary crossed at round 16")
    verdict.no_wrap = True  # as verdict_line() builds it
    out = render(Hanging(verdict), 40)
    assert out == ["FAIL: 3 error(s), 0 warning(s), 0 info;",
                   "  inversion onset at round 8, inversion",
                   "  boundary crossed at round 16"]


def test_note_wraps_under_its_label_and_hostile_text_stays_indented() -> None:
    note = "x" * 30 + " ::error::pwned " + "y" * 50
    out = render(Hang(Text("note "), w(note), 0), 40)
    assert out[0].startswith("note " + "x" * 30)
    assert all(len(ln) <= 40 for ln in out)
    # the continuation is ours-indented; the stream layer (report.safe.neutralize)
    # then breaks a line a runner would trim and run
    assert out[1] == "     ::error::pwned"


def test_a_body_narrower_than_its_head_goes_under_it() -> None:
    # usertest36 #7: a Cline compaction's heading (47 columns) left its body a strip of
    # 33 at 80 columns; under NARROW_BODY (40) and narrower than the head, it goes under
    head = Text("round 5 (line 7 of agentic.compaction.json): ")  # 45 columns
    body = Text("compact (agentic, 30 removed), trigger unknown; context 21,919 -> "
                "unknown tokens")
    assert render(Hang(head, body, 2), 80) == [
        "  round 5 (line 7 of agentic.compaction.json):",
        "      compact (agentic, 30 removed), trigger unknown; context 21,919 -> unknown",
        "      tokens"]
    # at 100 columns the body has 53: beside the head
    assert render(Hang(head, body, 2), 100) == [
        "  round 5 (line 7 of agentic.compaction.json): compact (agentic, 30 removed), "
        "trigger unknown;", " " * 47 + "context 21,919 -> unknown tokens"]
    # a body that fits beside the head stays there
    assert render(Hang(head, Text("5 -> 17 (+12) later"), 2), 80) == [
        "  round 5 (line 7 of agentic.compaction.json): 5 -> 17 (+12) later"]
    # a short head keeps its body beside it, however narrow: 58 columns beside 22
    short = Text("round 3 (line 1256): ")
    assert render(Hang(short, body, 2), 80)[0].startswith("  round 3 (line 1256): compact")


def test_audit_at_60_columns_fits_the_verdict() -> None:
    log = ROOT / "sample_logs" / "research-decay.jsonl"
    out = CliRunner().invoke(app, ["audit", str(log)], env={"COLUMNS": "60"}).stdout
    lines = out.rstrip("\n").split("\n")
    verdict = lines[len(lines) - lines[::-1].index(""):]
    assert verdict[0].startswith("FAIL: ") and len(verdict) > 1
    assert all(len(ln) <= 60 for ln in verdict)
    assert all(ln.startswith("  ") for ln in verdict[1:])
    assert commands(out) == []


def test_trace_fits_the_width_with_every_continuation_indented(write_log: LogWriter) -> None:
    from tests.test_ci_injection import HOSTILE
    from tests.test_trace_short import fold, span

    long_id = "span-" + "0123456789" * 7  # 75 characters, no space: folded
    plain = str(write_log([
        rnd(0, spans=[span(long_id, "Set the timeout to 45000 ms for the slow mirror."),
                      span("b", "Timeout 45000 is fine.")]),
        rnd(1, summaries=[fold("F-" + "pad " * 20, [long_id, "b"], "Timeouts were tuned.")],
            evicted=[long_id, "b"])]))
    # the stream layer escapes a character of each line a runner would run (\x3a,
    # \x23): the hostile log's lines may outgrow the width by those escapes
    hostile = str(write_log([
        rnd(0, spans=[span(long_id, f"Set the timeout to 45000 ms. {HOSTILE}"),
                      span("b", "Timeout 45000 is fine.")]),
        rnd(1, summaries=[fold("F-" + HOSTILE, [long_id, "b"], "Timeouts were tuned.")],
            evicted=[long_id, "b"])]))
    sample = str(ROOT / "sample_logs" / "handwritten.jsonl")
    for width in (40, 60, 100):
        for args in ((plain, "45000"), (plain, "45000", "--full"), (sample, "45000"),
                     (hostile, "45000"), (hostile, "45000", "--full")):
            out = CliRunner().invoke(app, ["trace", *args],
                                     env={"COLUMNS": str(width)}).stdout
            lines = out.splitlines()
            assert len(lines) > 3, out
            if args[0] != hostile:
                assert all(len(ln) <= width for ln in lines), (width, out)
            # only the first line and our own heads start at column 0
            assert all(ln.startswith(("discriminator ", "summaries (", " ", "├── ", "└── ",
                                      "│   ")) for ln in lines), out
            assert commands(out) == [], out


def _column_zero_words(args: list[str], columns: int) -> list[str]:
    out = CliRunner().invoke(app, args, env={"COLUMNS": str(columns)}).stdout
    return [ln.split(" ", 1)[0] for ln in out.splitlines() if ln and not ln.startswith(" ")]


def test_no_line_of_a_report_wraps_back_to_column_0() -> None:
    # usertest12: "not listed: ... (--all lists them)", "... N more episodes of CA101
    # (rounds ...) (--all)", a section heading and the diff's table titles wrapped back
    # to the first column at 40-80 columns.  Wrapping may not start a line at column 0:
    # every such line's first word starts one at 200 columns too, where nothing wraps
    # (a diff's series rows, labels of their own at every width, are left out)
    from tests.logs import SAMPLES

    runs = [["audit", str(p)] for p in sorted(SAMPLES.glob("*.jsonl"))]
    runs.append(["diff", str(SAMPLES / "research-no-decay.jsonl"),
                 str(SAMPLES / "research-decay.jsonl"), "--fail-on-new", "error"])
    for args in runs:
        wide = set(_column_zero_words(args, 200))
        for columns in (40, 60, 80):
            words = _column_zero_words(args, columns)
            if args[0] == "diff":
                words = [x for x in words if not x.endswith("…") and not x.startswith(
                    ("raw_", "distinct", "query_", "summary_", "recall_", "━"))]
            assert [x for x in words if x not in wide] == [], (args, columns)


def test_lines_fit_the_width_but_whole_paths(tmp_path: Path) -> None:
    # usertest13: at 60 columns a rule heading ran to 64, a compaction head of a Cline
    # file name pushed its wrapped lines to 67, and a folder run's gate line and its
    # "N traces: ..." note ran past 80; only a path is kept whole (the title line and
    # the summary's path line), which the terminal then folds
    import shutil

    from tests.logs import CORPUS, SAMPLES

    for name in ("research-decay.jsonl", "faithfulness.jsonl"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    runs = [["audit", str(tmp_path)]]
    cline = CORPUS / "cline" / "agentic.compaction.json"
    if cline.is_file():
        runs.append(["audit", str(cline)])
    for args in runs:
        out = CliRunner().invoke(app, args, env={"COLUMNS": "60"}).stdout.splitlines()
        long = [ln for ln in out if len(ln) > 60 and not ln.startswith("compaction-audit ")
                and not ln.startswith(f"    {tmp_path}")]
        assert long == [], args
        assert any(ln.startswith("exit 1: ") for ln in out) or args[1] == str(cline)


def test_a_long_lost_fact_is_cut_in_the_list() -> None:
    # usertest13: a 3,000-character identifier took 17 lines of the first screen
    from compaction_audit.report.terminal_lost import FACT_TEXT, _facts

    item = {"kind": "identifier", "text": "Q" * 3000, "tier_name": "typed by a person"}
    out = render(Group(*_facts([item], lambda d: "", 2)), 80)
    shown = "".join(ln.strip() for ln in out[1:])
    assert shown.startswith("identifier  " + "Q" * 50) and "[3000 chars, sha256 " in shown
    assert 200 < shown.count("Q") <= FACT_TEXT == 240 and len(out) <= 6
