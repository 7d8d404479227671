"""The cap on the closure survival checks, and CA305's leaf vocabularies along a chain
(issue 11, class 5, adv10 F6: a chain of folds each over the previous summary and new
spans of text holds a square number of (summary, leaf below it) checks).

Hand-computed: which groups are cut at the exact boundary of either cap (clause
classes compared, discriminators looked up; the helper past the cut:
tests/recall/test_text_work.py), the recall debt and the ``recall-survival`` limit of
three-round logs with a cap one below and at what they need; the words read into the
vocabularies of a chain at n and 2n (linear; the old copy was quadratic); the
comparisons a chain makes with twice the leaves per round (the same: one per class of
clauses below each summary), and the same analysis with one class per discriminator.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import analysis, claims, survclass, texthelper, textwork
from compaction_audit.recall.analysis import floor as floor_module
from compaction_audit.recall.analysis import run as analysis_run
from compaction_audit.recall.extract import CLAUSE_KINDS, Discriminator, Kind
from compaction_audit.recall.survclass import Classes
from compaction_audit.recall.survival import check as surv  # survives' home
from compaction_audit.series import build_series
from tests.joinsize import joined_sizes
from tests.logs import LogWriter, rnd

# --- the cut -------------------------------------------------------------------------

GROUPS = [("A", [0, 1]), ("B", [2, 0, 1]), ("C", [3, 0])]
DIRECT = [2, 1, 1]  # B folds text 2 and has 0 and 1 below; C folds 3 and has 0 below


def _rule(obj: str) -> Discriminator:
    return Discriminator(Kind.NEGATION, f"never deploy {obj} without a backup",
                         f"not deploy {obj} backup", 0, 10)


def _name(obj: str) -> Discriminator:
    return Discriminator(Kind.IDENTIFIER, obj, obj, 0, len(obj))


# texts 0..3: 2, 1, 2 and 1 discriminators; the rules differ only in an object no
# summary (A, B, C) names: one class
OF = [(_rule("table_0"), _name("table_0")), (_rule("table_1"),),
      (_rule("table_2"), _name("table_2")), (_name("table_3"),)]


def _cut(cap: int, pairs: int, classes: Classes | None = None) -> tuple[int, bool]:
    classes = classes or Classes(summary for summary, _ in GROUPS)
    return texthelper.survival_cut(GROUPS, DIRECT, OF.__getitem__, classes, cap, pairs)


def test_the_cut_is_the_first_group_whose_deeper_checks_pass_a_cap() -> None:
    # deeper checks: A none; B texts 0 and 1, 3 discriminators, 1 clause class; C text
    # 0, 2 discriminators, the same class: 2 comparisons and 5 pairs in all
    assert _cut(2, 5) == (3, False)  # exactly at both caps: nothing cut
    assert _cut(1, 5) == (2, False)  # one comparison below: C is cut
    assert _cut(2, 4) == (2, True)  # one pair below: C is cut, by the pairs
    assert _cut(0, 5) == (1, False) and _cut(2, 2) == (1, True)
    # each rule its own class: B compares 2 classes, and a cap of 2 cuts C
    assert _cut(2, 5, Classes(None)) == (2, False)
    assert texthelper.survival_cut(GROUPS, None, OF.__getitem__, Classes(None), 0, 0) == (
        3, False)
    assert texthelper.checked([2, 0, 1], 1, 1, DIRECT) == [2]  # past the cut: own child
    assert texthelper.checked([2, 0, 1], 1, 2, DIRECT) == [2, 0, 1]
    assert texthelper.checked([2, 0, 1], 1, 0, None) == [2, 0, 1]


def test_no_class_is_computed_when_every_deeper_discriminator_fits_under_both_caps() -> None:
    # B's and C's deeper children hold 3 + 2 = 5 discriminators: at most 5 classes
    classes = Classes(summary for summary, _ in GROUPS)
    assert _cut(5, 5, classes) == (3, False) and classes.reps == []
    classes = Classes(summary for summary, _ in GROUPS)
    assert _cut(4, 5, classes) == (3, False)  # 4 < 5: the classes are counted
    # texts 0 and 1: the rules (one class, objects no summary names) and table_0
    assert classes.reps == [OF[0][0], OF[0][1]]
    assert _cut(5, 4) == (2, True)  # pairs still cut exactly


# --- the analysis of a small log at the boundary -------------------------------------


def _span(i: str, text: str) -> dict[str, object]:
    return {"id": i, "tokens": 20, "text": text, "source": "assistant"}


T0 = ("Set the timeout to 45000 ms.", "prose")
T1 = ("Use port 8080 for the api.", "prose")
S = "Timeout is 45000 ms; port 8080."


def _two_folds(write_log: LogWriter) -> Any:
    """a (45000 ms) and c (8080) folded by S1, which keeps neither; S2 folds S1 and b (no
    discriminator) and states both again: S2's checks of leaves below its own children
    are a's and c's, one discriminator each (2 checks)."""
    return read_native(str(write_log([
        rnd(0, spans=[_span("a", T0[0]), _span("c", T1[0])]),
        rnd(1, summaries=[{"id": "S1", "tokens": 5, "children": ["a", "c"],
                           "text": "Timeout configured."}], evicted=["a", "c"]),
        rnd(2, spans=[_span("b", "Reviewed the admin page.")],
            summaries=[{"id": "S2", "tokens": 5, "children": ["S1", "b"], "text": S}],
            evicted=["S1", "b"]),
    ], name="two-folds.jsonl")))


@pytest.mark.parametrize(("cap", "debt", "limited"), [(2, [0, 2, 0], False),
                                                       (1, [0, 2, 2], True)])
def test_the_cap_at_and_below_the_checks_a_log_needs(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch, cap: int, debt: list[int],
        limited: bool) -> None:
    monkeypatch.setattr(textwork, "SURVIVAL_MAX_PAIRS", cap)
    monkeypatch.setattr(textwork, "SURVIVAL_MAX_CHECKS", 0)  # no clause: never reached
    session = _two_folds(write_log)
    recall = analysis.analyse(session, build_series(session))
    # S2 restates both facts: held when its leaves below S1 are checked, else lost
    assert recall.debt.sort("ri")["recall_debt"].to_list() == debt
    if not limited:
        assert recall.limits == []
        return
    (limit,) = recall.limits
    assert (limit.check, limit.cap, limit.at, limit.round, limit.line, limit.left) == (
        "recall-survival", 1, "summary 'S2'", 2, 3, 1)  # the third line: round 2
    assert limit.message().startswith(
        "recall-survival stopped early at its cap of 1 checks of a leaf's discriminators "
        "against a summary above its fold, at summary 'S2' (round 2): 1 summaries")


def _two_rules(write_log: LogWriter) -> Any:
    """``_two_folds`` with a rule in each leaf (each also a name: table_a, table_c),
    which S2 states again: S2 compares 2 clause classes with leaves below its own
    children (both names are in S2: a class each) and looks up 4 discriminators."""
    return read_native(str(write_log([
        rnd(0, spans=[_span("a", "Never deploy table_a without a backup."),
                      _span("c", "Never deploy table_c without a backup.")]),
        rnd(1, summaries=[{"id": "S1", "tokens": 5, "children": ["a", "c"],
                           "text": "Deploys configured."}], evicted=["a", "c"]),
        rnd(2, spans=[_span("b", "Reviewed the admin page.")],
            summaries=[{"id": "S2", "tokens": 5, "children": ["S1", "b"],
                        "text": "Never deploy table_a or table_c without a backup."}],
            evicted=["S1", "b"]),
    ], name="two-rules.jsonl")))


@pytest.mark.parametrize(("cap", "debt", "limited"), [(2, [0, 4, 0], False),
                                                       (1, [0, 4, 4], True)])
def test_the_cap_on_clause_classes(write_log: LogWriter, monkeypatch: pytest.MonkeyPatch,
                                   cap: int, debt: list[int], limited: bool) -> None:
    monkeypatch.setattr(textwork, "SURVIVAL_MAX_CHECKS", cap)
    session = _two_rules(write_log)
    recall = analysis.analyse(session, build_series(session))
    assert recall.debt.sort("ri")["recall_debt"].to_list() == debt
    assert [(limit.cap, limit.at, limit.left) for limit in recall.limits] == (
        [(1, "summary 'S2'", 1)] if limited else [])
    if limited:
        assert recall.limits[0].message().startswith(
            "recall-survival stopped early at its cap of 1 comparisons of a class of "
            "clauses with a summary above its leaves' fold, at summary 'S2' (round 2)")


# --- CA305's vocabularies along a chain -------------------------------------------------


def _word(i: int) -> str:
    """A distinct word of letters only (digits would add a number word to the bag)."""
    out = ""
    while True:
        out += "abcdefghijklmnopqrstuvwxyz"[i % 26]
        i //= 26
        if not i:
            return "w" + out


def _chain(n: int, per: int = 10) -> tuple[dict[str, tuple[Any, ...]], dict[str, list[str]]]:
    """Span s_i of ``per`` new words per round; f_0 folds s_0, f_i folds f_{i-1} and s_i."""
    info: dict[str, tuple[Any, ...]] = {}
    children: dict[str, list[str]] = {}
    for i in range(n):
        info[f"s{i}"] = ("span", " ".join(_word(i * per + j) for j in range(per)), i, i)
        info[f"f{i}"] = ("summary", "Summary.", i, i)
        children[f"f{i}"] = [f"f{i - 1}", f"s{i}"] if i else ["s0"]
    return info, children


def test_a_chain_reads_each_leaf_word_once() -> None:
    read = {}
    for n in (20, 40):
        info, children = _chain(n)
        order = [f"f{i}" for i in range(n)]
        vocab = claims._Vocab(info, children, set(order))
        for i, fold in enumerate(order):
            below = vocab.of(fold)
            vocab.done(fold)
            assert below is not None
            assert set(below[0]) == {_word(k) for k in range(10 * (i + 1))}
        read[n] = claims.SUPPORT_MAX_WORDS - vocab.left
    # 10 words per fold (the old copy: 10 (i + 1) for fold i, 2,100 and 8,200)
    assert read == {20: 200, 40: 400}


def test_a_shared_child_is_taken_over_by_its_last_parent_only() -> None:
    # S folds a and b; T folds S and d, then U folds S and b: T copies S's words (U
    # still reads them), U takes S's set over
    info = {"a": ("span", "alpha beta", 0, 0), "b": ("span", "gamma", 0, 0),
            "d": ("span", "delta", 0, 0), "S": ("summary", "x", 1, 1),
            "T": ("summary", "x", 2, 2), "U": ("summary", "x", 2, 3)}
    children = {"S": ["a", "b"], "T": ["S", "d"], "U": ["S", "b"]}
    vocab = claims._Vocab(info, children, {"S", "T", "U"})
    got = {}
    for node in ("S", "T", "U"):
        below = vocab.of(node)
        assert below is not None
        got[node] = sorted(below[0])
        vocab.done(node)
    assert got == {"S": ["alpha", "beta", "gamma"], "T": ["alpha", "beta", "delta", "gamma"],
                   "U": ["alpha", "beta", "gamma"]}
    # S reads a and b (3), T reads S and d (4), U b only (1)
    assert claims.SUPPORT_MAX_WORDS - vocab.left == 3 + 4 + 1


# --- the recall floor's (summary, leaf, key) join along a chain ------------------------


def _fact_chain(write_log: LogWriter, rounds: int, per: int) -> Any:
    """``rounds`` rounds of ``per`` spans of 8 facts each (the ``text-chain`` shape of
    benchmarks/shapes_hostile.py), each folded with the previous summary."""
    from benchmarks.shapes_hostile import fact_text

    log, prev = [], None
    for i in range(rounds):
        spans = [_span(f"r{i}s{j}", fact_text(i, j)) for j in range(per)]
        kids = [str(s["id"]) for s in spans] + ([prev] if prev else [])
        log.append(rnd(i, spans=spans, summaries=[
            {"id": f"f{i}", "tokens": 5, "children": kids,
             "text": f"Round {i}: {fact_text(i, 0)}"}], evicted=kids))
        prev = f"f{i}"
    return read_native(str(write_log(log, name=f"facts-{rounds}.jsonl")))


def test_the_floor_joins_leaf_keys_on_codes(write_log: LogWriter,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    session = _fact_chain(write_log, 12, 10)
    series = build_series(session)
    runs: list[list[int]] = []
    floor = floor_module._floor

    def measured(*args: Any) -> Any:
        with monkeypatch.context() as patch:
            runs.append(joined_sizes(patch))  # eager joins and those of lazy plans
            return floor(*args)

    monkeypatch.setattr(analysis_run, "_floor", measured)  # where analyse reads it
    recall = analysis.analyse(session, series)
    assert (series.closure.height, recall.floor.height) == (900, 119)
    # 780 (summary, leaf) pairs of 8 keys each: the largest join of the floor was 29.5
    # times the closure's estimated size (three strings per pair and key), now 7.4
    assert max(max(sizes) for sizes in runs) < 10 * series.closure.estimated_size()


# --- a chain compares each summary with the classes of facts below it ------------------


def _analysed(write_log: LogWriter, monkeypatch: pytest.MonkeyPatch, rounds: int,
              per: int) -> tuple[Counter[str], Any]:
    """The survival comparisons (clauses, tokens) and the recall analysis of a
    ``_fact_chain``."""
    calls: Counter[str] = Counter()
    real = surv.survives

    def counted(d: Discriminator, text: str) -> bool:
        calls["clause" if d.kind in CLAUSE_KINDS else "token"] += 1
        return real(d, text)

    with monkeypatch.context() as patch:
        patch.setattr(surv, "survives", counted)
        session = _fact_chain(write_log, rounds, per)
        return calls, analysis.analyse(session, build_series(session))


def test_a_chain_compares_each_summary_with_classes_not_leaves(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    # 12 rounds of 10 and of 20 spans: each summary restates its round's first span.
    # Every rule below a summary ("never deploy table_I_J without a backup") but the
    # restated ones differs from the others only in a name no summary holds: one
    # comparison per summary for all of them; a path, version, port or test name no
    # summary holds is not compared.  It was 792 and 1,572 clause comparisons, 3,913
    # and 7,813 of tokens: each leaf's 8 facts with each summary above it
    small, recall = _analysed(write_log, monkeypatch, 12, 10)
    large, recall_large = _analysed(write_log, monkeypatch, 12, 20)
    assert (small["clause"], small["token"]) == (102, 246)
    assert (large["clause"], large["token"]) == (102, 266)
    # the same recall: 264 debts over the rounds both times (each round loses the nine
    # or nineteen unrestated spans' facts that no summary keeps: their names and values)
    assert recall.debt["recall_debt"].sum() == recall_large.debt["recall_debt"].sum() == 264
    assert recall.limits == recall_large.limits == []


def test_classes_change_no_result(write_log: LogWriter,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the analysis with one class per distinct discriminator (no word absent) is the
    # same, frame for frame
    _, merged = _analysed(write_log, monkeypatch, 12, 10)
    monkeypatch.setattr(survclass.Absent, "__call__", lambda self, word: False)
    calls, own = _analysed(write_log, monkeypatch, 12, 10)
    assert calls["clause"] == 792  # as before the classes
    for name in ("folds", "debt", "lost", "floor"):
        assert getattr(merged, name).equals(getattr(own, name)), name
