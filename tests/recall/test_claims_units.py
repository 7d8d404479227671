"""CA305 reads a quantity's value in another unit as support (usertest49 #2).

"Set read_timeout_ms to 45000 ms." folded into "read_timeout_ms is now 45 s." was an
unsupported claim (an error) while the fold rules counted "45 s" as keeping "45000 ms":
support asked for the number 45 among the leaf's words.  A quantity is now supported
by its value in another unit of its dimension too, that number and a spelling of that
unit both among the leaf's words.  Each expected value is worked out by hand.
"""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.versions import in_units
from tests.conftest import LogWriter
from tests.logs import rnd


def _unsupported(write_log: LogWriter, raw: str, summary: str) -> list[str]:
    log = [rnd(0, spans=[{"id": "u", "tokens": 10, "text": raw, "role": "user"}]),
           rnd(1, summaries=[{"id": "S", "tokens": 8, "children": ["u"], "text": summary}],
               evicted=["u"])]
    report = audit(str(write_log(log)))
    return [f.values["text"] for f in report.findings if f.code == "CA305"]


def test_in_units_writes_the_value_in_each_other_unit_of_its_dimension() -> None:
    # 45 s = 45,000 ms = 45,000,000 us = 45,000,000,000 ns = 0.75 min; 0.0125 h has four
    # decimals, 45 s in days and weeks more: left out
    assert in_units("45", "s") == (("45000", "ms"), ("0.75", "min"), ("45000000", "us"),
                                   ("45000000000", "ns"))
    # 2 MB = 2,000,000 b = 2,000 kb = 0.002 gb; 2e6 / 1024 = 1953.125 kib; 1.9073... mib
    assert in_units("2", "mb") == (("2000000", "b"), ("2000", "kb"), ("0.002", "gb"),
                                   ("1953.125", "kib"))
    assert in_units("7", "tokens") == ()  # no conversion
    # 1e20 s: 1e23 ms and the rest are written with an exponent; 165343915343915 weeks
    # has 15 significant digits, a float's rounding: left out
    assert in_units("1" + "0" * 20, "s") == ()


@pytest.mark.parametrize(("raw", "summary"), [
    ("Set read_timeout_ms to 45000 ms in config.", "read_timeout_ms is now 45 s."),
    ("Set read_timeout_ms to 45000 ms in config.", "read_timeout_ms is now 45 seconds."),
    ("Set read_timeout_ms to 45000 ms in config.", "read_timeout_ms is now 45s."),
    ("Set read_timeout_ms to 45000ms in config.", "read_timeout_ms is now 45 s."),  # glued
    ("Set read_timeout_ms to 45000 milliseconds.", "read_timeout_ms is now 45 s."),
    ("Set read_timeout_ms to 45,000 ms in config.", "read_timeout_ms is now 45 s."),
    ("Wait 45 seconds between tries.", "Waits 0.75 min between tries."),
    ("Uploads stop at 2000 kb.", "Uploads stop at 2 MB."),
])
def test_a_value_in_another_unit_is_supported(write_log: LogWriter, raw: str,
                                              summary: str) -> None:
    assert _unsupported(write_log, raw, summary) == []


@pytest.mark.parametrize(("raw", "summary", "claim"), [
    # usertest50 #1: the number and a unit word anywhere in the leaf were support ("it's"
    # is the word "s", "I'd" the word "d", "plan b" the word "b"); the two must be
    # written together, as the extractor reads a quantity
    ("The team has 180 users and it's stable.", "Timeout is 3 min.", "3 min"),
    ("I'd add 3 more nodes.", "Wait 72 hours.", "72 hours"),
    ("Plan b uses 2000 workers.", "Cap is 2 kb.", "2 kb"),
    ("The cable is 90 m long.", "TTL is 1.5 hours.", "1.5 hours"),  # metres, not minutes
    ("We served 45000 requests; timeout is 20 ms.", "The timeout is 45 s.", "45 s"),
])
def test_a_number_and_a_unit_apart_support_nothing(write_log: LogWriter, raw: str,
                                                   summary: str, claim: str) -> None:
    assert _unsupported(write_log, raw, summary) == [claim]


def test_a_unit_outside_ascii_supports_its_value(write_log: LogWriter) -> None:
    assert _unsupported(write_log, "Jitter is 1000 \u00b5s.", "Jitter is 1 ms.") == []


@pytest.mark.parametrize(("raw", "summary", "claim"), [
    # 45 ms is 45,000 us: the leaf has 45000 but no "us" (it said ms)
    ("Set read_timeout_ms to 45000 ms in config.", "read_timeout_ms is now 45 ms.", "45 ms"),
    # another value in the other unit
    ("Set read_timeout_ms to 45000 ms in config.", "read_timeout_ms is now 46 s.", "46 s"),
    # the unit is there, the number in it is not (45 s is 45000 ms, not 4500)
    ("Set read_timeout_ms to 4500 ms in config.", "read_timeout_ms is now 45 s.", "45 s"),
])
def test_a_value_no_unit_of_the_leaf_holds_is_a_claim(write_log: LogWriter, raw: str,
                                                     summary: str, claim: str) -> None:
    assert _unsupported(write_log, raw, summary) == [claim]


@pytest.mark.parametrize("text", [
    # adv97 #3: the leaf's words joined "8080,443" into 8080443, where the extractor
    # reads the ports 8080 and 443; a number with separators is still one word
    "Open ports 8080,443 on the firewall for issue 1234,5678.",
    "Refs PR-1024,2048 and INC-4021,123.",
    "Set EXPIRY=3600,900 here.",
    "Budget is 1,234,567 tokens and 9,999,99 rows.",
    # a scope by another spelling of its norm ("production" is prod)
    "Run the migration on the production database.",
    "Deploy to prd tonight.",
    "Use the pre-prod cluster.",
    "Deploy to stg first.",
])
def test_a_verbatim_copy_states_no_unsupported_claim(write_log: LogWriter, text: str) -> None:
    assert _unsupported(write_log, text, text) == []


def test_another_scope_or_number_is_still_a_claim(write_log: LogWriter) -> None:
    assert _unsupported(write_log, "Run the migration on the production database.",
                        "Ran the migration on the staging database.") == ["staging"]
    assert _unsupported(write_log, "Open ports 8080,443 on the firewall.",
                        "Opened ports 8081 and 443 on the firewall.") == ["8081"]


@pytest.mark.parametrize(("raw", "summary"), [
    # usertest51 #1: the leaf's quantity is read as the extractor reads one
    ("Cache TTL is 86400 s.", "Cache TTL is 1 day."),
    ("The timeout is 45 s.", "The timeout is 45000 ms."),
    ("The timeout is 0.045 s.", "The timeout is 45 ms."),
    ("The timeout is 45000\u00a0ms.", "The timeout is 45 s."),  # a no-break space
    # usertest51 #2: the extractor reads "22,443" of "22,443,8443"
    ("Allow 22,443,8443 inbound.", "Allow 22,443,8443 inbound."),
    ("Ports 80,443,8080 open.", "Ports 80,443,8080 open."),
])
def test_a_quantity_of_the_leaf_supports_its_value(write_log: LogWriter, raw: str,
                                                   summary: str) -> None:
    assert _unsupported(write_log, raw, summary) == []


@pytest.mark.parametrize(("raw", "summary", "claim"), [
    # usertest51 #5: "5M" is a count, not five minutes; "7B" no bytes; "1.5.3 ms-sql"
    # holds no quantity
    ("We ingest 5M rows per batch.", "Each batch takes 300 s.", "300 s"),
    ("Model has 7B params.", "Model needs 0.007 KB.", "0.007 KB"),
    ("Uses 1.5.3 ms-sql drivers.", "Calls take 0.0053 s.", "0.0053 s"),
])
def test_a_letter_that_is_no_unit_supports_nothing(write_log: LogWriter, raw: str,
                                                   summary: str, claim: str) -> None:
    assert _unsupported(write_log, raw, summary) == [claim]


@pytest.mark.parametrize("text", [
    # usertest51 #9: the leaf's words were ASCII only, so a verbatim sentence of another
    # script was a claim no leaf supported
    "\u041f\u043e\u0434\u043a\u043b\u044e\u0447\u0438\u0442\u0435\u0441\u044c \u043a "
    "\u0441\u0435\u0440\u0432\u0435\u0440\u0443 db-prod-03 \u0438 \u043d\u0438\u043a\u043e"
    "\u0433\u0434\u0430 \u043d\u0435 \u0443\u0434\u0430\u043b\u044f\u0439\u0442\u0435 "
    "\u0434\u0430\u043d\u043d\u044b\u0435.",
    "\uc11c\ubc84 db-prod-03\uc5d0 \uc5f0\uacb0\ud558\uace0 \ub370\uc774\ud130\ub97c "
    "\uc808\ub300 \uc0ad\uc81c\ud558\uc9c0 \ub9c8\uc138\uc694.",
])
def test_a_verbatim_sentence_of_any_script_is_supported(write_log: LogWriter,
                                                        text: str) -> None:
    assert _unsupported(write_log, text, text) == []


def test_an_invented_sentence_of_another_script_is_still_a_claim(
        write_log: LogWriter) -> None:
    raw = ("\u041f\u043e\u0434\u043a\u043b\u044e\u0447\u0438\u0442\u0435\u0441\u044c \u043a "
           "\u0441\u0435\u0440\u0432\u0435\u0440\u0443 db-prod-03.")
    invented = ("\u041f\u0435\u0440\u0435\u0437\u0430\u043f\u0443\u0441\u0442\u0438\u0442"
                "\u0435 \u043a\u043b\u0430\u0441\u0442\u0435\u0440 \u0431\u0430\u0437\u044b "
                "\u0434\u0430\u043d\u043d\u044b\u0445 \u043d\u0435\u043c\u0435\u0434\u043b"
                "\u0435\u043d\u043d\u043e \u0441\u0435\u0433\u043e\u0434\u043d\u044f "
                "\u0432\u0435\u0447\u0435\u0440\u043e\u043c.")
    assert _unsupported(write_log, raw, invented) == [invented]


@pytest.mark.parametrize(("raw", "summary", "claim"), [
    # usertest52 #2: the groups of a number with separators were words of their own
    ("The laptop sold for $1,299 last week.", "The laptop sold for $299 last week.", "299"),
    ("Migration copied 2,500,000 rows.", "Migration copied 500 rows.", "500"),
    # usertest52 #7: a scope of several words by its words anywhere
    ("Run pre-commit hooks, then deploy to prod.", "Deploy to pre-prod.", "pre-prod"),
])
def test_a_part_of_a_token_supports_no_claim(write_log: LogWriter, raw: str, summary: str,
                                             claim: str) -> None:
    assert _unsupported(write_log, raw, summary) == [claim]


def test_an_ascii_name_is_read_alike_beside_a_letter_outside_ascii(
        write_log: LogWriter) -> None:
    """usertest52 #6: "payments_service_url" gave the words payments, service and url
    only when the text held a letter outside ASCII."""
    raw = ("Config keys: payments_service_url, retries_limit_max, handler_crashed_count, "
           "nightly_job_cron, token_refresh_interval.")
    summary = ("The payments service retries until the limit, then the handler crashed "
               "nightly during token refresh.")
    assert _unsupported(write_log, raw, summary) == _unsupported(write_log, raw + " Caf\u00e9.",
                                                                 summary)


@pytest.mark.parametrize(("raw", "summary"), [
    # usertest52 #1: the constraint's content words are logs, 7, days; the leaf holds
    # "logs" only (1 of 3 < half), but "7 days" is the leaf's "1 week"
    ("Keep logs 1 week.", "Keep logs 7 days."),
    # the clause's content words: 1.5, min; 90 seconds is 1.5 min
    ("Retry after 90 seconds.", "Retry after 1.5 min."),
])
def test_a_clause_holding_a_token_in_other_words_is_supported(write_log: LogWriter,
                                                              raw: str, summary: str) -> None:
    assert _unsupported(write_log, raw, summary) == []


def test_a_clause_holding_an_invented_token_is_still_a_claim(write_log: LogWriter) -> None:
    # 9 days is no value of 1 week: the quantity and its constraint are both claims
    assert _unsupported(write_log, "Keep logs 1 week.",
                        "Keep logs 9 days.") == ["Keep logs 9 days", "9 days"]


@pytest.mark.parametrize(("raw", "summary", "claim"), [
    # adv99 #4: the clause's other words (disable, auth) are none of the leaf's: the
    # supported token "7 days" does not carry them
    ("Retention is 1 week.", "Retention is 1 week. Never disable auth for 7 days.",
     "Never disable auth for 7 days"),
    ("Retention is 1 week.", "Retention is 1 week. Never wipe prod in 7 days.",
     "Never wipe prod in 7 days"),
])
def test_a_supported_token_carries_no_invented_rule(write_log: LogWriter, raw: str,
                                                    summary: str, claim: str) -> None:
    assert claim in _unsupported(write_log, raw, summary)


@pytest.mark.parametrize(("raw", "summary", "claims"), [
    # adv126 #2: a number set to a name whose suffix is a unit is in that unit
    ("Raise read_timeout_ms from 30000 to 45000.", "read_timeout_ms is 45s (was 30s).", []),
    ("Set ttl_seconds=300 on the cache.", "The cache TTL is 5 min.", []),
    ("Set max_body_mb: 2 on the proxy.", "The proxy caps bodies at 2000 kb.", []),
    # another value, or a name whose suffix is no unit, supports nothing
    ("Raise read_timeout_ms from 30000 to 45000.", "read_timeout_ms is 46s.", ["46s"]),
    ("Raise retry_count to 45000.", "The retry wait is 45s.", ["45s"]),
])
def test_a_value_set_to_a_unit_named_setting_is_in_its_unit(
        write_log: LogWriter, raw: str, summary: str, claims: list[str]) -> None:
    assert _unsupported(write_log, raw, summary) == claims
