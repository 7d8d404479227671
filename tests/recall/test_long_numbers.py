"""Numbers past Python's and a float's limits in span text (adv94 #1, #7): a version part
of thousands of digits stopped the audit with an internal error, and two quantities past
a float's range compared equal."""

from __future__ import annotations

from compaction_audit.api import audit
from compaction_audit.recall.versions import measure, vtuple
from tests.logs import LogWriter, rnd

_NINES = "9" * 4301


def _fold(write_log: LogWriter, child: str, summary: str) -> list[str]:
    """Codes and first texts of the fold's findings: child ``a`` folded into ``m``."""
    log = [rnd(0, spans=[{"id": "a", "tokens": 1, "text": child, "role": "user"}]),
           rnd(1, summaries=[{"id": "m", "tokens": 1, "children": ["a"], "text": summary}],
               evicted=["a"])]
    report = audit(str(write_log(log)))
    return [f.code for f in report.findings]


def test_a_version_part_of_thousands_of_digits_is_read() -> None:
    assert vtuple("1." + _NINES) == (1, 4301 * 10 ** 64 + int("9" * 64))
    # parts keep their order: longer is larger, then by the first 64 digits
    assert vtuple("1." + "8" * 4301) < vtuple("1." + _NINES) < vtuple("1." + "1" * 4302)
    assert vtuple("1." + "9" * 64) < vtuple("1.1" + "0" * 64)
    assert vtuple("1.000" + "7" * 70) == vtuple("1." + "7" * 70)  # leading zeros aside
    assert vtuple("v2.4.1-rc1") == (2, 4, 1, 1)


def test_a_trace_with_such_a_version_is_audited(write_log: LogWriter) -> None:
    assert "CA301" in _fold(write_log, f"Pin lib==1.{_NINES} now.", "Pinned the library.")
    assert "CA301" not in _fold(write_log, f"Pin lib==1.{_NINES} now.",
                                f"Pinned lib>=1.{_NINES} now.")


def test_quantities_past_a_float_are_compared_as_written(write_log: LogWriter) -> None:
    big = "9" * 400
    assert measure(big + ".5", "ms") is None and measure("45", "s") == ("time", 45000.0)
    assert "CA301" in _fold(write_log, f"Set the timeout to {big}.5 ms.",
                            f"Set the timeout to {big}.4 ms.")
    assert "CA301" not in _fold(write_log, f"Set the timeout to {big}.5 ms.",
                                f"Set the timeout to {big}.5 ms.")
