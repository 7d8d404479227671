"""``trace`` says what a chain of folds did of the span traced (usertest65 #2, #3).

The log, by hand: round 0 (line 1) states u2 ("Do NOT use --force when pushing to
origin."), u0 ("Pin requests==2.31.0.") and t4 (a tool's "Installed
requests==2.31.0."); round 1 (line 2) folds u2 and t4 into s7 ("Deploy to staging
first."), which keeps neither of u2's two discriminators (the negation and
``--force``) nor t4's pin; round 2 (line 3) folds s7 and u0 into s8 ("User pinned
requests==2.31.0. Deploy to staging first."), evicting both.

Before: u2's trace said s8 "kept every discriminator" (of s7, which held nothing of
u2's) and that u2 was "folded into 1 summary"; the pin's trace said "still held by
span u0", a span evicted at round 2 whose pin s8 holds.
"""

from __future__ import annotations

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import LogWriter, rnd


def _log(write_log: LogWriter) -> str:
    return str(write_log([
        rnd(0, spans=[{"id": "u2", "tokens": 10, "source": "user",
                       "text": "Do NOT use --force when pushing to origin."},
                      {"id": "u0", "tokens": 10, "source": "user",
                       "text": "Pin requests==2.31.0."},
                      {"id": "t4", "tokens": 10, "source": "tool:pip",
                       "text": "Installed requests==2.31.0."}]),
        rnd(1, summaries=[{"id": "s7", "tokens": 5, "children": ["u2", "t4"],
                           "text": "Deploy to staging first."}], evicted=["u2", "t4"]),
        rnd(2, summaries=[{"id": "s8", "tokens": 5, "children": ["s7", "u0"],
                           "text": "User pinned requests==2.31.0. Deploy to staging first."}],
            evicted=["s7", "u0"])]))


def _lines(path: str, query: str) -> list[str]:
    result = CliRunner().invoke(app, ["trace", path, "--", query], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_a_fold_above_the_span_speaks_of_its_own_child(write_log: LogWriter) -> None:
    lines = _lines(_log(write_log), "u2")
    assert lines[0] == ("span u2 (round 0, line 1; now evicted at round 1): folded into "
                        "2 summaries (1 directly)")
    assert lines[2] == ("└── folded into s7 (depth 1, round 1, line 2): dropped 2: "
                        "'Do NOT use --force when pushing to origin', '--force'")
    assert lines[4] == ("    └── folded into s8 (depth 2, round 2, line 3): kept every "
                        "discriminator of s7")


def test_a_value_a_summary_carries_is_held_by_that_summary(write_log: LogWriter) -> None:
    lines = _lines(_log(write_log), "requests==2.31.0")
    assert lines[0] == ("discriminator 'requests==2.31.0': 2 spans: 1 lost, 1 carried; still "
                        "held by summary s8 (round 2, line 3), which carries span u0 (user, "
                        "round 0, line 1)")


def test_a_span_read_back_says_when(write_log: LogWriter) -> None:
    """usertest65 #8: a rehydrated span said "offloaded at round 1" and nothing of its
    return.  Round 0 (line 1) states u1 and u2, round 1 (line 2) offloads u1, round 2
    (line 3) lists it in ``retained`` again."""
    path = str(write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 10, "source": "user", "text": "Use port 8443."},
                      {"id": "u2", "tokens": 10, "source": "user", "text": "Deploy later."}]),
        rnd(1, offloaded=["u1"]),
        rnd(2, retained=[["u2", 0.5], ["u1", 0.5]])]))
    assert _lines(path, "u1")[:3] == [
        "span u1 (round 0, line 1; now retained): folded into 0 summaries",
        "├── offloaded at round 1 (line 2)",
        "└── read back at round 2 (line 3)"]
