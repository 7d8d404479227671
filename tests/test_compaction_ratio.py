"""The "Nx" of a compaction: the summary against what it folded, on the audit's one
token scale (docs/adapters.md, "In the report"), never the product's measured prompt
against an estimate of the summary."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.report.compaction_text import compaction_kind, compaction_sizes
from tests.logs import LogWriter, rnd


def folded(summary_tokens: int, opaque: bool = False) -> list[dict[str, Any]]:
    """Spans of 30 and 90 tokens folded into one summary, recorded as a product's
    compaction whose prompt measured 12,000 tokens before and 2,500 after."""
    return [rnd(0, spans=[{"id": "a", "tokens": 30}, {"id": "b", "tokens": 90}]),
            rnd(1, summaries=[{"id": "S", "tokens": summary_tokens, "children": ["a", "b"]}],
                evicted=["a", "b"],
                compaction={"kind": "compact", "summary_id": "S", "tokens_before": 12000,
                            "tokens_after": 2500, "summary_tokens": summary_tokens,
                            "opaque": opaque, "trigger": "manual"})]


def view(write_log: LogWriter, records: list[dict[str, Any]]) -> dict[str, Any]:
    (c,) = api.audit(str(write_log(records))).compactions
    return c


def test_a_summary_smaller_than_what_it_folded(write_log: LogWriter) -> None:
    c = view(write_log, folded(8))
    assert (c["folded_tokens"], c["compression_ratio"]) == (120, 15.0)  # 120 / 8
    assert compaction_sizes(c) == ("context 12,000 -> 2,500 tokens; summary 8 tokens for "
                                   "120 folded (15.0x)")


def test_a_summary_longer_than_what_it_folded(write_log: LogWriter) -> None:
    c = view(write_log, folded(480))
    assert (c["folded_tokens"], c["compression_ratio"]) == (120, 0.25)  # 12,000 / 480 was 25x
    # said as the inverse: "(0.25x)" read as a ratio of something else (usertest7)
    assert compaction_sizes(c).endswith("summary 480 tokens for 120 folded (the summary "
                                        "is 4.0 times the size of what it folded)")
    # near 1, "1.0x longer" said nothing true (adv47): the bounds exactly
    for ratio, said in ((0.949, "(the summary is 1.1 times the size of what it folded)"),
                        (0.95, "(about the same size)"), (1.049, "(about the same size)"),
                        (1.05, "(1.1x)")):
        assert compaction_sizes({**c, "compression_ratio": ratio}).endswith(said), ratio


def test_an_opaque_summary_has_no_ratio(write_log: LogWriter) -> None:
    c = view(write_log, folded(8, opaque=True))
    assert c["compression_ratio"] is None and c["folded_tokens"] == 120
    # usertest29 #3: "an estimate (opaque)" of a 5-token placeholder read as made up
    assert compaction_sizes(c) == ("context 12,000 -> 2,500 tokens; summary about 8 tokens, "
                                   "an estimate from the size of its encrypted content "
                                   "(opaque), ratio unknown")


def test_unknown_sizes_are_said(write_log: LogWriter) -> None:
    c = {"summary_tokens": None, "tokens_before": None, "tokens_after": None,
         "compression_ratio": None, "folded_tokens": None}
    assert compaction_sizes(c) == ("context unknown -> unknown tokens; summary size not "
                                   "recorded, ratio unknown")
    assert compaction_sizes({**c, "opaque": True}) == (
        "context unknown -> unknown tokens; summary opaque, ratio unknown")


def test_a_compaction_record_without_sizes_takes_its_summary_s_tokens(
        write_log: LogWriter) -> None:
    # adv60: a native `compaction` naming only its summary was said "summary opaque"
    # with an empty kind, while the summary had its text and 10 tokens in the log
    c = view(write_log, [
        rnd(0, spans=[{"id": "s1", "tokens": 200, "text": "Do NOT use port 8443."}]),
        rnd(1, summaries=[{"id": "m1", "tokens": 10, "children": ["s1"], "text": "Summary."}],
            evicted=["s1"], compaction={"summary_id": "m1"})])
    assert (c["summary_tokens"], c["folded_tokens"], c["compression_ratio"]) == (10, 200, 20.0)
    assert compaction_sizes(c) == ("context unknown -> unknown tokens; summary 10 tokens for "
                                   "200 folded (20.0x)")
    assert compaction_kind(c) == "compaction"


def test_text_and_json_show_the_same_ratio(write_log: LogWriter) -> None:
    path = str(write_log(folded(8)))
    text = CliRunner().invoke(app, ["audit", path, "--isolated"],
                              env={"COLUMNS": "200"}).output
    assert "summary 8 tokens for 120 folded (15.0x)" in text
    json_out = CliRunner().invoke(app, ["audit", path, "--isolated", "-f", "json"]).output
    assert '"compression_ratio":15.0' in json_out.replace(" ", "")
    assert '"folded_tokens":120' in json_out.replace(" ", "")


def test_an_adapter_s_estimated_sizes_say_about() -> None:
    # usertest12: "summary 3,642 tokens for 96,757 folded" beside the product's measured
    # "context 167,094 -> 33,960" read as measures; both are UTF-8 bytes / 4
    c = {"summary_tokens": 3642, "tokens_before": 167094, "tokens_after": 33960,
         "compression_ratio": 26.57, "folded_tokens": 96757, "sizes": "estimated"}
    assert compaction_sizes(c) == ("context 167,094 -> 33,960 tokens; summary about 3,642 "
                                   "tokens for about 96,757 folded (26.6x; estimated from "
                                   "the log's text, not the product's count)")


def test_an_estimate_beside_the_product_s_count_of_the_context_says_so() -> None:
    # usertest23 #7: "context 12,238 -> unknown tokens; summary about 461 tokens for
    # about 13,173 folded": what was folded read as more than the whole context;
    # usertest24 #2: "context 231,900 ...; for about 98 folded" read as 98 of 231,900
    c = {"summary_tokens": 461, "tokens_before": 12_238, "tokens_after": None,
         "compression_ratio": 13_173 / 461, "folded_tokens": 13_173, "sizes": "estimated"}
    assert compaction_sizes(c) == (
        "context 12,238 -> unknown tokens; summary about 461 tokens for about 13,173 "
        "folded (28.6x; estimated from the log's text, not the product's count)")
    small = {**c, "folded_tokens": 98, "summary_tokens": 61, "compression_ratio": 98 / 61}
    assert compaction_sizes(small).endswith(
        "for about 98 folded (1.6x; estimated from the log's text, not the product's count)")
    no_count = {**c, "tokens_before": None}  # nothing on another scale beside it
    assert compaction_sizes(no_count).endswith("for about 13,173 folded (28.6x)")
    measured = {**c, "sizes": None}  # the audit's own scale: no note
    assert compaction_sizes(measured).endswith("summary 461 tokens for 13,173 folded (28.6x)")
