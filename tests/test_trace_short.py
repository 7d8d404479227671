"""``trace`` stays short (issue 13, section 3): counts first, one node per span,
summaries once and cut to one line (``--full``: whole), the reduced-query notice, and
no answer for a sub-token (``kv/app/nas-02`` is not carried by a summary that says
``nas-02``).  Small logs written here, values counted by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit import trace as tracer
from compaction_audit.cli import app
from compaction_audit.commands.trace import MIN_QUOTE
from compaction_audit.io.native import read_native
from compaction_audit.trace import ONE_LINE, one_line, trace
from tests.logs import LogWriter, rnd


def span(i: str, text: str) -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": "user"}


def fold(i: str, children: list[str], text: str) -> dict[str, Any]:
    return {"id": i, "tokens": 5, "children": children, "text": text}


LONG = ("Work so far, in detail.\n" + "The team reviewed the plan and wrote notes. " * 60
        + "\nThe port is 8443.")
"""A summary of 2,6xx characters over several lines; its first line is short."""
F_TEXT = LONG.replace("8443", "a new port")

FOUR = [
    rnd(0, spans=[span("a", "Set the port to 8443 and the pool to 12."),
                  span("b", "The gateway listens on 8443 over TLS."),
                  span("c", "Port 8443 is open on the firewall."),
                  span("d", "Use 8443, not 8080, for the admin port.")]),
    rnd(1, summaries=[fold("F", ["a", "b", "c"], F_TEXT)],
        evicted=["a", "b"], offloaded=["c"]),
    rnd(2, spans=[span("e", "Still on 8443 for now.")]),
]
"""8443 is in five spans: a and b lost at F (evicted), c offloaded (recoverable), d and
e never folded (in context); F drops 8443 and states neither a nor b's other values."""


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["trace", *args], env={"COLUMNS": "100"})


def test_counts_come_first_and_each_span_is_one_node(write_log: LogWriter) -> None:
    path = str(write_log(FOUR))
    result = run(path, "8443")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # each "LOST at fold" is true of its span only: the head says who still holds it
    assert lines[0] == ("discriminator '8443': 5 spans: 2 lost, 1 recoverable, 2 in context; "
                        "still held by span c (user,")
    # the head wraps under itself, not as a tree line
    assert lines[1] == "    round 0, line 1) and 2 more"
    span_lines = [ln for ln in lines if ln.startswith(("├── span", "└── span"))]
    assert [ln.split()[2] for ln in span_lines] == ["a", "b", "c", "d", "e"]
    root = trace(read_native(path), "8443")
    assert [(n.data["span"], n.data["fate"]) for n in root.children] == [
        ("a", "lost"), ("b", "lost"), ("c", "recoverable"), ("d", "in context"),
        ("e", "in context")]
    assert root.data["counts"] == {"lost": 2, "recoverable": 1, "in context": 2}
    # a's fold node, once; span d (two matches would be two nodes before) once
    assert [c.label for c in root.children[0].children] == [
        "LOST at fold F (depth 1, round 1, line 2); also dropped: quantity '12'"]
    assert sum("span d " in ln for ln in lines) == 1
    # c is offloaded, recoverable: F dropped it, but nothing is lost (usertest26 #3: a
    # "recoverable" span above "LOST at fold")
    assert [c.label for c in root.children[2].children] == [
        "dropped at fold F (depth 1, round 1, line 2)"]


def head(output: str) -> str:
    """The root label of a trace's text, its wrapped lines joined."""
    lines = output.splitlines()
    end = next(k for k, ln in enumerate(lines) if ln.startswith(("├", "└")))
    return " ".join(ln.strip() for ln in lines[:end])


def test_still_held_is_said_only_beside_a_loss(
        write_log: LogWriter) -> None:
    """ux4 F11: span line-12 held v4.2.1 in context, yet the head read only "2 lost,
    1 in context" above two "LOST at fold" nodes; a reader took the pin for lost."""
    one = [rnd(0, spans=[span("a", "Port 8443."), span("b", "Port 8443 too.")]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"], "text": "Work."}],
               evicted=["a"])]
    out = run(str(write_log(one)), "8443").output.splitlines()
    # usertest5: "still held by span line-19" was the person's own question: its source
    assert out[0] == ("discriminator '8443': 2 spans: 1 lost, 1 in context; "
                      "still held by span b (user, round 0, line 1)")
    held = [rnd(0, spans=[span("h", "Port 8443 only.")])]
    assert run(str(write_log(held)), "8443").output.splitlines()[0] == \
        "discriminator '8443': 1 span: 1 in context"
    # usertest11: the person's question after the loss ("was 8443 ever changed?") holds
    # the value, not the agent's record of it: the head says so (the audit's "asked
    # again"); a span the fold's round kept is still named first
    asked = [*one[:1], one[1], rnd(2, spans=[span("q", "Was port 8443 ever changed?")])]
    asked[0] = rnd(0, spans=[span("a", "Port 8443.")])
    assert head(run(str(write_log(asked)), "8443").output) == (
        "discriminator '8443': 2 spans: 1 lost, 1 in context; after the loss only the "
        "person states it again: span q (user, round 2, line 3)")
    tool = {"id": "t", "tokens": 5, "text": "port=8443", "source": "tool_result:Read"}
    both = [*asked[:2], rnd(2, spans=[span("q", "Was port 8443 ever changed?"), tool])]
    # usertest30 #1: a tool's output after the loss holds it again, it did not keep it
    # (the audit: "read again at line N")
    assert head(run(str(write_log(both)), "8443").output) == (
        "discriminator '8443': 3 spans: 1 lost, 2 in context; after the loss it is stated "
        "again: span t (tool_result:Read, round 2, line 3) and 1 more")
    kept = [rnd(0, spans=[span("a", "Port 8443."), tool]), asked[1],
            rnd(2, spans=[span("q", "Was port 8443 ever changed?")])]
    assert head(run(str(write_log(kept, "kept.jsonl")), "8443").output) == (
        "discriminator '8443': 3 spans: 1 lost, 2 in context; still held by span t "
        "(tool_result:Read, round 0, line 1) and 1 more")


def test_summary_is_listed_once_cut_to_one_line(write_log: LogWriter) -> None:
    path = str(write_log(FOUR))
    out = run(path, "8443").output
    assert out.count("Work so far") == 1  # three spans name F; its text once
    summary = [ln for ln in out.splitlines() if ln.startswith("  F ")]
    assert summary == [f"  F (depth 1, round 1, line 2; {len(F_TEXT):,} chars, --full): "
                       "Work so far, in detail. …"]
    assert one_line(LONG) == "Work so far, in detail. …"
    assert one_line("x " * 200) == "x " * (ONE_LINE // 2 - 1) + "x…"
    assert max(len(ln) for ln in out.splitlines()) <= 100
    doc = json.loads(run(path, "8443", "--format", "json").output)
    assert doc["summaries"] == [{"id": "F", "depth": 1, "round": 1, "line": 2,
                                 "chars": len(F_TEXT), "text": "Work so far, in detail. …"}]
    assert "summary_text" not in json.dumps(doc)
    assert doc["counts"] == {"lost": 2, "recoverable": 1, "in context": 2}
    assert [c["span"] for c in doc["children"]] == ["a", "b", "c", "d", "e"]


def test_full_shows_the_summary_whole_under_an_indent(write_log: LogWriter) -> None:
    path = str(write_log(FOUR))
    out = run(path, "8443", "--full").output
    assert "The port is a new port." in out  # the last line of F
    body = out[out.index("  F (depth 1"):].splitlines()[1:]
    assert body and all(ln.startswith("    ") for ln in body if ln)
    doc = json.loads(run(path, "8443", "--full", "--json").output)
    assert doc["summaries"][0]["text"] == F_TEXT


def test_lists_are_capped_unless_all(write_log: LogWriter) -> None:
    many = [rnd(0, spans=[span(f"s{i:02}", f"Port 8443 note {i}.") for i in range(20)])]
    path = str(write_log(many))
    out = run(path, "8443").output.splitlines()
    assert out[0] == "discriminator '8443': 20 spans: 20 in context"
    assert len(out) == 1 + 15 + 1 and out[-1] == "└── ... 5 more (--all)"
    assert len(run(path, "8443", "--all").output.splitlines()) == 21


def test_json_is_capped_like_the_text_unless_all(write_log: LogWriter) -> None:
    # 20 spans under one chain of two folds: without the cap the JSON copied the chain
    # under every span (n spans x d folds; issue 11, eighth pass F7)
    spans = [span(f"s{i:02}", f"Port 8443 note {i}.") for i in range(20)]
    path = str(write_log([
        rnd(0, spans=spans),
        rnd(1, summaries=[fold("F1", [s["id"] for s in spans], "The port is 8443.")],
            evicted=[s["id"] for s in spans]),
        rnd(2, summaries=[fold("F2", ["F1"], "Still port 8443.")], evicted=["F1"]),
    ]))
    tree = json.loads(run(path, "8443", "-f", "json").output)
    assert tree["counts"] == {"carried": 20}
    kids = tree["children"]
    assert [k["span"] for k in kids[:15]] == [f"s{i:02}" for i in range(15)]
    assert kids[15] == {"label": "... 5 more node(s) not shown (--all)", "not_shown": 5}
    assert len(kids) == 16
    # each shown span keeps its chain, and each summary is listed once
    assert [c["fold"] for c in kids[0]["children"]] == ["F1"]
    assert [c.get("fold") or c["event"] for c in kids[0]["children"][0]["children"]
            ] == ["evicted", "F2"]
    assert [s["id"] for s in tree["summaries"]] == ["F1", "F2"]
    every = json.loads(run(path, "8443", "-f", "json", "--all").output)
    assert [k["span"] for k in every["children"]] == [f"s{i:02}" for i in range(20)]


def test_a_word_is_reduced_to_the_clauses_that_hold_it(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("u", "Do not use the temp-file preload.")]),
        rnd(1, summaries=[fold("G", ["u"], "Preload guidance noted.")], evicted=["u"])]))
    lines = run(path, "temp-file").output.splitlines()
    assert lines[:3] == [
        "word 'temp-file': 1 span: 1 lost",
        "note: 'temp-file' is not a discriminator; reduced to the clause(s) whose words "
        "hold it",
        # the ids and our words whole, the quote cut to the 100 columns
        "└── span u (round 0, line 1; now evicted at round 1): lost; negation 'Do not use "
        "the temp-file prel…"]


def test_a_word_in_no_clause_is_searched_for_literally(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("u", "The spotter service restarts nightly."),
                      span("v", "Nothing relevant here.")]),
        rnd(1, summaries=[fold("G", ["u", "v"], "Service notes kept.")],
            evicted=["u", "v"])]))
    root = trace(read_native(path), "spotter")
    assert root.data["reading"] == "plain"
    assert root.data["note"] == ("'spotter' is not a discriminator; span texts searched "
                                 "for it literally")
    assert root.label == "word 'spotter': 1 span: 1 lost"
    assert [c.data["span"] for c in root.children] == ["u"]
    assert root.children[0].children[0].data["result"] == "lost"


def test_a_phrase_is_text_and_its_head_wraps_under_spaces(write_log: LogWriter) -> None:
    # ux5 F9: a five-word query was called a "word", and the head's second line began
    # with a tree bar, drawing the note under it into the tree
    held = "k" * 60  # a long id, so that the head wraps
    path = str(write_log([
        rnd(0, spans=[span("u", "The token is one-time and expires by TTL."),
                      span(held, "Again: one-time and expires by TTL.")]),
        rnd(1, summaries=[fold("G", ["u"], "Token notes kept.")], evicted=["u"])]))
    lines = run(path, "one-time and expires by TTL").output.splitlines()
    assert lines[:3] == [
        "text 'one-time and expires by TTL': 2 spans: 1 lost, 1 in context; still held by "
        "span",
        f"    {held} (user, round 0, line 1)",
        "note: 'one-time and expires by TTL' is not a discriminator; span texts searched "
        "for it literally"]
    assert lines[3].startswith("├── span u ")


NAS = [
    rnd(0, spans=[span("k", "Secrets live under kv/app/nas-02 in the vault."),
                  span("n", "Host nas-02 rebooted.")]),
    rnd(1, summaries=[fold("H", ["k", "n"], "Secrets live under nas-02; host rebooted.")],
        evicted=["k", "n"]),
]


def test_a_path_is_not_carried_by_its_file_name_alone(write_log: LogWriter) -> None:
    path = str(write_log(NAS))
    root = trace(read_native(path), "kv/app/nas-02")
    assert root.data["reading"] == "discriminator"
    # only k holds the whole path: n's 'nas-02' is not an answer for it
    assert [c.data["span"] for c in root.children] == ["k"]
    (node,) = root.children[0].children
    assert (node.data["result"], node.data["kept_only"]) == ("carried in part", "nas-02")
    assert node.label == ("carried only as its file name by fold H (depth 1, round 1, "
                          "line 2), not whole: 'nas-02'")
    assert root.label == "discriminator 'kv/app/nas-02': 1 span: 1 carried in part"
    out = run(path, "kv/app/nas-02").output
    assert "carried by fold" not in out and "carried only as its file name" in out
    # the sub-token itself is carried, whole
    sub = trace(read_native(path), "nas-02")
    assert sub.label == "discriminator 'nas-02': 2 spans: 2 carried"
    # n holds it as a discriminator; k holds it as words of its path (usertest14)
    assert [(c.data["span"], c.data["matched"] != []) for c in sub.children] == [
        ("n", True), ("k", False)]
    assert sub.children[1].label.endswith(": carried (as words of its text)")


def test_a_path_inside_a_longer_string_is_found_literally(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("k", "Read kv/app/nas-02/creds then restart.")]),
        rnd(1, summaries=[fold("H", ["k"], "Read kv/app/nas-02/creds; restarted.")],
            evicted=["k"])]))
    root = trace(read_native(path), "kv/app/nas-02")
    assert root.data["reading"] == "plain"
    assert root.label == "text 'kv/app/nas-02': 1 span: 1 carried"


def test_summary_trace_counts_distinct_leaves(write_log: LogWriter) -> None:
    root = trace(read_native(str(write_log(FOUR))), "F")
    # the spans' own states (usertest11: "lost below" read as facts lost; the tree
    # below a summary tells what became of the spans, and what it dropped of each)
    assert root.label == ("summary F (depth 1, round 1, line 2): retained; 3 span(s) "
                          "below: 2 evicted, 1 offloaded (resolvable)")
    assert root.data["counts"] == {"evicted": 2, "offloaded (resolvable)": 1}
    assert list(root.summaries) == ["F"]
    # F's text says "a new port": a's 8443 and 12, b's and c's 8443 are not in it
    assert [c.label.split("; ", 1)[1] for c in root.children] == [
        "not in the summary: 0 of 0 clause(s), 2 of 2 value(s)",
        "not in the summary: 0 of 0 clause(s), 1 of 1 value(s)",
        "not in the summary: 0 of 0 clause(s), 1 of 1 value(s)"]


def test_summary_trace_lists_the_spans_it_dropped_most_of_first(
        write_log: LogWriter) -> None:
    """usertest11: the span whose spec the summary lost was 1 of 294 left off the
    screen in line order; clauses dropped first, then values, then log order."""
    path = str(write_log([
        rnd(0, spans=[span("x", "Port 8443."), span("y", "Wait 4500 ms before a retry."),
                      span("z", "Requirements:\n- Never deploy on Fridays at all.\n"
                                "- Keep the audit log for 90 days.\n")]),
        rnd(1, summaries=[fold("S", ["x", "y", "z"], "Port 8443, retries.")],
            evicted=["x", "y", "z"])]))
    root = trace(read_native(path), "S")
    assert [c.data["id"] for c in root.children] == ["z", "y", "x"]
    assert [(c.data["clauses_not_in_summary"], c.data["values_not_in_summary"])
            for c in root.children] == [(2, 1), (1, 1), (0, 0)]  # "before a retry": ordering


def test_span_trace_says_how_many_folds(tmp_path: Path, write_log: LogWriter) -> None:
    root = trace(read_native(str(write_log(FOUR))), "a")
    assert root.label == ("span a (round 0, line 1; now evicted at round 1): folded into "
                          "1 summary")


def test_span_trace_cuts_its_dropped_list_not_its_ids(write_log: LogWriter) -> None:
    path = str(write_log(FOUR))
    event, fold_node = trace(read_native(path), "a").children
    assert event.label == "evicted at round 1 (line 2)"
    assert fold_node.label == ("folded into F (depth 1, round 1, line 2): dropped 2: "
                               "'8443', '12'")
    assert fold_node.cut == len("folded into F (depth 1, round 1, line 2): dropped 2: ")


def test_the_query_itself_is_followed_before_a_clause_holding_it(
        write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("u", "Do NOT run migration 0078 with --force on prod.")]),
        rnd(1, summaries=[fold("G", ["u"], "Never run migration 0078 on prod.")],
            evicted=["u"])]))
    (node,) = trace(read_native(path), "--force").children
    assert [m["kind"] for m in node.data["matched"]] == ["identifier", "negation"]
    (at_g,) = node.children
    assert at_g.data["result"] == "lost" and at_g.label.startswith("LOST at fold G ")


def test_hostile_span_and_summary_texts_stay_inert(write_log: LogWriter) -> None:
    from tests import ci_commands
    from tests.test_ci_injection import HOSTILE

    path = str(write_log([
        rnd(0, spans=[span("u", f"Port 8443. {HOSTILE}\n{HOSTILE}")]),
        rnd(1, summaries=[fold(HOSTILE, ["u"], f"{HOSTILE}\n::error::x\n{HOSTILE}")],
            evicted=["u"])]))
    for extra in ((), ("--full",), ("--all",), ("--json",), ("--full", "--json")):
        result = CliRunner().invoke(app, ["trace", path, "8443", *extra],
                                    env={"COLUMNS": "60"})
        assert result.exit_code == 0, result.output
        assert ci_commands.clean(result.stdout) == [], result.stdout
        assert "title=pwned" in result.stdout
        if "--json" not in extra:  # no log text starts a line: only our words or guides
            assert all(ln.startswith(("discriminator ", "note: ", "summaries (", "  ",
                                      "├── ", "└── ", "│   "))
                       for ln in result.stdout.splitlines()), result.stdout


def test_summary_trace_draws_a_shared_span_once(write_log: LogWriter) -> None:
    path = str(write_log([
        rnd(0, spans=[span("a", "Alpha."), span("b", "Beta.")]),
        rnd(1, summaries=[fold("X", ["a", "b"], "Alpha and beta."),
                          fold("Y", ["b"], "Beta.")], evicted=["a", "b"]),
        rnd(2, summaries=[fold("T", ["X", "Y"], "All of it.")], evicted=["X", "Y"])]))
    root = trace(read_native(path), "T")
    assert root.label == ("summary T (depth 2, round 2, line 3): retained; 2 span(s) "
                          "below: 2 evicted")
    (x, y) = root.children
    assert [c.label for c in y.children] == ["span b: shown above"]
    assert [c.data["id"] for c in x.children] == ["a", "b"]
    assert list(root.summaries) == ["T", "X", "Y"]


def test_a_summary_cut_by_the_width_says_full(write_log: LogWriter) -> None:
    text = "Kept the port at 8443 and wrote down the reasons for it in the notes."
    path = str(write_log([rnd(0, spans=[span("a", "Port 8443.")]),
                          rnd(1, summaries=[fold("F", ["a"], text)], evicted=["a"])]))
    wide = CliRunner().invoke(app, ["trace", path, "8443"], env={"COLUMNS": "120"}).output
    assert f"  F (depth 1, round 1, line 2; {len(text)} chars): {text}" in wide.splitlines()
    narrow = CliRunner().invoke(app, ["trace", path, "8443"], env={"COLUMNS": "60"}).output
    lines = narrow.splitlines()
    at = lines.index(f"  F (depth 1, round 1, line 2; {len(text)} chars, --full):")
    # fewer than MIN_QUOTE columns left beside the head: the quote takes the next line,
    # under 6 spaces of ours, cut with … to the 60 columns
    assert 60 - len(lines[at]) < MIN_QUOTE
    assert lines[at + 1] == "      " + text[:60 - 6 - 1] + "…"
    assert all(len(ln) <= 60 for ln in lines)


def test_a_span_of_a_product_log_shows_the_line_that_stated_it() -> None:
    """A Codex rollout: the lost '15s' was stated at line 11 of the rollout (the round
    it entered with starts at line 4), the fold that lost it is the compaction at 18."""
    fixture = Path(__file__).parent / "fixtures" / "adapters" / "codex-local.jsonl"
    out = run(str(fixture), "15s").stdout
    assert "span line-11 (round 0, line 11; now evicted at round 2): lost" in out
    assert "LOST at fold line-18 (depth 1, round 2, line 18)" in out


def test_a_path_cut_short_is_found_as_part_of_a_word(write_log: LogWriter) -> None:
    # a product cut the path in its summary ("/srv/app/frontend/comp..."): the cut text
    # is part of a word in the spans, found there and followed as part of a word
    path = str(write_log([
        rnd(0, spans=[span("k", "Edited /srv/app/frontend/components/nav.tsx twice."),
                      span("m", "Nothing about paths.")]),
        rnd(1, summaries=[fold("H", ["k", "m"], "ran grep in /srv/app/frontend/comp...")],
            evicted=["k", "m"])]))
    root = trace(read_native(path), "/srv/app/frontend/comp")
    assert root.data["reading"] == "substring"
    assert root.data["note"].endswith("span texts searched for it literally, as part of "
                                      "a word")
    assert root.label == "text '/srv/app/frontend/comp': 1 span: 1 carried"
    assert [c.data["span"] for c in root.children] == ["k"]


def test_full_shows_a_node_s_dropped_list_whole(write_log: LogWriter,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """ux4 F12: a fold's "also dropped" list was cut at the width even with --full;
    with it the list wraps whole under the guides (never at column 0), up to
    ``trace.FULL_LIMIT`` characters."""
    many = ", ".join(f"port {8000 + k}" for k in range(12))
    path = str(write_log([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": f"Open {many}."}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"], "text": "Ports."}],
            evicted=["a"])]))
    cut = run(path, "8011").output
    whole = run(path, "8011", "--full").output
    assert "'8000'" not in cut and "…" in cut  # the values nearest 8011 come first
    lost = [ln for ln in whole.splitlines() if "also dropped" in ln or ln.startswith(" ")
            or ln.startswith("│")]
    joined = " ".join(ln.strip("│ └├─") for ln in lost)
    assert all(f"'{8000 + k}'" in joined for k in range(11))
    assert all(len(ln) <= 100 and not ln.startswith("'") for ln in whole.splitlines())
    monkeypatch.setattr(tracer, "FULL_LIMIT", 30)
    bounded = run(path, "8011", "--full").output
    assert "quantity '8010', quantity '80…\n" in bounded and "'8009'" not in bounded


def test_a_summarys_one_line_skips_a_tag_alone_on_its_line() -> None:
    # ux5 F11: a Cline notice's one line was "<SYSTEM_NOTICE> …", the tag and nothing
    notice = "<SYSTEM_NOTICE>\nEarlier context was compacted.\nFiles read: a.py"
    assert tracer.one_line(notice) == "Earlier context was compacted. …"
    assert tracer.one_line("\n  <note kind='x'>  \n\nKept v4.2.1.") == "Kept v4.2.1."
    # a tag with words after it on its line, or alone in the text, is the line
    assert tracer.one_line("<b>Kept</b> v4.2.1.\nmore") == "<b>Kept</b> v4.2.1. …"
    assert tracer.one_line("<SYSTEM_NOTICE>") == "<SYSTEM_NOTICE>"


def test_a_summarys_one_line_skips_the_products_preamble() -> None:
    """usertest29 #8: every Codex and Claude Code summary previewed as the product's
    fixed opening sentence."""
    codex = ("Another language model started to solve this problem and produced a summary "
             "of its thinking process. Use it to continue.\nThe port moved to 8443.")
    assert tracer.one_line(codex) == "The port moved to 8443."
    claude = ("This session is being continued from a previous conversation that ran out of "
              "context. The conversation is summarized below:\n\nKept v4.2.1.\nmore")
    assert tracer.one_line(claude) == "Kept v4.2.1. …"
    # the preamble alone is the line; the sentence elsewhere is the person's words
    assert tracer.one_line(codex.split("\n")[0]).startswith("Another language model")
    quoted = "Why did Another language model start?\nNo idea."
    assert tracer.one_line(quoted) == "Why did Another language model start? …"


def test_a_discriminator_no_span_holds_as_one_is_followed_as_text(
        write_log: LogWriter) -> None:
    # "no reopen behavior" is a negation on its own, and in the span it sits inside a
    # longer clause that the extractor reads whole: that clause holds it, its words in
    # order (usertest56 #6); words no clause holds are searched for literally, and the
    # root does not call them a discriminator (usertest7)
    path = str(write_log([
        rnd(0, spans=[span("k", "Closing only; there is no reopen behavior in this task."),
                      span("m", "Nothing here.")]),
        rnd(1, summaries=[fold("H", ["k", "m"], "closing was done")], evicted=["k", "m"])]))
    root = trace(read_native(path), "no reopen behavior")
    assert root.data["reading"] == "discriminator"
    assert root.label == "discriminator 'no reopen behavior': 1 span: 1 lost"
    path = str(write_log([
        rnd(0, spans=[span("k", "Closing only; no reopen, and the behavior stays."),
                      span("m", "Nothing here.")]),
        rnd(1, summaries=[fold("H", ["k", "m"], "closing was done")], evicted=["k", "m"])]))
    root = trace(read_native(path), "no reopen")
    # a phrase of a clause follows the clause (usertest62 B2), and is no discriminator
    assert root.data["reading"] == "reduced"
    assert root.label == "text 'no reopen': 1 span: 1 lost"
    assert [d["text"] for d in root.children[0].data["matched"]] == [
        "Closing only; no reopen, and the behavior stays"]


def test_each_hit_is_said_under_its_own_fate(write_log: LogWriter) -> None:
    """usertest8: the span's line read "carried; identifier 'X', constraint '... X'"
    while the fold below dropped the constraint; adv50: a hit another fold still
    carried read "dropped", and a carried hit was listed under the followed one's
    "lost".  Each hit is followed on its own; the JSON gives each its fate."""
    path = str(write_log([
        rnd(0, spans=[span("u", "Keep all logic in `ReviewLive` for this task.")]),
        rnd(1, summaries=[fold("G", ["u"], "Added ReviewLive with its tests.")],
            evicted=["u"])]))
    (node,) = trace(read_native(path), "ReviewLive").children
    assert node.label == (
        "span u (round 0, line 1; now evicted at round 1): carried; identifier "
        "'ReviewLive'; lost: constraint 'Keep all logic in `ReviewLive` for this task'")
    assert [(m["text"], m["fate"]) for m in node.data["matched"]] == [
        ("ReviewLive", "carried"), ("Keep all logic in `ReviewLive` for this task", "lost")]
    (at_g,) = node.children
    assert at_g.label.startswith("carried by fold G ") and at_g.data["also_dropped"][0] == (
        "Keep all logic in `ReviewLive` for this task")
    # the followed fact lost, the other carried: said so, not listed under "lost"
    path = str(write_log([
        rnd(0, spans=[span("u", "Never refund order A-1 twice. Keep the refund ledger in "
                                "EUR.")]),
        rnd(1, summaries=[fold("c1", ["u"], "Keep the refund ledger in EUR.")],
            evicted=["u"])], "b.jsonl"))
    (node,) = trace(read_native(path), "refund").children
    assert node.label == (
        "span u (round 0, line 1; now evicted at round 1): lost; negation 'Never refund "
        "order A-1 twice'; carried: constraint 'Keep the refund ledger in EUR'")
    # a child of two folds: dropped by one, carried by the other, so carried
    path = str(write_log([
        rnd(0, spans=[span("u", "Keep ORD-5501 for the refund check.")]),
        rnd(1, summaries=[fold("c1", ["u"], "Order ORD-5501 noted."),
                          fold("c2", ["u"], "Keep ORD-5501 for the refund check.")],
            evicted=["u"])], "c.jsonl"))
    (node,) = trace(read_native(path), "ORD-5501").children
    assert [(m["text"], m["fate"]) for m in node.data["matched"]] == [
        ("ORD-5501", "carried"), ("Keep ORD-5501 for the refund check", "carried")]
    assert "lost:" not in node.label


def test_words_only_a_summary_states_are_traced_to_it(write_log: LogWriter) -> None:
    """usertest11: words copied from a summary ("Migration guidance") exited 2 as
    "neither an item id nor a discriminator or word of any span text"."""
    path = str(write_log(FOUR))
    result = run(path, "reviewed the plan")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "text 'reviewed the plan': no span states it; 1 summary"
    assert ("└── text stated by summary F (depth 1, round 1, line 2) with no raw span "
            "holding it") in lines
    root = trace(read_native(path), "reviewed the plan")  # adv57: the JSON says as much
    assert (root.data["kind"], root.data["counts"]) == ("text", {"summaries": 1})
    assert root.data["note"].endswith("span texts searched for it literally; then summary "
                                      "texts")
    missing = run(path, "never written anywhere")
    assert missing.exit_code == 2
    assert "neither an item id nor a discriminator, nor found as written (its words in " \
        "that order) in any span or summary text" \
        in missing.output


def test_also_dropped_lists_the_clauses_nearest_the_query_first(
        write_log: LogWriter) -> None:
    """usertest11: tracing a clause of a long spec listed the spec's first requirements
    (finished work far from it) as "also dropped"; the clauses beside it come first."""
    text = ("Requirements:\n- Thumbnails must stay under 48 KB on disk always.\n"
            "- Store every thumbnail in the shared cache bucket.\n\n"
            "Deploy notes: the gateway port is 8443, and never restart the gateway "
            "during a deploy.")
    path = str(write_log([rnd(0, spans=[span("s", text)]),
                          rnd(1, summaries=[fold("F", ["s"], "Deploy work.")],
                              evicted=["s"])]))
    root = trace(read_native(path), "8443")
    (fold_node,) = root.children[0].children
    assert fold_node.data["also_dropped"][0] == "never restart the gateway during a deploy"


def test_summary_trace_weighs_every_span_before_the_node_budget(
        write_log: LogWriter) -> None:
    """adv57: under a summary of 3,000 spans, the one that lost facts (the last) was past
    the 2,000-node budget and never shown; and a shared span put first by the order
    was "shown above" before it was shown."""
    many = [span(f"s{k}", "A note.") for k in range(tracer.MAX_NODES + 50)]
    many[-1] = span("last", "Requirements:\n- Never deploy on Fridays at all.\n")
    path = str(write_log([rnd(0, spans=many),
                          rnd(1, summaries=[fold("S", [s["id"] for s in many], "Notes.")],
                              evicted=[s["id"] for s in many])]))
    root = trace(read_native(path), "S")
    assert root.children[0].data["id"] == "last"
    shared = str(write_log([
        rnd(0, spans=[span("s", "Port 8443."), span("t", "Never restart the gateway.")]),
        rnd(1, summaries=[fold("A", ["s"], "Ports."), fold("B", ["s", "t"], "Gateway.")],
            evicted=["s", "t"]),
        rnd(2, summaries=[fold("R", ["A", "B"], "Work.")], evicted=["A", "B"])],
        name="shared.jsonl"))
    b, a = trace(read_native(shared), "R").children  # B holds more of what R dropped
    assert (b.data["id"], a.data["id"]) == ("B", "A")
    assert [c.data["id"] for c in b.children] == ["t", "s"]
    assert a.children[0].label == "span s: shown above"


@pytest.mark.parametrize(("drops_at", "fate"), [(None, "carried"), (18, "lost")])
def test_a_chain_past_the_levels_drawn_still_decides_the_fate(
        write_log: LogWriter, drops_at: int | None, fate: str) -> None:
    """adv57: 17 folds in a row that each kept 45000, the last retained, read "1 lost":
    the fate was read at the cut (16 levels), where the fold was evicted."""
    said = "Set timeout_ms to 45000 on staging."
    records = [rnd(0, spans=[span("a", said)])]
    below = "a"
    for k in range(1, 21):
        text = "Staging notes." if k == drops_at else said
        records.append(rnd(k, summaries=[fold(f"F{k}", [below], text)], evicted=[below]))
        below = f"F{k}"
    root = trace(read_native(str(write_log(records))), "45000")
    assert root.label == f"discriminator '45000': 1 span: 1 {fate}"
    # adv58: the line at the cut counts every fold above and names where the chain ends
    node = root.children[0]
    while node.children and "not_shown" not in node.children[-1].data:
        node = node.children[-1]
    edge = node.children[-1]
    where = "LOST at fold F18 (depth 18, round 18, line 19)" if drops_at else \
        "carried to fold F20 (depth 20, round 20, line 21)"
    assert edge.label == f"... {21 - 17} more fold(s) above not shown; {where}"


def test_after_an_eviction_the_persons_question_is_not_the_value_kept(
        write_log: LogWriter) -> None:
    """adv57: a span evicted with no fold, or carried by a summary that was evicted in
    turn, then asked about by the person, read "still held by span q (user)"."""
    said = span("a", "Port 8443 on the gateway.")
    other = {"id": "o", "tokens": 5, "text": "Other work.", "source": "assistant"}
    evicted = [rnd(0, spans=[said]), rnd(1, spans=[other], evicted=["a"]),
               rnd(2, spans=[span("q", "Was it port 8443?")])]
    carried = [rnd(0, spans=[said]), rnd(1, summaries=[fold("S", ["a"], "Port 8443.")],
                                          evicted=["a"]),
               rnd(2, spans=[other], evicted=["S"]),
               rnd(3, spans=[span("q", "Was it port 8443?")])]
    for records, asked in ((evicted, 2), (carried, 3)):
        path = str(write_log(records, name=f"r{asked}.jsonl"))
        assert head(run(path, "8443").output) == (
            "discriminator '8443': 2 spans: 1 lost, 1 in context; after the loss only the "
            f"person states it again: span q (user, round {asked}, line {asked + 1})")
        assert trace(read_native(path), "8443").data["held"] == {
            "span": "q", "source": "user", "spans": 1, "only_the_person": True,
            "read_again": False}


def test_a_persons_message_with_its_own_id_in_the_source_is_the_persons(
        write_log: LogWriter) -> None:
    """adv58: a person's span of source "user:msg-7" read "still held by"; the audit
    counts "user:..." as the person's words (but the harness's "user:meta")."""
    asked = {"id": "q", "tokens": 5, "text": "Was it port 8443?", "source": "user:msg-7"}
    path = str(write_log([rnd(0, spans=[span("a", "Port 8443.")]),
                          rnd(1, summaries=[fold("F", ["a"], "Ports.")], evicted=["a"]),
                          rnd(2, spans=[asked])]))
    assert head(run(path, "8443").output) == (
        "discriminator '8443': 2 spans: 1 lost, 1 in context; after the loss only the "
        "person states it again: span q (user:msg-7, round 2, line 3)")


def test_words_are_found_across_a_line_break(write_log: LogWriter) -> None:
    """adv58: "Wrote the migration\\nguidance section" was no span holding "Migration
    guidance", and the summary that kept it read "with no raw span holding it"."""
    path = str(write_log([
        rnd(0, spans=[span("a", "Wrote the migration\nguidance section.")]),
        rnd(1, summaries=[fold("S", ["a"], "Migration guidance written.")], evicted=["a"])]))
    assert trace(read_native(path), "Migration guidance").label == (
        "text 'Migration guidance': 1 span: 1 carried")


def test_a_cut_level_counts_what_the_budget_left_out_and_says_what_is_unchecked(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv58: "... 1986 more (--all)" stood for 4,986 spans, of which --all lists
    1,986; and past FACT_LEAVES spans the tree was in log order with no word."""
    from compaction_audit.trace import items

    monkeypatch.setattr(items, "FACT_LEAVES", 10)
    many = [span(f"s{k}", "A note.") for k in range(tracer.MAX_NODES + 100)]
    path = str(write_log([rnd(0, spans=many),
                          rnd(1, summaries=[fold("S", [s["id"] for s in many], "Notes.")],
                              evicted=[s["id"] for s in many])]))
    out = run(path, "S").output.splitlines()
    assert " ".join(ln.strip() for ln in out[1:3]) == (
        "note: what the summary dropped of each span is not checked past 10 spans (2,100 "
        "below it): in log order")
    hidden = tracer.MAX_NODES + 100 - 15
    listed = tracer.MAX_NODES - 15  # the budget counts the children, not the root
    assert f"└── ... {hidden:,} more (--all lists {listed:,} of them)" in out


def test_harness_spans_that_hold_the_value_are_named_in_a_note(
        write_log: LogWriter) -> None:
    """adv59: a harness span stating 45000 after the fold was left out with no word
    (the same span with another source read "still held by")."""
    notice = {"id": "h", "tokens": 5, "text": "Reminder: the timeout is 45000.",
              "source": "user:meta"}
    path = str(write_log([rnd(0, spans=[span("a", "Set the timeout to 45000.")]),
                          rnd(1, summaries=[fold("F", ["a"], "Timeouts.")], evicted=["a"]),
                          rnd(2, spans=[notice])]))
    root = trace(read_native(path), "45000")
    assert root.label == "discriminator '45000': 1 span: 1 lost"
    assert root.data["note"] == ("1 span(s) of text the product adds (harness: reminders, "
                                 "notices) also hold it, not counted: harness text yields "
                                 "no discriminator")


def test_a_word_also_lists_the_spans_that_hold_it_only_as_words(write_log: LogWriter
                                                                 ) -> None:
    """usertest14: `trace LOG staging` listed the one span where "on staging" is a
    scope and left out the person's lost instruction "Raise the staging timeout"."""
    path = str(write_log([
        rnd(0, spans=[span("a", "Raise the staging timeout to 45 seconds."),
                      span("b", "Notes from the harness check.")]),
        rnd(1, summaries=[fold("S", ["a", "b"], "Timeouts were discussed.")],
            evicted=["a", "b"], spans=[span("c", "Is the cache on staging warm?")]),
    ]))
    root = trace(read_native(path), "staging")
    # usertest38 #4: c asks about staging, it states nothing (it read "only the person
    # states it again")
    assert root.label == ("word 'staging': 2 spans: 1 lost, 1 in context; not held by "
                          "span c (user, round 1, line 2), which asks for it")
    assert [(c.data["span"], c.data["fate"]) for c in root.children] == [
        ("a", "lost"), ("c", "in context")]
    assert root.children[0].label == (
        "span a (round 0, line 1; now evicted at round 1): lost (as words of its text)")
    assert root.data["note"].endswith(
        "; of these, 1 span(s) hold it only as words of their text (searched literally)")
    # nothing but the discriminator's own spans when no other text holds the word
    alone = trace(read_native(path), "cache")
    assert "as words" not in alone.data.get("note", "")


def test_a_query_that_looks_like_an_option_is_shown_the_way_in() -> None:
    """usertest14: `trace LOG --force` said "No such option: --force (Possible options:
    --format)"; the line now says where such a query goes.  Other commands are as
    before."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    log = str(root / "sample_logs" / "research-decay.jsonl")

    def error(*args: str) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=root,
                              capture_output=True, text=True, timeout=120)
        return done.returncode, done.stderr

    code, said = error("trace", log, "--force")
    assert code == 2 and said.count("\n") == 1
    assert ("a QUERY that starts with '-' goes after '--': trace LOG -- --force; see "
            "'python -m compaction_audit trace --help'\n") in said
    code, said = error("audit", log, "--force")
    assert code == 2 and "goes after '--'" not in said
    # LOG and QUERY given before it: an unknown option, no query to move (adv67)
    code, said = error("explain", "CA301")  # usertest21 #10: ruff's word for it
    assert (code, said) == (2, "compaction-audit: No such command 'explain'; 'rules CODE' "
                               "explains a rule (compaction-audit rules CA301); see "
                               "'python -m compaction_audit --help'\n")
    for args in ((log, "45000", "-f", "json", "-o", "x.json"), (log, "-o", "x", "45000")):
        code, said = error("trace", *args)  # usertest20 #5: QUERY after the option
        assert (code, said) == (2, "compaction-audit: No such option: -o; see 'python -m "
                                   "compaction_audit trace --help'\n")


def test_words_are_found_as_the_regular_expression_found_them() -> None:
    """adv62: the words were a regular expression joined by \\s+, text x query; the
    search is str.find over single-spaced text now, with the same answers."""
    import re

    from compaction_audit.trace.query import _word_in

    def old(needle: str, text: str) -> bool:
        words = needle.split()
        pattern = r"\s+".join(map(re.escape, words))
        return bool(words) and re.search(r"(?<!\w)" + pattern + r"(?!\w)", text) is not None

    texts = ["raise the staging\n\ttimeout", "xstaging timeout", "staging_timeout",
             "--force on prod", "a--force", "é staging", "stagingé", "", "  staging  ",
             "v4.2.1, then 4.2.10", "aa a aa a", "ab ab ab ab",
             # a needle inside longer words, then whole (adv119: the search skips the
             # rest of a word it failed in), after a mark, a digit or an underscore
             "aaaa aaa", "aaaaaaaa", "xab_ab ab", "zork\u0301 zork", "_a a a", "9ab ab"]
    needles = ["staging", "staging timeout", "--force", "4.2.1", "a", "b ab ab", " ", "é",
               "aaa", "ab", "zork", "a a"]
    for text in texts:
        for needle in needles:
            assert _word_in(needle, text) == old(needle, text), (needle, text)


def test_a_query_past_the_cap_is_a_usage_error(write_log: LogWriter) -> None:
    from compaction_audit.errors import UsageError
    from compaction_audit.trace.query import MAX_QUERY

    path = str(write_log(NAS))
    with pytest.raises(UsageError, match=r"^QUERY is 1,001 characters long; at most 1,000 "):
        trace(read_native(path), "a" * (MAX_QUERY + 1))
    with pytest.raises(UsageError, match=r"is neither an item id"):  # 1,000: searched
        trace(read_native(path), "a" * MAX_QUERY)


def test_words_are_compared_composed_and_case_folded() -> None:
    """adv63: "Straße" was lost under one spelling and carried under the other, a
    decomposed "cafe\\u0301" was not "café", and "zork" was a word of "zork\\u0301"."""
    from compaction_audit.trace.query import _word_in

    assert _word_in("straße", "strasse and more") and _word_in("strasse", "Straße ok")
    assert _word_in("café", "the cafe\u0301 menu") and _word_in("cafe\u0301", "café")
    assert not _word_in("zork", "zork\u0301 is here")
    assert _word_in("zork", "a zork here") and not _word_in("zor", "a zork")


def test_also_dropped_leaves_out_what_the_span_s_own_line_names(
        write_log: LogWriter) -> None:
    # usertest24 #5: "span line-13: lost; identifier 'read_timeout_ms', ordering
    # 'Reverted read_timeout_ms to 30000'" then "also dropped: ordering 'Reverted ..."
    path = str(write_log([
        rnd(0, spans=[span("a", "Reverted read_timeout_ms to 30000 after the v4.2.1 "
                                "rollout.")]),
        rnd(1, summaries=[fold("F", ["a"], "Timeouts were tuned.")], evicted=["a"]),
    ]))
    root = trace(read_native(path), "read_timeout_ms")
    [node] = root.children
    assert node.label.startswith("span a ") and "ordering 'Reverted" in node.label
    [at_fold] = node.children
    assert at_fold.label.startswith("LOST at fold F ")
    assert "ordering" not in at_fold.label  # named on the span's own line
    assert at_fold.data["also_dropped"] == ["read_timeout_ms to 30000", "v4.2.1"]


def test_a_requirement_copied_from_the_audit_is_traced_as_the_discriminator(
        write_log: LogWriter) -> None:
    # usertest24 #4: a spec bullet is a requirement in its spec, not alone: the query
    # read "text '...'", with a note that the spans hold it "in their own wording"
    path = str(write_log([
        rnd(0, spans=[{"id": "s", "tokens": 30, "source": "tool_result:Bash",
                       "text": "## Acceptance criteria\n- Token is one-time and expires "
                               "by TTL\n- Closing twice is safe\n"}]),
        rnd(1, summaries=[fold("F", ["s"], "Read the spec.")], evicted=["s"])]))
    root = trace(read_native(path), "Token is one-time and expires by TTL")
    assert root.label == "discriminator 'Token is one-time and expires by TTL': 1 span: 1 lost"
    assert root.data["note"] == ("'Token is one-time and expires by TTL' alone is not read "
                                 "as a discriminator; the spans' text states it as one")


@pytest.mark.parametrize("bullet, alone", [
    ("Review list no longer includes closed annotations", "negation"),
    ("Keep all logic in the review module", "constraint"),
])
def test_a_requirement_read_alone_as_another_kind_is_traced_as_the_audit_lists_it(
        write_log: LogWriter, bullet: str, alone: str) -> None:
    # usertest40 #1: a spec bullet that reads as a negation or a constraint alone is
    # a requirement in its spec, as the audit lists it; the trace said "text ...: no
    # span holds it as a discriminator" for 7 of the audit's 15 lost facts
    from compaction_audit.recall import extract as ext
    assert [d.kind.value for d in ext.extract(bullet, "tool_result")] == [alone]
    path = str(write_log([
        rnd(0, spans=[{"id": "s", "tokens": 30, "source": "tool_result:Bash",
                       "text": f"Definition of Done:\n- {bullet}.\n- Closing twice is "
                               "safe.\n"}]),
        rnd(1, summaries=[fold("F", ["s"], "Read the spec.")], evicted=["s"])]))
    root = trace(read_native(path), bullet)
    assert root.label == f"discriminator {bullet!r}: 1 span: 1 lost"
    assert "note" not in root.data
    [node] = root.children
    assert f"requirement {bullet!r}" in node.label


def test_a_fold_s_also_dropped_list_is_capped_in_json_unless_all(
        write_log: LogWriter, tmp_path: Path) -> None:
    # adv81: a fold that dropped every companion of a span listed each one in the JSON
    # tree (1.7x the trace); 20 identifiers besides the query: 15 listed, 5 counted
    names = [f"svc_{k:02d}" for k in range(20)]
    path = str(write_log([
        rnd(0, spans=[span("a", "Port 8443 serves " + ", ".join(names) + ".")]),
        rnd(1, summaries=[fold("F", ["a"], "Services were set up.")], evicted=["a"]),
    ]))
    runner = CliRunner()
    capped = json.loads(runner.invoke(app, ["trace", path, "8443", "--format", "json"]).stdout)
    [at_fold] = capped["children"][0]["children"]
    assert at_fold["also_dropped"] == names[:15]
    assert at_fold["also_dropped_not_shown"] == 5
    whole = json.loads(runner.invoke(app, ["trace", path, "8443", "--format", "json",
                                           "--all"]).stdout)
    [at_fold] = whole["children"][0]["children"]
    assert at_fold["also_dropped"] == names
    assert "also_dropped_not_shown" not in at_fold


def test_the_json_tree_counts_the_summaries_it_leaves_out(
        write_log: LogWriter) -> None:
    # usertest35: 14 of 67 summaries in the JSON without --all, and nothing said so
    spans = [span(f"s{k:02d}", f"Port 8443 serves shard {k}.") for k in range(20)]
    folds = [fold(f"F{k:02d}", [f"s{k:02d}"], "A shard was set up.") for k in range(20)]
    path = str(write_log([rnd(0, spans=spans),
                          rnd(1, summaries=folds, evicted=[s["id"] for s in spans])]))
    runner = CliRunner()
    capped = json.loads(runner.invoke(app, ["trace", path, "8443", "--format", "json"]).stdout)
    assert len(capped["summaries"]) == 15 and capped["summaries_not_shown"] == 5
    whole = json.loads(runner.invoke(app, ["trace", path, "8443", "--format", "json",
                                           "--all"]).stdout)
    assert len(whole["summaries"]) == 20 and "summaries_not_shown" not in whole


def test_a_phrase_copied_from_a_lost_fact_follows_its_clause(write_log: LogWriter) -> None:
    """usertest62 B2: a part of a lost requirement, copied from the report, was searched
    for literally (no clause shown) where one of its words followed the clause."""
    path = str(write_log([
        rnd(0, spans=[span("k", "Requirements:\n- Concurrent close operations should not "
                                "crash LiveView\n- Keep the session list stable")]),
        rnd(1, summaries=[fold("H", ["k"], "Requirements were reviewed.")], evicted=["k"])]))
    for query in ("Concurrent close operations", "close operations should NOT", "crash"):
        root = trace(read_native(path), query)
        assert root.data["reading"] == "reduced", query
        assert [d["text"] for d in root.children[0].data["matched"]] == [
            "Concurrent close operations should not crash LiveView"], query
    from compaction_audit.errors import UsageError

    # words not in that order: no clause holds them (and no text: nothing to trace)
    with pytest.raises(UsageError, match="its words in that order"):
        trace(read_native(path), "operations close")


def test_the_one_line_reads_a_heading_alone_with_the_line_after_it() -> None:
    """usertest62 D1: a summary's one line was "Analysis: …" (Claude Code) or "Context
    summary: …" (Cline), which says nothing of it."""
    from compaction_audit.trace.tree import one_line

    assert one_line("This session is being continued from a previous conversation.\n\n"
                    "Analysis:\nLet me analyze it:\n\n1. x") == "Analysis: Let me analyze it: …"
    assert one_line("Context summary:\n\n1. Fixed the button.") == (
        "Context summary: 1. Fixed the button.")
    assert one_line("## Summary\nThe fix landed.") == "## Summary The fix landed."
    # a short line that is no heading, or a heading with nothing after it, stays alone
    assert one_line("Done\nnext") == "Done …"
    assert one_line("Analysis:") == "Analysis:"
