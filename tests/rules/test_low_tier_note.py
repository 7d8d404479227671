"""CA301's message says why a fold that lost a number is a warning, not an error
(usertest43 #1): "Set read_timeout_ms to 45000 on prod." in a span with no ``role``
(or the assistant's) lost silently read as a plain WARNING under a rule whose default
severity is error.  The tiers (recall/ranking.py) put a value in prose at 5, "other
prose", a low tier: at most a warning (issue 10, point 6).  Small logs written here."""

from __future__ import annotations

from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.rules import Severity
from tests.logs import LogWriter, rnd

TEXT = "Set read_timeout_ms to 45000 on prod."
NOTE = " (a warning, not an error: every lost fact ranks other prose or below)"


def _log(**span_fields: Any) -> list[dict[str, Any]]:
    return [rnd(0, spans=[{"id": "a", "tokens": 10, "text": TEXT, **span_fields},
                          {"id": "b", "tokens": 10, "text": "Reviewed the dashboard."}]),
            rnd(1, summaries=[{"id": "m", "tokens": 3, "children": ["a", "b"],
                               "text": "Reviewed the dashboard; timeout changed."}],
                evicted=["a"])]


def _ca301(write_log: LogWriter, severity: dict[str, Severity] | None = None,
           **span_fields: Any) -> tuple[Severity, str]:
    report = api.audit(str(write_log(_log(**span_fields))), severity=severity)
    [f] = [f for f in report.findings if f.code == "CA301"]
    return f.severity, f.message


@pytest.mark.parametrize("fields", [{}, {"role": "assistant"}, {"role": "tool"}])
def test_a_lost_number_in_low_tiers_says_why_it_is_a_warning(
        write_log: LogWriter, fields: dict[str, Any]) -> None:
    severity, message = _ca301(write_log, **fields)
    assert severity is Severity.WARNING
    # the tool's output too: its best tier is a whole clause read as prose (ranking.py)
    assert message.endswith(NOTE)
    assert message.startswith("fold m silently dropped: a: ")


@pytest.mark.parametrize("fields", [{"role": "user"}, {"salience_class": "discriminating"}])
def test_a_person_or_a_discriminating_mark_makes_it_an_error_with_no_note(
        write_log: LogWriter, fields: dict[str, Any]) -> None:
    severity, message = _ca301(write_log, **fields)
    assert severity is Severity.ERROR
    assert "not an error" not in message


def test_an_identifier_alone_is_a_warning_by_kind_with_no_note(write_log: LogWriter) -> None:
    log = [rnd(0, spans=[{"id": "a", "tokens": 10, "text": "Edit `read_timeout_ms` next."},
                         {"id": "b", "tokens": 10, "text": "Reviewed the dashboard."}]),
           rnd(1, summaries=[{"id": "m", "tokens": 3, "children": ["a", "b"],
                              "text": "Reviewed the dashboard."}], evicted=["a"])]
    report = api.audit(str(write_log(log)))
    [f] = [f for f in report.findings if f.code == "CA301"]
    assert "identifier 'read_timeout_ms'" in f.message
    assert "not an error" not in f.message


def test_a_configured_severity_drops_the_note(write_log: LogWriter) -> None:
    severity, message = _ca301(write_log, {"silent-discriminating-fold": Severity.ERROR})
    assert severity is Severity.ERROR
    assert "not an error" not in message
