"""The text work of the recall analysis done once per distinct text, pair and
discriminator (issue 14): the same rows as one visit per edge, span and closure pair."""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import analysis
from compaction_audit.recall import survival as surv
from compaction_audit.recall.extract import extract
from compaction_audit.series import build_series
from tests.logs import LogWriter, rnd


def test_survival_is_checked_once_per_discriminator_and_summary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    d1, d2 = extract("Set the timeout to 45000 ms on prod.")  # a quantity and a scope
    calls: list[tuple[str, str]] = []
    real = surv.survives

    def counted(d: Any, text: str) -> bool:
        calls.append((d.norm, text))
        return real(d, text)

    monkeypatch.setattr(surv, "survives", counted)
    out = analysis._survival([((d1, d2), "timeout 45000 ms"), ((d1,), "timeout 45000 ms"),
                              ((d1,), "a timeout"), ((), "a timeout")])
    assert out == [(True, False), (True,), (False,), ()]
    assert calls == [("45000 ms", "timeout 45000 ms"), ("prod", "timeout 45000 ms"),
                     ("45000 ms", "a timeout")]


def test_the_helper_starts_from_the_analysis_text_count(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    texts = [("Set the timeout to 45000 ms.", "prose")]
    pairs = [(texts[0], "the timeout is 45000 ms")]
    monkeypatch.setattr(analysis, "PARALLEL_MIN_JOBS", 3)
    assert analysis._Helper.start(texts, pairs, 2) is None  # the analysis has 2 texts
    assert analysis._Helper.start([], [], 3) is None  # nothing for it to do
    helper = analysis._Helper.start(texts, pairs, 3)
    if helper is None:  # one CPU, or inside a worker process: done here instead
        return
    assert helper.results(1, 1) == ([(("quantity", "45000 ms", "45000 ms", 19, 27, 1),)],
                                    [(True,)])


def span(i: str, text: str) -> dict[str, object]:
    return {"id": i, "tokens": 20, "text": text, "source": "assistant"}


SAME = "Set the timeout to 45000 ms on prod."


def test_a_text_repeated_under_two_folds_gives_each_edge_its_own_rows(
        write_log: LogWriter) -> None:
    # a and b hold the same text under folds with the same text; c another fold text
    log = [rnd(0, spans=[span("a", SAME), span("b", SAME), span("c", SAME)]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"],
                              "text": "Timeout set to 45000 ms."},
                             {"id": "G", "tokens": 5, "children": ["b"],
                              "text": "Timeout set to 45000 ms."},
                             {"id": "H", "tokens": 5, "children": ["c"],
                              "text": "Timeout changed on prod."}],
               evicted=["a", "b", "c"])]
    session = read_native(str(write_log(log)))
    result = analysis.analyse(session, build_series(session))
    rows = {(r["fold"], r["child"]): [d["text"] for d in r["dropped"]]
            for r in result.folds.iter_rows(named=True)}
    assert rows == {("F", "a"): ["prod"], ("G", "b"): ["prod"], ("H", "c"): ["45000 ms"]}
    occ, held, _ = analysis._occurrences(session, build_series(session))
    assert sorted(occ.select("key", "id").rows()) == [
        ("quantity:45000 ms", "a"), ("quantity:45000 ms", "b"), ("quantity:45000 ms", "c"),
        ("scope:prod", "a"), ("scope:prod", "b"), ("scope:prod", "c")]
    assert sorted(held.rows()) == [("quantity:45000 ms", "F"), ("quantity:45000 ms", "G"),
                                   ("scope:prod", "H")]
