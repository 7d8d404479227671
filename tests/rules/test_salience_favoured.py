"""The summaries salience-disagreement names as favoured, for a scorer of fixed scores
(issue 14: computed per summary, with a child logged late judged round by round), must
equal the per-(round, summary, child) join of the general form."""

from __future__ import annotations

import polars as pl

from compaction_audit.io.native import read_native
from compaction_audit.rules import salience as sal_rules
from compaction_audit.rules.base import Context
from compaction_audit.series import build_series
from compaction_audit.settings import Settings
from tests.logs import LogWriter, rnd, spans


def test_favoured_with_a_child_logged_after_its_summary(write_log: LogWriter) -> None:
    # b has no salience until it is read again at round 2: S's children's mean is
    # a's alone (0.1) at round 1, then (0.1 + 0.3) / 2 at round 2
    path = write_log([
        rnd(0, spans=spans(("a", 5), ("b", 5), ("c", 5)),
            retained=[["a", 0.1], ["b", None], ["c", 0.5]]),
        rnd(1, summaries=[{"id": "S", "tokens": 1, "children": ["a", "b"]},
                          {"id": "T", "tokens": 1, "children": ["c"]}],
            offloaded=["a", "b", "c"], retained=[["S", 0.15], ["T", 0.9]]),
        rnd(2, retained=[["S", 0.15], ["T", 0.9], ["b", 0.3]]),
    ])
    session = read_native(str(path))
    ctx = Context(session, build_series(session), Settings())
    cos = pl.DataFrame({"id": ["a", "b", "c", "S", "T"],
                        "cosine": [0.5, 0.5, 0.5, 0.4, 0.6]})
    logged = session.salience.filter(pl.col("salience").is_not_null())
    assert sal_rules._fixed(logged)
    rounds = [0, 1, 2]
    general = sal_rules.SalienceDisagreement._favoured(
        ctx, sal_rules._logged_at(sal_rules._at_rounds(session.membership, rounds), logged),
        logged, cos)
    members = (session.membership.join(cos, on="id")
               .join(sal_rules._first_logged(logged), on="id"))
    ws = (sal_rules._at_rounds(members, rounds, ("cosine", "salience", "sal_ri"))
          .filter(pl.col("sal_ri") <= pl.col("ri")).drop("sal_ri"))
    fixed = sal_rules._favoured_fixed(ctx, ws, logged, cos)
    # round 1: S 0.15 > 0.1 and cosine 0.4 <= 0.5: favoured; round 2: 0.15 < 0.2: not;
    # T's cosine 0.6 beats its child's: never
    assert fixed.to_dicts() == [{"ri": 1, "id": "S"}]
    assert general.sort("ri", "id").to_dicts() == fixed.sort("ri", "id").to_dicts()
