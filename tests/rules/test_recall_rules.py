"""Seed 002's two cases as small logs, and the negative controls (issue 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.report.model import SessionReport
from tests.logs import LogWriter, rnd

RECALL = ("silent-discriminating-fold", "topic-only-fold", "recall-floor")


def audit(path: Path) -> SessionReport:
    return audit_session(read_native(str(path)))


def recall_findings(report: SessionReport) -> list[tuple[str, int, str | None, str]]:
    return [(f.rule, f.round, f.entity, f.severity.value) for f in report.findings
            if f.rule in RECALL]


def lost_of(report: SessionReport, fold: str) -> list[tuple[str, str]]:
    f = next(f for f in report.findings if f.entity == fold)
    return sorted((d["kind"], d["text"]) for c in f.values["children"] for d in c["dropped"])


def span(i: str, text: str, source: str = "tool:shell") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def fold(i: str, children: list[str], text: str, **extra: Any) -> dict[str, Any]:
    return {"id": i, "tokens": 5, "children": children, "text": text, **extra}


TIMEOUT_CHAIN = [
    rnd(0, spans=[span("s1", "Raised read_timeout_ms from 30000 to 45000 on staging."),
                  span("s2", "Reviewed the dashboards with the team.", "assistant")]),
    rnd(1, summaries=[fold("L1", ["s1", "s2"],
                           "Configuration was adjusted for the staging environment.")],
        evicted=["s1", "s2"]),
    rnd(2, summaries=[fold("M1", ["L1"], "Config stabilized.")], evicted=["L1"]),
]


def test_timeout_chain_loses_number_at_leaf_and_scope_at_mid_tier(
        write_log: LogWriter) -> None:
    report = audit(write_log(TIMEOUT_CHAIN))
    # s1 is tool output: its values rank in the low tiers, so at most warnings (issue 10)
    assert recall_findings(report) == [
        ("silent-discriminating-fold", 1, "L1", "warning"),
        ("recall-floor", 1, None, "warning"),  # s1 evicted; L1 does not restate it
        ("silent-discriminating-fold", 2, "M1", "warning"),
        ("recall-floor", 2, None, "warning"),
    ]
    assert lost_of(report, "L1") == [("identifier", "read_timeout_ms"), ("quantity", "30000"),
                                     ("quantity", "read_timeout_ms from 30000 to 45000")]
    assert lost_of(report, "M1") == [("scope", "staging")]
    lost = {d["text"]: (d["cause"], d["fold"], d["lost_round"])
            for d in report.extra["lost_discriminators"]}
    assert lost["read_timeout_ms from 30000 to 45000"] == ("fold", "L1", 1)
    assert lost["staging"] == ("fold", "M1", 2)
    assert [r["round"] for r in report.extra["folded_rounds"]] == [1, 2]
    debt = report.series.select("discriminators_seen", "recall_debt", "recall_debt_fold",
                                "recall_debt_eviction").rows()
    assert debt == [(4, 0, 0, 0), (4, 3, 3, 0), (4, 4, 4, 0)]


def test_timeout_chain_is_an_error_when_the_agent_marked_the_span_discriminating(
        write_log: LogWriter) -> None:
    tagged = [rnd(0, spans=[{**TIMEOUT_CHAIN[0]["spans"][0],
                             "salience_class": "discriminating"},
                            TIMEOUT_CHAIN[0]["spans"][1]]), *TIMEOUT_CHAIN[1:]]
    assert recall_findings(audit(write_log(tagged))) == [
        ("silent-discriminating-fold", 1, "L1", "error"),
        ("recall-floor", 1, None, "error"),
        ("silent-discriminating-fold", 2, "M1", "error"),
        ("recall-floor", 2, None, "error"),
    ]


def test_trace_45000_shows_both_steps(write_log: LogWriter) -> None:
    path = write_log(TIMEOUT_CHAIN)
    result = CliRunner().invoke(app, ["trace", str(path), "45000", "--json"])
    assert result.exit_code == 0
    tree = json.loads(result.output)
    intro = tree["children"][0]
    assert (intro["span"], intro["round"], intro["line"]) == ("s1", 0, 1)
    leaf = next(c for c in intro["children"] if c.get("fold") == "L1")
    assert (leaf["result"], leaf["round"], leaf["line"]) == ("lost", 1, 2)
    mid = leaf["children"][-1]
    assert (mid["fold"], mid["result"], mid["also_dropped"]) == ("M1", "after", ["staging"])
    text = CliRunner().invoke(app, ["trace", str(path), "45000"]).output
    assert "LOST at fold L1" in text and "then folded into M1" in text


NEGATION = "Do NOT enable `--force` on the prod migration."


def test_force_negation_is_a_silent_discriminating_fold(write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=[span("u1", NEGATION, "user")]),
                      rnd(1, summaries=[fold("G", ["u1"], "Migration guidance noted.")],
                          evicted=["u1"])])
    report = audit(path)
    assert recall_findings(report)[0] == ("silent-discriminating-fold", 1, "G", "error")
    first = report.extra["lost_discriminators"][0]
    assert (first["kind"], first["span"], first["fold"]) == ("negation", "u1", "G")


def test_negative_controls(write_log: LogWriter) -> None:
    kept = write_log([rnd(0, spans=[span("a", "Raised read_timeout_ms to 45000 on staging.")]),
                      rnd(1, summaries=[fold("F", ["a"], "On staging, read_timeout_ms was "
                                                          "raised to 45000.")],
                          evicted=["a"])], "kept.jsonl")
    assert recall_findings(audit(kept)) == []
    negation_kept = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                               rnd(1, summaries=[fold("F", ["u"], "Never enable --force on "
                                                                  "prod migrations.")],
                                   evicted=["u"])], "neg.jsonl")
    assert recall_findings(audit(negation_kept)) == []
    accounted = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                           rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.",
                                                  accounting="negation on --force dropped")],
                               evicted=["u"])], "acc.jsonl")
    assert recall_findings(audit(accounted)) == [("topic-only-fold", 1, "F", "warning")]
    offloaded = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                           rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.")],
                               offloaded=["u"])], "off.jsonl")
    assert recall_findings(audit(offloaded)) == [("topic-only-fold", 1, "F", "warning")]


@pytest.mark.parametrize(("kept", "how"), [({"offloaded": ["u"]}, "offloaded"),
                                            ({}, "retained")])
def test_a_recoverable_child_is_said_offloaded_or_retained(write_log: LogWriter,
                                                           kept: dict[str, Any],
                                                           how: str) -> None:
    """usertest71 #7: a child the fold left in the working set read "offloaded"."""
    path = write_log([rnd(0, spans=[span("u", "Use port 8443 for the api.", "user")]),
                      rnd(1, summaries=[fold("F", ["u"], "An api port was chosen.")],
                          **kept)])
    [f] = [f for f in audit(path).findings if f.rule == "topic-only-fold"]
    assert f.message == ("fold F kept the topic only: u: quantity '8443' "
                         f"(recoverable: the span is {how})")


@pytest.mark.parametrize("accounting", ["", "  \n", "\u200b", {}, {"dropped_values": []},
                                        {"note": " ", "values": [""]},
                                        "\u3164", "\u2800", "\u034f",  # adv109 #8
                                        "-", ".", "none", "N/A", {"x": False},
                                        {"x": 0},  # adv138 #7
                                        "false", "0%", "not applicable", "Nothing dropped.",
                                        "\uff2e/\uff21"])  # adv139 #8 (fullwidth N/A)
def test_an_accounting_that_records_nothing_is_none(write_log: LogWriter,
                                                    accounting: Any) -> None:
    """adv108 #2: a blank or empty accounting turned the silent fold's error into a
    warning; it records no surrendered precision, so the fold is silent."""
    path = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                      rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.",
                                             accounting=accounting)],
                          evicted=["u"])], "blank.jsonl")
    assert recall_findings(audit(path))[0] == ("silent-discriminating-fold", 1, "F", "error")


@pytest.mark.parametrize("leaf", ["", "dropped the pin"])
def test_a_deeply_nested_accounting_is_an_input_error(write_log: LogWriter,
                                                       leaf: str) -> None:
    """Checked before it is read for what it says: it was an internal error
    (RecursionError) where the reader says "nested too deeply", exit 2."""
    deep: Any = leaf
    for _ in range(600):
        deep = {"a": deep}
    path = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                      rnd(1, summaries=[fold("F", ["u"], "Guidance.", accounting=deep)],
                          evicted=["u"])], "deep.jsonl")
    result = CliRunner().invoke(app, ["audit", "--isolated", "-q", str(path)])
    assert result.exit_code == 2
    assert "nested too deeply (summaries[0].accounting)" in result.output


@pytest.mark.parametrize("accounting", ["x", {"dropped_values": ["45000"]}, {"n": 1},
                                        "v2 pin", {"kept_in_store": ["u"]}])  # ({"n": 0}
# says nothing since adv138 #7: test_an_accounting_that_records_nothing_is_none)
def test_an_accounting_that_records_something_accounts(write_log: LogWriter,
                                                       accounting: Any) -> None:
    path = write_log([rnd(0, spans=[span("u", NEGATION, "user")]),
                      rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.",
                                             accounting=accounting)],
                          evicted=["u"])], "said.jsonl")
    assert recall_findings(audit(path)) == [("topic-only-fold", 1, "F", "warning")]


@pytest.mark.parametrize(("text", "source", "severity"), [
    # an identifier nobody typed, in tool output or the assistant's prose ("other
    # prose", tier 5): low, below a version pin
    ("Opened src/cache/lru.py for review.", "tool:shell", "info"),
    ("Opened src/cache/lru.py for review.", "assistant", "info"),
    # typed by a person: an error whatever its kind (usertest71 #3) where it is
    # specific (a digit, a dot or a slash in a name), not a bare flag (adv139 #4)
    ("Opened src/cache/lru.py for review.", "user", "error"),
    ("Please retry with --verbose.", "user", "warning"),
    # an ordering the assistant decided (tier 4, no person's): a warning
    ("We clear the cache before the deploy.", "assistant", "warning"),
])
def test_severity_follows_the_kind(write_log: LogWriter, text: str, source: str,
                                   severity: str) -> None:
    path = write_log([rnd(0, spans=[span("t", text, source)]),
                      rnd(1, summaries=[fold("F", ["t"], "Looked at the cache code.")],
                          evicted=["t"])])
    assert recall_findings(audit(path)) == [("silent-discriminating-fold", 1, "F", severity),
                                            ("recall-floor", 1, None, severity)]


def test_recall_floor_fires_and_not(write_log: LogWriter) -> None:
    records = [rnd(0, spans=[span("u", NEGATION, "user")]),
               rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.")],
                   offloaded=["u"]),
               rnd(2, evicted=["u"])]
    report = audit(write_log(records, "floor.jsonl"))
    floor = [(f.round, f.values["below_floor"], f.values["new_spans"])
             for f in report.findings if f.rule == "recall-floor"]
    assert floor == [(2, 1, ["u"])]  # offloaded at round 1: still one reference
    restated = [records[0], rnd(1, summaries=[fold("F", ["u"], "Do not enable --force on "
                                                                "the prod migration.")],
                                evicted=["u"])]
    report = audit(write_log(restated, "restated.jsonl"))
    assert [f for f in report.findings if f.rule == "recall-floor"] == []


def test_texts_absent_fall_back_to_salience_class(write_log: LogWriter) -> None:
    path = write_log([rnd(0, spans=[{"id": "a", "tokens": 3,
                                     "salience_class": "discriminating"}]),
                      rnd(1, summaries=[{"id": "F", "tokens": 1, "children": ["a"]}],
                          evicted=["a"])])
    report = audit(path)
    assert report.extra["folds_not_checked_discriminating"] == 1
    assert [f.rule for f in report.findings if f.rule in RECALL] == ["recall-floor"]


def test_recall_floor_counts_every_round_and_names_new_spans(write_log: LogWriter) -> None:
    records = [rnd(0, spans=[span("u", NEGATION, "user"),
                             span("t", "Opened src/cache/lru.py for review.")]),
               rnd(1, summaries=[fold("F", ["u"], "Migration guidance noted.")],
                   evicted=["u"]),
               rnd(2, summaries=[fold("G", ["t"], "Looked at the cache code.")],
                   evicted=["t"]),
               rnd(3)]
    report = audit(write_log(records, "two.jsonl"))
    rows = [(f.round, f.values["below_floor"], f.values["new_spans"], f.severity.value)
            for f in report.findings if f.rule == "recall-floor"]
    assert rows == [(1, 1, ["u"], "error"), (2, 2, ["t"], "error"), (3, 2, [], "error")]
