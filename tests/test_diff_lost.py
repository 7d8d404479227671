"""``diff``: fold findings match across runs by what was lost, not by fold id
(issue 13, section 4).

Each log: round 0 brings span ``u`` (a user's negation, 20 tokens) and ``t`` (a tool's
line naming a timeout of 45000); round 1 folds them into a summary whose text keeps
neither.  Evicting the children makes the fold silent (CA301, error: a negation and a
quantity are lost); offloading them keeps it topic-only (CA302, warning).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compaction_audit.diff import diff_reports, finding_units, gate
from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import Finding, Severity
from tests.logs import LogWriter, rnd

NEGATION = "Do NOT enable `--force` on the prod migration."
TIMEOUT = "Raised read_timeout_ms from 30000 to 45000 on staging."
RAISED = "read_timeout_ms from 30000 to 45000"
"""TIMEOUT's value bound to its name (usertest72 #3)."""
NEGATION_LOST = ["lost:negation:Do NOT enable `--force` on the prod migration",
                 "lost:scope:prod", "lost:identifier:--force"]
"""What a fold that keeps none of NEGATION loses, in the audit's ranked order (a
person's words, tier 2; the kind's rank, worst first)."""


def audit(path: Path) -> SessionReport:
    return audit_session(read_native(str(path)))


def fold_log(write_log: LogWriter, name: str, fold_id: str, how: str = "evicted",
             spans: tuple[str, ...] = ("u",)) -> SessionReport:
    texts = {"u": (NEGATION, "user"), "t": (TIMEOUT, "tool:shell")}
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": s, "tokens": 20, "text": texts[s][0], "source": texts[s][1]}
                      for s in spans]),
        rnd(1, summaries=[{"id": fold_id, "tokens": 5, "children": list(spans),
                           "text": "Guidance was noted."}], **{how: list(spans)})]
    return audit(write_log(records, name))


def units(report_pair: tuple[SessionReport, SessionReport]) -> list[tuple[str, str, str]]:
    d = diff_reports(*report_pair)
    return [(f.status, f.code, f.key) for f in d.findings if f.code in ("CA301", "CA302")]


def test_same_loss_under_another_fold_id_persists(write_log: LogWriter) -> None:
    base = fold_log(write_log, "a.jsonl", "L1")
    cand = fold_log(write_log, "b.jsonl", "run2-fold-77")
    assert [f.entity for f in cand.findings if f.code == "CA301"] == ["run2-fold-77"]
    assert units((base, cand)) == [("persisting", "CA301", k) for k in NEGATION_LOST]
    d = diff_reports(base, cand)
    assert d.by_status("new") == [] and gate(d, None, "info") == []


def test_a_discriminator_lost_only_in_the_candidate_is_new(write_log: LogWriter) -> None:
    base = fold_log(write_log, "a.jsonl", "L1")
    cand = fold_log(write_log, "b.jsonl", "K1", spans=("u", "t"))
    got = units((base, cand))
    assert [k for status, _, k in got if status == "persisting"] == NEGATION_LOST
    new = [k for status, _, k in got if status == "new"]
    # ranked as the audit lists them (usertest8: the diff listed units alphabetically,
    # trivia first): the person's negation (tier 2) before the tool's values (tier 5)
    assert new == ["lost:scope:staging", "lost:quantity:30000", f"lost:quantity:{RAISED}",
                   "lost:identifier:read_timeout_ms"]
    assert [k for _, _, k in got] == [
        f"lost:{d['kind']}:{d['text']}" for d in cand.extra["lost_discriminators"]]
    assert [d["tier"] for d in cand.extra["lost_discriminators"]] == [2, 2, 2, 5, 5, 5, 5]
    assert all(code == "CA301" for status, code, _ in got)
    d = diff_reports(base, cand)
    # each unit weighs as its fact's own loss (usertest66 F4): the tool's values (tier
    # 5) are a warning from a version pin up (scope, quantities), info below (an
    # identifier), though the fold, which lost the person's negation too, is an error
    assert [(f.key, f.severity.value) for f in d.by_status("new")] == [
        ("lost:scope:staging", "warning"), ("lost:quantity:30000", "warning"),
        (f"lost:quantity:{RAISED}", "warning"), ("lost:identifier:read_timeout_ms", "info")]
    assert [f.severity.value for f in cand.findings if f.code == "CA301"] == ["error"]
    assert gate(d, None, "error") == []
    [reason] = gate(d, None, "warning")
    assert reason.startswith("3 new finding unit(s) at or above warning: CA301")
    # the other way round the same units are resolved, and nothing is new
    back = diff_reports(cand, base)
    assert back.by_status("new") == [] and gate(back, None, "info") == []
    assert sorted(f.key for f in back.by_status("resolved")) == sorted(new)


def test_recoverable_then_lost_is_a_new_loss(write_log: LogWriter) -> None:
    """Offloaded in the baseline (CA302: the children stay resolvable, nothing is lost),
    evicted in the candidate (CA301): each fact is a new lost: unit and its held: unit
    is resolved (usertest19 #7, adv70 #1: as one persisting unit a fact that got worse,
    recoverable to lost, never failed --fail-on-new).  The other way round the candidate
    does better: each fact the baseline lost persists, as the candidate's CA302 (a
    warning) beside the baseline's CA301, and nothing is new (usertest43 #2)."""
    base = fold_log(write_log, "a.jsonl", "L1", how="offloaded")
    cand = fold_log(write_log, "b.jsonl", "L2")
    assert [f.code for f in base.findings if f.code.startswith("CA30")][:1] == ["CA302"]
    held = [k.replace("lost:", "held:", 1) for k in NEGATION_LOST]
    assert sorted(units((base, cand))) == sorted(
        [("new", "CA301", k) for k in NEGATION_LOST]
        + [("resolved", "CA302", k) for k in held])
    assert sorted(units((cand, base))) == sorted(
        [("persisting", "CA302", k) for k in NEGATION_LOST])
    better = diff_reports(cand, base)
    assert {f.baseline_code for f in better.findings if f.code == "CA302"} == {"CA301"}
    assert gate(better, None, "warning") == []


def test_every_fact_a_fold_lost_is_a_unit_not_only_the_first_50_children(
        write_log: LogWriter) -> None:
    """ux5 F1b: the units came from the fold finding's children, capped at 50, so a
    fold over 60 spans lost 60 facts and the diff saw 50 (on a real session 103 of
    210, and a newly lost spec requirement could pass --fail-on-new)."""
    ports = [f"p{k}" for k in range(60)]
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": p, "tokens": 5, "text": f"Open port {9000 + k}."}
                      for k, p in enumerate(ports)]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ports,
                           "text": "Ports were opened."}], evicted=ports)]
    cand = audit(write_log(records, "cand.jsonl"))
    base = audit(write_log(records[:1], "base.jsonl"))
    (fold,) = [f for f in cand.findings if f.code == "CA301"]
    assert len(fold.values["children"]) == 50 and fold.values.get("children_more") == 10
    new = diff_reports(base, cand).by_status("new")
    assert sorted(u.key for u in new if u.code == "CA301") == sorted(
        f"lost:quantity:{9000 + k}" for k in range(60))


def test_a_fact_another_span_still_holds_is_not_a_lost_unit(write_log: LogWriter) -> None:
    """ux5 F1: the units counted every fact a fold's children dropped, facts another
    span still held included, so the diff of two real Cline compactions called 9 held
    facts "resolved".  A fold's units are what it lost."""
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": "a", "tokens": 5, "text": "Open port 9001 and port 9002."},
                      {"id": "b", "tokens": 5, "text": "Port 9002 stays open."}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"],
                           "text": "Ports were opened."}], evicted=["a"])]
    report = audit(write_log(records, "held.jsonl"))
    (fold,) = [f for f in report.findings if f.code == "CA301"]
    dropped = {d["text"] for c in fold.values["children"] for d in c["dropped"]}
    assert dropped == {"9001", "9002"}
    units = [u.key for u in diff_reports(report, report).by_status("persisting")
             if u.code == "CA301"]
    assert units == ["lost:quantity:9001"]


def _entity_finding(code: str, rnd_no: int, entity: str, **values: Any) -> Finding:
    return Finding("r", code, Severity.WARNING, rnd_no, rnd_no + 1, "m", "a", values, entity)


def test_stale_summaries_and_violations_match_by_what_they_are_not_by_ids(
        write_log: LogWriter) -> None:
    """usertest18 #10: a stale summary (CA306) was matched by its summary's id, and a
    violation (CA307) by its span's: ids local to a run, so the same finding in a second
    run was "new" and "resolved".  A stale summary is matched by its ordinal, a
    violation by the lost rule and the action."""
    base, cand = fold_log(write_log, "a.jsonl", "L1"), fold_log(write_log, "b.jsonl", "K1")
    rule = {"kind": "negation", "text": "Do not run lint-tool", "object": "lint-tool",
            "violated_span": "t7"}
    base.findings = [_entity_finding("CA306", 1, "c2"), _entity_finding("CA306", 1, "c5"),
                     _entity_finding("CA307", 1, "u1#k", **rule)]
    cand.findings = [_entity_finding("CA306", 1, "run2-c9"),
                     _entity_finding("CA307", 1, "x4#k", **{**rule, "violated_span": "t9"})]
    assert sorted(finding_units(base)) == [
        ("CA306", "stale:0"), ("CA306", "stale:1"),
        ("CA307", "violated:negation:Do not run lint-tool:lint-tool")]
    d = diff_reports(base, cand)
    assert sorted((f.status, f.code, f.key) for f in d.findings) == [
        ("persisting", "CA306", "stale:0"),
        ("persisting", "CA307", "violated:negation:Do not run lint-tool:lint-tool"),
        ("resolved", "CA306", "stale:1")]


def _fold_finding(code: str, fold: str, round_: int, dropped: list[dict[str, Any]]
                  ) -> Finding:
    severity = Severity.ERROR if code == "CA301" else Severity.WARNING
    return Finding("f", code, severity, round_, round_ + 1, f"fold {fold}", "a",
                   {"fold": fold, "children": [{"child": "c", "dropped": dropped}]}, fold)


def test_a_fold_that_drops_again_a_fact_lost_earlier_keys_it_as_lost() -> None:
    # usertest23 #4: a fact lost first by the fold at round 1, stated again by a span
    # read later and dropped by the fold at round 38, read there as "held"
    from compaction_audit.diff import FoldLosses, lost_keys

    losses = FoldLosses()
    losses.ranked = ["lost:identifier:dot-product", "lost:quantity:86"]
    losses["t1"] = ["lost:identifier:dot-product", "lost:quantity:86"]
    again = _fold_finding("CA301", "t38", 38, [
        {"kind": "identifier", "text": "dot-product", "pos": 0},
        {"kind": "identifier", "text": "HotpotQA", "pos": None}])
    # a fold that lost something is not keyed by what another span still holds
    assert lost_keys(again, losses) == ["lost:identifier:dot-product"]
    assert lost_keys(_fold_finding("CA302", "t1", 1, []), losses) == [
        "lost:identifier:dot-product", "lost:quantity:86"]


def test_a_unit_of_two_fold_rules_is_where_its_code_fired() -> None:
    # usertest23 #4: the unit took the rounds and first line of both rules' findings
    # (round 1, line 2) beside the CA301 finding's message (round 38)
    from compaction_audit.report.diff_render import _where

    report = SessionReport.__new__(SessionReport)
    first = _fold_finding("CA302", "t1", 1, [{"kind": "identifier", "text": "x", "pos": 0}])
    later = _fold_finding("CA301", "t38", 38, [{"kind": "identifier", "text": "x",
                                                "pos": 0}])
    report.findings = [first, later]
    report.extra = {"lost_discriminators": [
        {"kind": "identifier", "text": "x", "cause": "fold", "fold": "t1"}]}
    report.series = {"round": [1, 38]}  # type: ignore[assignment]
    [(key, occ)] = finding_units(report).items()
    assert key == ("CA301", "lost:identifier:x")
    assert (occ.first_round, occ.last_round, occ.rounds, occ.line) == (38, 38, 1, 39)
    assert occ.message == "fold t38"
    assert _where(occ) == "round 38 (line 39)"


def test_where_says_rounds_with_gaps_as_they_are() -> None:
    from compaction_audit.diff import Occurrence
    from compaction_audit.report.diff_render import _where

    def where(first: int, last: int, n: int) -> str:
        return _where(Occurrence(first, last, n, 3, Severity.ERROR, "m"))

    assert where(2, 38, 2) == "rounds 2 and 38 (line 3)"
    assert where(2, 3, 2) == "rounds 2-3 (2 rounds, line 3)"
    assert where(2, 40, 5) == "5 rounds from 2 to 40 (line 3)"
    assert where(16, 19, 4) == "rounds 16-19 (4 rounds, line 3)"
    assert where(5, 5, 1) == "round 5 (line 3)"


def test_a_fold_with_losses_of_its_own_is_keyed_by_what_it_dropped_again_too() -> None:
    # usertest25 #1: the fold at round 4 lost facts of its own and dropped again
    # 'version 0.5.1', lost first at round 1; the unit showed round 1 only
    from compaction_audit.diff import FoldLosses, lost_keys

    losses = FoldLosses()
    losses.ranked = ["lost:version:0.5.1", "lost:quantity:86", "lost:identifier:x"]
    losses["t1"] = ["lost:version:0.5.1"]
    losses["t4"] = ["lost:quantity:86", "lost:identifier:x"]
    again = _fold_finding("CA302", "t4", 4, [
        {"kind": "quantity", "text": "86", "pos": 1},
        {"kind": "version", "text": "0.5.1", "pos": 0},
        {"kind": "identifier", "text": "HotpotQA", "pos": None}])
    assert lost_keys(again, losses) == ["lost:quantity:86", "lost:identifier:x",
                                        "lost:version:0.5.1"]
    report = SessionReport.__new__(SessionReport)
    report.findings = [_fold_finding("CA302", "t1", 1, [{"kind": "version", "text": "0.5.1",
                                                         "pos": 0}]), again]
    report.extra = {"lost_discriminators": [
        {"kind": "version", "text": "0.5.1", "cause": "fold", "fold": "t1"},
        {"kind": "quantity", "text": "86", "cause": "fold", "fold": "t4"},
        {"kind": "identifier", "text": "x", "cause": "fold", "fold": "t4"}]}
    report.series = {"round": [1, 4]}  # type: ignore[assignment]
    occ = finding_units(report)[("CA302", "lost:version:0.5.1")]
    assert (occ.first_round, occ.last_round, occ.rounds, occ.line) == (1, 4, 2, 2)


def test_a_unit_reported_by_another_rule_in_the_baseline_says_which(
        write_log: LogWriter) -> None:
    """adv84 #6: a fact an accounted fold lost in the baseline (CA302) and a silent one
    in the candidate (CA301) persists under CA301, while the onsets say CA301
    "appeared": the unit now says the baseline's rule, in text and JSON."""
    import io

    from rich.console import Console

    from compaction_audit.report.diff_render import diff_dict, findings_section

    def one(name: str, accounted: bool) -> SessionReport:
        fold: dict[str, Any] = {"id": "m1", "tokens": 5, "children": ["u"],
                                "text": "Guidance was noted."}
        if accounted:
            fold["accounting"] = "dropped the flag rule"
        return audit(write_log([rnd(0, spans=[{"id": "u", "tokens": 20, "text": NEGATION,
                                                "source": "user"}]),
                                rnd(1, summaries=[fold], evicted=["u"])], name))

    d = diff_reports(one("a.jsonl", True), one("b.jsonl", False))
    persisting = [f for f in d.by_status("persisting") if f.key.startswith("lost:")]
    assert [(f.code, f.baseline_code, f.key) for f in persisting] == [
        ("CA301", "CA302", k) for k in NEGATION_LOST]
    assert {u["baseline_code"] for u in diff_dict(d)["findings"]["persisting"]
            if u["key"].startswith("lost:")} == {"CA302"}
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(findings_section(d))
    text = console.export_text()
    assert (f"{NEGATION_LOST[1]}  baseline round 1 (line 2) as CA302, candidate round 1 "
            "(line 2)") in text
    # the same rule on both sides: nothing to say
    same = diff_reports(one("c.jsonl", False), one("d.jsonl", False))
    assert {f.baseline_code for f in same.findings} == {None}


def _held_then_lost(write_log: LogWriter, name: str, rounds: int) -> SessionReport:
    """Span ``a`` and ``b`` state NEGATION; fold ``m`` drops ``a`` at round 1 while ``b``
    still holds it; at round 2 fold ``n`` drops ``b``: the fact is lost, counted at
    ``m``, the fold that dropped it first.  ``rounds`` 2 stops before ``n``."""
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": s, "tokens": 10, "text": NEGATION, "source": "user"}
                      for s in ("a", "b")]
            + [{"id": "c", "tokens": 10, "text": "Looked at the logs."}]),
        rnd(1, summaries=[{"id": "m", "tokens": 3, "children": ["a", "c"],
                           "text": "Looked at the logs."}], evicted=["a", "c"]),
        rnd(2, summaries=[{"id": "n", "tokens": 3, "children": ["m", "b"],
                           "text": "Looked at the logs."}], evicted=["m", "b"]),
    ]
    return audit(write_log(records[:rounds], name=name))


def test_a_fact_the_baseline_lost_and_the_candidate_holds_persists(
        write_log: LogWriter) -> None:
    """usertest43 #2: the first rounds of a log diffed with the whole log failed
    ``--fail-on-new warning`` on "new" ``held:`` units, each a fact the whole log lost."""
    whole, prefix = (_held_then_lost(write_log, f"{n}.jsonl", n) for n in (3, 2))
    assert {k for _, k in finding_units(prefix)} >= {f"held:{u[5:]}" for u in NEGATION_LOST}
    diff = diff_reports(whole, prefix)
    assert diff.by_status("new") == []
    persisting = {d.key: d for d in diff.by_status("persisting") if d.code == "CA301"}
    assert set(persisting) == set(NEGATION_LOST)
    # the baseline's units weigh as each fact's own loss (usertest66 F4): the person's
    # bare flag a warning (a name with no digit, dot or slash: adv139 #4); the
    # candidate's, held, the fold's warning
    assert {k: (d.baseline and d.baseline.severity, d.candidate and d.candidate.severity)
            for k, d in persisting.items()} == {
        NEGATION_LOST[0]: (Severity.ERROR, Severity.WARNING),
        NEGATION_LOST[1]: (Severity.ERROR, Severity.WARNING),
        NEGATION_LOST[2]: (Severity.WARNING, Severity.WARNING)}
    assert gate(diff, None, "warning") == []
    # the other way, held in the baseline and lost in the candidate, stays new
    back = diff_reports(prefix, whole)
    assert {d.key for d in back.by_status("new") if d.code == "CA301"} == set(NEGATION_LOST)


def test_the_first_rounds_of_a_run_add_no_new_unit(tmp_path: Path) -> None:
    """usertest43 #2: the first 12 rounds of sample (a), byte for byte, diffed with the
    whole log failed ``--fail-on-new warning`` on 22 "new" units: 17 ``held:`` units of
    facts the whole log lost later, and 5 of facts the whole log's folds dropped while
    losing others (``held:identifier:faiss-cpu`` at fold t2.50)."""
    from compaction_audit.api import audit as audit_path

    sample = Path(__file__).parent.parent / "sample_logs" / "research-decay.jsonl"
    prefix = tmp_path / "first12.jsonl"
    prefix.write_text("".join(sample.read_text().splitlines(keepends=True)[:13]))
    d = diff_reports(audit_path(str(sample)), audit_path(str(prefix)))
    assert d.by_status("new") == []
    assert gate(d, None, "warning") == []
    faiss = [u for u in d.by_status("persisting") if u.key == "held:identifier:faiss-cpu"]
    assert [(u.code, u.baseline_code) for u in faiss] == [("CA301", None)]
    # held on both sides: the baseline fold's error is the other facts it lost, so the
    # unit is a warning there too (as the fact's own severity it made the unit "now at
    # or above error" the other way round)
    assert faiss[0].baseline and faiss[0].baseline.severity is Severity.WARNING
    assert faiss[0].candidate and faiss[0].candidate.severity is Severity.WARNING


def test_a_fact_the_candidate_holds_in_a_fold_that_lost_others_persists(
        write_log: LogWriter) -> None:
    """usertest44 #2: fold m drops a (a timeout) and b (a pin); span c restates a's
    timeout until the baseline evicts it at round 2, where the candidate stops.  The
    candidate's m lost the pin and still holds the timeout, so it is keyed by the pin
    alone; the baseline's timeout units read "resolved" (3 of them)."""
    def span(i: str, text: str) -> dict[str, Any]:
        return {"id": i, "tokens": 10, "text": text, "role": "user"}

    records: list[dict[str, Any]] = [
        rnd(0, spans=[span("a", "Set read_timeout_ms to 45000 on prod."),
                      span("b", "Pin numpy to 1.26.4 on prod."),
                      span("c", "Reminder: read_timeout_ms to 45000 on prod.")]),
        rnd(1, summaries=[{"id": "m", "tokens": 3, "children": ["a", "b"],
                           "text": "Reviewed settings."}], evicted=["a", "b"]),
        rnd(2, spans=[{"id": "d", "tokens": 10, "text": "Reviewed the dashboard."}],
            evicted=["c"]),
    ]
    whole = audit(write_log(records, name="whole.jsonl"))
    first = audit(write_log(records[:2], name="first.jsonl"))
    d = diff_reports(whole, first)
    assert [u.key for u in d.by_status("resolved")] == []
    assert d.by_status("new") == []
    timeout = [u for u in d.by_status("persisting") if "read_timeout_ms" in u.key]
    assert timeout and all(u.key.startswith("lost:") for u in timeout)
    # and the other way: what the first run held, the whole run lost: new
    back = diff_reports(first, whole)
    assert {u.key for u in back.by_status("new")} >= {u.key for u in timeout}


def test_the_first_rounds_add_no_new_unit_under_a_configured_severity(
        tmp_path: Path) -> None:
    """adv93 #5: with CA301 configured as error, a fact held on both sides was matched
    at a fixed warning on the baseline's side, and "1 persisting finding unit(s) now at
    or above error" failed the diff of a log's first 12 rounds against the whole log."""
    from compaction_audit.api import audit as audit_path

    sample = Path(__file__).parent.parent / "sample_logs" / "research-decay.jsonl"
    prefix = tmp_path / "first12.jsonl"
    prefix.write_text("".join(sample.read_text().splitlines(keepends=True)[:13]))
    error = {"silent-discriminating-fold": Severity.ERROR}
    d = diff_reports(audit_path(str(sample), severity=error),
                     audit_path(str(prefix), severity=error))
    assert d.by_status("new") == [] and gate(d, None, "error") == []
    [faiss] = [u for u in d.by_status("persisting") if u.key == "held:identifier:faiss-cpu"]
    assert faiss.baseline and faiss.candidate
    assert faiss.baseline.severity is faiss.candidate.severity is Severity.ERROR


def test_a_configured_severity_weighs_every_unit_as_configured(write_log: LogWriter) -> None:
    """usertest66 F4 lowers a unit to its fact's own weight only where the audit lowers
    a fold: a configured severity of the rule is every unit's, as the audit's."""
    base = fold_log(write_log, "a.jsonl", "L1")
    cand = fold_log(write_log, "b.jsonl", "K1", spans=("u", "t"))
    from compaction_audit.api import audit as audit_path

    loud = {"silent-discriminating-fold": Severity.ERROR}
    d = diff_reports(audit_path(base.path, severity=loud),
                     audit_path(cand.path, severity=loud))
    assert {f.severity.value for f in d.by_status("new")} == {"error"}
    assert [f.severity.value for f in diff_reports(base, cand).by_status("new")] == [
        "warning", "warning", "warning", "info"]


def _kept_or_not(write_log: LogWriter, name: str, summary: str) -> SessionReport:
    """The person's NEGATION folded at round 1 into a summary of ``summary``: a loop of
    depth 1, which cannot invert (no onset in either run, as with an agent product)."""
    records: list[dict[str, Any]] = [
        rnd(0, spans=[{"id": "u", "tokens": 20, "text": NEGATION, "source": "user"}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u"], "text": summary}],
            evicted=["u"])]
    return audit(write_log(records, name))


def test_a_run_that_lost_less_is_green_where_neither_can_invert(
        write_log: LogWriter) -> None:
    """usertest66 F5: with no onset in either run, the findings decide the colour: a
    candidate whose summary keeps what the baseline's lost (0 new; resolved: the three
    facts and the recall floor, CA303) is green; the other way (4 new) it is not; a run
    against itself neither."""
    from compaction_audit.report.diff_render import verdict_text

    lost = _kept_or_not(write_log, "a.jsonl", "Guidance was noted.")
    kept = _kept_or_not(write_log, "b.jsonl", f"Guidance was noted: {NEGATION}")
    better, worse = diff_reports(lost, kept), diff_reports(kept, lost)
    assert (len(better.by_status("new")), len(better.by_status("resolved"))) == (0, 4)
    assert better.moved() == "later" and str(verdict_text(better).style) == "bold green"
    assert len(worse.by_status("new")) == 4 and worse.moved() == "unchanged"
    assert diff_reports(lost, lost).moved() == "unchanged"


def test_a_fact_the_agent_tagged_weighs_as_its_fold(write_log: LogWriter) -> None:
    """adv127 #2: the tool's values, tagged ``salience_class: "discriminating"`` by the
    agent, lost in a fold that lost the person's negation too: the audit never lowers a
    fold for a tagged fact's tier, so neither does its unit (they read warning and info,
    and ``--fail-on-new error`` passed them)."""
    def log(name: str, spans: tuple[str, ...]) -> SessionReport:
        texts = {"u": (NEGATION, "user"), "t": (TIMEOUT, "tool:shell")}
        records: list[dict[str, Any]] = [
            rnd(0, spans=[{"id": s, "tokens": 20, "text": texts[s][0], "source": texts[s][1],
                           **({"salience_class": "discriminating"} if s == "t" else {})}
                          for s in spans]),
            rnd(1, summaries=[{"id": "F", "tokens": 5, "children": list(spans),
                               "text": "Guidance was noted."}], evicted=list(spans))]
        return audit(write_log(records, name))

    cand = log("b.jsonl", ("u", "t"))
    assert [cand.extra["lost_discriminators"][i]["span"]
            for i in cand.extra["declared_lost"]] == ["t"] * 4
    d = diff_reports(log("a.jsonl", ("u",)), cand)
    assert [(f.key, f.severity.value) for f in d.by_status("new")] == [
        ("lost:scope:staging", "error"), ("lost:quantity:30000", "error"),
        (f"lost:quantity:{RAISED}", "error"), ("lost:identifier:read_timeout_ms", "error")]
    assert gate(d, None, "error")[0].startswith("4 new finding unit(s) at or above error")
    assert "declared_lost" not in log("c.jsonl", ("u",)).extra  # none tagged: no key


def test_the_terminal_says_how_a_rule_s_units_differ(write_log: LogWriter) -> None:
    """usertest66 F4: a rule's count says its units' severities where they differ."""
    from rich.console import Console

    from compaction_audit.report.diff_render import findings_section

    base = fold_log(write_log, "a.jsonl", "L1")
    cand = fold_log(write_log, "b.jsonl", "K1", spans=("u", "t"))
    console = Console(width=200, record=True)
    console.print(findings_section(diff_reports(base, cand)))
    lines = [" ".join(ln.split()) for ln in console.export_text().splitlines()]
    assert "WARNING CA301 silent-discriminating-fold 4 unit(s): 3 warning, 1 info" in lines
    # persisting: the person's negation and its scope are errors, --force (a bare flag
    # they typed: adv139 #4) a warning; a rule whose units share one severity says
    # only the count
    assert "ERROR CA301 silent-discriminating-fold 3 unit(s): 2 error, 1 warning" in lines
    assert "ERROR CA201 ungrounded-summary 1 unit(s)" in lines
