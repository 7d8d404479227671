"""Bounded machine output (issue 14, section 3; issue 11, point 5): episodes with
counts, capped lists with their totals, ``--all`` for everything."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.bounded import (
    EPISODES_PER_RULE,
    LIST_CAP,
    NESTED_CAP,
    bounded_episodes,
    cap_lists,
    episode_dict,
)
from compaction_audit.rules.base import Finding, Severity
from tests.logs import dump, rnd, session

RUNNER = CliRunner()


def finding(code: str, rnd_: int, entity: str | None = None, message: str = "m",
            severity: Severity = Severity.ERROR) -> Finding:
    return Finding(rule=f"rule-{code}", code=code, severity=severity, round=rnd_,
                   line=rnd_ + 2, message=message, action="act", entity=entity,
                   values={"n": rnd_})


def test_a_list_of_exactly_the_cap_is_whole_and_one_more_is_truncated() -> None:
    assert LIST_CAP == 10 and NESTED_CAP == 5
    whole = cap_lists({"ids": list(range(10))})
    assert whole == {"ids": list(range(10))}
    cut = cap_lists({"ids": list(range(11))})
    assert cut == {"ids": list(range(10)),
                   "ids_truncated": {"truncated": True, "shown": 10, "total": 11}}


def test_total_counts_what_a_findings_values_left_out_already() -> None:
    # ux5 F10: a fold of 105 children keeps 50 in its values ("children_more": 55);
    # cut again to 3, "total" said 50
    from compaction_audit.findingvalues import capped

    values = capped({"fold": "F", "children": [{"id": i} for i in range(105)]})
    assert len(values["children"]) == 50 and values["children_more"] == 55
    doc = cap_lists(values, 3, 3)
    assert doc["children_truncated"] == {"truncated": True, "shown": 3, "total": 105}
    assert [c["id"] for c in doc["children"]] == [0, 1, 2]


def test_lost_facts_cut_are_counted_per_tier_and_nested_lists_get_the_nested_cap() -> None:
    facts = [{"text": f"f{i}", "tier": 1 if i < 8 else 2 if i < 12 else 5,
              "children": list(range(6))} for i in range(14)]
    doc = cap_lists({"lost_discriminators": facts})
    shown = doc["lost_discriminators"]
    assert [d["text"] for d in shown] == [f"f{i}" for i in range(10)]
    # items 10..13 were cut: 10 and 11 are tier 2, 12 and 13 tier 5
    assert doc["lost_discriminators_truncated"] == {
        "truncated": True, "shown": 10, "total": 14, "rest_by_tier": {"2": 2, "5": 2}}
    # a list inside a list item: 6 children -> the first 5
    assert shown[0]["children"] == [0, 1, 2, 3, 4]
    assert shown[0]["children_truncated"] == {"truncated": True, "shown": 5, "total": 6}
    assert facts[0]["children"] == [0, 1, 2, 3, 4, 5]  # the input is not changed


def test_consecutive_rounds_are_one_episode_with_count_rounds_and_entities() -> None:
    found = [finding("CA201", 1, "a"), finding("CA201", 2, "a"), finding("CA201", 2, "b"),
             finding("CA201", 3, "a", message="last"), finding("CA201", 5, "a"),
             finding("CA301", 2, "f1", severity=Severity.WARNING)]
    listed, omitted = bounded_episodes(found, show_all=False)
    assert omitted == []
    docs = [episode_dict(run) for run in listed]
    # CA201 at rounds 1, 2, 2, 3: one episode of 4 findings over 3 rounds; round 5 alone
    assert [(d["code"], d["round"], d["last_round"], d["count"], d["rounds"])
            for d in docs] == [("CA201", 1, 3, 4, 3), ("CA301", 2, 2, 1, 1),
                               ("CA201", 5, 5, 1, 1)]
    first = docs[0]
    assert (first["line"], first["last_line"], first["message"], first["last_message"],
            first["entities"], first["values"]) == (3, 5, "m", "last", ["a", "b"], {"n": 1})
    assert docs[1]["severity"] == "warning" and docs[1]["last_message"] is None
    every, _ = bounded_episodes(found, show_all=True)
    assert [len(run) for run in every] == [1] * 6


def test_episodes_per_rule_boundary() -> None:
    assert EPISODES_PER_RULE == 5
    five = [finding("CA103", r) for r in (0, 2, 4, 6, 8)]  # not adjacent: 5 episodes
    listed, omitted = bounded_episodes(five, show_all=False)
    assert (len(listed), omitted) == (5, [])
    six = [*five, finding("CA103", 10), finding("CA103", 11)]
    listed, omitted = bounded_episodes(six, show_all=False)
    assert len(listed) == 5
    assert omitted == [{"code": "CA103", "rule": "rule-CA103", "episodes": 1, "findings": 2,
                        "first_round": 10, "last_round": 11}]
    listed, omitted = bounded_episodes(six, show_all=True)
    assert (len(listed), omitted) == (7, [])


def test_a_rules_one_error_is_listed_whatever_warnings_came_before_it() -> None:
    # usertest71 #2: a summary's invented ticket, CA305's only error, was its 4th
    # episode and every format cut it for three warnings (5 in JSON: 6 here)
    warn = Severity.WARNING
    found = [finding("CA305", r, severity=warn) for r in (0, 2, 4, 6, 8, 10)]
    found.append(finding("CA305", 12, "ticket"))
    listed, omitted = bounded_episodes(found, show_all=False)
    # the error and the first four warnings, in round order; the warning of round 10 left
    assert [run[0].round for run in listed] == [0, 2, 4, 6, 12]
    assert omitted == [{"code": "CA305", "rule": "rule-CA305", "episodes": 2, "findings": 2,
                        "first_round": 8, "last_round": 10}]
    # no error: the first five by round, as before
    listed, omitted = bounded_episodes(found[:-1], show_all=False)
    assert [run[0].round for run in listed] == [0, 2, 4, 6, 8]
    assert omitted[0]["first_round"] == omitted[0]["last_round"] == 10


def test_the_text_report_and_annotations_show_the_rules_one_error(tmp_path: Path) -> None:
    from compaction_audit.report.github import _priority
    from compaction_audit.report.junit import _episodes_text
    from compaction_audit.report.summary import episodes

    warn = Severity.WARNING
    found = [finding("CA305", r, message=f"claim {r}", severity=warn) for r in (0, 2, 4)]
    found.append(finding("CA305", 6, message="ticket OPS-7781"))
    # JUnit: EPISODES_PER_RULE (5) shows all four; the text report shows three
    assert "ticket OPS-7781" in _episodes_text(found, False, {})
    others = [finding("CA201", r) for r in (1, 3, 5)]  # a rule's second errors
    runs = list(episodes([*found, *others]))
    order = [run[0].message for run in _priority(runs)]
    # GitHub's slots: the first error of each rule before any rule's second
    assert order[:2] == ["m", "ticket OPS-7781"]
    # the text report: three episodes of a rule, the error among them, in round order
    from types import SimpleNamespace

    from rich.console import Console

    from compaction_audit.report.terminal import findings_section

    console = Console(width=100, record=True)
    console.print(findings_section(SimpleNamespace(findings=found)))  # type: ignore[arg-type]
    text = console.export_text()
    assert [m for m in ("claim 0", "claim 2", "claim 4", "ticket OPS-7781") if m in text] == [
        "claim 0", "claim 2", "ticket OPS-7781"]
    assert "1 more episode of CA305 (round 4)" in text


def numbers_trace(path: Path, n: int) -> Path:
    """One span stating ``n`` shard timings, folded into a summary that keeps none of
    them, its sources evicted (issue 11: a 172 KB span of 30,000 numbers gave a 19 MB
    JSON report)."""
    text = " ".join(f"shard {i} took {10000 + i} ms;" for i in range(n))
    return dump([
        session(session_id="numbers", budget_tokens=100_000, max_depth=3),
        rnd(0, spans=[{"id": "s1", "tokens": 900, "text": text},
                      {"id": "s2", "tokens": 50, "text": "Notes on the backfill."}]),
        rnd(1, summaries=[{"id": "f1", "tokens": 40, "children": ["s1", "s2"],
                           "text": "The backfill was reviewed."}],
            evicted=["s1", "s2"]),
    ], path)


def audit_json(path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = RUNNER.invoke(app, ["audit", str(path), "-f", "json", *args])
    return len(result.stdout.encode()), json.loads(result.stdout)


def test_one_span_of_many_numbers_gives_a_report_a_tenth_of_the_trace(tmp_path: Path
                                                                      ) -> None:
    trace = numbers_trace(tmp_path / "numbers.jsonl", 10_000)
    size, doc = audit_json(trace)
    assert size <= trace.stat().st_size / 10
    _, every = audit_json(trace, "--all")
    total = len(every["lost_discriminators"])
    assert total > 10_000  # a timing and a shard number per clause, at least
    assert len(doc["lost_discriminators"]) == 10
    assert doc["lost_discriminators"] == every["lost_discriminators"][:10]
    cut = doc["lost_discriminators_truncated"]
    assert (cut["truncated"], cut["shown"], cut["total"]) == (True, 10, total)
    rest = Counter(str(d["tier"]) for d in every["lost_discriminators"][10:])
    assert cut["rest_by_tier"] == dict(sorted(rest.items()))
    # the CA301 finding's values are capped too, its message bounded
    ca301 = [f for f in doc["findings"] if f["code"] == "CA301"]
    assert len(ca301) == 1 and len(json.dumps(ca301[0])) < 4_000


def test_series_keeps_the_key_rounds_and_all_keeps_every_round(tmp_path: Path) -> None:
    records: list[Any] = [session(session_id="long", budget_tokens=1_000)]
    records.append(rnd(0, spans=[{"id": "s0", "tokens": 10}]))
    records += [rnd(t, spans=[{"id": f"s{t}", "tokens": 10}]) for t in range(1, 30)]
    trace = dump(records, tmp_path / "long.jsonl")
    _, doc = audit_json(trace)
    # no finding, no onset: the first and the last round
    assert doc["findings"] == [] and doc["counts"] == {"error": 0, "warning": 0, "info": 0}
    assert [r["round"] for r in doc["series"]] == [0, 29]
    assert doc["series_rounds"] == {"shown": 2, "total": 30, "all": False}
    _, every = audit_json(trace, "--all")
    assert [r["round"] for r in every["series"]] == list(range(30))
    assert every["series_rounds"] == {"shown": 30, "total": 30, "all": True}


def test_sarif_and_junit_list_five_episodes_per_rule_and_count_the_rest(tmp_path: Path
                                                                        ) -> None:
    import xml.etree.ElementTree as ET

    from compaction_audit.api import audit
    from compaction_audit.report.summary import episodes
    from compaction_audit.simulate.scale import write_scale_session

    trace = tmp_path / "scale.jsonl"
    write_scale_session(trace, 100, 100, seed=0, retained=False)
    found = audit(str(trace)).findings
    per_rule = Counter(run[0].code for run in episodes(found))
    assert per_rule["CA301"] > 5  # silent folds every few rounds, not adjacent
    result = RUNNER.invoke(app, ["audit", str(trace), "-f", "sarif", "--fail-on", "never"])
    run_ = json.loads(result.stdout)["runs"][0]
    shown = Counter(r["ruleId"] for r in run_["results"])
    assert shown == {code: min(n, 5) for code, n in per_rule.items()}
    notes = [n["message"]["text"] for n in run_["invocations"][0]["toolExecutionNotifications"]
             if n["level"] == "note"]
    # every finding is in a listed episode's count or in a note's "(N findings, ...)"
    omitted = sum(int(re.search(r"\((\d+) findings?", t).group(1)) for t in notes)  # type: ignore[union-attr]
    assert sum(r["properties"]["count"] for r in run_["results"]) + omitted == len(found)
    assert any(t.startswith(f"{per_rule['CA301'] - 5} more episodes of CA301 ") for t in notes)
    every = RUNNER.invoke(app, ["audit", str(trace), "-f", "sarif", "--all"])
    assert len(json.loads(every.stdout)["runs"][0]["results"]) == len(found)
    junit = RUNNER.invoke(app, ["audit", str(trace), "-f", "junit"])
    case = ET.fromstring(junit.stdout.encode()).find(
        ".//testcase[@name='CA301 silent-discriminating-fold']/failure")
    assert case is not None  # the failure lists the episodes at or above --fail-on
    failing = len(list(episodes([f for f in found if f.code == "CA301"
                                 and f.severity is Severity.ERROR])))
    assert failing > 5 and (case.text or "").endswith(
        f"and {failing - 5} more episodes (--all lists them)")
