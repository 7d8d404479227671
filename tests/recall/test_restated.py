"""A raw span that states a dropped fact in another form holds it (usertest10: a Cline
session's kept message said "(12px)", the folded one's `` `12px` `` was reported lost;
a CSS length in prose is a fact of its own since usertest72 #5, so the logs here use
Tailwind's `4xl`, a name in backticks only): a whole token of a span in reach at the
fold holds it; names not in tool output."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.analysis.restated import restated
from compaction_audit.recall.wholetoken import looked_for, states
from tests.logs import LogWriter, rnd


def span(i: str, text: str, source: str = "assistant") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


FOLDED = span("a", "The icon content starts at `4xl` from the edge; see `sidebarItem`.")
FOLD = {"id": "F", "tokens": 5, "children": ["a"], "text": "Aligned the sidebar icons."}


def lost(path: Path) -> list[str]:
    report = audit_session(read_native(str(path)))
    return sorted(d["text"] for d in report.extra["lost_discriminators"])


def log(other: dict[str, Any], *, evict_other: bool = False,
        fold_other: bool = False) -> list[dict[str, Any]]:
    fold = {**FOLD, "children": ["a", other["id"]]} if fold_other else FOLD
    gone = ["a", other["id"]] if evict_other or fold_other else ["a"]
    return [rnd(0, spans=[FOLDED, other]),
            rnd(1, summaries=[fold], evicted=gone,
                spans=[span("c", "Moving on to the footer.")])]


def test_a_kept_span_stating_the_value_in_prose_holds_it(write_log: LogWriter) -> None:
    # "(4xl)" is no discriminator of its own span: only `4xl` in backticks is one
    other = span("b", "Their icons start at px-3 (4xl) from the sidebar edge.")
    assert lost(write_log(log(other))) == ["sidebarItem"]


def test_the_same_span_gone_at_the_fold_does_not_hold_it(write_log: LogWriter) -> None:
    other = span("b", "Their icons start at px-3 (4xl) from the sidebar edge.")
    # (px-3, the other span's own fact, is lost with it)
    assert lost(write_log(log(other, evict_other=True))) == ["4xl", "px-3", "sidebarItem"]
    assert lost(write_log(log(other, fold_other=True))) == ["4xl", "px-3", "sidebarItem"]


def test_a_span_that_names_a_longer_token_does_not_hold_it(write_log: LogWriter) -> None:
    # the needle "4xl" is in "14xl" and "4xls": the survival check says no
    other = span("b", "The gutter is 14xl, the rail 4xls; see sidebarItems.")
    assert lost(write_log(log(other))) == ["4xl", "sidebarItem"]


def test_tool_output_naming_an_identifier_does_not_hold_it(write_log: LogWriter) -> None:
    # names in code and tool output count only where prose used them (issue 10, point 1)
    other = span("b", "div.icon { font: 4xl; }", "tool_result:Read")
    assert lost(write_log(log(other))) == ["4xl", "sidebarItem"]


CASES = [(c["kind"], c["fact"], c["text"], c["holds"]) for c in tomllib.loads(
    (Path(__file__).with_name("restated_cases.toml")).read_text(encoding="utf-8"))["case"]]
"""(kind, fact, text, holds): the cases of restated_cases.toml, each with why."""


def _restated(kind: str, fact: str, text: str, stype: str = "prose") -> bool:
    key = f"{kind}:{fact.lower()}"
    items = pl.DataFrame({"id": ["b"], "kind": ["span"], "text": [text], "stype": [stype]})
    found = restated(items, pl.DataFrame({"key": [key], "start": [1], "by_fold": [True]}),
                     pl.DataFrame({"key": [key], "k": [kind], "t": [fact]}),
                     pl.DataFrame(schema={"key": pl.String, "id": pl.String}),
                     pl.DataFrame({"id": ["b"], "born": [0], "gone": [3]}))
    assert found.height <= 1
    return found.height == 1


@pytest.mark.parametrize(("kind", "fact", "text", "holds"), CASES)
def test_a_whole_token_holds_the_fact(kind: str, fact: str, text: str, holds: bool) -> None:
    assert _restated(kind, fact, text) is holds
    # trace's twin says the same (adv54: trace said "still held" where the audit did not)
    assert (looked_for(kind, fact) and states(text, fact)) is holds


@pytest.mark.parametrize("stype", ["tool_output", "code"])
def test_tool_output_and_code_hold_nothing(stype: str) -> None:
    assert not _restated("version", "4.2.1", "version 4.2.1", stype)


def test_trace_names_the_span_that_still_states_it(write_log: LogWriter) -> None:
    from compaction_audit.trace import trace_discriminator

    other = span("b", "Their icons start at px-3 (4xl) from the sidebar edge.")
    root = trace_discriminator(read_native(str(write_log(log(other)))), "4xl")
    assert root.label == "word '4xl': 2 spans: 1 lost, 1 in context; still held by span b " \
                        "(assistant, round 0, line 1)"
    assert root.data["note"] == ("'4xl' alone is not read as a discriminator; the spans' "
                                 "text states it as one")
    # when no span lost it, the span that states it in another form is listed as one
    # that holds it as words of its text (usertest14), not as a holder of the fact
    kept = [rnd(0, spans=[FOLDED, other]), rnd(1, spans=[span("c", "Moving on.")])]
    root = trace_discriminator(read_native(str(write_log(kept))), "4xl")
    assert root.label == "word '4xl': 2 spans: 2 in context"
    assert [c.label.endswith("(as words of its text)") for c in root.children] == [False, True]


def test_the_hits_read_per_span_are_bounded() -> None:
    # adv54: a 16 MB span repeating a short fact made a row per hit, 2 GB of them
    from compaction_audit.recall.wholetoken import HITS

    inside = "x-5000 " * HITS  # never a whole token: 'x-' joins it
    assert not _restated("quantity", "5000", inside + "5000")  # past the first HITS
    assert _restated("quantity", "5000", "x-5000 " * (HITS - 1) + "5000")


def test_a_fact_longer_than_the_cap_is_not_looked_for() -> None:
    # adv82: one camelCase token of 30,000 characters made Polars' Aho-Corasick build
    # its automaton for 2 s per search (160 KB of them: 235 s); 256 characters at most
    from compaction_audit.recall.wholetoken import MAX_CHARS

    assert MAX_CHARS == 256
    name = ("sidebarItem" * 30)[:MAX_CHARS]
    assert looked_for("identifier", name) and _restated("identifier", name, f"see {name} now")
    longer = ("sidebarItem" * 30)[:MAX_CHARS + 1]
    assert not looked_for("identifier", longer)
    assert not _restated("identifier", longer, f"see {longer} now")


def test_nested_facts_are_each_found_whole() -> None:
    # adv83: 250 nested numbers over a run of digits listed every hit of each at every
    # position (7.6 GB for 255 KB); now searched one layer at a time, each still found
    keys = ["quantity:1111", "quantity:111111", "quantity:45000"]
    items = pl.DataFrame({"id": ["b", "c"], "kind": ["span", "span"],
                          "text": ["Limits: 1111 and 111111, not 1111111.",
                                   "The run " + "1" * 5000 + " is no limit."],
                          "stype": ["prose", "prose"]})
    found = restated(items, pl.DataFrame({"key": keys, "start": [1] * 3, "by_fold": [True] * 3}),
                     pl.DataFrame({"key": keys, "k": ["quantity"] * 3,
                                   "t": ["1111", "111111", "45000"]}),
                     pl.DataFrame(schema={"key": pl.String, "id": pl.String}),
                     pl.DataFrame({"id": ["b", "c"], "born": [0, 0], "gone": [3, 3]}))
    assert sorted(found.iter_rows()) == [("quantity:1111", "b"), ("quantity:111111", "b")]


@pytest.mark.parametrize("order", [("A", "B"), ("B", "A")])
def test_every_text_of_a_fact_is_looked_for(write_log: LogWriter,
                                            order: tuple[str, str]) -> None:
    # adv55: of "`12PX`" and "`12px`" folded away, one text was kept at random, so the
    # result followed the order of the spans
    texts = {"A": "The icon starts at `4XL` here.", "B": "The rail starts at `4xl` too."}
    folded = [span(f"s{k}", texts[name]) for k, name in enumerate(order)]
    kept = span("b", "Both start at (4xl) from the sidebar edge.")
    fold = {**FOLD, "children": ["s0", "s1"]}
    records = [rnd(0, spans=[*folded, kept]),
               rnd(1, summaries=[fold], evicted=["s0", "s1"], spans=[span("c", "Next.")])]
    assert lost(write_log(records)) == []
