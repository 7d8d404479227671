"""The rebuilt cosine of two runs measured against different queries makes no round
diverge on its own (usertest76 F7: a transcript cut before the person's last prompt
measured against one prompt fewer, and its byte-identical rounds 0 and 1 "diverged")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import polars as pl

from compaction_audit.diff.series import align_series

MODEL = "wordllama l2_supercat 256-d"


def _run(cosines: list[float], detail: str, method: str = MODEL) -> Any:
    series = pl.DataFrame({"round": list(range(len(cosines))), "raw_ratio": [1.0] * len(cosines),
                           "query_cosine_rebuilt": cosines})
    return SimpleNamespace(series=series, cosine={"method": method, "query": "prompts",
                                                  "query_detail": detail})


def _diverging(base: Any, cand: Any) -> list[int]:
    joined = align_series(base, cand, ["raw_ratio", "query_cosine_rebuilt"])
    return joined.filter(pl.col("diverges"))["round"].to_list()


TWO = "the person's first prompt and 2 later prompt(s)"
ONE = "the person's first prompt and 1 later prompt(s)"


def test_one_query_the_model_cosine_is_compared() -> None:
    assert _diverging(_run([0.6, 0.7], TWO), _run([0.6, 0.5], TWO)) == [1]


def test_another_query_the_model_cosine_alone_makes_no_round_diverge() -> None:
    assert _diverging(_run([0.646, 0.675, 0.7], TWO), _run([0.608, 0.650], ONE)) == [2]


def test_the_lexical_cosine_alone_makes_no_round_diverge() -> None:
    lexical = _run([0.186, 0.3], TWO, method="lexical TF-IDF (the model is not installed)")
    assert _diverging(lexical, _run([0.185, 0.3], TWO)) == []
