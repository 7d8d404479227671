"""Drive the real ``compaction_audit.cli`` app in tests, plus small known sessions."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app

RUNNER = CliRunner()


def run(*args: str, input: bytes | None = None) -> Any:
    """Invoke the app; returns click's Result (exit_code, stdout, stderr)."""
    return RUNNER.invoke(app, list(args), input=input)


def drift_records() -> list[dict[str, Any]]:
    """A small session whose findings are known (fail-on error exits 1):

    CA201 ungrounded-summary (error) at rounds 1-4 (lines 3-6), CA104 compaction-drift
    (warning, raw_ratio 0.143 < 0.25) and CA105 summary-majority (info) at round 4
    (line 6).  With raw-ratio-floor 0.1 the drift is gone.
    """
    from tests.logs import rnd, session, spans

    return [
        session(session_id="drift", budget_tokens=1000, max_depth=3),
        rnd(0, spans=spans(("a", 100), ("b", 100), ("c", 100), ("d", 100)),
            retained=[["a", 0.1], ["b", 0.2], ["c", 0.3], ["d", 0.4]]),
        rnd(1, summaries=[{"id": "s1", "tokens": 50, "children": ["a", "b"]}],
            evicted=["a", "b"], retained=[["s1", 0.5], ["c", 0.3], ["d", 0.4]]),
        rnd(2, summaries=[{"id": "s2", "tokens": 20, "children": ["s1", "c"]}],
            evicted=["s1", "c"], retained=[["s2", 0.6], ["d", 0.4]]),
        rnd(3, spans=spans(("e", 5)), retained=[["s2", 0.7], ["d", 0.45], ["e", 0.1]]),
        rnd(4, summaries=[{"id": "s3", "tokens": 10, "children": ["d"]}], offloaded=["d"],
            retained=[["s2", 0.8], ["s3", 0.6], ["e", 0.1]]),
    ]


def clean_records() -> list[dict[str, Any]]:
    """A session without findings: raw spans only, nothing dropped."""
    from tests.logs import rnd, session, spans

    return [session(session_id="clean"),
            rnd(0, spans=spans(("a", 10), ("b", 10)), retained=[["a", 0.5], ["b", 0.5]]),
            rnd(1, spans=spans(("c", 10)), retained=[["a", 0.5], ["b", 0.5], ["c", 0.5]])]


def gained_records() -> list[dict[str, Any]]:
    """:func:`drift_records` plus two rounds that add exactly one new finding: the first
    ungrounded episode ends at round 5 and a second begins at round 6 (CA201, line 8)."""
    from tests.logs import rnd, spans

    return [*drift_records(),
            rnd(5, evicted=["s2"], retained=[["s3", 0.6], ["e", 0.1]]),
            rnd(6, spans=spans(("f", 5)),
                summaries=[{"id": "s4", "tokens": 2, "children": ["e"]}], evicted=["e"],
                retained=[["s3", 0.6], ["s4", 0.5], ["f", 0.2]])]
