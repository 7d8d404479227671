"""unsupported-summary-claim's carriers (recall/claims.py): the summaries below a
summary that state a claim are walked over summaries alone, not over every raw leaf
once per claim (issue 11, class 5: one summary over 5,000 spans stating 20,000 numbers
spent 150 s in that walk)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import claims
from compaction_audit.recall.analysis import typed_items
from tests.logs import LogWriter, rnd
from tests.workcount import lines_run


def _two_folds(write_log: LogWriter, n: int) -> Path:
    """n spans folded into S, S folded into S2; both summaries state n numbers no span
    holds (n unsupported claims each), and S2 states S's too."""
    said = " ".join(f"port_{j} is {j * 11 + 700001};" for j in range(n))
    return write_log([
        rnd(0, spans=[{"id": f"m{i}", "tokens": 1, "text": f"Set port_{i} to {i * 7 + 100003}."}
                      for i in range(n)]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "text": said,
                           "children": [f"m{i}" for i in range(n)]}],
            evicted=[f"m{i}" for i in range(n)]),
        rnd(2, summaries=[{"id": "S2", "tokens": 1, "text": said + " more",
                           "children": ["S"]}], evicted=["S"]),
    ], name=f"two-folds-{n}.jsonl")


def test_each_claim_of_the_upper_summary_names_the_lower_one_as_carrier(
        write_log: LogWriter) -> None:
    session = read_native(str(_two_folds(write_log, 3)))
    out, unchecked = claims.unsupported(session, typed_items(session))
    assert unchecked == 0
    upper = out.filter(out["summary"] == "S2")
    assert sorted(upper["text"].to_list()) == ["700001", "700012", "700023"]
    # S states them first: it is the origin, and the chain runs S -> S2
    assert upper["origin"].to_list() == ["S"] * 3
    assert upper["chain"].to_list() == [["S", "S2"]] * 3
    # S2 states them too, later: S's rows are not the ones reported, and have no chain
    lower = out.filter(out["summary"] == "S")
    assert lower["origin"].to_list() == [None] * 3 and lower["chain"].to_list() == [None] * 3


def test_the_carrier_walk_is_linear_in_claims_plus_leaves(write_log: LogWriter) -> None:
    lines = {}
    for n in (100, 200):
        session = read_native(str(_two_folds(write_log, n)))
        items = typed_items(session)
        (out, _), lines[n] = lines_run(claims, partial(claims.unsupported, session, items))
        assert out.height == 2 * n
    # before: each of the 2n claims walked all n leaves (100 -> 200 took 3.5x the lines)
    assert lines[200] < 2.5 * lines[100], lines


def _carried(write_log: LogWriter, n: int) -> Path:
    """A chain of n single-child folds over one span, each stating the same ticket that
    no span names: one claim carried from f1 up to fn."""
    rounds = [rnd(0, spans=[{"id": "s0", "tokens": 1, "text": "Looked at the queue."}])]
    prev = "s0"
    for i in range(1, n + 1):
        rounds.append(rnd(i, summaries=[{"id": f"f{i}", "tokens": 1, "children": [prev],
                                         "text": "Ticket INC-0042 is open."}],
                          evicted=[prev]))
        prev = f"f{i}"
    return write_log(rounds, name=f"carried-{n}.jsonl")


def test_a_carried_claim_has_its_chain_at_the_latest_summary_only(
        write_log: LogWriter) -> None:
    session = read_native(str(_carried(write_log, 3)))
    out, _ = claims.unsupported(session, typed_items(session))
    assert out.select("summary", "text", "origin", "chain").rows() == [
        ("f1", "INC-0042", None, None), ("f2", "INC-0042", None, None),
        ("f3", "INC-0042", "f1", ["f1", "f2", "f3"])]


def test_a_chain_carrying_one_claim_is_walked_once(write_log: LogWriter) -> None:
    lines = {}
    for n in (200, 400):
        session = read_native(str(_carried(write_log, n)))
        items = typed_items(session)
        (out, _), lines[n] = lines_run(claims, partial(claims.unsupported, session, items))
        assert out.height == n and out["chain"].drop_nulls().to_list() == [
            [f"f{i}" for i in range(1, n + 1)]]
    # before: each of the n summaries walked every summary below it (n x n / 2)
    assert lines[400] < 2.5 * lines[200], lines


def test_a_bag_reads_digit_runs_from_its_words_and_unicode_digits_from_the_text() -> None:
    """The support vocabulary (issue 14, item 4: digit runs are read from the words of
    an ASCII text, not the whole text again): thousands separators go, a number glued
    to a unit or inside a name gives its digits, and digits outside 0-9 are found."""
    words, _ = claims.bag("Set 45,000ms and 1,234,567 rows; v2_3b, 12,34")
    # a number with separators is one word, its groups none (usertest52 #2); the
    # measure token of a quantity whose unit converts
    assert sorted(words) == ["12", "1234567", "2", "3", "34", "45000", "=45000ms", "and",
                             "ms", "rows", "set", "v2_3b"]
    words, _ = claims.bag("Seen \u0663\u0664 items, 7,000 ms, run_42x")
    assert sorted(words) == ["42", "7000", "=7000ms", "items", "ms", "run_42x", "seen",
                             "\u0663\u0664"]


def _stating(write_log: LogWriter, n: int) -> Path:
    """A chain of n single-child folds, fold i stating its own ticket INC-(1000+i) and,
    from i >= 2, fold i-1's again.  A claim is reported at the latest fold stating it:
    f_i (1 < i < n) reports its predecessor's ticket, f_n both."""
    rounds = [rnd(0, spans=[{"id": "s0", "tokens": 1, "text": "Looked at the queue."}])]
    prev = "s0"
    for i in range(1, n + 1):
        said = f"Ticket INC-{1000 + i} is open." + (
            f" Ticket INC-{999 + i} is open." if i > 1 else "")
        rounds.append(rnd(i, summaries=[{"id": f"f{i}", "tokens": 1, "children": [prev],
                                         "text": said}], evicted=[prev]))
        prev = f"f{i}"
    return write_log(rounds, name=f"stating-{n}.jsonl")


def test_carriers_are_looked_for_within_a_cap_and_the_stop_is_said(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv75 #2: a chain of 1,000 folds of 20 claims each made about 10 million tests
    (66 s for 1.25 MB).  Counted: a walk costs a test per claim reported for each
    summary below and one per edge to a summary it follows: f2 1 + 1 = 2, f3 2 + 2 = 4,
    f4 3 + 3 x 2 = 9; 15 in all."""
    from compaction_audit.limits import Limit

    session = read_native(str(_stating(write_log, 4)))
    items = typed_items(session)
    monkeypatch.setattr(claims, "CARRIER_MAX_CHECKS", 15)  # 15 is not past 15
    limits: list[Limit] = []
    out, _ = claims.unsupported(session, items, None, limits)
    assert limits == []
    f4 = out.filter(out["summary"] == "f4").sort("text")
    assert f4["chain"].to_list() == [["f3", "f4"], ["f4"]]  # INC-1003 carried from f3
    monkeypatch.setattr(claims, "CARRIER_MAX_CHECKS", 14)
    out, _ = claims.unsupported(session, items, None, limits)
    assert limits == [Limit("unsupported-summary-claim", 14, "(claim, summary below) tests",
                            "summary 'f4'", 4, 5, 1, "summaries' claim carriers")]
    f4 = out.filter(out["summary"] == "f4").sort("text")
    assert f4["chain"].to_list() == [["f4"], ["f4"]]  # reported, its carrier not looked for
    assert f4["origin"].to_list() == [None, None]
    f3 = out.filter((out["summary"] == "f3") & (out["text"] == "INC-1002"))
    assert f3["chain"].to_list() == [["f2", "f3"]]  # walked before the cap



def test_summaries_without_text_count_against_the_carrier_cap(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv76 #1: a chain of summaries without text under each claiming summary cost
    the walk nothing against the cap (58 s, no limit line).  Here g1-g3 have no text;
    T1 and T2 each fold g3 and state a ticket: each walk visits 3 summaries (1 claim
    each) and follows 3 edges between summaries: 6 tests, 12 in all."""
    from compaction_audit.limits import Limit

    rounds = [rnd(0, spans=[{"id": "s0", "tokens": 1, "text": "Looked at the queue."}])]
    prev = "s0"
    for i in range(1, 4):
        rounds.append(rnd(i, summaries=[{"id": f"g{i}", "tokens": 1, "children": [prev]}],
                          evicted=[prev]))
        prev = f"g{i}"
    rounds.append(rnd(4, summaries=[
        {"id": "T1", "tokens": 1, "children": ["g3"], "text": "Ticket INC-7001 is open."},
        {"id": "T2", "tokens": 1, "children": ["g3"], "text": "Ticket INC-7002 is open."}],
        evicted=["g3"]))
    session = read_native(str(write_log(rounds, name="textless.jsonl")))
    items = typed_items(session)
    monkeypatch.setattr(claims, "CARRIER_MAX_CHECKS", 12)  # 6 + 6: not past it
    limits: list[Limit] = []
    claims.unsupported(session, items, None, limits)
    assert limits == []
    monkeypatch.setattr(claims, "CARRIER_MAX_CHECKS", 11)
    claims.unsupported(session, items, None, limits)
    assert [(x.at, x.left) for x in limits] == [("summary 'T2'", 1)]



def test_diff_says_a_run_whose_check_stopped_was_not_fully_checked(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest28 #1: a candidate whose carried-claim walk stopped at its cap was
    compared as if fully checked ("0 new, 0 resolved ... Gates passed")."""
    from compaction_audit.api import audit
    from compaction_audit.diff import diff_reports

    path = str(_stating(write_log, 4))
    base = audit(path)
    monkeypatch.setattr(claims, "CARRIER_MAX_CHECKS", 14)
    cand = audit(path)
    assert len(cand.limits) == 1 and not base.limits
    said = diff_reports(base, cand).headline()
    assert "; candidate not fully checked: 1 check stopped at its limit" in said, said
    assert "not fully checked" not in diff_reports(base, base).headline()
    from compaction_audit.diff import gate

    assert gate(diff_reports(base, cand), None, "error") == [
        "the candidate could not be checked as fully as the baseline: 1 check stopped at a "
        "limit (the baseline: 0); what it resolves may be unread, not fixed (audit the "
        "candidate: its notes say why)"]
    assert gate(diff_reports(base, base), None, "error") == []
