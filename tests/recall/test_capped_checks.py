"""Checks with a cap stop visibly (issue 11, class 5): stale-summary's (repeated
summary, newer span) checks, whose windows overlap when many summaries of one round are
repeated at later rounds (n x n / 2 pairs), and asked-again's (lost item, later user
message) checks, which stopped silently (it checked none past its cap).

Work is counted (survival checks made), never timed: under the cap it grows with the
square of n, past it it stays at the cap; the report says where each check stopped,
in every format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from compaction_audit.api import audit
from compaction_audit.io.native import read_native
from compaction_audit.limits import Limit
from compaction_audit.recall import harm, stale
from compaction_audit.recall.analysis import typed_items
from tests.ci_commands import clean
from tests.gate_app import run
from tests.logs import LogWriter, rnd, session

_BASE = "The alpha service was moved. The beta queue was drained. The gamma cache was warmed."


def _wide(write_log: LogWriter, n: int) -> Path:
    """n summaries T_i of round 0 (each folding a span), each repeated at round i + 1 by
    S_i; each round adds a user span: S_i's window is rounds 0..i + 1 (the shape of
    /tmp/quad/gen_wide.py)."""
    records: list[dict[str, Any]] = [
        session(session_id="wide"),
        rnd(0, spans=[{"id": f"a{i}", "tokens": 1, "text": f"port {i} is 45000 ms"}
                      for i in range(n)],
            summaries=[{"id": f"T{i}", "tokens": 1, "text": _BASE, "children": [f"a{i}"]}
                       for i in range(n)],
            evicted=[f"a{i}" for i in range(n)])]
    for i in range(1, n + 1):
        records.append(rnd(i, spans=[{"id": f"u{i}", "tokens": 1, "source": "user",
                                      "text": f"set the timeout_{i} to {i}000 ms"}],
                           summaries=[{"id": f"S{i}", "tokens": 1, "text": _BASE,
                                       "children": [f"T{i - 1}"]}],
                           evicted=[f"T{i - 1}", f"u{i}"]))
    return write_log(records, name=f"wide-{n}.jsonl")


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """Count the survival checks ``module`` makes (a list holding one counter)."""
    calls = [0]
    real = module.survives

    def counting(d: Any, text: str) -> bool:
        calls[0] += 1
        return bool(real(d, text))

    monkeypatch.setattr(module, "survives", counting)
    return calls


def _run_stale(path: Path) -> tuple[pl.DataFrame, list[Limit]]:
    s = read_native(str(path))
    limits: list[Limit] = []
    return stale.stale(s, typed_items(s), limits), limits


def test_stale_checks_stop_at_the_cap(write_log: LogWriter,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 600)
    work = {}
    for n in (40, 80):
        calls = _counted(monkeypatch, stale)
        out, limits = _run_stale(_wide(write_log, n))
        work[n] = calls[0]
        # every summary checked before the stop is judged as without the cap: each
        # S_i's window holds a span of every earlier round, none of them kept
        [limit] = limits
        checked = int(limit.at.split("'S")[1].rstrip("'")) - 1
        assert out["summary"].to_list() == [f"S{i}" for i in range(1, checked + 1)]
        assert limit.check == "stale-summary" and limit.cap == 600
        assert limit.left == n - checked and limit.round == checked + 1
        assert work[n] <= 600
    # window rows at n: about n * n; the old loop made about 4x the checks at 2n
    assert work[80] <= work[40] * 1.1


def test_stale_under_the_cap_checks_everything(write_log: LogWriter) -> None:
    out, limits = _run_stale(_wide(write_log, 12))
    assert limits == []
    assert out["summary"].to_list() == [f"S{i}" for i in range(1, 13)]
    # S3 (round 3): the other T's spans a0..a11 but a2 (its predecessor's leaf), u1..u3
    row = out.row(2, named=True)
    assert row["newer"] == 11 + 3 and len(row["unreached"]) == 14


def test_the_stop_is_where_the_cap_falls(write_log: LogWriter,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = _wide(write_log, 6)
    # S1 (round 1, line 3; predecessor T0): newer spans a1..a5 and u1 (a0 is T0's
    # leaf): 6 checks, then a survival check per discriminator (each a_i has one,
    # "45000 ms"; u1 two, "timeout_1" and "1000 ms"), none survives: 6 + 5 + 2 = 13.
    # S2 (round 2, line 4): a0, a2..a5, u1, u2: 7 + 5 + 2 + 2 = 16; 29 for both
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 29)
    out, limits = _run_stale(path)
    assert out["summary"].to_list() == ["S1", "S2"] and limits[0].at == "summary 'S3'"
    assert (limits[0].left, limits[0].round, limits[0].line) == (4, 3, 5)
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 28)
    out, limits = _run_stale(path)
    assert out["summary"].to_list() == ["S1"] and limits[0].at == "summary 'S2'"
    assert (limits[0].left, limits[0].round, limits[0].line) == (5, 2, 4)


def _lost(n: int) -> pl.DataFrame:
    return pl.DataFrame({"key": [f"identifier:ord-{i}" for i in range(n)],
                         "kind": ["identifier"] * n, "text": [f"ORD-{i}" for i in range(n)],
                         "start": [0] * n})


def _users(n: int) -> pl.DataFrame:
    return pl.DataFrame({"id": [f"u{i}" for i in range(n)], "ri": list(range(1, n + 1)),
                         "round": list(range(1, n + 1)),
                         "text": [f"is ORD-{i} fine?" for i in range(n)]})


def test_asked_again_checks_up_to_its_cap_and_says_where(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 500)
    work = {}
    for n in (40, 80):
        calls = _counted(monkeypatch, harm)
        limits: list[Limit] = []
        got = harm.asked_again(_lost(n), _users(n), limits)
        work[n] = calls[0]
        # ORD-k is asked again at u_k: k + 1 checks, so 500 - k(k+1)/2 are left before
        # ORD-k, which is checked while that covers all n users: k <= 29 at 40 (35
        # left for ORD-30), k <= 28 at 80 (65 left for ORD-29)
        checked = {40: 30, 80: 29}[n]
        assert got["id"].to_list() == [f"u{i}" for i in range(checked)]
        [limit] = limits
        assert limit.at == f"lost item 'ORD-{checked}'"
        assert limit.left == n - checked and limit.check == "asked-again"
        assert work[n] == checked * (checked + 1) // 2
    assert work[80] <= work[40]  # before: all pairs or (past the cap) none, silently


def test_asked_again_past_the_cap_is_no_longer_silent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 3)
    limits: list[Limit] = []
    got = harm.asked_again(_lost(3), _users(2), limits)
    # ORD-0 (2 users to check, budget 3): u0 after 1; ORD-1: 2 left >= 2, u1 after 2;
    # ORD-2: 0 left < 2: stops there
    assert got["id"].to_list() == ["u0", "u1"]
    assert [(x.at, x.left) for x in limits] == [("lost item 'ORD-2'", 1)]


def test_a_user_text_met_again_is_counted_not_checked_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # u0..u3 say "ok, go on" (none states ORD-0 or ORD-1), u4 "ORD-0 is the one": a
    # text is checked once per lost item, so each item checks two texts, but every
    # user span still counts toward the cap
    users = pl.DataFrame({"id": [f"u{i}" for i in range(6)], "ri": list(range(1, 7)),
                          "round": list(range(1, 7)),
                          "text": ["ok, go on"] * 4 + ["ORD-0 is the one"] * 2})
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 10)
    calls = _counted(monkeypatch, harm)
    limits: list[Limit] = []
    got = harm.asked_again(_lost(2), users, limits)
    # ORD-0: u0..u4 (5 counted, 2 checked), found at u4, the first of the two
    # "ORD-0 is the one"; ORD-1: 6 users to check, 5 left: stops there
    assert got.rows() == [("identifier:ord-0", 0, "u4", 5, 5)]
    assert calls[0] == 2
    assert [(x.at, x.left) for x in limits] == [("lost item 'ORD-1'", 1)]
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 11)
    calls[0] = 0
    limits = []
    got = harm.asked_again(_lost(2), users, limits)
    # ORD-1 now fits (6 left): checks "ok, go on" and "ORD-0 is the one" once each
    assert got["id"].to_list() == ["u4"] and limits == [] and calls[0] == 4


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif", "junit", "github",
                                 "html"])
def test_every_format_says_where_a_check_stopped(write_log: LogWriter, fmt: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 27)
    path = _wide(write_log, 6)
    [limit] = audit(str(path)).limits
    assert limit.message() == ("stale-summary stopped early at its cap of 27 (repeated "
                               "summary, newer span) checks, at summary 'S2' (round 2): 5 "
                               "repeated summaries not checked")
    monkeypatch.setenv("COLUMNS", "400")
    out = run("audit", str(path), "--format", fmt, "--jobs", "1").stdout
    if fmt == "json":
        assert json.loads(out)["limits"][0]["at"] == "summary 'S2'"
    elif fmt == "html":
        assert "stale-summary stopped early" in out and "S2" in out
    else:
        assert "stopped early at its cap of 27" in out and "S2" in out


_EVIL = "S2\n::error title=x::owned\r##[add-mask]y\u202e"


@pytest.mark.parametrize("fmt", ["text", "markdown", "sarif", "junit", "github"])
def test_where_it_stopped_is_printed_inert(write_log: LogWriter, fmt: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = _wide(write_log, 6)
    path.write_text(path.read_text().replace('"S2"', json.dumps(_EVIL)))
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 27)
    [limit] = audit(str(path)).limits
    assert limit.at == f"summary {_EVIL!r}"
    out = run("audit", str(path), "--format", fmt, "--jobs", "1")
    assert "stopped early" in out.stdout
    assert clean(out.stdout + out.stderr, own=fmt == "github") == []


def test_a_capped_check_is_named_in_the_verdict(write_log: LogWriter,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11, class 2: a trace whose check stopped at its cap never passes silently:
    the verdict and the gate line say so (the head word still follows the findings)."""
    path = _wide(write_log, 6)
    report = audit(str(path))
    assert report.limits == [] and "stopped at" not in report.verdict()
    monkeypatch.setattr(stale, "STALE_MAX_CHECKS", 27)
    report = audit(str(path))
    head = report.verdict().split(":")[0]
    assert head == f"{report.verdict_head()} (1 check stopped at its limit)"
    monkeypatch.setenv("COLUMNS", "400")
    out = run("audit", str(path), "--jobs", "1").stdout
    assert "FAIL (1 check stopped at its limit): " in out
    other = _wide(write_log, 2)  # a second trace: the summary's gate line counts stops
    out = run("audit", str(path), str(other), "--jobs", "1").stdout
    assert "1 check(s) stopped at a limit" in out


def test_asked_again_makes_objects_only_for_the_items_it_compares(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # past the cap the other lost items are counted in the limit, never compared: no
    # discriminator is made for them (issue 14: on the grid's 254 MB text cell 3 of
    # 25,084 were compared, and the objects of the others were 40 % of the check)
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 3)
    made: list[str] = []
    real = harm.Discriminator

    def counting(kind: Any, text: str, *rest: Any) -> Any:
        made.append(text)
        return real(kind, text, *rest)

    monkeypatch.setattr(harm, "Discriminator", counting)
    limits: list[Limit] = []
    got = harm.asked_again(_lost(200), _users(2), limits)
    assert got["id"].to_list() == ["u0", "u1"] and made == ["ORD-0", "ORD-1"]
    assert [(x.at, x.left) for x in limits] == [("lost item 'ORD-2'", 198)]


def _refolds(write_log: LogWriter, folds: int) -> Path:
    """Spans a (facts: port 8080, numpy==1.26.4, 45000 ms) and b (port 9090), kept in
    the working set; each round i >= 1 adds summary F_i folding both, stating none:
    4 + 1 = 5 (fold, child, dropped fact) rows per fold (a's "Keep port 8080" is a
    constraint and its 8080 a quantity)."""
    return write_log([
        session(session_id="refold"),
        rnd(0, spans=[{"id": "a", "tokens": 5,
                       "text": "Keep port 8080, pin numpy==1.26.4, wait 45000 ms."},
                      {"id": "b", "tokens": 5, "text": "The admin port is 9090."}]),
        *(rnd(i, summaries=[{"id": f"F{i}", "tokens": 1, "text": "Settings were chosen.",
                             "children": ["a", "b"]}]) for i in range(1, folds + 1))],
        "refold.jsonl")


def test_fold_drops_past_the_bound_stop_the_audit_at_the_fold_that_crossed_it(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv75 #1: 300 summaries each folding the same 100 fact-rich spans held 1,860,000
    dropped-fact rows (3.0 GB, 45 s for 391 KB).  Counted, not timed: per fold, the
    rows of its children's dropped facts."""
    from compaction_audit.errors import LogError
    from compaction_audit.recall.analysis import folds

    path = _refolds(write_log, 3)
    checks = folds.fold_checks(read_native(str(path)))
    assert checks["dropped"].list.len().to_list() == [4, 1, 4, 1, 4, 1]
    monkeypatch.setattr(folds, "MAX_FOLD_DROPS", 15)  # 15 is not past 15
    assert audit(str(path)).n_rounds == 4
    monkeypatch.setattr(folds, "MAX_FOLD_DROPS", 14)  # F3's second child: 15
    with pytest.raises(LogError) as err:
        audit(str(path))
    assert (err.value.line, err.value.field) == (5, "summaries")  # F3: round 3, line 5
    assert ("folds drop too many facts: summary 'F3' takes the (fold, child, dropped "
            "fact) rows past 14: audit the rounds before that line on their own (see "
            "docs/performance.md, limits)") in str(err.value)
    result = run("audit", str(path))
    assert result.exit_code == 2 and "refold.jsonl:5: folds drop too many" in result.stderr



def test_fold_drops_are_bounded_by_their_text_too(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv76 #2, adv77 #1: rows of long facts or long fold ids cost with their length
    (1,997,000 rows of 1,500-character pins under the row bound took 2.9 GB; 8,000-
    character fold ids 16 GB).  One fold here: a's dropped texts, its whole sentence as
    a constraint (48 bytes), "8080" (4), "numpy==1.26.4" (13: a pin's text runs from its
    name, usertest38 #3), "45000 ms" (8), each row with "F1" and "a" (3 bytes: 4 x 3),
    then b's "9090" (4 + 3): 92 bytes per fold."""
    from compaction_audit.errors import LogError
    from compaction_audit.recall.analysis import folds

    path = _refolds(write_log, 3)
    checks = folds.fold_checks(read_native(str(path)))
    texts = [d["text"] for ds in checks["dropped"].to_list() for d in ds]
    assert sum(len(t.encode()) for t in texts) == 3 * 77, texts
    monkeypatch.setattr(folds, "MAX_FOLD_DROP_BYTES", 3 * 92)  # not past it
    assert audit(str(path)).n_rounds == 4
    monkeypatch.setattr(folds, "MAX_FOLD_DROP_BYTES", 2 * 92)  # F3's first child
    with pytest.raises(LogError) as err:
        audit(str(path))
    assert err.value.line == 5 and "summary 'F3' takes the bytes of text and ids of " \
        "(fold, child, dropped fact) rows past 184:" in str(err.value)



def test_asked_again_says_the_round_and_line_of_the_loss_where_it_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # usertest59 #7: the limit named the lost item but no round or line
    monkeypatch.setattr(harm, "ASKED_AGAIN_MAX_CHECKS", 3)
    lost = _lost(3).with_columns(lost_round=pl.Series([4, 5, 6]),
                                 lost_line=pl.Series([10, 11, 12]))
    limits: list[Limit] = []
    harm.asked_again(lost, _users(2), limits)
    [limit] = limits
    assert (limit.at, limit.round, limit.line) == ("lost item 'ORD-2'", 6, 12)
    assert limit.message() == ("asked-again stopped early at its cap of 3 (lost item, later "
                               "user message) checks, at lost item 'ORD-2' (round 6): 1 "
                               "lost item(s) not checked")
    limits.clear()
    harm.asked_again(_lost(3), _users(2), limits)  # without the columns: not known
    assert (limits[0].round, limits[0].line) == (None, None)
