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


def test_small_and_long_quantities_keep_their_digits(write_log: LogWriter) -> None:
    """adv96 #3: rounded to six decimals of the base unit, "7.4 ns" and "7 ns" were one
    value (0.000007 ms), and 9007199254740993 KB was 9007199254740992 KB as a float."""
    assert measure("7.4", "ns") != measure("7", "ns")
    assert measure("0.1", "s") == measure("100", "ms") == ("time", 100.0)
    assert measure("1.1", "min") == measure("66000", "ms")
    assert measure("9007199254740993", "kb") is None  # compared as written
    assert "CA301" in _fold(write_log, "The cache TTL is 7.4 ns.", "The cache TTL is 7 ns.")
    assert "CA301" in _fold(write_log, "Cap it at 9007199254740993 KB.",
                            "Capped it at 9007199254740992 KB.")
    assert "CA301" not in _fold(write_log, "The timeout is 0.1 s.", "The timeout is 100 ms.")


def test_thirteen_to_fifteen_digits_are_kept(write_log: LogWriter) -> None:
    """usertest48 #2: rounded to 12 significant digits, 1234567890123 ns and
    1234567890124 ns were one value; zeros at the ends count for nothing."""
    assert measure("1234567890123", "ns") != measure("1234567890124", "ns")
    assert measure("1000000000000000", "b") == measure("1000000000000", "kb")
    assert measure("1.001", "s") == measure("1001", "ms")
    assert "CA301" in _fold(write_log, "Set job_timeout to 1234567890123 ns for the batch.",
                            "Set job_timeout to 1234567890124 ns for the batch.")


def test_a_value_under_a_floats_range_is_compared_as_written(write_log: LogWriter) -> None:
    """adv97 #6: 0.<330 zeros>1 s was 0.0 ms after conversion, so a summary's "0 s" kept
    it.  Under a float's normal range (2.2e-308) a value is compared as written; zero
    itself still converts."""
    tiny = "0." + "0" * 330 + "1"
    assert measure(tiny, "s") is None
    assert measure("0", "s") == measure("0.000", "ms") == ("time", 0.0)
    assert measure("0." + "0" * 300 + "1", "s") == ("time", 1e-298)
    assert "CA301" in _fold(write_log, f"Keep the poll interval at {tiny} s on staging.",
                            "Keep the poll interval at 0 s on staging.")
